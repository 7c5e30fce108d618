//! What both diagnostics snapshot suites share: checking a program and
//! rendering its diagnostics as the user sees them.

use lang::diag::render_plain;
use lang::{Diag, Source};

/// Every diagnostic (errors first, then warnings) of `src`: syntax errors if
/// there are any, otherwise the checker's.
pub fn diagnose(src: &str) -> Vec<Diag> {
    let (ast, mut diags) = lang::parse(src);
    if diags.is_empty() {
        diags = match lang::check(&ast, src, &stdlib::builtins(), &[]) {
            Ok(c) => c.warnings,
            Err(d) => d,
        };
    }
    diags
}

pub fn render(src: &str, diags: &[Diag]) -> String {
    render_plain(&Source::new("test.accl", src), diags, 80)
}

/// Check `src`, assert its first error has `code` and every span lies in
/// the source; the rendering, to snapshot.
pub fn checked(name: &str, code: &str, src: &str) -> String {
    let diags = diagnose(src);
    let rendered = render(src, &diags);
    let first = diags.iter().find(|d| d.is_error()).unwrap_or_else(|| {
        panic!("{name}: expected an error `{code}`, got none:\n{rendered}");
    });
    assert_eq!(
        first.code, code,
        "{name}: wrong primary diagnostic:\n{rendered}"
    );
    for d in &diags {
        assert!(
            d.span().end as usize <= src.len(),
            "{name}: span past the end"
        );
    }
    rendered
}
