//! Host implementations of the array builtins: constructors, whole-array
//! reductions.
//!
//! Whole-array reductions run over the row-major elements in a fixed order,
//! so the host result is one well-defined number (integer sums wrap). Float
//! `sum`, `dot` and `mean` add pairwise as NumPy does (blocks of 128 added
//! in eight lanes, halves added recursively): adding one element at a time
//! lets the error grow with the length (10^7 copies of 0.1f32 came to
//! 1,087,937, 8.8% off); pairwise, with its logarithm. The
//! reduction of an empty array is the operator's identity: `sum` 0, `maxval`
//! the type's lowest value (`-inf` for floats), `minval` its highest.

use crate::array::{shape_of, Array, Data, Elem, ShapeError};
use crate::with_data;
use lang::{Scalar, Value};

/// `zeros(T, dims..)`.
pub fn zeros(t: Scalar, dims: &[i128]) -> Result<Array, ShapeError> {
    Array::zeros(t, shape_of(dims, t)?)
}

/// `full(T, v, dims..)`.
pub fn full(t: Scalar, v: Value, dims: &[i128]) -> Result<Array, ShapeError> {
    let a = zeros(t, dims)?;
    a.data_mut().fill(v);
    Ok(a)
}

/// `arange(T, n)` (`0, 1, .. n-1`) or `arange(T, start, end)` (`start, start+1, ..` below `end`).
pub fn arange(t: Scalar, start: Value, end: Value) -> Result<Array, ShapeError> {
    let (s, e) = (start.as_f64().unwrap_or(0.0), end.as_f64().unwrap_or(0.0));
    let n = if t.is_float() {
        (e - s).ceil().max(0.0)
    } else {
        let (s, e) = (start.as_i128().unwrap_or(0), end.as_i128().unwrap_or(0));
        (e - s).max(0) as f64
    };
    if n > (crate::array::MAX_BYTES / t.size()) as f64 {
        return Err(ShapeError::TooLarge);
    }
    let n = n as usize;
    let a = Array::zeros(t, vec![n])?;
    {
        let mut d = a.data_mut();
        let si = start.as_i128().unwrap_or(0);
        for i in 0..n {
            let v = if t.is_float() {
                Value::F64(s + i as f64)
            } else {
                Value::IntLit(si + i as i128)
            };
            d.set(i, v);
        }
    }
    Ok(a)
}

/// `linspace(T, start, end, n)`: `n` evenly spaced values from `start` to `end` inclusive.
pub fn linspace(t: Scalar, start: f64, end: f64, n: i128) -> Result<Array, ShapeError> {
    let a = zeros(t, &[n])?;
    let n = a.len();
    {
        let mut d = a.data_mut();
        for i in 0..n {
            let v = if n == 1 {
                start
            } else if i == n - 1 {
                end
            } else {
                start + (end - start) * (i as f64 / (n - 1) as f64)
            };
            d.set(i, Value::F64(v));
        }
    }
    Ok(a)
}

/// NumPy's pairwise sum (`pairwise_sum` in its `loops_utils.h`) of
/// `x(lo) .. x(hi - 1)`: below 8 terms one at a time; up to 128 in eight
/// partial sums combined as a tree; above, the two halves (the first a
/// multiple of 8 long) summed recursively, so the depth is log2(n / 128).
pub fn pairwise<T>(lo: usize, hi: usize, x: &impl Fn(usize) -> T) -> T
where
    T: Copy + Default + std::ops::Add<Output = T>,
{
    let n = hi - lo;
    if n < 8 {
        (lo..hi).fold(T::default(), |s, i| s + x(i))
    } else if n <= 128 {
        let mut r = [T::default(); 8];
        for (k, r) in r.iter_mut().enumerate() {
            *r = x(lo + k);
        }
        let mut i = lo + 8;
        while i + 8 <= hi {
            for (k, r) in r.iter_mut().enumerate() {
                *r = *r + x(i + k);
            }
            i += 8;
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for j in i..hi {
            s = s + x(j);
        }
        s
    } else {
        let half = n / 2;
        let half = half - half % 8;
        pairwise(lo, lo + half, x) + pairwise(lo + half, hi, x)
    }
}

/// `sum(a)`.
pub fn sum(a: &Array) -> Value {
    fn go<T: Elem>(v: &[T], add: impl Fn(T, T) -> T) -> Value {
        v.iter().fold(T::default(), |s, &x| add(s, x)).to_value()
    }
    match &*a.data() {
        Data::Bool(v) => Value::Bool(v.iter().any(|&b| b)),
        Data::I32(v) => go(v, i32::wrapping_add),
        Data::I64(v) => go(v, i64::wrapping_add),
        Data::U32(v) => go(v, u32::wrapping_add),
        Data::U8(v) => go(v, u8::wrapping_add),
        Data::F32(v) => Value::F32(pairwise(0, v.len(), &|i| v[i])),
        Data::F64(v) => Value::F64(pairwise(0, v.len(), &|i| v[i])),
    }
}

/// `maxval(a)` (`max == true`) or `minval(a)`.
pub fn extremum(a: &Array, max: bool) -> Value {
    use crate::math::Math;
    fn go<T: Math>(v: &[T], init: T, max: bool) -> Value {
        v.iter()
            .fold(init, |s, &x| if max { s.max(x) } else { s.min(x) })
            .to_value()
    }
    match &*a.data() {
        Data::Bool(v) => Value::Bool(if max {
            v.iter().any(|&b| b)
        } else {
            v.iter().all(|&b| b)
        }),
        Data::I32(v) => go(v, if max { i32::MIN } else { i32::MAX }, max),
        Data::I64(v) => go(v, if max { i64::MIN } else { i64::MAX }, max),
        Data::U32(v) => go(v, if max { u32::MIN } else { u32::MAX }, max),
        Data::U8(v) => go(v, if max { u8::MIN } else { u8::MAX }, max),
        Data::F32(v) => go(
            v,
            if max {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            },
            max,
        ),
        Data::F64(v) => go(
            v,
            if max {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            },
            max,
        ),
    }
}

/// Number of elements, as `len` returns it.
pub fn len(a: &Array) -> usize {
    with_data!(&*a.data(), v => v.len())
}

/// `rand(T, seed, dims..)`: uniform values in `[0, 1)` from a splitmix64
/// stream started at `seed` (the same seed gives the same array on every
/// machine). Element `i` is the stream's `i + 1`-th output, so the array is
/// filled in pieces on every core: a large `rand` no longer keeps the
/// program (and an idle GPU) waiting for seconds.
pub fn rand(t: Scalar, seed: u64, dims: &[i128]) -> Result<Array, ShapeError> {
    use rayon::prelude::*;
    /// Elements one task fills.
    const PIECE: usize = 1 << 16;
    let a = zeros(t, dims)?;
    {
        let mut d = a.data_mut();
        match &mut *d {
            Data::F32(v) => v.par_chunks_mut(PIECE).enumerate().for_each(|(c, s)| {
                for (j, x) in s.iter_mut().enumerate() {
                    // Rounded down below 1 in f32.
                    *x = (uniform(seed, c * PIECE + j) as f32).min(1.0 - f32::EPSILON / 2.0);
                }
            }),
            Data::F64(v) => v.par_chunks_mut(PIECE).enumerate().for_each(|(c, s)| {
                for (j, x) in s.iter_mut().enumerate() {
                    *x = uniform(seed, c * PIECE + j);
                }
            }),
            d => {
                for i in 0..d.len() {
                    d.set(i, Value::F64(uniform(seed, i)));
                }
            }
        }
    }
    Ok(a)
}

/// The `i`-th value of `rand`'s stream for `seed`: the splitmix64 output
/// `i + 1` steps from `seed`, as 53 random bits (exact in f64).
fn uniform(seed: u64, i: usize) -> f64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `mean(a)`: the `f64` average of the elements (NaN for an empty array).
pub fn mean(a: &Array) -> f64 {
    let d = a.data();
    let n = a.len();
    let s: f64 = pairwise(0, n, &|i| d.get(i).and_then(|v| v.as_f64()).unwrap_or(0.0));
    s / n as f64
}

/// `dot(a, b)`: the sum of the products of the elements in the element
/// type (integers wrap; floats add pairwise, see [`pairwise`]); `None` when
/// the lengths differ.
pub fn dot(a: &Array, b: &Array) -> Option<Value> {
    if a.len() != b.len() {
        return None;
    }
    let (da, db) = (a.data(), b.data());
    match (&*da, &*db) {
        (Data::F32(x), Data::F32(y)) => {
            return Some(Value::F32(pairwise(0, x.len(), &|i| x[i] * y[i])))
        }
        (Data::F64(x), Data::F64(y)) => {
            return Some(Value::F64(pairwise(0, x.len(), &|i| x[i] * y[i])))
        }
        _ => {}
    }
    let t = a.scalar();
    let mut acc = Value::zero(t);
    for i in 0..a.len() {
        let (x, y) = (da.get(i)?, db.get(i)?);
        let p = Value::binary(lang::ast::BinOp::Mul, x, y).ok()?;
        acc = Value::binary(lang::ast::BinOp::Add, acc, p).ok()?;
    }
    Some(acc)
}

/// `argmax(a)` (`max`) or `argmin(a)`: the flat index of the first largest
/// (smallest) element; NaNs lose to numbers; -1 for an empty array.
pub fn arg_extremum(a: &Array, max: bool) -> i64 {
    let d = a.data();
    let mut best: Option<(usize, f64)> = None;
    for i in 0..a.len() {
        let v = d.get(i).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        let better = match best {
            None => !v.is_nan(),
            Some((_, b)) => {
                if max {
                    v > b
                } else {
                    v < b
                }
            }
        };
        if better {
            best = Some((i, v));
        }
    }
    match (best, a.len()) {
        (Some((i, _)), _) => i as i64,
        (None, 0) => -1,
        (None, _) => 0, // all NaN: the first
    }
}

/// `astype(a, T)`: a new array of the elements converted as `as` does.
pub fn astype(a: &Array, t: Scalar) -> Result<Array, ShapeError> {
    let out = Array::zeros(t, a.shape().to_vec())?;
    {
        let (src, mut dst) = (a.data(), out.data_mut());
        for i in 0..a.len() {
            if let Some(v) = src.get(i) {
                dst.set(i, v.cast(t));
            }
        }
    }
    Ok(out)
}

/// `reshape(a, dims..)`: a copy of `a` with another shape of the same
/// number of elements (row-major order kept); `None` when the counts differ.
pub fn reshape(a: &Array, dims: &[i128]) -> Result<Option<Array>, ShapeError> {
    let shape = shape_of(dims, a.scalar())?;
    if shape.iter().product::<usize>() != a.len() {
        return Ok(None);
    }
    let out = Array::zeros(a.scalar(), shape)?;
    {
        let (src, mut dst) = (a.data(), out.data_mut());
        for i in 0..a.len() {
            if let Some(v) = src.get(i) {
                dst.set(i, v);
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rand` as one sequential splitmix64 stream, the definition the
    /// pieces filled in parallel must reproduce bit for bit.
    fn rand_sequential(seed: u64, n: usize) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    #[test]
    fn rand_in_pieces_is_the_one_stream() {
        // Across several pieces, with a short last one.
        let n = 3 * (1 << 16) + 17;
        for seed in [0u64, 7, u64::MAX] {
            let want = rand_sequential(seed, n);
            let d = rand(Scalar::F64, seed, &[n as i128]).unwrap();
            assert_eq!(d.to_vec::<f64>().unwrap(), want, "seed {seed}");
            let f = rand(Scalar::F32, seed, &[3, n as i128 / 3]).unwrap();
            let want32: Vec<f32> = want[..f.len()]
                .iter()
                .map(|&u| (u as f32).min(1.0 - f32::EPSILON / 2.0))
                .collect();
            assert_eq!(f.to_vec::<f32>().unwrap(), want32, "seed {seed}");
            assert!(want32.iter().all(|&x| (0.0..1.0).contains(&x)));
        }
    }

    #[test]
    fn constructors() {
        let a = arange(Scalar::I32, Value::I32(2), Value::I32(5)).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![2, 3, 4]);
        let l = linspace(Scalar::F64, 0.0, 1.0, 5).unwrap();
        assert_eq!(l.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let f = full(Scalar::U8, Value::U8(7), &[2, 3]).unwrap();
        assert_eq!(f.shape(), &[2, 3]);
        assert_eq!(sum(&f), Value::U8(42));
        assert!(zeros(Scalar::F32, &[-1]).is_err());
        assert_eq!(
            extremum(&zeros(Scalar::F32, &[0]).unwrap(), true),
            Value::F32(f32::NEG_INFINITY)
        );
    }

    #[test]
    fn float_sums_are_pairwise_and_near_the_exact_sum() {
        // 10^7 copies of 0.1f32 (0.100000001490116..): the exact sum is
        // 1,000,000.0149; one element at a time gave 1,087,937.
        let n = 10_000_000;
        let a = full(Scalar::F32, Value::F32(0.1), &[n]).unwrap();
        let Value::F32(s) = sum(&a) else { panic!() };
        assert!((f64::from(s) - 1e6).abs() / 1e6 < 1e-6, "{s}");
        let ones = full(Scalar::F32, Value::F32(1.0), &[n]).unwrap();
        let Some(Value::F32(d)) = dot(&a, &ones) else {
            panic!()
        };
        assert!((f64::from(d) - 1e6).abs() / 1e6 < 1e-6, "{d}");
        let m = mean(&a);
        assert!((m - 0.1).abs() < 1e-7, "{m}");
        // 2^24 + 1 ones in f32: one at a time sticks at 2^24 = 16,777,216
        // (2^24 + 1 is not an f32); pairwise adds each half exactly, and
        // the halves to 2^24 + 1 rounded to even, 16,777,216, the nearest.
        let k = (1 << 24) + 1;
        let o = full(Scalar::F32, Value::F32(1.0), &[k]).unwrap();
        assert_eq!(sum(&o), Value::F32(16_777_216.0));
        let o = full(Scalar::F32, Value::F32(1.0), &[k + 2]).unwrap();
        assert_eq!(sum(&o), Value::F32(16_777_220.0));
        // Short arrays add in order: 1e8 + 1 - 1e8 in f64 is 1.
        let f = Array::from_vec(vec![1e8f64, 1.0, -1e8], vec![3]).unwrap();
        assert_eq!(sum(&f), Value::F64(1.0));
    }
}
