//! How `print`/`println` show values.
//!
//! Scalars print like Rust's `{}` (`1.5`, `2`, `-inf`, `NaN`, `true`), and
//! like `{:e}` (`1.5e300`, `2.5e-7`) when very large or very small.
//! Arrays print numpy-like: rank 1 as `[1 2 3]`, rank 2 as rows on their own
//! lines (`[[1 2]\n [3 4]]`), rank 3 as blocks separated by a blank line.
//! An array of more than [`ELIDE_OVER`] elements shows only the first and
//! last [`EDGE`] entries of every axis, with `...` between (numpy's
//! summarisation).

use crate::array::{Array, Data};
use lang::Value;
use std::fmt::Write;

/// Arrays with more elements than this are summarised.
pub const ELIDE_OVER: usize = 1000;
/// Entries shown at each end of a summarised axis.
pub const EDGE: usize = 3;

/// A float's magnitude from which `print` switches to scientific notation
/// (`1e16`), and the one below which it does (`1e-5`): `1.5e300` rather
/// than 301 digits, `1e-7` rather than `0.0000001`.
pub const SCI_ABOVE: f64 = 1e16;
pub const SCI_BELOW: f64 = 1e-5;

fn sci(x: f64) -> bool {
    x.is_finite() && x != 0.0 && (x.abs() >= SCI_ABOVE || x.abs() < SCI_BELOW)
}

/// A scalar as `print` shows it.
pub fn scalar(v: Value) -> String {
    let mut s = String::new();
    write_scalar(&mut s, v);
    s
}

/// [`scalar`], appended to `out` (`save_csv` writes millions of them).
pub fn write_scalar(out: &mut String, v: Value) {
    let _ = match v {
        Value::F32(x) if sci(x as f64) => write!(out, "{x:e}"),
        Value::F32(x) => write!(out, "{x}"),
        Value::F64(x) | Value::FloatLit(x) if sci(x) => write!(out, "{x:e}"),
        Value::F64(x) | Value::FloatLit(x) => write!(out, "{x}"),
        v => write!(out, "{v}"),
    };
}

/// An array as `print` shows it.
pub fn array(a: &Array) -> String {
    array_summarised(a, ELIDE_OVER)
}

/// An array as `print` shows it, summarised when it has more than `over`
/// elements (the REPL's preview uses a lower threshold than `print`).
pub fn array_summarised(a: &Array, over: usize) -> String {
    let data = a.data();
    let elide = a.len() > over;
    let mut out = String::new();
    let shape = a.shape().to_vec();
    if shape.is_empty() {
        return data.get(0).map(scalar).unwrap_or_default();
    }
    write_axis(&mut out, &data, &shape, 0, 0, elide);
    out
}

fn elem(d: &Data, i: usize) -> String {
    d.get(i).map(scalar).unwrap_or_default()
}

fn write_axis(out: &mut String, d: &Data, shape: &[usize], axis: usize, base: usize, elide: bool) {
    let n = shape[axis];
    let stride: usize = shape[axis + 1..].iter().product();
    let idx: Vec<Option<usize>> = if elide && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain([None])
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    out.push('[');
    let last = axis + 1 == shape.len();
    for (k, i) in idx.iter().enumerate() {
        if k > 0 {
            if last {
                out.push(' ');
            } else {
                // Newlines between sub-arrays: one per remaining axis, then
                // indentation to line up under the opening bracket.
                for _ in 0..shape.len() - axis - 1 {
                    out.push('\n');
                }
                for _ in 0..=axis {
                    out.push(' ');
                }
            }
        }
        match i {
            None => out.push_str("..."),
            Some(i) if last => {
                let _ = write!(out, "{}", elem(d, base + i * stride));
            }
            Some(i) => write_axis(out, d, shape, axis + 1, base + i * stride, elide),
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let a = Array::from_vec(vec![1i32, 2, 3, 4, 5, 6], vec![2, 3]).unwrap();
        assert_eq!(array(&a), "[[1 2 3]\n [4 5 6]]");
        let b = Array::from_vec(vec![1.5f32, 2.0], vec![2]).unwrap();
        assert_eq!(array(&b), "[1.5 2]");
        let c = Array::from_vec((0..8u8).collect(), vec![2, 2, 2]).unwrap();
        assert_eq!(array(&c), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
        let big = Array::from_vec((0..2000i64).collect(), vec![2000]).unwrap();
        assert_eq!(array(&big), "[0 1 2 ... 1997 1998 1999]");
        let m = Array::from_vec((0..64i32).collect(), vec![8, 8]).unwrap();
        assert_eq!(
            array_summarised(&m, 50),
            "[[0 1 2 ... 5 6 7]\n [8 9 10 ... 13 14 15]\n [16 17 18 ... 21 22 23]\n ...\n [40 41 42 ... 45 46 47]\n [48 49 50 ... 53 54 55]\n [56 57 58 ... 61 62 63]]"
        );
        assert_eq!(scalar(Value::F64(1.0)), "1");
    }
}
