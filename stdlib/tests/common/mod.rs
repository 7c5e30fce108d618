//! What the diagnostics snapshot suites share: checking a program,
//! rendering its diagnostics as the user sees them, and the `cases!` table
//! of named cases.

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

/// One test per case `name: "accl::code" => source;`: check the source,
/// assert its first error has the code, and snapshot the rendering under
/// the case's name (in the snapshots folder of the suite that expands it:
/// insta names the file from the expansion site). Also defines `CASES`,
/// the names, to count them.
macro_rules! cases {
    ($( $name:ident : $code:literal => $src:expr ;)*) => {
        $(
            #[test]
            fn $name() {
                let src: &str = &$src;
                let rendered = checked(stringify!($name), $code, src);
                let mut settings = insta::Settings::clone_current();
                settings.set_prepend_module_to_snapshot(false);
                settings.set_description(src);
                settings.bind(|| insta::assert_snapshot!(stringify!($name), rendered));
            }
        )*
        /// The names of every case, to count them.
        const CASES: &[&str] = &[$(stringify!($name)),*];
    };
}
#[allow(unused_imports)] // each suite uses it; the module is compiled once per suite
pub(crate) use cases;
