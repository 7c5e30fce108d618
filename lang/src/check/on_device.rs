//! `acc_on_device(t)` with a device type `t` (a `str`, as
//! `acc_get_device_type()` gives it, or a bare name `acc_device_host`,
//! `acc_device_not_host`, `acc_device_default`, `acc_device_none`).
//!
//! Strings live on the host, so in device code the answer is worked out
//! before the construct, for where it will run (the current device, or the
//! host when its `if` is false): a hidden
//! `bool` local set just before the construct (the statement list takes
//! it from [`Checker::hoisted`]) and read inside like any captured scalar.
//! The argument must be known there: a literal, a bare name, or a `str`
//! variable declared outside the construct.

use super::{Binding, Checker};
use crate::ast;
use crate::diag::Diag;
use crate::hir::{self, ExprH};
use crate::span::Span;
use crate::types::Type;
use crate::value::Value;

/// The bare names of OpenACC's `acc_device_t` values accl accepts, and the
/// device type each is.
pub(super) fn device_type_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "acc_device_none" => "none",
        "acc_device_default" => "default",
        "acc_device_host" => "host",
        "acc_device_not_host" => "not_host",
        _ => return None,
    })
}

impl Checker<'_> {
    pub(super) fn on_device_call(
        &mut self,
        f: &ast::Ident,
        a: &ast::Expr,
        span: Span,
    ) -> (ExprH, Type) {
        let Some(id) = self.builtins.lookup("acc_on_device") else {
            return self.error_expr(span);
        };
        // In a routine's own `loop` (outside compute constructs) the
        // argument is a string of the function, which keeps it on the host.
        let compute = self.dev.first().filter(|f| {
            matches!(
                f.kind,
                ast::DirectiveKind::Parallel | ast::DirectiveKind::ParallelLoop
            )
        });
        let Some(frame) = compute else {
            let (h, t) = self.expr(a, Some(Type::Str));
            if t != Type::Str && t != Type::Error {
                self.err(
                    Diag::error(
                        "accl::type::builtin_args",
                        format!("`{}` takes a device type (a `str`), not a `{t}`", f.name),
                        a.span,
                        "not a device type",
                    )
                    .with_help("write `acc_on_device(acc_device_host)`, `acc_on_device(\"gpu\")` or `acc_on_device(acc_get_device_type())`"),
                );
                return self.error_expr(span);
            }
            return self.push(hir::Expr::Builtin(id, vec![h]), Type::BOOL, span);
        };
        let (base, ks, cond) = (frame.scope_base, frame.kind_span, frame.if_);
        // The argument, as host code before the construct.
        let arg = match &a.kind {
            ast::ExprKind::Str(s) => Some(hir::Expr::Str(s.clone())),
            ast::ExprKind::Var(n) => match self.lookup(n) {
                Some(Binding::Local(l))
                    if self.body.locals[l].ty == Type::Str
                        && self.body.local_scope[l.index()] < base =>
                {
                    Some(hir::Expr::Local(l))
                }
                None => device_type_name(n).map(|t| hir::Expr::Str(t.to_string())),
                _ => None,
            },
            _ => None,
        };
        let Some(arg) = arg else {
            self.err(
                Diag::error(
                    "accl::device::on_device_arg",
                    format!("in device code, `{}` takes a device type known before the construct", f.name),
                    a.span,
                    "not known before the construct",
                )
                .with_label(ks, "device construct")
                .with_help("pass a string literal, a bare name such as `acc_device_not_host`, or a `str` variable set before the construct"),
            );
            return self.error_expr(span);
        };
        let (arg, _) = self.push(arg, Type::Str, a.span);
        // Where the construct runs: on the device unless its `if` is false
        // (the condition evaluated here once more).
        let kernel = match cond {
            Some(c) => c,
            None => {
                self.push(hir::Expr::Const(Value::Bool(true)), Type::BOOL, a.span)
                    .0
            }
        };
        let (init, _) = self.push(hir::Expr::Builtin(id, vec![arg, kernel]), Type::BOOL, span);
        let name = format!(
            "{}#{}",
            self.src.get(span.range()).unwrap_or("acc_on_device(..)"),
            self.body.locals.len()
        );
        self.hoist(&name, Type::BOOL, init, base, span);
        // Read inside like any scalar from before the construct.
        self.expr(&ast::Expr::new(ast::ExprKind::Var(name), span), None)
    }

    /// A hidden local `name` (a `#` in it, so no program names it) that
    /// the code just before the construct whose scopes start at `base`
    /// sets to `init`; the construct captures it as any local.
    pub(super) fn hoist(&mut self, name: &str, ty: Type, init: ExprH, base: usize, span: Span) {
        let local = self.body.locals.append(
            hir::Local {
                name: name.to_string(),
                ty,
                mutable: false,
                constant: false,
                data_scalar: false,
            },
            span,
        );
        self.body.local_scope.push(base - 1);
        if let Some(s) = self.scopes.get_mut(base - 1) {
            s.names
                .insert(name.to_string(), (Binding::Local(local), span));
        }
        self.hoisted.push(hir::Stmt {
            kind: hir::StmtKind::Let { local, init },
            span,
        });
    }
}
