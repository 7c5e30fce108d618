//! `accl fmt`: one canonical layout for accl source.
//!
//! The formatter works on the token stream, not on the syntax tree: the
//! lexer skips comments, so they are found again in the gaps between tokens
//! ([`pieces`]) and laid out with the tokens ([`layout`]). The parser only
//! decides whether the input may be formatted at all (a file that does not
//! parse is left alone), and the output is re-lexed to prove that it holds
//! the same tokens and comments in the same order.
//!
//! The style (docs/tooling.md): 4-space indentation, `{` on the line of its
//! construct, one statement a line, one space around binary operators, none
//! inside brackets, `a[i]`, `f(x, y)`, `a[0:n]`, `reduction(+: s)`; at most
//! one blank line between statements and none at the start or end of a
//! block; trailing `//` comments of consecutive lines aligned. Line breaks
//! the author put inside a statement are kept (as continuation lines);
//! long lines are not wrapped.

mod layout;
mod pieces;

use lang::{Diag, Span};

/// Format a whole source text. Fails with the parser's diagnostics when it
/// does not parse (nothing is formatted then).
pub fn format_source(src: &str) -> Result<String, Vec<Diag>> {
    let (_, diags) = lang::parse(src);
    if diags.iter().any(Diag::is_error) {
        return Err(diags);
    }
    // A `#!` first line is kept as written; the rest is formatted.
    let (shebang, body) = match src.strip_prefix("#!") {
        Some(rest) => {
            let end = rest.find('\n').map_or(src.len(), |i| i + 3);
            (Some(src[..end].trim_end()), &src[end.min(src.len())..])
        }
        None => (None, src),
    };
    let items = pieces::pieces(body).map_err(|at| vec![internal(shebang_len(shebang) + at)])?;
    let mut out = layout::layout(&items);
    if let Some(line) = shebang {
        out = if out.is_empty() {
            format!("{line}\n")
        } else {
            format!("{line}\n{out}")
        };
    }
    // The layout only ever changes whitespace: prove it.
    let again = match out.strip_prefix(shebang.unwrap_or("")) {
        Some(rest) if shebang.is_some() => rest.strip_prefix('\n').unwrap_or(rest),
        _ => &out,
    };
    match pieces::pieces(again) {
        Ok(after) if pieces::same_text(&items, &after) => Ok(out),
        _ => Err(vec![internal(0)]),
    }
}

fn shebang_len(shebang: Option<&str>) -> usize {
    shebang.map_or(0, |s| s.len() + 1)
}

fn internal(at: usize) -> Diag {
    Diag::error(
        "accl::fmt::internal",
        "the formatter could not lay out this file",
        Span::new(at, at),
        "formatting stopped here",
    )
    .with_help("the file is left unchanged; please report this input")
}

/// Whether formatting would change `src` (`Err` when it does not parse).
pub fn needs_formatting(src: &str) -> Result<bool, Vec<Diag>> {
    format_source(src).map(|f| f != src)
}

/// The first line where `before` and `after` differ (1-based), with both
/// versions of it: the hint `accl fmt --check` prints.
pub fn first_difference(before: &str, after: &str) -> Option<(usize, String, String)> {
    let mut a = before.lines();
    let mut b = after.lines();
    let mut n = 0;
    loop {
        n += 1;
        match (a.next(), b.next()) {
            (None, None) => {
                return (before != after).then(|| (n, String::new(), String::new()));
            }
            (x, y) if x != y => {
                return Some((n, x.unwrap_or("").to_string(), y.unwrap_or("").to_string()))
            }
            _ => {}
        }
    }
}
