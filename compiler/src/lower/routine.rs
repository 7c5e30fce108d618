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
        let ret = match func.ret {
            Type::Unit => None,
            t => Some(scalar_of(t, span)?),
        };
        let result = ret.map(|t| fx.local(&format!("{}_result", func.name), t, span));
        let (last, rest) = match func.body.block.split_last() {
            Some((
                hir::Stmt {
                    kind: hir::StmtKind::Return(e),
                    ..
                },
                rest,
            )) => (*e, rest),
            _ => (None, &func.body.block[..]),
        };
        // The callee's code writes into the caller's function (one entry).
        let mut callee = Fx::new(String::new(), &func.body);
        callee.out = std::mem::take(&mut fx.out);
        callee.map = map;
        callee.loop_depth = fx.loop_depth.max(1);
        callee.redundant = fx.redundant;
        callee.vector_locals = fx.vector_locals.clone();
        callee.inlined = true;
        let body = self.block(&mut callee, rest);
        let value = match (body.is_ok(), last) {
            (true, Some(e)) => Some(self.expr(&mut callee, e)),
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
        match (value.transpose()?, result) {
            (Some(v), Some(r)) => {
                let ty = fx.out.ty(v);
                if ty != fx.out.locals[r].ty {
                    return Err(internal(span, "an inlined routine's result type"));
                }
                pre.push(Fx::stmt(StmtKind::Store { local: r, value: v }, span));
            }
            (None, None) => {}
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
        Ok(match (result, ret) {
            (Some(r), Some(t)) => fx.out.add_expr(Expr::Local(r), t, span),
            // A call without a result is typed `bool` and never read.
            _ => fx.konst(lang::Value::Bool(false), span),
        })
    }
}
