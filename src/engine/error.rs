//! The error of every fallible engine call: diagnostics with their source.

use lang::diag::render_plain;
use lang::{Diag, Source, Span};
use std::fmt;

/// One or more diagnostics (parse, type, run-time or API errors) together
/// with the source text they point into.
#[derive(Debug, Clone)]
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.diags.first() {
            Some(d) => f.write_str(&d.message),
            None => f.write_str("error"),
        }
    }
}

impl std::error::Error for Error {}
