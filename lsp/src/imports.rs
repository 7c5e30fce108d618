//! A document's imports: the files it imports, read from the folder of
//! its `file:` URI, are checked in front of it (as `accl check` does), so
//! the names they declare resolve and have types. Requests answer in the
//! document only: an analysis of the joined text knows where the document
//! starts in it (its `base`), and a diagnostic inside an imported file is
//! shown on the document's first import.

use lang::{Diag, Span};
use std::path::{Path, PathBuf};

/// The text checked in front of a document (the files it imports, each
/// followed by a line break), or the error that stopped reading them.
#[derive(Default, Clone)]
pub struct Prelude {
    pub text: String,
    /// Where each imported file starts in `text`, and its name.
    parts: Vec<(usize, String)>,
    /// The document's first import statement.
    first: Span,
    /// An import that failed (in document offsets).
    pub error: Option<Diag>,
}

/// The folder of a `file:` URI (`None` for other schemes: nothing is
/// imported from a buffer that is not a file).
pub fn dir_of(uri: &str) -> Option<PathBuf> {
    let path = uri.strip_prefix("file://")?;
    let path = percent_decode(path);
    Path::new(&path).parent().map(Path::to_path_buf)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Prelude {
    /// What `text`, a document in folder `dir`, imports.
    pub fn of(text: &str, dir: Option<&Path>) -> Prelude {
        let (stmts, _) = lang::imports::leading(text);
        let (Some(first), Some(dir)) = (stmts.first(), dir) else {
            return Prelude::default();
        };
        let main = lang::Source::new("<document>", text);
        let mut p = Prelude {
            first: first.span,
            ..Prelude::default()
        };
        match lang::imports::gather(
            &main,
            dir,
            &Default::default(),
            &mut lang::imports::read_file,
        ) {
            Ok(files) => {
                for f in files {
                    p.parts.push((p.text.len(), f.source.name.to_string()));
                    p.text.push_str(&f.source.text);
                    p.text.push('\n');
                }
            }
            Err(e) => {
                let d = e.diags.into_iter().next();
                p.error = d.map(|d| {
                    if std::sync::Arc::ptr_eq(&e.source.text, &main.text) {
                        d
                    } else {
                        p.moved(d, &e.source.name)
                    }
                });
            }
        }
        p
    }

    /// `d`, found in the imported file `name`, shown on the first import.
    fn moved(&self, d: Diag, name: &str) -> Diag {
        let mut out = Diag::error(
            d.code,
            format!("in `{name}`: {}", d.message),
            self.first,
            "in a file imported here",
        );
        out.severity = d.severity;
        out.help = d.help;
        out
    }

    /// A diagnostic of the joined text as one of the document: its labels
    /// in the document moved back by the prelude's length; one whose place
    /// is in an imported file shown on the first import.
    pub fn to_doc(&self, mut d: Diag) -> Diag {
        let base = self.text.len() as u32;
        if base == 0 {
            return d;
        }
        if d.span().start < base {
            let at = d.span().start as usize;
            let name = self
                .parts
                .iter()
                .rev()
                .find(|(s, _)| *s <= at)
                .map(|(_, n)| n.clone())
                .unwrap_or_default();
            return self.moved(d, &name);
        }
        d.labels.retain(|(s, _)| s.start >= base);
        for (s, _) in &mut d.labels {
            *s = Span::new((s.start - base) as usize, (s.end - base) as usize);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_give_their_folder() {
        assert_eq!(
            dir_of("file:///home/a%20b/x.accl"),
            Some(PathBuf::from("/home/a b"))
        );
        assert_eq!(dir_of("untitled:Untitled-1"), None);
    }
}
