//! Parsing: tokens to [`ast::Program`](crate::ast::Program), recovering from
//! errors so that one run reports every syntax error it can.

use crate::ast::*;
use crate::diag::Diag;
use crate::lexer::{self, NumLit};
use crate::span::Span;
use crate::token::Tok;
use lalrpop_util::{ErrorRecovery, ParseError};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    grammar
);

/// Deepest expression tree accepted (operators chained without brackets).
pub const MAX_EXPR_DEPTH: u32 = 512;

/// Parse a whole program. Always returns a program (possibly partial, with
/// `Error` nodes where parsing failed) and every diagnostic found.
pub fn parse(src: &str) -> (Program, Vec<Diag>) {
    let lexed = lexer::lex(src);
    let mut diags = lexed.diags;
    if lexed.fatal {
        return (Program::default(), diags);
    }
    let mut errors = Vec::new();
    let tokens = lexed.tokens.into_iter().map(Ok::<_, Diag>);
    let program = match grammar::ProgramParser::new().parse(&mut errors, tokens) {
        Ok(p) => p,
        Err(e) => {
            errors.push(convert(e, src.len()));
            Program::default()
        }
    };
    diags.extend(errors);
    dedup(&mut diags);
    (program, diags)
}

/// Parse a single expression (the REPL's `:type EXPR`).
pub fn parse_expr(src: &str) -> Result<Expr, Vec<Diag>> {
    let lexed = lexer::lex(src);
    if lexed.fatal || !lexed.diags.is_empty() {
        return Err(lexed.diags);
    }
    let mut errors = Vec::new();
    let tokens = lexed.tokens.into_iter().map(Ok::<_, Diag>);
    match grammar::ExprParser::new().parse(&mut errors, tokens) {
        Ok(e) if errors.is_empty() => Ok(e),
        Ok(_) => Err(errors),
        Err(e) => {
            errors.push(convert(e, src.len()));
            Err(errors)
        }
    }
}

/// Drop errors that an earlier one caused: two at one place, or the
/// parser tripping over an error token the lexer already reported.
fn dedup(diags: &mut Vec<Diag>) {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert(d.span().start));
}

fn describe_expected(expected: &[String]) -> Option<String> {
    let mut names: Vec<String> = expected
        .iter()
        .map(|e| match e.trim_matches('"') {
            "ident" => "an identifier".to_string(),
            "int" | "float" => "a number".to_string(),
            "string" => "a string".to_string(),
            t => format!("`{t}`"),
        })
        .collect();
    names.sort();
    names.dedup();
    match names.len() {
        0 => None,
        1..=6 => Some(format!("expected {}", names.join(", "))),
        _ => None,
    }
}

fn unexpected(tok: &Tok<'_>, span: Span, expected: &[String]) -> Diag {
    let mut d = Diag::error(
        "accl::parse::unexpected_token",
        format!("unexpected {tok}"),
        span,
        describe_expected(expected).unwrap_or_else(|| "not expected here".into()),
    );
    let wants = |t: &str| expected.iter().any(|e| e == &format!("\"{t}\""));
    if wants(";") && !matches!(tok, Tok::Semi) {
        d = d.with_help("statements end with `;`");
    } else if matches!(tok, Tok::Ident("elif" | "elsif")) {
        d = d.with_help("write `else if`");
    }
    d
}

fn convert(e: ParseError<usize, Tok<'_>, Diag>, eof: usize) -> Diag {
    match e {
        ParseError::InvalidToken { location } => Diag::error(
            "accl::parse::invalid_token",
            "invalid token",
            Span::new(location, location + 1),
            "here",
        ),
        ParseError::UnrecognizedEof { location, expected } => Diag::error(
            "accl::parse::unexpected_eof",
            "unexpected end of input",
            Span::new(location.min(eof), eof),
            describe_expected(&expected).unwrap_or_else(|| "the program ends here".into()),
        )
        .with_help("a `}`, `)` or `;` may be missing"),
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => unexpected(&tok, Span::new(l, r), &expected),
        ParseError::ExtraToken { token: (l, tok, r) } => Diag::error(
            "accl::parse::extra_token",
            format!("unexpected {tok} after the end of the program"),
            Span::new(l, r),
            "extra token",
        ),
        ParseError::User { error } => error,
    }
}

// ---- helpers for the grammar's actions

pub(crate) fn recovered(e: ErrorRecovery<usize, Tok<'_>, Diag>) -> Diag {
    convert(e.error, usize::MAX)
}

pub(crate) fn mk(errors: &mut Vec<Diag>, kind: ExprKind, l: usize, r: usize) -> Expr {
    let span = Span::new(l, r);
    let e = Expr::new(kind, span);
    if e.depth > MAX_EXPR_DEPTH {
        if !errors.iter().any(|d| d.code == "accl::parse::too_deep") {
            errors.push(
                Diag::error(
                    "accl::parse::too_deep",
                    format!("expression nested more than {MAX_EXPR_DEPTH} deep"),
                    span,
                    "this expression is too deep",
                )
                .with_help("split it using intermediate variables"),
            );
        }
        return Expr::error(span);
    }
    e
}

pub(crate) fn bin(errors: &mut Vec<Diag>, op: BinOp, a: Expr, b: Expr, l: usize, r: usize) -> Expr {
    mk(errors, ExprKind::Binary(op, Box::new(a), Box::new(b)), l, r)
}

pub(crate) fn lit_int(errors: &mut Vec<Diag>, s: &str, l: usize, r: usize) -> Expr {
    let span = Span::new(l, r);
    match lexer::parse_int(s, span) {
        Ok(NumLit::Int(v, t)) => mk(errors, ExprKind::Int(v, t), l, r),
        Ok(NumLit::Float(v, t)) => mk(errors, ExprKind::Float(v, t), l, r),
        Err(d) => {
            errors.push(d);
            Expr::error(span)
        }
    }
}

pub(crate) fn lit_float(errors: &mut Vec<Diag>, s: &str, l: usize, r: usize) -> Expr {
    let span = Span::new(l, r);
    match lexer::parse_float(s, span) {
        Ok(NumLit::Float(v, t)) => mk(errors, ExprKind::Float(v, t), l, r),
        Ok(NumLit::Int(v, t)) => mk(errors, ExprKind::Int(v, t), l, r),
        Err(d) => {
            errors.push(d);
            Expr::error(span)
        }
    }
}

pub(crate) fn lit_str(errors: &mut Vec<Diag>, s: &str, l: usize, r: usize) -> Expr {
    let span = Span::new(l, r);
    match lexer::unescape(s, span) {
        Ok(v) => mk(errors, ExprKind::Str(v), l, r),
        Err(d) => {
            errors.push(d);
            Expr::error(span)
        }
    }
}
