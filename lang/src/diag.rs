//! Diagnostics of the front end (and, through re-use, of the later stages).
//!
//! The checker has many distinct errors; one struct with a `code`, labelled
//! spans and optional help keeps each error a one-line constructor call, while
//! still giving every error a stable code (`accl::type::mismatch`) that tests
//! and users can search for. A [`Diag`] carries no source text: it is attached
//! when the diagnostic is rendered ([`Diag::with_source`]), so stages need not
//! thread the source through.

use crate::span::Span;
use miette::{Diagnostic, LabeledSpan, NamedSource, Severity};
use std::fmt;
use std::sync::Arc;

/// One user-facing error or warning.
#[derive(Debug, Clone, PartialEq)]
pub struct Diag {
    pub code: &'static str,
    pub message: String,
    /// The first label is the primary one.
    pub labels: Vec<(Span, String)>,
    pub help: Option<String>,
    pub severity: Severity,
}

impl Diag {
    /// An error with a primary label.
    pub fn error(
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Diag {
        Diag {
            code,
            message: message.into(),
            labels: vec![(span, label.into())],
            help: None,
            severity: Severity::Error,
        }
    }
    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Diag {
        self.labels.push((span, label.into()));
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diag {
        self.help = Some(help.into());
        self
    }
    pub fn warning(mut self) -> Diag {
        self.severity = Severity::Warning;
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    /// The span of the primary label.
    pub fn span(&self) -> Span {
        self.labels.first().map(|l| l.0).unwrap_or_default()
    }
    /// Attach the source text so that miette can render the labels.
    ///
    /// A label on a line longer than [`MAX_SHOWN_LINE`] bytes is not drawn
    /// (miette cannot lay out columns past 65,535 and panics); the position
    /// goes into the message instead.
    pub fn with_source(mut self, src: &Source) -> miette::Report {
        let text = &*src.text;
        let long = self
            .labels
            .iter()
            .any(|(s, _)| line_around(text, *s).len() > MAX_SHOWN_LINE);
        if !long {
            return miette::Report::new(self).with_source_code(src.named());
        }
        let s = self.span();
        let start = (s.start as usize).min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        self.message = format!(
            "{} (at {}:{}:{}; the line is too long to show)",
            self.message,
            src.name,
            s.line(text),
            start - line_start + 1
        );
        self.labels.clear();
        miette::Report::new(self)
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diag {}

impl Diagnostic for Diag {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn severity(&self) -> Option<Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().enumerate().map(
            |(i, (span, text))| {
                let text = (!text.is_empty()).then(|| text.clone());
                if i == 0 {
                    LabeledSpan::new_primary_with_span(text, *span)
                } else {
                    LabeledSpan::new_with_span(text, *span)
                }
            },
        )))
    }
}

/// The longest source line that diagnostics quote.
pub const MAX_SHOWN_LINE: usize = 4096;

/// The text of the lines that `span` touches.
fn line_around(text: &str, span: Span) -> &str {
    let start = (span.start as usize).min(text.len());
    let end = (span.end as usize).clamp(start, text.len());
    let lo = text.as_bytes()[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let hi = text.as_bytes()[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| end + i);
    &text[lo..hi]
}

/// A named source text, shared by every diagnostic about it.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: Arc<str>,
    pub text: Arc<str>,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: Arc::from(name.into()),
            text: Arc::from(text.into()),
        }
    }
    pub fn named(&self) -> NamedSource<String> {
        NamedSource::new(&*self.name, self.text.to_string())
    }
}

/// Render diagnostics as plain text (no colour), as the snapshot tests and
/// non-terminal outputs use.
pub fn render_plain(src: &Source, diags: &[Diag], width: usize) -> String {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(width);
    let mut out = String::new();
    for d in diags {
        let report = d.clone().with_source(src);
        let _ = handler.render_report(&mut out, report.as_ref());
    }
    out
}

/// Levenshtein-based "did you mean" over a list of candidates.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(name, c);
        let limit = (name.len().max(c.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|b| b.1)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions
/// and transpositions of neighbours (`coutn` → `count`) each cost 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_on_huge_lines_are_not_drawn() {
        let text = format!("let x = {}1;\n", "-".repeat(100_000));
        let src = Source::new("t.accl", text);
        let d = Diag::error("accl::test", "bad", Span::new(8, 100_009), "here");
        let out = render_plain(&src, &[d], 80);
        assert!(
            out.contains("bad (at t.accl:1:9; the line is too long to show)"),
            "{out}"
        );
    }

    #[test]
    fn transpositions_are_one_edit() {
        assert_eq!(edit_distance("coutn", "count"), 1);
        assert_eq!(edit_distance("sqrtt", "sqrt"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean("coutn", ["count", "total"]), Some("count"));
        assert_eq!(did_you_mean("xyz", ["count", "total"]), None);
    }
}
