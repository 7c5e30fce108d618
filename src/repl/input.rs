//! When is an input complete? The REPL keeps reading lines while a brace,
//! bracket or parenthesis is open or a block comment is unterminated.

use lang::lexer::lex;
use lang::token::Tok;

/// True when `src` needs more lines: some `(`, `[` or `{` is still open, or
/// a `/*` comment is not closed. An input that more lines cannot mend is
/// complete, so that its error shows at once: more closing than opening
/// brackets, an unterminated string (strings end on their own line), a
/// character that is no token, nesting too deep.
pub fn needs_more(src: &str) -> bool {
    let lexed = lex(src);
    if lexed
        .diags
        .iter()
        .any(|d| d.code == "accl::lex::unterminated_comment")
    {
        return true;
    }
    if lexed.fatal || !lexed.diags.is_empty() {
        return false;
    }
    let mut depth: i64 = 0;
    for (_, t, _) in &lexed.tokens {
        match t {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth > 0
}

/// `src` with a `;` added when its last statement lacks one: an input
/// that does not parse as it is but parses with a final `;` (`let x = 1`)
/// gets it. Anything else comes back unchanged.
pub fn with_final_semicolon(src: &str) -> std::borrow::Cow<'_, str> {
    if lang::parse(src).1.is_empty() {
        return src.into();
    }
    let fixed = format!("{};", src.trim_end());
    if lang::parse(&fixed).1.is_empty() {
        fixed.into()
    } else {
        src.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_inputs() {
        for s in [
            "",
            "let x = 1;",
            "x + 1",
            "parallel loop for i in 0..n { a[i] = 1.0; }",
            "fn f(x: f32) -> f32 { return x; }",
            "}",
            "let s = \"{\";",
            "let s = \"unterminated {",
            "// a comment {",
            "/* closed { */ let x = 1;",
            "a[1, 2]",
            ")))(",
            "for i in 0..3 {\n print(\"unterminated",
            "for i in 0..3 {\n let t = 'q';",
        ] {
            assert!(!needs_more(s), "{s:?} should be complete");
        }
    }

    #[test]
    fn open_inputs() {
        for s in [
            "parallel loop for i in 0..n {",
            "parallel loop for i in 0..n {\n    a[i] = 1.0;",
            "fn f(x: f32,",
            "let a = zeros(f32,\n 4",
            "let y = a[1,",
            "/* a comment",
            "/* nested /* */",
            "if x { if y { }",
        ] {
            assert!(needs_more(s), "{s:?} should need more");
        }
    }

    #[test]
    fn final_semicolon() {
        assert_eq!(with_final_semicolon("let x = 1"), "let x = 1;");
        assert_eq!(
            with_final_semicolon("enter data copyin(a) "),
            "enter data copyin(a);"
        );
        assert_eq!(with_final_semicolon("x + 1"), "x + 1");
        assert_eq!(with_final_semicolon("let x = 1;"), "let x = 1;");
        assert_eq!(
            with_final_semicolon("for i in 0..3 { }"),
            "for i in 0..3 { }"
        );
        // Not fixable by a `;`: left for the parser to report.
        assert_eq!(with_final_semicolon("let = 1"), "let = 1");
    }
}
