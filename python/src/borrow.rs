//! NumPy arrays passed to accl without a copy: an accl array over the
//! NumPy array's own buffer (`accl::Array::from_foreign`), whose owner is
//! a strong reference onto the NumPy array, and a small cache per engine
//! that hands out the same accl array for the same buffer at later calls.
//!
//! The same accl array matters beyond saving an allocation: a Vulkan
//! device imports a host array's pages once and keeps the import under
//! the array's identity (`Array::id`), so a fresh accl array at every call
//! had its 4 MB imported anew each time (4.3 ms a call on an H100); and
//! `present(x)` finds data an `enter data` made only for the same array.
//!
//! The cache holds each NumPy array strongly: while an entry lives its
//! buffer cannot be freed, so an array allocated later at the same
//! address is never taken for the old one. An entry whose NumPy array
//! nothing but accl holds any more goes at the next call ([`Borrowed::sweep`]),
//! and at most [`CAPACITY`] are kept (the least recently used goes first).

use accl::lang::Scalar;
use accl::Array;
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// NumPy arrays remembered per engine.
pub const CAPACITY: usize = 64;

/// The borrowed NumPy arrays of one engine.
#[derive(Default)]
pub struct Borrowed {
    entries: Vec<Entry>,
    clock: u64,
}

struct Entry {
    addr: usize,
    scalar: Scalar,
    shape: Vec<usize>,
    array: Array,
    /// The NumPy array (a second reference beside the accl array's owner):
    /// its reference count says when Python has let go of it.
    numpy: Py<PyAny>,
    used: u64,
}

/// References the cache itself accounts for: the entry's and the owner
/// inside its accl array.
const OURS: isize = 2;

/// Whether `a` can be borrowed: a native-endian array of a supported
/// element type (the caller checked), row-major and contiguous, aligned,
/// writable and not empty. `bool` arrays are copied: NumPy lets any byte
/// into a bool array (through a `uint8` view), and accl's bool is 0 or 1.
pub fn borrowable(a: &Bound<'_, PyUntypedArray>, s: Scalar) -> bool {
    use numpy::npyffi::flags::{NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE};
    // SAFETY: a valid array object, read under the GIL.
    let (flags, data) = unsafe {
        let f = &(*a.as_array_ptr()).fields;
        (f.flags, f.data as usize)
    };
    s != Scalar::Bool
        && a.is_c_contiguous()
        && flags & NPY_ARRAY_ALIGNED != 0
        && data % s.size() == 0
        && flags & NPY_ARRAY_WRITEABLE != 0
        && !a.is_empty()
}

/// A new accl array over `a`'s buffer, holding `a` (`borrowable(a, s)`
/// holds, or `a` is a fresh row-major copy of that kind).
pub fn over(a: &Bound<'_, PyUntypedArray>, s: Scalar) -> PyResult<Array> {
    // SAFETY: a valid array object, read under the GIL.
    let data = unsafe { (*a.as_array_ptr()).fields.data };
    let owner: Py<PyAny> = a.clone().into_any().unbind();
    let shape = a.shape().to_vec();
    macro_rules! make {
        ($t:ty) => {
            // SAFETY: `borrowable`: the buffer is aligned for the element
            // type, contiguous and row-major with the shape's elements,
            // each a valid value (NumPy's dtype is the same type; bool is
            // never borrowed). `owner` keeps the array, and so its buffer,
            // alive, and NumPy neither moves nor resizes the buffer of an
            // array something references (`resize` refuses). This thread's
            // Python code touches it only between engine calls; another
            // thread writing it while a call runs without the GIL races
            // with accl as with any native code NumPy shares a buffer
            // with (docs/python.md tells callers not to).
            unsafe { Array::from_foreign(data as *mut $t, shape, Box::new(owner)) }
        };
    }
    match s {
        Scalar::I32 => make!(i32),
        Scalar::I64 => make!(i64),
        Scalar::U32 => make!(u32),
        Scalar::U8 => make!(u8),
        Scalar::F32 => make!(f32),
        Scalar::F64 => make!(f64),
        Scalar::Bool => {
            return Err(crate::errors::argument(
                a.py(),
                "a bool array is copied, not borrowed",
            ))
        }
    }
    .map_err(|e| crate::errors::api(a.py(), "accl::engine::bad_shape", e.to_string()))
}

impl Borrowed {
    /// The accl array over `a`'s buffer (element type `s`, which the
    /// caller took from its dtype; `borrowable(a, s)` holds): the one made
    /// before for the same buffer, dtype and shape, else a new one.
    pub fn get(&mut self, a: &Bound<'_, PyUntypedArray>, s: Scalar) -> PyResult<Array> {
        // SAFETY: a valid array object, read under the GIL.
        let data = unsafe { (*a.as_array_ptr()).fields.data };
        let addr = data as usize;
        self.clock += 1;
        let shape = a.shape();
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.addr == addr && e.scalar == s && e.shape == shape)
        {
            e.used = self.clock;
            return Ok(e.array.clone());
        }
        let array = over(a, s)?;
        let shape = shape.to_vec();
        // One entry per NumPy array: one whose shape or dtype was changed
        // in place since leaves (its accl array lives on where it is held).
        let obj = a.as_ptr();
        self.entries.retain(|e| e.numpy.as_ptr() != obj);
        if self.entries.len() >= CAPACITY {
            if let Some(i) = (0..self.entries.len()).min_by_key(|&i| self.entries[i].used) {
                self.entries.swap_remove(i);
            }
        }
        self.entries.push(Entry {
            addr,
            scalar: s,
            shape,
            array: array.clone(),
            numpy: a.clone().into_any().unbind(),
            used: self.clock,
        });
        Ok(array)
    }

    /// Let go of the NumPy arrays that only accl still holds (their
    /// Python objects deleted): their accl arrays go too, unless an engine
    /// variable, device data or a pending copy still holds them, which
    /// keeps the NumPy array and its buffer alive until then.
    pub fn sweep(&mut self, _py: Python<'_>) {
        // SAFETY: the entries' objects are alive (held by them), and the
        // GIL is held (`py`).
        self.entries
            .retain(|e| unsafe { pyo3::ffi::Py_REFCNT(e.numpy.as_ptr()) } > OURS);
    }
}
