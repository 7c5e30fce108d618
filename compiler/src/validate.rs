//! The KIR validator: the only way to obtain a [`Validated`] kernel, which is
//! what the SPIR-V writer takes (after naga's `back/spv::write_vec`).
//! So a kernel that a buggy lowering (or a hand-built test) got wrong is an
//! `accl::compile::invalid_kir` diagnostic here, never a module that the
//! driver chokes on.
//!
//! Checked: handles in range and pointing backwards (expressions form a DAG),
//! operand and result types of every expression and statement, array ranks,
//! call signatures, `break`/`continue` placement, no control transfer out of a
//! `continuing` block, and that the call graph is acyclic.

use crate::kir::*;
use lang::{Diag, Scalar, Span};

/// A kernel that passed [`validate`]. It can only be made there.
#[derive(Debug, Clone, Copy)]
pub struct Validated<'a> {
    kernel: &'a Kernel,
}

impl<'a> Validated<'a> {
    pub fn kernel(&self) -> &'a Kernel {
        self.kernel
    }
}

impl std::ops::Deref for Validated<'_> {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        self.kernel
    }
}

/// Check a kernel; on success, the token the emitter needs.
pub fn validate(kernel: &Kernel) -> Result<Validated<'_>, Diag> {
    let v = V { k: kernel };
    v.function(&kernel.entry, None)?;
    for (h, f) in kernel.functions.iter() {
        v.function(f, Some(h))?;
    }
    if kernel.reductions.len() != kernel.reduction_locals.len() {
        return Err(bad(kernel.span, "reductions without their locals"));
    }
    for (r, &l) in kernel.reductions.iter().zip(&kernel.reduction_locals) {
        if l.index() >= kernel.entry.locals.len()
            || kernel.entry.locals[l].ty != r.ty
            || !reduction_legal(r.op, r.ty)
        {
            return Err(bad(kernel.span, format!("reduction `{}`", r.name)));
        }
    }
    if kernel.shape == Shape::Region && !kernel.levels.is_empty() {
        return Err(bad(kernel.span, "a region with loop levels"));
    }
    for l in &kernel.levels {
        if l.var.index() >= kernel.entry.locals.len()
            || !l.ty.is_int()
            || kernel.entry.locals[l.var].ty != l.ty
        {
            return Err(bad(
                l.span,
                "a loop level whose variable is not an integer local of the entry",
            ));
        }
    }
    Ok(Validated { kernel })
}

fn bad(span: Span, what: impl Into<String>) -> Diag {
    Diag::error(
        "accl::compile::invalid_kir",
        format!(
            "internal compiler error: invalid kernel IR: {}",
            what.into()
        ),
        span,
        "while compiling this",
    )
}

struct V<'a> {
    k: &'a Kernel,
}

struct Cx<'f> {
    f: &'f Function,
    this: Option<FuncH>,
    loops: u32,
    in_continuing: bool,
    in_vector: bool,
}

impl V<'_> {
    fn function(&self, f: &Function, this: Option<FuncH>) -> Result<(), Diag> {
        if f.types.len() != f.exprs.len() {
            return Err(bad(
                self.k.span,
                format!("`{}`: type table out of step", f.name),
            ));
        }
        for &a in &f.args {
            if a.index() >= f.locals.len() {
                return Err(bad(self.k.span, "an argument that is not a local"));
            }
        }
        for (h, e) in f.exprs.iter() {
            self.expr(f, this, h, e)?;
        }
        let mut cx = Cx {
            f,
            this,
            loops: 0,
            in_continuing: false,
            in_vector: false,
        };
        self.block(&mut cx, &f.body)
    }

    fn operand(&self, f: &Function, of: ExprH, h: ExprH) -> Result<Scalar, Diag> {
        if h.index() >= of.index() {
            return Err(bad(f.exprs.span(of), "an expression refers to a later one"));
        }
        Ok(f.ty(h))
    }

    fn index(
        &self,
        f: &Function,
        of: Option<ExprH>,
        array: ArrayH,
        index: &[ExprH],
        span: Span,
    ) -> Result<Scalar, Diag> {
        if array.index() >= self.k.arrays.len() {
            return Err(bad(span, "no such array"));
        }
        let a = &self.k.arrays[array];
        if index.len() != a.rank as usize {
            return Err(bad(
                span,
                format!(
                    "`{}` has rank {} but {} indices",
                    a.name,
                    a.rank,
                    index.len()
                ),
            ));
        }
        for &i in index {
            let t = match of {
                Some(of) => self.operand(f, of, i)?,
                None => f.ty(i),
            };
            if !t.is_int() {
                return Err(bad(span, "an index that is not an integer"));
            }
        }
        Ok(a.elem)
    }

    fn expr(&self, f: &Function, this: Option<FuncH>, h: ExprH, e: &Expr) -> Result<(), Diag> {
        use BinOp::*;
        let span = f.exprs.span(h);
        let ty = f.ty(h);
        let want = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(bad(span, what.to_string()))
            }
        };
        match e {
            Expr::Const(v) => want(
                v.ty() == lang::Type::Scalar(ty),
                "a constant of another type",
            ),
            Expr::Param(i) => want(
                self.k.params.get(*i as usize).is_some_and(|p| p.ty == ty),
                "a parameter out of range or of another type",
            ),
            Expr::Local(l) => want(
                l.index() < f.locals.len() && f.locals[*l].ty == ty,
                "a local out of range or of another type",
            ),
            Expr::Load { array, index } => {
                let t = self.index(f, Some(h), *array, index, span)?;
                want(t == ty, "a load of another type")
            }
            Expr::Unary(op, a) => {
                let a = self.operand(f, h, *a)?;
                want(a == ty, "a unary operation changing the type")?;
                match op {
                    UnOp::Neg => want(a.is_numeric(), "negation of a non-number"),
                    UnOp::Not => want(a == Scalar::Bool || a.is_int(), "`!` of a float"),
                }
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.operand(f, h, *a)?, self.operand(f, h, *b)?);
                want(a == b, "operands of different types")?;
                match op {
                    And | Or => want(
                        a == Scalar::Bool && ty == Scalar::Bool,
                        "`&&`/`||` of non-bools",
                    ),
                    Eq | Ne | Lt | Le | Gt | Ge => {
                        want(ty == Scalar::Bool, "a comparison that is not bool")?;
                        want(a.is_numeric() || matches!(op, Eq | Ne), "ordering bools")
                    }
                    BitAnd | BitOr | BitXor => want(
                        ty == a && (a.is_int() || a == Scalar::Bool),
                        "bitwise operation on floats",
                    ),
                    Shl | Shr => want(ty == a && a.is_int(), "a shift of a non-integer"),
                    Add | Sub | Mul | Div | Rem => {
                        want(ty == a && a.is_numeric(), "arithmetic on non-numbers")
                    }
                }
            }
            Expr::Cast(a, t) => {
                self.operand(f, h, *a)?;
                want(*t == ty, "a cast of another type")
            }
            Expr::Math(m, args) => {
                want(
                    args.len() == m.arity(),
                    "a math call with the wrong number of arguments",
                )?;
                for &a in args {
                    want(
                        self.operand(f, h, a)? == ty,
                        "a math argument of another type",
                    )?;
                }
                want(
                    ty.is_float() || (m.integer_ok() && ty.is_int()),
                    "a math function on this type",
                )
            }
            Expr::Reduce(op, a, b) => {
                let (a, b) = (self.operand(f, h, *a)?, self.operand(f, h, *b)?);
                want(
                    a == b && a == ty && reduction_legal(*op, ty),
                    "a reduction combine of mismatched or illegal types",
                )
            }
            Expr::InvocationIndex => want(
                ty == Scalar::U32 && this.is_none(),
                "an invocation index outside the kernel entry, or not u32",
            ),
            Expr::Atomic {
                array,
                index,
                op,
                value,
            } => {
                let t = self.index(f, Some(h), *array, index, span)?;
                let v = self.operand(f, h, *value)?;
                want(t == ty && v == ty, "an atomic of another type")?;
                want(
                    matches!(
                        ty,
                        Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
                    ),
                    "an atomic on an element type without atomics",
                )?;
                want(
                    ty.is_int()
                        || !matches!(op, AtomicKind::And | AtomicKind::Or | AtomicKind::Xor),
                    "a bitwise atomic on floats",
                )
            }
            Expr::Call(callee, args) => {
                if callee.index() >= self.k.functions.len() {
                    return Err(bad(span, "a call of no function"));
                }
                // Functions are appended after their callees: calls point backwards,
                // so the call graph has no cycle.
                if this.is_some_and(|t| callee.index() >= t.index()) {
                    return Err(bad(
                        span,
                        "a call that is not to an earlier function (recursion?)",
                    ));
                }
                let g = &self.k.functions[*callee];
                want(
                    g.args.len() == args.len(),
                    "a call with the wrong number of arguments",
                )?;
                for (&a, &p) in args.iter().zip(&g.args) {
                    want(
                        self.operand(f, h, a)? == g.locals[p].ty,
                        "a call argument of another type",
                    )?;
                }
                want(
                    g.ret.unwrap_or(Scalar::Bool) == ty,
                    "a call typed unlike its function",
                )
            }
        }
    }

    fn block(&self, cx: &mut Cx, b: &Block) -> Result<(), Diag> {
        for s in b {
            self.stmt(cx, s)?;
        }
        Ok(())
    }

    fn stmt(&self, cx: &mut Cx, s: &Stmt) -> Result<(), Diag> {
        let f = cx.f;
        let span = s.span;
        let e = |h: ExprH| -> Result<Scalar, Diag> {
            if h.index() >= f.exprs.len() {
                Err(bad(span, "no such expression"))
            } else {
                Ok(f.ty(h))
            }
        };
        let want = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(bad(span, what.to_string()))
            }
        };
        match &s.kind {
            StmtKind::Store { local, value } => {
                want(local.index() < f.locals.len(), "a store to no local")?;
                want(e(*value)? == f.locals[*local].ty, "a store of another type")
            }
            StmtKind::StoreElem {
                array,
                index,
                value,
            } => {
                for &i in index {
                    e(i)?;
                }
                let t = self.index(f, None, *array, index, span)?;
                want(e(*value)? == t, "an element store of another type")
            }
            StmtKind::Eval(h) => e(*h).map(|_| ()),
            StmtKind::CallTuple {
                func,
                args,
                results,
            } => {
                want(
                    func.index() < self.k.functions.len()
                        && cx.this.is_none_or(|t| func.index() < t.index()),
                    "a tuple call that is not to an earlier function",
                )?;
                let g = &self.k.functions[*func];
                want(
                    g.args.len() == args.len()
                        && !g.ret_tuple.is_empty()
                        && g.ret_tuple.len() == results.len(),
                    "a tuple call with the wrong number of arguments or results",
                )?;
                for (&a, &p) in args.iter().zip(&g.args) {
                    want(e(a)? == g.locals[p].ty, "a call argument of another type")?;
                }
                for (&r, &t) in results.iter().zip(&g.ret_tuple) {
                    want(
                        r.index() < f.locals.len() && f.locals[r].ty == t,
                        "a tuple result stored to a local of another type",
                    )?;
                }
                Ok(())
            }
            StmtKind::PrivateInit(array) => {
                want(cx.this.is_none(), "private copies started in a function")?;
                want(
                    self.k.private_copies.iter().any(|p| p.array == *array),
                    "private copies started for an array without any",
                )
            }
            StmtKind::Cache { array, lo, .. } => {
                want(array.index() < self.k.arrays.len(), "a cache of no array")?;
                want(e(*lo)?.is_int(), "a cache bound that is not an integer")
            }
            StmtKind::If { cond, then, els } => {
                want(e(*cond)? == Scalar::Bool, "a condition that is not bool")?;
                self.block(cx, then)?;
                self.block(cx, els)
            }
            StmtKind::Loop { body, continuing } => {
                cx.loops += 1;
                self.block(cx, body)?;
                let was = cx.in_continuing;
                cx.in_continuing = true;
                self.block(cx, continuing)?;
                cx.in_continuing = was;
                cx.loops -= 1;
                Ok(())
            }
            StmtKind::Break => {
                want(!cx.in_continuing, "`break` in a continuing block")?;
                want(cx.loops > 0, "`break` outside a loop")
            }
            StmtKind::Continue => {
                want(!cx.in_continuing, "`continue` in a continuing block")?;
                want(
                    cx.loops > 0 || cx.this.is_none(),
                    "`continue` outside a loop",
                )
            }
            StmtKind::Barrier => want(
                cx.this.is_none() && !cx.in_continuing,
                "a barrier outside the kernel body",
            ),
            StmtKind::VectorLoop(v) => {
                want(
                    cx.this.is_none() && !cx.in_continuing && !cx.in_vector,
                    "a vector loop outside the kernel body, or nested",
                )?;
                want(
                    matches!(self.k.shape, Shape::Gang | Shape::Region),
                    "a vector loop in a kernel without gangs",
                )?;
                for l in &v.levels {
                    want(
                        l.var.index() < f.locals.len()
                            && l.ty.is_int()
                            && f.locals[l.var].ty == l.ty
                            && e(l.lo)? == l.ty
                            && e(l.hi)? == l.ty,
                        "a vector loop level of mixed types",
                    )?;
                }
                for r in &v.reductions {
                    want(
                        r.target.index() < f.locals.len()
                            && r.private.index() < f.locals.len()
                            && f.locals[r.target].ty == f.locals[r.private].ty
                            && reduction_legal(r.op, f.locals[r.target].ty),
                        "a vector loop reduction of mismatched or illegal types",
                    )?;
                }
                let loops = std::mem::replace(&mut cx.loops, 1);
                cx.in_vector = true;
                let r = self.block(cx, &v.body);
                cx.in_vector = false;
                cx.loops = loops;
                r
            }
            StmtKind::Return(v) => {
                want(!cx.in_continuing, "`return` in a continuing block")?;
                want(cx.this.is_some(), "`return` in a kernel body")?;
                let t = match v {
                    Some(v) => Some(e(*v)?),
                    None => None,
                };
                want(
                    t == f.ret && f.ret_tuple.is_empty(),
                    "a return of another type",
                )
            }
            StmtKind::ReturnTuple(vs) => {
                want(!cx.in_continuing, "`return` in a continuing block")?;
                want(cx.this.is_some(), "`return` in a kernel body")?;
                want(
                    vs.len() == f.ret_tuple.len(),
                    "a tuple return of another arity",
                )?;
                for (&v, &t) in vs.iter().zip(&f.ret_tuple) {
                    want(e(v)? == t, "a tuple return of another type")?;
                }
                Ok(())
            }
        }
    }
}
