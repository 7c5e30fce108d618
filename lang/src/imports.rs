//! `import "common.accl";`: the files a source imports, found before it is
//! parsed.
//!
//! An import runs the imported file's top-level code once, before the
//! importing file's own statements, and makes its functions, constants and
//! variables visible there; so imports come first in a file, and a file
//! imported twice (by two files, or in two REPL inputs) runs once. The
//! files are returned in the order they run: each after the files it
//! imports. The checked text is those files then the source, laid end to
//! end as [`Source::joined`] lays them, so every diagnostic quotes the
//! file it is in.
//!
//! Reading files is the caller's ([`Loader`]): the front end never touches
//! the file system itself.

use crate::diag::{Diag, Source};
use crate::lexer;
use crate::span::Span;
use crate::token::Tok;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Files deeper than this in a chain of imports are refused (a chain that
/// long is a generated loop, not a program).
pub const MAX_DEPTH: usize = 64;

/// One imported file: where it is (its key: the path the loader read) and
/// its text, named as the import wrote it, relative to the first source.
#[derive(Debug, Clone)]
pub struct Imported {
    pub path: PathBuf,
    pub source: Source,
}

/// Reads an imported file: the path as the loader resolved it (made
/// canonical where it can be, so that two spellings of one file are one
/// import) and its text; or why not.
pub type Loader<'a> = dyn FnMut(&Path) -> Result<(PathBuf, String), String> + 'a;

/// What went wrong, in which source (the first source, or an imported file).
#[derive(Debug, Clone)]
pub struct ImportError {
    pub source: Source,
    pub diags: Vec<Diag>,
}

/// One `import "path";` at the top of a source: the path as written and
/// the span of the whole statement.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportStmt {
    pub path: String,
    pub span: Span,
}

/// The leading imports of `src`, and an error for each `import` after its
/// first other statement (or one that is not `import "path";`).
pub fn leading(src: &str) -> (Vec<ImportStmt>, Vec<Diag>) {
    let toks: Vec<(usize, Tok<'_>, usize)> = lexer::lex(src)
        .tokens
        .into_iter()
        .filter(|(_, t, _)| !matches!(t, Tok::BlockComment))
        .collect();
    let mut out = Vec::new();
    let mut diags = Vec::new();
    let mut i = 0;
    let mut first = true;
    while i < toks.len() {
        let (l, ref t, _) = toks[i];
        if !matches!(t, Tok::Import) {
            first = false;
            i += 1;
            continue;
        }
        let path = match toks.get(i + 1) {
            Some((_, Tok::Str(s), r)) => Some((*s, *r)),
            _ => None,
        };
        let semi = matches!(toks.get(i + 2), Some((_, Tok::Semi, _)));
        let Some((text, r)) = path.filter(|_| semi) else {
            // The parser reports the malformed statement.
            first = false;
            i += 1;
            continue;
        };
        let span = Span::new(l, toks[i + 2].2);
        i += 3;
        if !first {
            diags.push(
                Diag::error(
                    "accl::import::placement",
                    "`import` after other statements",
                    span,
                    "this import comes after the file's first statement",
                )
                .with_help("imports come first in a file: move it to the top"),
            );
            continue;
        }
        match lexer::unescape(text, Span::new(l, r)) {
            Ok(p) if !p.is_empty() => out.push(ImportStmt { path: p, span }),
            Ok(_) => diags.push(Diag::error(
                "accl::import::not_found",
                "an import needs a file name",
                span,
                "empty path",
            )),
            Err(d) => diags.push(d),
        }
    }
    (out, diags)
}

/// The files `main` imports, directly or through other imports, each once
/// and in the order they run, leaving out those in `done` (already run).
/// Relative paths start at the importing file's folder (`dir` for `main`).
pub fn gather(
    main: &Source,
    dir: &Path,
    done: &HashSet<PathBuf>,
    load: &mut Loader<'_>,
) -> Result<Vec<Imported>, ImportError> {
    let mut g = Gather {
        done,
        load,
        out: Vec::new(),
        seen: HashSet::new(),
        chain: Vec::new(),
    };
    g.visit(main, dir)?;
    Ok(g.out)
}

struct Gather<'a, 'l> {
    done: &'a HashSet<PathBuf>,
    load: &'a mut Loader<'l>,
    out: Vec<Imported>,
    seen: HashSet<PathBuf>,
    /// The files being gathered, outermost first (for cycles): key, name.
    chain: Vec<(PathBuf, String)>,
}

impl Gather<'_, '_> {
    fn visit(&mut self, src: &Source, dir: &Path) -> Result<(), ImportError> {
        let fail = |diags| ImportError {
            source: src.clone(),
            diags,
        };
        let (imports, diags) = leading(&src.text);
        if !diags.is_empty() {
            return Err(fail(diags));
        }
        for imp in imports {
            let want = tidy(&dir.join(&imp.path));
            let (key, text) = (self.load)(&want).map_err(|why| {
                fail(vec![Diag::error(
                    "accl::import::not_found",
                    format!("cannot import `{}`: {why}", imp.path),
                    imp.span,
                    "imported here",
                )
                .with_help(format!(
                    "a relative path starts at the importing file's folder (here `{}`)",
                    shown(dir)
                ))])
            })?;
            let name = shown(&want);
            if let Some(k) = self.chain.iter().position(|(p, _)| *p == key) {
                let cycle: Vec<&str> = self.chain[k..]
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .chain([name.as_str()])
                    .collect();
                return Err(fail(vec![Diag::error(
                    "accl::import::cycle",
                    format!("an import cycle: {}", cycle.join(" → ")),
                    imp.span,
                    "this import closes the circle",
                )
                .with_help(
                    "move what both files need into a third file that imports neither",
                )]));
            }
            if self.done.contains(&key) || self.seen.contains(&key) {
                continue;
            }
            if self.chain.len() >= MAX_DEPTH {
                return Err(fail(vec![Diag::error(
                    "accl::import::too_deep",
                    format!("imports nested more than {MAX_DEPTH} files deep"),
                    imp.span,
                    "nesting limit reached here",
                )]));
            }
            let source = Source::new(name.clone(), text);
            let sub = want.parent().map(Path::to_path_buf).unwrap_or_default();
            self.chain.push((key.clone(), name));
            self.visit(&source, &sub)?;
            self.chain.pop();
            self.seen.insert(key.clone());
            self.out.push(Imported { path: key, source });
        }
        Ok(())
    }
}

/// `p` with `.` and `folder/..` taken out (by its text: a link is not
/// followed), so that a diagnostic names `lib/a.accl`, not `lib/./b/../a.accl`.
fn tidy(p: &Path) -> PathBuf {
    use std::path::Component as C;
    let mut out: Vec<C<'_>> = Vec::new();
    for c in p.components() {
        match c {
            C::CurDir => {}
            C::ParentDir if matches!(out.last(), Some(C::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// A path as a diagnostic shows it (`./` dropped).
fn shown(p: &Path) -> String {
    let s = p.display().to_string();
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

/// The largest file an import reads: a script, not a data file.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The loader of the file system: the file at `path`, keyed by its
/// canonical path. Only a regular file of at most [`MAX_FILE_BYTES`] is
/// read (not a folder, a device such as `/dev/zero`, or a pipe that would
/// block the front end).
pub fn read_file(path: &Path) -> Result<(PathBuf, String), String> {
    let key = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    let meta = std::fs::metadata(&key).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return Err("it is a folder".into());
    }
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "it holds {} bytes, more than a script may ({} MiB)",
            meta.len(),
            MAX_FILE_BYTES >> 20
        ));
    }
    let text = std::fs::read_to_string(&key).map_err(|e| e.to_string())?;
    Ok((key, text))
}

/// `main` with the files it imports (read from the file system, relative
/// to `dir`) in front: the text to check, as one joined source whose
/// parts are the imported files then `main`; and where `main` starts in it.
pub fn with_imports(main: &Source, dir: &Path) -> Result<(Source, usize), ImportError> {
    let files = gather(main, dir, &HashSet::new(), &mut read_file)?;
    if files.is_empty() {
        return Ok((main.clone(), 0));
    }
    let mut parts: Vec<Source> = files.into_iter().map(|f| f.source).collect();
    parts.push(main.clone());
    let (joined, starts) = Source::joined(&*main.name, &parts);
    let at = *starts.last().expect("main is a part");
    Ok((joined, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn files(list: &[(&str, &str)]) -> HashMap<PathBuf, String> {
        list.iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect()
    }

    fn run(main: &str, fs: &HashMap<PathBuf, String>) -> Result<Vec<String>, ImportError> {
        let mut load = |p: &Path| {
            // Lexical normalisation stands in for canonicalize.
            let mut key = PathBuf::new();
            for c in p.components() {
                match c {
                    std::path::Component::ParentDir => {
                        key.pop();
                    }
                    std::path::Component::CurDir => {}
                    c => key.push(c),
                }
            }
            fs.get(&key)
                .map(|t| (key.clone(), t.clone()))
                .ok_or_else(|| "no such file".to_string())
        };
        let got = gather(
            &Source::new("main.accl", main),
            Path::new("/p"),
            &HashSet::new(),
            &mut load,
        )?;
        Ok(got.iter().map(|f| f.path.display().to_string()).collect())
    }

    #[test]
    fn imports_run_once_each_after_what_they_import() {
        let fs = files(&[
            ("/p/a.accl", "import \"lib/b.accl\";\nlet a = 1;"),
            ("/p/lib/b.accl", "import \"c.accl\"; let b = 2;"),
            ("/p/lib/c.accl", "let c = 3;"),
        ]);
        let got = run(
            "// leading comments are fine\nimport \"a.accl\";\nimport \"lib/c.accl\";\nlet m = 0;",
            &fs,
        )
        .unwrap();
        assert_eq!(got, ["/p/lib/c.accl", "/p/lib/b.accl", "/p/a.accl"]);
    }

    #[test]
    fn a_missing_file_a_cycle_and_a_late_import_are_located() {
        let fs = files(&[
            ("/p/a.accl", "import \"b.accl\";"),
            ("/p/b.accl", "\nimport \"./a.accl\";"),
        ]);
        let e = run("import \"nope.accl\";", &fs).unwrap_err();
        assert_eq!(e.diags[0].code, "accl::import::not_found");
        assert_eq!(e.diags[0].span(), Span::new(0, 19));
        let e = run("import \"a.accl\";", &fs).unwrap_err();
        assert_eq!(&*e.source.name, "/p/b.accl");
        assert_eq!(e.diags[0].code, "accl::import::cycle");
        assert_eq!(e.diags[0].span(), Span::new(1, 19));
        assert!(
            e.diags[0]
                .message
                .contains("/p/a.accl → /p/b.accl → /p/a.accl"),
            "{}",
            e.diags[0].message
        );
        let e = run("let x = 1;\nimport \"a.accl\";", &fs).unwrap_err();
        assert_eq!(e.diags[0].code, "accl::import::placement");
        assert_eq!(e.diags[0].span(), Span::new(11, 27));
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        // /dev/zero would never end.
        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(read_file(Path::new("/")).unwrap_err().contains("folder"));
    }

    #[test]
    fn names_are_tidied_by_their_text() {
        assert_eq!(
            tidy(Path::new("./lib/./b/../a.accl")),
            Path::new("lib/a.accl")
        );
        assert_eq!(tidy(Path::new("../x/../y.accl")), Path::new("../y.accl"));
        assert_eq!(tidy(Path::new("a/..")), Path::new("."));
    }

    #[test]
    fn leading_reads_only_the_top_of_a_file() {
        let (got, d) = leading("import \"x\\ty.accl\"; import \"z.accl\"; fn f() {}");
        assert!(d.is_empty());
        assert_eq!(got[0].path, "x\ty.accl");
        assert_eq!(got[1].span, Span::new(20, 36));
        // A malformed import is the parser's to report.
        let (got, d) = leading("import x; import \"a\";");
        assert!(got.is_empty());
        assert_eq!(d.len(), 1);
    }
}
