//! Calls: builtins (typing rules, device legality, places and type
//! arguments) and user functions (arity, argument coercion, device calls).

use super::{Binding, Checker, DeviceCall};
use crate::ast;
use crate::diag::Diag;
use crate::hir::{self, ExprH};
use crate::span::Span;
use crate::types::Type;

impl Checker<'_> {
    pub(super) fn call(&mut self, f: &ast::Ident, args: &[ast::Expr], span: Span) -> (ExprH, Type) {
        if let Some(&fh) = self.fn_names.get(&f.name) {
            let fh = self.routine_callee(fh, f, span);
            return self.user_call(fh, f, args, span);
        }
        if f.name == "split" {
            self.split_outside_for(span);
            for a in args {
                self.expr(a, None);
            }
            return self.error_expr(span);
        }
        if f.name == "acc_on_device" && args.len() == 1 {
            return self.on_device_call(f, &args[0], span);
        }
        if super::routines::is_routine(&f.name) {
            self.err(
                Diag::error(
                    "accl::type::routine_value",
                    format!("`{}` is a statement: it gives no value", f.name),
                    span,
                    "used as a value",
                )
                .with_help("call it on a line of its own, as the directive it equals"),
            );
            for a in args {
                self.expr(a, None);
            }
            return self.error_expr(span);
        }
        let Some(id) = self.builtins.lookup(&f.name) else {
            let mut names: Vec<String> = Vec::new();
            if self.suggest_budget > 0 {
                names.extend(self.fn_names.keys().cloned());
                names.extend(self.builtins.names().map(String::from));
            }
            let mut d = Diag::error(
                "accl::name::unknown_fn",
                format!("cannot find function `{}`", f.name),
                f.span,
                "not a function or builtin",
            );
            let budget = &mut self.suggest_budget;
            let similar = names.iter().map(String::as_str);
            if let Some(s) = crate::diag::did_you_mean_within(&f.name, similar, budget) {
                d = d.with_help(format!("a function with a similar name exists: `{s}`"));
            }
            self.err(d);
            for a in args {
                self.expr(a, None);
            }
            return self.error_expr(span);
        };
        let b = self.builtins.get(id).clone();
        // Device legality of builtins is known now.
        let host_query = self.host_bounds && matches!(b.name.as_str(), "len" | "shape");
        if let Some(frame) = self.dev.first().filter(|_| !host_query) {
            if !b.effect.device_legal() {
                let ks = frame.kind_span;
                self.err(
                    Diag::error(
                        "accl::device::host_builtin",
                        format!("`{}` cannot be called inside a device construct", f.name),
                        f.span,
                        format!("`{}` {}", f.name, b.effect.reason()),
                    )
                    .with_label(ks, "device construct")
                    .with_help("move this call before or after the construct"),
                );
            }
        }
        if self.in_fn && !b.effect.device_legal() {
            if let Some(func) = self.body.func {
                let facts = &mut self.fn_facts[func.index()];
                if facts.violation.is_none() {
                    facts.violation = Some((
                        span,
                        format!("calls `{}`, which {}", f.name, b.effect.reason()),
                    ));
                }
            }
        }
        if let Some(k) = super::literals::written_arg(&b.name) {
            if let Some(a) = args.get(k) {
                self.builtin_writes(a, &b.name);
            }
        }
        let mut hs = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        let mut spans = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            if i == 0 && b.name == "acc_is_present" {
                if let Some(l) = self.scalar_in_data(a) {
                    // The scalar's device copy is what is asked about: it
                    // is given one (`data_scalars`), so it is an array of
                    // one element from here on.
                    if let Type::Scalar(s) = self.body.locals[l].ty {
                        self.present_scalars.push((self.body.func, l, a.span));
                        let (h, t) = self.push(hir::Expr::Local(l), Type::Array(s, 1), a.span);
                        let mut whole = vec![(h, t, a.span)];
                        self.whole_axis(a.span, &mut whole);
                        for (h, t, s) in whole {
                            hs.push(h);
                            tys.push(t);
                            spans.push(s);
                        }
                        continue;
                    }
                }
            }
            if b.sections {
                for (h, t, s) in self.section_call_arg(a) {
                    hs.push(h);
                    tys.push(t);
                    spans.push(s);
                }
                continue;
            }
            if i == 0 && b.place_arg {
                match &a.kind {
                    ast::ExprKind::Index(arr, ix) => {
                        match self.index_parts(arr, ix, a.span, true) {
                            Some((array, elem, indices)) => {
                                let (h, t) = self.push(
                                    hir::Expr::Index(array, indices),
                                    Type::Scalar(elem),
                                    a.span,
                                );
                                hs.push(h);
                                tys.push(t);
                                spans.push(a.span);
                            }
                            None => return self.error_expr(span),
                        }
                    }
                    _ => {
                        self.expr(a, None);
                        self.err(
                            Diag::error(
                                "accl::type::atomic_target",
                                format!(
                                    "the first argument of `{}` must be an array element",
                                    f.name
                                ),
                                a.span,
                                "not an array element",
                            )
                            .with_help(match f.name.as_str() {
                                "atomic_read" => "write `atomic read v = a[i];`".to_string(),
                                "atomic_write" => "write `atomic write a[i] = v;`".to_string(),
                                name => format!("write `{name}(a[i], v)`"),
                            }),
                        );
                        return self.error_expr(span);
                    }
                }
                continue;
            }
            let (h, t) = self.expr(a, None);
            hs.push(h);
            tys.push(t);
            spans.push(a.span);
        }
        if tys.contains(&Type::Error) {
            return self.error_expr(span);
        }
        match b.sig(&tys) {
            Ok(sig) => {
                for ((h, t), (p, s)) in hs.iter().zip(&tys).zip(sig.params.iter().zip(&spans)) {
                    self.coerce(*h, *t, *p, *s);
                }
                // Literals that the signature left untyped take their default.
                for (h, t) in hs.iter().zip(&tys) {
                    if self.body.types[h.index()].is_literal() {
                        self.finalize(*h, *t);
                    }
                }
                self.push(hir::Expr::Builtin(id, hs), sig.ret, span)
            }
            Err(msg) => {
                self.err(
                    Diag::error(
                        "accl::type::builtin_args",
                        format!("`{}` {msg}", f.name),
                        span,
                        "in this call",
                    )
                    .with_help(format!("usage: {}", b.synopsis)),
                );
                self.error_expr(span)
            }
        }
    }

    fn user_call(
        &mut self,
        fh: hir::FnH,
        f: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> (ExprH, Type) {
        let func = &self.out.functions[fh];
        let ret = func.ret;
        let decl_span = func.span;
        let params = self.param_types(fh);
        if params.len() != args.len() {
            self.err(
                Diag::error(
                    "accl::type::arity",
                    format!(
                        "`{}` takes {} argument{} but {} {} given",
                        f.name,
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                    span,
                    "wrong number of arguments",
                )
                .with_label(self.fn_name_span(decl_span), "defined here"),
            );
            for a in args {
                self.expr(a, None);
            }
            return self.error_expr(span);
        }
        let mut hs = Vec::with_capacity(args.len());
        for (i, (a, p)) in args.iter().zip(&params).enumerate() {
            let (h, t) = if let (ast::ExprKind::Var(name), Type::Array(..)) = (&a.kind, p) {
                if self.is_constant_array(name) {
                    self.const_args.push(super::ConstArg {
                        callee: fh,
                        param: i,
                        name: name.clone(),
                        span: a.span,
                    });
                    self.expr(a, None)
                } else {
                    // An array argument may be written by the callee.
                    self.array_arg(a, fh, i)
                }
            } else {
                self.expr(a, Some(*p))
            };
            self.coerce(h, t, *p, a.span);
            hs.push(h);
        }
        if let Some(frame) = self.dev.first() {
            self.device_calls.push(DeviceCall {
                callee: fh,
                call_span: span,
                construct_span: frame.kind_span,
            });
            if let Some(c) = &mut self.capture {
                if !c.functions.contains(&fh) {
                    c.functions.push(fh);
                }
            }
        }
        self.check_call_level(fh, span);
        match self.body.func {
            Some(caller) => self.fn_facts[caller.index()].callees.push((fh, span)),
            None => self.main_calls.push((fh, span)),
        }
        self.push(hir::Expr::Call(fh, hs), ret, span)
    }

    fn array_arg(&mut self, a: &ast::Expr, callee: hir::FnH, param: usize) -> (ExprH, Type) {
        if let ast::ExprKind::Var(name) = &a.kind {
            if let Some(Binding::Local(l)) = self.lookup(name) {
                let ty = self.body.locals[l].ty;
                if ty.is_array() {
                    // The callee may read it as well as write it.
                    self.note_array(l, a.span, false);
                    self.note_array(l, a.span, true);
                    self.note_param_passed(l, callee, param, a.span);
                    return self.push(hir::Expr::Local(l), ty, a.span);
                }
            }
        }
        self.expr(a, None)
    }

    /// Parameter types of a function, from its declaration.
    pub(super) fn param_types(&self, fh: hir::FnH) -> Vec<Type> {
        self.fn_param_tys[fh.index()].clone()
    }
}
