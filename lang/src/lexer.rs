//! The lexer adapter between logos and the lalrpop parser.
//!
//! It lexes the whole source up front into `(start, token, end)` triples (the
//! shape lalrpop's external-lexer interface takes). A bad character is
//! reported here and replaced by [`Tok::Error`], which no grammar rule accepts,
//! so the parser's error recovery resumes after it instead of stopping at the
//! first typo. Bracket nesting is bounded here too: past [`MAX_NESTING`] the
//! input is refused, which keeps every later recursive pass off the stack's edge.

use crate::diag::Diag;
use crate::span::Span;
use crate::token::{LexFail, Tok};
use crate::types::Scalar;
use logos::Logos;

/// Deepest bracket nesting (`(`, `[`, `{` together) accepted.
pub const MAX_NESTING: usize = 256;

/// The result of lexing one source text.
pub struct Lexed<'s> {
    pub tokens: Vec<(usize, Tok<'s>, usize)>,
    pub diags: Vec<Diag>,
    /// Set when the input must not be parsed at all (nesting too deep).
    pub fatal: bool,
}

/// Lex a whole source text.
pub fn lex(src: &str) -> Lexed<'_> {
    let mut tokens = Vec::new();
    let mut diags = Vec::new();
    let mut depth = 0usize;
    // `else if` nests too (the second `if` sits in the first one's `else`),
    // without a bracket: `chains[level]` counts the `else if`s of the
    // statement open at each bracket level; they end with that statement.
    let mut chains: Vec<usize> = vec![0];
    let mut chained = 0usize;
    let mut prev = Tok::Semi;
    let mut fatal = false;
    for (res, range) in Tok::lexer(src).spanned() {
        let span = Span::from(range.clone());
        let tok = match res {
            Ok(Tok::UnterminatedStr(_)) => {
                diags.push(
                    Diag::error(
                        "accl::lex::unterminated_string",
                        "unterminated string literal",
                        span,
                        "this string has no closing `\"`",
                    )
                    .with_help(
                        "strings end on the same line with `\"`; write a line break as `\\n`",
                    ),
                );
                Tok::Error
            }
            Ok(t) => t,
            Err(LexFail::UnterminatedBlockComment) => {
                diags.push(
                    Diag::error(
                        "accl::lex::unterminated_comment",
                        "unterminated block comment",
                        Span::new(range.start, range.start + 2),
                        "this `/*` is never closed",
                    )
                    .with_help("block comments nest: every `/*` needs its own `*/`"),
                );
                continue;
            }
            Err(LexFail::BadChar) => {
                let ch = src[range.clone()].chars().next().unwrap_or('?');
                let mut d = Diag::error(
                    "accl::lex::bad_character",
                    format!("unexpected character `{}`", ch.escape_debug()),
                    span,
                    "not part of any token",
                );
                if ch == '\'' {
                    d = d.with_help("strings use double quotes: \"...\"");
                } else if ch == '.' {
                    d = d.with_help(
                        "a range is written `a..b`; a float needs a digit after the point: `1.0`",
                    );
                }
                diags.push(d);
                Tok::Error
            }
        };
        if matches!(prev, Tok::RBrace) && !matches!(tok, Tok::Else) {
            // The statement at this level ended: so did its `else if` chain.
            let c = chains.last_mut().expect("level 0 is never popped");
            chained -= *c;
            *c = 0;
        }
        let deeper = match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                depth += 1;
                chains.push(0);
                true
            }
            Tok::If if matches!(prev, Tok::Else) => {
                *chains.last_mut().expect("level 0 is never popped") += 1;
                chained += 1;
                true
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                if depth > 0 {
                    depth -= 1;
                    chained -= chains.pop().unwrap_or(0);
                }
                false
            }
            _ => false,
        };
        if deeper && depth + chained > MAX_NESTING {
            diags.push(
                Diag::error(
                    "accl::parse::too_deep",
                    format!("blocks and brackets nested more than {MAX_NESTING} deep"),
                    span,
                    "nesting limit reached here",
                )
                .with_help(if chained > depth {
                    "split the `else if` chain into several `if` statements or functions"
                } else {
                    "split the expression or block into smaller pieces (functions, variables)"
                }),
            );
            fatal = true;
            break;
        }
        prev = tok;
        tokens.push((range.start, tok, range.end));
    }
    Lexed {
        tokens,
        diags,
        fatal,
    }
}

/// A numeric literal's value and optional type suffix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumLit {
    Int(u64, Option<Scalar>),
    Float(f64, Option<Scalar>),
}

fn split_suffix<'t>(text: &'t str, allowed_start: &[u8]) -> (&'t str, Option<&'t str>) {
    // The suffix starts at the last `i`, `u` or `f` followed only by digits.
    if let Some(pos) = text.rfind(|c: char| allowed_start.contains(&(c as u8))) {
        let suf = &text[pos..];
        if suf.len() > 1 && suf[1..].bytes().all(|b| b.is_ascii_digit()) {
            return (&text[..pos], Some(suf));
        }
    }
    (text, None)
}

fn suffix_type(suf: &str, span: Span) -> Result<Scalar, Diag> {
    match Scalar::from_name(suf) {
        Some(t) if t != Scalar::Bool => Ok(t),
        _ => Err(Diag::error(
            "accl::lex::bad_suffix",
            format!("invalid literal suffix `{suf}`"),
            span,
            "unknown suffix",
        )
        .with_help("suffixes are i32, i64, u32, u8 (integers) and f32, f64 (floats)")),
    }
}

/// Parse the text of an `Int` token (which may carry a float suffix: `10f32`).
pub fn parse_int(text: &str, span: Span) -> Result<NumLit, Diag> {
    let (body, radix) = if let Some(h) = text.strip_prefix("0x") {
        (h, 16)
    } else if let Some(b) = text.strip_prefix("0b") {
        (b, 2)
    } else {
        (text, 10)
    };
    let starts: &[u8] = if radix == 16 { b"iu" } else { b"iuf" };
    let (digits, suf) = split_suffix(body, starts);
    let suffix = suf.map(|s| suffix_type(s, span)).transpose()?;
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() {
        return Err(Diag::error(
            "accl::lex::bad_number",
            format!("`{text}` has no digits"),
            span,
            "expected digits",
        ));
    }
    if let Some(t) = suffix.filter(|t| t.is_float()) {
        let v: f64 = clean.parse().unwrap_or(f64::INFINITY);
        return Ok(NumLit::Float(v, Some(t)));
    }
    match u64::from_str_radix(&clean, radix) {
        Ok(v) => Ok(NumLit::Int(v, suffix)),
        Err(_) => Err(Diag::error(
            "accl::lex::int_too_large",
            format!("integer literal `{text}` is too large"),
            span,
            "does not fit in 64 bits",
        )
        .with_help("the largest integer type is i64; use a float literal for larger magnitudes")),
    }
}

/// Parse the text of a `Float` token.
pub fn parse_float(text: &str, span: Span) -> Result<NumLit, Diag> {
    let (digits, suf) = split_suffix(text, b"fi");
    let suffix = suf.map(|s| suffix_type(s, span)).transpose()?;
    if let Some(t) = suffix.filter(|t| !t.is_float()) {
        return Err(Diag::error(
            "accl::lex::bad_suffix",
            format!("a float literal cannot have the integer suffix `{t}`"),
            span,
            "integer suffix on a float",
        )
        .with_help(format!("cast it instead: `{digits} as {t}`")));
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    match clean.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(NumLit::Float(v, suffix)),
        _ => Err(Diag::error(
            "accl::lex::bad_number",
            format!("float literal `{text}` is out of range"),
            span,
            "not a finite f64",
        )),
    }
}

/// Resolve the escapes of a string token (quotes included in `text`).
pub fn unescape(text: &str, span: Span) -> Result<String, Diag> {
    let inner = &text[1..text.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, '0')) => out.push('\0'),
            Some((_, '"')) => out.push('"'),
            Some((_, '\\')) => out.push('\\'),
            other => {
                let at = span.start as usize + 1 + i;
                let len = 1 + other.map_or(0, |(_, c)| c.len_utf8());
                return Err(Diag::error(
                    "accl::lex::bad_escape",
                    "unknown escape sequence in string",
                    Span::new(at, at + len),
                    "unknown escape",
                )
                .with_help("the escapes are \\n \\t \\r \\0 \\\" and \\\\"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok<'_>> {
        lex(src).tokens.into_iter().map(|t| t.1).collect()
    }

    #[test]
    fn ranges_and_floats_are_told_apart() {
        assert_eq!(
            kinds("0..N"),
            vec![Tok::Int("0"), Tok::DotDot, Tok::Ident("N")]
        );
        assert_eq!(
            kinds("1..=n"),
            vec![Tok::Int("1"), Tok::DotDotEq, Tok::Ident("n")]
        );
        assert_eq!(
            kinds(".5 1e-6 2.5e3 1.0f32 2.e4 1.E-5f32"),
            vec![
                Tok::Float(".5"),
                Tok::Float("1e-6"),
                Tok::Float("2.5e3"),
                Tok::Float("1.0f32"),
                Tok::Float("2.e4"),
                Tok::Float("1.E-5f32")
            ]
        );
        assert_eq!(
            parse_float("2.e4", Span::default()).unwrap(),
            NumLit::Float(2.0e4, None)
        );
        assert_eq!(
            kinds("0..e4"),
            vec![Tok::Int("0"), Tok::DotDot, Tok::Ident("e4")]
        );
        assert_eq!(
            kinds("0x2A 0b101 1_000_000 10i64"),
            vec![
                Tok::Int("0x2A"),
                Tok::Int("0b101"),
                Tok::Int("1_000_000"),
                Tok::Int("10i64")
            ]
        );
    }

    #[test]
    fn numbers_parse_with_suffixes() {
        let s = Span::default();
        assert_eq!(parse_int("0x2A", s).unwrap(), NumLit::Int(42, None));
        assert_eq!(parse_int("0b101", s).unwrap(), NumLit::Int(5, None));
        assert_eq!(
            parse_int("1_000_000", s).unwrap(),
            NumLit::Int(1_000_000, None)
        );
        assert_eq!(
            parse_int("10i64", s).unwrap(),
            NumLit::Int(10, Some(Scalar::I64))
        );
        assert_eq!(
            parse_int("10f32", s).unwrap(),
            NumLit::Float(10.0, Some(Scalar::F32))
        );
        assert_eq!(
            parse_int("0xffu8", s).unwrap(),
            NumLit::Int(255, Some(Scalar::U8))
        );
        assert_eq!(
            parse_float("2.5e3", s).unwrap(),
            NumLit::Float(2500.0, None)
        );
        assert_eq!(
            parse_float("1.0f32", s).unwrap(),
            NumLit::Float(1.0, Some(Scalar::F32))
        );
        assert!(parse_int("99999999999999999999", s).is_err());
        assert!(parse_int("10i65", s).is_err());
        assert!(parse_float("1.0i32", s).is_err());
    }

    #[test]
    fn nested_block_comments_and_strings() {
        assert_eq!(
            kinds("/* a /* b */ c */ x // y\n z"),
            vec![Tok::Ident("x"), Tok::Ident("z")]
        );
        let l = lex("/* open /* */");
        assert_eq!(l.diags[0].code, "accl::lex::unterminated_comment");
        assert_eq!(
            unescape(r#""a\n\"b\\""#, Span::default()).unwrap(),
            "a\n\"b\\"
        );
        assert!(unescape(r#""\q""#, Span::default()).is_err());
    }

    #[test]
    fn bad_characters_become_error_tokens() {
        let l = lex("let x = 1 $ 2;");
        assert_eq!(l.diags.len(), 1);
        assert!(l.tokens.iter().any(|t| t.1 == Tok::Error));
    }

    #[test]
    fn long_else_if_chains_count_as_nesting() {
        let chain = |n: usize| format!("if a {{}}{}\n", " else if a {}".repeat(n));
        assert!(!lex(&chain(MAX_NESTING - 1)).fatal);
        assert!(lex(&chain(MAX_NESTING + 1)).fatal);
        // Chains that end do not add up.
        let many = chain(MAX_NESTING - 1).repeat(10);
        assert!(!lex(&many).fatal);
        let inside = format!(
            "{{ {} }} {}",
            chain(MAX_NESTING - 2),
            chain(MAX_NESTING - 1)
        );
        assert!(!lex(&inside).fatal);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let src = "(".repeat(10_000);
        let l = lex(&src);
        assert!(l.fatal);
        assert_eq!(l.diags[0].code, "accl::parse::too_deep");
    }
}
