//! Which host code the JIT takes: the functions and loops made only of
//! what it compiles exactly as the interpreter runs it. Everything else
//! (arrays made or passed around, strings, constructs, I/O builtins, top-level
//! variables in functions, recursion) stays with the interpreter, which the
//! compiled code never has to call back into except for the limit checks.

use lang::hir::{self, Body, Expr, ExprH, FnH, Place, Stmt, StmtKind};
use lang::{Builtins, Effect, Scalar, Type};

/// The builtins compiled inline or through a math routine, by name.
pub const MATH: &[&str] = &[
    "abs", "min", "max", "clamp", "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil", "round", "trunc", "pow",
    "atan2", "fma",
];

/// Where a piece of code sits: a function body (arrays are not taken
/// there) or a loop of some body (its arrays are the body's array locals,
/// fixed for the loop's run).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Function,
    Loop,
}

pub struct Planner<'a> {
    pub prog: &'a hir::Program,
    pub builtins: &'a Builtins,
    /// Which functions compile, by handle index.
    pub fns: Vec<bool>,
}

impl<'a> Planner<'a> {
    /// Decide every function: a function compiles when its own code does
    /// and every function it calls compiles (found by iterating to a fixed
    /// point, so that a call chain is decided bottom-up).
    pub fn new(prog: &'a hir::Program, builtins: &'a Builtins) -> Planner<'a> {
        let n = prog.functions.len();
        let mut p = Planner {
            prog,
            builtins,
            fns: vec![true; n],
        };
        loop {
            let mut changed = false;
            for (h, f) in prog.functions.iter() {
                let i = h.index();
                if p.fns[i] && !p.function_ok(f) {
                    p.fns[i] = false;
                    changed = true;
                }
            }
            if !changed {
                return p;
            }
        }
    }

    fn function_ok(&self, f: &hir::Function) -> bool {
        !f.recursive
            && f.globals.is_empty()
            && matches!(f.ret, Type::Unit | Type::Scalar(_) | Type::Tuple(_))
            && f.params
                .iter()
                .all(|&p| scalar(f.body.locals[p].ty).is_some())
            && self.block_ok(&f.body, &f.body.block, Mode::Function)
    }

    pub fn block_ok(&self, body: &Body, b: &[Stmt], mode: Mode) -> bool {
        b.iter().all(|s| self.stmt_ok(body, s, mode))
    }

    pub fn stmt_ok(&self, body: &Body, s: &Stmt, mode: Mode) -> bool {
        match &s.kind {
            StmtKind::Let { local, init } => {
                scalar(body.locals[*local].ty).is_some() && self.scalar_ok(body, *init, mode)
            }
            StmtKind::Assign { place, value, .. } => {
                self.scalar_ok(body, *value, mode)
                    && match place {
                        Place::Local(l) => scalar(body.locals[*l].ty).is_some(),
                        Place::Global(_) => false,
                        Place::Element { array, indices } => {
                            mode == Mode::Loop && self.element_ok(body, *array, indices, mode)
                        }
                    }
            }
            StmtKind::Expr(e) => match &body.exprs[*e] {
                Expr::Call(f, args) => {
                    self.fns[f.index()] && args.iter().all(|&a| self.scalar_ok(body, a, mode))
                }
                _ => self.scalar_ok(body, *e, mode),
            },
            StmtKind::If { cond, then, els } => {
                self.scalar_ok(body, *cond, mode)
                    && self.block_ok(body, then, mode)
                    && self.block_ok(body, els, mode)
            }
            StmtKind::While { cond, body: b } => {
                self.scalar_ok(body, *cond, mode) && self.block_ok(body, b, mode)
            }
            StmtKind::For(fl) => {
                let h = &fl.header;
                int(body.locals[h.var].ty)
                    && self.index_ok(body, h.lo, mode)
                    && self.index_ok(body, h.hi, mode)
                    && self.block_ok(body, &fl.body, mode)
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Cache { .. } => true,
            StmtKind::Return(None) => true,
            StmtKind::Return(Some(e)) => match &body.exprs[*e] {
                Expr::Tuple(elems) => elems.iter().all(|&x| self.scalar_ok(body, x, mode)),
                _ => self.scalar_ok(body, *e, mode),
            },
            StmtKind::LetTuple { locals, init } => {
                locals
                    .iter()
                    .flatten()
                    .all(|&l| scalar(body.locals[l].ty).is_some())
                    && match &body.exprs[*init] {
                        Expr::Tuple(elems) => elems.iter().all(|&x| self.scalar_ok(body, x, mode)),
                        Expr::Call(f, args) => {
                            self.fns[f.index()]
                                && args.iter().all(|&a| self.scalar_ok(body, a, mode))
                        }
                        _ => false,
                    }
            }
            StmtKind::Block(b) => self.block_ok(body, b, mode),
            StmtKind::Construct(_) | StmtKind::Atomic { .. } => false,
        }
    }

    fn index_ok(&self, body: &Body, e: ExprH, mode: Mode) -> bool {
        int(body.ty(e).defaulted()) && self.scalar_ok(body, e, mode)
    }

    fn element_ok(&self, body: &Body, array: ExprH, indices: &[ExprH], mode: Mode) -> bool {
        let Expr::Local(l) = body.exprs[array] else {
            return false;
        };
        let Type::Array(_, rank) = body.locals[l].ty else {
            return false;
        };
        indices.len() == rank as usize
            && (1..=3).contains(&indices.len())
            && indices.iter().all(|&i| self.index_ok(body, i, mode))
    }

    /// A scalar-valued expression the JIT compiles.
    pub fn scalar_ok(&self, body: &Body, e: ExprH, mode: Mode) -> bool {
        if scalar(body.ty(e).defaulted()).is_none() {
            return false;
        }
        match &body.exprs[e] {
            Expr::Const(_) => true,
            Expr::Local(l) => scalar(body.locals[*l].ty).is_some(),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.scalar_ok(body, *a, mode),
            Expr::Binary(_, a, b) => {
                self.scalar_ok(body, *a, mode) && self.scalar_ok(body, *b, mode)
            }
            Expr::Index(a, ix) => mode == Mode::Loop && self.element_ok(body, *a, ix, mode),
            Expr::Call(f, args) => {
                self.fns[f.index()] && args.iter().all(|&a| self.scalar_ok(body, a, mode))
            }
            Expr::Builtin(id, args)
                if mode == Mode::Loop && self.extent(body, *id, args).is_some() =>
            {
                true
            }
            Expr::Builtin(id, args) => {
                let b = self.builtins.get(*id);
                let Some(t) = scalar(body.ty(e).defaulted()) else {
                    return false;
                };
                b.effect == Effect::Pure
                    && MATH.contains(&b.name.as_str())
                    && math_arity(&b.name) == args.len()
                    && (matches!(t, Scalar::F32 | Scalar::F64)
                        || matches!(b.name.as_str(), "abs" | "min" | "max" | "clamp"))
                    && t != Scalar::Bool
                    && args.iter().all(|&a| {
                        scalar(body.ty(a).defaulted()) == Some(t) && self.scalar_ok(body, a, mode)
                    })
            }
            Expr::Global(_)
            | Expr::Str(_)
            | Expr::TypeArg(_)
            | Expr::Array(..)
            | Expr::Tuple(_) => false,
        }
    }

    /// `len(a)` or `shape(a, k)` (constant `k`) of a local array: the
    /// array and the axis (None for `len`).
    pub fn extent(
        &self,
        body: &Body,
        id: lang::BuiltinId,
        args: &[ExprH],
    ) -> Option<(usize, Option<usize>)> {
        Self::extent_with(self.builtins, body, id, args)
    }

    pub fn extent_with(
        builtins: &Builtins,
        body: &Body,
        id: lang::BuiltinId,
        args: &[ExprH],
    ) -> Option<(usize, Option<usize>)> {
        let name = builtins.get(id).name.as_str();
        let Expr::Local(l) = body.exprs[*args.first()?] else {
            return None;
        };
        let Type::Array(_, rank) = body.locals[l].ty else {
            return None;
        };
        match (name, args) {
            ("len", [_]) => Some((l.index(), None)),
            ("shape", [_, k]) => match body.exprs[*k] {
                Expr::Const(v) => match v.cast(Scalar::I64) {
                    lang::Value::I64(k) if (0..rank as i64).contains(&k) => {
                        Some((l.index(), Some(k as usize)))
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether loop statement `s` of `body` compiles on its own.
    pub fn loop_ok(&self, body: &Body, s: &Stmt) -> bool {
        matches!(s.kind, StmtKind::For(_) | StmtKind::While { .. })
            && self.stmt_ok(body, s, Mode::Loop)
    }

    pub fn function(&self, f: FnH) -> bool {
        self.fns[f.index()]
    }
}

/// The scalar type of `t`, if the JIT handles it.
pub fn scalar(t: Type) -> Option<Scalar> {
    match t {
        Type::Scalar(s) => Some(s),
        _ => None,
    }
}

fn int(t: Type) -> bool {
    matches!(
        t,
        Type::Scalar(Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U8)
    )
}

pub fn math_arity(name: &str) -> usize {
    match name {
        "min" | "max" | "pow" | "atan2" => 2,
        "clamp" | "fma" => 3,
        _ => 1,
    }
}
