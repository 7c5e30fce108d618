//! Tokens, produced by a logos lexer.
//!
//! Numeric literals keep their raw text here: their value, range and suffix are
//! checked by [`crate::lexer`], which can report a precise diagnostic, rather
//! than inside a logos callback that can only fail.

use logos::Logos;
use std::fmt;

/// Why a logos rule failed; turned into a diagnostic by the lexer adapter.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexFail {
    #[default]
    BadChar,
    UnterminatedBlockComment,
}

fn block_comment<'s>(lex: &mut logos::Lexer<'s, Tok<'s>>) -> Result<logos::Skip, LexFail> {
    let rest = lex.remainder().as_bytes();
    match block_comment_rest(rest) {
        Some(n) => {
            lex.bump(n);
            Ok(logos::Skip)
        }
        None => {
            lex.bump(rest.len());
            Err(LexFail::UnterminatedBlockComment)
        }
    }
}

/// The length of the rest of a block comment, `rest` following its opening
/// `/*`, up to and with the `*/` that closes it; `None` when none does.
/// Block comments nest, which no regular expression can match.
pub fn block_comment_rest(rest: &[u8]) -> Option<usize> {
    let mut depth = 1usize;
    let mut i = 0;
    while i < rest.len() {
        if rest[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if rest[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// A token. Keywords are reserved; clause names (`copyin`, `gang`, ...) are
/// plain identifiers so that they stay usable as variable names.
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(error = LexFail)]
pub enum Tok<'s> {
    #[token("/*", block_comment)]
    BlockComment,

    // keywords
    #[token("let")]
    Let,
    #[token("const")]
    Const,
    #[token("fn")]
    Fn,
    #[token("import")]
    Import,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("return")]
    Return,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("as")]
    As,
    #[token("parallel")]
    Parallel,
    #[token("loop")]
    Loop,
    #[token("data")]
    Data,
    #[token("enter")]
    Enter,
    #[token("exit")]
    Exit,
    #[token("update")]
    Update,
    #[token("wait")]
    Wait,
    #[token("atomic")]
    Atomic,
    /// `read` right after `atomic`, before a name (`atomic read v = a[i];`):
    /// a keyword only there, made by the parser from an identifier.
    AtomicRead,
    /// `write` right after `atomic`, before a name (`atomic write a[i] = e;`).
    AtomicWrite,
    /// `capture` right after `atomic`, before a name or `{`.
    AtomicCapture,
    /// `kernels` starting a statement, before `{`, `loop` or a clause: a
    /// keyword only there, made by the parser from an identifier.
    Kernels,
    /// `rev` in `for i in rev(..)`, made by the parser from an identifier.
    Rev,
    /// `serial` starting a statement, before `{` or a clause.
    Serial,
    /// `host_data` where it starts a construct.
    HostData,
    /// `cache` starting a statement, before `(`.
    Cache,
    /// `init` / `shutdown` starting a statement, before `;`, `if` or a
    /// clause.
    Init,
    Shutdown,
    /// `declare` starting a statement, before a clause.
    Declare,
    #[token("set")]
    Set,
    // scalar type names
    #[token("bool")]
    Bool,
    #[token("i32")]
    I32,
    #[token("i64")]
    I64,
    #[token("u32")]
    U32,
    #[token("u8")]
    U8,
    #[token("f32")]
    F32,
    #[token("f64")]
    F64,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'s str),
    /// Decimal, hex or binary integer, with an optional suffix (`10i64`).
    #[regex(r"[0-9][0-9_]*([iuf][0-9]+)?")]
    #[regex(r"0x[0-9a-fA-F_]+([iu][0-9]+)?")]
    #[regex(r"0b[01_]+([iu][0-9]+)?")]
    Int(&'s str),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?([fi][0-9]+)?")]
    #[regex(r"\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?([fi][0-9]+)?")]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9_]+([fi][0-9]+)?")]
    /// C's `2.e4`: a point with no digits after it, then an exponent (a
    /// bare `2.` would swallow the first dot of `2..n`).
    #[regex(r"[0-9][0-9_]*\.[eE][+-]?[0-9_]+([fi][0-9]+)?")]
    Float(&'s str),
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str(&'s str),
    #[regex(r#""([^"\\\n]|\\.)*"#)]
    UnterminatedStr(&'s str),

    // punctuation
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token("->")]
    Arrow,
    #[token("..")]
    DotDot,
    #[token("..=")]
    DotDotEq,

    // operators
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("%=")]
    PercentEq,
    #[token("&=")]
    AmpEq,
    #[token("|=")]
    PipeEq,
    #[token("^=")]
    CaretEq,
    #[token("<<=")]
    ShlEq,
    #[token(">>=")]
    ShrEq,
    #[token("||")]
    OrOr,
    #[token("&&")]
    AndAnd,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("&")]
    Amp,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("!")]
    Bang,
    /// Never produced by logos: the lexer adapter substitutes it for a bad
    /// character (after reporting it) so that the parser can recover.
    Error,
}

impl Tok<'_> {
    /// Every reserved word, for the REPL's completion and for diagnostics.
    pub const KEYWORDS: &'static [&'static str] = &[
        "let", "const", "fn", "import", "if", "else", "while", "for", "in", "break", "continue",
        "return", "true", "false", "as", "parallel", "loop", "data", "enter", "exit", "update",
        "wait", "atomic", "set", "bool", "i32", "i64", "u32", "u8", "f32", "f64",
    ];
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Tok::*;
        let s = match self {
            BlockComment => "comment",
            Let => "`let`",
            Const => "`const`",
            Import => "`import`",
            Fn => "`fn`",
            If => "`if`",
            Else => "`else`",
            While => "`while`",
            For => "`for`",
            In => "`in`",
            Break => "`break`",
            Continue => "`continue`",
            Return => "`return`",
            True => "`true`",
            False => "`false`",
            As => "`as`",
            Parallel => "`parallel`",
            Loop => "`loop`",
            Data => "`data`",
            Enter => "`enter`",
            Exit => "`exit`",
            Update => "`update`",
            Wait => "`wait`",
            Atomic => "`atomic`",
            AtomicRead => "`read`",
            AtomicWrite => "`write`",
            AtomicCapture => "`capture`",
            Kernels => "`kernels`",
            Rev => "`rev`",
            Serial => "`serial`",
            HostData => "`host_data`",
            Cache => "`cache`",
            Init => "`init`",
            Shutdown => "`shutdown`",
            Declare => "`declare`",
            Set => "`set`",
            Bool => "`bool`",
            I32 => "`i32`",
            I64 => "`i64`",
            U32 => "`u32`",
            U8 => "`u8`",
            F32 => "`f32`",
            F64 => "`f64`",
            Ident(s) => return write!(f, "identifier `{s}`"),
            Int(s) | Float(s) => return write!(f, "number `{s}`"),
            Str(_) | UnterminatedStr(_) => "string literal",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Comma => "`,`",
            Semi => "`;`",
            Colon => "`:`",
            ColonColon => "`::`",
            Arrow => "`->`",
            DotDot => "`..`",
            DotDotEq => "`..=`",
            Assign => "`=`",
            PlusEq => "`+=`",
            MinusEq => "`-=`",
            StarEq => "`*=`",
            SlashEq => "`/=`",
            PercentEq => "`%=`",
            AmpEq => "`&=`",
            PipeEq => "`|=`",
            CaretEq => "`^=`",
            ShlEq => "`<<=`",
            ShrEq => "`>>=`",
            OrOr => "`||`",
            AndAnd => "`&&`",
            EqEq => "`==`",
            NotEq => "`!=`",
            Lt => "`<`",
            Le => "`<=`",
            Gt => "`>`",
            Ge => "`>=`",
            Pipe => "`|`",
            Caret => "`^`",
            Amp => "`&`",
            Shl => "`<<`",
            Shr => "`>>`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Percent => "`%`",
            Bang => "`!`",
            Error => "invalid token",
        };
        f.write_str(s)
    }
}
