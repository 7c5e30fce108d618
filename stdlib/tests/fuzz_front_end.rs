//! No input panics the front end. (The `front_end` fuzz target of
//! `docs/fuzzing.md` looks for the same with arbitrary bytes.)
//!
//! A randomized part mutates the example programs byte-wise (insert, delete,
//! replace random bytes, non-ASCII and NUL included) and token-wise (drop,
//! duplicate, swap, replace tokens with other tokens' texts) and asserts that
//! parsing, checking and rendering return, with every primary span inside the
//! source. A deterministic part feeds pathological nesting and length, run on
//! the default 2 MiB test-thread stack: the front end must not need more.

use lang::diag::render_plain;
use lang::{Builtins, Diag, Source};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The example programs: the repository's and, where present, the shared ones.
fn examples() -> &'static [String] {
    static EXAMPLES: OnceLock<Vec<String>> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in [root.join("../examples"), root.join("../../shared/examples")] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
            paths.sort();
            for p in paths {
                if p.extension().is_some_and(|e| e == "accl") {
                    out.push(std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        assert!(out.len() >= 10, "examples not found");
        out
    })
}

thread_local! {
    static BUILTINS: Builtins = stdlib::builtins();
}

/// Parse, check and render `src`; panics (failing the case) on any broken
/// promise. Returns the diagnostics.
fn front_end(src: &str) -> Vec<Diag> {
    let (ast, mut diags) = lang::parse(src);
    let checked = BUILTINS.with(|b| lang::check(&ast, src, b, &[]));
    match checked {
        Ok(c) => diags.extend(c.warnings),
        Err(d) => diags.extend(d),
    }
    for d in &diags {
        let s = d.span();
        assert!(
            s.start <= s.end && s.end as usize <= src.len(),
            "{}: span {s:?} outside the source",
            d.code
        );
        for (l, _) in &d.labels {
            assert!(
                l.end as usize <= src.len(),
                "{}: label {l:?} outside the source",
                d.code
            );
        }
    }
    let rendered = render_plain(&Source::new("fuzz.accl", src), &diags, 80);
    assert!(diags.is_empty() || !rendered.is_empty());
    diags
}

#[derive(Debug, Clone)]
enum ByteEdit {
    Insert(prop::sample::Index, Vec<u8>),
    Delete(prop::sample::Index, usize),
    Replace(prop::sample::Index, u8),
}

/// Bytes worth inserting: any byte, with the ones that mean something to
/// the lexer (brackets, quotes, comment starts, NUL, UTF-8 lead bytes) likely.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        prop::sample::select(b"(){}[];:,.\"'/*\\0_=<>!&|^+-ex\n\t \x00\xc3\xa9\xe2\xff".to_vec()),
    ]
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(interesting_byte(), 1..4)
        )
            .prop_map(|(i, b)| ByteEdit::Insert(i, b)),
        (any::<prop::sample::Index>(), 1usize..8).prop_map(|(i, n)| ByteEdit::Delete(i, n)),
        (any::<prop::sample::Index>(), interesting_byte())
            .prop_map(|(i, b)| ByteEdit::Replace(i, b)),
    ]
}

fn apply_bytes(src: &str, edits: &[ByteEdit]) -> String {
    let mut b = src.as_bytes().to_vec();
    for e in edits {
        match e {
            ByteEdit::Insert(i, bytes) => {
                let at = i.index(b.len() + 1);
                b.splice(at..at, bytes.iter().copied());
            }
            ByteEdit::Delete(i, n) if !b.is_empty() => {
                let at = i.index(b.len());
                b.drain(at..(at + n).min(b.len()));
            }
            ByteEdit::Replace(i, byte) if !b.is_empty() => {
                let at = i.index(b.len());
                b[at] = *byte;
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[derive(Debug, Clone)]
enum TokEdit {
    Drop(prop::sample::Index),
    Duplicate(prop::sample::Index),
    Swap(prop::sample::Index, prop::sample::Index),
    Replace(prop::sample::Index, prop::sample::Index),
}

fn tok_edit() -> impl Strategy<Value = TokEdit> {
    use prop::sample::Index;
    prop_oneof![
        any::<Index>().prop_map(TokEdit::Drop),
        any::<Index>().prop_map(TokEdit::Duplicate),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| TokEdit::Swap(a, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| TokEdit::Replace(a, b)),
    ]
}

fn apply_tokens(src: &str, edits: &[TokEdit]) -> String {
    let texts: Vec<&str> = lang::lexer::lex(src)
        .tokens
        .iter()
        .map(|&(l, _, r)| &src[l..r])
        .collect();
    let mut toks = texts.clone();
    for e in edits {
        if toks.is_empty() {
            break;
        }
        match e {
            TokEdit::Drop(i) => {
                toks.remove(i.index(toks.len()));
            }
            TokEdit::Duplicate(i) => {
                let at = i.index(toks.len());
                toks.insert(at, toks[at]);
            }
            TokEdit::Swap(a, b) => {
                let (a, b) = (a.index(toks.len()), b.index(toks.len()));
                toks.swap(a, b);
            }
            TokEdit::Replace(a, b) => {
                let at = a.index(toks.len());
                toks[at] = texts[b.index(texts.len())];
            }
        }
    }
    toks.join(" ")
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        max_shrink_iters: 2_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..Config::default()
    }
}

// 6,000 + 4,000 = 10,000 cases per `cargo test`.
proptest! {
    #![proptest_config(config(6_000))]
    #[test]
    fn byte_mutations_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        let ex = examples();
        let src = apply_bytes(&ex[which.index(ex.len())], &edits);
        front_end(&src);
    }
}

proptest! {
    #![proptest_config(config(4_000))]
    #[test]
    fn token_mutations_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(tok_edit(), 1..6),
    ) {
        let ex = examples();
        let src = apply_tokens(&ex[which.index(ex.len())], &edits);
        front_end(&src);
    }
}

#[test]
fn unmutated_examples_check_clean_through_the_same_path() {
    for src in examples() {
        let diags = front_end(src);
        assert!(
            diags.is_empty(),
            "{}",
            render_plain(&Source::new("example.accl", src.as_str()), &diags, 80)
        );
    }
}

#[test]
fn token_mutation_keeps_clean_programs_when_nothing_changes() {
    // Re-joining tokens with spaces keeps a program meaning the same.
    let src = &examples()[0];
    assert!(front_end(&apply_tokens(src, &[])).is_empty());
}

// ---------------------------------------------------------------- deep and long inputs

fn has_error(diags: &[Diag]) -> bool {
    diags.iter().any(Diag::is_error)
}

#[test]
fn ten_thousand_nested_parentheses() {
    let src = format!("let x = {}1{};\n", "(".repeat(10_000), ")".repeat(10_000));
    assert!(has_error(&front_end(&src)));
}

#[test]
fn ten_thousand_nested_blocks() {
    let src = format!("{}{}\n", "{".repeat(10_000), "}".repeat(10_000));
    assert!(has_error(&front_end(&src)));
}

#[test]
fn ten_thousand_nested_ifs() {
    let src = format!(
        "{}let x = 1;\n{}",
        "if true {\n".repeat(10_000),
        "}\n".repeat(10_000)
    );
    assert!(has_error(&front_end(&src)));
}

#[test]
fn ten_thousand_nested_index_brackets() {
    let src = format!(
        "let a = zeros(i32, 4);\nlet x = {}0{};\n",
        "a[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(has_error(&front_end(&src)));
}

#[test]
fn ten_thousand_else_ifs() {
    // No bracket nests here, but each `else if` is an `if` inside an `else`.
    let src = format!(
        "let x = 1;\nif x == 0 {{\n}}{}\n",
        " else if x == 1 {\n}".repeat(10_000)
    );
    assert!(has_error(&front_end(&src)));
}

#[test]
fn a_hundred_thousand_term_sum() {
    // A clean result or a "too deep" error, not an overflow.
    let src = format!("let x = 1{};\n", "+1".repeat(99_999));
    front_end(&src);
}

#[test]
fn a_hundred_thousand_unary_minuses() {
    let src = format!("let x = {}1;\n", "-".repeat(100_000));
    assert!(has_error(&front_end(&src)));
}

#[test]
fn a_hundred_thousand_nots_and_casts() {
    let src = format!("let b = {}true;\n", "!".repeat(100_000));
    front_end(&src);
    let src = format!("let x = 1{};\n", " as i32".repeat(100_000));
    front_end(&src);
}

#[test]
fn a_hundred_thousand_statements() {
    let src = "let x = 1;\nx = x + 1;\n".repeat(50_000);
    assert!(front_end(&src).is_empty());
}

// ---------------------------------------------------------------- many errors in large inputs
//
// Found while probing past the fuzz targets' 4 KiB inputs (docs/fuzzing.md):
// work per error that grew with the input made these quadratic (minutes for
// a megabyte). These tests check the diagnostics of such inputs; their speed
// is not asserted (a test never depends on how fast the machine is), but a
// quadratic front end would make each of them take minutes.

#[test]
fn twenty_thousand_unmatched_brackets() {
    // Each syntax error searched the whole token list (twice).
    let diags = front_end(&"let x = 1);\n".repeat(20_000));
    assert_eq!(diags.len(), 20_000);
    assert_eq!(diags[19_999].labels[0].1, "this `)` has no opening bracket");
}

#[test]
fn fifty_thousand_bad_characters() {
    // Rendering read the source from its start for every diagnostic.
    let diags = front_end(&"$\n".repeat(50_000));
    assert_eq!(diags.len(), 50_000);
    let src = Source::new("t.accl", "$\n".repeat(50_000));
    let out = render_plain(&src, &diags[49_999..], 80);
    assert!(out.contains("[t.accl:50000:1]"), "{out}");
}

#[test]
fn thousands_of_unknown_names_among_thousands_of_variables() {
    // Every unknown name compared itself with every variable in scope.
    let mut src: String = (0..20_000).map(|i| format!("let v{i} = 1;\n")).collect();
    src.push_str(&"let y = coutn;\n".repeat(2_000));
    let diags = front_end(&src);
    assert_eq!(diags.len(), 2_000);
    assert!(diags.iter().all(|d| d.code == "accl::name::unknown"));
    // A suggestion still comes where there is one to make.
    let diags = front_end("let count = 1;\nlet y = coutn;\n");
    assert_eq!(
        diags[0].help.as_deref(),
        Some("a name with a similar spelling exists: `count`")
    );
}

#[test]
fn an_unknown_name_a_hundred_thousand_characters_long() {
    // The edit distance of two such names was 10^10 steps.
    let long = "v".repeat(100_000);
    let src = format!("let {long} = 1;\nlet y = {long}x;\nfn {long}() {{ }}\n{long}y();\n");
    let diags = front_end(&src);
    let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["accl::name::unknown", "accl::name::unknown_fn"]);
}

#[test]
fn forty_thousand_functions_in_a_call_chain() {
    // Recursion was a search from every function, device legality a
    // fixpoint over the call graph: both quadratic in the functions.
    let n = 40_000;
    let chain: String = (0..n)
        .map(|i| format!("fn g{i}(x: i32) -> i32 {{ return g{}(x) + 1; }}\n", i + 1))
        .collect();
    let kernel = "let a = zeros(i32, 4);\nparallel loop for i in 0..4 { a[i] = g0(i); }\n";
    // The last one prints: every function is illegal on the device, and the
    // error names the first call and the line at the end of the chain.
    let src = format!("{chain}fn g{n}(x: i32) -> i32 {{ print(x); return x; }}\n{kernel}");
    let diags = front_end(&src);
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "accl::device::illegal_fn");
    assert_eq!(
        diags[0].labels[1].1,
        "calls `g1`, which cannot run on the device"
    );
    assert_eq!(&src[diags[0].labels[2].0.range()], "print(x)");
    // The last one calls the first: a cycle of 40,001 functions.
    let src = format!("{chain}fn g{n}(x: i32) -> i32 {{ return g0(x); }}\n{kernel}");
    let diags = front_end(&src);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0].labels[1].1,
        "`g0` is recursive (the call here leads back to it)"
    );
    assert_eq!(&src[diags[0].labels[1].0.range()], "g1(x)");
}

#[test]
fn mutual_recursion_and_calls_of_illegal_functions() {
    let src = "fn a(x: i32) -> i32 { return b(x); }\nfn b(x: i32) -> i32 { return a(x) + c(x); }\n\
               fn c(x: i32) -> i32 { return x; }\nfn d(x: i32) -> i32 { return c(x) + b(x); }\n\
               let v = zeros(i32, 4);\n\
               parallel loop for i in 0..4 { v[i] = a(i) + b(i) + c(i) + d(i); }\n";
    let diags = front_end(src);
    let labels: Vec<(&str, &str)> = diags
        .iter()
        .map(|d| (&src[d.labels[1].0.range()], d.labels[1].1.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("b(x)", "`a` is recursive (the call here leads back to it)"),
            ("a(x)", "`b` is recursive (the call here leads back to it)"),
            ("b(x)", "calls `b`, which cannot run on the device"),
        ]
    );
    assert_eq!(
        diags[2].labels[2].1,
        "`b` is recursive (the call here leads back to it)"
    );
}
