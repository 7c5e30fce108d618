//! Which host code the JIT takes: the functions and loops made only of
//! what it compiles exactly as the interpreter runs it. Everything else
//! (arrays made or passed around, strings, constructs, I/O builtins,
//! recursion) stays with the interpreter, which the compiled code never has
//! to call back into except for the limit checks. Scalar top-level
//! variables are read and written in the interpreter's own storage. What
//! stays interpreted is recorded with the reason ([`Why`]).

use lang::hir::{self, Body, Expr, ExprH, FnH, Place, Stmt, StmtKind};
use lang::{Builtins, Effect, Scalar, Span, Type};

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

/// Why a function or loop stays with the interpreter: the first thing in
/// it the JIT does not take, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Why {
    pub span: Span,
    pub what: String,
}

type Ok_ = Result<(), Why>;

pub(crate) fn no(span: Span, what: impl Into<String>) -> Ok_ {
    Err(Why {
        span,
        what: what.into(),
    })
}

fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::Str(_) => "a string",
        Expr::TypeArg(_) => "a type argument",
        Expr::Array(..) => "an array value",
        Expr::Tuple(_) => "a tuple value",
        Expr::Index(..) => "an array element (only loops take arrays)",
        _ => "a value that is not a scalar",
    }
}

pub struct Planner<'a> {
    pub prog: &'a hir::Program,
    pub builtins: &'a Builtins,
    /// Which functions compile, by handle index.
    pub fns: Vec<bool>,
    /// Why each function that does not compile stays interpreted.
    pub why: Vec<Option<Why>>,
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
            why: vec![None; n],
        };
        p.settle();
        p
    }

    /// Take function `i` out (code generation refused it), and every
    /// function that calls it.
    pub fn refuse(&mut self, i: usize, why: Why) {
        if let Some(f) = self.fns.get_mut(i) {
            *f = false;
            self.why[i] = Some(why);
        }
        self.settle();
    }

    fn settle(&mut self) {
        loop {
            let mut changed = false;
            for (h, f) in self.prog.functions.iter() {
                let i = h.index();
                if self.fns[i] {
                    if let Err(w) = self.function_ok(f) {
                        self.fns[i] = false;
                        self.why[i] = Some(w);
                        changed = true;
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }

    fn function_ok(&self, f: &hir::Function) -> Ok_ {
        if f.recursive {
            return no(f.span, "it is recursive");
        }
        if !matches!(f.ret, Type::Unit | Type::Scalar(_) | Type::Tuple(_)) {
            return no(f.span, format!("it returns {}", f.ret));
        }
        for &p in &f.params {
            let l = &f.body.locals[p];
            if scalar(l.ty).is_none() {
                return no(f.span, format!("parameter `{}` is {}", l.name, l.ty));
            }
        }
        self.block_why(&f.body, &f.body.block, Mode::Function)
    }

    pub fn block_ok(&self, body: &Body, b: &[Stmt], mode: Mode) -> bool {
        self.block_why(body, b, mode).is_ok()
    }

    pub fn block_why(&self, body: &Body, b: &[Stmt], mode: Mode) -> Ok_ {
        b.iter().try_for_each(|s| self.stmt_why(body, s, mode))
    }

    pub fn stmt_ok(&self, body: &Body, s: &Stmt, mode: Mode) -> bool {
        self.stmt_why(body, s, mode).is_ok()
    }

    fn local_why(&self, body: &Body, l: lang::hir::LocalH, span: Span) -> Ok_ {
        let local = &body.locals[l];
        match scalar(local.ty) {
            Some(_) => Ok(()),
            None => no(span, format!("`{}` is {}", local.name, local.ty)),
        }
    }

    fn call_why(&self, body: &Body, f: FnH, args: &[ExprH], span: Span, mode: Mode) -> Ok_ {
        if !self.fns[f.index()] {
            let name = &self.prog.functions[f].name;
            return no(span, format!("it calls `{name}`, which stays interpreted"));
        }
        args.iter()
            .try_for_each(|&a| self.scalar_why(body, a, mode))
    }

    pub fn stmt_why(&self, body: &Body, s: &Stmt, mode: Mode) -> Ok_ {
        match &s.kind {
            StmtKind::Let { local, init } => {
                self.local_why(body, *local, s.span)?;
                self.scalar_why(body, *init, mode)
            }
            StmtKind::Assign { place, value, .. } => {
                self.scalar_why(body, *value, mode)?;
                match place {
                    Place::Local(l) => self.local_why(body, *l, s.span),
                    Place::Global(_) => Ok(()),
                    Place::Element { array, indices } => {
                        if mode != Mode::Loop {
                            return no(s.span, "an array element (only loops take arrays)");
                        }
                        self.element_why(body, *array, indices, s.span, mode)
                    }
                }
            }
            StmtKind::Expr(e) => match &body.exprs[*e] {
                Expr::Call(f, args) => self.call_why(body, *f, args, body.span(*e), mode),
                _ => self.scalar_why(body, *e, mode),
            },
            StmtKind::If { cond, then, els } => {
                self.scalar_why(body, *cond, mode)?;
                self.block_why(body, then, mode)?;
                self.block_why(body, els, mode)
            }
            StmtKind::While { cond, body: b } => {
                self.scalar_why(body, *cond, mode)?;
                self.block_why(body, b, mode)
            }
            StmtKind::For(fl) => {
                let h = &fl.header;
                if !int(body.locals[h.var].ty) {
                    return no(h.span, "its counter is not an integer");
                }
                self.index_why(body, h.lo, mode)?;
                self.index_why(body, h.hi, mode)?;
                self.block_why(body, &fl.body, mode)
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Cache { .. } => Ok(()),
            StmtKind::Return(None) => Ok(()),
            StmtKind::Return(Some(e)) => match &body.exprs[*e] {
                Expr::Tuple(elems) => elems
                    .iter()
                    .try_for_each(|&x| self.scalar_why(body, x, mode)),
                _ => self.scalar_why(body, *e, mode),
            },
            StmtKind::LetTuple { locals, init } => {
                for &l in locals.iter().flatten() {
                    self.local_why(body, l, s.span)?;
                }
                match &body.exprs[*init] {
                    Expr::Tuple(elems) => elems
                        .iter()
                        .try_for_each(|&x| self.scalar_why(body, x, mode)),
                    Expr::Call(f, args) => self.call_why(body, *f, args, body.span(*init), mode),
                    _ => no(s.span, "a tuple from neither a call nor a tuple expression"),
                }
            }
            StmtKind::Block(b) => self.block_why(body, b, mode),
            StmtKind::Construct(_) => no(s.span, "a compute or data construct"),
            StmtKind::Atomic { .. } => no(s.span, "an atomic statement"),
        }
    }

    fn index_why(&self, body: &Body, e: ExprH, mode: Mode) -> Ok_ {
        if !int(body.ty(e).defaulted()) {
            return no(body.span(e), "an index or bound that is not an integer");
        }
        self.scalar_why(body, e, mode)
    }

    fn element_why(
        &self,
        body: &Body,
        array: ExprH,
        indices: &[ExprH],
        span: Span,
        mode: Mode,
    ) -> Ok_ {
        let Expr::Local(l) = body.exprs[array] else {
            return no(span, "an element of an array that is not a local variable");
        };
        let Type::Array(_, rank) = body.locals[l].ty else {
            return no(span, "an element of a value that is not an array");
        };
        if indices.len() != rank as usize || !(1..=3).contains(&indices.len()) {
            return no(span, "an element access by other than 1 to 3 indices");
        }
        indices
            .iter()
            .try_for_each(|&i| self.index_why(body, i, mode))
    }

    /// A scalar-valued expression the JIT compiles.
    pub fn scalar_ok(&self, body: &Body, e: ExprH, mode: Mode) -> bool {
        self.scalar_why(body, e, mode).is_ok()
    }

    pub fn scalar_why(&self, body: &Body, e: ExprH, mode: Mode) -> Ok_ {
        let span = body.span(e);
        if scalar(body.ty(e).defaulted()).is_none() {
            return no(
                span,
                match &body.exprs[e] {
                    Expr::Builtin(id, _) => {
                        format!("it calls the builtin `{}`", self.builtins.get(*id).name)
                    }
                    Expr::Call(f, _) => format!(
                        "it calls `{}`, which returns {}",
                        self.prog.functions[*f].name,
                        body.ty(e)
                    ),
                    other => expr_kind(other).to_string(),
                },
            );
        }
        match &body.exprs[e] {
            Expr::Const(_) | Expr::Global(_) => Ok(()),
            Expr::Local(l) => self.local_why(body, *l, span),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.scalar_why(body, *a, mode),
            Expr::Binary(_, a, b) => {
                self.scalar_why(body, *a, mode)?;
                self.scalar_why(body, *b, mode)
            }
            Expr::Index(a, ix) => {
                if mode != Mode::Loop {
                    return no(span, "an array element (only loops take arrays)");
                }
                self.element_why(body, *a, ix, span, mode)
            }
            Expr::Call(f, args) => self.call_why(body, *f, args, span, mode),
            Expr::Builtin(id, args)
                if mode == Mode::Loop && self.extent(body, *id, args).is_some() =>
            {
                Ok(())
            }
            Expr::Builtin(id, args) => {
                let b = self.builtins.get(*id);
                let t = scalar(body.ty(e).defaulted()).unwrap_or(Scalar::Bool);
                let ok = b.effect == Effect::Pure
                    && MATH.contains(&b.name.as_str())
                    && math_arity(&b.name) == args.len()
                    && (matches!(t, Scalar::F32 | Scalar::F64)
                        || matches!(b.name.as_str(), "abs" | "min" | "max" | "clamp"))
                    && t != Scalar::Bool
                    && args
                        .iter()
                        .all(|&a| scalar(body.ty(a).defaulted()) == Some(t));
                if !ok {
                    return no(span, format!("it calls the builtin `{}`", b.name));
                }
                args.iter()
                    .try_for_each(|&a| self.scalar_why(body, a, mode))
            }
            other => no(span, expr_kind(other)),
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
        self.loop_why(body, s).is_ok()
    }

    pub fn loop_why(&self, body: &Body, s: &Stmt) -> Ok_ {
        if !matches!(s.kind, StmtKind::For(_) | StmtKind::While { .. }) {
            return no(s.span, "not a loop");
        }
        self.stmt_why(body, s, Mode::Loop)
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
