//! The abstract syntax tree: what the parser builds, with a span on every node.
//!
//! The tree is owned (`Box`/`Vec`), which keeps the grammar actions simple. Its
//! depth is bounded by construction: the lexer adapter refuses bracket nesting
//! beyond [`crate::MAX_NESTING`], and an expression nested deeper than
//! [`crate::MAX_EXPR_NESTING`] (a chain of unary operators, or of operators
//! in right operands) or longer than [`crate::MAX_EXPR_DEPTH`] (a flat chain
//! of left-associative operators, `1 + 1 + ... + 1`, is long but not deep to
//! a user) is replaced by [`ExprKind::Error`] with a diagnostic. Every
//! recursive pass, and the recursive `Drop`, runs on a stack that grows on
//! demand (`stacker`): the engine's entry points, `lang::check` and
//! `lang::check_source` switch to a large stack segment first.

use crate::span::Span;
use crate::types::{Scalar, Tuple};

/// A name with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole program: statements (functions included), then an optional
/// trailing expression without `;` (the REPL prints its value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Let {
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    Const {
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    /// `import "file.accl";`: the file was read and checked in front of
    /// this one before parsing; `path` is the literal as written.
    Import {
        path: String,
        path_span: Span,
    },
    /// `let (a, _, c: f32) = init;`: destructure a tuple.
    LetTuple {
        pats: Vec<TuplePat>,
        init: Expr,
    },
    /// `target = value` or, with `op`, `target op= value`.
    Assign {
        target: Expr,
        op: Option<BinOp>,
        op_span: Span,
        value: Expr,
    },
    Expr(Expr),
    If {
        cond: Expr,
        then: Block,
        /// An `else` block, or an `else if` (a block holding one `If`).
        els: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    For(ForLoop),
    /// `for c in s { .. }` (the characters of a string) and `for p in
    /// split(s, sep) { .. }` (its parts): host code only.
    ForEach(ForEach),
    Break,
    Continue,
    Return(Option<Expr>),
    Block(Block),
    Fn(FnDecl),
    Directive(Directive),
    /// `cache(a[lo:n], ..);` at the top of a loop body in a compute construct.
    Cache(Vec<Expr>),
    /// `atomic [update] x = x op e;`, `x = e op x`, `x /= e` etc. (one
    /// assignment) and `atomic capture { .. }` / `atomic capture v = x op= e;`
    /// (two assignments): the checker finds the update in the assignments
    /// (lang/src/check/atomic_forms.rs).
    AtomicForm {
        capture: bool,
        stmts: Vec<Stmt>,
    },
    /// `atomic target op= value;` (`max=`/`min=` are written `max =`).
    Atomic {
        target: Expr,
        op: AtomicOp,
        op_span: Span,
        value: Expr,
    },
    /// A statement that failed to parse (already reported).
    Error,
}

/// One element of a destructuring `let`: a new variable, optionally
/// typed, or `_` (the element is dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct TuplePat {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

impl TuplePat {
    pub fn is_wildcard(&self) -> bool {
        self.name.name == "_"
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForLoop {
    pub var: Ident,
    pub lo: Expr,
    pub hi: Expr,
    /// `a..=b`
    pub inclusive: bool,
    /// `rev(a..b)`: counted down, from the top.
    pub rev: bool,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForEach {
    pub var: Ident,
    pub iter: Expr,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FnDecl {
    /// `routine <level> fn ..`: the level word as written (`None`: a plain
    /// `fn`, which is `routine seq`).
    pub routine: Option<Ident>,
    /// `nohost`, `bind(f)` between the level and `fn`.
    pub routine_clauses: Vec<Clause>,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

/// A written type: `f32`, `f32[]`, `f32[,]`, `f32[,,]`, `str`, or a tuple
/// of scalars `(f64, i32)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TypeExpr {
    pub elem: Scalar,
    /// 0 for a scalar.
    pub rank: u8,
    /// `str` (then `elem` and `rank` mean nothing).
    pub string: bool,
    /// A tuple type (then `elem`, `rank` and `string` mean nothing).
    pub tuple: Option<Tuple>,
    pub span: Span,
}

/// The device constructs (`docs/language.md`, "Device constructs").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectiveKind {
    /// `parallel loop [clauses] for ..`
    ParallelLoop,
    /// `parallel [clauses] { .. }`
    Parallel,
    /// `loop [clauses] for ..` inside a parallel construct.
    Loop,
    /// `data [clauses] { .. }`
    Data,
    /// `host_data use_device(a, ..) { .. }`: host code that hands the
    /// device copies of arrays to the embedder's functions.
    HostData,
    EnterData,
    ExitData,
    Update,
    /// `wait;`, `wait(1, 2);`, `wait(1) async(2);`
    Wait,
    /// `set device_num(d);`
    Set,
    /// `init [device_type(t)] [device_num(n)] [if(c)];`
    Init,
    /// `shutdown [device_type(t)] [device_num(n)] [if(c)];`
    Shutdown,
    /// `declare copyin(a) ..;`: data clauses for the rest of the
    /// enclosing block (the function's call, or the whole program).
    Declare,
}

impl DirectiveKind {
    pub fn name(self) -> &'static str {
        match self {
            DirectiveKind::ParallelLoop => "parallel loop",
            DirectiveKind::Parallel => "parallel",
            DirectiveKind::Loop => "loop",
            DirectiveKind::Data => "data",
            DirectiveKind::HostData => "host_data",
            DirectiveKind::EnterData => "enter data",
            DirectiveKind::ExitData => "exit data",
            DirectiveKind::Update => "update",
            DirectiveKind::Wait => "wait",
            DirectiveKind::Set => "set",
            DirectiveKind::Init => "init",
            DirectiveKind::Shutdown => "shutdown",
            DirectiveKind::Declare => "declare",
        }
    }

    /// The name with its article, for messages: "an `enter data`".
    pub fn described(self) -> String {
        let article = match self {
            DirectiveKind::EnterData | DirectiveKind::ExitData => "an",
            _ => "a",
        };
        format!("{article} `{}`", self.name())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub kind: DirectiveKind,
    /// The span of the directive's keywords (`parallel loop`).
    pub kind_span: Span,
    /// The queue list of a `wait(..)` statement.
    pub wait_args: Option<Vec<Expr>>,
    pub clauses: Vec<Clause>,
    pub body: DirectiveBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DirectiveBody {
    None,
    Block(Block),
    For(Box<ForLoop>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// `copyin`, `reduction`, `if`, `wait`, ... (validated by the checker).
    pub name: Ident,
    pub args: ClauseArgs,
    pub span: Span,
}

/// The clause names the parser gives `collapse(force: n)` and
/// `gang(dim: k)` (see parse.rs).
pub const COLLAPSE_FORCE: &str = "collapse(force:)";
pub const GANG_DIM: &str = "gang(dim:)";
/// `gang(static: n)` / `gang(static: *)`: the chunk size OpenACC lets a
/// program suggest for handing out gang iterations (accl chooses its own
/// schedule; the loop is a `gang` loop).
pub const GANG_STATIC: &str = "gang(static:)";
/// The clauses the private-array rewrite (check/private_arrays) puts on
/// the construct or loop whose iterations own the copies of a hidden
/// array: names no program can write.
pub const PRIVATE_COPIES: &str = "private(copies:)";
pub const FIRSTPRIVATE_COPIES: &str = "firstprivate(copies:)";
/// The argument `*` of `tile(*, ..)` (the compiler's choice of size), a
/// name no program can write.
pub const TILE_AUTO: &str = "*";

#[derive(Debug, Clone, PartialEq)]
pub enum ClauseArgs {
    /// `gang`, `async`, `finalize`
    None,
    /// `copyin(a, b[0:n])`, `async(q)`, `collapse(2)`
    List(Vec<Expr>),
    /// `reduction(+: s, t)`
    Reduction {
        op: ReductionOp,
        op_span: Span,
        vars: Vec<Ident>,
        /// Per variable: the subscript of `v[i]` / `v[lo:n]` (an element
        /// or section of an array), `None` for a whole variable.
        elements: Vec<Option<Vec<SectionAxis>>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReductionOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
}

impl ReductionOp {
    pub fn symbol(self) -> &'static str {
        match self {
            ReductionOp::Add => "+",
            ReductionOp::Mul => "*",
            ReductionOp::Max => "max",
            ReductionOp::Min => "min",
            ReductionOp::BitAnd => "&",
            ReductionOp::BitOr => "|",
            ReductionOp::BitXor => "^",
            ReductionOp::And => "&&",
            ReductionOp::Or => "||",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    Mul,
    Max,
    Min,
    And,
    Or,
    Xor,
    Div,
    Shl,
    Shr,
    /// `x = e - x`
    RevSub,
    /// `x = e / x`
    RevDiv,
    /// `x = e << x`
    RevShl,
    /// `x = e >> x`
    RevShr,
}

impl AtomicOp {
    /// Every operator, for the capture builtins' table.
    pub const ALL: [AtomicOp; 15] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Mul,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Div,
        AtomicOp::Shl,
        AtomicOp::Shr,
        AtomicOp::RevSub,
        AtomicOp::RevDiv,
        AtomicOp::RevShl,
        AtomicOp::RevShr,
    ];

    /// The capture builtin of the operator: `atomic_sub(a[i], v)` does
    /// `a[i] -= v` atomically and returns the old value.
    pub fn builtin(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Mul => "atomic_mul",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Div => "atomic_div",
            AtomicOp::Shl => "atomic_shl",
            AtomicOp::Shr => "atomic_shr",
            AtomicOp::RevSub => "atomic_rsub",
            AtomicOp::RevDiv => "atomic_rdiv",
            AtomicOp::RevShl => "atomic_rshl",
            AtomicOp::RevShr => "atomic_rshr",
        }
    }

    /// The operator of a capture builtin ([`AtomicOp::builtin`]).
    pub fn of_builtin(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|o| o.builtin() == name)
    }

    /// Integer elements only?
    pub fn int_only(self) -> bool {
        matches!(
            self,
            AtomicOp::And
                | AtomicOp::Or
                | AtomicOp::Xor
                | AtomicOp::Shl
                | AtomicOp::Shr
                | AtomicOp::RevShl
                | AtomicOp::RevShr
        )
    }

    pub fn symbol(self) -> &'static str {
        match self {
            AtomicOp::Div => "/=",
            AtomicOp::Shl => "<<=",
            AtomicOp::Shr => ">>=",
            AtomicOp::RevSub => "= e -",
            AtomicOp::RevDiv => "= e /",
            AtomicOp::RevShl => "= e <<",
            AtomicOp::RevShr => "= e >>",
            AtomicOp::Add => "+=",
            AtomicOp::Sub => "-=",
            AtomicOp::Mul => "*=",
            AtomicOp::Max => "max=",
            AtomicOp::Min => "min=",
            AtomicOp::And => "&=",
            AtomicOp::Or => "|=",
            AtomicOp::Xor => "^=",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Height of this expression tree (a leaf is 1); bounded, see module doc.
    pub depth: u32,
    /// Nesting as a user sees it: the height not counting the left operand
    /// of a binary operator (a left-associative chain is flat).
    pub nesting: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer literal; negative values come from constant folding.
    Int(u64, Option<Scalar>),
    Float(f64, Option<Scalar>),
    Bool(bool),
    Str(String),
    Var(String),
    /// `f32::MAX`: a type (or name) then a member.
    Path(String, Ident),
    /// A scalar type used as a value, as in `zeros(f32, n)`.
    Type(Scalar),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, TypeExpr),
    Index(Box<Expr>, Vec<Expr>),
    /// `a[lo:count, ..]` (one axis per entry, leading axis first; fewer
    /// axes than the rank leave the trailing ones whole), only valid in
    /// data clauses, `update` and `cache`.
    Section(Box<Expr>, Vec<SectionAxis>),
    Call(Ident, Vec<Expr>),
    /// `[e1, e2, ..]`: a new array of these elements (non-empty).
    Array(Vec<Expr>),
    /// `(e1, e2, ..)`: the value of a `return` from a function returning a
    /// tuple, or the right side of a destructuring (the parser makes one of
    /// any parenthesised list with a comma).
    Tuple(Vec<Expr>),
    /// An expression that failed to parse (already reported).
    Error,
}

/// Expression trees deeper than this are taken apart iteratively on drop.
const DROP_ITERATIVELY_ABOVE: u32 = 64;

impl Drop for Expr {
    /// A long chain of operators is a deep tree: the derived, recursive drop
    /// would need stack in proportion to it, so deep trees are taken apart
    /// with a stack on the heap.
    fn drop(&mut self) {
        if self.depth <= DROP_ITERATIVELY_ABOVE {
            return;
        }
        fn detach(e: &mut Expr) -> ExprKind {
            e.depth = 0;
            std::mem::replace(&mut e.kind, ExprKind::Error)
        }
        let mut todo = vec![detach(self)];
        while let Some(k) = todo.pop() {
            match k {
                ExprKind::Unary(_, mut e) | ExprKind::Cast(mut e, _) => todo.push(detach(&mut e)),
                ExprKind::Binary(_, mut a, mut b) => {
                    todo.push(detach(&mut a));
                    todo.push(detach(&mut b));
                }
                ExprKind::Index(mut a, mut ix) => {
                    todo.push(detach(&mut a));
                    todo.extend(ix.iter_mut().map(detach));
                }
                ExprKind::Section(mut a, mut axes) => {
                    todo.push(detach(&mut a));
                    for ax in &mut axes {
                        match ax {
                            SectionAxis::Range(lo, n) => {
                                todo.push(detach(lo));
                                todo.push(detach(n));
                            }
                            SectionAxis::Index(i) => todo.push(detach(i)),
                            SectionAxis::All(_) => {}
                        }
                    }
                }
                ExprKind::Call(_, mut args)
                | ExprKind::Array(mut args)
                | ExprKind::Tuple(mut args) => todo.extend(args.iter_mut().map(detach)),
                _ => {}
            }
        }
    }
}

/// One axis of an array section.
#[derive(Debug, Clone, PartialEq)]
pub enum SectionAxis {
    /// `lo:count`.
    Range(Expr, Expr),
    /// `:`, the whole axis.
    All(Span),
    /// A plain index among section axes (`a[i, 0:4]`): not an axis a
    /// section can have (the checker says so).
    Index(Expr),
}

impl SectionAxis {
    /// The expressions of this axis.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        let (a, b) = match self {
            SectionAxis::Range(lo, n) => (Some(lo), Some(n)),
            SectionAxis::Index(i) => (Some(i), None),
            SectionAxis::All(_) => (None, None),
        };
        a.into_iter().chain(b)
    }

    pub fn span(&self) -> Span {
        match self {
            SectionAxis::Range(lo, n) => lo.span.to(n.span),
            SectionAxis::Index(i) => i.span,
            SectionAxis::All(s) => *s,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Or => "||",
            And => "&&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Shl => "<<",
            Shr => ">>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
        }
    }
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_bitwise(self) -> bool {
        use BinOp::*;
        matches!(self, BitOr | BitXor | BitAnd)
    }
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
}

impl Expr {
    /// Build a node, computing its depth from its children.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let nest = |e: &Expr| e.nesting;
        let nesting = match &kind {
            ExprKind::Binary(_, a, b) => nest(a).max(1 + nest(b)),
            ExprKind::Unary(_, e) | ExprKind::Cast(e, _) => 1 + nest(e),
            ExprKind::Index(a, ix) => 1 + ix.iter().map(nest).fold(nest(a), u32::max),
            ExprKind::Section(a, axes) => {
                1 + axes
                    .iter()
                    .flat_map(SectionAxis::exprs)
                    .map(nest)
                    .fold(nest(a), u32::max)
            }
            ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
                1 + args.iter().map(nest).max().unwrap_or(0)
            }
            _ => 1,
        };
        let child = |e: &Expr| e.depth;
        let depth = 1 + match &kind {
            ExprKind::Unary(_, e) | ExprKind::Cast(e, _) => child(e),
            ExprKind::Binary(_, a, b) => child(a).max(child(b)),
            ExprKind::Index(a, ix) => ix.iter().map(child).fold(child(a), u32::max),
            ExprKind::Section(a, axes) => axes
                .iter()
                .flat_map(SectionAxis::exprs)
                .map(child)
                .fold(child(a), u32::max),
            ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
                args.iter().map(child).max().unwrap_or(0)
            }
            _ => 0,
        };
        Expr {
            kind,
            span,
            depth,
            nesting,
        }
    }
    pub fn error(span: Span) -> Expr {
        Expr {
            kind: ExprKind::Error,
            span,
            depth: 1,
            nesting: 1,
        }
    }
}
