//! Spellings that people bring from OpenACC C and from NumPy (`#pragma acc`,
//! `i++`, `for (;;)`, `int x =`, `(int) x`, `x.sum()`, `x ** 2`). The
//! grammar does not know them, so the parser's error alone says only
//! "unexpected token"; here the tokens around an error are matched against
//! each habit and the diagnostic names accl's spelling. Kept apart from
//! `parse.rs` because the list grows with every language users come from.

use crate::diag::Diag;
use crate::span::Span;
use crate::token::Tok;

type Toks<'s> = Vec<(usize, Tok<'s>, usize)>;

/// C's scalar type names and accl's for them.
const C_TYPES: &[(&str, &str)] = &[
    ("int", "i32"),
    ("long", "i64"),
    ("unsigned", "u32"),
    ("float", "f32"),
    ("double", "f64"),
    ("char", "u8"),
    ("size_t", "i64"),
    ("auto", "(the type is inferred)"),
];

fn c_type(tok: Tok<'_>) -> Option<&'static str> {
    match tok {
        Tok::Ident(w) => C_TYPES.iter().find(|(c, _)| *c == w).map(|(_, a)| *a),
        _ => None,
    }
}

/// `#pragma acc` before a construct: the three tokens are dropped, so the
/// construct after them reads as accl's own (`#pragma acc parallel loop`
/// then a `for` loop is accl's `parallel loop for ..`), and the lexer's
/// error on `#` becomes one that says so.
pub(crate) fn pragmas(toks: &mut Toks<'_>, src: &str, diags: &mut [Diag]) {
    let mut i = 0;
    while i + 1 < toks.len() {
        let (l, tok, _) = toks[i];
        let is_pragma = tok == Tok::Error
            && src.get(l..).is_some_and(|s| s.starts_with('#'))
            && toks[i + 1].1 == Tok::Ident("pragma");
        if !is_pragma {
            i += 1;
            continue;
        }
        let acc = toks.get(i + 2).is_some_and(|t| t.1 == Tok::Ident("acc"));
        let n = if acc { 3 } else { 2 };
        let r = toks[i + n - 1].2;
        if let Some(d) = diags
            .iter_mut()
            .find(|d| d.code == "accl::lex::bad_character" && d.span().start as usize == l)
        {
            *d = Diag::error(
                "accl::parse::pragma",
                "accl has no `#pragma`",
                Span::new(l, r),
                "OpenACC C's directive prefix",
            )
            .with_help(
                "a construct is a statement in accl: write `parallel loop for i in 0..n { .. }` \
                 (or `data copyin(a) { .. }`, `update self(a);`), with no `#pragma acc`",
            );
        }
        toks.drain(i..i + n);
    }
}

/// A method call, `a.sum()`: the lexer stops at `.`; its error says to
/// call the function.
pub(crate) fn method_calls(diags: &mut [Diag], src: &str) {
    for d in diags
        .iter_mut()
        .filter(|d| d.code == "accl::lex::bad_character" && d.message.contains("`.`"))
    {
        let at = d.span().start as usize;
        let ident = |s: &str| -> usize {
            s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(s.len())
        };
        let after = src.get(at + 1..).unwrap_or("");
        let method = &after[..ident(after)];
        let before = src.get(..at).unwrap_or("");
        let recv_len = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .count();
        let recv = &before[before.len() - recv_len..];
        if method.is_empty() || method.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let recv = if recv.is_empty() { "x" } else { recv };
        let rest = &after[method.len()..];
        // NumPy's names where accl's differ.
        let func = match method {
            "max" => "maxval",
            "min" => "minval",
            "copy" => "clone",
            m => m,
        };
        let call = if rest.starts_with("()") {
            format!("`{func}({recv})`")
        } else if rest.starts_with('(') {
            format!("`{func}({recv}, ..)`")
        } else {
            format!("a function of `{recv}` (`len({recv})`, `shape({recv}, axis)`)")
        };
        d.labels[0].1 = "accl has no methods or fields".into();
        d.help = Some(format!("call the function: {call}"));
    }
}

/// What a habit means, for a syntax error at token `k`: the label and the
/// help to put on it, and how far the error's confusion reaches (errors
/// the parser reports inside it come from the same habit and are dropped).
pub(crate) struct Habit {
    pub label: String,
    pub help: String,
    pub reach: Option<Span>,
}

pub(crate) fn habit(toks: &[(usize, Tok<'_>, usize)], k: usize, src: &str) -> Option<Habit> {
    let tok = |i: Option<usize>| i.and_then(|i| toks.get(i)).map(|t| t.1);
    let at = |d: isize| tok(k.checked_add_signed(d));
    let adjacent = |i: usize| toks.get(i + 1).is_some_and(|n| toks[i].2 == n.0);
    // `x++`, `++x`, `x--`: a doubled `+` or `-` touching.
    for i in k.saturating_sub(2)..=k {
        let (Some(a), Some(b)) = (tok(Some(i)), tok(Some(i + 1))) else {
            continue;
        };
        if a == b && matches!(a, Tok::Plus | Tok::Minus) && adjacent(i) {
            let (op, assign) = if a == Tok::Plus {
                ("++", "+=")
            } else {
                ("--", "-=")
            };
            return Some(Habit {
                label: format!("accl has no `{op}`"),
                help: format!("write `x {assign} 1;` (a statement, not an expression)"),
                reach: None,
            });
        }
    }
    // `x ** 2`.
    if at(0) == Some(Tok::Star) && at(-1) == Some(Tok::Star) && adjacent(k - 1) {
        return Some(Habit {
            label: "accl has no `**`".into(),
            help: "write `pow(x, 2.0)` for floats, or `x * x`".into(),
            reach: None,
        });
    }
    // C's `for (init; cond; step)`.
    if at(0) == Some(Tok::LParen) && at(-1) == Some(Tok::For) {
        let close = closing(toks, k);
        let body_end = close
            .filter(|&c| tok(Some(c + 1)) == Some(Tok::LBrace))
            .and_then(|c| closing(toks, c + 1))
            .or(close);
        return Some(Habit {
            label: "C's `for (init; cond; step)`".into(),
            help: "accl's counted loop is `for i in lo..hi { .. }` (`lo..=hi` to include hi, \
                   `rev(lo..hi)` to count down); any other loop is `while cond { .. }`"
                .into(),
            reach: body_end.map(|e| Span::new(toks[k].0, toks[e].2)),
        });
    }
    // `(int) x`: a C cast.
    if at(-1) == Some(Tok::RParen) && at(-3) == Some(Tok::LParen) {
        let ty = tok(k.checked_sub(2)).and_then(|t| {
            c_type(t).or_else(|| {
                let w = t.to_string();
                let w = w.trim_matches('`');
                ["i32", "i64", "u32", "u8", "f32", "f64", "bool"]
                    .into_iter()
                    .find(|a| *a == w)
            })
        });
        if let Some(ty) = ty.filter(|t| !t.starts_with('(')) {
            return Some(Habit {
                label: "C's cast".into(),
                help: format!("a cast is written after its operand: `x as {ty}`"),
                reach: None,
            });
        }
    }
    // `int x = ..;`: a C declaration at a statement's start.
    for j in [k.checked_sub(1), k.checked_sub(2)].into_iter().flatten() {
        let starts = j == 0 || matches!(toks[j - 1].1, Tok::Semi | Tok::LBrace | Tok::RBrace);
        let name = matches!(tok(Some(j + 1)), Some(Tok::Ident(_)));
        if let (true, true, Some(ty)) = (starts, name, c_type(toks[j].1)) {
            let name = src.get(toks[j + 1].0..toks[j + 1].2).unwrap_or("x");
            let help = if ty.starts_with('(') {
                format!("declare with `let {name} = ..;` (the type is inferred)")
            } else {
                format!("declare with `let {name}: {ty} = ..;` (or `let {name} = ..;`, inferred)")
            };
            return Some(Habit {
                label: "C's declaration".into(),
                help,
                reach: None,
            });
        }
    }
    None
}

/// The index of the bracket that closes the one at `open`.
fn closing(toks: &[(usize, Tok<'_>, usize)], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.1 {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}
