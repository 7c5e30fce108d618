//! Statements: HIR statements to KIR ones, `for` loops as KIR loops, and
//! the effects of gang-redundant code made vector-single (done by
//! invocation 0, then a barrier).

use super::{internal, op_is_compare, scalar_of, Binding, Fx, Lowerer};
use crate::kir::*;
use crate::unsupported;
use lang::hir::{self, DirectiveKind};
use lang::{Diag, Scalar, Span, Type, Value};

impl Lowerer<'_> {
    pub(super) fn block(&mut self, fx: &mut Fx, b: &[hir::Stmt]) -> Result<Block, Diag> {
        let mut out = Vec::new();
        for s in b {
            self.stmt(fx, s, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, fx: &mut Fx, s: &hir::Stmt, out: &mut Block) -> Result<(), Diag> {
        // Routines called by a simple statement are inlined before it.
        fx.inline_ok = matches!(
            s.kind,
            hir::StmtKind::Let { .. }
                | hir::StmtKind::LetTuple { .. }
                | hir::StmtKind::Assign { .. }
                | hir::StmtKind::Expr(_)
        );
        let mut mine = Vec::new();
        let r = self.stmt_inner(fx, s, &mut mine);
        fx.inline_ok = false;
        r?;
        let mut mine: Block = std::mem::take(&mut fx.pending)
            .into_iter()
            .chain(mine)
            .collect();
        if !fx.redundant {
            out.append(&mut mine);
            return Ok(());
        }
        // Gang-redundant code: every effect made vector-single (the
        // inlined routines' statements were made so already).
        for st in mine {
            let effect = match &st.kind {
                // Made vector-single whole: an atomic capture in its value
                // (`r[k] = atomic_add(a[k], v)`, `atomic capture { r[k] =
                // a[k]; a[k] += v; }`) runs once, on the lane that stores.
                StmtKind::StoreElem { .. } => true,
                StmtKind::Eval(e) => self.has_effects(&fx.out, *e),
                // Its results are every lane's: it cannot be one lane's.
                StmtKind::CallTuple { func, args, .. } => {
                    self.refuse_effects(fx, args, st.span)?;
                    if self.fn_effects.get(func).copied().unwrap_or(true) {
                        return Err(unsupported(
                            st.span,
                            "a call of a function that returns a tuple and writes arrays, outside `loop vector` in a gang",
                        )
                        .with_help("move it into a `loop vector`, or return the values through arrays"));
                    }
                    false
                }
                StmtKind::Store { value, .. } => {
                    self.refuse_effects(fx, [value], st.span)?;
                    false
                }
                StmtKind::If { cond, .. } => {
                    self.refuse_effects(fx, [cond], st.span)?;
                    false
                }
                _ => false,
            };
            if effect {
                let span = st.span;
                let lid = fx.out.add_expr(Expr::InvocationIndex, Scalar::U32, span);
                let zero = fx.konst(Value::U32(0), span);
                let is0 = fx
                    .out
                    .add_expr(Expr::Binary(BinOp::Eq, lid, zero), Scalar::Bool, span);
                out.push(Fx::stmt(
                    StmtKind::If {
                        cond: is0,
                        then: vec![st],
                        els: vec![],
                    },
                    span,
                ));
                out.push(Fx::stmt(StmtKind::Barrier, span));
            } else {
                out.push(st);
            }
        }
        Ok(())
    }

    /// Gang-redundant code cannot use a value that only invocation 0 computes.
    pub(super) fn refuse_effects<'e>(
        &self,
        fx: &Fx,
        es: impl IntoIterator<Item = &'e ExprH>,
        span: Span,
    ) -> Result<(), Diag> {
        for &e in es {
            if self.has_effects(&fx.out, e) {
                return Err(unsupported(
                    span,
                    "an atomic capture or a call of a function that writes arrays, used as a value outside `loop vector` in a gang",
                )
                .with_help("move it into a `loop vector`, or make it a statement of its own"));
            }
        }
        Ok(())
    }

    /// Does evaluating `e` write memory (an atomic, or a call of a function that does)?
    pub(super) fn has_effects(&self, f: &Function, e: ExprH) -> bool {
        match &f.exprs[e] {
            // Every invocation may read: an atomic load changes nothing.
            Expr::Atomic {
                op: AtomicKind::Read,
                index,
                ..
            } => index.iter().any(|&a| self.has_effects(f, a)),
            Expr::Atomic { .. } => true,
            Expr::Call(g, args) => {
                self.fn_effects.get(g).copied().unwrap_or(true)
                    || args.iter().any(|&a| self.has_effects(f, a))
            }
            Expr::Load { index, .. } => index.iter().any(|&a| self.has_effects(f, a)),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.has_effects(f, *a),
            Expr::Binary(_, a, b) | Expr::Reduce(_, a, b) => {
                self.has_effects(f, *a) || self.has_effects(f, *b)
            }
            Expr::Math(_, args) => args.iter().any(|&a| self.has_effects(f, a)),
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::InvocationIndex => false,
        }
    }

    fn stmt_inner(&mut self, fx: &mut Fx, s: &hir::Stmt, out: &mut Block) -> Result<(), Diag> {
        use hir::StmtKind as K;
        let span = s.span;
        match &s.kind {
            K::Let { local, init } => {
                let l = &fx.src.locals[*local];
                if let Type::Array(..) = l.ty {
                    // `let B = A;` aliases.
                    let a = self.array_of(fx, *init)?;
                    fx.map.insert(*local, Binding::Array(a));
                    return Ok(());
                }
                let ty = scalar_of(l.ty, span)?;
                let name = l.name.clone();
                let value = self.expr(fx, *init)?;
                let kl = fx.local(&name, ty, span);
                fx.map.insert(*local, Binding::Local(kl));
                out.push(Fx::stmt(StmtKind::Store { local: kl, value }, span));
            }
            K::Assign { place, op, value } => match place {
                hir::Place::Global(_) => {
                    return Err(crate::unsupported(
                        span,
                        "a top-level variable inside a function",
                    ))
                }
                hir::Place::Local(l) => {
                    let kl = match fx.map.get(l) {
                        Some(Binding::Local(kl))
                            if fx.vector_locals.as_ref().is_some_and(|v| !v.contains(kl)) =>
                        {
                            let name = &fx.src.locals[*l].name;
                            return Err(Diag::error(
                                "accl::compile::assign_gang_variable",
                                format!("`{name}` belongs to the gang and cannot be assigned in a `loop vector` iteration"),
                                span,
                                "assigned here",
                            )
                            .with_help(format!("use `reduction(..: {name})` on the `loop`, or declare `{name}` inside the loop")));
                        }
                        Some(Binding::Local(kl)) => *kl,
                        Some(Binding::Array(_)) => {
                            return Err(unsupported(span, "assigning whole arrays in device code"))
                        }
                        _ => {
                            let name = &fx.src.locals[*l].name;
                            return Err(Diag::error(
                                "accl::compile::assign_captured",
                                format!("`{name}` is captured by value and cannot be assigned in the kernel"),
                                span,
                                "assigned here",
                            )
                            .with_help(format!("use `reduction(..: {name})`, or declare `{name}` inside the loop")));
                        }
                    };
                    let mut v = self.expr(fx, *value)?;
                    if let Some(op) = op {
                        let ty = fx.out.locals[kl].ty;
                        let cur = fx.out.add_expr(Expr::Local(kl), ty, span);
                        let rty = if op_is_compare(*op) { Scalar::Bool } else { ty };
                        v = fx.out.add_expr(Expr::Binary(*op, cur, v), rty, span);
                    }
                    out.push(Fx::stmt(
                        StmtKind::Store {
                            local: kl,
                            value: v,
                        },
                        span,
                    ));
                }
                hir::Place::Element { array, indices } => {
                    let a = self.array_of(fx, *array)?;
                    let mut index = Vec::new();
                    for &i in indices {
                        index.push(self.expr(fx, i)?);
                    }
                    let mut v = self.expr(fx, *value)?;
                    if let Some(op) = op {
                        // Evaluate each index once: `a[f(i)] += v`.
                        let mut temps = Vec::new();
                        for e in index.drain(..) {
                            let ty = fx.out.ty(e);
                            let t = fx.local("index", ty, span);
                            out.push(Fx::stmt(StmtKind::Store { local: t, value: e }, span));
                            temps.push(t);
                        }
                        let mk = |fx: &mut Fx| -> Vec<ExprH> {
                            temps
                                .iter()
                                .map(|&t| {
                                    let ty = fx.out.locals[t].ty;
                                    fx.out.add_expr(Expr::Local(t), ty, span)
                                })
                                .collect()
                        };
                        let elem = self.arrays[a].elem;
                        let i1 = mk(fx);
                        let cur = fx.out.add_expr(
                            Expr::Load {
                                array: a,
                                index: i1,
                            },
                            elem,
                            span,
                        );
                        v = fx.out.add_expr(Expr::Binary(*op, cur, v), elem, span);
                        index = mk(fx);
                    }
                    out.push(Fx::stmt(
                        StmtKind::StoreElem {
                            array: a,
                            index,
                            value: v,
                        },
                        span,
                    ));
                }
            },
            K::Expr(e) => {
                let e = self.expr(fx, *e)?;
                out.push(Fx::stmt(StmtKind::Eval(e), span));
            }
            K::If { cond, then, els } => {
                let cond = self.expr(fx, *cond)?;
                let then = self.block(fx, then)?;
                let els = self.block(fx, els)?;
                out.push(Fx::stmt(StmtKind::If { cond, then, els }, span));
            }
            K::While { cond, body } => {
                fx.loop_depth += 1;
                let c = self.expr(fx, *cond)?;
                let nc = fx
                    .out
                    .add_expr(Expr::Unary(hir::UnOp::Not, c), Scalar::Bool, span);
                let mut b = vec![Fx::stmt(
                    StmtKind::If {
                        cond: nc,
                        then: vec![Fx::stmt(StmtKind::Break, span)],
                        els: vec![],
                    },
                    span,
                )];
                b.extend(self.block(fx, body)?);
                fx.loop_depth -= 1;
                out.push(Fx::stmt(
                    StmtKind::Loop {
                        body: b,
                        continuing: vec![],
                    },
                    span,
                ));
            }
            K::For(f) => self.for_loop(fx, f, span, out)?,
            K::Break => {
                if fx.loop_depth == 0 {
                    return Err(unsupported(
                        span,
                        "`break` out of a parallel loop's iteration",
                    ));
                }
                out.push(Fx::stmt(StmtKind::Break, span));
            }
            K::Continue => out.push(Fx::stmt(StmtKind::Continue, span)),
            K::Return(_) if fx.inlined => {
                return Err(unsupported(
                    span,
                    "a `return` before the end of a `routine` function that runs inline",
                )
                .with_help("return once, as the function's last statement"));
            }
            K::Return(Some(e)) if matches!(fx.src.exprs[*e], hir::Expr::Tuple(_)) => {
                self.return_tuple(fx, *e, span, out)?
            }
            K::LetTuple { locals, init } => self.let_tuple(fx, locals, *init, span, out)?,
            K::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.expr(fx, *e)?),
                    None => None,
                };
                out.push(Fx::stmt(StmtKind::Return(v), span));
            }
            K::Block(b) => out.extend(self.block(fx, b)?),
            K::Construct(c) if c.kind == DirectiveKind::Loop => self.inner_loop(fx, c, out)?,
            K::Construct(c) => {
                return Err(unsupported(
                    c.kind_span,
                    "device constructs nested inside a kernel",
                ));
            }
            K::Cache { array, lo, count } => {
                if let Some(Binding::Array(a)) = fx.map.get(array).copied() {
                    let lo = self.expr(fx, *lo)?;
                    out.push(Fx::stmt(
                        StmtKind::Cache {
                            array: a,
                            lo,
                            count: *count,
                        },
                        span,
                    ));
                }
            }
            K::Atomic { place, op, value } => {
                let hir::Place::Element { array, indices } = place else {
                    return Err(unsupported(span, "`atomic` on a scalar variable"));
                };
                let kind = match op {
                    hir::AtomicOp::Add => AtomicKind::Add,
                    hir::AtomicOp::Sub => AtomicKind::Sub,
                    hir::AtomicOp::Mul => AtomicKind::Mul,
                    hir::AtomicOp::Max => AtomicKind::Max,
                    hir::AtomicOp::Min => AtomicKind::Min,
                    hir::AtomicOp::And => AtomicKind::And,
                    hir::AtomicOp::Or => AtomicKind::Or,
                    hir::AtomicOp::Xor => AtomicKind::Xor,
                    hir::AtomicOp::Div => AtomicKind::Div,
                    hir::AtomicOp::Shl => AtomicKind::Shl,
                    hir::AtomicOp::Shr => AtomicKind::Shr,
                    hir::AtomicOp::RevSub => AtomicKind::RevSub,
                    hir::AtomicOp::RevDiv => AtomicKind::RevDiv,
                    hir::AtomicOp::RevShl => AtomicKind::RevShl,
                    hir::AtomicOp::RevShr => AtomicKind::RevShr,
                };
                let e = self.atomic(fx, *array, indices, kind, *value, span)?;
                out.push(Fx::stmt(StmtKind::Eval(e), span));
            }
        }
        Ok(())
    }

    /// `for v in lo..hi { body }` as
    /// `v = lo; end = hi; loop { if !(v < end) break; body; continuing: v += 1 }`
    /// (`..=`: a `more` flag, so that `hi == MAX` does not overflow).
    pub(super) fn for_loop(
        &mut self,
        fx: &mut Fx,
        f: &hir::ForLoop,
        span: Span,
        out: &mut Block,
    ) -> Result<(), Diag> {
        let h = &f.header;
        let ty = scalar_of(fx.src.locals[h.var].ty, h.span)?;
        let name = fx.src.locals[h.var].name.clone();
        let lo = self.expr(fx, h.lo)?;
        let hi = self.expr(fx, h.hi)?;
        let v = fx.local(&name, ty, h.span);
        let end = fx.local("end", ty, h.span);
        fx.map.insert(h.var, Binding::Local(v));
        out.push(Fx::stmt(
            StmtKind::Store {
                local: v,
                value: lo,
            },
            span,
        ));
        out.push(Fx::stmt(
            StmtKind::Store {
                local: end,
                value: hi,
            },
            span,
        ));
        let load = |fx: &mut Fx, l: LocalH| fx.out.add_expr(Expr::Local(l), ty, span);
        let one = match Value::IntLit(1).concretize(ty) {
            Some(one) => one,
            None => return Err(internal(span, "a loop variable that is not an integer")),
        };
        let mut continuing = Vec::new();
        let cond = if h.inclusive {
            let more = fx.local("more", Scalar::Bool, h.span);
            let (a, b) = (load(fx, v), load(fx, end));
            let init = fx
                .out
                .add_expr(Expr::Binary(hir::BinOp::Le, a, b), Scalar::Bool, span);
            out.push(Fx::stmt(
                StmtKind::Store {
                    local: more,
                    value: init,
                },
                span,
            ));
            let (a, b) = (load(fx, v), load(fx, end));
            let ne = fx
                .out
                .add_expr(Expr::Binary(hir::BinOp::Ne, a, b), Scalar::Bool, span);
            continuing.push(Fx::stmt(
                StmtKind::Store {
                    local: more,
                    value: ne,
                },
                span,
            ));
            fx.out.add_expr(Expr::Local(more), Scalar::Bool, span)
        } else {
            let (a, b) = (load(fx, v), load(fx, end));
            fx.out
                .add_expr(Expr::Binary(hir::BinOp::Lt, a, b), Scalar::Bool, span)
        };
        let a = load(fx, v);
        let c1 = fx.konst(one, span);
        let inc = fx
            .out
            .add_expr(Expr::Binary(hir::BinOp::Add, a, c1), ty, span);
        continuing.push(Fx::stmt(
            StmtKind::Store {
                local: v,
                value: inc,
            },
            span,
        ));
        let nc = fx
            .out
            .add_expr(Expr::Unary(hir::UnOp::Not, cond), Scalar::Bool, span);
        let mut body = vec![Fx::stmt(
            StmtKind::If {
                cond: nc,
                then: vec![Fx::stmt(StmtKind::Break, span)],
                els: vec![],
            },
            span,
        )];
        fx.loop_depth += 1;
        body.extend(self.block(fx, &f.body)?);
        fx.loop_depth -= 1;
        out.push(Fx::stmt(StmtKind::Loop { body, continuing }, span));
        Ok(())
    }
}
