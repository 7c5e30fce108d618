//! The checked text a request answers from.
//!
//! Names and types come from the checked program, and a text being typed
//! rarely checks. So a document keeps its text less the broken statements
//! where that checks (`repair.rs`: the same offsets, no edits to map),
//! else the last text of it that checked,
//! and while the current one does not, hover, definitions, references and
//! semantic tokens answer from that one wherever the edits since have not
//! touched: each change is compared with the text before it, and an
//! offset before their first difference or after their last maps across
//! (shifted by the change in length), through every change since the text
//! that checked; one inside an edited stretch answers nothing.

use crate::analysis::Analysis;
use lang::Span;

/// A text that checked, with its analysis.
pub struct Snapshot {
    pub text: String,
    pub analysis: Analysis,
}

/// What two texts share: `[0, prefix)` is the same in both, and so are
/// the old text from `old_rest` and the new one from `new_rest` to their
/// ends. Both cuts fall between names, never inside one, so a name that
/// was edited is not taken for the old one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edit {
    prefix: usize,
    old_rest: usize,
    new_rest: usize,
}

impl Edit {
    pub fn between(old: &str, new: &str) -> Edit {
        let (o, n) = (old.as_bytes(), new.as_bytes());
        let mut prefix = o.iter().zip(n).take_while(|(a, b)| a == b).count();
        while prefix > 0 && (!new.is_char_boundary(prefix) || name_byte(n[prefix - 1])) {
            prefix -= 1;
        }
        let most = o.len().min(n.len()) - prefix;
        let mut suffix = o
            .iter()
            .rev()
            .zip(n.iter().rev())
            .take(most)
            .take_while(|(a, b)| a == b)
            .count();
        while suffix > 0
            && (!new.is_char_boundary(n.len() - suffix) || name_byte(n[n.len() - suffix]))
        {
            suffix -= 1;
        }
        Edit {
            prefix,
            old_rest: o.len() - suffix,
            new_rest: n.len() - suffix,
        }
    }
}

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Edit {
    /// An offset of the new text as one of the old.
    fn to_old(self, offset: usize) -> Option<usize> {
        if offset <= self.prefix {
            Some(offset)
        } else if offset >= self.new_rest {
            Some(offset - self.new_rest + self.old_rest)
        } else {
            None
        }
    }

    /// A span of the old text as one of the new.
    fn to_new(self, span: Span) -> Option<Span> {
        let (start, end) = (span.start as usize, span.end as usize);
        if end <= self.prefix {
            Some(span)
        } else if start >= self.old_rest {
            Some(Span::new(
                start - self.old_rest + self.new_rest,
                end - self.old_rest + self.new_rest,
            ))
        } else {
            None
        }
    }
}

/// The analysis a request reads, and how the current text's offsets map
/// onto its text.
pub struct View<'a> {
    pub text: &'a str,
    pub analysis: &'a Analysis,
    /// The edits from the view's text to the current one, one per change
    /// (none: the current text itself).
    pub edits: &'a [Edit],
}

impl View<'_> {
    /// A current offset as an offset of the view's text.
    pub fn to_view(&self, offset: usize) -> Option<usize> {
        let o = self
            .edits
            .iter()
            .rev()
            .try_fold(offset, |o, e| e.to_old(o))?;
        Some(o + self.analysis.base)
    }

    /// A span of the view's text as a span of the current text (`None` in
    /// an imported file).
    pub fn to_doc(&self, span: Span) -> Option<Span> {
        let base = self.analysis.base as u32;
        if span.start < base {
            return None;
        }
        let own = Span::new((span.start - base) as usize, (span.end - base) as usize);
        self.edits.iter().try_fold(own, |s, e| e.to_new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_around_an_edit() {
        let old = "let total = 1.0;\nlet y = total;\nprintln(y);\n";
        let new = "let total = 1.0;\nlet y = total +;\nprintln(y);\n";
        let edits = [Edit::between(old, new)];
        let a = Analysis::new(old);
        let v = View {
            text: old,
            analysis: &a,
            edits: &edits,
        };
        // Before the edit: the same; after it: shifted by its length.
        assert_eq!(v.to_view(4), Some(4));
        let y_new = new.rfind("(y)").unwrap() + 1;
        let y_old = old.rfind("(y)").unwrap() + 1;
        assert_eq!(v.to_view(y_new), Some(y_old));
        assert_eq!(
            v.to_doc(Span::new(y_old, y_old + 1)),
            Some(Span::new(y_new, y_new + 1))
        );
        // The edited name (`total` before ` +`) maps to nothing.
        let t = new.find("total +").unwrap();
        assert_eq!(v.to_doc(Span::new(t, t + 5)), None);
    }

    #[test]
    fn edits_compose() {
        // One edit at the top, then one at the end.
        let texts = [
            "let a = 1;\nlet b = a;\n",
            "//\nlet a = 1;\nlet b = a;\n",
            "//\nlet a = 1;\nlet b = a;\nlet c",
        ];
        let edits = [
            Edit::between(texts[0], texts[1]),
            Edit::between(texts[1], texts[2]),
        ];
        let a = Analysis::new(texts[0]);
        let v = View {
            text: texts[0],
            analysis: &a,
            edits: &edits,
        };
        let b_old = texts[0].find('b').unwrap();
        let b_new = texts[2].find('b').unwrap();
        assert_eq!(v.to_view(b_new), Some(b_old));
        assert_eq!(
            v.to_doc(Span::new(b_old, b_old + 1)),
            Some(Span::new(b_new, b_new + 1))
        );
        assert_eq!(v.to_view(texts[2].find('c').unwrap()), None);
    }

    #[test]
    fn a_name_being_extended_is_not_the_old_name() {
        let e = Edit::between("let ab = 1;", "let abc = 1;");
        assert_eq!(e.prefix, 4);
        assert_eq!(e.old_rest, 6);
        assert_eq!(e.new_rest, 7);
    }
}
