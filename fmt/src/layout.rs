//! Laying out tokens and comments: where lines break, how deep they are
//! indented and where a space goes between two tokens.

use crate::pieces::{Item, Piece};
use lang::token::Tok;

const INDENT: usize = 4;
/// Spaces at least between code and a trailing `//` comment.
const COMMENT_GAP: usize = 2;

struct Line {
    code: String,
    /// A trailing `//` comment, aligned with its neighbours at the end.
    comment: Option<String>,
}

enum Sep {
    None,
    Space,
    Break { indent: usize, blank: bool },
}

#[derive(Default)]
struct State<'s> {
    /// Open `{` blocks.
    depth: usize,
    /// Inside a statement (its first token is out, its `;` or block not).
    in_stmt: bool,
    /// The first token of the current statement.
    first: Option<Tok<'s>>,
    /// The last token laid out, and the piece before the current one.
    last_tok: Option<Tok<'s>>,
    last: Option<Piece<'s>>,
    /// Open `(` and `[`, innermost last.
    brackets: Vec<Tok<'s>>,
    /// The last token was a prefix `-` or `!`.
    unary: bool,
    /// The last token was the `if` of a clause (`if(cond)`), not a statement.
    clause_if: bool,
}

pub fn layout(items: &[Item<'_>]) -> String {
    let mut lines: Vec<Line> = Vec::new();
    let mut st = State::default();
    for item in items {
        let sep = match item.piece {
            Piece::Tok(t, _) => st.before_token(t, item.breaks),
            Piece::Line(_) | Piece::Block(_) => st.before_comment(item.breaks),
        };
        if lines.is_empty() {
            lines.push(Line {
                code: " ".repeat(match sep {
                    Sep::Break { indent, .. } => indent,
                    _ => st.depth * INDENT,
                }),
                comment: None,
            });
        } else {
            match sep {
                Sep::None => {}
                Sep::Space => lines.last_mut().expect("not empty").code.push(' '),
                Sep::Break { indent, blank } => {
                    if blank {
                        lines.push(Line {
                            code: String::new(),
                            comment: None,
                        });
                    }
                    lines.push(Line {
                        code: " ".repeat(indent),
                        comment: None,
                    });
                }
            }
        }
        let line = lines.last_mut().expect("not empty");
        match item.piece {
            Piece::Tok(t, text) => {
                line.code.push_str(text);
                st.after_token(t);
            }
            Piece::Line(text) if !line.code.trim().is_empty() => {
                let code = line.code.trim_end().len();
                line.code.truncate(code);
                line.comment = Some(text.to_string());
            }
            Piece::Line(text) => line.code.push_str(text),
            Piece::Block(text) => {
                // Lines after the first stay as written: their indentation
                // is part of the comment.
                let mut parts = text.split('\n');
                line.code.push_str(parts.next().unwrap_or("").trim_end());
                for part in parts {
                    lines.push(Line {
                        code: part.trim_end().to_string(),
                        comment: None,
                    });
                }
            }
        }
        st.last = Some(item.piece);
    }
    render(lines)
}

fn render(mut lines: Vec<Line>) -> String {
    // Trailing comments of consecutive lines start in one column.
    let mut i = 0;
    while i < lines.len() {
        if lines[i].comment.is_none() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len() && lines[j].comment.is_some() {
            j += 1;
        }
        let col = lines[i..j]
            .iter()
            .map(|l| l.code.chars().count())
            .max()
            .unwrap_or(0)
            + COMMENT_GAP;
        for l in &mut lines[i..j] {
            let pad = col - l.code.chars().count();
            let comment = l.comment.take().unwrap_or_default();
            l.code.push_str(&" ".repeat(pad));
            l.code.push_str(&comment);
        }
        i = j;
    }
    let mut out = String::new();
    for l in &lines {
        out.push_str(l.code.trim_end());
        out.push('\n');
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

impl<'s> State<'s> {
    fn base(&self) -> usize {
        self.depth * INDENT
    }

    fn before_comment(&self, breaks: usize) -> Sep {
        let Some(last) = self.last else {
            return Sep::None;
        };
        if breaks == 0 && !matches!(last, Piece::Line(_)) {
            // On the line of the code before it.
            return match last {
                Piece::Tok(Tok::LParen | Tok::LBracket, _) => Sep::None,
                _ => Sep::Space,
            };
        }
        let indent = if self.in_stmt {
            self.base() + INDENT
        } else {
            self.base()
        };
        Sep::Break {
            indent,
            blank: breaks >= 2 && !self.in_stmt && !is_tok(last, Tok::LBrace),
        }
    }

    fn before_token(&self, t: Tok<'s>, breaks: usize) -> Sep {
        let Some(last) = self.last else {
            return Sep::None;
        };
        if t == Tok::RBrace {
            if is_tok(last, Tok::LBrace) {
                return Sep::None;
            }
            return Sep::Break {
                indent: self.base().saturating_sub(INDENT),
                blank: false,
            };
        }
        if !self.in_stmt {
            if is_tok(last, Tok::RBrace) && t == Tok::Else {
                return Sep::Space;
            }
            return Sep::Break {
                indent: self.base(),
                blank: breaks >= 2 && !is_tok(last, Tok::LBrace),
            };
        }
        let joins = matches!(
            t,
            Tok::Semi
                | Tok::Comma
                | Tok::LBrace
                | Tok::RParen
                | Tok::RBracket
                | Tok::Colon
                | Tok::DotDot
                | Tok::DotDotEq
                | Tok::ColonColon
        );
        if matches!(last, Piece::Line(_)) || (breaks > 0 && !joins) {
            // The loop of a `parallel loop`/`loop`/.. construct written on
            // the next line starts there, at the construct's depth.
            let indent = if t == Tok::For {
                self.base()
            } else {
                self.base() + INDENT
            };
            return Sep::Break {
                indent,
                blank: false,
            };
        }
        if let Piece::Block(_) = last {
            return if matches!(
                t,
                Tok::Semi | Tok::Comma | Tok::RParen | Tok::RBracket | Tok::Colon
            ) {
                Sep::None
            } else {
                Sep::Space
            };
        }
        match self.last_tok {
            Some(p) if self.spaced(p, t) => Sep::Space,
            Some(_) => Sep::None,
            None => Sep::Space,
        }
    }

    /// Whether a space separates two tokens on one line.
    fn spaced(&self, p: Tok<'s>, t: Tok<'s>) -> bool {
        use Tok::*;
        if matches!(t, Comma | Semi | RParen | RBracket | Colon) || matches!(p, LParen | LBracket) {
            return false;
        }
        if t == LBracket {
            // `a[i]` and `f64[]`, but `= [1, 2]` and `, [3, 4]` (a literal).
            return !ends_operand(p) && !self.unary;
        }
        if matches!(t, DotDot | DotDotEq | ColonColon)
            || matches!(p, DotDot | DotDotEq | ColonColon)
        {
            return false;
        }
        if self.unary {
            return false;
        }
        if t == LParen {
            // A call, a clause's arguments, `wait(..)`, `exit(code)`; but
            // `if (a) {..}` and `return (a);` keep their space.
            return !(matches!(p, Ident(_) | Wait | Exit) || (p == If && self.clause_if));
        }
        if p == Colon {
            // `a[0:n]`, but `x: f32` and `reduction(+: s)`.
            return self.brackets.last() != Some(&LBracket);
        }
        // `atomic x max= e;`
        if t == Assign && matches!(p, Ident("max" | "min")) && self.first == Some(Atomic) {
            return false;
        }
        true
    }

    fn after_token(&mut self, t: Tok<'s>) {
        use Tok::*;
        if !self.in_stmt {
            self.first = Some(t);
        }
        self.unary = matches!(t, Minus | Bang) && !self.last_tok.is_some_and(ends_operand);
        self.clause_if = t == If && self.in_stmt && self.last_tok != Some(Else);
        match t {
            LParen | LBracket => self.brackets.push(t),
            RParen | RBracket => {
                self.brackets.pop();
            }
            LBrace => self.depth += 1,
            RBrace => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        self.in_stmt = !matches!(t, Semi | LBrace | RBrace);
        self.last_tok = Some(t);
    }
}

fn is_tok(p: Piece<'_>, t: Tok<'_>) -> bool {
    matches!(p, Piece::Tok(x, _) if x == t)
}

/// Whether a token can end an operand, so that a `-` after it subtracts.
fn ends_operand(t: Tok<'_>) -> bool {
    use Tok::*;
    matches!(
        t,
        Ident(_)
            | Int(_)
            | Float(_)
            | Str(_)
            | True
            | False
            | RParen
            | RBracket
            | Bool
            | I32
            | I64
            | U32
            | U8
            | F32
            | F64
    )
}
