//! The source as a sequence of tokens and comments, each with the number of
//! line breaks before it: everything the layout needs to know about the input.

use lang::token::Tok;

/// A token (with its text) or a comment.
#[derive(Debug, Clone, Copy)]
pub enum Piece<'s> {
    Tok(Tok<'s>, &'s str),
    /// `// ...`, without the line break that ends it.
    Line(&'s str),
    /// `/* ... */` (nested ones included), possibly over several lines.
    Block(&'s str),
}

impl Piece<'_> {
    fn text(&self) -> &str {
        match self {
            Piece::Tok(_, s) | Piece::Line(s) | Piece::Block(s) => s,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Item<'s> {
    pub piece: Piece<'s>,
    /// Line breaks in the source between the previous item and this one.
    pub breaks: usize,
}

/// Split `src` into items. `Err(offset)` where a gap between tokens holds
/// something that is neither white space nor a comment (the parser accepted
/// the file, so this does not happen on input that parses).
pub fn pieces(src: &str) -> Result<Vec<Item<'_>>, usize> {
    let lexed = lang::lexer::lex(src);
    if lexed.fatal || !lexed.diags.is_empty() {
        return Err(lexed.diags.first().map_or(0, |d| d.span().start as usize));
    }
    let mut items = Vec::new();
    let mut at = 0;
    let mut breaks = 0;
    for &(start, tok, end) in &lexed.tokens {
        gap(src, at, start, &mut items, &mut breaks)?;
        items.push(Item {
            piece: Piece::Tok(tok, &src[start..end]),
            breaks,
        });
        breaks = 0;
        at = end;
    }
    gap(src, at, src.len(), &mut items, &mut breaks)?;
    Ok(items)
}

fn gap<'s>(
    src: &'s str,
    from: usize,
    to: usize,
    items: &mut Vec<Item<'s>>,
    breaks: &mut usize,
) -> Result<(), usize> {
    let bytes = src.as_bytes();
    let mut i = from;
    while i < to {
        let rest = &bytes[i..to];
        if rest.starts_with(b"//") {
            let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            items.push(Item {
                piece: Piece::Line(src[i..i + len].trim_end()),
                breaks: *breaks,
            });
            *breaks = 0;
            i += len;
        } else if rest.starts_with(b"/*") {
            let len = block_len(rest).ok_or(i)?;
            items.push(Item {
                piece: Piece::Block(&src[i..i + len]),
                breaks: *breaks,
            });
            *breaks = 0;
            i += len;
        } else if rest[0].is_ascii_whitespace() {
            *breaks += usize::from(rest[0] == b'\n');
            i += 1;
        } else {
            return Err(i);
        }
    }
    Ok(())
}

/// Length of the (nested) block comment that `rest` starts with (`/*`).
fn block_len(rest: &[u8]) -> Option<usize> {
    Some(2 + lang::token::block_comment_rest(rest.get(2..)?)?)
}

/// Whether two item lists hold the same tokens and comments in the same
/// order (white space aside; a comment's lines compared without their
/// trailing blanks or indentation, which the layout may change).
pub fn same_text(a: &[Item<'_>], b: &[Item<'_>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let same_kind = matches!(
                (x.piece, y.piece),
                (Piece::Tok(..), Piece::Tok(..))
                    | (Piece::Line(_), Piece::Line(_))
                    | (Piece::Block(_), Piece::Block(_))
            );
            same_kind
                && x.piece.text().lines().map(str::trim_end).eq(y
                    .piece
                    .text()
                    .lines()
                    .map(str::trim_end))
        })
}
