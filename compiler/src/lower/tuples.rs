//! Tuples on the device. A function returning a tuple becomes a device
//! function returning a struct of the elements ([`StmtKind::ReturnTuple`]);
//! a destructuring binds the elements of such a call
//! ([`StmtKind::CallTuple`]) or of a tuple expression to locals. A tuple
//! is never a value of its own in KIR, so the optimisations over
//! expressions see none.

use super::expr::device_function;
use super::{internal, Binding, Fx, Lowerer};
use crate::kir::*;
use lang::hir::{self, FnH, Level};
use lang::{Diag, Scalar, Span, Type};

impl Lowerer<'_> {
    /// `let (a, _, c) = init;` (HIR `LetTuple`).
    pub(super) fn let_tuple(
        &mut self,
        fx: &mut Fx,
        locals: &[Option<hir::LocalH>],
        init: hir::ExprH,
        span: Span,
        out: &mut Block,
    ) -> Result<(), Diag> {
        let Type::Tuple(t) = fx.src.ty(init) else {
            return Err(internal(span, "a destructuring of no tuple"));
        };
        if locals.len() != t.len() {
            return Err(internal(span, "a destructuring of another arity"));
        }
        let mut results = Vec::new();
        for (l, &ty) in locals.iter().zip(t.elems()) {
            let name = l.map_or("_".to_string(), |l| fx.src.locals[l].name.clone());
            let kl = fx.local(&name, ty, span);
            if let Some(l) = l {
                fx.map.insert(*l, Binding::Local(kl));
            }
            results.push(kl);
        }
        match &fx.src.exprs[init] {
            hir::Expr::Tuple(vals) => {
                // The new locals are fresh: no value reads one, so storing
                // each as it is computed is computing all first.
                for (&v, r) in vals.iter().zip(results) {
                    let value = self.expr(fx, v)?;
                    out.push(Fx::stmt(StmtKind::Store { local: r, value }, span));
                }
            }
            // A `routine vector|worker|gang` runs inline, before the
            // statement (its results are locals).
            hir::Expr::Call(f, args) if self.program.functions[*f].level != Level::Seq => {
                let values = self.inline_call(fx, *f, args, span)?;
                for (v, r) in values.into_iter().zip(results) {
                    let ty = fx.out.locals[v].ty;
                    let value = fx.out.add_expr(Expr::Local(v), ty, span);
                    out.push(Fx::stmt(StmtKind::Store { local: r, value }, span));
                }
            }
            hir::Expr::Call(f, args) => {
                let (func, args) = self.tuple_call(fx, *f, args, span)?;
                out.push(Fx::stmt(
                    StmtKind::CallTuple {
                        func,
                        args,
                        results,
                    },
                    span,
                ));
            }
            _ => return Err(internal(span, "a destructuring of no call and no tuple")),
        }
        Ok(())
    }

    /// `return (a, b);`
    pub(super) fn return_tuple(
        &mut self,
        fx: &mut Fx,
        e: hir::ExprH,
        span: Span,
        out: &mut Block,
    ) -> Result<(), Diag> {
        let hir::Expr::Tuple(vals) = &fx.src.exprs[e] else {
            return Err(internal(span, "a tuple return of no tuple"));
        };
        let mut vs = Vec::new();
        for &v in vals {
            vs.push(self.expr(fx, v)?);
        }
        out.push(Fx::stmt(StmtKind::ReturnTuple(vs), span));
        Ok(())
    }

    /// The device function and scalar arguments of a call of `f`, which
    /// returns a tuple.
    fn tuple_call(
        &mut self,
        fx: &mut Fx,
        f: FnH,
        args: &[hir::ExprH],
        span: Span,
    ) -> Result<(FuncH, Vec<ExprH>), Diag> {
        let func = &self.program.functions[f];
        device_function(func, span)?;
        let (scalars, arrays) = self.call_args(fx, f, args)?;
        Ok((self.function(f, arrays, span)?, scalars))
    }

    /// The scalar arguments (lowered) and array arguments of a call of `f`.
    pub(super) fn call_args(
        &mut self,
        fx: &mut Fx,
        f: FnH,
        args: &[hir::ExprH],
    ) -> Result<(Vec<ExprH>, Vec<ArrayH>), Diag> {
        let func = &self.program.functions[f];
        let mut scalars = Vec::new();
        let mut arrays = Vec::new();
        for (&a, &p) in args.iter().zip(&func.params) {
            if func.body.locals[p].ty.is_array() {
                arrays.push(self.array_of(fx, a)?);
            } else {
                scalars.push(self.expr(fx, a)?);
            }
        }
        Ok((scalars, arrays))
    }
}

/// The element types of a function's tuple result (empty: none).
pub(super) fn tuple_elems(t: Type) -> Vec<Scalar> {
    t.tuple().map_or(Vec::new(), |t| t.elems().to_vec())
}
