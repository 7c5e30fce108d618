//! Fuzz target `front_end`: arbitrary bytes; when they are UTF-8, the whole
//! front end runs on them (lex, parse with recovery, type check — also of a
//! partial program that failed to parse, as `stdlib/tests/fuzz_front_end.rs`
//! does — and the REPL's single-expression parser). Every diagnostic is
//! rendered as `accl check` renders it off a terminal (plain, 80 columns);
//! the first few also coloured at a narrow width (wrapping). Rendering is
//! most of the time of one run, hence only a few twice.
//!
//! Oracle: no panic, no hang, no sanitizer report, and every label of every
//! diagnostic lies inside the source text.

#![no_main]

use lang::diag::render_plain;
use lang::{Builtins, Diag, Source};
use libfuzzer_sys::fuzz_target;
use miette::{GraphicalReportHandler, GraphicalTheme};

thread_local! {
    static BUILTINS: Builtins = stdlib::builtins();
}

fn check_spans(src: &str, diags: &[Diag]) {
    for d in diags {
        for (l, _) in &d.labels {
            assert!(
                l.start <= l.end && l.end as usize <= src.len(),
                "{}: label {l:?} outside the source ({} bytes)",
                d.code,
                src.len()
            );
        }
    }
}

/// How many diagnostics are rendered a second time, coloured and narrow.
const FANCY: usize = 3;

fn render(src: &str, diags: &[Diag]) {
    let source = Source::new("fuzz.accl", src);
    let plain = render_plain(&source, diags, 80);
    assert!(diags.is_empty() || !plain.is_empty());
    let fancy = GraphicalReportHandler::new_themed(GraphicalTheme::unicode()).with_width(30);
    for d in diags.iter().take(FANCY) {
        let report = d.clone().with_source(&source);
        let mut out = String::new();
        let _ = fancy.render_report(&mut out, report.as_ref());
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    // Parse (lexing included) and check, whatever the parser recovered.
    let (ast, mut diags) = lang::parse(src);
    let parse_failed = !diags.is_empty();
    let checked = BUILTINS.with(|b| lang::check(&ast, src, b, &[]));
    match checked {
        Ok(c) => diags.extend(c.warnings),
        Err(d) => diags.extend(d),
    }
    check_spans(src, &diags);
    render(src, &diags);
    // What `accl check` does: no checking after a syntax error.
    if parse_failed {
        let cli = BUILTINS.with(|b| lang::check_source(src, b));
        assert!(cli.is_err(), "a syntax error was lost");
    }
    // The REPL's `:type EXPR`.
    if let Err(d) = lang::parse::parse_expr(src) {
        check_spans(src, &d);
        render(src, &d[..d.len().min(FANCY)]);
    }
});
