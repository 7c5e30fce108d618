//! Statements: compiled into closures returning a [`Flow`] (control flow is
//! a value, never an error). Loops count operations through
//! [`Ctx::tick`], the one hot-path limit check.

use super::deferred::{deferred_access, Touch};
use super::error;
use super::expr::{append, arith, globals, op_fn, Opnd};
use super::machine::{run_block, CExpr, Ctx, Ix, St};
use super::scalar::{bits_to_value, value_to_bits, Sc};
use super::value::{Flow, Frame, RtVal, R};
use super::Compiler;
use crate::per_scalar;
use lang::ast::{AtomicOp, BinOp};
use lang::hir::{Block, ExprH, ForLoop, Place, Stmt, StmtKind};
use lang::{Span, Type, Value};

impl Compiler<'_> {
    pub fn block(&self, b: &Block) -> Vec<St> {
        b.iter().map(|s| self.stmt(s)).collect()
    }

    pub fn stmt(&self, s: &Stmt) -> St {
        let st = self.stmt_unchecked(s);
        // A write of a variable a reduction is computing: a pending
        // synchronous result lands first (or is dropped when the write
        // replaces it), a pending async one races (reads are checked where
        // they happen).
        let written = match &s.kind {
            StmtKind::Assign {
                place: Place::Local(l),
                op,
                value,
            } => Some((l.index(), op.is_some() || self.mentions(*value, l.index()))),
            StmtKind::Let { local, init } => {
                Some((local.index(), self.mentions(*init, local.index())))
            }
            _ => None,
        };
        if let Some((slot, reads)) = written {
            if self.watched.contains(&slot) {
                let span = s.span;
                let how = if reads {
                    Touch::Update
                } else {
                    Touch::Overwrite
                };
                return Box::new(move |fr, cx| {
                    if !cx.deferred.is_empty() {
                        deferred_access(fr, cx, slot, how, span)?;
                    }
                    st(fr, cx)
                });
            }
        }
        st
    }

    /// Whether expression `e` reads local `slot`.
    fn mentions(&self, e: lang::hir::ExprH, slot: usize) -> bool {
        use lang::hir::Expr;
        match &self.body.exprs[e] {
            Expr::Local(l) => l.index() == slot,
            Expr::Global(_) => false,
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.mentions(*a, slot),
            Expr::Binary(_, a, b) => self.mentions(*a, slot) || self.mentions(*b, slot),
            Expr::Index(a, ix) => {
                self.mentions(*a, slot) || ix.iter().any(|i| self.mentions(*i, slot))
            }
            Expr::Call(_, args)
            | Expr::Builtin(_, args)
            | Expr::Array(_, args)
            | Expr::Tuple(args) => args.iter().any(|a| self.mentions(*a, slot)),
            Expr::Const(_) | Expr::Str(_) | Expr::TypeArg(_) => false,
        }
    }

    fn stmt_unchecked(&self, s: &Stmt) -> St {
        let span = s.span;
        match &s.kind {
            StmtKind::Let { local, init } => {
                let slot = local.index();
                self.store(slot, *init)
            }
            StmtKind::Assign { place, op, value } => match place {
                Place::Global(l) => self.assign_global(l.index(), *op, *value, span),
                Place::Local(l) => match op {
                    None => self.store(l.index(), *value),
                    Some(op) => {
                        let slot = l.index();
                        let op = *op;
                        if self.body.ty(*value) == Type::Str {
                            // `s += text` (the checker allows only `+`).
                            let y = self.text(*value);
                            return Box::new(move |fr, cx| {
                                let q = y(fr, cx)?;
                                let limit = cx.memory_limit();
                                let s = fr.t[slot].as_mut().ok_or_else(error::uninit)?;
                                append(s, &q, limit, span)?;
                                Ok(Flow::Next)
                            });
                        }
                        let Some(t) = self.scalar_ty(*value) else {
                            return Box::new(move |_, _| {
                                Err(error::internal(span, "compound assignment"))
                            });
                        };
                        per_scalar!(t, T => {
                            let f = arith::<T>(op, Opnd::Local(slot), self.opnd::<T>(*value), span);
                            Box::new(move |fr, cx| {
                                fr.s[slot] = f(fr, cx)?.to_slot();
                                Ok(Flow::Next)
                            })
                        })
                    }
                },
                Place::Element { array, indices } => {
                    let Some(t) = self.scalar_ty(*value) else {
                        return Box::new(move |_, _| {
                            Err(error::internal(span, "element assignment"))
                        });
                    };
                    per_scalar!(t, T => self.store_elem::<T>(*array, indices, *op, *value, span))
                }
            },
            StmtKind::Expr(e) => {
                let c = self.expr(*e);
                Box::new(move |fr, cx| {
                    c.eval(fr, cx)?;
                    Ok(Flow::Next)
                })
            }
            StmtKind::If { cond, then, els } => {
                let c = self.ex::<bool>(*cond);
                let t = self.block(then);
                let e = self.block(els);
                Box::new(move |fr, cx| {
                    if c(fr, cx)? {
                        run_block(&t, fr, cx)
                    } else {
                        run_block(&e, fr, cx)
                    }
                })
            }
            StmtKind::While { cond, body } => {
                let c = self.ex::<bool>(*cond);
                let b = self.block(body);
                self.jitted_loop(
                    s,
                    Box::new(move |fr, cx| {
                        while c(fr, cx)? {
                            cx.tick(span)?;
                            match run_block(&b, fr, cx)? {
                                Flow::Break => break,
                                Flow::Return => return Ok(Flow::Return),
                                _ => {}
                            }
                        }
                        Ok(Flow::Next)
                    }),
                )
            }
            StmtKind::For(fl) => self.jitted_loop(s, self.for_loop(fl)),
            StmtKind::Break => Box::new(|_, _| Ok(Flow::Break)),
            // A hint for the device: nothing to do on the host.
            StmtKind::Cache { .. } => Box::new(|_, _| Ok(Flow::Next)),
            StmtKind::Continue => Box::new(|_, _| Ok(Flow::Continue)),
            StmtKind::LetTuple { locals, init } => self.let_tuple(locals, *init, span),
            StmtKind::Return(Some(e)) if self.body.ty(*e).tuple().is_some() => {
                self.return_tuple(*e, span)
            }
            StmtKind::Return(e) => match e {
                None => Box::new(|_, _| Ok(Flow::Return)),
                Some(e) => match self.expr(*e) {
                    CExpr::Arr(f) => Box::new(move |fr, cx| {
                        fr.ret_a = Some(f(fr, cx)?);
                        Ok(Flow::Return)
                    }),
                    CExpr::Str(f) => Box::new(move |fr, cx| {
                        fr.ret_t = Some(f(fr, cx)?);
                        Ok(Flow::Return)
                    }),
                    c => Box::new(move |fr, cx| {
                        fr.ret_s = c.eval_bits(fr, cx)?;
                        Ok(Flow::Return)
                    }),
                },
            },
            StmtKind::Block(b) => {
                let b = self.block(b);
                Box::new(move |fr, cx| run_block(&b, fr, cx))
            }
            StmtKind::Construct(c) => self.construct(c),
            StmtKind::Atomic { place, op, value } => self.atomic_stmt(place, *op, *value, span),
        }
    }

    /// `slot = init` (declaration or plain assignment).
    fn store(&self, slot: usize, init: ExprH) -> St {
        match self.expr(init) {
            CExpr::Arr(f) => Box::new(move |fr, cx| {
                fr.a[slot] = Some(f(fr, cx)?);
                Ok(Flow::Next)
            }),
            CExpr::Str(f) => Box::new(move |fr, cx| {
                fr.t[slot] = Some(f(fr, cx)?);
                Ok(Flow::Next)
            }),
            c => {
                macro_rules! s {
                    ($f:ident) => {
                        Box::new(move |fr, cx| {
                            fr.s[slot] = $f(fr, cx)?.to_slot();
                            Ok(Flow::Next)
                        })
                    };
                }
                match c {
                    CExpr::Bool(f) => s!(f),
                    CExpr::I32(f) => s!(f),
                    CExpr::I64(f) => s!(f),
                    CExpr::U32(f) => s!(f),
                    CExpr::U8(f) => s!(f),
                    CExpr::F32(f) => s!(f),
                    CExpr::F64(f) => s!(f),
                    other => Box::new(move |fr, cx| {
                        other.eval(fr, cx)?;
                        Ok(Flow::Next)
                    }),
                }
            }
        }
    }

    fn store_elem<T: Sc>(
        &self,
        array: ExprH,
        indices: &[ExprH],
        op: Option<BinOp>,
        value: ExprH,
        span: Span,
    ) -> St {
        let v = self.opnd::<T>(value);
        // Fast path: `a[i] = v` with `a` a local rank-1 array.
        if let (None, [i], lang::hir::Expr::Local(l)) = (op, indices, &self.body.exprs[array]) {
            let slot = l.index();
            let ix = self.ix(*i);
            let isp = self.span(*i);
            let espan = span;
            return Box::new(move |fr, cx| {
                let k = ix.get(fr, cx)?;
                let x = v.get(fr, cx)?;
                let a = fr.a[slot].as_ref().ok_or_else(error::uninit)?;
                cx.host_access(a, Some(k.max(0) as usize), true, espan)?;
                let mut d = a.data_mut();
                let s =
                    T::slice_mut(&mut d).ok_or_else(|| error::internal(span, "element type"))?;
                match s.get_mut(k as usize) {
                    Some(e) if k >= 0 => {
                        *e = x;
                        Ok(Flow::Next)
                    }
                    _ => Err(error::out_of_bounds(isp, espan, 0, k, s.len())),
                }
            });
        }
        let place = self.place(array, indices, span);
        let f = op.map(op_fn::<T>);
        Box::new(move |fr, cx| {
            let (a, off) = place(fr, cx)?;
            let x = v.get(fr, cx)?;
            let mut d = a.data_mut();
            let s = T::slice_mut(&mut d).ok_or_else(|| error::internal(span, "element type"))?;
            s[off] = match f {
                None => x,
                Some(f) => f(s[off], x).ok_or_else(|| error::div_by_zero(span))?,
            };
            Ok(Flow::Next)
        })
    }

    fn for_loop(&self, fl: &ForLoop) -> St {
        let h = &fl.header;
        let var = h.var.index();
        let lo = self.ix(h.lo);
        let hi = self.ix(h.hi);
        let inclusive = h.inclusive;
        let span = h.span;
        let body = self.block(&fl.body);
        if body.len() == 1 {
            let s = body
                .into_iter()
                .next()
                .unwrap_or_else(|| Box::new(|_, _| Ok(Flow::Next)));
            return Box::new(move |fr, cx| {
                let Some((lo, end)) = bounds(&lo, &hi, inclusive, fr, cx)? else {
                    return Ok(Flow::Next);
                };
                let mut i = lo;
                loop {
                    fr.s[var] = i as u64;
                    cx.tick(span)?;
                    match s(fr, cx)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        _ => {}
                    }
                    if i == end {
                        break;
                    }
                    i += 1;
                }
                Ok(Flow::Next)
            });
        }
        Box::new(move |fr, cx| {
            let Some((lo, end)) = bounds(&lo, &hi, inclusive, fr, cx)? else {
                return Ok(Flow::Next);
            };
            let mut i = lo;
            loop {
                fr.s[var] = i as u64;
                cx.tick(span)?;
                match run_block(&body, fr, cx)? {
                    Flow::Break => break,
                    Flow::Return => return Ok(Flow::Return),
                    _ => {}
                }
                if i == end {
                    break;
                }
                i += 1;
            }
            Ok(Flow::Next)
        })
    }

    /// `g = v` or `g op= v` on top-level variable `slot`, from a function:
    /// the value is computed in the function's frame, then stored in the
    /// top-level frame it borrows.
    fn assign_global(&self, slot: usize, op: Option<BinOp>, value: ExprH, span: Span) -> St {
        let Some(op) = op else {
            return match self.expr(value) {
                CExpr::Arr(f) => Box::new(move |fr, cx| {
                    let v = f(fr, cx)?;
                    globals(cx, span)?.a[slot] = Some(v);
                    Ok(Flow::Next)
                }),
                CExpr::Str(f) => Box::new(move |fr, cx| {
                    let v = f(fr, cx)?;
                    globals(cx, span)?.t[slot] = Some(v);
                    Ok(Flow::Next)
                }),
                c => Box::new(move |fr, cx| {
                    let bits = c.eval_bits(fr, cx)?;
                    globals(cx, span)?.s[slot] = bits;
                    Ok(Flow::Next)
                }),
            };
        };
        if self.body.ty(value) == Type::Str {
            let y = self.text(value);
            return Box::new(move |fr, cx| {
                let q = y(fr, cx)?;
                let limit = cx.memory_limit();
                let s = globals(cx, span)?.t[slot]
                    .as_mut()
                    .ok_or_else(error::uninit)?;
                append(s, &q, limit, span)?;
                Ok(Flow::Next)
            });
        }
        let Some(t) = self.scalar_ty(value) else {
            return Box::new(move |_, _| Err(error::internal(span, "compound assignment")));
        };
        per_scalar!(t, T => {
            let old = Opnd::Dyn(Box::new(move |_: &mut Frame, cx: &mut Ctx| {
                Ok(T::from_slot(globals(cx, span)?.s[slot]))
            }));
            let f = arith::<T>(op, old, self.opnd::<T>(value), span);
            Box::new(move |fr, cx| {
                let v = f(fr, cx)?.to_slot();
                globals(cx, span)?.s[slot] = v;
                Ok(Flow::Next)
            })
        })
    }

    fn atomic_stmt(&self, place: &Place, op: AtomicOp, value: ExprH, span: Span) -> St {
        let v = self.expr(value);
        match place {
            Place::Element { array, indices } => {
                let p = self.place(*array, indices, span);
                Box::new(move |fr, cx| {
                    let (a, off) = p(fr, cx)?;
                    let x = scalar_of(v.eval(fr, cx)?);
                    let mut d = a.data_mut();
                    let old = d.get(off).unwrap_or(Value::I32(0));
                    d.set(
                        off,
                        atomic_combine(op, old, x).map_err(|e| atomic_error(e, span))?,
                    );
                    Ok(Flow::Next)
                })
            }
            Place::Global(l) => {
                let slot = l.index();
                let Type::Scalar(t) = self.prog.main.locals[*l].ty else {
                    return Box::new(move |_, _| {
                        Err(error::internal(span, "atomic on a non-scalar"))
                    });
                };
                Box::new(move |fr, cx| {
                    let x = scalar_of(v.eval(fr, cx)?);
                    let g = globals(cx, span)?;
                    let old = bits_to_value(t, g.s[slot]);
                    let new = atomic_combine(op, old, x).map_err(|e| atomic_error(e, span))?;
                    g.s[slot] = value_to_bits(new, t);
                    Ok(Flow::Next)
                })
            }
            Place::Local(l) => {
                let slot = l.index();
                let t = self.body.locals[*l].ty;
                let Type::Scalar(t) = t else {
                    return Box::new(move |_, _| {
                        Err(error::internal(span, "atomic on a non-scalar"))
                    });
                };
                Box::new(move |fr, cx| {
                    let x = scalar_of(v.eval(fr, cx)?);
                    let old = bits_to_value(t, fr.s[slot]);
                    let new = atomic_combine(op, old, x).map_err(|e| atomic_error(e, span))?;
                    fr.s[slot] = value_to_bits(new, t);
                    Ok(Flow::Next)
                })
            }
        }
    }
}

fn bounds(
    lo: &Ix,
    hi: &Ix,
    inclusive: bool,
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Option<(i64, i64)>> {
    let lo = lo.get(fr, cx)?;
    let hi = hi.get(fr, cx)?;
    let end = if inclusive {
        hi
    } else if hi == i64::MIN {
        return Ok(None);
    } else {
        hi - 1
    };
    Ok((lo <= end).then_some((lo, end)))
}

pub fn scalar_of(v: RtVal) -> Value {
    match v {
        RtVal::Scalar(v) => v,
        _ => Value::I32(0),
    }
}

/// The runtime error of a failed [`atomic_combine`].
pub fn atomic_error(e: lang::value::ValueError, span: Span) -> Box<lang::Diag> {
    match e {
        lang::value::ValueError::DivByZero => error::div_by_zero(span),
        lang::value::ValueError::BadOperands => error::internal(span, "atomic operands"),
    }
}

/// `old op x` for an atomic update (`max`/`min` as the math builtins).
pub fn atomic_combine(
    op: AtomicOp,
    old: Value,
    x: Value,
) -> Result<Value, lang::value::ValueError> {
    let b = match op {
        AtomicOp::Add => BinOp::Add,
        AtomicOp::Sub => BinOp::Sub,
        AtomicOp::Mul => BinOp::Mul,
        AtomicOp::And => BinOp::BitAnd,
        AtomicOp::Or => BinOp::BitOr,
        AtomicOp::Xor => BinOp::BitXor,
        AtomicOp::Div => BinOp::Div,
        AtomicOp::Shl => BinOp::Shl,
        AtomicOp::Shr => BinOp::Shr,
        AtomicOp::RevSub => return Value::binary(BinOp::Sub, x, old),
        AtomicOp::RevDiv => return Value::binary(BinOp::Div, x, old),
        AtomicOp::RevShl => return Value::binary(BinOp::Shl, x, old),
        AtomicOp::RevShr => return Value::binary(BinOp::Shr, x, old),
        AtomicOp::Max | AtomicOp::Min => {
            let gt = Value::binary(BinOp::Gt, x, old)? == Value::Bool(true);
            let lt = Value::binary(BinOp::Lt, x, old)? == Value::Bool(true);
            let take = if op == AtomicOp::Max { gt } else { lt };
            // NaN: keep the non-NaN operand, as the math builtins do.
            let old_nan = old.as_f64().is_some_and(f64::is_nan);
            return Ok(if take || old_nan { x } else { old });
        }
    };
    Value::binary(b, old, x)
}
