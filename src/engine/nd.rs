//! `ndarray` arrays in and out (the `ndarray` cargo feature). An accl array
//! is a row-major `Vec<T>` with a shape of rank 1 to 3, which is what an
//! owned `ndarray::Array` in standard layout holds: such an array moves in
//! and out without a copy. Any other layout (transposed, Fortran order, a
//! slice of a larger array) is copied once, in row-major order.

use super::{Engine, Error};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn};
use stdlib::{Array, Elem};

impl Engine {
    /// Create or replace an array variable from an `ndarray` array of rank
    /// 1 to 3 (`Array1`..`Array3`, or an `ArrayD`). In standard layout
    /// (row-major, contiguous, the whole allocation) its buffer becomes the
    /// variable's storage: no copy. Otherwise the elements are copied in
    /// row-major order. Rank 0 or above 3 is `accl::engine::bad_shape`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let a = ndarray::Array2::<f32>::ones((2, 3));
    /// let p = a.as_ptr();
    /// e.set_ndarray("a", a).unwrap();
    /// assert_eq!(e.eval_as::<f32>("sum(a)").unwrap(), 6.0);
    /// // The same buffer: nothing was copied.
    /// assert_eq!(e.with_ndarray::<f32, _>("a", |v| v.as_ptr()), Some(p));
    /// // A transposed array is copied, in its logical (row-major) order.
    /// let t = ndarray::arr2(&[[1i32, 2], [3, 4]]).reversed_axes();
    /// e.set_ndarray("t", t).unwrap();
    /// assert_eq!(e.get_array::<i32>("t").unwrap().0, [1, 3, 2, 4]);
    /// ```
    pub fn set_ndarray<T: Elem, D: Dimension>(
        &mut self,
        name: &str,
        a: ndarray::Array<T, D>,
    ) -> Result<(), Error> {
        let shape = a.shape().to_vec();
        if shape.is_empty() || shape.len() > 3 {
            return Err(Error::api(
                "accl::engine::bad_shape",
                format!(
                    "an accl array has rank 1 to 3, and this ndarray has rank {}",
                    shape.len()
                ),
            ));
        }
        let n = a.len();
        let data = if !a.is_standard_layout() {
            a.iter().copied().collect()
        } else {
            // Contiguous in row-major order from `off` on: the whole
            // buffer when `off` is 0 and nothing follows.
            match a.into_raw_vec_and_offset() {
                (v, Some(0)) if v.len() == n => v,
                (v, Some(off)) => v
                    .get(off..off.saturating_add(n))
                    .unwrap_or_default()
                    .to_vec(),
                (_, None) => Vec::new(),
            }
        };
        if data.len() != n {
            return Err(Error::api(
                "accl::engine::bad_shape",
                "the ndarray's elements could not be read",
            ));
        }
        self.set_array(name, data, &shape)
    }

    /// A copy of an array variable as an `ArrayD` (None when there is no
    /// such variable or its elements are not `T`).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let m = arange(f64, 6);").unwrap();
    /// let m = e.get_ndarray::<f64>("m").unwrap();
    /// assert_eq!(m.shape(), [6]);
    /// assert!(e.get_ndarray::<f32>("m").is_none());
    /// ```
    pub fn get_ndarray<T: Elem>(&self, name: &str) -> Option<ArrayD<T>> {
        let a = self.array(name)?;
        let d = a.try_data()?;
        let v = T::slice(&d)?.to_vec();
        ArrayD::from_shape_vec(IxDyn(a.shape()), v).ok()
    }

    /// Remove an array variable and return it as an `ArrayD`, moving its
    /// buffer out without a copy when the variable held the last handle
    /// onto it (no other variable, no [`Array`] kept by the embedder, no
    /// device mapping of it); a copy otherwise. None, with the variable
    /// left in place, when there is no such array of `T`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let h = zeros(f32, 2, 4); h[1, 3] = 5.0;").unwrap();
    /// let p = e.with_ndarray::<f32, _>("h", |v| v.as_ptr()).unwrap();
    /// let h = e.take_ndarray::<f32>("h").unwrap();
    /// assert_eq!((h.shape(), h[[1, 3]]), (&[2, 4][..], 5.0));
    /// assert_eq!(h.as_ptr(), p);
    /// assert!(e.array("h").is_none());
    /// ```
    pub fn take_ndarray<T: Elem>(&mut self, name: &str) -> Option<ArrayD<T>> {
        let a = self.array(name)?;
        if a.try_data()?.scalar() != T::SCALAR {
            return None;
        }
        self.remove(name);
        let shape = a.shape().to_vec();
        let v = match a.try_into_data() {
            Ok(d) => T::from_data(d).ok()?,
            Err(a) => {
                let d = a.try_data()?;
                T::slice(&d)?.to_vec()
            }
        };
        ArrayD::from_shape_vec(IxDyn(&shape), v).ok()
    }

    /// Call `f` with a view of an array variable's elements (no copy);
    /// None when there is no such array of `T`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let g = arange(i32, 6);").unwrap();
    /// let s = e.with_ndarray::<i32, _>("g", |v| v.sum()).unwrap();
    /// assert_eq!(s, 15);
    /// ```
    pub fn with_ndarray<T: Elem, R>(
        &self,
        name: &str,
        f: impl FnOnce(ArrayViewD<'_, T>) -> R,
    ) -> Option<R> {
        let a = self.array(name)?;
        let d = a.try_data()?;
        let v = ArrayViewD::from_shape(IxDyn(a.shape()), T::slice(&d)?).ok()?;
        Some(f(v))
    }

    /// Like [`Engine::with_ndarray`], with a mutable view: the script sees
    /// the writes.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let g = zeros(f64, 2, 2);").unwrap();
    /// e.with_ndarray_mut::<f64, _>("g", |mut v| v[[1, 0]] = 4.0).unwrap();
    /// assert_eq!(e.eval_as::<f64>("g[1, 0]").unwrap(), 4.0);
    /// ```
    pub fn with_ndarray_mut<T: Elem, R>(
        &mut self,
        name: &str,
        f: impl FnOnce(ArrayViewMutD<'_, T>) -> R,
    ) -> Option<R> {
        let a: Array = self.array(name)?;
        let mut d = a.try_data_mut()?;
        let v = ArrayViewMutD::from_shape(IxDyn(a.shape()), T::slice_mut(&mut d)?).ok()?;
        Some(f(v))
    }
}
