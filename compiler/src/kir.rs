//! The kernel IR (KIR): one `parallel loop` construct, ready for a back end.
//!
//! Shaped after naga (STYLE 1): every function owns arenas of expressions
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
//! Room for issue 5 (reductions, atomics, gang/vector regions): a kernel
//! would grow `reductions` (per-variable partial buffers) and statements for
//! atomics; [`Kernel::features`] already carries what the device must offer.

use lang::arena::{Arena, Handle};
use lang::hir;
use lang::{Scalar, Span, Value};
use std::fmt;

pub use lang::hir::{BinOp, UnOp};

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
    /// `vector_length(e)` with a run-time `e` (a host expression of the
    /// construct's body; the runtime evaluates it and specialises).
    pub vector_length_expr: Option<hir::ExprH>,
    /// What the device must support.
    pub features: Features,
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
    pub span: Span,
}

/// A device function, or the kernel's per-iteration body.
#[derive(Debug, Clone, Default)]
pub struct Function {
    pub name: String,
    /// Scalar parameters (locals initialised from the call's arguments).
    pub args: Vec<LocalH>,
    pub ret: Option<Scalar>,
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
}

impl Features {
    pub fn union(self, o: Features) -> Features {
        Features {
            float64: self.float64 || o.float64,
            int64: self.int64 || o.int64,
            storage_buffer_8bit: self.storage_buffer_8bit || o.storage_buffer_8bit,
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
        v
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
