//! Conversions between Python objects and accl values: the one place the
//! package reads or makes NumPy arrays and scalars.
//!
//! An accl array's elements never move (its shape is fixed), so a NumPy
//! array can view them directly: its base object is a [`Buffer`] holding a
//! handle onto the accl array, which keeps the elements alive as long as
//! any NumPy view of them lives. Such an array (from `Engine.__getitem__`,
//! `accl.zeros`, a function's result) goes back into the engine as the
//! same accl array, with no copy. A NumPy array of NumPy's own memory that
//! is row-major, contiguous, aligned and writable is borrowed: an accl
//! array over its buffer (`borrow`). Any other (Fortran order, a strided
//! slice, read-only, misaligned, bool) is copied in row-major order, and
//! after a call the function's writes are copied back into it.

use crate::borrow::{self, Borrowed};
use crate::errors;
use crate::owned::Owned;
use accl::lang::{Scalar, Value};
use accl::{Array, Val};
use numpy::ndarray::{ArrayViewD, IxDyn};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

/// Keeps an accl array alive under the NumPy arrays that view it (their
/// `base`).
#[pyclass(module = "accl._accl", name = "Buffer")]
pub struct Buffer {
    pub array: Owned<Array>,
}

#[pymethods]
impl Buffer {
    fn __repr__(&self) -> PyResult<String> {
        let a = self.array.get()?;
        Ok(format!("<accl buffer {}{:?}>", a.scalar(), a.shape()))
    }
}

/// The accl element type named by a NumPy dtype name.
pub fn scalar_of_name(name: &str) -> Option<Scalar> {
    Some(match name {
        "bool" => Scalar::Bool,
        "int32" => Scalar::I32,
        "int64" => Scalar::I64,
        "uint32" => Scalar::U32,
        "uint8" => Scalar::U8,
        "float32" => Scalar::F32,
        "float64" => Scalar::F64,
        _ => return None,
    })
}

/// Run `$body` with `$t` the Rust element type of the accl scalar `$s`.
macro_rules! with_elem {
    ($s:expr, $t:ident => $body:expr) => {
        match $s {
            Scalar::Bool => {
                type $t = bool;
                $body
            }
            Scalar::I32 => {
                type $t = i32;
                $body
            }
            Scalar::I64 => {
                type $t = i64;
                $body
            }
            Scalar::U32 => {
                type $t = u32;
                $body
            }
            Scalar::U8 => {
                type $t = u8;
                $body
            }
            Scalar::F32 => {
                type $t = f32;
                $body
            }
            Scalar::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

/// A NumPy array viewing the elements of `a` (no copy), writable: writes
/// from either side are seen by the other.
pub fn view<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    let holder = Bound::new(
        py,
        Buffer {
            array: Owned::new(a.clone()),
        },
    )?
    .into_any();
    let shape = IxDyn(a.shape());
    with_elem!(a.scalar(), T => {
        let ptr = {
            let d = a.try_data().ok_or_else(|| errors::argument(py, "the array is in use"))?;
            <T as accl::stdlib::Elem>::slice(&d).map(|s| s.as_ptr()).unwrap_or(std::ptr::null())
        };
        // SAFETY: `ptr` is the start of the array's `len` elements in
        // row-major order; they never move or shrink (an accl array's
        // storage is fixed for its life), and `holder` becomes the NumPy
        // array's base, keeping a handle onto the array until NumPy drops
        // the last view.
        let v = unsafe { ArrayViewD::<T>::from_shape_ptr(shape, ptr) };
        Ok(unsafe { PyArrayDyn::<T>::borrow_from_array(&v, holder) }.into_any())
    })
}

/// A NumPy array's element type as an accl scalar: a plain numeric or
/// bool dtype of the machine's byte order. (By kind and size rather than
/// by comparing with each of the seven dtypes: this runs at every call.)
fn numpy_scalar(a: &Bound<'_, PyUntypedArray>) -> Option<Scalar> {
    use numpy::PyArrayDescrMethods;
    let d = a.dtype();
    if d.has_fields() || d.has_subarray() || d.is_native_byteorder() == Some(false) {
        return None;
    }
    Some(match (d.kind(), d.itemsize()) {
        (b'b', 1) => Scalar::Bool,
        (b'i', 4) => Scalar::I32,
        (b'i', 8) => Scalar::I64,
        (b'u', 4) => Scalar::U32,
        (b'u', 1) => Scalar::U8,
        (b'f', 4) => Scalar::F32,
        (b'f', 8) => Scalar::F64,
        _ => return None,
    })
}

/// The accl array a NumPy array views, when it is one of ours and views
/// all of it in row-major order.
fn shared(a: &Bound<'_, PyUntypedArray>) -> Option<Array> {
    // SAFETY: a valid array object; `base` is a borrowed, possibly null
    // pointer to its base object.
    let base = unsafe { (*a.as_array_ptr()).fields.base };
    if base.is_null() {
        return None;
    }
    let base = unsafe { Bound::from_borrowed_ptr(a.py(), base) };
    let buf = base.cast::<Buffer>().ok()?;
    let buf = buf.try_borrow().ok()?;
    let arr = buf.array.get().ok()?;
    let data = unsafe { (*a.as_array_ptr()).fields.data } as *const u8;
    let start = arr.try_data()?.bytes().as_ptr();
    (data == start && a.shape() == arr.shape() && a.is_c_contiguous()).then(|| arr.clone())
}

/// How a NumPy array reached accl.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Via {
    /// It views an accl array, which is passed.
    Shared,
    /// An accl array over its buffer is passed.
    Borrowed,
    /// A copy is passed.
    Copied,
}

/// An array argument: the accl array to pass, how it was made, and the
/// NumPy array it came from (a copied one gets the function's writes
/// back when it is writable).
pub struct ArrayIn<'py> {
    pub array: Array,
    pub via: Via,
    pub source: Bound<'py, PyUntypedArray>,
    writable: bool,
}

/// `obj` as an accl array of rank 1 to 3 (of element type `want`, when
/// given): shared when it views an accl array, borrowed when its memory
/// can be (`borrow::borrowable`), else copied.
pub fn array_in<'py>(
    obj: &Bound<'py, PyAny>,
    want: Option<(Scalar, u8)>,
    what: &dyn Fn() -> String,
    borrowed: &mut Borrowed,
) -> PyResult<ArrayIn<'py>> {
    let py = obj.py();
    let Ok(a) = obj.cast::<PyUntypedArray>() else {
        return Err(errors::argument(
            py,
            format!("{} must be a NumPy array, not `{}`", what(), type_name(obj)),
        ));
    };
    let Some(s) = numpy_scalar(a) else {
        return Err(errors::argument(
            py,
            format!(
                "{} has dtype {}: accl arrays are bool, int32, int64, uint32, uint8, float32 or float64",
                what(),
                a.dtype()
            ),
        ));
    };
    let rank = a.ndim();
    if !(1..=3).contains(&rank) {
        return Err(errors::api(
            py,
            "accl::engine::bad_shape",
            format!("{} has {rank} axes: an accl array has 1 to 3", what()),
        ));
    }
    if let Some((ws, wr)) = want {
        if ws != s || usize::from(wr) != rank {
            let axes = if rank == 1 { "" } else { &",".repeat(rank - 1) };
            let want_axes = if wr == 1 {
                String::new()
            } else {
                ",".repeat(usize::from(wr) - 1)
            };
            return Err(errors::argument(
                py,
                format!(
                    "{} is `{s}[{axes}]`, and the function takes `{ws}[{want_axes}]`",
                    what()
                ),
            ));
        }
    }
    if let Some(array) = shared(a) {
        return Ok(ArrayIn {
            array,
            via: Via::Shared,
            source: a.clone(),
            writable: true,
        });
    }
    if borrow::borrowable(a, s) {
        return Ok(ArrayIn {
            array: borrowed.get(a, s)?,
            via: Via::Borrowed,
            source: a.clone(),
            writable: true,
        });
    }
    copy_in(a, s, what)
}

/// A row-major copy of `a` (of element type `s`), whose writes go back
/// into `a` after the call when it is writable.
pub fn copy_in<'py>(
    a: &Bound<'py, PyUntypedArray>,
    s: Scalar,
    what: &dyn Fn() -> String,
) -> PyResult<ArrayIn<'py>> {
    let py = a.py();
    let shape = a.shape().to_vec();
    let bad_shape = |e: accl::stdlib::array::ShapeError| {
        errors::api(py, "accl::engine::bad_shape", e.to_string())
    };
    let unreadable = |e: numpy::BorrowError| errors::argument(py, format!("{}: {e}", what()));
    // Any other layout NumPy copies into fresh row-major, aligned memory
    // first, at its own speed (walking a strided view element by element
    // in Rust took 0.8 s for 1M elements in the dev build).
    let row_major = a.is_c_contiguous() && a.is_aligned();
    let c = if row_major {
        a.clone()
    } else {
        a.call_method1("copy", ("C",))?
            .cast_into::<PyUntypedArray>()?
    };
    let array = if s == Scalar::Bool {
        // As bytes: NumPy lets any byte into a bool array (through a
        // `uint8` view), and accl's bool is 0 or 1.
        let u = c
            .call_method1("view", ("u1",))?
            .cast_into::<PyArrayDyn<u8>>()?;
        let r = u.try_readonly().map_err(unreadable)?;
        let bytes = r
            .as_slice()
            .map_err(|e| errors::argument(py, e.to_string()))?;
        Array::from_vec(bytes.iter().map(|&b| b != 0).collect::<Vec<bool>>(), shape)
            .map_err(bad_shape)?
    } else if row_major {
        with_elem!(s, T => {
            let t = c.cast::<PyArrayDyn<T>>()?;
            let r = t.try_readonly().map_err(unreadable)?;
            let v = r.as_slice().map_err(|e| errors::argument(py, e.to_string()))?.to_vec();
            Array::from_vec(v, shape).map_err(bad_shape)?
        })
    } else {
        // NumPy's fresh copy is accl's alone: borrowed, not copied again.
        borrow::over(&c, s)?
    };
    let writable = a
        .getattr("flags")?
        .getattr("writeable")?
        .extract::<bool>()?;
    Ok(ArrayIn {
        array,
        via: Via::Copied,
        source: a.clone(),
        writable,
    })
}

/// The bytes an argument's accl array spans.
fn span(a: &Array) -> std::ops::Range<usize> {
    a.try_data()
        .map(|d| {
            let b = d.bytes();
            b.as_ptr() as usize..b.as_ptr() as usize + b.len()
        })
        .unwrap_or(0..0)
}

/// Borrowed arguments whose memory overlaps another argument's without
/// being the same accl array (`x` and `x[1:]`, or a slice of an accl
/// array beside that array) are copied instead, as every NumPy array was
/// before arrays were borrowed: two accl arrays over one buffer would be
/// copied to a device each on its own and written back over each other.
/// All of them are copied, so the writes come back in argument order, the
/// last one's winning, as before.
pub fn separate(args: &mut [ArrayIn<'_>], what: &dyn Fn(usize) -> String) -> PyResult<()> {
    let spans: Vec<_> = args.iter().map(|a| span(&a.array)).collect();
    let clash: Vec<bool> = (0..args.len())
        .map(|j| {
            args[j].via == Via::Borrowed
                && (0..args.len()).any(|i| {
                    i != j
                        && !args[i].array.same(&args[j].array)
                        && spans[i].start < spans[j].end
                        && spans[j].start < spans[i].end
                })
        })
        .collect();
    for (j, c) in clash.into_iter().enumerate() {
        if c {
            let s = args[j].array.scalar();
            args[j] = copy_in(&args[j].source.clone(), s, &|| what(j))?;
        }
    }
    Ok(())
}

/// Copy an argument's elements back into the NumPy array they were copied
/// from (the function may have written them).
pub fn copy_back(arg: &ArrayIn<'_>) -> PyResult<()> {
    if arg.via != Via::Copied || !arg.writable {
        return Ok(());
    }
    let a = &arg.source;
    if a.is_c_contiguous() && a.is_aligned() && arg.array.scalar() != Scalar::Bool {
        let done = with_elem!(arg.array.scalar(), T => {
            let t = a.cast::<PyArrayDyn<T>>()?;
            let mut w = t.try_readwrite().map_err(|e| errors::argument(a.py(), e.to_string()))?;
            let d = arg.array.data();
            let src = <T as accl::stdlib::Elem>::slice(&d).unwrap_or_default();
            match w.as_slice_mut() {
                Ok(dst) if dst.len() == src.len() => {
                    dst.copy_from_slice(src);
                    true
                }
                _ => false,
            }
        });
        if done {
            return Ok(());
        }
    }
    // Any other layout (and bool), NumPy assigns from a view of accl's
    // elements.
    a.set_item(a.py().Ellipsis(), view(a.py(), &arg.array)?)?;
    Ok(())
}

/// A Python scalar (or NumPy scalar) as an accl value of type `want`.
pub fn scalar_in(
    obj: &Bound<'_, PyAny>,
    want: Scalar,
    what: &dyn Fn() -> String,
) -> PyResult<Value> {
    // A Python float or int, the usual arguments, without naming the type.
    let float = matches!(want, Scalar::F32 | Scalar::F64);
    if obj.is_exact_instance_of::<PyFloat>() || (float && obj.is_exact_instance_of::<PyInt>()) {
        if let (true, Ok(x)) = (float, obj.extract::<f64>()) {
            return Ok(if want == Scalar::F32 {
                Value::F32(x as f32)
            } else {
                Value::F64(x)
            });
        }
    }
    let py = obj.py();
    let bad = || {
        errors::argument(
            py,
            format!(
                "{} is `{}`, and the function takes `{want}`",
                what(),
                type_name(obj)
            ),
        )
    };
    let int = obj.is_exact_instance_of::<PyInt>();
    let is_bool = obj.is_instance_of::<PyBool>() || (!int && type_name(obj) == "bool_");
    if want == Scalar::Bool {
        return if is_bool {
            Ok(Value::Bool(obj.is_truthy()?))
        } else {
            Err(bad())
        };
    }
    if is_bool {
        return Err(bad());
    }
    if matches!(want, Scalar::F32 | Scalar::F64) {
        let x: f64 = obj.extract().map_err(|_| bad())?;
        return Ok(if want == Scalar::F32 {
            Value::F32(x as f32)
        } else {
            Value::F64(x)
        });
    }
    // An integer parameter takes integers only (no silent truncation).
    if obj.is_instance_of::<PyFloat>() || (!int && type_name(obj).starts_with("float")) {
        return Err(bad());
    }
    let x: i128 = obj.extract().map_err(|_| bad())?;
    let out = match want {
        Scalar::I32 => i32::try_from(x).ok().map(Value::I32),
        Scalar::I64 => i64::try_from(x).ok().map(Value::I64),
        Scalar::U32 => u32::try_from(x).ok().map(Value::U32),
        Scalar::U8 => u8::try_from(x).ok().map(Value::U8),
        _ => None,
    };
    out.ok_or_else(|| errors::argument(py, format!("{} ({x}) does not fit `{want}`", what())))
}

/// Any Python value as an accl value, its type taken from the value: a
/// Python int is `i32` (`i64` when it does not fit), a float `f64`, a
/// NumPy scalar its own type; arrays as in [`array_in`].
pub fn value_in<'py>(
    obj: &Bound<'py, PyAny>,
    what: &dyn Fn() -> String,
    borrowed: &mut Borrowed,
) -> PyResult<(Val, Option<ArrayIn<'py>>)> {
    if obj.cast::<PyUntypedArray>().is_ok() {
        let a = array_in(obj, None, what, borrowed)?;
        return Ok((Val::Array(a.array.clone()), Some(a)));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok((Val::Str(s.extract::<String>()?.into()), None));
    }
    let v = if obj.is_instance_of::<PyBool>() {
        Value::Bool(obj.is_truthy()?)
    } else if obj.is_instance_of::<PyInt>() {
        let x: i64 = obj
            .extract()
            .map_err(|_| errors::argument(obj.py(), format!("{} does not fit `i64`", what())))?;
        i32::try_from(x).map(Value::I32).unwrap_or(Value::I64(x))
    } else if obj.is_instance_of::<PyFloat>() {
        Value::F64(obj.extract()?)
    } else {
        // A NumPy scalar: its dtype names the type.
        let s = obj
            .getattr("dtype")
            .and_then(|d| d.getattr("name"))
            .ok()
            .and_then(|n| n.extract::<String>().ok())
            .and_then(|n| scalar_of_name(&n))
            .ok_or_else(|| {
                errors::argument(
                    obj.py(),
                    format!(
                        "{} is `{}`, which accl has no type for",
                        what(),
                        type_name(obj)
                    ),
                )
            })?;
        scalar_in(obj, s, what)?
    };
    Ok((Val::Scalar(v), None))
}

/// An accl value as a Python object: scalars as int, float or bool,
/// strings as str, arrays as NumPy views; `None` for no value.
pub fn value_out(py: Python<'_>, v: Option<&Val>) -> PyResult<Py<PyAny>> {
    Ok(match v {
        None | Some(Val::Unit) => py.None(),
        Some(Val::Scalar(x)) => scalar_out(py, *x)?,
        Some(Val::Str(s)) => PyString::new(py, s).into_any().unbind(),
        Some(Val::Array(a)) => view(py, a)?.unbind(),
        Some(Val::Type(s)) => PyString::new(py, &s.to_string()).into_any().unbind(),
    })
}

pub fn scalar_out(py: Python<'_>, x: Value) -> PyResult<Py<PyAny>> {
    Ok(match x {
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Value::I32(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::I64(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::U32(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::U8(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::F32(f) => f64::from(f).into_pyobject(py)?.into_any().unbind(),
        Value::F64(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::IntLit(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::FloatLit(f) => f.into_pyobject(py)?.into_any().unbind(),
    })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `zeros(shape, dtype)`: a new accl array of zeros, as a NumPy view.
pub fn zeros<'py>(py: Python<'py>, shape: Vec<usize>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    let s = scalar_of_name(dtype).ok_or_else(|| {
        errors::argument(py, format!("dtype {dtype}: accl arrays are bool, int32, int64, uint32, uint8, float32 or float64"))
    })?;
    if !(1..=3).contains(&shape.len()) {
        return Err(errors::api(
            py,
            "accl::engine::bad_shape",
            format!(
                "shape {shape:?} has {} axes: an accl array has 1 to 3",
                shape.len()
            ),
        ));
    }
    let a = Array::zeros(s, shape)
        .map_err(|e| errors::api(py, "accl::engine::bad_shape", e.to_string()))?;
    view(py, &a)
}

/// Whether `obj` is a NumPy array viewing a whole accl array (passed
/// without a copy).
pub fn is_shared(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyUntypedArray>()
        .ok()
        .and_then(|a| shared(a))
        .is_some()
}

/// Whether passing `obj` to an accl function copies it (a NumPy array of
/// a supported element type that is neither in accl's memory nor
/// borrowable); false for anything that is not such an array.
pub fn is_copied(obj: &Bound<'_, PyAny>) -> bool {
    let Ok(a) = obj.cast::<PyUntypedArray>() else {
        return false;
    };
    match numpy_scalar(a) {
        Some(s) => shared(a).is_none() && !borrow::borrowable(a, s),
        None => false,
    }
}
