//! Where each byte of a checked text came from.
//!
//! An input is checked with the declarations of earlier inputs in front of
//! it (their text, one after another, then the input). Spans of the
//! checker and the interpreter point into that text; a [`SourceMap`] takes
//! them back to the input they were written in, so that a diagnostic
//! quotes each input with its own name, text and line numbers, and a
//! kernel in a trace is named by its line in its own input.

use super::Error;
use lang::{Diag, Source, Span};

/// A `fn` or `const` declaration kept from an earlier input.
#[derive(Clone)]
pub(crate) struct Decl {
    /// The name it declares.
    pub name: String,
    /// Its text, as checked in front of later inputs.
    pub text: String,
    /// The input it was written in.
    pub input: Source,
    /// Where its text starts in that input.
    pub at: usize,
}

/// One stretch of the checked text: `len` bytes at `start`, copied from
/// byte `at` of `input`.
struct Piece {
    start: usize,
    len: usize,
    input: Source,
    at: usize,
}

/// The checked text of one evaluation and where its pieces came from:
/// each kept declaration, one `\n` after each, then the input itself.
pub(crate) struct SourceMap {
    pub text: String,
    /// Where the input starts in `text`.
    pub offset: usize,
    pieces: Vec<Piece>,
    /// The input itself.
    pub input: Source,
}

impl SourceMap {
    /// `decls` in front of the input `src` named `name`.
    pub fn new<'a>(name: &str, src: &str, decls: impl IntoIterator<Item = &'a Decl>) -> SourceMap {
        let mut text = String::new();
        let mut pieces = Vec::new();
        for d in decls {
            pieces.push(Piece {
                start: text.len(),
                len: d.text.len(),
                input: d.input.clone(),
                at: d.at,
            });
            text.push_str(&d.text);
            text.push('\n');
        }
        let offset = text.len();
        text.push_str(src);
        let input = Source::new(name, src);
        pieces.push(Piece {
            start: offset,
            len: src.len(),
            input: input.clone(),
            at: 0,
        });
        SourceMap {
            text,
            offset,
            pieces,
            input,
        }
    }

    /// The input that `span` of the checked text is in, and the span in
    /// that input's own text. A span reaching past the end of its piece
    /// is cut at the end; an empty span at 0 (no place) is the input's
    /// start.
    fn place(&self, span: Span) -> (&Source, Span) {
        let pos = span.start as usize;
        let last = self.pieces.len() - 1;
        let i = if span == Span::default() {
            last
        } else {
            self.pieces
                .partition_point(|p| p.start + p.len < pos)
                .min(last)
        };
        let p = &self.pieces[i];
        let n = p.input.text.len();
        let local = |o: usize| (p.at + o.clamp(p.start, p.start + p.len) - p.start).min(n);
        let start = local(pos);
        let end = local(span.end as usize).max(start);
        (&p.input, Span::new(start, end))
    }

    /// The error of `diags` (spans into the checked text), with a source
    /// of the input followed by each earlier input a label points into.
    pub fn error(&self, mut diags: Vec<Diag>) -> Error {
        let mut inputs: Vec<Source> = vec![self.input.clone()];
        let mut placed: Vec<Vec<(usize, Span)>> = Vec::new();
        for d in &diags {
            let mut v = Vec::new();
            for (span, _) in &d.labels {
                let (src, local) = self.place(*span);
                let k = match inputs
                    .iter()
                    .position(|s| std::sync::Arc::ptr_eq(&s.text, &src.text))
                {
                    Some(k) => k,
                    None => {
                        inputs.push(src.clone());
                        inputs.len() - 1
                    }
                };
                v.push((k, local));
            }
            placed.push(v);
        }
        if inputs.len() == 1 {
            for (d, v) in diags.iter_mut().zip(placed) {
                for (l, (_, s)) in d.labels.iter_mut().zip(v) {
                    l.0 = s;
                }
            }
            return Error {
                diags,
                source: self.input.clone(),
            };
        }
        let (source, starts) = Source::joined(&*self.input.name, &inputs);
        for (d, v) in diags.iter_mut().zip(placed) {
            for (l, (k, s)) in d.labels.iter_mut().zip(v) {
                let o = starts[k];
                l.0 = Span::new(o + s.start as usize, o + s.end as usize);
            }
        }
        Error { diags, source }
    }

    /// Where `span` is, for a trace: `line 3` in the input, `line 2 of
    /// <input 1>` in an earlier one.
    pub fn line(&self, span: Span) -> String {
        let (src, local) = self.place(span);
        let (_, line, _) = src.locate(local.start as usize);
        if std::sync::Arc::ptr_eq(&src.text, &self.input.text) {
            format!("line {line}")
        } else {
            format!("line {line} of {}", src.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_go_back_to_their_inputs() {
        let first = Source::new("<input 1>", "let a = 1;\nfn f() -> i32 {\n  return 1;\n}");
        let d = Decl {
            name: "f".into(),
            text: "fn f() -> i32 {\n  return 1;\n}".into(),
            input: first,
            at: 11,
        };
        let m = SourceMap::new("<input 2>", "let b = f(3);", [&d]);
        assert_eq!(m.offset, d.text.len() + 1);
        let call = Span::new(m.offset + 8, m.offset + 12);
        let name = Span::new(3, 4);
        assert_eq!(m.line(call), "line 1");
        assert_eq!(m.line(Span::new(18, 20)), "line 3 of <input 1>");
        let e = m.error(vec![
            Diag::error("accl::test", "bad", call, "call").with_label(name, "defined here")
        ]);
        assert_eq!(e.to_string(), "accl::test: bad at <input 2>:1:9");
        let r = e.render(80);
        assert!(r.contains("[<input 2>:1:9]\n 1 │ let b = f(3);"), "{r}");
        assert!(
            r.contains("[<input 1>:2:4]\n 1 │ let a = 1;\n 2 │ fn f() -> i32 {"),
            "{r}"
        );
        // Only the input: its own source, no joined one.
        let e = m.error(vec![Diag::error("accl::test", "bad", call, "call")]);
        assert_eq!(&*e.source.text, "let b = f(3);");
        assert_eq!(e.diags[0].labels[0].0, Span::new(8, 12));
    }
}
