//! Expressions: HIR expression trees compiled once into closures
//! specialised by type.
//!
//! Each expression becomes a `Box<dyn Fn(&mut Frame, &mut Ctx) -> R<T>>` with
//! `T` the Rust type of its accl type ([`CExpr`] holds one per type), so
//! evaluation never matches on a dynamic value. Binary operators are
//! monomorphised per operator (the operation is inlined into the closure)
//! and fold a constant or local right operand into their own closure;
//! indexing reads a local array and a local index without further calls.
//! This is what makes the hot loop of the benchmark a handful of indirect
//! calls per iteration.

use super::deferred::{deferred_access, Touch};
use super::error;
use super::machine::{run_block, CExpr, Ctx, Ex, Ix};
use super::scalar::{value_to_bits, Sc};
use super::value::{Frame, RtVal, Text, R};
use super::Compiler;
use crate::per_scalar;
use lang::ast::{BinOp, UnOp};
use lang::hir::{Expr, ExprH};
use lang::{Scalar, Span, Type};
use std::rc::Rc;
use stdlib::Array;

/// Where an array comes from: a local (borrowed in place) or any expression.
pub enum ArrSrc {
    Local(usize),
    Dyn(Ex<Array>),
}

impl ArrSrc {
    #[inline(always)]
    pub fn with<O>(
        &self,
        fr: &mut Frame,
        cx: &mut Ctx,
        f: impl FnOnce(&Array, &mut Frame, &mut Ctx) -> R<O>,
    ) -> R<O> {
        match self {
            ArrSrc::Local(s) => {
                let a =
                    fr.a.get(*s)
                        .and_then(|a| a.clone())
                        .ok_or_else(error::uninit)?;
                f(&a, fr, cx)
            }
            ArrSrc::Dyn(e) => {
                let a = e(fr, cx)?;
                f(&a, fr, cx)
            }
        }
    }
}

/// An operand folded into its parent's closure: a constant, a local, an
/// element `a[i]` of a local rank-1 array, or any other expression.
pub enum Opnd<T> {
    Const(T),
    Local(usize),
    Elem {
        arr: usize,
        ix: Ix,
        ix_span: Span,
        span: Span,
    },
    Dyn(Ex<T>),
}

impl<T: Sc> Opnd<T> {
    #[inline(always)]
    pub fn get(&self, fr: &mut Frame, cx: &mut Ctx) -> R<T> {
        match self {
            Opnd::Const(c) => Ok(*c),
            Opnd::Local(s) => Ok(T::from_slot(fr.s[*s])),
            Opnd::Elem {
                arr,
                ix,
                ix_span,
                span,
            } => {
                let k = ix.get(fr, cx)?;
                let a = fr.a[*arr].as_ref().ok_or_else(error::uninit)?;
                cx.host_access(a, Some(k.max(0) as usize), false, *span)?;
                match a.get::<T>(k as usize) {
                    Ok(x) if k >= 0 => Ok(x),
                    Ok(_) => Err(error::out_of_bounds(*ix_span, *span, 0, k, a.len())),
                    Err(usize::MAX) => Err(error::internal(*span, "element type")),
                    Err(n) => Err(error::out_of_bounds(*ix_span, *span, 0, k, n)),
                }
            }
            Opnd::Dyn(f) => f(fr, cx),
        }
    }
}

fn mk<T: Sc, U: Sc>(x: Opnd<T>, y: Opnd<T>, f: impl Fn(T, T) -> U + 'static) -> CExpr {
    U::wrap(match (x, y) {
        (Opnd::Dyn(x), Opnd::Const(c)) => Box::new(move |fr, cx| Ok(f(x(fr, cx)?, c))),
        (Opnd::Dyn(x), Opnd::Local(l)) => {
            Box::new(move |fr, cx| Ok(f(x(fr, cx)?, T::from_slot(fr.s[l]))))
        }
        (Opnd::Local(l), Opnd::Const(c)) => Box::new(move |fr, _| Ok(f(T::from_slot(fr.s[l]), c))),
        (Opnd::Local(l), Opnd::Local(m)) => {
            Box::new(move |fr, _| Ok(f(T::from_slot(fr.s[l]), T::from_slot(fr.s[m]))))
        }
        (Opnd::Dyn(x), Opnd::Dyn(y)) => Box::new(move |fr, cx| {
            let a = x(fr, cx)?;
            Ok(f(a, y(fr, cx)?))
        }),
        (e @ Opnd::Elem { .. }, Opnd::Const(c)) => Box::new(move |fr, cx| Ok(f(e.get(fr, cx)?, c))),
        (x, y) => Box::new(move |fr, cx| {
            let a = x.get(fr, cx)?;
            Ok(f(a, y.get(fr, cx)?))
        }),
    })
}

fn mk_div<T: Sc>(
    x: Opnd<T>,
    y: Opnd<T>,
    span: Span,
    f: impl Fn(T, T) -> Option<T> + 'static,
) -> CExpr {
    T::wrap(Box::new(move |fr, cx| {
        let a = x.get(fr, cx)?;
        let b = y.get(fr, cx)?;
        f(a, b).ok_or_else(|| error::div_by_zero(span))
    }))
}

/// Flat row-major offset of `ks` in `shape`, or the failing axis.
#[inline(always)]
pub fn flat(shape: &[usize], ks: &[i64]) -> Result<usize, (usize, i64, usize)> {
    let mut off = 0usize;
    for (axis, (&k, &n)) in ks.iter().zip(shape).enumerate() {
        if k < 0 || k as u64 >= n as u64 {
            return Err((axis, k, n));
        }
        off = off * n + k as usize;
    }
    Ok(off)
}

impl Compiler<'_> {
    pub fn span(&self, e: ExprH) -> Span {
        self.body.span(e)
    }

    pub fn scalar_ty(&self, e: ExprH) -> Option<Scalar> {
        self.body.ty(e).defaulted().scalar()
    }

    /// Compile an expression of scalar type `T`.
    pub fn ex<T: Sc>(&self, e: ExprH) -> Ex<T> {
        let span = self.span(e);
        match T::unwrap(self.expr(e)) {
            Some(f) => f,
            None => {
                Box::new(move |_, _| Err(error::internal(span, "expression of an unexpected type")))
            }
        }
    }

    pub fn arr(&self, e: ExprH) -> Ex<Array> {
        let span = self.span(e);
        match self.expr(e) {
            CExpr::Arr(f) => f,
            _ => Box::new(move |_, _| Err(error::internal(span, "expected an array"))),
        }
    }

    pub fn arr_src(&self, e: ExprH) -> ArrSrc {
        match &self.body.exprs[e] {
            Expr::Local(l) => ArrSrc::Local(l.index()),
            _ => ArrSrc::Dyn(self.arr(e)),
        }
    }

    /// An integer expression as i64.
    pub fn ix(&self, e: ExprH) -> Ix {
        let t = self.scalar_ty(e).unwrap_or(Scalar::I64);
        if let Expr::Local(l) = &self.body.exprs[e] {
            if t.is_int() && !self.watched.contains(&l.index()) {
                return Ix::Local(l.index(), t);
            }
        }
        Ix::Dyn(match t {
            Scalar::I32 => {
                let f = self.ex::<i32>(e);
                Box::new(move |fr, cx| Ok(f(fr, cx)? as i64))
            }
            Scalar::U32 => {
                let f = self.ex::<u32>(e);
                Box::new(move |fr, cx| Ok(f(fr, cx)? as i64))
            }
            Scalar::U8 => {
                let f = self.ex::<u8>(e);
                Box::new(move |fr, cx| Ok(f(fr, cx)? as i64))
            }
            _ => self.ex::<i64>(e),
        })
    }

    pub fn opnd<T: Sc>(&self, e: ExprH) -> Opnd<T> {
        match &self.body.exprs[e] {
            Expr::Const(v) => Opnd::Const(T::from_slot(value_to_bits(*v, T::SCALAR))),
            Expr::Local(l) if !self.watched.contains(&l.index()) => Opnd::Local(l.index()),
            Expr::Index(a, ix)
                if ix.len() == 1 && matches!(self.body.exprs[*a], Expr::Local(_)) =>
            {
                let Expr::Local(l) = self.body.exprs[*a] else {
                    return Opnd::Dyn(self.ex::<T>(e));
                };
                Opnd::Elem {
                    arr: l.index(),
                    ix: self.ix(ix[0]),
                    ix_span: self.span(ix[0]),
                    span: self.span(e),
                }
            }
            _ => Opnd::Dyn(self.ex::<T>(e)),
        }
    }

    /// Compile any expression.
    pub fn expr(&self, e: ExprH) -> CExpr {
        let span = self.span(e);
        let ty = self.body.ty(e).defaulted();
        match &self.body.exprs[e] {
            Expr::Const(v) => match ty {
                Type::Scalar(s) => {
                    let bits = value_to_bits(*v, s);
                    per_scalar!(s, T => {
                        let c = T::from_slot(bits);
                        T::wrap(Box::new(move |_, _| Ok(c)))
                    })
                }
                _ => CExpr::Unit(Box::new(|_, _| Ok(()))),
            },
            Expr::Global(l) => {
                let slot = l.index();
                match ty {
                    Type::Scalar(s) => {
                        per_scalar!(s, T => T::wrap(Box::new(move |_, cx| Ok(T::from_slot(globals(cx, span)?.s[slot])))))
                    }
                    Type::Array(..) => CExpr::Arr(Box::new(move |_, cx| {
                        globals(cx, span)?.a[slot].clone().ok_or_else(error::uninit)
                    })),
                    Type::Str => CExpr::Str(Box::new(move |_, cx| {
                        globals(cx, span)?.t[slot].clone().ok_or_else(error::uninit)
                    })),
                    _ => CExpr::Unit(Box::new(|_, _| Ok(()))),
                }
            }
            Expr::Local(l) => {
                let slot = l.index();
                match ty {
                    Type::Scalar(s) if self.watched.contains(&slot) => {
                        per_scalar!(s, T => T::wrap(Box::new(move |fr, cx| {
                            if !cx.deferred.is_empty() {
                                deferred_access(fr, cx, slot, Touch::Read, span)?;
                            }
                            Ok(T::from_slot(fr.s[slot]))
                        })))
                    }
                    Type::Scalar(s) => {
                        per_scalar!(s, T => T::wrap(Box::new(move |fr, _| Ok(T::from_slot(fr.s[slot])))))
                    }
                    Type::Array(..) => CExpr::Arr(Box::new(move |fr, _| {
                        fr.a[slot].clone().ok_or_else(error::uninit)
                    })),
                    Type::Str => CExpr::Str(Box::new(move |fr, _| {
                        fr.t[slot].clone().ok_or_else(error::uninit)
                    })),
                    _ => CExpr::Unit(Box::new(|_, _| Ok(()))),
                }
            }
            Expr::Unary(op, a) => {
                let Some(s) = ty.scalar() else {
                    return CExpr::Unit(Box::new(move |_, _| {
                        Err(error::internal(span, "bad unary operand"))
                    }));
                };
                let op = *op;
                per_scalar!(s, T => {
                    let x = self.ex::<T>(*a);
                    match op {
                        UnOp::Neg => T::wrap(Box::new(move |fr, cx| Ok(x(fr, cx)?.neg()))),
                        UnOp::Not => T::wrap(Box::new(move |fr, cx| Ok(x(fr, cx)?.not()))),
                    }
                })
            }
            Expr::Binary(op, a, b) => self.binary(*op, *a, *b, span),
            Expr::Cast(a, t) => {
                let from = self.scalar_ty(*a).unwrap_or(Scalar::I32);
                let to = *t;
                per_scalar!(from, S => per_scalar!(to, T => {
                    let x = self.ex::<S>(*a);
                    cast::<S, T>(x)
                }))
            }
            Expr::Index(arr, ix) => {
                let Some(s) = ty.scalar() else {
                    return CExpr::Unit(Box::new(move |_, _| {
                        Err(error::internal(span, "bad index"))
                    }));
                };
                per_scalar!(s, T => T::wrap(self.index::<T>(*arr, ix, span)))
            }
            Expr::Call(f, args) => self.call(*f, args, span, ty),
            Expr::Builtin(id, args) => self.builtin(*id, args, span, ty),
            Expr::Str(s) => {
                let s: Text = Rc::new(s.clone());
                CExpr::Str(Box::new(move |_, _| Ok(s.clone())))
            }
            Expr::TypeArg(t) => CExpr::Type(*t),
            Expr::Tuple(elems) => self.tuple_expr(elems),
            Expr::Array(shape, elems) => self.array_literal(shape, elems, ty, span),
        }
    }

    /// A new array of a literal's elements, in row-major order.
    fn array_literal(&self, shape: &[usize], elems: &[ExprH], ty: Type, span: Span) -> CExpr {
        let Type::Array(elem, _) = ty else {
            return CExpr::Unit(Box::new(move |_, _| {
                Err(error::internal(span, "bad array literal"))
            }));
        };
        let shape = shape.to_vec();
        let elems: Vec<CExpr> = elems.iter().map(|&e| self.expr(e)).collect();
        CExpr::Arr(Box::new(move |fr, cx| {
            let a = Array::zeros(elem, shape.clone())
                .map_err(|_| error::internal(span, "bad array literal shape"))?;
            for (i, e) in elems.iter().enumerate() {
                if let RtVal::Scalar(v) = e.eval(fr, cx)? {
                    a.data_mut().set(i, v);
                }
            }
            Ok(a)
        }))
    }

    /// A string expression.
    pub fn text(&self, e: ExprH) -> Ex<Text> {
        let span = self.span(e);
        match self.expr(e) {
            CExpr::Str(f) => f,
            _ => Box::new(move |_, _| Err(error::internal(span, "expected a string"))),
        }
    }

    fn string_binary(&self, op: BinOp, a: ExprH, b: ExprH, span: Span) -> CExpr {
        let x = self.text(a);
        let y = self.text(b);
        let cmp = |f: fn(&str, &str) -> bool| -> CExpr {
            CExpr::Bool(Box::new(move |fr, cx| {
                let p = x(fr, cx)?;
                Ok(f(&p, &y(fr, cx)?))
            }))
        };
        match op {
            BinOp::Add => CExpr::Str(concat(self.text(a), self.text(b), span)),
            BinOp::Eq => cmp(|p, q| p == q),
            BinOp::Ne => cmp(|p, q| p != q),
            BinOp::Lt => cmp(|p, q| p < q),
            BinOp::Le => cmp(|p, q| p <= q),
            BinOp::Gt => cmp(|p, q| p > q),
            BinOp::Ge => cmp(|p, q| p >= q),
            _ => CExpr::Unit(Box::new(move |_, _| {
                Err(error::internal(span, "string operator"))
            })),
        }
    }

    #[allow(clippy::bool_comparison)] // `p < q` is generic over every scalar, bool included
    fn binary(&self, op: BinOp, a: ExprH, b: ExprH, span: Span) -> CExpr {
        if self.body.ty(a) == Type::Str {
            return self.string_binary(op, a, b, span);
        }
        let Some(t) = self.scalar_ty(a) else {
            return CExpr::Unit(Box::new(move |_, _| {
                Err(error::internal(span, "bad binary operands"))
            }));
        };
        if matches!(op, BinOp::And | BinOp::Or) {
            let x = self.ex::<bool>(a);
            let y = self.ex::<bool>(b);
            return CExpr::Bool(if op == BinOp::And {
                Box::new(move |fr, cx| Ok(x(fr, cx)? && y(fr, cx)?))
            } else {
                Box::new(move |fr, cx| Ok(x(fr, cx)? || y(fr, cx)?))
            });
        }
        per_scalar!(t, T => {
            let x = self.opnd::<T>(a);
            let y = self.opnd::<T>(b);
            match op {
                BinOp::Add => mk(x, y, T::add),
                BinOp::Sub => mk(x, y, T::sub),
                BinOp::Mul => mk(x, y, T::mul),
                BinOp::Div => mk_div(x, y, span, T::div),
                BinOp::Rem => mk_div(x, y, span, T::rem),
                BinOp::BitAnd => mk(x, y, T::band),
                BinOp::BitOr => mk(x, y, T::bor),
                BinOp::BitXor => mk(x, y, T::bxor),
                BinOp::Shl => mk(x, y, T::shl),
                BinOp::Shr => mk(x, y, T::shr),
                BinOp::Eq => mk(x, y, |p: T, q: T| p == q),
                BinOp::Ne => mk(x, y, |p: T, q: T| p != q),
                BinOp::Lt => mk(x, y, |p: T, q: T| p < q),
                BinOp::Le => mk(x, y, |p: T, q: T| p <= q),
                BinOp::Gt => mk(x, y, |p: T, q: T| p > q),
                BinOp::Ge => mk(x, y, |p: T, q: T| p >= q),
                BinOp::And | BinOp::Or => CExpr::Bool(Box::new(move |_, _| Err(error::internal(span, "logic op")))),
            }
        })
    }

    /// `arr[ix..]` of element type `T`.
    pub fn index<T: Sc>(&self, arr: ExprH, ix: &[ExprH], span: Span) -> Ex<T> {
        let src = self.arr_src(arr);
        let ixs: Vec<Ix> = ix.iter().map(|&i| self.ix(i)).collect();
        let ix_spans: Vec<Span> = ix.iter().map(|&i| self.span(i)).collect();
        if ixs.len() == 1 {
            let i0 = ixs
                .into_iter()
                .next()
                .unwrap_or(Ix::Dyn(Box::new(|_, _| Ok(0))));
            let sp0 = ix_spans[0];
            if let ArrSrc::Local(slot) = src {
                return Box::new(move |fr, cx| {
                    let k = i0.get(fr, cx)?;
                    let a = fr.a[slot].as_ref().ok_or_else(error::uninit)?;
                    cx.host_access(a, Some(k.max(0) as usize), false, span)?;
                    match a.get::<T>(k as usize) {
                        Ok(x) if k >= 0 => Ok(x),
                        Ok(_) => Err(error::out_of_bounds(sp0, span, 0, k, a.len())),
                        Err(usize::MAX) => Err(error::internal(span, "element type")),
                        Err(n) => Err(error::out_of_bounds(sp0, span, 0, k, n)),
                    }
                });
            }
            let ixs = vec![i0];
            return self.index_general(src, ixs, ix_spans, span);
        }
        self.index_general(src, ixs, ix_spans, span)
    }

    fn index_general<T: Sc>(
        &self,
        src: ArrSrc,
        ixs: Vec<Ix>,
        ix_spans: Vec<Span>,
        span: Span,
    ) -> Ex<T> {
        Box::new(move |fr, cx| {
            let mut ks = [0i64; 3];
            for (k, i) in ks.iter_mut().zip(&ixs) {
                *k = i.get(fr, cx)?;
            }
            let n = ixs.len();
            src.with(fr, cx, |a, _, cx| {
                let off = flat(a.shape(), &ks[..n]).map_err(|(axis, k, ext)| {
                    error::out_of_bounds(ix_spans[axis], span, axis, k, ext)
                })?;
                cx.host_access(a, Some(off), false, span)?;
                let d = a.data();
                let s = T::slice(&d).ok_or_else(|| error::internal(span, "element type"))?;
                Ok(s[off])
            })
        })
    }

    /// Compile the element place `arr[ix..]` into a closure that finds its
    /// array and flat offset.
    pub fn place(&self, arr: ExprH, ix: &[ExprH], span: Span) -> Ex<(Array, usize)> {
        let src = self.arr_src(arr);
        let ixs: Vec<Ix> = ix.iter().map(|&i| self.ix(i)).collect();
        let ix_spans: Vec<Span> = ix.iter().map(|&i| self.span(i)).collect();
        Box::new(move |fr, cx| {
            let mut ks = [0i64; 3];
            for (k, i) in ks.iter_mut().zip(&ixs) {
                *k = i.get(fr, cx)?;
            }
            let n = ixs.len();
            src.with(fr, cx, |a, _, cx| {
                let off = flat(a.shape(), &ks[..n]).map_err(|(axis, k, ext)| {
                    error::out_of_bounds(ix_spans[axis], span, axis, k, ext)
                })?;
                // A place is written (assignments, atomics).
                cx.host_access(a, Some(off), true, span)?;
                Ok((a.clone(), off))
            })
        })
    }

    fn call(&self, f: lang::hir::FnH, args: &[ExprH], span: Span, ty: Type) -> CExpr {
        if let Some(c) = self.jitted_call(f, args, span, ty) {
            return c;
        }
        let idx = f.index();
        let func = &self.prog.functions[f];
        let nlocals = func.body.locals.len();
        let params: Vec<usize> = func.params.iter().map(|p| p.index()).collect();
        let args: Vec<CExpr> = args.iter().map(|&a| self.expr(a)).collect();
        let globals: Vec<usize> = func.globals.iter().map(|g| g.index()).collect();
        let run = move |fr: &mut Frame, cx: &mut Ctx| -> R<Frame> {
            let mut nf = Frame::new(nlocals);
            for (a, &slot) in args.iter().zip(&params) {
                match a {
                    CExpr::Arr(g) => nf.a[slot] = Some(g(fr, cx)?),
                    CExpr::Str(g) => nf.t[slot] = Some(g(fr, cx)?),
                    other => nf.s[slot] = other.eval_bits(fr, cx)?,
                }
            }
            let lend = !globals.is_empty() && cx.globals.is_none();
            if lend && !cx.deferred.is_empty() {
                // Pending reductions into the variables it uses land
                // first (or, on an async queue, are a race).
                for &g in &globals {
                    deferred_access(fr, cx, g, Touch::Read, span)?;
                }
            }
            cx.enter_call(span)?;
            let fns = cx.fns.clone();
            // A function that uses top-level variables (itself or through
            // its calls) borrows the top-level frame for the call. Only the
            // top level calls one while it is not lent: a function that
            // calls one uses them too.
            if lend {
                cx.globals = Some(std::mem::take(fr));
            }
            let r = match fns.get(idx) {
                // Deep recursion goes on on a stack that grows.
                Some(cf) => lang::stack::for_call(|| run_block(&cf.body, &mut nf, cx)),
                None => Err(error::internal(span, "function not compiled")),
            };
            if lend {
                *fr = cx.globals.take().unwrap_or_default();
            }
            cx.depth -= 1;
            // Reductions into the callee's locals that it never waited
            // for: the variables are gone, and so are their results.
            if !cx.deferred.is_empty() {
                let depth = cx.depth;
                cx.deferred.retain(|d| d.depth <= depth);
            }
            r?;
            Ok(nf)
        };
        match ty {
            Type::Scalar(s) => {
                per_scalar!(s, T => T::wrap(Box::new(move |fr, cx| Ok(T::from_slot(run(fr, cx)?.ret_s)))))
            }
            Type::Array(..) => CExpr::Arr(Box::new(move |fr, cx| {
                run(fr, cx)?
                    .ret_a
                    .ok_or_else(|| error::internal(span, "function returned no array"))
            })),
            Type::Tuple(_) => CExpr::Tuple(Box::new(move |fr, cx| Ok(run(fr, cx)?.ret_tuple))),
            Type::Str => CExpr::Str(Box::new(move |fr, cx| {
                run(fr, cx)?
                    .ret_t
                    .ok_or_else(|| error::internal(span, "function returned no string"))
            })),
            _ => CExpr::Unit(Box::new(move |fr, cx| run(fr, cx).map(|_| ()))),
        }
    }
}

fn cast<S: Sc, T: Sc>(x: Ex<S>) -> CExpr {
    if S::SCALAR == T::SCALAR {
        return T::wrap(Box::new(move |fr, cx| {
            Ok(T::from_slot(x(fr, cx)?.to_slot()))
        }));
    }
    T::wrap(Box::new(move |fr, cx| {
        let v = x(fr, cx)?;
        Ok(match v.as_int() {
            Some(i) => T::from_int(i),
            None => T::from_f64(v.as_float()),
        })
    }))
}

/// `x op y` for an arithmetic or bitwise operator, as a closure (used by
/// compound assignment).
pub fn arith<T: Sc>(op: BinOp, x: Opnd<T>, y: Opnd<T>, span: Span) -> Ex<T> {
    let c = match op {
        BinOp::Add => mk(x, y, T::add),
        BinOp::Sub => mk(x, y, T::sub),
        BinOp::Mul => mk(x, y, T::mul),
        BinOp::Div => mk_div(x, y, span, T::div),
        BinOp::Rem => mk_div(x, y, span, T::rem),
        BinOp::BitAnd => mk(x, y, T::band),
        BinOp::BitOr => mk(x, y, T::bor),
        BinOp::BitXor => mk(x, y, T::bxor),
        BinOp::Shl => mk(x, y, T::shl),
        BinOp::Shr => mk(x, y, T::shr),
        _ => return Box::new(move |_, _| Err(error::internal(span, "not a compound operator"))),
    };
    T::unwrap(c)
        .unwrap_or_else(|| Box::new(move |_, _| Err(error::internal(span, "compound type"))))
}

/// `x op y` as a plain function (None: division by zero).
pub fn op_fn<T: Sc>(op: BinOp) -> fn(T, T) -> Option<T> {
    match op {
        BinOp::Add => |a: T, b: T| Some(a.add(b)),
        BinOp::Sub => |a: T, b: T| Some(a.sub(b)),
        BinOp::Mul => |a: T, b: T| Some(a.mul(b)),
        BinOp::Div => T::div,
        BinOp::Rem => T::rem,
        BinOp::BitAnd => |a: T, b: T| Some(a.band(b)),
        BinOp::BitOr => |a: T, b: T| Some(a.bor(b)),
        BinOp::BitXor => |a: T, b: T| Some(a.bxor(b)),
        BinOp::Shl => |a: T, b: T| Some(a.shl(b)),
        BinOp::Shr => |a: T, b: T| Some(a.shr(b)),
        _ => |a: T, _: T| Some(a),
    }
}

/// `x + y` on strings: one allocation for the joined text.
pub fn concat(x: Ex<Text>, y: Ex<Text>, span: Span) -> Ex<Text> {
    Box::new(move |fr, cx| {
        let p = x(fr, cx)?;
        let q = y(fr, cx)?;
        let mut s = cx.new_string(p.len().saturating_add(q.len()), span)?;
        s.push_str(&p);
        s.push_str(&q);
        Ok(Rc::new(s))
    })
}

/// `s += q` on a string variable: appended in place while the variable
/// holds the only reference, with room to grow (doubling, up to `limit`),
/// so a loop of appends is linear (100,000 appends took 10.9 s when each
/// copied all of `s`); else a copy, as `s + q`. Over the memory limit, or
/// refused by the system, it is an error and `s` is unchanged.
pub fn append(s: &mut Text, q: &str, limit: usize, span: Span) -> R<()> {
    let bytes = s.len().saturating_add(q.len());
    if bytes > limit {
        return Err(error::memory_limit(span, "string", bytes, limit));
    }
    if let Some(buf) = Rc::get_mut(s) {
        if buf.capacity() < bytes {
            let want = bytes.max(buf.capacity().saturating_mul(2)).min(limit);
            buf.try_reserve_exact(want - buf.len())
                .map_err(|_| error::out_of_memory(span, "string", want))?;
        }
        buf.push_str(q);
        return Ok(());
    }
    let mut n = String::new();
    n.try_reserve_exact(bytes)
        .map_err(|_| error::out_of_memory(span, "string", bytes))?;
    n.push_str(s);
    n.push_str(q);
    *s = Rc::new(n);
    Ok(())
}

/// The top level's locals, moved into the context for a call of a function
/// that uses them ([`Compiler::call`]).
pub fn globals(cx: &mut Ctx, span: Span) -> R<&mut Frame> {
    cx.globals
        .as_mut()
        .ok_or_else(|| error::internal(span, "a top-level variable out of reach"))
}
