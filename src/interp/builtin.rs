//! Calls of builtins: math is compiled to typed closures over the stdlib's
//! function pointers; everything else (arrays, I/O, the device API, the
//! host's registered functions) evaluates its arguments to [`RtVal`]s and
//! calls [`call_dyn`], since its cost is not per element.

use super::error;
use super::machine::{CExpr, Ctx, Ex};
use super::memcpy;
use super::mpi;
use super::scalar::{value_to_bits, Sc};
use super::stmt::{atomic_combine, atomic_error, scalar_of};
use super::value::{Frame, RtVal, R};
use super::Compiler;
use crate::per_scalar;
use lang::hir::{Expr, ExprH};
use lang::{BuiltinId, Scalar, Span, Type, Value};
use std::rc::Rc;
use stdlib::math::{Float, Math};
use stdlib::{format, npy, ops, Array};

macro_rules! per_num {
    ($s:expr, $T:ident => $body:expr, $else:expr) => {
        match $s {
            Scalar::I32 => {
                type $T = i32;
                $body
            }
            Scalar::I64 => {
                type $T = i64;
                $body
            }
            Scalar::U32 => {
                type $T = u32;
                $body
            }
            Scalar::U8 => {
                type $T = u8;
                $body
            }
            Scalar::F32 => {
                type $T = f32;
                $body
            }
            Scalar::F64 => {
                type $T = f64;
                $body
            }
            Scalar::Bool => $else,
        }
    };
}

fn math<T: Sc + Math>(name: &str, a: Vec<Ex<T>>) -> Option<CExpr> {
    let mut it = a.into_iter();
    let f = match (name, it.next(), it.next(), it.next()) {
        ("abs", Some(x), None, None) => {
            Box::new(move |fr: &mut Frame, cx: &mut Ctx| Ok(Math::abs(x(fr, cx)?))) as Ex<T>
        }
        ("min", Some(x), Some(y), None) => Box::new(move |fr: &mut Frame, cx: &mut Ctx| {
            let a = x(fr, cx)?;
            Ok(Math::min(a, y(fr, cx)?))
        }),
        ("max", Some(x), Some(y), None) => Box::new(move |fr: &mut Frame, cx: &mut Ctx| {
            let a = x(fr, cx)?;
            Ok(Math::max(a, y(fr, cx)?))
        }),
        ("clamp", Some(x), Some(lo), Some(hi)) => Box::new(move |fr: &mut Frame, cx: &mut Ctx| {
            let a = x(fr, cx)?;
            let l = lo(fr, cx)?;
            Ok(Math::clamp(a, l, hi(fr, cx)?))
        }),
        _ => return None,
    };
    Some(T::wrap(f))
}

fn float<T: Sc + Float>(name: &str, a: Vec<Ex<T>>) -> Option<CExpr> {
    let mut it = a.into_iter();
    let f = match (it.next(), it.next(), it.next()) {
        (Some(x), None, None) => {
            let g = T::f1(name)?;
            Box::new(move |fr: &mut Frame, cx: &mut Ctx| Ok(g(x(fr, cx)?))) as Ex<T>
        }
        (Some(x), Some(y), None) => {
            let g = T::f2(name)?;
            Box::new(move |fr: &mut Frame, cx: &mut Ctx| {
                let a = x(fr, cx)?;
                Ok(g(a, y(fr, cx)?))
            })
        }
        (Some(x), Some(y), Some(z)) => {
            let g = T::f3(name)?;
            Box::new(move |fr: &mut Frame, cx: &mut Ctx| {
                let a = x(fr, cx)?;
                let b = y(fr, cx)?;
                Ok(g(a, b, z(fr, cx)?))
            })
        }
        _ => return None,
    };
    Some(T::wrap(f))
}

/// A dynamic call's result as a typed compiled expression.
fn typed(f: Ex<RtVal>, ty: Type, span: Span) -> CExpr {
    match ty {
        Type::Scalar(s) => per_scalar!(s, T => T::wrap(Box::new(move |fr, cx| match f(fr, cx)? {
            RtVal::Scalar(v) => Ok(T::from_slot(value_to_bits(v, s))),
            _ => Err(error::internal(span, "builtin returned no scalar")),
        }))),
        Type::Array(..) => CExpr::Arr(Box::new(move |fr, cx| match f(fr, cx)? {
            RtVal::Array(a) => Ok(a),
            _ => Err(error::internal(span, "builtin returned no array")),
        })),
        Type::Str => CExpr::Str(Box::new(move |fr, cx| match f(fr, cx)? {
            RtVal::Str(s) => Ok(s),
            _ => Err(error::internal(span, "builtin returned no string")),
        })),
        _ => CExpr::Unit(Box::new(move |fr, cx| f(fr, cx).map(|_| ()))),
    }
}

impl Compiler<'_> {
    pub fn builtin(&self, id: BuiltinId, args: &[ExprH], span: Span, ty: Type) -> CExpr {
        let name: Rc<str> = self.builtins.get(id).name.as_str().into();
        let arg_ty = args.first().and_then(|&a| self.scalar_ty(a));
        // Math: typed closures.
        if let (Some(s), true) = (
            ty.scalar(),
            self.builtins.get(id).effect == lang::Effect::Pure,
        ) {
            if let Some(c) = per_num!(s, T => {
                let a: Vec<Ex<T>> = args.iter().map(|&e| self.ex::<T>(e)).collect();
                math::<T>(&name, a)
            }, None)
            {
                return c;
            }
            let fl = match s {
                Scalar::F32 => {
                    float::<f32>(&name, args.iter().map(|&e| self.ex::<f32>(e)).collect())
                }
                Scalar::F64 => {
                    float::<f64>(&name, args.iter().map(|&e| self.ex::<f64>(e)).collect())
                }
                _ => None,
            };
            if let Some(c) = fl {
                return c;
            }
        }
        let _ = arg_ty;
        // Atomic capture forms: the first argument is an element.
        if self.builtins.get(id).place_arg {
            if let Some(&first) = args.first() {
                if let Expr::Index(arr, ix) = &self.body.exprs[first] {
                    let place = self.place(*arr, ix, span);
                    let v = args.get(1).map(|&e| self.expr(e));
                    let name = name.clone();
                    let f: Ex<RtVal> = Box::new(move |fr, cx| {
                        let (a, off) = place(fr, cx)?;
                        let x = match &v {
                            Some(v) => scalar_of(v.eval(fr, cx)?),
                            None => Value::I32(0),
                        };
                        let mut d = a.data_mut();
                        let old = d.get(off).unwrap_or(Value::I32(0));
                        if &*name == "atomic_read" {
                            return Ok(RtVal::Scalar(old));
                        }
                        let new = match lang::ast::AtomicOp::of_builtin(&name) {
                            Some(op) => {
                                atomic_combine(op, old, x).map_err(|e| atomic_error(e, span))?
                            }
                            None => x,
                        };
                        d.set(off, new);
                        Ok(RtVal::Scalar(old))
                    });
                    return typed(f, ty, span);
                }
            }
        }
        // `assert`'s message is made only when the assertion fails, as C's
        // and Python's are: a check in a long loop costs its condition.
        if &*name == "assert" && args.len() == 2 {
            let cond = self.expr(args[0]);
            let message = self.expr(args[1]);
            let at = self.span(args[0]);
            let f: Ex<RtVal> = Box::new(move |fr, cx| {
                if scalar(&cond.eval(fr, cx)?).as_bool().unwrap_or(false) {
                    return Ok(RtVal::Unit);
                }
                let m = message.eval(fr, cx)?;
                Err(error::assert_failed(at, Some(string(&m))))
            });
            return typed(f, ty, span);
        }
        let cargs: Vec<CExpr> = args.iter().map(|&a| self.expr(a)).collect();
        let arg_spans: Vec<Span> = args.iter().map(|&a| self.span(a)).collect();
        let f: Ex<RtVal> = Box::new(move |fr, cx| {
            let mut vals = Vec::with_capacity(cargs.len());
            for c in &cargs {
                vals.push(c.eval(fr, cx)?);
            }
            call_dyn(&name, vals, &arg_spans, span, cx)
        });
        typed(f, ty, span)
    }
}

fn int(v: &RtVal) -> i128 {
    match v {
        RtVal::Scalar(v) => v.as_i128().unwrap_or(0),
        _ => 0,
    }
}

fn scalar(v: &RtVal) -> Value {
    match v {
        RtVal::Scalar(v) => *v,
        _ => Value::I32(0),
    }
}

fn array(v: &RtVal, span: Span) -> R<&Array> {
    match v {
        RtVal::Array(a) => Ok(a),
        _ => Err(error::internal(span, "expected an array argument")),
    }
}

fn ty_arg(v: &RtVal) -> Scalar {
    match v {
        RtVal::Type(t) => *t,
        _ => Scalar::F64,
    }
}

/// The devices of type `t` (`"any"`: every one), by device number.
fn devices_of_type(cx: &Ctx, t: &str, span: Span) -> R<Vec<usize>> {
    let b = cx.backend.clone();
    // `acc_device_default` is the type of the default device (device 0),
    // as NVHPC and GCC take it; `acc_device_not_host` every device that
    // is not the host.
    if t == "default" || t == "not_host" {
        let first = b.device_props(0).map(|p| p.kind);
        return Ok((0..b.num_devices())
            .filter(|&d| {
                let kind = b.device_props(d).map(|p| p.kind);
                match t {
                    "default" => kind == first,
                    _ => kind.is_some_and(|k| k != "host"),
                }
            })
            .collect());
    }
    if !matches!(t, "gpu" | "cpu" | "host" | "other" | "any") {
        return Err(Box::new(
            lang::Diag::error(
                "accl::device::bad_device_type",
                format!("`{t}` is not a device type"),
                span,
                "the device types are \"gpu\", \"cpu\", \"host\", \"other\" and \"any\"",
            )
            .with_help("acc_get_device_type() gives the current device's type; acc_device_default the default device's"),
        ));
    }
    Ok((0..b.num_devices())
        .filter(|&d| t == "any" || b.device_props(d).is_some_and(|p| p.kind == t))
        .collect())
}

fn string(v: &RtVal) -> &str {
    match v {
        RtVal::Str(s) => s,
        _ => "",
    }
}

/// How `print` shows one argument.
pub fn show(v: &RtVal) -> String {
    match v {
        RtVal::Scalar(v) => format::scalar(*v),
        RtVal::Array(a) => format::array(a),
        RtVal::Str(s) => s.to_string(),
        RtVal::Unit => "()".into(),
        RtVal::Type(t) => t.name().into(),
    }
}

/// Every builtin that is not compiled to a typed closure.
pub fn call_dyn(
    name: &str,
    args: Vec<RtVal>,
    spans: &[Span],
    span: Span,
    cx: &mut Ctx,
) -> R<RtVal> {
    // The embedder's functions first: one registered under a stdlib name replaces it.
    if let Some(f) = cx.host_fns.get(name).cloned() {
        let vals: Vec<Value> = args.iter().map(scalar).collect();
        return match f(&vals) {
            Ok(v) => Ok(RtVal::Scalar(v)),
            Err(m) => Err(error::host_fn(span, name, &m)),
        };
    }
    let sp = |i: usize| spans.get(i).copied().unwrap_or(span);
    if let Some(f) = cx.host_val_fns.get(name).cloned() {
        // The function may read or write the arrays it is given.
        if cx.async_pending {
            for (i, a) in args.iter().enumerate() {
                if let RtVal::Array(a) = a {
                    cx.host_access(a, None, true, sp(i))?;
                }
            }
        }
        return f(&args).map_err(|m| error::host_fn(span, name, &m));
    }
    // The MPI builtins check their own arrays (a received section is written).
    if name.starts_with("mpi_") {
        return mpi::call(name, &args, spans, span, cx);
    }
    if name.starts_with("acc_memcpy_to_device") || name.starts_with("acc_memcpy_from_device") {
        return memcpy::call(name, &args, spans, span, cx);
    }
    // A copy within a device checks its own sides: it touches no host
    // array, and pending work on them is a race between queues.
    let own_checks =
        matches!(name, "len" | "shape" | "acc_is_present") || name.starts_with("acc_memcpy_device");
    if cx.async_pending && !own_checks {
        for (i, a) in args.iter().enumerate() {
            if let RtVal::Array(a) = a {
                cx.host_access(a, None, false, sp(i))?;
            }
        }
    }
    let dims = |from: usize| args[from..].iter().map(int).collect::<Vec<_>>();
    // The embedder's array-size limit, checked before anything is allocated
    // where the size is known up front, and on the result otherwise.
    if cx.max_array_bytes != 0 {
        let count = |d: Vec<i128>| d.iter().try_fold(1i128, |a, &x| a.checked_mul(x.max(0)));
        let n = match name {
            "zeros" | "ones" => count(dims(1)),
            "full" | "rand" => count(dims(2)),
            "linspace" => Some(int(&args[3])),
            "clone" => Some(array(&args[0], span)?.len() as i128),
            _ => None,
        };
        if let Some(n) = n {
            let bytes = n.saturating_mul(ty_of_alloc(name, &args) as i128);
            cx.check_array_bytes(bytes, span)?;
        }
    }
    let t0 = super::phases::io_clock(name);
    let out = call_builtin(name, &args, spans, span, cx);
    super::phases::io(t0);
    let out = out?;
    if let RtVal::Array(a) = &out {
        if cx.max_array_bytes != 0 && !matches!(name, "clone") {
            cx.check_array_bytes((a.len() * a.scalar().size()) as i128, span)?;
        }
    }
    Ok(out)
}

/// The element size of the array an allocating builtin makes.
fn ty_of_alloc(name: &str, args: &[RtVal]) -> usize {
    match name {
        "clone" => match &args[0] {
            RtVal::Array(a) => a.scalar().size(),
            _ => 1,
        },
        _ => ty_arg(&args[0]).size(),
    }
}

fn call_builtin(name: &str, args: &[RtVal], spans: &[Span], span: Span, cx: &mut Ctx) -> R<RtVal> {
    if let Some(r) = super::text::call(name, args, spans, span, cx) {
        return r;
    }
    let sp = |i: usize| spans.get(i).copied().unwrap_or(span);
    let shape_err = |e: stdlib::array::ShapeError| error::bad_shape(span, e);
    let dims = |from: usize| args[from..].iter().map(int).collect::<Vec<_>>();
    Ok(match name {
        "zeros" => RtVal::Array(ops::zeros(ty_arg(&args[0]), &dims(1)).map_err(shape_err)?),
        "full" => RtVal::Array(
            ops::full(ty_arg(&args[0]), scalar(&args[1]), &dims(2)).map_err(shape_err)?,
        ),
        "arange" => {
            let t = ty_arg(&args[0]);
            let (s, e) = if args.len() == 2 {
                (Value::zero(t), scalar(&args[1]))
            } else {
                (scalar(&args[1]), scalar(&args[2]))
            };
            RtVal::Array(ops::arange(t, s, e).map_err(shape_err)?)
        }
        "linspace" => {
            let t = ty_arg(&args[0]);
            let f = |v: &RtVal| scalar(v).as_f64().unwrap_or(0.0);
            RtVal::Array(
                ops::linspace(t, f(&args[1]), f(&args[2]), int(&args[3])).map_err(shape_err)?,
            )
        }
        "clone" => RtVal::Array(array(&args[0], span)?.deep_clone()),
        "ones" => RtVal::Array(
            ops::full(
                ty_arg(&args[0]),
                Value::IntLit(1).cast(ty_arg(&args[0])),
                &dims(1),
            )
            .map_err(shape_err)?,
        ),
        "rand" => RtVal::Array(
            ops::rand(ty_arg(&args[0]), int(&args[1]) as u64, &dims(2)).map_err(shape_err)?,
        ),
        "astype" => {
            RtVal::Array(ops::astype(array(&args[0], span)?, ty_arg(&args[1])).map_err(shape_err)?)
        }
        "reshape" => {
            let a = array(&args[0], span)?;
            match ops::reshape(a, &dims(1)).map_err(shape_err)? {
                Some(r) => RtVal::Array(r),
                None => {
                    return Err(Box::new(lang::Diag::error(
                        "accl::run::bad_reshape",
                        format!("cannot reshape {} elements into {:?}", a.len(), dims(1)),
                        span,
                        "element counts differ",
                    )))
                }
            }
        }
        "mean" => RtVal::Scalar(Value::F64(ops::mean(&reduce_source(
            array(&args[0], span)?,
            cx,
            span,
        )?))),
        "dot" => {
            let (a, b) = (array(&args[0], span)?, array(&args[1], span)?);
            match ops::dot(&reduce_source(a, cx, span)?, &reduce_source(b, cx, span)?) {
                Some(v) => RtVal::Scalar(v),
                None => {
                    return Err(Box::new(lang::Diag::error(
                        "accl::run::bad_shape",
                        format!("`dot` of arrays of {} and {} elements", a.len(), b.len()),
                        span,
                        "lengths differ",
                    )))
                }
            }
        }
        "argmax" | "argmin" => RtVal::Scalar(Value::I64(ops::arg_extremum(
            &reduce_source(array(&args[0], span)?, cx, span)?,
            name == "argmax",
        ))),
        "len" => RtVal::Scalar(Value::I32(array(&args[0], span)?.len() as i32)),
        "shape" => {
            let a = array(&args[0], span)?;
            let k = int(&args[1]);
            match usize::try_from(k).ok().and_then(|k| a.shape().get(k)) {
                Some(&n) => RtVal::Scalar(Value::I32(n as i32)),
                None => return Err(error::bad_axis(sp(1), k, a.rank())),
            }
        }
        // Whole-array reductions run on the device (here: its copy) when the
        // whole array is present there.
        "sum" => RtVal::Scalar(ops::sum(&reduce_source(array(&args[0], span)?, cx, span)?)),
        "maxval" => RtVal::Scalar(ops::extremum(
            &reduce_source(array(&args[0], span)?, cx, span)?,
            true,
        )),
        "minval" => RtVal::Scalar(ops::extremum(
            &reduce_source(array(&args[0], span)?, cx, span)?,
            false,
        )),
        "str" => RtVal::Str(show(&args[0]).into()),
        "nargs" => RtVal::Scalar(Value::I32(cx.args.len().min(i32::MAX as usize) as i32)),
        "arg" | "arg_i32" | "arg_f64" => {
            let k = int(&args[0]);
            let given = usize::try_from(k).ok().and_then(|k| cx.args.get(k));
            let text = match (given, args.get(1)) {
                (Some(t), _) if name == "arg" => return Ok(RtVal::Str(Rc::new(t.to_string()))),
                (Some(t), _) => t.clone(),
                (None, Some(default)) => return Ok(default.clone()),
                (None, None) => return Err(error::missing_arg(sp(0), k, cx.args.len())),
            };
            let t = text.trim();
            let v = if name == "arg_i32" {
                t.parse::<i32>().ok().map(Value::I32)
            } else {
                t.parse::<f64>().ok().map(Value::F64)
            };
            match v {
                Some(v) => RtVal::Scalar(v),
                None => return Err(error::bad_arg(span, k, &text, &name[4..])),
            }
        }
        "getenv" => {
            let var = cx
                .env_access
                .then(|| std::env::var(string(&args[0])).ok())
                .flatten();
            match (var, args.get(1)) {
                (Some(v), _) => RtVal::Str(v.into()),
                (None, Some(default)) => default.clone(),
                (None, None) => RtVal::Str(Rc::default()),
            }
        }
        "join" => {
            let sep = string(&args[0]);
            let parts: Vec<String> = args[1..].iter().map(show).collect();
            let bytes = parts.iter().fold(
                sep.len().saturating_mul(parts.len().saturating_sub(1)),
                |n, p| n.saturating_add(p.len()),
            );
            let mut s = cx.new_string(bytes, span)?;
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    s.push_str(sep);
                }
                s.push_str(p);
            }
            RtVal::Str(s.into())
        }
        "format" => {
            let fmt = string(&args[0]);
            let vals: Vec<stdlib::text::Arg> = args[1..]
                .iter()
                .map(|v| match v {
                    RtVal::Scalar(v) => stdlib::text::Arg::Scalar(*v),
                    RtVal::Array(a) => stdlib::text::Arg::Array(a),
                    RtVal::Str(s) => stdlib::text::Arg::Str(s),
                    RtVal::Unit | RtVal::Type(_) => stdlib::text::Arg::Str(""),
                })
                .collect();
            let limit = cx.memory_limit();
            match stdlib::text::format_within(fmt, &vals, limit) {
                Ok(Ok(s)) => RtVal::Str(s.into()),
                Ok(Err(e)) => {
                    return Err(error::bad_format(
                        sp(0),
                        &e,
                        cx.source.as_deref().map(|s| s.text.as_str()),
                    ))
                }
                Err(bytes) if bytes > limit => {
                    return Err(error::memory_limit(span, "string", bytes, limit))
                }
                Err(bytes) => return Err(error::out_of_memory(span, "string", bytes)),
            }
        }
        "print" | "println" | "eprint" | "eprintln" => {
            let mut s: String = args.iter().map(show).collect();
            if name.ends_with("ln") {
                s.push('\n');
            }
            if name.starts_with('e') {
                (cx.err)(&s);
            } else {
                (cx.out)(&s);
            }
            RtVal::Unit
        }
        "assert" => {
            let ok = scalar(&args[0]).as_bool().unwrap_or(false);
            if !ok {
                return Err(error::assert_failed(sp(0), args.get(1).map(string)));
            }
            RtVal::Unit
        }
        "clock" => {
            // The time after the synchronous kernels before it, as if each
            // had been waited for at its construct.
            let b = cx.backend.clone();
            b.complete_sync(cx, None, Some(span))?;
            RtVal::Scalar(Value::F64(cx.clock0.elapsed().as_secs_f64()))
        }
        "exit" => {
            let code = scalar(&args[0]).as_i128().unwrap_or(1) as i32;
            return Err(error::exit(sp(0), code));
        }
        "write_png" => {
            let path = cx.path(name, string(&args[1]), span)?;
            stdlib::image::write_png(array(&args[0], span)?, &path)
                .map_err(|e| error::io(sp(1), &path, e))?;
            RtVal::Unit
        }
        "save_csv" => {
            let path = cx.path(name, string(&args[1]), span)?;
            stdlib::csvio::save(array(&args[0], span)?, &path)
                .map_err(|e| error::io(sp(1), &path, e))?;
            RtVal::Unit
        }
        "load_csv" => {
            let path = cx.path(name, string(&args[1]), span)?;
            let t = ty_arg(&args[0]);
            let limit = cx.memory_limit();
            match stdlib::csvio::load_within(&path, t, limit / t.size().max(1)) {
                Ok(r) => RtVal::Array(r.map_err(|e| match e {
                    stdlib::csvio::CsvError::Parse { .. }
                    | stdlib::csvio::CsvError::Ragged { .. } => error::bad_table(sp(1), &path, e),
                    e => error::io(sp(1), &path, e),
                })?),
                Err(n) => {
                    let bytes = n.saturating_mul(t.size());
                    return Err(error::memory_limit(span, "table", bytes, limit));
                }
            }
        }
        "save_npy" => {
            let path = cx.path(name, string(&args[1]), span)?;
            npy::save(array(&args[0], span)?, &path).map_err(|e| error::io(sp(1), &path, e))?;
            RtVal::Unit
        }
        "load_npy" | "load_npy2" | "load_npy3" => {
            let path = cx.path(name, string(&args[1]), span)?;
            let rank = match name {
                "load_npy2" => Some(2),
                "load_npy3" => Some(3),
                _ => None,
            };
            // The file is read whole: its size counts against the limit
            // before it is read (the header is at most 64 KiB of it).
            let limit = cx.memory_limit();
            if let Ok(m) = std::fs::metadata(&path) {
                let len = usize::try_from(m.len()).unwrap_or(usize::MAX);
                if len > limit.saturating_add(1 << 16) {
                    return Err(error::memory_limit(span, "file", len, limit));
                }
            }
            RtVal::Array(
                npy::load(&path, ty_arg(&args[0]), rank).map_err(|e| error::io(sp(1), &path, e))?,
            )
        }
        // With a device type, devices are numbered among those of the type
        // (as `set device_type(t) device_num(n)` numbers them).
        "acc_get_num_devices" => RtVal::Scalar(Value::I32(match args.first() {
            Some(t) => devices_of_type(cx, string(t), sp(0))?.len(),
            None => cx.backend.num_devices(),
        } as i32)),
        "acc_get_device_num" => RtVal::Scalar(Value::I32(match args.first() {
            Some(t) => devices_of_type(cx, string(t), sp(0))?
                .iter()
                .position(|&d| d == cx.device)
                .map_or(-1, |k| k as i32),
            None => cx.device as i32,
        })),
        // Devices open on first use and stay open until the engine ends, so
        // `acc_init` has nothing left to do and `acc_shutdown` only waits
        // for the current device's work when it is of that type (its data
        // stays present: OpenACC leaves data after a shutdown undefined).
        "acc_get_default_async" => RtVal::Scalar(Value::I32(cx.default_async as i32)),
        "acc_set_default_async" => {
            cx.set_default_async(int(&args[0]), sp(0))?;
            RtVal::Unit
        }
        "acc_init" => {
            devices_of_type(cx, string(&args[0]), sp(0))?;
            RtVal::Unit
        }
        "acc_shutdown" => {
            if devices_of_type(cx, string(&args[0]), sp(0))?.contains(&cx.device) {
                let b = cx.backend.clone();
                b.wait(cx, None, None, span)?;
                b.complete_sync(cx, None, Some(span))?;
            }
            RtVal::Unit
        }
        // The device-numbered forms (OpenACC 3.2): device `d` among those
        // of the type, as `init` / `shutdown device_type(t) device_num(d)`
        // number them; a number with no such device is an error.
        "acc_init_device" | "acc_shutdown_device" => {
            let (k, t) = (int(&args[0]), string(&args[1]));
            let of_type = devices_of_type(cx, t, sp(1))?;
            let Some(&d) = usize::try_from(k).ok().and_then(|k| of_type.get(k)) else {
                let all = cx.backend.devices();
                return Err(error::no_device_of_type(sp(0), t, k, &all));
            };
            if name == "acc_shutdown_device" && d == cx.device {
                let b = cx.backend.clone();
                b.wait(cx, None, None, span)?;
                b.complete_sync(cx, None, Some(span))?;
            }
            RtVal::Unit
        }
        "acc_set_device_type" => {
            let t = string(&args[0]);
            devices_of_type(cx, t, sp(0))?;
            super::construct::set_device_type(cx, t, 0, sp(0))?;
            RtVal::Unit
        }
        "acc_set_device_num" => {
            let k = int(&args[0]);
            let d = match args.get(1) {
                Some(t) => {
                    let t = string(t);
                    let of_type = devices_of_type(cx, t, sp(1))?;
                    match usize::try_from(k).ok().and_then(|k| of_type.get(k)) {
                        Some(&d) => d as i128,
                        None => {
                            let all = cx.backend.devices();
                            return Err(error::no_device_of_type(sp(0), t, k, &all));
                        }
                    }
                }
                None => k,
            };
            cx.set_device(d, sp(0))?;
            RtVal::Unit
        }
        "acc_async_test" | "acc_async_test_all" => {
            // -1 names the default queue, as in `async(-1)`.
            let qs = args.first().map(|q| match int(q) {
                -1 | -3 => vec![cx.default_async],
                q => vec![q as i64],
            });
            if qs.as_deref() == Some(&[-2]) {
                // `acc_async_sync`: synchronous work is always done.
                return Ok(RtVal::Scalar(Value::Bool(true)));
            }
            let b = cx.backend.clone();
            RtVal::Scalar(Value::Bool(b.async_test(cx, qs.as_deref(), span)?))
        }
        "acc_wait_any" => {
            let qs: Vec<i64> = {
                let a = array(&args[0], span)?;
                let d = a.data();
                (0..a.len())
                    .filter_map(|i| d.get(i).and_then(|v| v.as_i128()))
                    .map(|q| q as i64)
                    .collect()
            };
            // Entries of `acc_async_sync` (-2) stand for no queue.
            if qs.iter().all(|&q| q == -2) {
                return Ok(RtVal::Scalar(Value::I32(-1)));
            }
            let b = cx.backend.clone();
            loop {
                for (i, &q) in qs.iter().enumerate() {
                    if q != -2 && b.async_test(cx, Some(&[q]), span)? {
                        return Ok(RtVal::Scalar(Value::I32(i as i32)));
                    }
                }
                // The embedder's time limit still applies while polling.
                cx.tick(span)?;
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
        "acc_memcpy_device" => memcpy::device(args, spans, span, cx)?,
        "acc_memcpy_d2d" => memcpy::d2d(args, spans, span, cx)?,
        "acc_get_device_type" => {
            let kind = match cx.on_host {
                true => "host",
                false => cx
                    .backend
                    .device_props(cx.device)
                    .map_or("other", |p| p.kind),
            };
            RtVal::Str(Rc::new(kind.to_string()))
        }
        "acc_get_property" | "acc_get_property_string" => {
            let mut d = int(&args[0]);
            if args.len() == 3 {
                let of_type = devices_of_type(cx, string(&args[1]), sp(1))?;
                d = usize::try_from(d)
                    .ok()
                    .and_then(|k| of_type.get(k))
                    .map_or(-1, |&g| g as i128);
            }
            let what = string(args.last().expect("typed: two or three arguments"));
            let props = usize::try_from(d)
                .ok()
                .and_then(|d| cx.backend.device_props(d))
                .ok_or_else(|| error::bad_device(sp(0), d, cx.backend.num_devices()))?;
            match (name, what) {
                ("acc_get_property", "memory") => {
                    RtVal::Scalar(Value::I64(props.memory.min(i64::MAX as u64) as i64))
                }
                ("acc_get_property", "free_memory") => {
                    RtVal::Scalar(Value::I64(props.free_memory.min(i64::MAX as u64) as i64))
                }
                ("acc_get_property_string", "name") => RtVal::Str(props.name.into()),
                ("acc_get_property_string", "vendor") => RtVal::Str(props.vendor.into()),
                ("acc_get_property_string", "driver") => RtVal::Str(props.driver.into()),
                _ => return Err(error::bad_property(sp(1), name, what)),
            }
        }
        // The host runs this, so it is not on a device; a second argument
        // (the checker's, before a compute construct) says whether that
        // construct runs on the current device, which on the host
        // reference is the host.
        "acc_on_device" => {
            let on = match args {
                [] => false,
                [t, ..] => {
                    let t = string(t);
                    if !matches!(
                        t,
                        "none" | "default" | "host" | "not_host" | "gpu" | "cpu" | "other" | "any"
                    ) {
                        return Err(Box::new(
                            lang::Diag::error(
                                "accl::device::bad_device_type",
                                format!("`{t}` is not a device type"),
                                sp(0),
                                "the device types are \"gpu\", \"cpu\", \"host\", \"other\", \"any\", \"default\", \"not_host\" and \"none\"",
                            )
                            .with_help("acc_device_host, acc_device_not_host, acc_device_default and acc_device_none name the OpenACC ones"),
                        ));
                    }
                    let b = cx.backend.clone();
                    let kind = match args.get(1) {
                        Some(RtVal::Scalar(Value::Bool(true))) if !cx.on_host => {
                            b.device_props(cx.device).map_or("host", |p| p.kind)
                        }
                        _ => "host",
                    };
                    match t {
                        "any" => true,
                        "none" => false,
                        "default" | "not_host" => kind != "host",
                        t => t == kind,
                    }
                }
            };
            RtVal::Scalar(Value::Bool(on))
        }
        "acc_is_present" => {
            let sec = super::section_arg::section(args, spans, &mut 0, cx)?;
            let (b, dev) = (cx.backend.clone(), cx.device);
            let env = b.env(cx);
            // The whole array may be present as several sections together;
            // a section must lie inside one present section.
            let present = if sec.region.len(sec.array.shape()) == sec.array.len() {
                env.is_present(dev, &sec.array)
            } else {
                matches!(
                    env.find(dev, &sec.array, &sec.region),
                    super::present::Find::Inside(_)
                )
            };
            RtVal::Scalar(Value::Bool(present))
        }
        _ => {
            return Err(error::internal(
                span,
                &format!("no host implementation of `{name}`"),
            ))
        }
    })
}

/// The array a whole-array reduction reads: the device's values when all of
/// `a` is present on the current device, else `a`.
fn reduce_source(a: &Array, cx: &mut Ctx, span: Span) -> R<Array> {
    let (b, dev) = (cx.backend.clone(), cx.device);
    let mut env = b.env(cx);
    if env.is_present(dev, a) {
        if let Some(d) = env
            .snapshot(dev, a)
            .map_err(|m| error::device(span, "the array", &m))?
        {
            return Ok(d);
        }
    }
    Ok(a.clone())
}
