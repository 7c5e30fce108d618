//! The remainder evaluated on the host, operation by operation as the
//! device runs it, against Rust's `%` (C's `fmod`, exact): the same bits for
//! every pair of operands (any NaN for a NaN), in `f32` and `f64`.

use super::*;
use crate::testing::Rng;
use std::cell::Cell;

/// The float types, for the host's [`RemOps`].
trait Float: Copy + PartialOrd + std::fmt::LowerExp + std::ops::Rem<Output = Self> {
    const W: Width;
    /// Mantissa bits (without the hidden one) and the exponent bias.
    const MANT: u32;
    const BIAS: i32;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn bits(self) -> u64;
    fn from_bits_(b: u64) -> Self;
    fn sub(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
    fn abs(self) -> Self;
    fn is_nan(self) -> bool;
    fn copysign(self, s: Self) -> Self;
}

macro_rules! float {
    ($t:ty, $u:ty, $w:ident, $mant:expr, $bias:expr) => {
        impl Float for $t {
            const W: Width = Width::$w;
            const MANT: u32 = $mant;
            const BIAS: i32 = $bias;
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn from_bits_(b: u64) -> Self {
                <$t>::from_bits(b as $u)
            }
            fn sub(self, b: Self) -> Self {
                self - b
            }
            fn mul(self, b: Self) -> Self {
                self * b
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn copysign(self, s: Self) -> Self {
                <$t>::copysign(self, s)
            }
        }
    };
}
float!(f32, u32, F32, 23, 127);
float!(f64, u64, F64, 52, 1023);

/// `2^e` for `e` in the normal range.
fn pow2<T: Float>(e: i32) -> T {
    assert!(e > -T::BIAS && e <= T::BIAS);
    T::from_bits_(((e + T::BIAS) as u64) << T::MANT)
}

/// [`RemOps`] evaluated on the host in `T`; counts the loop's trips.
struct Host<T> {
    most_trips: Cell<u32>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Float> RemOps for Host<T> {
    type F = T;
    type I = i32;
    type B = bool;
    fn kf(&self, v: f64) -> T {
        T::from_f64(v)
    }
    fn sub(&self, a: T, b: T) -> T {
        a.sub(b)
    }
    fn mul(&self, a: T, b: T) -> T {
        a.mul(b)
    }
    fn abs(&self, a: T) -> T {
        a.abs()
    }
    fn cmp(&self, op: Cmp, a: T, b: T) -> bool {
        match op {
            Cmp::Lt => a < b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
        }
    }
    fn is_nan(&self, a: T) -> bool {
        a.is_nan()
    }
    fn or(&self, a: bool, b: bool) -> bool {
        a | b
    }
    fn sel(&self, c: bool, a: T, b: T) -> T {
        if c {
            a
        } else {
            b
        }
    }
    fn frexp(&self, a: T) -> (T, i32) {
        let zero = T::from_f64(0.0);
        if a == zero || a.is_nan() || a.abs() == T::from_f64(f64::INFINITY) {
            return (a, 0);
        }
        // Garbage for a subnormal, as lavapipe's: the algorithm must not
        // use it.
        if a.abs() < pow2::<T>(1 - T::BIAS) {
            return (T::from_f64(f64::NAN), i32::MIN / 2);
        }
        let b = a.bits();
        let ebits = 8 * std::mem::size_of::<T>() as u32 - T::MANT - 1;
        let field = (b >> T::MANT) & ((1 << ebits) - 1);
        let e = field as i32 - (T::BIAS - 1);
        let m = T::from_bits_((b & !(field << T::MANT)) | (((T::BIAS - 1) as u64) << T::MANT));
        (m, e)
    }
    fn ldexp(&self, a: T, e: i32) -> T {
        // In steps that stay exact while the result is normal; garbage for
        // a subnormal result, as lavapipe's.
        let (mut r, mut k, top) = (a, e, T::BIAS - 1);
        if k.abs() > 4 * T::BIAS {
            return T::from_f64(f64::NAN);
        }
        while k > top {
            r = r.mul(pow2::<T>(top));
            k -= top;
        }
        while k < -top {
            r = r.mul(pow2::<T>(-top));
            k += top;
        }
        let r = r.mul(pow2::<T>(k));
        if r != T::from_f64(0.0) && r.abs() < pow2::<T>(1 - T::BIAS) {
            return T::from_f64(f64::NAN);
        }
        r
    }
    fn copysign(&self, mag: T, sign: T) -> T {
        mag.copysign(sign)
    }
    fn when(&self, c: bool, v: T, then: impl Fn(T) -> T) -> T {
        if c {
            then(v)
        } else {
            v
        }
    }
    fn repeat(&self, init: T, trips: u32, step: impl Fn(T) -> T, more: impl Fn(T) -> bool) -> T {
        let mut r = init;
        let mut n = 0;
        loop {
            r = step(r);
            n += 1;
            if !more(r) {
                break;
            }
            assert!(n < trips, "{trips} trips were not enough");
        }
        self.most_trips.set(self.most_trips.get().max(n));
        r
    }
}

fn host<T: Float>() -> Host<T> {
    Host {
        most_trips: Cell::new(0),
        _t: std::marker::PhantomData,
    }
}

/// `x % y` by the device's algorithm, which must be the host's.
fn check<T: Float>(o: &Host<T>, x: T, y: T) {
    let (d, h) = (rem(o, T::W, x, y), x % y);
    assert!(
        d.bits() == h.bits() || (d.is_nan() && h.is_nan()),
        "{x:e} % {y:e}: {d:e} ({:#x}), host {h:e} ({:#x})",
        d.bits(),
        h.bits()
    );
}

/// Edge operands: signed zeros, subnormals, the normal range's ends,
/// infinities, NaN, and values whose ratios are near integers or huge.
fn edges<T: Float>() -> Vec<T> {
    let mut v: Vec<T> = [
        0.0,
        1.0,
        0.5,
        1.5,
        2.0,
        3.0,
        7.0,
        0.01,
        0.1,
        0.3,
        5.5,
        1e-300,
        3e-300,
        1e-30,
        3e-38,
        1e30,
        3e38,
        1e300,
        3e39,
        1e22,
        9007199254740992.0,
        9007199254740994.0,
        16777216.0,
        16777218.0,
        std::f64::consts::PI,
        1e-45,
        5e-324,
        f64::INFINITY,
        f64::NAN,
    ]
    .iter()
    .map(|&v| T::from_f64(v))
    .collect();
    // Subnormals, the smallest normal and the largest finite value.
    v.extend(
        [
            1u64,
            3,
            1 << (T::MANT - 1),
            (1 << T::MANT) - 1,
            1 << T::MANT,
        ]
        .map(T::from_bits_),
    );
    v.push(T::from_bits_(
        (((2 * T::BIAS) as u64) << T::MANT) | ((1 << T::MANT) - 1),
    ));
    let neg: Vec<T> = v.iter().map(|&x| T::from_f64(0.0).sub(x)).collect();
    v.extend(neg);
    v
}

fn every_pair_of_edges<T: Float>() {
    let o = host::<T>();
    let e = edges::<T>();
    for &x in &e {
        for &y in &e {
            check(&o, x, y);
        }
    }
}

#[test]
fn every_pair_of_edges_f64() {
    every_pair_of_edges::<f64>();
}

#[test]
fn every_pair_of_edges_f32() {
    every_pair_of_edges::<f32>();
}

/// Random operands over the whole finite range, and dividends just below,
/// at and just above integer multiples of the divisor.
fn random_operands<T: Float>(seed: u64) {
    let o = host::<T>();
    let mut r = Rng(seed);
    let top = T::BIAS - 1;
    let (lo, hi) = (-top, top);
    for _ in 0..100_000 {
        let x = T::from_f64(r.logu(lo, hi, true));
        let y = T::from_f64(r.logu(lo, hi, true));
        check(&o, x, y);
        // Exponents close together: results with many bits.
        let near = T::from_f64(x.to_f64() * 2f64.powi((r.bits() % 40) as i32 - 20));
        check(&o, x, near);
    }
    for i in 0..50_000u64 {
        let y = T::from_f64(r.logu(-60, 60, true));
        let n = T::from_f64((r.bits() % (1 << (i % 60 + 1))) as f64);
        let x = n.mul(y);
        for b in [x.bits().wrapping_sub(1), x.bits(), x.bits() + 1] {
            check(&o, T::from_bits_(b), y);
        }
    }
}

#[test]
fn random_operands_f64() {
    random_operands::<f64>(0x05ee_df64);
}

#[test]
fn random_operands_f32() {
    random_operands::<f32>(0x05ee_df32);
}

#[test]
fn known_values() {
    let (o, o32) = (host::<f64>(), host::<f32>());
    let r = |x: f64, y: f64| rem(&o, Width::F64, x, y);
    let r32 = |x: f32, y: f32| rem(&o32, Width::F32, x, y);
    assert_eq!(r(1.0, 0.01), 0.00999999999999998);
    assert_eq!(r(-3e39, 7.0), -5.0);
    assert_eq!(r(5.5, 2.0), 1.5);
    assert_eq!(r(5.5, -2.0), 1.5);
    assert_eq!(r(-4.0, 2.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(r(1e300, 3e-300), 1e300 % 3e-300);
    assert_eq!(r(3.0, f64::INFINITY), 3.0);
    assert!(r(0.0, 0.0).is_nan() && r(f64::INFINITY, 1.0).is_nan() && r(1.0, f64::NAN).is_nan());
    assert_eq!(r32(1.0, 0.01), 1.0f32 % 0.01);
    assert_eq!(r32(-3e38, 7.0), -3e38f32 % 7.0);
    assert_eq!(r32(f32::MAX, 1e-45), f32::MAX % 1e-45);
    assert_eq!(r32(-0.0, 1.0).to_bits(), (-0.0f32).to_bits());
}

#[test]
fn loop_bounds() {
    // One step per frexp exponent from the smallest normal's (a subnormal
    // divisor is scaled above it) to the largest finite value's; the second
    // stage over a factor of 2^S, S enough to make any subnormal normal.
    let o = host::<f64>();
    assert_eq!(o.frexp(f64::MIN_POSITIVE * 2.0).1, -1020);
    assert_eq!(o.frexp(f64::MAX).1, 1024);
    assert_eq!(max_steps(Width::F64, false), 1024 + 1021 + 1);
    assert!(5e-324 * 2f64.powi(scale_bits(Width::F64) as i32) >= f64::MIN_POSITIVE);
    let o = host::<f32>();
    assert_eq!(o.frexp(f32::MIN_POSITIVE * 2.0).1, -124);
    assert_eq!(o.frexp(f32::MAX).1, 128);
    assert_eq!(max_steps(Width::F32, false), 128 + 125 + 1);
    assert!(1e-45 * 2f32.powi(scale_bits(Width::F32) as i32) >= f32::MIN_POSITIVE);
}

/// Operands whose remainders lose only one binade per step for much of the
/// way (a divisor of mantissa 4/3 or 7/4 at the bottom of the normal range,
/// found by trying a few) go round the loop most of the most times; still
/// within the bound (`repeat` asserts it) and exact.
#[test]
fn near_the_most_trips() {
    let o = host::<f64>();
    let y = f64::from_bits(0x0015_5555_5555_5555);
    check(&o, f64::MAX, y);
    check(&o, -f64::MAX, -y);
    assert!(
        o.most_trips.get() > trips(Width::F64, false) * 9 / 10,
        "{}",
        o.most_trips.get()
    );
    let o = host::<f32>();
    let (x, y) = (f32::from_bits(0x7f40_0000), f32::from_bits(0x00e0_0000));
    check(&o, x, y);
    check(&o, -x, y);
    assert!(
        o.most_trips.get() > trips(Width::F32, false) * 6 / 10,
        "{}",
        o.most_trips.get()
    );
}
