//! The kernel IR (KIR): one `parallel loop` construct, ready for a back end.
//!
//! Shaped after naga: every function owns arenas of expressions
//! and locals addressed by typed [`Handle`]s, with spans in the arenas' side
//! tables and the scalar type of every expression in a side vector;
//! statements form a tree over those handles and only statements have
//! effects (stores, calls through `Eval`). Unlike the HIR, everything here is
//! device-shaped already:
//!
//! * no untyped literals, no arrays as values: an array is a [`ArrayH`]
//!   naming one storage-buffer binding of the kernel, and device functions
//!   that take arrays are specialised per binding tuple at lowering time, so
//!   each SPIR-V function is plain scalars in, scalar out;
//! * captured scalars are [`Expr::Param`] (firstprivate, from the argument
//!   block); loop variables of the collapsed nest are ordinary locals that the
//!   back end assigns at the start of every iteration;
//! * loops are one shape, `Loop { body, continuing }` (naga's): `while` and
//!   `for` are lowered to it with an explicit `if !cond { break }`, so the
//!   back end has a single structured-loop emitter.
//!
//! Reductions, atomics and gang/vector regions (`docs/language.md`, "How
//! compute constructs map onto the device", is the user-facing description):
//!
//! * a kernel has a [`Shape`]: `Flat` (every invocation runs iterations of the
//!   collapsed nest), `Seq` (`parallel loop seq`: one invocation runs them
//!   all), `Gang` (one workgroup per iteration of the collapsed nest, the body
//!   gang-redundant with [`StmtKind::VectorLoop`]s inside) and `Region`
//!   (`parallel { .. }`: `num_gangs` gang iterations of the block);
//! * construct-level reductions are [`Kernel::reductions`]: the body reduces
//!   into an entry local ([`Kernel::reduction_locals`]), the back end folds
//!   the workgroup's copies and writes one partial per workgroup;
//! * `loop vector` inside a gang is a [`VectorLoop`] statement whose
//!   reductions fold across the workgroup in a fixed tree order;
//! * atomics are [`Expr::Atomic`] (the old value; an update statement is an
//!   `Eval` of one), the only expressions besides calls with an effect.

use lang::arena::{Arena, Handle};
use lang::hir;
use lang::{Scalar, Span, Value};
use std::fmt;

pub use lang::hir::{BinOp, ReductionOp, UnOp};

pub type ExprH = Handle<Expr>;
pub type LocalH = Handle<Local>;
pub type FuncH = Handle<Function>;
pub type ArrayH = Handle<ArrayParam>;

/// One compiled `parallel loop`.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// `kernel_<id>` (the construct's number in the program).
    pub name: String,
    pub id: u32,
    pub span: Span,
    /// Captured scalars (firstprivate), in argument-block order.
    pub params: Vec<ScalarParam>,
    /// Captured arrays, in binding order (binding i = `arrays[i]`).
    pub arrays: Arena<ArrayParam>,
    /// The collapsed loop levels, outermost first.
    pub levels: Vec<LoopLevel>,
    /// Device functions called from the kernel (each a SPIR-V function).
    pub functions: Arena<Function>,
    /// The body of one iteration; `levels[k].var` are locals of it.
    pub entry: Function,
    /// `vector_length(n)` when `n` is a constant (the default work-group size).
    pub vector_length: Option<u32>,
    /// `num_workers(n)` when `n` is a constant: a gang's workers, each a
    /// team of `vector_length` lanes taking gang iterations of its own
    /// ([`crate::plan::teams`]).
    pub num_workers: Option<u32>,
    /// `tile(a, b)` on a flat two-level nest: `(a, b)`, `a` lanes along the
    /// inner loop and `b` along the outer one make a workgroup, which takes
    /// one tile of the iteration space at a time.
    pub tile: Option<(u32, u32)>,
    /// `vector_length(e)` with a run-time `e` (a host expression of the
    /// construct's body; the runtime evaluates it and specialises).
    pub vector_length_expr: Option<hir::ExprH>,
    /// What the device must support.
    pub features: Features,
    /// How iterations map onto workgroups and invocations.
    pub shape: Shape,
    /// Construct-level reductions (one partials buffer each, see [`crate::abi`]).
    pub reductions: Vec<ReductionParam>,
    /// Per `reductions[r]`: the entry local that holds this invocation's (or
    /// gang's) private copy; the back end initialises it to the identity.
    pub reduction_locals: Vec<LocalH>,
    /// `num_gangs(e)` (a host expression of the construct's body).
    pub num_gangs_expr: Option<hir::ExprH>,
    /// Some array gets a workgroup copy for its atomics (outside check
    /// mode; `crate::plan::privatises_atomics`), decided once when lowered.
    pub private_atomics: bool,
    /// What the back end asks about the body at every launch, found once
    /// when lowered ([`crate::facts::body_facts`]).
    pub facts: BodyFacts,
    /// What the compiler decided about the body's inner loops (vector or
    /// sequential, and why), for `--explain`.
    pub notes: Vec<LoopNote>,
    /// The private arrays' copies (hidden arrays of the checker's rewrite),
    /// and where they may live ([`crate::private_copies`]).
    pub private_copies: Vec<PrivateCopies>,
    /// Levels the compiler chose where OpenACC leaves the choice to it (a
    /// region run as a gang loop, a `loop` with no level, a `loop worker`
    /// run by one worker), with the loop they are about, for `--explain`.
    pub choices: Vec<(Span, String)>,
}

impl Kernel {
    /// A hash of everything the kernel's module depends on: its whole
    /// structure and every span baked into it (check mode and the watchdog
    /// report source positions). Equal for the same construct compiled
    /// again from the same text, so modules and pipelines can be reused
    /// across inputs (a REPL line run twice, an embedder's repeated
    /// `eval`), where the construct number is new each time.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Debug prints every field, arena items included (not their spans).
        format!("{self:?}").hash(&mut h);
        for (a, _) in self.arrays.iter() {
            self.arrays.span(a).hash(&mut h);
        }
        for (f, _) in self.functions.iter() {
            self.functions.span(f).hash(&mut h);
        }
        for f in std::iter::once(&self.entry).chain(self.functions.iter().map(|(_, f)| f)) {
            for (e, _) in f.exprs.iter() {
                f.exprs.span(e).hash(&mut h);
            }
            for (l, _) in f.locals.iter() {
                f.locals.span(l).hash(&mut h);
            }
        }
        h.finish()
    }
}

/// The copies of one private array: a hidden array whose first index
/// picks the copy (the rest index the section from zero), and the
/// construct or loop whose iterations own them, which starts each
/// iteration with [`StmtKind::PrivateInit`].
#[derive(Debug, Clone, PartialEq)]
pub struct PrivateCopies {
    pub array: ArrayH,
    /// The user's array.
    pub name: String,
    /// `firstprivate`: every copy starts at the hidden array's copy 0
    /// (each holds the section's values); else at zero.
    pub first: bool,
    /// Copies in workgroup memory when they fit at launch, one per lane or
    /// one per gang; `Err`: always the hidden array (why, for `--explain`).
    pub place: Result<CopySlots, String>,
    pub span: Span,
}

/// Who uses one workgroup-memory copy of a private array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopySlots {
    /// Each lane its own (the owner's iteration runs on one lane).
    Lane,
    /// The gang's lanes share one (the owner's iteration is a gang's).
    Gang,
}

/// Facts about a kernel's body that decide its layout on a device (teams,
/// unroll and jam, coarsening), walked once when it is lowered: the
/// launch path asks for them at every launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BodyFacts {
    /// Some array is both read and written (lanes of a gang may pass
    /// values through memory: barriers are needed).
    pub shares_memory: bool,
    /// The entry body is straight-line with no load of an array after a
    /// store to it (a flat loop may run several iterations per trip).
    pub straight_line: bool,
    /// No `break`/`continue`/`return` leaves a gang iteration or a `loop
    /// vector` (gang iterations may run side by side).
    pub no_early_exit: bool,
    /// A `cache` statement at the top of the entry body.
    pub caches: bool,
}

/// What the mapper (`crate::autovec`) decided about one inner loop.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopNote {
    /// The `for` statement.
    pub span: Span,
    /// `Some(reductions)`: made a vector loop; `None`: stays sequential.
    pub vector: Option<Vec<(ReductionOp, String)>>,
    /// Why it stays sequential (empty when vectorised).
    pub reason: String,
}

/// The operator/type pairs the checker accepts (`lang::check::clauses`).
pub fn reduction_legal(op: ReductionOp, t: Scalar) -> bool {
    use ReductionOp as O;
    match op {
        O::Add | O::Mul | O::Max | O::Min => t.is_numeric(),
        O::BitAnd | O::BitOr | O::BitXor => t.is_int(),
        O::And | O::Or => t == Scalar::Bool,
    }
}

/// How a kernel's work maps onto the dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Iterations of the collapsed nest spread over every invocation
    /// (grid-stride); the body runs per iteration.
    Flat,
    /// `parallel loop seq`: one invocation runs every iteration in order.
    Seq,
    /// One workgroup per iteration of the collapsed nest (grid-stride over
    /// workgroups); the body is gang-redundant, with `VectorLoop`s.
    Gang,
    /// `parallel { .. }`: `num_gangs` (default 1) gang iterations of the block.
    Region,
}

/// A construct-level reduction: its result goes back to a host scalar.
#[derive(Debug, Clone, PartialEq)]
pub struct ReductionParam {
    pub name: String,
    pub host: hir::LocalH,
    pub op: ReductionOp,
    pub ty: Scalar,
    /// A `kernels` scalar with no clause (`copy` by default): a one-lane
    /// part assigns it, its copy starts at the host's value, and the
    /// result replaces the host's value rather than combining with it.
    /// `op` is one whose identity leaves a value unchanged.
    pub copy: bool,
}

/// `loop vector|worker|gang` inside a gang: iterations spread over the
/// workgroup's invocations (over every gang's invocations when `gangs`).
#[derive(Debug, Clone)]
pub struct VectorLoop {
    pub levels: Vec<InnerLevel>,
    pub body: Block,
    pub reductions: Vec<InnerReduction>,
    /// Spread over every gang of the dispatch too (`loop gang` in a region).
    pub gangs: bool,
}

/// One level of a `VectorLoop`'s collapsed nest; bounds are evaluated
/// (identically) by every invocation before the loop.
#[derive(Debug, Clone)]
pub struct InnerLevel {
    pub var: LocalH,
    pub ty: Scalar,
    pub lo: ExprH,
    pub hi: ExprH,
    pub inclusive: bool,
}

/// `reduction(op: v)` on a `VectorLoop`: the body reduces into `private`
/// (identity first); after the loop the workgroup's copies are folded in
/// invocation order and `target = combine(target, folded)`.
#[derive(Debug, Clone)]
pub struct InnerReduction {
    pub op: ReductionOp,
    pub target: LocalH,
    pub private: LocalH,
}

/// An atomic read-modify-write of an array element (the `atomic` update
/// forms and the `atomic_add/min/max/xchg` capture builtins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicKind {
    Add,
    Sub,
    Mul,
    Max,
    Min,
    And,
    Or,
    Xor,
    Xchg,
    Div,
    Shl,
    Shr,
    /// `a[i] = v - a[i]`
    RevSub,
    /// `a[i] = v / a[i]`
    RevDiv,
    /// `a[i] = v << a[i]`
    RevShl,
    /// `a[i] = v >> a[i]`
    RevShr,
    /// `atomic read`: the element (the value operand is unused).
    Read,
    /// `atomic write`: store the value (the expression's value is it).
    Write,
}

/// A captured scalar: the host local it comes from, and its type.
#[derive(Debug, Clone)]
pub struct ScalarParam {
    pub name: String,
    pub host: hir::LocalH,
    pub ty: Scalar,
}

/// A captured array (one storage buffer).
#[derive(Debug, Clone)]
pub struct ArrayParam {
    pub name: String,
    pub host: hir::LocalH,
    pub elem: Scalar,
    pub rank: u8,
    pub read: bool,
    pub written: bool,
}

/// One level of the collapsed iteration space. `lo`/`hi` are host
/// expressions of the construct's body: the runtime evaluates them at launch.
#[derive(Debug, Clone)]
pub struct LoopLevel {
    pub var: LocalH,
    pub ty: Scalar,
    pub lo: hir::ExprH,
    pub hi: hir::ExprH,
    pub inclusive: bool,
    /// The trip count, when both bounds are constants and it is in
    /// `1..=u32::MAX`: the kernel then splits its index by a constant,
    /// which the driver turns into shifts and multiplies.
    pub count: Option<u64>,
    pub span: Span,
}

/// A device function, or the kernel's per-iteration body.
#[derive(Debug, Clone, Default)]
pub struct Function {
    pub name: String,
    /// Scalar parameters (locals initialised from the call's arguments).
    pub args: Vec<LocalH>,
    pub ret: Option<Scalar>,
    /// A function returning a tuple: its element types (then `ret` is
    /// `None`); it returns with [`StmtKind::ReturnTuple`] and is called by
    /// [`StmtKind::CallTuple`].
    pub ret_tuple: Vec<Scalar>,
    pub locals: Arena<Local>,
    pub exprs: Arena<Expr>,
    /// The type of each expression, by handle index.
    pub types: Vec<Scalar>,
    pub body: Block,
}

impl Function {
    pub fn ty(&self, e: ExprH) -> Scalar {
        self.types[e.index()]
    }
    pub fn add_expr(&mut self, e: Expr, ty: Scalar, span: Span) -> ExprH {
        self.types.push(ty);
        self.exprs.append(e, span)
    }
}

#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub ty: Scalar,
}

pub type Block = Vec<Stmt>;

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Store {
        local: LocalH,
        value: ExprH,
    },
    /// `array[index..] = value` (one index per dimension, row-major).
    StoreElem {
        array: ArrayH,
        index: Vec<ExprH>,
        value: ExprH,
    },
    /// Evaluate for effects (a call whose result is unused).
    Eval(ExprH),
    If {
        cond: ExprH,
        then: Block,
        els: Block,
    },
    /// Runs `body`, then `continuing`, forever; leave with `Break`.
    /// `Continue` jumps to `continuing`.
    Loop {
        body: Block,
        continuing: Block,
    },
    Break,
    /// Inside a `Loop`: to its `continuing`; at the top of the kernel body:
    /// to the next iteration.
    Continue,
    Return(Option<ExprH>),
    /// Return one value per element from a function returning a tuple.
    ReturnTuple(Vec<ExprH>),
    /// Call a function returning a tuple and store its elements, in
    /// order, into `results` (one local per element).
    CallTuple {
        func: FuncH,
        args: Vec<ExprH>,
        results: Vec<LocalH>,
    },
    /// A workgroup execution and memory barrier (workgroup and storage
    /// buffer memory); only in uniform control flow of a gang.
    Barrier,
    VectorLoop(Box<VectorLoop>),
    /// `cache(a[lo:count])`: a hint; in a gang that is a whole workgroup,
    /// at the top of its iteration, the section goes to workgroup memory
    /// and the iteration's loads of it read from there.
    Cache {
        array: ArrayH,
        lo: ExprH,
        count: u32,
    },
    /// At the start of an iteration that owns copies of private array
    /// `array` ([`PrivateCopies`]): where the copy is in workgroup memory,
    /// (re)start it (zero, or the section's values); in the hidden array
    /// every iteration has a fresh copy already, so nothing happens.
    PrivateInit(ArrayH),
}

#[derive(Debug, Clone)]
pub enum Expr {
    /// A typed constant (never a literal kind).
    Const(Value),
    /// Captured scalar `i` of [`Kernel::params`].
    Param(u32),
    Local(LocalH),
    Load {
        array: ArrayH,
        index: Vec<ExprH>,
    },
    Unary(UnOp, ExprH),
    /// Operands of one type; `And`/`Or` short-circuit.
    Binary(BinOp, ExprH, ExprH),
    Cast(ExprH, Scalar),
    Math(MathFn, Vec<ExprH>),
    Call(FuncH, Vec<ExprH>),
    /// `combine(op, a, b)` of a reduction operator (host semantics).
    Reduce(ReductionOp, ExprH, ExprH),
    /// The invocation's index in its workgroup (`u32`).
    InvocationIndex,
    /// Atomically `array[index] = old op value`; the value is `old`.
    Atomic {
        array: ArrayH,
        index: Vec<ExprH>,
        op: AtomicKind,
        value: ExprH,
    },
}

impl Expr {
    /// The expressions this one reads directly (its operands, indices and
    /// arguments), for walks over an expression tree.
    pub fn operands(&self) -> Vec<ExprH> {
        match self {
            Expr::Load { index, .. } => index.clone(),
            Expr::Unary(_, a) | Expr::Cast(a, _) => vec![*a],
            Expr::Binary(_, a, b) | Expr::Reduce(_, a, b) => vec![*a, *b],
            Expr::Math(_, args) | Expr::Call(_, args) => args.clone(),
            Expr::Atomic { index, value, .. } => index.iter().chain([value]).copied().collect(),
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::InvocationIndex => Vec::new(),
        }
    }
}

/// Device math builtins (stdlib `Effect::Pure` functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    Abs,
    Min,
    Max,
    Clamp,
    Sqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Floor,
    Ceil,
    Round,
    Trunc,
    Pow,
    Atan2,
    Fma,
}

impl MathFn {
    pub fn from_name(name: &str) -> Option<MathFn> {
        use MathFn::*;
        Some(match name {
            "abs" => Abs,
            "min" => Min,
            "max" => Max,
            "clamp" => Clamp,
            "sqrt" => Sqrt,
            "exp" => Exp,
            "exp2" => Exp2,
            "log" => Log,
            "log2" => Log2,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "asin" => Asin,
            "acos" => Acos,
            "atan" => Atan,
            "sinh" => Sinh,
            "cosh" => Cosh,
            "tanh" => Tanh,
            "floor" => Floor,
            "ceil" => Ceil,
            "round" => Round,
            "trunc" => Trunc,
            "pow" => Pow,
            "atan2" => Atan2,
            "fma" => Fma,
            _ => return None,
        })
    }
    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Min | Max | Pow | Atan2 => 2,
            Clamp | Fma => 3,
            _ => 1,
        }
    }
    /// Defined on integers as well as floats.
    pub fn integer_ok(self) -> bool {
        matches!(
            self,
            MathFn::Abs | MathFn::Min | MathFn::Max | MathFn::Clamp
        )
    }
    /// GLSL.std.450 defines it for 16/32-bit floats only (transcendentals).
    pub fn f32_only(self) -> bool {
        use MathFn::*;
        matches!(
            self,
            Exp | Exp2
                | Log
                | Log2
                | Sin
                | Cos
                | Tan
                | Asin
                | Acos
                | Atan
                | Sinh
                | Cosh
                | Tanh
                | Pow
                | Atan2
        )
    }
}

/// Optional device features a kernel needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Features {
    /// `shaderFloat64` (an `f64` anywhere).
    pub float64: bool,
    /// `shaderInt64` (an `i64` anywhere, or 64-bit indexing).
    pub int64: bool,
    /// `storageBuffer8BitAccess` (a `u8` or `bool` array).
    pub storage_buffer_8bit: bool,
    /// `shaderBufferInt64Atomics` (an `i64` atomic, or an `f64` atomic done
    /// with a compare-and-swap loop).
    pub int64_atomics: bool,
    /// `shaderBufferFloat32AtomicAdd` (native `f32` atomic add; optional:
    /// without it the writer uses a compare-and-swap loop).
    pub float32_atomic_add: bool,
    /// `shaderBufferFloat64AtomicAdd` (native `f64` atomic add; optional).
    pub float64_atomic_add: bool,
    /// `bufferDeviceAddress` (an array reached by address: its buffer is
    /// larger than one binding; see [`crate::Spec::by_address`]).
    pub buffer_device_address: bool,
}

impl Features {
    pub fn union(self, o: Features) -> Features {
        Features {
            float64: self.float64 || o.float64,
            int64: self.int64 || o.int64,
            storage_buffer_8bit: self.storage_buffer_8bit || o.storage_buffer_8bit,
            int64_atomics: self.int64_atomics || o.int64_atomics,
            float32_atomic_add: self.float32_atomic_add || o.float32_atomic_add,
            float64_atomic_add: self.float64_atomic_add || o.float64_atomic_add,
            buffer_device_address: self.buffer_device_address || o.buffer_device_address,
        }
    }
    /// The features in `self` that `available` lacks, by their Vulkan names.
    pub fn missing(self, available: Features) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.float64 && !available.float64 {
            v.push("shaderFloat64");
        }
        if self.int64 && !available.int64 {
            v.push("shaderInt64");
        }
        if self.storage_buffer_8bit && !available.storage_buffer_8bit {
            v.push("storageBuffer8BitAccess");
        }
        if self.int64_atomics && !available.int64_atomics {
            v.push("shaderBufferInt64Atomics");
        }
        if self.float32_atomic_add && !available.float32_atomic_add {
            v.push("shaderBufferFloat32AtomicAdd");
        }
        if self.float64_atomic_add && !available.float64_atomic_add {
            v.push("shaderBufferFloat64AtomicAdd");
        }
        if self.buffer_device_address && !available.buffer_device_address {
            v.push("bufferDeviceAddress");
        }
        v
    }
    /// These features with the one named `name` (as [`Features::missing`]
    /// spells it) turned off; None for an unknown name.
    pub fn without(mut self, name: &str) -> Option<Features> {
        match name {
            "shaderFloat64" => self.float64 = false,
            "shaderInt64" => self.int64 = false,
            "storageBuffer8BitAccess" => self.storage_buffer_8bit = false,
            "shaderBufferInt64Atomics" => self.int64_atomics = false,
            "shaderBufferFloat32AtomicAdd" => self.float32_atomic_add = false,
            "shaderBufferFloat64AtomicAdd" => self.float64_atomic_add = false,
            "bufferDeviceAddress" => self.buffer_device_address = false,
            _ => return None,
        }
        Some(self)
    }
    pub fn note_scalar(&mut self, s: Scalar) {
        match s {
            Scalar::F64 => self.float64 = true,
            Scalar::I64 => self.int64 = true,
            _ => {}
        }
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = self.missing(Features::default());
        if all.is_empty() {
            f.write_str("(none)")
        } else {
            f.write_str(&all.join(", "))
        }
    }
}
