//! The subcommands of the `accl` binary, as functions the tests can call.

use lang::{diag::render_plain, Diag, Source};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

/// Print diagnostics to stderr: coloured on a terminal, plain otherwise.
pub fn print_diags(src: &Source, diags: &[Diag]) {
    if std::io::stderr().is_terminal() {
        for d in diags {
            eprintln!("{:?}", d.clone().with_source(src));
        }
    } else {
        eprint!("{}", render_plain(src, diags, 100));
    }
}

/// Check every file; returns the diagnostics count per file.
pub fn check_source_text(name: &str, text: &str) -> (Source, Vec<Diag>) {
    let src = Source::new(name, text);
    let builtins = stdlib::builtins();
    let diags = match lang::check_source(text, &builtins) {
        Ok(c) => c.warnings,
        Err(d) => d,
    };
    (src, diags)
}

/// `accl check FILE...`
pub fn check_files(files: &[impl AsRef<Path>]) -> ExitCode {
    let mut errors = 0usize;
    for f in files {
        let f = f.as_ref();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", f.display());
                errors += 1;
                continue;
            }
        };
        let (src, diags) = check_source_text(&f.display().to_string(), &text);
        print_diags(&src, &diags);
        errors += diags.iter().filter(|d| d.is_error()).count();
    }
    if errors > 0 {
        eprintln!("{errors} error{} found", if errors == 1 { "" } else { "s" });
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
