//! The error of every fallible engine call: diagnostics with their source.

use lang::diag::render_plain;
use lang::{Diag, Source, Span};
use std::fmt;

/// One or more diagnostics (parse, type, run-time or API errors) together
/// with the source text they point into. After an [`crate::Engine::eval`],
/// that is the input, joined with each earlier input that a label points
/// into (a function declared there, say): each label renders with its own
/// input's name, text and line numbers.
///
/// It is a [`miette::Diagnostic`] (the first error's code, labels and help,
/// with the source attached; the other diagnostics as related ones), so
/// `fn main() -> miette::Result<()>` can use `?` on engine calls and print
/// the fancy report. `Display` is `code: message at file:line:col`; `Debug`
/// is the plain rendering of every diagnostic.
///
/// ```
/// fn run() -> miette::Result<()> {
///     let mut e = accl::Engine::new();
///     e.eval("let a = zeros(f32, 2);\nlet b = a[3];")?;
///     Ok(())
/// }
/// let err = run().unwrap_err();
/// assert_eq!(err.code().unwrap().to_string(), "accl::run::index_out_of_bounds");
/// ```
#[derive(Clone)]
pub struct Error {
    pub diags: Vec<Diag>,
    pub source: Source,
}

impl Error {
    pub(crate) fn api(code: &'static str, msg: impl Into<String>) -> Error {
        Error {
            diags: vec![Diag::error(code, msg, Span::default(), "")],
            source: Source::new("<api>", ""),
        }
    }
    /// The code of the first error (`accl::run::index_out_of_bounds`).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let err = e.eval("let a = zeros(i32, 2); a[5] = 1;").unwrap_err();
    /// assert_eq!(err.code(), "accl::run::index_out_of_bounds");
    /// ```
    pub fn code(&self) -> &'static str {
        self.diags
            .iter()
            .find(|d| d.is_error())
            .map(|d| d.code)
            .unwrap_or("")
    }
    /// Every diagnostic rendered as plain text at `width` columns.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let err = e.eval("assert(1 > 2, \"no\");").unwrap_err();
    /// assert!(err.render(80).contains("assertion failed: no"));
    /// ```
    pub fn render(&self, width: usize) -> String {
        // An error of the API itself (opening a device, a bad argument)
        // has no source to quote: no empty `<api>:1:1` box.
        if self.source.text.is_empty() {
            return self
                .diags
                .iter()
                .map(|d| {
                    let help = d
                        .help
                        .as_deref()
                        .map(|h| format!("\n  help: {h}"))
                        .unwrap_or_default();
                    format!("{}: {}{help}\n", d.code, d.message)
                })
                .collect();
        }
        render_plain(&self.source, &self.diags, width)
    }
    /// miette reports (with the source attached), for fancy printing.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let err = e.eval("let x = 1 / 0;").unwrap_err();
    /// for r in err.reports() {
    ///     assert!(format!("{r:?}").contains("division by zero"));
    /// }
    /// ```
    pub fn reports(&self) -> Vec<miette::Report> {
        self.diags
            .iter()
            .map(|d| d.clone().with_source(&self.source))
            .collect()
    }
}

impl Error {
    /// The diagnostic the error is about: its first error (else its first).
    fn first(&self) -> Option<&Diag> {
        self.diags
            .iter()
            .find(|d| d.is_error())
            .or(self.diags.first())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(d) = self.first() else {
            return f.write_str("error");
        };
        write!(f, "{}: {}", d.code, d.message)?;
        if let Some((span, _)) = d.labels.first() {
            let (name, line, col) = self.source.locate(span.start as usize);
            write!(f, " at {name}:{line}:{col}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render(100).trim_end())
    }
}

impl std::error::Error for Error {}

impl miette::Diagnostic for Error {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.first().and_then(|d| d.code())
    }
    fn severity(&self) -> Option<miette::Severity> {
        self.first().and_then(|d| d.severity())
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.first().and_then(|d| d.help())
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.first().and_then(|d| d.labels())
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        let first = self.first().map(|d| d as *const Diag);
        let rest: Vec<&dyn miette::Diagnostic> = self
            .diags
            .iter()
            .filter(|d| Some(*d as *const Diag) != first)
            .map(|d| d as &dyn miette::Diagnostic)
            .collect();
        (!rest.is_empty()).then(|| Box::new(rest.into_iter()) as Box<dyn Iterator<Item = _>>)
    }
}
