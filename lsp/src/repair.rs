//! Broken text, analysed where it can be: the statements that hold an
//! error are blanked (each byte a space, line breaks kept, so every offset
//! stays the same) until the rest checks, and that text's analysis answers
//! hover, definitions, references and semantic tokens everywhere else. The
//! innermost statement around each error goes first; an error outside
//! every statement (a brace that never closes, a stray token between
//! items) takes the top-level statement it touches, or its line.
//! Diagnostics stay those of the real text.

use crate::analysis::{blocks_of, Analysis};
use crate::imports::Prelude;
use lang::{ast, Span};

/// Rounds of blanking before giving up: each blanks at least one more
/// statement, and a statement blanked can make its names' later uses
/// errors in turn.
const ROUNDS: usize = 8;

/// The text with its broken statements blanked, and its analysis; `None`
/// when no blanking made it check.
/// `prelude`: the files the text imports, checked in front of it (an
/// error in them is not the text's to blank).
pub fn repaired(text: &str, prelude: &Prelude) -> Option<(String, Analysis)> {
    if prelude.error.is_some() {
        return None;
    }
    let base = prelude.text.len() as u32;
    let mut t = text.to_string();
    for _ in 0..ROUNDS {
        let full = format!("{}{t}", prelude.text);
        let errors: Vec<Span> = match lang::check_source(&full, crate::builtins()) {
            Ok(_) => {
                let a = Analysis::with(&t, prelude);
                return a.program.is_some().then_some((t, a));
            }
            Err(d) => d
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.span())
                .filter(|s| s.start >= base)
                .map(|s| Span::new((s.start - base) as usize, (s.end - base) as usize))
                .collect(),
        };
        let ast = lang::parse(&t).0;
        let mut blanked = false;
        for e in errors {
            let at = innermost(&ast.stmts, e).unwrap_or_else(|| line_of(&t, e));
            blanked |= blank(&mut t, at);
        }
        if !blanked {
            return None;
        }
    }
    None
}

/// The innermost statement whose span holds `e` (an empty `e` at its
/// start or end too).
fn innermost(stmts: &[ast::Stmt], e: Span) -> Option<Span> {
    let s = stmts
        .iter()
        .find(|s| s.span.start <= e.start && e.end <= s.span.end && !s.span.is_empty())?;
    blocks_of(s)
        .into_iter()
        .find_map(|b| innermost(&b.stmts, e))
        .or(Some(s.span))
}

/// The line (or lines) `e` is on.
fn line_of(text: &str, e: Span) -> Span {
    let start = text[..(e.start as usize).min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let from = (e.end as usize).min(text.len());
    let end = text[from..].find('\n').map_or(text.len(), |i| from + i);
    Span::new(start, end)
}

/// Blank `at` in `t`; whether anything was left to blank.
fn blank(t: &mut String, at: Span) -> bool {
    let (s, e) = (at.start as usize, (at.end as usize).min(t.len()));
    if s >= e || t.as_bytes()[s..e].iter().all(|&b| b == b' ' || b == b'\n') {
        return false;
    }
    let mut bytes = std::mem::take(t).into_bytes();
    for b in &mut bytes[s..e] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
    // Whole characters became spaces: the bytes are ASCII there.
    *t = String::from_utf8(bytes).unwrap_or_default();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broken_statement_goes_and_the_rest_is_analysed() {
        let text = "let n = 8;\nlet bad = ;\nlet m = n + 1;\nprintln(m);\n";
        let (t, a) = repaired(text, &Prelude::default()).expect("repaired");
        assert_eq!(t.len(), text.len());
        assert!(t.contains("let m = n + 1;") && !t.contains("bad"), "{t}");
        let use_of_n = text.find("n + 1").unwrap();
        assert!(a.occurrence_at(use_of_n).is_some());
    }

    #[test]
    fn an_error_inside_a_function_blanks_the_statement_not_the_function() {
        let text =
            "fn f(x: f32) -> f32 {\n    let y = x * true;\n    return x;\n}\nlet z = f(2.0);\n";
        let (t, a) = repaired(text, &Prelude::default()).expect("repaired");
        assert!(t.contains("fn f(x: f32)") && t.contains("return x;"), "{t}");
        assert!(!t.contains("true"), "{t}");
        // The call finds the function.
        assert!(a.occurrence_at(text.find("f(2.0)").unwrap()).is_some());
    }

    #[test]
    fn a_name_s_later_uses_go_with_its_broken_declaration() {
        let text = "let a = 1;\nlet b = a + \"x\";\nlet c = b * 2;\nlet d = a * 3;\n";
        let (t, a) = repaired(text, &Prelude::default()).expect("repaired");
        assert!(t.contains("let d = a * 3;") && !t.contains("let c"), "{t}");
        assert!(a.occurrence_at(text.find("a * 3").unwrap()).is_some());
    }

    #[test]
    fn garbage_gives_none_or_a_text_that_checks() {
        for text in [
            "fn (((( let ]]] \u{1f600} \" parallel",
            "}}}{{{",
            "let x = ;\n}}}",
        ] {
            if let Some((t, a)) = repaired(text, &Prelude::default()) {
                assert_eq!(t.len(), text.len());
                assert!(a.program.is_some());
            }
        }
    }
}
