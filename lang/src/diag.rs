//! Diagnostics of the front end (and, through re-use, of the later stages).
//!
//! The checker has many distinct errors; one struct with a `code`, labelled
//! spans and optional help keeps each error a one-line constructor call, while
//! still giving every error a stable code (`accl::type::mismatch`) that tests
//! and users can search for. A [`Diag`] carries no source text: it is attached
//! when the diagnostic is rendered ([`Diag::with_source`]), so stages need not
//! thread the source through.

use crate::span::Span;
use miette::{
    Diagnostic, LabeledSpan, MietteError, MietteSpanContents, NamedSource, Severity, SourceCode,
    SourceSpan, SpanContents,
};
use std::fmt;
use std::sync::{Arc, OnceLock};

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
    ///
    /// Costs O(log n) in the length of the source plus the lines shown (the
    /// source's line index is built once, at its first diagnostic), so that
    /// rendering every diagnostic of a large file stays linear.
    pub fn with_source(mut self, src: &Source) -> miette::Report {
        let long = self
            .labels
            .iter()
            .any(|(s, _)| src.line_len_around(*s) > MAX_SHOWN_LINE);
        if !long {
            return miette::Report::new(self).with_source_code(src.clone());
        }
        let (name, line, col) = src.locate(self.span().start as usize);
        self.message = format!(
            "{} (at {name}:{line}:{col}; the line is too long to show)",
            self.message,
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

/// A named source text, shared by every diagnostic about it.
///
/// It is miette's [`SourceCode`] itself: a diagnostic reads only the lines
/// around its labels, found through an index of line starts, where miette's
/// implementation for text scans the text from its start (rendering `d`
/// diagnostics of an `n`-byte text cost O(n·d): minutes for a megabyte of
/// garbage).
///
/// A source may also be several named texts laid end to end
/// ([`Source::joined`]; a session's inputs): a label then renders with
/// the text, the name and the line numbers of the part it points into.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: Arc<str>,
    pub text: Arc<str>,
    /// Start offsets of the lines of `text`, built at the first use.
    lines: Arc<OnceLock<Vec<usize>>>,
    /// The parts of a joined source (empty for one text).
    parts: Arc<[Part]>,
}

/// One text of a joined source: where it starts in the joined text.
#[derive(Debug, Clone)]
struct Part {
    start: usize,
    src: Source,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: Arc::from(name.into()),
            text: Arc::from(text.into()),
            lines: Arc::default(),
            parts: Arc::from([]),
        }
    }
    /// Several sources laid end to end, one `\n` between each two, under
    /// `name`: the part that starts at byte `start` of the joined text
    /// covers `start..=start + len` (its end included, so that a span at
    /// the end of a part is in it). A label renders with its part's text,
    /// name and line numbers; a span across parts reads as out of bounds.
    /// The start of each part is returned with the source.
    pub fn joined(name: impl Into<String>, parts: &[Source]) -> (Source, Vec<usize>) {
        let mut text = String::new();
        let mut list = Vec::with_capacity(parts.len());
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            // A joined part is taken whole: its own parts are not kept.
            let src = if p.parts.is_empty() {
                p.clone()
            } else {
                Source::new(&*p.name, &*p.text)
            };
            list.push(Part {
                start: text.len(),
                src,
            });
            text.push_str(&p.text);
        }
        let starts = list.iter().map(|p| p.start).collect();
        let mut s = Source::new(name, text);
        s.parts = Arc::from(list);
        (s, starts)
    }
    /// The part holding byte `pos` and its start (`self` and 0 for a
    /// source of one text; the last part past the end).
    fn part_at(&self, pos: usize) -> (&Source, usize) {
        if self.parts.is_empty() {
            return (self, 0);
        }
        let i = self
            .parts
            .partition_point(|p| p.start + p.src.text.len() < pos)
            .min(self.parts.len() - 1);
        let p = &self.parts[i];
        (&p.src, p.start)
    }
    /// The name, 1-based line and 1-based column (in characters) of byte
    /// `pos`, in the part that holds it.
    pub fn locate(&self, pos: usize) -> (&str, usize, usize) {
        let (src, start) = self.part_at(pos);
        let text = &*src.text;
        let mut at = pos.saturating_sub(start).min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let line = src.line_of(at);
        let col = text[src.line_starts()[line]..at].chars().count() + 1;
        (&src.name, line + 1, col)
    }
    /// A copy of the text as a miette source (the diagnostics of this crate
    /// use the [`Source`] itself, which copies nothing).
    pub fn named(&self) -> NamedSource<String> {
        NamedSource::new(&*self.name, self.text.to_string())
    }
    /// Start offsets of the lines, with the line breaks miette counts
    /// (`\n`, `\r\n` and a lone `\r`); the first is 0.
    fn line_starts(&self) -> &[usize] {
        self.lines.get_or_init(|| line_starts(&self.text))
    }
    /// The 0-based line holding byte `pos` (the last line, past the end).
    fn line_of(&self, pos: usize) -> usize {
        self.line_starts().partition_point(|&s| s <= pos) - 1
    }
    /// The length of the lines that `span` touches, line breaks excluded.
    fn line_len_around(&self, span: Span) -> usize {
        if !self.parts.is_empty() {
            let (src, start) = self.part_at(span.start as usize);
            let local = |o: u32| (o as usize).saturating_sub(start);
            return src.line_len_around(Span::new(local(span.start), local(span.end)));
        }
        let text = self.text.as_bytes();
        let starts = self.line_starts();
        let start = (span.start as usize).min(text.len());
        let end = (span.end as usize).clamp(start, text.len());
        let lo = starts[self.line_of(start)];
        let mut hi = starts
            .get(self.line_of(end) + 1)
            .copied()
            .unwrap_or(text.len());
        if hi > lo && text[hi - 1] == b'\n' {
            hi -= 1;
        }
        if hi > lo && text[hi - 1] == b'\r' {
            hi -= 1;
        }
        hi - lo
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => starts.push(i + 1),
            b'\r' => {
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                starts.push(i + 1);
            }
            _ => {}
        }
        i += 1;
    }
    starts
}

impl SourceCode for Source {
    /// miette's own reading of a span and its context lines, run on a
    /// window of the text a few lines wider than what it reads, with the
    /// offsets and line numbers it returns moved back into the whole text:
    /// the same contents as `str`'s implementation on the whole text.
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        if !self.parts.is_empty() {
            let (src, start) = self.part_at(span.offset());
            let end = span.offset().saturating_add(span.len());
            if span.offset() < start || end > start + src.text.len() {
                return Err(MietteError::OutOfBounds);
            }
            let local = SourceSpan::new((span.offset() - start).into(), span.len());
            let c = src.read_span(&local, before, after)?;
            return Ok(windowed(
                src.name.to_string(),
                c.data(),
                c.span().offset() + start,
                c.line(),
                c.column(),
                c.line_count(),
                span,
            ));
        }
        let text = &*self.text;
        if span.offset() > text.len() {
            // (miette's reading of text panics on this one)
            return Err(MietteError::OutOfBounds);
        }
        let starts = self.line_starts();
        // Two spare lines either side: miette decides nothing at the edges.
        let first = self
            .line_of(span.offset())
            .saturating_sub(before.saturating_add(2));
        let last = self
            .line_of(span.offset().saturating_add(span.len()))
            .saturating_add(after.saturating_add(3));
        let lo = starts[first];
        let hi = starts.get(last).copied().unwrap_or(text.len());
        let local = SourceSpan::new((span.offset() - lo).into(), span.len());
        let c = text[lo..hi].read_span(&local, before, after)?;
        Ok(windowed(
            self.name.to_string(),
            c.data(),
            c.span().offset() + lo,
            c.line() + first,
            c.column(),
            c.line_count() + first,
            span,
        ))
    }
}

/// Source lines longer than this are shown as a window around the label.
pub const MAX_SNIPPET_LINE: usize = 160;
/// Bytes of context either side of a label in such a window.
const WINDOW_CONTEXT: usize = 60;

/// The contents miette read (`data`, starting at offset `off` of the whole
/// text), or, when the label `span` sits on a line longer than
/// [`MAX_SNIPPET_LINE`], only a window of that line around it: a 5 KB line
/// of brackets is not printed whole.
fn windowed<'a>(
    name: String,
    data: &'a [u8],
    off: usize,
    line: usize,
    column: usize,
    line_count: usize,
    span: &SourceSpan,
) -> Box<dyn SpanContents<'a> + 'a> {
    let whole = |data: &'a [u8]| -> Box<dyn SpanContents<'a> + 'a> {
        Box::new(MietteSpanContents::new_named(
            name.clone(),
            data,
            SourceSpan::new(off.into(), data.len()),
            line,
            column,
            line_count,
        ))
    };
    let (s, e) = (span.offset(), span.offset().saturating_add(span.len()));
    let (Some(s), Some(e)) = (s.checked_sub(off), e.checked_sub(off)) else {
        return whole(data);
    };
    if e > data.len() {
        return whole(data);
    }
    let ls = data[..s]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let le = data[s..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| s + i);
    if le - ls <= MAX_SNIPPET_LINE || e > le {
        return whole(data);
    }
    let boundary = |mut i: usize, up: bool| {
        // A window edge inside a UTF-8 sequence moves to its boundary.
        while i > ls && i < le && (data[i] & 0xC0) == 0x80 {
            if up {
                i += 1;
            } else {
                i -= 1;
            }
        }
        i
    };
    let lo = boundary(s.saturating_sub(WINDOW_CONTEXT).max(ls), false);
    let hi = boundary((e.max(s + 1) + WINDOW_CONTEXT).min(le), true);
    let lines_before = data[..ls].iter().filter(|&&b| b == b'\n').count();
    let col = if ls == 0 { column + lo } else { lo - ls };
    Box::new(MietteSpanContents::new_named(
        name,
        &data[lo..hi],
        SourceSpan::new((off + lo).into(), hi - lo),
        line + lines_before,
        col,
        1,
    ))
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
    let mut unlimited = usize::MAX;
    did_you_mean_within(name, candidates, &mut unlimited)
}

/// Names longer than this many characters are neither given a suggestion
/// nor suggested: the edit distance costs the product of the two lengths
/// (two 1 MB identifiers were 10^12 steps).
pub const MAX_SUGGESTED_NAME: usize = 64;

/// [`did_you_mean`] doing at most `budget` units of work (one per candidate
/// looked at, one per cell of each edit-distance table), deducted from it.
/// When the budget runs out, the best candidate so far (or none): a checker
/// shares one budget among all its suggestions, so that thousands of
/// unknown names among thousands of variables stay linear.
pub fn did_you_mean_within<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    budget: &mut usize,
) -> Option<&'a str> {
    if name.len() > 4 * MAX_SUGGESTED_NAME {
        return None;
    }
    let n = name.chars().count();
    if n > MAX_SUGGESTED_NAME {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        if c.len() > 4 * MAX_SUGGESTED_NAME {
            continue;
        }
        let m = c.chars().count();
        let limit = (name.len().max(c.len()) / 3).max(1);
        // The distance is at least the difference of the lengths.
        if m > MAX_SUGGESTED_NAME || n.abs_diff(m) > limit {
            continue;
        }
        let cells = (n + 1) * (m + 1);
        if cells > *budget {
            *budget = 0;
            break;
        }
        *budget -= cells;
        let d = edit_distance(name, c);
        // Ties go to the alphabetically first name: candidates come from
        // hash maps, and the same input must get the same suggestion.
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
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
    fn ties_between_suggestions_go_the_same_way_in_any_order() {
        // `t1`, `t2`, `t3` are all one edit from `t`: whatever order the
        // names come in (hash maps), the suggestion is `t1`.
        for order in [["t1", "t2", "t3"], ["t3", "t1", "t2"], ["t2", "t3", "t1"]] {
            assert_eq!(did_you_mean("t", order), Some("t1"));
        }
        assert_eq!(did_you_mean("cuont", ["coutn", "count"]), Some("count"));
    }

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

    /// `Source`'s windowed reading returns what miette's reading of the
    /// whole text does, for every span (empty, at and past the end, across
    /// lines) of texts with every kind of line break, at every context size.
    #[test]
    fn windowed_spans_read_like_whole_text() {
        let texts = [
            "",
            "x",
            "\n",
            "let a = 1;\nlet b = 2;\n\nlet c = a +\n  b;\n",
            "a\r\nb\r\n\r\nc\rd\r\re\n\rf",
            "one line with no end",
            "\n\n\n\n\n\n\n\n\n\nten\n\n\n\n\n\n\n\n\n\n",
            "\u{e9}t\u{e9}\n\u{1F600}\r\n\u{4e2d}\u{6587}\n",
        ];
        for text in texts {
            let src = Source::new("t.accl", text);
            let n = text.len();
            for start in 0..=n {
                for end in start..=(n + 2).min(start + 14) {
                    for (before, after) in [(0, 0), (1, 1), (2, 0), (0, 3), (5, 5)] {
                        let span = SourceSpan::new(start.into(), end - start);
                        let want = text.read_span(&span, before, after);
                        let got = src.read_span(&span, before, after);
                        let what = format!("{text:?} {start}..{end} context {before}/{after}");
                        match (want, got) {
                            (Ok(w), Ok(g)) => {
                                assert_eq!(g.data(), w.data(), "{what}");
                                assert_eq!(g.span(), w.span(), "{what}");
                                assert_eq!(g.line(), w.line(), "{what}");
                                assert_eq!(g.column(), w.column(), "{what}");
                                assert_eq!(g.line_count(), w.line_count(), "{what}");
                                assert_eq!(g.name(), Some("t.accl"), "{what}");
                            }
                            (Err(_), Err(_)) => {}
                            (w, g) => panic!("{what}: {:?} / {:?}", w.is_ok(), g.is_ok()),
                        }
                    }
                }
            }
            // Past the end: an error (miette's reading of text panics).
            let past = SourceSpan::new((n + 1).into(), 0);
            assert!(src.read_span(&past, 0, 0).is_err());
        }
    }

    /// A rendering reads the lines around its labels only: 4,000
    /// diagnostics spread over a 4 MB text render in well under a second
    /// (reading from the text's start for each, as miette does, took
    /// minutes). Speed is not asserted (tests never depend on the machine's
    /// speed); this checks that such a rendering is whole and right.
    #[test]
    fn rendering_many_diagnostics_of_a_large_text_is_linear() {
        let filler = format!("// {}\n", "x".repeat(997));
        let mut text = String::new();
        let mut diags = Vec::new();
        for i in 0..4000 {
            let at = text.len();
            text.push_str("$\n");
            diags.push(Diag::error(
                "accl::test",
                format!("bad {i}"),
                Span::new(at, at + 1),
                "here",
            ));
            text.push_str(&filler);
        }
        let src = Source::new("big.accl", text);
        let out = render_plain(&src, &diags, 80);
        assert!(
            out.contains("bad 3999") && out.contains("big.accl:7999:1"),
            "{}",
            &out[out.len() - 600..]
        );
        assert_eq!(out.matches("accl::test").count(), 4000);
    }

    /// A label renders with the text, name and line numbers of the part
    /// of a joined source it points into.
    #[test]
    fn labels_of_joined_sources_render_in_their_parts() {
        let now = Source::new("<input 4>", "let y = f(1, 2);");
        let before = Source::new(
            "<input 2>",
            "let q = 0;\n\nfn f(x: i32) -> i32 {\n    return x;\n}",
        );
        let (src, starts) = Source::joined("<input 4>", &[now, before]);
        assert_eq!(starts, [0, 17]);
        let f = starts[1] + 15;
        let d = Diag::error("accl::test", "bad", Span::new(8, 15), "the call")
            .with_label(Span::new(f, f + 1), "defined here");
        let out = render_plain(&src, &[d], 80);
        assert!(
            out.contains("[<input 4>:1:9]\n 1 │ let y = f(1, 2);"),
            "{out}"
        );
        assert!(
            out.contains("[<input 2>:3:4]\n 2 │ \n 3 │ fn f(x: i32)"),
            "{out}"
        );
        assert!(!out.contains("Failed"), "{out}");
        assert_eq!(src.locate(f), ("<input 2>", 3, 4));
        assert_eq!(src.locate(16), ("<input 4>", 1, 17));
        // A span across two parts is out of bounds, not a panic.
        assert!(src
            .read_span(&SourceSpan::new(10.into(), 10), 0, 0)
            .is_err());
    }

    #[test]
    fn transpositions_are_one_edit() {
        assert_eq!(edit_distance("coutn", "count"), 1);
        assert_eq!(edit_distance("sqrtt", "sqrt"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean("coutn", ["count", "total"]), Some("count"));
        assert_eq!(did_you_mean("xyz", ["count", "total"]), None);
    }

    #[test]
    fn suggestions_are_bounded() {
        // Long names: no suggestion, and no 10^10-step distance either.
        let long = "v".repeat(100_000);
        let longer = format!("{long}x");
        assert_eq!(did_you_mean(&longer, [long.as_str()]), None);
        let at_cap = "v".repeat(MAX_SUGGESTED_NAME);
        let typo = format!("{}x", &at_cap[1..]);
        assert_eq!(
            did_you_mean(&typo, [at_cap.as_str()]),
            Some(at_cap.as_str())
        );
        // A spent budget: the best so far, then nothing.
        let mut budget = 100;
        assert_eq!(
            did_you_mean_within("coutn", ["count"], &mut budget),
            Some("count")
        );
        assert_eq!(budget, 100 - 1 - 36);
        let mut budget = 0;
        assert_eq!(did_you_mean_within("coutn", ["count"], &mut budget), None);
    }
}
