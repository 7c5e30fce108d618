//! The typed, name-resolved program the checker produces (HIR).
//!
//! Shaped after naga: each function body owns arenas of expressions and local
//! variables, with spans and types in side tables; statements form a tree over
//! those handles and only statements have effects. Locals are slots in the
//! body's arena (not names), so the interpreter can keep a flat frame and the
//! compiler knows every variable's type without a scope walk. Every device
//! construct carries its typed clauses and what it captures.

use crate::arena::{Arena, Handle};
pub use crate::ast::{AtomicOp, BinOp, DirectiveKind, ReductionOp, UnOp};
use crate::builtins::BuiltinId;
use crate::span::Span;
use crate::types::{Scalar, Type};
use crate::value::Value;

pub type ExprH = Handle<Expr>;
pub type LocalH = Handle<Local>;
pub type FnH = Handle<Function>;

/// A checked program.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub functions: Arena<Function>,
    /// The top-level statements.
    pub main: Body,
    /// A trailing expression without `;` (the REPL prints it), in `main`.
    pub tail: Option<ExprH>,
    /// Locals of `main` that were given from outside (the REPL's and the
    /// embedder's existing variables), in the order given.
    pub globals: Vec<LocalH>,
    /// Number of device constructs (`parallel`, `parallel loop`) in the program;
    /// each has a unique [`Construct::id`] below this.
    pub num_kernels: u32,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub params: Vec<LocalH>,
    pub ret: Type,
    pub body: Body,
    pub span: Span,
    /// Can it be called from device code? If not, the offending span and why.
    pub device: Result<(), (Span, String)>,
    /// Part of a cycle of calls.
    pub recursive: bool,
    /// Its OpenACC `routine` level (`Seq` for a plain `fn`).
    pub level: Level,
    /// The top-level variables it uses, itself or through its calls (locals
    /// of the program's main body).
    pub globals: Vec<LocalH>,
}

/// The parallelism a `routine` function may hold (and so the contexts it
/// may be called from): ordered, `Seq` lowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Level {
    #[default]
    Seq,
    Vector,
    Worker,
    Gang,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Seq => "seq",
            Level::Vector => "vector",
            Level::Worker => "worker",
            Level::Gang => "gang",
        }
    }
    pub fn from_name(s: &str) -> Option<Level> {
        Some(match s {
            "seq" => Level::Seq,
            "vector" => Level::Vector,
            "worker" => Level::Worker,
            "gang" => Level::Gang,
            _ => return None,
        })
    }
}

/// Expressions, locals and statements of one function (or of the top level).
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub exprs: Arena<Expr>,
    /// The type of each expression, by handle index.
    pub types: Vec<Type>,
    pub locals: Arena<Local>,
    pub block: Block,
}

impl Body {
    pub fn ty(&self, e: ExprH) -> Type {
        self.types[e.index()]
    }
    pub fn span(&self, e: ExprH) -> Span {
        self.exprs.span(e)
    }
}

#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    /// An array constant (`const q = [..];`): nothing writes its elements.
    pub constant: bool,
    /// A scalar of the program that is OpenACC data: `ty` is an array of
    /// one element holding it (`check::data_scalars`), which the program's
    /// users (the embedding API, the REPL) see as the scalar.
    pub data_scalar: bool,
}

pub type Block = Vec<Stmt>;

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    /// Declare (and initialise) a local.
    Let {
        local: LocalH,
        init: ExprH,
    },
    /// Bind the elements of `init` to new locals (`None`: the element is
    /// dropped). `init` is a call of a function returning a tuple, or an
    /// [`Expr::Tuple`] (whose elements are all computed first).
    LetTuple {
        locals: Vec<Option<LocalH>>,
        init: ExprH,
    },
    Assign {
        place: Place,
        op: Option<BinOp>,
        value: ExprH,
    },
    Expr(ExprH),
    If {
        cond: ExprH,
        then: Block,
        els: Block,
    },
    While {
        cond: ExprH,
        body: Block,
    },
    For(ForLoop),
    Break,
    Continue,
    Return(Option<ExprH>),
    Block(Block),
    Construct(Box<Construct>),
    /// `cache(a[lo:count])`: a hint that the enclosing gang reads this
    /// section of a 1-D array often (`count` a constant).
    Cache {
        array: LocalH,
        lo: ExprH,
        count: u32,
    },
    /// `atomic a[i] op= v`
    Atomic {
        place: Place,
        op: AtomicOp,
        value: ExprH,
    },
}

/// Something that can be assigned to.
#[derive(Debug, Clone)]
pub enum Place {
    Local(LocalH),
    /// A top-level variable, from inside a function (a local of the
    /// program's main body).
    Global(LocalH),
    /// `array[indices]`; `array` is an expression of array type.
    Element {
        array: ExprH,
        indices: Vec<ExprH>,
    },
}

#[derive(Debug, Clone)]
pub struct LoopHeader {
    pub var: LocalH,
    pub lo: ExprH,
    pub hi: ExprH,
    pub inclusive: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct ForLoop {
    pub header: LoopHeader,
    pub body: Block,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Const(Value),
    Local(LocalH),
    /// A top-level variable read inside a function: a local of the
    /// program's main body (never in device code).
    Global(LocalH),
    Unary(UnOp, ExprH),
    /// Operands have one type (after literal coercion); `&&`/`||` short-circuit.
    Binary(BinOp, ExprH, ExprH),
    Cast(ExprH, Scalar),
    Index(ExprH, Vec<ExprH>),
    Call(FnH, Vec<ExprH>),
    Builtin(BuiltinId, Vec<ExprH>),
    Str(String),
    TypeArg(Scalar),
    /// `(a, b, ..)`: scalars, only as the operand of `return` (in a
    /// function returning a tuple) or the `init` of a `LetTuple`.
    Tuple(Vec<ExprH>),
    /// An array literal: its shape (leading axis first) and its elements in
    /// row-major order, each of the array's element type. Host code only.
    Array(Vec<usize>, Vec<ExprH>),
}

/// A device construct (`parallel loop`, `data`, `update`, `wait`, ...).
#[derive(Debug, Clone)]
pub struct Construct {
    pub kind: DirectiveKind,
    /// Kernel number for `parallel`/`parallel loop` (unique in the program).
    pub id: u32,
    pub span: Span,
    pub kind_span: Span,
    pub clauses: Clauses,
    pub body: ConstructBody,
    pub captures: Captures,
}

#[derive(Debug, Clone)]
pub enum ConstructBody {
    None,
    Block(Block),
    /// `loops` holds one header per collapsed level (outermost first); `body`
    /// is the innermost loop's body.
    Loops {
        loops: Vec<LoopHeader>,
        body: Block,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataKind {
    Copy,
    CopyIn,
    CopyOut,
    Create,
    Present,
    NoCreate,
    Delete,
    /// `update self(..)` / `update host(..)`: device to host.
    UpdateSelf,
    /// `update device(..)`: host to device.
    UpdateDevice,
}

impl DataKind {
    pub fn name(self) -> &'static str {
        match self {
            DataKind::Copy => "copy",
            DataKind::CopyIn => "copyin",
            DataKind::CopyOut => "copyout",
            DataKind::Create => "create",
            DataKind::Present => "present",
            DataKind::NoCreate => "no_create",
            DataKind::Delete => "delete",
            DataKind::UpdateSelf => "self",
            DataKind::UpdateDevice => "device",
        }
    }
}

/// An array, or a section of it, in a data clause.
#[derive(Debug, Clone)]
pub struct DataClause {
    pub kind: DataKind,
    pub var: LocalH,
    /// The section's axes, leading axis first: `Some((lo, count))` for
    /// `lo:count`, `None` for `:` (the whole axis). Axes past the list are
    /// whole; an empty list is the whole array.
    pub section: Vec<Option<(ExprH, ExprH)>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Reduction {
    pub op: ReductionOp,
    pub var: LocalH,
    pub span: Span,
}

/// Where an async operation goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AsyncQueue {
    /// `async` with no argument.
    Default,
    Queue(ExprH),
}

#[derive(Debug, Clone, Default)]
pub struct Clauses {
    pub gang: bool,
    pub worker: bool,
    pub vector: bool,
    pub seq: bool,
    pub independent: bool,
    /// `auto`: the compiler runs the loop in parallel only when it proves
    /// the iterations independent (else in order, on one lane).
    pub auto: bool,
    /// 1 when absent.
    pub collapse: u32,
    /// `tile(a, b)`: tile sizes, the first for the innermost loop.
    pub tile: Vec<u32>,
    /// Some size was `*`: the checker chose it (`tile` holds the choice).
    pub tile_auto: bool,
    /// `collapse(force: n)`: statements between the collapsed loops run
    /// in every collapsed iteration.
    pub collapse_force: bool,
    /// The `collapse(..)` or `tile(..)` clause that asks for the loop nest.
    pub nest_span: Option<Span>,
    pub reductions: Vec<Reduction>,
    /// `reduction(op: h)` with `h` an array: its element updates in the
    /// body were checked to be `h[i] op= v` and became atomic updates, so
    /// nothing downstream treats `h` specially.
    pub array_reductions: Vec<Reduction>,
    pub private: Vec<LocalH>,
    pub firstprivate: Vec<LocalH>,
    /// The hidden arrays of private-array copies (`check::private_arrays`)
    /// whose copies this construct's or loop's iterations own, with
    /// whether they are `firstprivate`: each element indexes a copy with
    /// its first index, the rest index the section from zero.
    pub private_copies: Vec<(LocalH, bool)>,
    /// A part of a `kernels` construct (the parser splits `kernels` into
    /// `parallel loop` and `serial` parts).
    pub kernels: bool,
    /// Scalars assigned with no clause in a `kernels` part (`copy` by
    /// default in OpenACC 3.3) or named in a `copy`/`copyout` clause here
    /// or on an enclosing `data`: their final value goes back to the
    /// host. Only one-lane parts (or `seq` loops) assign them.
    pub copy_scalars: Vec<LocalH>,
    /// Scalars named in `copy`/`copyout` clauses of this construct: what
    /// the kernels inside assign with no other clause comes back.
    pub scalar_copies: Vec<LocalH>,
    /// Some data clause named a scalar.
    pub scalar_data: bool,
    /// The data clauses that name scalars, as the checker read them: the
    /// data-scalar pass (`check::data_scalars`) gives each such scalar a
    /// device copy of its own and moves them to `data`, or drops them
    /// where the scalar stays a plain value.
    pub scalar_clauses: Vec<DataClause>,
    pub num_gangs: Option<ExprH>,
    pub num_workers: Option<ExprH>,
    pub vector_length: Option<ExprH>,
    pub async_: Option<AsyncQueue>,
    /// `wait` (empty list: every queue) or `wait(q..)`; also the `wait` statement's queues.
    pub wait: Option<Vec<ExprH>>,
    pub if_: Option<ExprH>,
    pub default_present: bool,
    /// `default(none)`: every array the construct uses has a data clause
    /// on it or on an enclosing `data` construct (checked).
    pub default_none: bool,
    pub data: Vec<DataClause>,
    /// `use_device(a, ..)` of `host_data`: array locals.
    pub use_device: Vec<LocalH>,
    pub finalize: bool,
    pub if_present: bool,
    pub device_num: Option<ExprH>,
    /// `set default_async(q)`: the queue of `async` alone from then on.
    pub default_async: Option<ExprH>,
    /// `set device_type(t)`: `"gpu"`, `"cpu"`, `"host"` or `"any"`.
    pub device_type: Option<&'static str>,
}

/// What a kernel construct uses from outside itself.
#[derive(Debug, Clone, Default)]
pub struct Captures {
    /// Scalars declared outside and read inside: passed by value (firstprivate).
    pub scalars: Vec<LocalH>,
    /// Arrays used inside, with how they are used.
    pub arrays: Vec<ArrayUse>,
    /// User functions called inside (directly or not), compiled for the device.
    pub functions: Vec<FnH>,
}

#[derive(Debug, Clone)]
pub struct ArrayUse {
    pub var: LocalH,
    pub read: bool,
    pub written: bool,
    /// First use, for diagnostics.
    pub span: Span,
}

/// Every local that `b` assigns (or updates atomically, or that a
/// construct in it reduces into or makes private), at any depth.
pub fn assigned_in(b: &Block, out: &mut Vec<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Assign {
                place: Place::Local(l),
                ..
            }
            | StmtKind::Atomic {
                place: Place::Local(l),
                ..
            } => out.push(*l),
            StmtKind::If { then, els, .. } => {
                assigned_in(then, out);
                assigned_in(els, out);
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => assigned_in(body, out),
            StmtKind::For(f) => assigned_in(&f.body, out),
            StmtKind::Construct(c) => {
                out.extend(c.clauses.reductions.iter().map(|r| r.var));
                out.extend(c.clauses.private.iter().copied());
                match &c.body {
                    ConstructBody::Loops { body, .. } | ConstructBody::Block(body) => {
                        assigned_in(body, out)
                    }
                    ConstructBody::None => {}
                }
            }
            _ => {}
        }
    }
}
