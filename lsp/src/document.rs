//! The open documents: their text and a line index that converts between
//! the front end's byte offsets and LSP positions.
//!
//! LSP counts columns in UTF-16 code units unless both ends agree on
//! another encoding; the server offers only UTF-16, so every conversion
//! walks the characters of one line.

use crate::analysis::Analysis;
use crate::view::{Edit, Snapshot, View};
use lang::Span;
use lsp_types::{Position, Range, Uri};
use std::collections::HashMap;

/// Byte offsets of the line starts of one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// The position of byte `offset` (clamped to the text, and back to the
    /// start of a character it falls inside).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let col: usize = text[self.starts[line]..offset]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, col as u32)
    }

    /// The byte offset of `pos`: a column past the end of its line is the
    /// line's end, a line past the end is the text's end, and a column in
    /// the middle of a surrogate pair is the character's start.
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(text.len(), |&e| e - 1);
        let mut units = 0usize;
        for (i, c) in text[start..end].char_indices() {
            let next = units + c.len_utf16();
            if next > pos.character as usize {
                return start + i;
            }
            units = next;
        }
        end
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start as usize),
            self.position(text, span.end as usize),
        )
    }
}

/// One open document.
pub struct Document {
    pub text: String,
    pub version: i32,
    pub index: LineIndex,
    pub analysis: Analysis,
    /// While the text does not check: the text less its broken statements
    /// where that checks (no edits), else the last text that did check and
    /// the edits from it to this one.
    checked: Option<(Box<Snapshot>, Vec<Edit>)>,
}

impl Document {
    /// A document with this text; `previous`, the document it replaces,
    /// gives the last text that checked.
    ///
    /// `dir` is the document's folder, where its imports are read from.
    pub fn new(
        text: String,
        version: i32,
        previous: Option<Document>,
        dir: Option<&std::path::Path>,
    ) -> Document {
        let index = LineIndex::new(&text);
        let prelude = crate::imports::Prelude::of(&text, dir);
        let analysis = Analysis::with(&text, &prelude);
        // The document replaced is dropped on a large stack, as its trees
        // were built on one.
        let checked = lang::stack::large(|| {
            if analysis.program.is_some() {
                return None;
            }
            // The text less its broken statements, where that checks: it
            // is the current text everywhere else (offsets and all).
            if let Some((text, analysis)) = crate::repair::repaired(&text, &prelude) {
                return Some((Box::new(Snapshot { text, analysis }), Vec::new()));
            }
            let p = previous?;
            let edit = Edit::between(&p.text, &text);
            match p.checked {
                Some((snapshot, mut edits)) => {
                    edits.push(edit);
                    Some((snapshot, edits))
                }
                None if p.analysis.program.is_some() => Some((
                    Box::new(Snapshot {
                        text: p.text,
                        analysis: p.analysis,
                    }),
                    vec![edit],
                )),
                None => None,
            }
        });
        Document {
            text,
            version,
            index,
            analysis,
            checked,
        }
    }

    /// The checked text to answer from: this one, else the last one that
    /// checked (`view.rs`).
    pub fn view(&self) -> View<'_> {
        match &self.checked {
            Some((s, edits)) => View {
                text: s.analysis.text_of(&s.text),
                analysis: &s.analysis,
                edits,
            },
            None => View {
                text: self.analysis.text_of(&self.text),
                analysis: &self.analysis,
                edits: &[],
            },
        }
    }

    pub fn range(&self, span: Span) -> Range {
        self.index.range(&self.text, span)
    }

    pub fn offset(&self, pos: Position) -> usize {
        self.index.offset(&self.text, pos)
    }
}

/// The open documents, by URI.
#[derive(Default)]
pub struct State {
    pub docs: HashMap<String, Document>,
}

impl State {
    pub fn doc(&self, uri: &Uri) -> Option<&Document> {
        self.docs.get(uri.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        // `é` is one UTF-16 unit in two bytes; `𝔸` two units in four bytes.
        let text = "let é = 1;\nlet 𝔸x = 2;\n";
        let ix = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(ix.position(text, x), Position::new(1, 6));
        assert_eq!(ix.offset(text, Position::new(1, 6)), x);
        let eq = text.find('=').unwrap();
        assert_eq!(ix.position(text, eq), Position::new(0, 6));
        assert_eq!(ix.offset(text, Position::new(0, 6)), eq);
        // Inside a surrogate pair: the character's start.
        assert_eq!(
            ix.offset(text, Position::new(1, 5)),
            text.find('𝔸').unwrap()
        );
        // Past the line's end, past the text's end.
        assert_eq!(ix.offset(text, Position::new(0, 99)), 11);
        assert_eq!(ix.offset(text, Position::new(9, 0)), text.len());
        // Inside a multi-byte character: its start.
        assert_eq!(ix.position(text, 5), Position::new(0, 4));
    }
}
