//! Syntax highlighting of the line being edited, with ANSI colours:
//! keywords, type names, numbers, strings, comments, meta-commands, and
//! errors (characters that are no token, unterminated strings, closing
//! brackets that close nothing) in red.
//!
//! Only zero-width escape sequences are added, so the visible text and the
//! cursor position stay those of the input.

use lang::lexer::lex;
use lang::token::Tok;

pub const RESET: &str = "\x1b[0m";
pub const KEYWORD: &str = "\x1b[1;35m";
pub const TYPE: &str = "\x1b[36m";
pub const NUMBER: &str = "\x1b[33m";
pub const STRING: &str = "\x1b[32m";
pub const COMMENT: &str = "\x1b[90m";
pub const ERROR: &str = "\x1b[1;4;31m";
pub const META: &str = "\x1b[1;34m";
pub const BUILTIN: &str = "\x1b[34m";
pub const DIM: &str = "\x1b[2m";
pub const RED: &str = "\x1b[1;31m";

/// The colour class of one token.
fn class(t: &Tok, is_builtin: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    use Tok::*;
    Some(match t {
        Bool | I32 | I64 | U32 | U8 | F32 | F64 => TYPE,
        True | False | Int(_) | Float(_) => NUMBER,
        Str(_) => STRING,
        UnterminatedStr(_) | Error => ERROR,
        Ident(name) if is_builtin(name) => BUILTIN,
        Ident(_) => return None,
        t if Tok::KEYWORDS.contains(&keyword_text(t)) => KEYWORD,
        _ => return None,
    })
}

fn keyword_text(t: &Tok) -> &'static str {
    use Tok::*;
    match t {
        Let => "let",
        Const => "const",
        Fn => "fn",
        If => "if",
        Else => "else",
        While => "while",
        For => "for",
        In => "in",
        Break => "break",
        Continue => "continue",
        Return => "return",
        As => "as",
        Parallel => "parallel",
        Loop => "loop",
        Data => "data",
        Enter => "enter",
        Exit => "exit",
        Update => "update",
        Wait => "wait",
        Atomic => "atomic",
        Set => "set",
        _ => "",
    }
}

/// Highlight `line`, the last line of an input whose earlier lines are
/// `before` (so that a bracket or comment opened there is known here).
pub fn highlight(before: &str, line: &str, is_builtin: &dyn Fn(&str) -> bool) -> String {
    if before.is_empty() && line.trim_start().starts_with(':') {
        return highlight_meta(line);
    }
    let (full, offset) = if before.is_empty() {
        (line.to_string(), 0)
    } else {
        (format!("{before}\n{line}"), before.len() + 1)
    };
    let lexed = lex(&full);
    // Closing brackets that close nothing are errors.
    let mut stray = Vec::new();
    let mut stack: Vec<Tok> = Vec::new();
    for (s, t, _) in &lexed.tokens {
        match t {
            Tok::LParen | Tok::LBracket | Tok::LBrace => stack.push(*t),
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                let want = match t {
                    Tok::RParen => Tok::LParen,
                    Tok::RBracket => Tok::LBracket,
                    _ => Tok::LBrace,
                };
                if stack.last() == Some(&want) {
                    stack.pop();
                } else {
                    stray.push(*s);
                }
            }
            _ => {}
        }
    }
    let mut out = String::with_capacity(line.len() * 2);
    let mut at = offset;
    let gap = |out: &mut String, from: usize, to: usize| {
        if from >= to {
            return;
        }
        let text = &full[from..to];
        // What the lexer skipped: whitespace and comments.
        if text.trim().is_empty() {
            out.push_str(text);
        } else {
            out.push_str(COMMENT);
            out.push_str(text);
            out.push_str(RESET);
        }
    };
    for (s, t, e) in &lexed.tokens {
        let (s, e) = (*s, *e);
        if e <= offset {
            continue;
        }
        let s = s.max(offset);
        if s > at {
            gap(&mut out, at, s);
        }
        let text = &full[s..e];
        let colour = if stray.contains(&s) {
            Some(ERROR)
        } else {
            class(t, is_builtin)
        };
        match colour {
            Some(c) => {
                out.push_str(c);
                out.push_str(text);
                out.push_str(RESET);
            }
            None => out.push_str(text),
        }
        at = e;
    }
    gap(&mut out, at.max(offset), full.len());
    out
}

fn highlight_meta(line: &str) -> String {
    let lead = line.len() - line.trim_start().len();
    let rest = &line[lead..];
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (cmd, args) = rest.split_at(end);
    let colour = if super::commands::COMMANDS.iter().any(|c| c.name == cmd) {
        META
    } else {
        ERROR
    };
    format!("{}{colour}{cmd}{RESET}{args}", &line[..lead])
}

/// `text` without ANSI escape sequences (what the terminal shows).
#[cfg(test)]
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(line: &str) -> String {
        highlight("", line, &|n| n == "zeros")
    }

    #[test]
    fn visible_text_is_unchanged() {
        for s in [
            "let a = zeros(f32, 8); // eight",
            "parallel loop for i in 0..n { a[i] = 1.5e3; }",
            "let s = \"x\\n\"; /* c */ }",
            "let t = 'q' + 1",
            ":type a[1] * 2.0",
            "  ",
            "",
            "é ü 漢字 \"unterminated",
        ] {
            assert_eq!(strip(&hl(s)), s, "{s:?}");
        }
    }

    #[test]
    fn classes() {
        let h = hl("let a = zeros(f32, 8); // c");
        assert!(h.contains(&format!("{KEYWORD}let{RESET}")), "{h:?}");
        assert!(h.contains(&format!("{BUILTIN}zeros{RESET}")), "{h:?}");
        assert!(h.contains(&format!("{TYPE}f32{RESET}")), "{h:?}");
        assert!(h.contains(&format!("{NUMBER}8{RESET}")), "{h:?}");
        assert!(h.contains(&format!("{COMMENT} // c{RESET}")), "{h:?}");
        assert!(hl("print(\"hi\")").contains(&format!("{STRING}\"hi\"{RESET}")));
    }

    #[test]
    fn errors_are_red() {
        assert!(hl("let t = 'q';").contains(&format!("{ERROR}'{RESET}")));
        assert!(hl("x)").contains(&format!("{ERROR}){RESET}")));
        assert!(hl("(x]").contains(&format!("{ERROR}]{RESET}")));
        assert!(!hl("(x)").contains(ERROR));
        assert!(hl(":nonsense").contains(ERROR));
        assert!(hl(":vars").contains(&format!("{META}:vars{RESET}")));
    }

    #[test]
    fn continuation_lines_know_the_earlier_lines() {
        // The `}` closes the `{` of the line before: no error.
        let h = highlight("for i in 0..4 {", "}", &|_| false);
        assert_eq!(h, "}");
        // Inside a block comment opened earlier, the line is a comment.
        let h = highlight("/* start", "let x end */", &|_| false);
        assert_eq!(h, format!("{COMMENT}let x end */{RESET}"));
        assert_eq!(strip(&h), "let x end */");
    }
}
