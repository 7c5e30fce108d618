//! `routine vector|worker|gang` functions: inlined where they are called,
//! so that their `loop`s are loops of the caller's gang (a `loop vector`
//! of a `routine vector` spreads over the lanes of the gang that calls it,
//! its other statements are vector-single like the gang's own). A plain
//! `fn` (`routine seq`) stays a device function of its own
//! ([`super::function`]).
//!
//! The checker allows such a call only where the routine's level is free
//! (in a gang's vector-single code for `routine vector`); lowering accepts
//! it in a simple statement (`let x = f(..);`, `y[i] = 1 + f(..);`,
//! `f(..);`), where the inlined statements can run before the statement.

use super::{internal, scalar_of, Binding, Fx, Lowerer};
use crate::kir::*;
use crate::unsupported;
use lang::hir::{self, FnH};
use lang::{Diag, Span, Type};

impl Lowerer<'_> {
    /// Lower the call `f(args)` by running the body of `f` before the
    /// current statement; its value is a local the body's last `return`
    /// stores.
    pub(super) fn inline_routine(
        &mut self,
        fx: &mut Fx,
        f: FnH,
        args: &[hir::ExprH],
        span: Span,
    ) -> Result<ExprH, Diag> {
        let results = self.inline_call(fx, f, args, span)?;
        Ok(match results.first() {
            Some(&r) => fx.out.add_expr(Expr::Local(r), fx.out.locals[r].ty, span),
            // A call without a result is typed `bool` and never read.
            None => fx.konst(lang::Value::Bool(false), span),
        })
    }

    /// [`Lowerer::inline_routine`]: the locals the body's last `return`
    /// stores, one per element of a tuple (none for no result).
    pub(super) fn inline_call(
        &mut self,
        fx: &mut Fx,
        f: FnH,
        args: &[hir::ExprH],
        span: Span,
    ) -> Result<Vec<LocalH>, Diag> {
        let program = self.program;
        let func = &program.functions[f];
        super::expr::device_function(func, span)?;
        if !fx.inline_ok {
            return Err(unsupported(
                span,
                &format!(
                    "a call of `{}`, a `routine {}` function, in a condition or a loop bound",
                    func.name,
                    func.level.name()
                ),
            )
            .with_help(
                "call it in a statement of its own before, e.g. `let v = f(..);`, and use `v`",
            ));
        }
        // Arguments, in order, before the body.
        let mut map = std::collections::HashMap::new();
        let mut pre = Vec::new();
        for (&a, &p) in args.iter().zip(&func.params) {
            let local = &func.body.locals[p];
            if local.ty.is_array() {
                map.insert(p, Binding::Array(self.array_of(fx, a)?));
            } else {
                let ty = scalar_of(local.ty, span)?;
                let v = self.expr(fx, a)?;
                let l = fx.local(&local.name, ty, span);
                pre.push(Fx::stmt(StmtKind::Store { local: l, value: v }, span));
                map.insert(p, Binding::Local(l));
            }
        }
        let rets = match func.ret {
            Type::Unit => Vec::new(),
            Type::Tuple(t) => t.elems().to_vec(),
            t => vec![scalar_of(t, span)?],
        };
        let results: Vec<LocalH> = rets
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let name = match rets.len() {
                    1 => format!("{}_result", func.name),
                    _ => format!("{}_result{i}", func.name),
                };
                fx.local(&name, t, span)
            })
            .collect();
        let (last, rest) = last_return(&func.body.block);
        // The callee's code writes into the caller's function (one entry).
        let mut callee = Fx::new(String::new(), &func.body);
        callee.out = std::mem::take(&mut fx.out);
        callee.map = map;
        callee.loop_depth = fx.loop_depth.max(1);
        callee.redundant = fx.redundant;
        callee.vector_locals = fx.vector_locals.clone();
        callee.inlined = true;
        let body = self.block(&mut callee, &rest);
        let values = match (body.is_ok(), last) {
            (true, Some(e)) => Some(match &func.body.exprs[e] {
                hir::Expr::Tuple(es) => es
                    .iter()
                    .map(|&x| self.expr(&mut callee, x))
                    .collect::<Result<Vec<_>, _>>(),
                _ => self.expr(&mut callee, e).map(|v| vec![v]),
            }),
            _ => None,
        };
        let tail = std::mem::take(&mut callee.pending);
        fx.out = std::mem::take(&mut callee.out);
        if let (Some(v), Some(new)) = (&mut fx.vector_locals, callee.vector_locals) {
            *v = new;
        }
        let mut body = body?;
        pre.append(&mut body);
        pre.extend(tail);
        match values.transpose()? {
            Some(vs) if vs.len() == results.len() && !vs.is_empty() => {
                for (v, &r) in vs.into_iter().zip(&results) {
                    if fx.out.ty(v) != fx.out.locals[r].ty {
                        return Err(internal(span, "an inlined routine's result type"));
                    }
                    pre.push(Fx::stmt(StmtKind::Store { local: r, value: v }, span));
                }
            }
            None if results.is_empty() => {}
            _ => {
                return Err(unsupported(
                    span,
                    &format!(
                        "`{}`, a `routine {}` function, does not end with its `return`",
                        func.name,
                        func.level.name()
                    ),
                )
                .with_help("return once, as the function's last statement"))
            }
        }
        fx.pending.append(&mut pre);
        Ok(results)
    }
}

/// The value of a body's last statement, a `return`, and the statements
/// before it. `return g(..)` of a tuple is a block that binds `g`'s
/// results and returns them (lang/src/check/tuples.rs): its `return` is
/// the last statement too.
fn last_return(block: &[hir::Stmt]) -> (Option<hir::ExprH>, Vec<hir::Stmt>) {
    use hir::StmtKind as K;
    match block.split_last() {
        Some((s, rest)) => match &s.kind {
            K::Return(e) => (*e, rest.to_vec()),
            K::Block(inner) if matches!(inner.last(), Some(r) if matches!(r.kind, K::Return(_))) => {
                let (e, inner_rest) = last_return(inner);
                let mut all = rest.to_vec();
                all.extend(inner_rest);
                (e, all)
            }
            _ => (None, block.to_vec()),
        },
        None => (None, Vec::new()),
    }
}
