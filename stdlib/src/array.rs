//! Array storage shared by the interpreter, the stdlib host implementations
//! and (later) the Vulkan backend.
//!
//! An [`Array`] is a reference value (`let B = A` aliases): a shared handle
//! to one typed, contiguous, row-major buffer ([`Data`], an enum over
//! [`Buf<T>`] per element type, never boxed per element: accl's own `Vec<T>`
//! or memory another library owns, such as a NumPy array's) and an
//! immutable shape. Every array gets a process-unique [`Array::id`] at creation, so a
//! present table can be keyed by it without depending on addresses that the
//! allocator may reuse. The buffer is behind a `RefCell` (the interpreter is
//! single-threaded); [`Array::with_bytes`] and [`Array::with_bytes_mut`] give
//! the raw bytes to a transfer engine. `bool` elements are stored as `bool`
//! (one byte, 0 or 1); writing raw bytes into one normalises them.

pub use crate::buf::Buf;
use lang::{Scalar, Value};
use std::any::Any;
use std::cell::{Ref, RefCell, RefMut};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Typed element storage.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Bool(Buf<bool>),
    I32(Buf<i32>),
    I64(Buf<i64>),
    U32(Buf<u32>),
    U8(Buf<u8>),
    F32(Buf<f32>),
    F64(Buf<f64>),
}

/// A Rust element type of an accl array.
pub trait Elem: Copy + PartialOrd + fmt::Debug + Default + 'static {
    const SCALAR: Scalar;
    fn slice(d: &Data) -> Option<&[Self]>;
    fn slice_mut(d: &mut Data) -> Option<&mut [Self]>;
    fn into_data(v: Vec<Self>) -> Data {
        Self::buf_data(Buf::from(v))
    }
    fn buf_data(b: Buf<Self>) -> Data;
    /// The typed vector of `d` (moved out; copied when the elements are
    /// foreign memory), or `d` back if it holds another element type.
    fn from_data(d: Data) -> Result<Vec<Self>, Data>;
    fn to_value(self) -> Value;
    /// `v as Self` (Rust cast semantics); `v` is any scalar value.
    fn from_value(v: Value) -> Self;
}

macro_rules! elem {
    ($t:ty, $var:ident, $sc:ident) => {
        impl Elem for $t {
            const SCALAR: Scalar = Scalar::$sc;
            #[inline(always)]
            fn slice(d: &Data) -> Option<&[Self]> {
                match d {
                    Data::$var(v) => Some(v),
                    _ => None,
                }
            }
            #[inline(always)]
            fn slice_mut(d: &mut Data) -> Option<&mut [Self]> {
                match d {
                    Data::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn buf_data(b: Buf<Self>) -> Data {
                Data::$var(b)
            }
            fn from_data(d: Data) -> Result<Vec<Self>, Data> {
                match d {
                    Data::$var(v) => Ok(v.into_vec()),
                    d => Err(d),
                }
            }
            fn to_value(self) -> Value {
                Value::$var(self)
            }
            fn from_value(v: Value) -> Self {
                match v.cast(Scalar::$sc) {
                    Value::$var(x) => x,
                    _ => Self::default(),
                }
            }
        }
    };
}
elem!(bool, Bool, Bool);
elem!(i32, I32, I32);
elem!(i64, I64, I64);
elem!(u32, U32, U32);
elem!(u8, U8, U8);
elem!(f32, F32, F32);
elem!(f64, F64, F64);

/// Apply `$body` with `$v` bound to the typed vector of `$data`.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::array::Data::Bool($v) => $body,
            $crate::array::Data::I32($v) => $body,
            $crate::array::Data::I64($v) => $body,
            $crate::array::Data::U32($v) => $body,
            $crate::array::Data::U8($v) => $body,
            $crate::array::Data::F32($v) => $body,
            $crate::array::Data::F64($v) => $body,
        }
    };
}

impl Data {
    /// `n` zeros of type `t`, in fresh pages the system hands out at first
    /// write (huge pages for a large array).
    pub fn zeros(t: Scalar, n: usize) -> Data {
        let mut d = match t {
            Scalar::Bool => bool::into_data(vec![false; n]),
            Scalar::I32 => i32::into_data(vec![0; n]),
            Scalar::I64 => i64::into_data(vec![0; n]),
            Scalar::U32 => u32::into_data(vec![0; n]),
            Scalar::U8 => u8::into_data(vec![0; n]),
            Scalar::F32 => f32::into_data(vec![0.0; n]),
            Scalar::F64 => f64::into_data(vec![0.0; n]),
        };
        if let Some(b) = d.bytes_mut() {
            advise_huge_pages(b);
        }
        d
    }
    /// Whether the elements are memory another library owns
    /// ([`Array::from_foreign`]).
    pub fn is_foreign(&self) -> bool {
        with_data!(self, v => v.is_foreign())
    }
    /// Like [`Data::zeros`], but an allocation the system refuses is an
    /// error instead of an abort.
    pub fn try_zeros(t: Scalar, n: usize) -> Option<Data> {
        fn z<T: Elem>(n: usize) -> Option<Data> {
            if n == 0 || std::mem::size_of::<T>() == 0 {
                return Some(T::into_data(Vec::new()));
            }
            let layout = std::alloc::Layout::array::<T>(n).ok()?;
            // SAFETY: the layout has a non-zero size; all-zero bytes are a
            // valid value of every element type (0, 0.0, false); the vector
            // takes the allocation with the layout it was made with. Zeroed
            // allocation lets the system hand out untouched pages lazily.
            let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
            if p.is_null() {
                return None;
            }
            let mut d = T::into_data(unsafe { Vec::from_raw_parts(p, n, n) });
            if let Some(b) = d.bytes_mut() {
                advise_huge_pages(b);
            }
            Some(d)
        }
        match t {
            Scalar::Bool => z::<bool>(n),
            Scalar::I32 => z::<i32>(n),
            Scalar::I64 => z::<i64>(n),
            Scalar::U32 => z::<u32>(n),
            Scalar::U8 => z::<u8>(n),
            Scalar::F32 => z::<f32>(n),
            Scalar::F64 => z::<f64>(n),
        }
    }
    pub fn scalar(&self) -> Scalar {
        match self {
            Data::Bool(_) => Scalar::Bool,
            Data::I32(_) => Scalar::I32,
            Data::I64(_) => Scalar::I64,
            Data::U32(_) => Scalar::U32,
            Data::U8(_) => Scalar::U8,
            Data::F32(_) => Scalar::F32,
            Data::F64(_) => Scalar::F64,
        }
    }
    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element `i` as a value (None when out of range).
    pub fn get(&self, i: usize) -> Option<Value> {
        with_data!(self, v => v.get(i).map(|x| x.to_value()))
    }
    /// Set element `i` to `x as T`; false when out of range.
    pub fn set(&mut self, i: usize, x: Value) -> bool {
        with_data!(self, v => match v.get_mut(i) {
            Some(slot) => {
                *slot = Elem::from_value(x);
                true
            }
            None => false,
        })
    }
    /// Fill with `x as T`.
    pub fn fill(&mut self, x: Value) {
        with_data!(self, v => {
            let x = Elem::from_value(x);
            v.iter_mut().for_each(|s| *s = x)
        })
    }
    /// The raw bytes (native endianness).
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every element type but u8
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: every element type is plain old data with no padding, and
        // `bool` is one byte holding 0 or 1; the length is the byte size of
        // the same allocation.
        with_data!(self, v => unsafe {
            std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..]))
        })
    }
    /// The raw bytes, writable; None for `bool` arrays (whose bytes must stay
    /// 0 or 1: write them with [`Data::write_bytes`]).
    #[allow(clippy::unnecessary_cast)]
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        macro_rules! m {
            ($v:expr) => {
                // SAFETY: as in `bytes`; every bit pattern is a valid value of
                // these element types.
                Some(unsafe {
                    std::slice::from_raw_parts_mut(
                        $v.as_mut_ptr() as *mut u8,
                        std::mem::size_of_val(&$v[..]),
                    )
                })
            };
        }
        match self {
            Data::Bool(_) => None,
            Data::I32(v) => m!(v),
            Data::I64(v) => m!(v),
            Data::U32(v) => m!(v),
            Data::U8(v) => m!(v),
            Data::F32(v) => m!(v),
            Data::F64(v) => m!(v),
        }
    }
    /// Copy `src` into the bytes starting at byte `offset` (clipped to the
    /// buffer; `bool` bytes are normalised to 0/1).
    pub fn write_bytes(&mut self, offset: usize, src: &[u8]) {
        if let Data::Bool(v) = self {
            for (d, s) in v.iter_mut().skip(offset).zip(src) {
                *d = *s != 0;
            }
            return;
        }
        if let Some(b) = self.bytes_mut() {
            let start = offset.min(b.len());
            let n = src.len().min(b.len() - start);
            b[start..start + n].copy_from_slice(&src[..n]);
        }
    }
}

/// Ask the system to back `bytes` with huge pages (Linux, 4 MiB and more,
/// as NumPy does for its large arrays) before they are first written: a
/// 256 MB read into fresh memory, or the first writes of `zeros`, then
/// take 128 page faults, not 65,536. Only advice: where it is refused,
/// nothing changes.
pub fn advise_huge_pages(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        // `ACCL_HUGE_PAGES=0` leaves the system's default (as NumPy's
        // `NUMPY_MADVISE_HUGEPAGE=0` does): where the kernel compacts
        // memory at each fault (`defrag` set to `madvise`), a fragmented
        // machine can make the first writes slower, not faster.
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let on = *ON.get_or_init(|| std::env::var("ACCL_HUGE_PAGES").map_or(true, |v| v != "0"));
        if !on || bytes.len() < 4 << 20 {
            return;
        }
        let start = bytes.as_mut_ptr() as usize;
        let (lo, hi) = (
            start.next_multiple_of(HUGE),
            (start + bytes.len()) / HUGE * HUGE,
        );
        if hi > lo {
            // SAFETY: [lo, hi) lies inside `bytes`, memory this process owns
            // and holds a unique borrow of; MADV_HUGEPAGE changes how the
            // pages are backed, never their contents.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The shared part of an array.
#[derive(Debug)]
pub struct ArrayObj {
    id: u64,
    shape: Vec<usize>,
    data: RefCell<Data>,
}

/// An accl array value: a shared handle (cloning aliases).
///
/// The elements never move: an array's shape is fixed, nothing replaces or
/// grows its `Vec`, so their address is the same for the array's whole
/// life. Device backends rely on this to copy straight into and out of it
/// (host memory imported into Vulkan).
#[derive(Clone)]
pub struct Array(Rc<ArrayObj>);

/// Why an array could not be built.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeError {
    Negative(i128),
    TooLarge,
    Mismatch { elements: usize, shape: Vec<usize> },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Negative(d) => write!(f, "a dimension is negative ({d})"),
            ShapeError::TooLarge => f.write_str("the array is too large"),
            ShapeError::Mismatch { elements, shape } => {
                write!(f, "{elements} elements do not fill the shape {shape:?}")
            }
        }
    }
}

/// The largest array the host will allocate, in bytes (16 GiB: a guard
/// against a typo like `zeros(f64, 1 << 40)` taking the machine down; an
/// allocation the system refuses below it is an error too, not an abort).
pub const MAX_BYTES: usize = 1 << 34;

/// Check dimensions (from script integers) and return them as a shape.
pub fn shape_of(dims: &[i128], t: Scalar) -> Result<Vec<usize>, ShapeError> {
    let mut n: usize = 1;
    let mut shape = Vec::with_capacity(dims.len());
    for &d in dims {
        if d < 0 {
            return Err(ShapeError::Negative(d));
        }
        let d = usize::try_from(d).map_err(|_| ShapeError::TooLarge)?;
        n = n.checked_mul(d).ok_or(ShapeError::TooLarge)?;
        shape.push(d);
    }
    if n.checked_mul(t.size()).is_none_or(|b| b > MAX_BYTES) {
        return Err(ShapeError::TooLarge);
    }
    Ok(shape)
}

impl Array {
    /// An array from its data and shape (row-major); the product of the
    /// shape must be the data's length.
    pub fn new(data: Data, shape: Vec<usize>) -> Result<Array, ShapeError> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or(ShapeError::TooLarge)?;
        if n != data.len() || shape.is_empty() || shape.len() > 3 {
            return Err(ShapeError::Mismatch {
                elements: data.len(),
                shape,
            });
        }
        Ok(Array(Rc::new(ArrayObj {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            shape,
            data: RefCell::new(data),
        })))
    }
    pub fn zeros(t: Scalar, shape: Vec<usize>) -> Result<Array, ShapeError> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or(ShapeError::TooLarge)?;
        if n.checked_mul(t.size()).is_none_or(|b| b > MAX_BYTES) {
            return Err(ShapeError::TooLarge);
        }
        Array::new(Data::try_zeros(t, n).ok_or(ShapeError::TooLarge)?, shape)
    }
    /// From a typed vector.
    pub fn from_vec<T: Elem>(v: Vec<T>, shape: Vec<usize>) -> Result<Array, ShapeError> {
        Array::new(T::into_data(v), shape)
    }
    /// An array over memory another library owns (a NumPy array's buffer,
    /// a memory-mapped file): no copy. `owner` is dropped when the last
    /// handle onto the array goes, which may be after the engine's last
    /// use of it (a device copy of the elements holds a handle until it
    /// completes).
    ///
    /// # Safety
    ///
    /// Until `owner` is dropped, `ptr` must be non-null, aligned for `T`
    /// and valid for reads and writes of the shape's product of elements,
    /// each a valid `T` (for `bool`, every byte 0 or 1), and the memory
    /// must not be freed, moved or resized. accl reads and writes the
    /// elements as its own: anything else may touch them only while no
    /// engine runs on the array (between calls, with no async device copy
    /// of it pending).
    ///
    /// ```
    /// use stdlib::{Array, Elem};
    /// let mut mem = vec![1.0f32, 2.0, 3.0, 4.0];
    /// // SAFETY: `mem` outlives the array and is not touched while it lives.
    /// let a = unsafe { Array::from_foreign(mem.as_mut_ptr(), vec![2, 2], Box::new(())) }.unwrap();
    /// f32::slice_mut(&mut a.data_mut()).unwrap()[2] = 20.0;
    /// assert_eq!(a.get::<f32>(1), Ok(2.0));
    /// drop(a);
    /// assert_eq!(mem, [1.0, 2.0, 20.0, 4.0]);
    /// ```
    pub unsafe fn from_foreign<T: Elem>(
        ptr: *mut T,
        shape: Vec<usize>,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Result<Array, ShapeError> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or(ShapeError::TooLarge)?;
        // SAFETY: the caller's contract, for the `n` elements of `shape`.
        Array::new(
            T::buf_data(unsafe { Buf::from_foreign(ptr, n, owner) }),
            shape,
        )
    }
    /// The identity of the storage: equal for aliases, unique per allocation.
    #[inline(always)]
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// How many handles onto this storage exist (1: this is the last).
    pub fn handles(&self) -> usize {
        Rc::strong_count(&self.0)
    }
    pub fn same(&self, o: &Array) -> bool {
        Rc::ptr_eq(&self.0, &o.0)
    }
    #[inline(always)]
    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }
    #[inline(always)]
    pub fn rank(&self) -> usize {
        self.0.shape.len()
    }
    pub fn len(&self) -> usize {
        self.0.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn scalar(&self) -> Scalar {
        self.0.data.borrow().scalar()
    }
    /// Elements per index of the leading axis (a "row").
    pub fn row_len(&self) -> usize {
        self.0.shape[1..].iter().product()
    }
    #[inline(always)]
    pub fn data(&self) -> Ref<'_, Data> {
        self.0.data.borrow()
    }
    #[inline(always)]
    pub fn data_mut(&self) -> RefMut<'_, Data> {
        self.0.data.borrow_mut()
    }
    /// Like [`Array::data`], None while the data is mutably borrowed.
    pub fn try_data(&self) -> Option<Ref<'_, Data>> {
        self.0.data.try_borrow().ok()
    }
    /// Like [`Array::data_mut`], None while the data is borrowed.
    pub fn try_data_mut(&self) -> Option<RefMut<'_, Data>> {
        self.0.data.try_borrow_mut().ok()
    }
    /// Element `k` (flat index) if `T` is the element type and `k` is in
    /// range: `Err(len)` when out of range, `Err(usize::MAX)` on a type
    /// mismatch or while the data is mutably borrowed. The hot read path of
    /// the interpreter: no borrow count is taken.
    #[inline(always)]
    pub fn get<T: Elem>(&self, k: usize) -> Result<T, usize> {
        // SAFETY: the shared reference lives only until one element is
        // copied out, during which nothing can borrow the data mutably
        // (single-threaded, no callback runs in between); a mutable borrow
        // already in progress makes this an error instead.
        let d = unsafe { self.0.data.try_borrow_unguarded() }.map_err(|_| usize::MAX)?;
        let s = T::slice(d).ok_or(usize::MAX)?;
        s.get(k).copied().ok_or(s.len())
    }
    /// A typed copy of the elements (None if `T` is not the element type).
    pub fn to_vec<T: Elem>(&self) -> Option<Vec<T>> {
        T::slice(&self.data()).map(|s| s.to_vec())
    }
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.data().bytes())
    }
    /// None for `bool` arrays.
    pub fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
        self.data_mut().bytes_mut().map(f)
    }
    /// The elements, moved out without a copy, when this is the last
    /// handle onto them; the array back otherwise. (Foreign elements stay
    /// foreign: [`Buf::into_vec`] copies them.)
    pub fn try_into_data(self) -> Result<Data, Array> {
        Rc::try_unwrap(self.0)
            .map(|o| o.data.into_inner())
            .map_err(Array)
    }
    /// A new array with a copy of the data (accl's own memory, whatever
    /// this one's).
    pub fn deep_clone(&self) -> Array {
        Array::new(self.data().clone(), self.shape().to_vec()).unwrap_or_else(|_| self.clone())
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array#{}({} {:?})",
            self.id(),
            self.scalar(),
            self.shape()
        )
    }
}

impl PartialEq for Array {
    /// Same shape and same elements (not identity: see [`Array::same`]).
    fn eq(&self, o: &Array) -> bool {
        self.shape() == o.shape() && *self.data() == *o.data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_array_reads_and_writes_the_memory_it_was_given() {
        let mut mem = vec![1i64, 2, 3, 4, 5, 6];
        let owner = std::sync::Arc::new(());
        // SAFETY: `mem` outlives the array and is read only after it goes.
        let a =
            unsafe { Array::from_foreign(mem.as_mut_ptr(), vec![2, 3], Box::new(owner.clone())) }
                .unwrap();
        assert!(a.data().is_foreign());
        assert_eq!((a.get::<i64>(4), a.row_len()), (Ok(5), 3));
        a.data_mut().set(5, Value::I64(60));
        // Equal to the same elements in accl's own memory; a deep clone is
        // accl's own memory.
        let owned = Array::from_vec(vec![1i64, 2, 3, 4, 5, 60], vec![2, 3]).unwrap();
        assert_eq!(a, owned);
        let c = a.deep_clone();
        assert!(!c.data().is_foreign());
        c.data_mut().set(0, Value::I64(-1));
        assert_eq!(a.get::<i64>(0), Ok(1));
        // The elements moved out as a Vec are a copy; the owner goes with
        // the last handle.
        let v = i64::from_data(a.try_into_data().unwrap()).unwrap();
        assert_eq!(v, vec![1, 2, 3, 4, 5, 60]);
        assert_eq!(std::sync::Arc::strong_count(&owner), 1);
        assert_eq!(mem, vec![1, 2, 3, 4, 5, 60]);
    }

    #[test]
    fn a_foreign_array_has_one_to_three_axes() {
        let mut mem = [0f32; 4];
        for shape in [vec![], vec![1, 2, 2, 1]] {
            // SAFETY: the shape's product (1 or 4) of valid elements; the
            // array is refused, its storage dropped at once.
            let r = unsafe { Array::from_foreign(mem.as_mut_ptr(), shape, Box::new(())) };
            assert!(matches!(r, Err(ShapeError::Mismatch { .. })));
        }
    }
}
