//! Parsing: tokens to [`ast::Program`](crate::ast::Program), recovering from
//! errors so that one run reports every syntax error it can.

use crate::ast::*;
use crate::diag::Diag;
use crate::habits;
use crate::lexer::{self, NumLit};
use crate::span::Span;
use crate::token::Tok;
use lalrpop_util::{ErrorRecovery, ParseError};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    grammar
);

/// Deepest nesting of an expression accepted ([`Expr::nesting`]: unary
/// operators, right operands, calls, indices; a flat chain of
/// left-associative operators does not nest).
pub const MAX_EXPR_NESTING: u32 = 512;

/// Highest expression tree accepted ([`Expr::depth`]): a flat chain of
/// 10,000 terms. Recursive passes run on a stack that grows on demand.
pub const MAX_EXPR_DEPTH: u32 = 10_000;

/// Parse a whole program. Always returns a program (possibly partial, with
/// `Error` nodes where parsing failed) and every diagnostic found.
pub fn parse(src: &str) -> (Program, Vec<Diag>) {
    // A `#!` first line (an executable script) is blanked, keeping offsets.
    let owned;
    let src = if let Some(rest) = src.strip_prefix("#!") {
        let end = rest.find('\n').map_or(src.len(), |i| i + 2);
        owned = format!("{}{}", " ".repeat(end), &src[end..]);
        owned.as_str()
    } else {
        src
    };
    let lexed = lexer::lex(src);
    let mut diags = lexed.diags;
    if lexed.fatal {
        return (Program::default(), diags);
    }
    let mut errors = Vec::new();
    let mut toks = lexed.tokens;
    habits::pragmas(&mut toks, src, &mut diags);
    habits::method_calls(&mut diags, src);
    // `kernels`/`serial`/`host_data`/`init`/`shutdown`/`declare` are keywords only
    // where they start a construct.
    for i in 0..toks.len().saturating_sub(1) {
        let starts = i == 0 || matches!(toks[i - 1].1, Tok::Semi | Tok::LBrace | Tok::RBrace);
        if !starts {
            continue;
        }
        match (toks[i].1, toks[i + 1].1) {
            (
                Tok::Ident("kernels"),
                Tok::LBrace | Tok::Loop | Tok::Ident(_) | Tok::If | Tok::Wait,
            ) => toks[i].1 = Tok::Kernels,
            (
                Tok::Ident("serial"),
                Tok::LBrace | Tok::Loop | Tok::Ident(_) | Tok::If | Tok::Wait,
            ) => toks[i].1 = Tok::Serial,
            (Tok::Ident("host_data"), Tok::LBrace | Tok::Ident(_)) => toks[i].1 = Tok::HostData,
            (Tok::Ident("cache"), Tok::LParen) => toks[i].1 = Tok::Cache,
            (Tok::Ident("init"), Tok::Semi | Tok::Ident(_) | Tok::If) => toks[i].1 = Tok::Init,
            (Tok::Ident("shutdown"), Tok::Semi | Tok::Ident(_) | Tok::If) => {
                toks[i].1 = Tok::Shutdown
            }
            (Tok::Ident("declare"), Tok::Ident(_)) => toks[i].1 = Tok::Declare,
            _ => {}
        }
    }
    // `read`/`write` are keywords only between `atomic` and a name;
    // `capture` between `atomic` and a name or `{`.
    for i in 1..toks.len().saturating_sub(1) {
        if let (Tok::Atomic, Tok::Ident("capture"), Tok::Ident(_) | Tok::LBrace) =
            (toks[i - 1].1, toks[i].1, toks[i + 1].1)
        {
            toks[i].1 = Tok::AtomicCapture;
        }
        if let (Tok::Atomic, Tok::Ident(w), Tok::Ident(_)) =
            (toks[i - 1].1, toks[i].1, toks[i + 1].1)
        {
            match w {
                "read" => toks[i].1 = Tok::AtomicRead,
                "write" => toks[i].1 = Tok::AtomicWrite,
                _ => {}
            }
        }
    }
    // `rev` is a keyword only in `for x in rev(..)`.
    for i in 3..toks.len().saturating_sub(1) {
        if let (Tok::For, Tok::Ident(_), Tok::In, Tok::Ident("rev"), Tok::LParen) = (
            toks[i - 3].1,
            toks[i - 2].1,
            toks[i - 1].1,
            toks[i].1,
            toks[i + 1].1,
        ) {
            toks[i].1 = Tok::Rev;
        }
    }
    data_modifiers(&mut toks);
    loop_modifiers(&mut toks);
    named_routines(&mut toks);
    reserved_names(&mut toks, src, &mut errors);
    let tokens = toks.iter().copied().map(Ok::<_, Diag>);
    let program = match grammar::ProgramParser::new().parse(&mut errors, tokens) {
        Ok(p) => p,
        Err(e) => {
            errors.push(convert(e, src.len()));
            Program::default()
        }
    };
    let unmatched = unmatched(&toks);
    let mut reaches = Vec::new();
    for d in &mut errors {
        reaches.extend(improve(d, &toks, &unmatched, src));
    }
    // Errors inside a habit's reach are the parser's confusion about it.
    errors.retain(|d| {
        let at = d.span().start;
        !reaches.iter().any(|r: &Span| r.start < at && at <= r.end)
    });
    // A reserved word used as a name is reported once: not again where
    // the name is used.
    let named: Vec<String> = errors
        .iter()
        .filter(|d| d.code == "accl::parse::reserved_word")
        .map(|d| d.message.replace(" is a reserved word", ""))
        .collect();
    if !named.is_empty() {
        errors.retain(|d| {
            d.code != "accl::parse::unexpected_token"
                || !named.iter().any(|w| d.message == format!("unexpected {w}"))
        });
    }
    diags.extend(errors);
    dedup(&mut diags);
    diags.sort_by_key(|d| d.span().start);
    (program, diags)
}

/// Drop the OpenACC data-clause modifiers that state what accl always does:
/// `copyout(zero: a)`, `create(zero: a)` (a device copy that is not copied
/// in starts at zero) and `copyin(readonly: a)`, `cache(readonly: a[..])`
/// (a hint). On other clauses they stay, and are reported.
fn data_modifiers(toks: &mut Vec<(usize, Tok<'_>, usize)>) {
    let mut drop = Vec::new();
    for i in 2..toks.len().saturating_sub(1) {
        let ok = matches!(
            (toks[i - 2].1, toks[i].1),
            (Tok::Ident("copyout" | "create"), Tok::Ident("zero"))
                | (Tok::Ident("copyin") | Tok::Cache, Tok::Ident("readonly"))
        );
        if ok && toks[i - 1].1 == Tok::LParen && toks[i + 1].1 == Tok::Colon {
            drop.extend([i, i + 1]);
        }
    }
    let mut k = 0;
    toks.retain(|_| {
        k += 1;
        !drop.contains(&(k - 1))
    });
}

/// OpenACC's named form `routine(f) vector;` gives function `f` (declared
/// anywhere in the program) the level, and the clauses after it
/// (`routine(f) vector nohost bind(g);`): it becomes `routine vector
/// nohost bind(g) fn f(..)`, the form the grammar reads. A named routine
/// whose function is not found, or already has a level, is left for the
/// parser to report.
fn named_routines(toks: &mut Vec<(usize, Tok<'_>, usize)>) {
    let mut i = 0;
    while i + 5 <= toks.len() {
        let starts = i == 0 || matches!(toks[i - 1].1, Tok::Semi | Tok::LBrace | Tok::RBrace);
        let (Tok::Ident("routine"), Tok::LParen, Tok::Ident(f), Tok::RParen, Tok::Ident(_)) = (
            toks[i].1,
            toks[i + 1].1,
            toks[i + 2].1,
            toks[i + 3].1,
            toks[i + 4].1,
        ) else {
            i += 1;
            continue;
        };
        // The level and the clauses after it, up to the `;`: names,
        // parentheses and what a clause's parentheses hold (`bind(g)`,
        // `bind("g")`), nothing that opens a block.
        let end = (i + 5..toks.len()).find(|&k| {
            !matches!(
                toks[k].1,
                Tok::Ident(_) | Tok::LParen | Tok::RParen | Tok::Comma | Tok::Str(_)
            )
        });
        let Some(end) = end.filter(|&k| starts && toks[k].1 == Tok::Semi) else {
            i += 1;
            continue;
        };
        let decl = (0..toks.len().saturating_sub(1)).find(|&j| {
            toks[j].1 == Tok::Fn
                && toks[j + 1].1 == Tok::Ident(f)
                && (j == 0 || matches!(toks[j - 1].1, Tok::Semi | Tok::LBrace | Tok::RBrace))
        });
        let Some(j) = decl else {
            i += 1;
            continue;
        };
        // `routine` and the level and clauses go before `fn f`; the
        // directive (`routine ( f )` .. `;`) goes.
        let moved: Vec<_> = std::iter::once(toks[i])
            .chain(toks[i + 4..end].iter().copied())
            .collect();
        let len = end + 1 - i;
        let k = moved.len();
        toks.splice(j..j, moved);
        // The scan goes on from where the directive was.
        let at = if j < i { i + k } else { i };
        toks.drain(at..at + len);
    }
}

/// OpenACC 3.3's `collapse(force: n)` and `gang(dim: k)`: the modifier
/// goes into the clause's name (one with a parenthesis, so that no program
/// writes it), which keeps `force`/`dim` from reading as a reduction
/// operator and lets the checker tell the forms apart.
fn loop_modifiers(toks: &mut Vec<(usize, Tok<'_>, usize)>) {
    let mut drop = Vec::new();
    for i in 0..toks.len().saturating_sub(3) {
        let name = match (toks[i].1, toks[i + 1].1, toks[i + 2].1, toks[i + 3].1) {
            (Tok::Ident("collapse"), Tok::LParen, Tok::Ident("force"), Tok::Colon) => {
                crate::ast::COLLAPSE_FORCE
            }
            (Tok::Ident("gang"), Tok::LParen, Tok::Ident("dim"), Tok::Colon) => {
                crate::ast::GANG_DIM
            }
            (Tok::Ident("gang"), Tok::LParen, Tok::Ident("static"), Tok::Colon) => {
                crate::ast::GANG_STATIC
            }
            _ => continue,
        };
        toks[i].1 = Tok::Ident(name);
        drop.extend([i + 2, i + 3]);
    }
    let mut k = 0;
    toks.retain(|_| {
        k += 1;
        !drop.contains(&(k - 1))
    });
}

/// Sharpen a syntax error with what the parser's state does not know: the
/// tokens around it (a missing `;` at a line's end, `elif`, an unclosed or
/// unmatched bracket, a habit from C or NumPy). `unmatched` is
/// [`unmatched`]`(toks)`, computed once: a search of the whole token list
/// per error made many errors quadratic. Returns how far a habit's
/// confusion reaches (see [`habits::Habit`]).
fn improve(
    d: &mut Diag,
    toks: &[(usize, Tok<'_>, usize)],
    unmatched: &[usize],
    src: &str,
) -> Option<Span> {
    let at = d.span().start as usize;
    let k = toks.partition_point(|t| t.0 < at);
    if k == toks.len() {
        if d.code == "accl::parse::unexpected_eof" {
            if let Some((l, tok, r)) = unclosed(toks) {
                d.labels
                    .push((Span::new(l, r), format!("this {tok} is never closed")));
            }
        }
        return None;
    }
    if d.code != "accl::parse::unexpected_token" || toks[k].0 != at {
        return None;
    }
    let prev = k.checked_sub(1).map(|i| toks[i]);
    let before = k.checked_sub(2).map(|i| toks[i].1);
    // `} elif x ..` fails at `x`, or one token later where `elif x` reads
    // as the start of `routine <level> fn`.
    let elif = match (prev, before) {
        (Some(p), Some(Tok::RBrace)) => Some(p),
        (Some((_, Tok::Ident(_), _)), _) => match (k.checked_sub(2), k.checked_sub(3)) {
            (Some(i), Some(j)) if toks[j].1 == Tok::RBrace => Some(toks[i]),
            _ => None,
        },
        _ => None,
    };
    if let Some((l, Tok::Ident(w @ ("elif" | "elsif" | "elseif")), r)) = elif {
        *d = Diag::error(
            "accl::parse::unexpected_token",
            format!("`{w}` is not a keyword"),
            Span::new(l, r),
            "`else if` in accl",
        )
        .with_help("write `else if`");
        return None;
    }
    if let Some(h) = habits::habit(toks, k, src) {
        d.labels.truncate(1);
        d.labels[0].1 = h.label;
        d.help = Some(h.help);
        return h.reach;
    }
    if d.help.as_deref() == Some(STATEMENT_END) {
        if let Some((pl, ptok, pr)) = prev {
            let line_break = src.get(pr..at).is_some_and(|gap| gap.contains('\n'));
            if line_break {
                let next = d.labels[0].0;
                d.message = format!("expected `;` after {ptok}");
                d.labels = vec![
                    (Span::new(pl, pr), "expected `;` after this".into()),
                    (next, "the next statement starts here".into()),
                ];
            }
        }
    }
    if matches!(toks[k].1, Tok::RParen | Tok::RBracket | Tok::RBrace)
        && unmatched.binary_search(&k).is_ok()
    {
        d.labels[0].1 = format!("this {} has no opening bracket", toks[k].1);
        d.help = Some("remove it, or add the missing opening bracket before it".into());
    }
    None
}

/// The innermost bracket left open at the end of the input.
fn unclosed<'s>(toks: &[(usize, Tok<'s>, usize)]) -> Option<(usize, Tok<'s>, usize)> {
    let mut stack = Vec::new();
    for t in toks {
        match t.1 {
            Tok::LParen | Tok::LBracket | Tok::LBrace => stack.push(*t),
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}

/// Indices of closing brackets with no opening bracket to match, ascending.
fn unmatched(toks: &[(usize, Tok<'_>, usize)]) -> Vec<usize> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t.1 {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace if depth == 0 => out.push(i),
            Tok::RParen | Tok::RBracket | Tok::RBrace => depth -= 1,
            _ => {}
        }
    }
    out
}

const STATEMENT_END: &str = "statements end with `;`";

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

/// A reserved word where a name must come (after `let`, `const`, `fn` or
/// `for`; a parameter's name) is reported, and read as that name, so that
/// the rest parses as meant instead of erring on from there.
fn reserved_names<'s>(toks: &mut [(usize, Tok<'s>, usize)], src: &'s str, errors: &mut Vec<Diag>) {
    // Inside a `fn` signature's parentheses: their depth.
    let mut sig: Option<usize> = None;
    for i in 0..toks.len() {
        let prev = i.checked_sub(1).map(|j| toks[j].1);
        let next = toks.get(i + 1).map(|t| t.1);
        let name_here = match prev {
            Some(Tok::Let | Tok::Const | Tok::Fn | Tok::For) => true,
            Some(Tok::LParen | Tok::Comma) => sig == Some(1) && next == Some(Tok::Colon),
            _ => false,
        };
        let (l, tok, r) = toks[i];
        if name_here {
            if let Some(w) = reserved_as_name(&tok, &["\"ident\"".to_string()]) {
                errors.push(reserved_word(&w, Span::new(l, r)));
                if let Some(text) = src.get(l..r) {
                    toks[i].1 = Tok::Ident(text);
                }
            }
        }
        match (tok, sig) {
            (Tok::LParen, None) if i >= 2 && toks[i - 2].1 == Tok::Fn => sig = Some(1),
            (Tok::LParen | Tok::LBracket, Some(d)) => sig = Some(d + 1),
            (Tok::RParen | Tok::RBracket, Some(d)) => sig = d.checked_sub(1).filter(|&d| d > 0),
            _ => {}
        }
    }
}

fn reserved_word(word: &str, span: Span) -> Diag {
    Diag::error(
        "accl::parse::reserved_word",
        format!("`{word}` is a reserved word"),
        span,
        "a reserved word cannot be a name",
    )
    .with_help(format!("rename it, e.g. `{word}_`"))
}

/// A reserved word where only a name may come (after `let`, `const`,
/// `fn` or `for`, a parameter): the word itself, else None.
fn reserved_as_name<'s>(tok: &Tok<'s>, expected: &[String]) -> Option<String> {
    let wants_name = expected.iter().any(|e| e == "\"ident\"")
        && expected
            .iter()
            .all(|e| matches!(e.as_str(), "\"ident\"" | "\")\"" | "\",\""));
    let word = tok.to_string();
    let word = word.strip_prefix('`')?.strip_suffix('`')?;
    (wants_name && Tok::KEYWORDS.contains(&word)).then(|| word.to_string())
}

fn unexpected(tok: &Tok<'_>, span: Span, expected: &[String]) -> Diag {
    if let Some(w) = reserved_as_name(tok, expected) {
        return reserved_word(&w, span);
    }
    let mut d = Diag::error(
        "accl::parse::unexpected_token",
        format!("unexpected {tok}"),
        span,
        describe_expected(expected).unwrap_or_else(|| "not expected here".into()),
    );
    let wants = |t: &str| expected.iter().any(|e| e == &format!("\"{t}\""));
    let comparison = matches!(
        tok,
        Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::EqEq | Tok::NotEq
    );
    if comparison && wants("&&") {
        d.labels[0].1 = "comparisons cannot be chained".into();
        d = d.with_help("combine two comparisons with `&&`: `a < b && b < c`");
    } else if wants(";") && !matches!(tok, Tok::Semi) {
        d = d.with_help(STATEMENT_END);
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
    if e.depth > MAX_EXPR_DEPTH || e.nesting > MAX_EXPR_NESTING {
        if !errors.iter().any(|d| d.code == "accl::parse::too_deep") {
            let message = if e.nesting > MAX_EXPR_NESTING {
                format!("expression nested more than {MAX_EXPR_NESTING} deep")
            } else {
                format!("expression of more than {MAX_EXPR_DEPTH} chained operations")
            };
            errors.push(
                Diag::error(
                    "accl::parse::too_deep",
                    message,
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

/// `a[..]`: an index when every subscript is a plain expression, else a
/// section.
pub(crate) fn subscript(
    errors: &mut Vec<Diag>,
    a: Expr,
    ix: Vec<SectionAxis>,
    l: usize,
    r: usize,
) -> Expr {
    if ix.iter().all(|x| matches!(x, SectionAxis::Index(_))) {
        let ix = ix
            .into_iter()
            .filter_map(|x| match x {
                SectionAxis::Index(e) => Some(e),
                _ => None,
            })
            .collect();
        mk(errors, ExprKind::Index(Box::new(a), ix), l, r)
    } else {
        mk(errors, ExprKind::Section(Box::new(a), ix), l, r)
    }
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

/// A type written as a name: `str`, or an unknown type (reported; typed as
/// `str` so that checking goes on).
pub(crate) fn named_type(errors: &mut Vec<Diag>, name: &str, span: Span) -> TypeExpr {
    if name != "str" {
        const TYPES: [&str; 8] = ["bool", "i32", "i64", "u32", "u8", "f32", "f64", "str"];
        let mut d = Diag::error(
            "accl::parse::unknown_type",
            format!("unknown type `{name}`"),
            span,
            "not a type",
        );
        let similar = if name.eq_ignore_ascii_case("string") || name == "String" {
            Some("str")
        } else {
            crate::diag::did_you_mean(name, TYPES.iter().copied())
        };
        d = match similar {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(
                "the types are `bool`, `i32`, `i64`, `u32`, `u8`, `f32`, `f64`, arrays of them (`f32[]`, `f32[,]`) and `str`",
            ),
        };
        errors.push(d);
    }
    TypeExpr {
        elem: crate::types::Scalar::F64,
        rank: 0,
        string: true,
        tuple: None,
        span,
    }
}

/// A written tuple type `(t1, t2, ..)` (of scalars, 2 to `Tuple::MAX` of
/// them), or with `array` the span of a `[]` after it: an array of tuples,
/// which does not exist (reported; typed as the tuple so that checking
/// goes on).
pub(crate) fn tuple_type(
    errors: &mut Vec<Diag>,
    elems: Vec<TypeExpr>,
    array: Option<Span>,
    span: Span,
) -> TypeExpr {
    use crate::types::{Scalar, Tuple};
    let mut scalars = Vec::new();
    for e in &elems {
        if e.tuple.is_some() || e.string || e.rank > 0 {
            let what = if e.tuple.is_some() {
                "a tuple"
            } else if e.string {
                "a string"
            } else {
                "an array"
            };
            errors.push(
                Diag::error(
                    "accl::type::tuple_element",
                    format!("a tuple cannot hold {what}"),
                    e.span,
                    "not a scalar type",
                )
                .with_help("the elements of a tuple are scalars: `bool`, integers and floats"),
            );
            scalars.push(Scalar::F64);
        } else {
            scalars.push(e.elem);
        }
    }
    if let Some(a) = array {
        errors.push(
            Diag::error(
                "accl::type::tuple_array",
                "there are no arrays of tuples",
                a,
                "array of a tuple type",
            )
            .with_label(span, "a tuple type")
            .with_help("keep one array per element: `(f64, i32)[]` is an `f64[]` and an `i32[]`"),
        );
    }
    let tuple = Tuple::new(&scalars).or_else(|| {
        let (msg, label) = if scalars.len() < 2 {
            (
                "a tuple type has two or more elements".to_string(),
                "one element",
            )
        } else {
            (
                format!("a tuple type has at most {} elements", Tuple::MAX),
                "too many elements",
            )
        };
        let help = if scalars.len() < 2 {
            "write the element type without parentheses"
        } else {
            "return fewer values, or write them into arrays"
        };
        errors.push(Diag::error("accl::type::tuple_arity", msg, span, label).with_help(help));
        Tuple::new(&[Scalar::F64, Scalar::F64])
    });
    TypeExpr {
        elem: Scalar::F64,
        rank: 0,
        string: false,
        tuple,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(src: &str) -> Vec<&'static str> {
        parse(src).1.iter().map(|d| d.code).collect()
    }

    #[test]
    fn errors_around_a_bad_character_are_all_reported() {
        // The bad character's error token must not end parsing.
        assert_eq!(
            codes("let x = 1\nlet y = 2 $ 3;\nlet z = (1 + ;\n"),
            [
                "accl::parse::unexpected_token",
                "accl::lex::bad_character",
                "accl::parse::unexpected_token"
            ]
        );
    }

    #[test]
    fn openacc_spellings_parse() {
        for src in [
            "serial loop copy(a) for i in 0..4 { a[i] = 1; }",
            "serial if(c) wait { }",
            "kernels wait(1) async(2) { }",
            "kernels loop if(c) for i in 0..4 { }",
            "atomic update a[0] += 1;",
            "atomic update a[0] = a[0] * 2;",
            "atomic a[0] = 3 - a[0];",
            "atomic a[0] /= 2; atomic a[0] <<= 1; atomic update a[0] >>= 1;",
            "atomic capture { v = a[0]; a[0] += 1; }",
            "atomic capture { a[0] = a[0] - 1; b[0] = a[0]; }",
            "atomic capture { v = a[0]; a[0] = max(a[0], 2); }",
            "atomic capture b[1] = a[0] ^= 2;",
            "atomic capture b[1] = a[0] = a[0] * 2;",
            "atomic capture b[1] = a[0] = 3 - a[0];",
            // Still names elsewhere.
            "let capture = 1; let serial = capture + 1; serial = 2;",
        ] {
            assert_eq!(codes(src), Vec::<&str>::new(), "{src}");
        }
        let (p, _) = parse("atomic capture v = a[0] *= 2;");
        let StmtKind::AtomicForm { capture, stmts } = &p.stmts[0].kind else {
            panic!("{:?}", p.stmts[0].kind);
        };
        assert!(*capture);
        assert_eq!(stmts.len(), 2);
    }

    #[test]
    fn syntax_errors_are_sharpened() {
        let (_, d) = parse("let x = 1\nlet y = 2;\n");
        assert_eq!(d[0].message, "expected `;` after number `1`");
        let (_, d) = parse("if true {\n} elif false {\n}\n");
        assert_eq!(d[0].message, "`elif` is not a keyword");
        let (_, d) = parse("fn f() {\n");
        assert_eq!(d[0].labels[1].1, "this `{` is never closed");
        let (_, d) = parse("let c = 1 < 2 < 3;\n");
        assert_eq!(d[0].labels[0].1, "comparisons cannot be chained");
    }

    #[test]
    fn reserved_words_as_names_get_a_hint() {
        for (src, word) in [
            ("let loop = 1;", "loop"),
            ("fn data() {}", "data"),
            ("let f32 = 2;", "f32"),
            ("const exit = 3;", "exit"),
            ("fn f(wait: i32) {}", "wait"),
            ("fn f(x: i32, in: i32) {}", "in"),
            ("for set in 0..3 { }", "set"),
        ] {
            let (_, d) = parse(src);
            assert_eq!(d[0].code, "accl::parse::reserved_word", "{src}");
            assert_eq!(
                d[0].message,
                format!("`{word}` is a reserved word"),
                "{src}"
            );
            assert_eq!(
                d[0].help,
                Some(format!("rename it, e.g. `{word}_`")),
                "{src}"
            );
        }
        // Read as the name it stands for: the rest parses, nothing else is reported.
        let (p, d) = parse("fn scale(x: f32, update: f32) -> f32 {\n    return x * update;\n}\n");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(p.stmts.len(), 1);
        let (_, d) = parse("fn data() {\n    let f32 = 1;\n}\nlet loop = 2;\n");
        let words: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            words,
            [
                "`data` is a reserved word",
                "`f32` is a reserved word",
                "`loop` is a reserved word"
            ]
        );
        // Not where a keyword is simply out of place.
        for src in [
            "if true { } ; else { }",
            "let x = loop + 1;",
            "let (a) = 1;",
        ] {
            let (_, d) = parse(src);
            assert!(
                d.iter().all(|d| d.code != "accl::parse::reserved_word"),
                "{src}"
            );
        }
        // Clause names and contextual words stay usable as names.
        for src in ["let copyin = 1;", "let kernels = 2;", "let read = 3;"] {
            assert!(parse(src).1.is_empty(), "{src}");
        }
    }
}
