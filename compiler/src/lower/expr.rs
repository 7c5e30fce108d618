//! Expressions: variables by their binding (a KIR local, a parameter, an
//! array), operators, element loads, calls of device functions, math
//! builtins and atomics.

use super::{internal, op_is_compare, scalar_of, Binding, Fx, Lowerer};
use crate::kir::*;
use crate::unsupported;
use lang::hir;
use lang::{Diag, Effect, Scalar, Span, Value};

impl Lowerer<'_> {
    pub(super) fn array_of(&self, fx: &Fx, e: hir::ExprH) -> Result<ArrayH, Diag> {
        match &fx.src.exprs[e] {
            hir::Expr::Local(l) => match fx.map.get(l) {
                Some(Binding::Array(a)) => Ok(*a),
                _ => Err(internal(fx.src.span(e), "an array that is not captured")),
            },
            _ => Err(unsupported(
                fx.src.span(e),
                "array values other than variables in device code",
            )),
        }
    }

    /// Lower an expression (a call without a result is typed `bool`; only
    /// `StmtKind::Eval` holds one, which the checker ensures).
    pub(super) fn expr(&mut self, fx: &mut Fx, e: hir::ExprH) -> Result<ExprH, Diag> {
        use hir::Expr as E;
        let span = fx.src.span(e);
        let hty = fx.src.ty(e);
        let out = match &fx.src.exprs[e] {
            E::Const(v) => {
                let t = scalar_of(hty, span).or_else(|_| scalar_of(v.ty(), span))?;
                let v = v.concretize(t).unwrap_or_else(|| v.cast(t));
                fx.out.add_expr(Expr::Const(v), t, span)
            }
            // Only `return` and destructuring hold one (tuples.rs).
            E::Tuple(_) => return Err(super::internal(span, "a tuple used as one value")),
            // The checker keeps array literals out of device code.
            E::Array(..) => {
                return Err(crate::unsupported(span, "an array literal in device code"))
            }
            // The checker keeps top-level variables out of device code.
            E::Global(_) => {
                return Err(crate::unsupported(
                    span,
                    "a top-level variable inside a function",
                ))
            }
            E::Local(l) => match fx.map.get(l).copied() {
                Some(Binding::Local(kl)) => {
                    let t = fx.out.locals[kl].ty;
                    fx.out.add_expr(Expr::Local(kl), t, span)
                }
                Some(Binding::Param(i)) => {
                    let t = self.params[i as usize].ty;
                    fx.out.add_expr(Expr::Param(i), t, span)
                }
                Some(Binding::Array(_)) => {
                    return Err(unsupported(span, "arrays as values in device code"));
                }
                None => {
                    return Err(internal(
                        span,
                        &format!("unbound variable `{}`", fx.src.locals[*l].name),
                    ))
                }
            },
            E::Unary(op, a) => {
                let a = self.expr(fx, *a)?;
                let t = fx.out.ty(a);
                fx.out.add_expr(Expr::Unary(*op, a), t, span)
            }
            E::Binary(op, a, b) => {
                let a = self.expr(fx, *a)?;
                let b = self.expr(fx, *b)?;
                let t = if op_is_compare(*op) {
                    Scalar::Bool
                } else {
                    fx.out.ty(a)
                };
                fx.out.add_expr(Expr::Binary(*op, a, b), t, span)
            }
            E::Cast(a, t) => {
                let a = self.expr(fx, *a)?;
                fx.out.add_expr(Expr::Cast(a, *t), *t, span)
            }
            E::Index(arr, idx) => {
                let a = self.array_of(fx, *arr)?;
                let mut index = Vec::new();
                for &i in idx {
                    index.push(self.expr(fx, i)?);
                }
                let t = self.arrays[a].elem;
                fx.out.add_expr(Expr::Load { array: a, index }, t, span)
            }
            E::Call(f, args) if self.program.functions[*f].level != hir::Level::Seq => {
                self.inline_routine(fx, *f, args, span)?
            }
            E::Call(f, args) => {
                device_function(&self.program.functions[*f], span)?;
                let (scalars, arrays) = self.call_args(fx, *f, args)?;
                let h = self.function(*f, arrays, span)?;
                let ret = self.functions[h].ret;
                let call = Expr::Call(h, scalars);
                // A call without a result is typed `bool` and never read
                // (only `StmtKind::Eval` holds one).
                fx.out.add_expr(call, ret.unwrap_or(Scalar::Bool), span)
            }
            E::Builtin(id, args) => {
                let b = self.builtins.get(*id);
                if b.effect == Effect::Atomic {
                    let kind = match b.name.as_str() {
                        "atomic_add" => AtomicKind::Add,
                        "atomic_min" => AtomicKind::Min,
                        "atomic_max" => AtomicKind::Max,
                        "atomic_xchg" => AtomicKind::Xchg,
                        "atomic_read" => AtomicKind::Read,
                        "atomic_write" => AtomicKind::Write,
                        "atomic_sub" => AtomicKind::Sub,
                        "atomic_mul" => AtomicKind::Mul,
                        "atomic_div" => AtomicKind::Div,
                        "atomic_and" => AtomicKind::And,
                        "atomic_or" => AtomicKind::Or,
                        "atomic_xor" => AtomicKind::Xor,
                        "atomic_shl" => AtomicKind::Shl,
                        "atomic_shr" => AtomicKind::Shr,
                        "atomic_rsub" => AtomicKind::RevSub,
                        "atomic_rdiv" => AtomicKind::RevDiv,
                        "atomic_rshl" => AtomicKind::RevShl,
                        "atomic_rshr" => AtomicKind::RevShr,
                        _ => return Err(unsupported(span, &format!("atomics (`{}`)", b.name))),
                    };
                    // `atomic_read` has no value: the element stands in.
                    let (Some(&place), Some(&value)) = (args.first(), args.get(1).or(args.first()))
                    else {
                        return Err(internal(span, "an atomic builtin without arguments"));
                    };
                    let hir::Expr::Index(array, indices) = &fx.src.exprs[place] else {
                        return Err(unsupported(
                            fx.src.span(place),
                            "an atomic whose first argument is not an array element",
                        ));
                    };
                    let (array, indices) = (*array, indices.clone());
                    return self.atomic(fx, array, &indices, kind, value, span);
                }
                // Code compiled for the device runs on the device.
                if b.name == "acc_on_device" {
                    return Ok(fx.konst(Value::Bool(true), span));
                }
                let Some(m) = MathFn::from_name(&b.name).filter(|_| b.effect == Effect::Pure)
                else {
                    return Err(unsupported(
                        span,
                        &format!("the builtin `{}` in device code", b.name),
                    ));
                };
                let t = scalar_of(hty, span)?;
                let mut xs = Vec::new();
                for &a in args {
                    xs.push(self.expr(fx, a)?);
                }
                if xs.len() != m.arity() || !(t.is_float() || m.integer_ok() && t.is_int()) {
                    return Err(unsupported(
                        span,
                        &format!("`{}` on `{t}` in device code", b.name),
                    ));
                }
                fx.out.add_expr(Expr::Math(m, xs), t, span)
            }
            E::Str(_) | E::TypeArg(_) => {
                return Err(unsupported(
                    span,
                    "strings and type arguments in device code",
                ));
            }
        };
        Ok(out)
    }

    /// `array[indices] op= value` atomically; the expression is the old value.
    pub(super) fn atomic(
        &mut self,
        fx: &mut Fx,
        array: hir::ExprH,
        indices: &[hir::ExprH],
        op: AtomicKind,
        value: hir::ExprH,
        span: Span,
    ) -> Result<ExprH, Diag> {
        let a = self.array_of(fx, array)?;
        let mut index = Vec::new();
        for &i in indices {
            index.push(self.expr(fx, i)?);
        }
        let elem = self.arrays[a].elem;
        let value = if op == AtomicKind::Read {
            fx.konst(Value::IntLit(0).cast(elem), span)
        } else {
            self.expr(fx, value)?
        };
        let ok_type = matches!(
            elem,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        );
        let bitwise = matches!(op, AtomicKind::And | AtomicKind::Or | AtomicKind::Xor);
        if !ok_type || (bitwise && !elem.is_int()) || fx.out.ty(value) != elem {
            return Err(unsupported(
                span,
                &format!("this atomic on `{elem}` elements"),
            ));
        }
        self.arrays[a].read = true;
        if op != AtomicKind::Read {
            self.arrays[a].written = true;
        }
        Ok(fx.out.add_expr(
            Expr::Atomic {
                array: a,
                index,
                op,
                value,
            },
            elem,
            span,
        ))
    }
}

/// A function called in a kernel must be one the device can run: else the
/// call is an error pointing at the call and at what stops it.
pub(super) fn device_function(func: &hir::Function, span: Span) -> Result<(), Diag> {
    match &func.device {
        Ok(()) => Ok(()),
        Err((bad, why)) => Err(Diag::error(
            "accl::compile::not_device_function",
            format!("`{}` cannot run on the device: {why}", func.name),
            span,
            "called in a kernel",
        )
        .with_label(*bad, "because of this")),
    }
}
