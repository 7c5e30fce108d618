//! f32 `/` and `sqrt` correctly rounded on the device, as the host, C and
//! CUDA's defaults give them.
//!
//! Vulkan lets an f32 `OpFDiv` be 2.5 ulp off and `Sqrt` about as much, and
//! NVIDIA's are (on an H100, 29% of random quotients and 17% of roots
//! differed from the host's, and `x / x` came out below 1 for 16% of `x`).
//! Two routes make them exact ([`crate::ExactF32`]):
//!
//! - **In f64** ([`Writer::f32_div_in_f64`](crate::spirv::Writer)): widen,
//!   divide or take the root there, round back. The exact quotient of two
//!   24-bit significands is never an f32 midpoint and lies at least 2^-49
//!   of itself from one (an exact root at least 2^-51), more than an f64
//!   result 2.5 f64 ulp off can move it. Simple, and it takes the driver's
//!   f64 division or root for every operation: on an H100, 32 chained f32
//!   divisions ran 7x slower than the driver's own, roots 7.7x.
//! - **With `fma`** (this module): the driver's approximation refined
//!   with `fma` to the correctly rounded result, as CUDA computes its
//!   default f32 division and root. It assumes the driver's `Fma` is fused
//!   (one rounding), as NVIDIA's is; Vulkan states only that it is at least
//!   as precise as `OpFMul` then `OpFAdd`, and lavapipe's rounds twice. It
//!   needs no f64. On an H100, 32 chained divisions took 1.15 ms on 64M
//!   elements (CUDA's own: 1.23-1.29; the f64 route 2.28), 32 chained
//!   roots 1.75 (CUDA 1.05-1.11; f64 4.30), and every positive normal `x`
//!   gave the host's `sqrt(x)`, `1/x` and `a/x`.
//!   [`crate::ExactF32::FmaByF64`] computes each `fma` in f64 instead: the
//!   product of two f32 values is exact there, and the sum rounded to odd
//!   rounds to f32 as the exact sum would.
//!
//! `a / b` (Markstein's method):
//!
//! 1. `y`, the correctly rounded `1/b`: the driver's `1.0 / b` (Vulkan: 2.5
//!    ulp) and two Newton steps `y = fma(fma(-b, y, 1), y, y)`. From
//!    within 3 ulp, two steps give the correctly rounded reciprocal for
//!    every significand but one: all ones, where they land one ulp below
//!    (tried for every significand with every start from -3 to +3 ulp; the
//!    unit tests take every third); there the result's last bit is set.
//! 2. `q0 = a·y` (within 2 ulp), `q1 = fma(fma(-b, q0, a), y, q0)` (within
//!    one ulp: the remainder is rounded once and corrects all but a
//!    millionth of an ulp).
//! 3. `q2 = fma(fma(-b, q1, a), y, q1)`: with `y` the correctly rounded
//!    reciprocal and `q1` within one ulp, the remainder `a - b·q1` is exact
//!    and `q2` is the correctly rounded quotient (Markstein, "Computation of
//!    elementary functions on the IBM RISC System/6000 processor", 1990;
//!    Cornea, Harrison and Tang, "Scientific Computing on Itanium-based
//!    Systems", 2002), provided nothing overflows or underflows on the way.
//!
//! `sqrt(a)`, with `y ≈ 1/sqrt(a)` (the driver's `InverseSqrt`) and
//! `h = y/2`: `s0 = a·y`, `s1 = fma(fma(-s0, s0, a), h, s0)`, `h` refined
//! once against `s1` (`fma(fma(-s1, y, 1), h, h)`), and
//! `s2 = fma(fma(-s1, s1, a), h, s1)`. A root depends only on its own
//! input, so every f32 in two binades (every root in range scales from them
//! exactly) was tried with every start from -3 to +3 ulp (the unit tests
//! take a third of them per start): all were the host's but
//! `4^k (1 - 2^-24)`, whose root lies just past the
//! midpoint below `2^k`, where the last step can make the tie of `s1 = 2^k`
//! and round to it. For that significand and exponent parity the result is
//! the f32 below a power of two, so its bits are `s2`'s minus one with the
//! significand all ones.
//!
//! An `a / b` with an operand outside [2^-60, 2^62) (zeros, infinities,
//! NaN, subnormals and the far ends of the range, where the intermediate
//! products could leave the normal range or a driver flush them) goes
//! another way, in a branch ([`DIV_RANGE`], [`div_scaled`]): each operand
//! as `m·2^e` with `m` in [1, 2) (a subnormal's significand converted from
//! its bits), `ma / mb` by the steps above, its exact remainder kept, and
//! the quotient scaled by `2^(ea - eb)` in two exact steps, or, below
//! 2^-125, its bits the whole number nearest `q·2^(d+149)`, a tie broken
//! by the remainder's sign (rounded once, where scaling would round
//! twice); zeros, infinities and NaN by their bits. The same way for every
//! division, with no branch, took 5.5 ms for the 32 chained divisions on
//! an H100 (its conversions and bit operations on every element); the f64
//! route in the branch, as at first, 1.24 ms; this 1.15. The quotient
//! written once, on the straight path, with the operands taken apart
//! before it and the result put together after it in short branches of
//! their own (three branches, none holding a quotient), took 3.17 ms; the
//! root written once between two such branches, 1.95 ms for 32 chained
//! roots against 1.73-1.79: on NVIDIA each branch costs more than the
//! instructions it saves. A `sqrt(a)` of a
//! positive normal `a` below 2^-60 is taken of `a·2^64` and scaled back by
//! 2^-32 (both exact); a positive subnormal `m·2^-149` is `sqrt(2m)·2^-75`,
//! with `2m` converted from its bits, so it is exact even where the driver
//! flushes subnormals (NVIDIA's compares them as zero); zeros, infinity and
//! NaN are their own roots and a negative value's is NaN; all these in a
//! branch, told apart by their bits ([`SQRT_RANGE`]).
//!
//! The algorithm is written once over [`Ops`]: the writer's implementation
//! emits the instructions (`emit.rs`, one function per operation and
//! module), and the unit tests' evaluates the same steps on the host with
//! the driver's approximations made several ulp wrong on purpose.

mod emit;
#[cfg(test)]
mod tests;

/// The route functions of one module: ids reserved on first use, bodies
/// written at the end (`emit.rs`).
#[derive(Debug, Default)]
pub(in crate::spirv) struct Fns {
    div: Option<rspirv::spirv::Word>,
    sqrt: Option<rspirv::spirv::Word>,
}

/// The magnitudes, lowest included and highest not, of the operands of an
/// `a / b` that takes the `fma` route straight: the quotient, the
/// reciprocal and every remainder stay normal and exact.
pub(super) const DIV_RANGE: (f32, f32) = (1.0 / (1u64 << 60) as f32, (1u64 << 62) as f32);
/// The operands, both included, of a `sqrt` that takes the `fma` route
/// straight; smaller positive ones are scaled into it.
pub(super) const SQRT_RANGE: (f32, f32) = (1.0 / (1u64 << 60) as f32, f32::MAX);

/// What the algorithm needs: f32 values `F`, their bits `U` and booleans
/// `B`.
pub(super) trait Ops {
    type F: Copy;
    type U: Copy;
    type B: Copy;
    fn kf(&self, v: f32) -> Self::F;
    fn ku(&self, v: u32) -> Self::U;
    /// The driver's `1.0 / b`.
    fn recip(&self, b: Self::F) -> Self::F;
    /// The driver's `InverseSqrt`.
    fn rsqrt(&self, a: Self::F) -> Self::F;
    /// `a * b`, rounded once (no contraction).
    fn mul(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b + c`, rounded once.
    fn fma(&self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn neg(&self, a: Self::F) -> Self::F;
    fn abs(&self, a: Self::F) -> Self::F;
    /// Ordered `a > b` (false with a NaN).
    fn gt(&self, a: Self::F, b: Self::F) -> Self::B;
    /// Ordered `a <= b`.
    fn le(&self, a: Self::F, b: Self::F) -> Self::B;
    fn bits(&self, a: Self::F) -> Self::U;
    fn float_of(&self, u: Self::U) -> Self::F;
    /// Wrapping `a - b`.
    fn sub_u(&self, a: Self::U, b: Self::U) -> Self::U;
    /// Wrapping `a + b`.
    fn add_u(&self, a: Self::U, b: Self::U) -> Self::U;
    fn lt_u(&self, a: Self::U, b: Self::U) -> Self::B;
    /// The f32 nearest `u`.
    fn float_of_u(&self, u: Self::U) -> Self::F;
    fn and_u(&self, a: Self::U, b: Self::U) -> Self::U;
    fn or_u(&self, a: Self::U, b: Self::U) -> Self::U;
    fn eq_u(&self, a: Self::U, b: Self::U) -> Self::B;
    fn and_b(&self, a: Self::B, b: Self::B) -> Self::B;
    fn or_b(&self, a: Self::B, b: Self::B) -> Self::B;
    fn not_b(&self, a: Self::B) -> Self::B;
    fn sel_f(&self, c: Self::B, a: Self::F, b: Self::F) -> Self::F;
    fn sel_u(&self, c: Self::B, a: Self::U, b: Self::U) -> Self::U;
    fn xor_u(&self, a: Self::U, b: Self::U) -> Self::U;
    fn shr_u(&self, a: Self::U, by: u32) -> Self::U;
    fn shl_u(&self, a: Self::U, by: u32) -> Self::U;
    /// The integer part of `a` (`a` from 0 to below 2^32).
    fn trunc_u(&self, a: Self::F) -> Self::U;
    /// `a - b`, rounded once.
    fn sub(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `if c { then() } else { v }`, as a structured selection.
    fn when(&self, c: Self::B, v: Self::F, then: impl Fn() -> Self::F) -> Self::F;
}

/// Whether `lo <= |x| < hi` (false for NaN).
fn within<O: Ops>(o: &O, x: O::F, (lo, hi): (f32, f32)) -> O::B {
    let ax = o.abs(x);
    o.and_b(o.le(o.kf(lo), ax), o.gt(o.kf(hi), ax))
}

/// Whether `x`'s bits masked by `mask` are `bits`.
fn has_bits<O: Ops>(o: &O, x: O::F, mask: u32, bits: u32) -> O::B {
    o.eq_u(o.and_u(o.bits(x), o.ku(mask)), o.ku(bits))
}

/// One Newton step `y + y·(1 - b·y)` towards `1/b`.
fn newton<O: Ops>(o: &O, b: O::F, y: O::F) -> O::F {
    o.fma(o.fma(o.neg(b), y, o.kf(1.0)), y, y)
}

/// `x + (a - b·x)·y`, each `fma` rounded once.
fn correct<O: Ops>(o: &O, a: O::F, b: O::F, x: O::F, y: O::F) -> O::F {
    o.fma(o.fma(o.neg(b), x, a), y, x)
}

/// `1/b` correctly rounded (`b` in range).
fn reciprocal<O: Ops>(o: &O, b: O::F) -> O::F {
    let y = newton(o, b, newton(o, b, o.recip(b)));
    o.sel_f(
        has_bits(o, b, 0x007f_ffff, 0x007f_ffff),
        o.float_of(o.or_u(o.bits(y), o.ku(1))),
        y,
    )
}

/// `a / b`, correctly rounded.
pub(super) fn div<O: Ops>(o: &O, a: O::F, b: O::F) -> O::F {
    let fast = quotient(o, a, b);
    let ok = o.and_b(within(o, a, DIV_RANGE), within(o, b, DIV_RANGE));
    o.when(o.not_b(ok), fast, || div_scaled(o, a, b))
}

/// `a / b` for `a` and `b` in [`DIV_RANGE`], correctly rounded (steps 1
/// to 3 above).
fn quotient<O: Ops>(o: &O, a: O::F, b: O::F) -> O::F {
    let y = reciprocal(o, b);
    let q1 = correct(o, a, b, o.mul(a, y), y);
    correct(o, a, b, q1, y)
}

/// `a / b` for any operands, correctly rounded: the significands' quotient
/// as in [`div`], scaled by the exponents' difference, with no f64.
fn div_scaled<O: Ops>(o: &O, a: O::F, b: O::F) -> O::F {
    let (ab, bb) = (o.bits(a), o.bits(b));
    let (ma, ea) = split(o, ab);
    let (mb, eb) = split(o, bb);
    // `ma / mb`, in (1/2, 2), correctly rounded; its remainder is exact.
    let q = quotient(o, ma, mb);
    let r = o.fma(o.neg(mb), q, ma);
    // The scale 2^d, d = ea - eb, held as d + OFF. Past these bounds the
    // result is infinite or zero either way.
    let d = o.sub_u(o.add_u(ea, o.ku(OFF)), eb);
    let d = clamp_u(o, d, OFF - 151, OFF + 129);
    // A normal result: scaled in two exact steps (or to infinity).
    let d1 = clamp_u(o, d, OFF - 126, OFF + 127);
    let d2 = o.add_u(o.sub_u(d, d1), o.ku(OFF));
    let normal = o.mul(o.mul(q, pow2(o, d1)), pow2(o, d2));
    // d <= -126: the result is below 2^-125, so its bits are the whole
    // number nearest `n = q·2^(d+149)` (exact, below 2^24), rounded once
    // here: a tie of `n` is a tie of the exact quotient only if the
    // remainder is zero, else the remainder's sign decides.
    let n = o.mul(q, pow2(o, o.add_u(d, o.ku(149))));
    let t = o.trunc_u(n);
    let frac = o.sub(n, o.float_of_u(t));
    let half = o.kf(0.5);
    let tie = o.and_b(o.le(frac, half), o.le(half, frac));
    let r_zero = o.and_b(o.le(r, o.kf(0.0)), o.le(o.kf(0.0), r));
    let odd = o.eq_u(o.and_u(t, o.ku(1)), o.ku(1));
    let up = o.or_b(
        o.gt(frac, half),
        o.and_b(tie, o.or_b(o.gt(r, o.kf(0.0)), o.and_b(r_zero, odd))),
    );
    let tiny_bits = o.add_u(t, o.sel_u(up, o.ku(1), o.ku(0)));
    let tiny = o.lt_u(d, o.ku(OFF - 125));
    let mag = o.sel_u(tiny, tiny_bits, o.bits(normal));
    let sign = o.and_u(o.xor_u(ab, bb), o.ku(0x8000_0000));
    // Zeros, infinities and NaN by their bits.
    let (az, ai, an) = kinds(o, ab);
    let (bz, bi, bn) = kinds(o, bb);
    let nan = o.or_b(o.or_b(an, bn), o.or_b(o.and_b(az, bz), o.and_b(ai, bi)));
    let inf = o.or_b(ai, bz);
    let special = o.or_b(o.or_b(az, bz), o.or_b(o.or_b(ai, bi), o.or_b(an, bn)));
    let special_mag = o.sel_u(inf, o.ku(0x7f80_0000), o.ku(0));
    let mag = o.sel_u(special, special_mag, mag);
    let bits = o.sel_u(nan, o.ku(0x7fc0_0000), o.or_u(mag, sign));
    o.float_of(bits)
}

/// The offset [`div_scaled`] holds exponents with, so that they stay
/// positive.
const OFF: u32 = 512;

/// A finite nonzero `x` (bits) as `m · 2^(e - 127)`: `m` in [1, 2) and
/// the biased exponent `e`, which is below 1 for a subnormal (wrapping).
/// A subnormal's significand is converted from its bits, exact where the
/// driver flushes subnormals.
fn split<O: Ops>(o: &O, x: O::U) -> (O::F, O::U) {
    let sub = o.eq_u(o.and_u(x, o.ku(0x7f80_0000)), o.ku(0));
    let as_int = o.float_of_u(o.and_u(x, o.ku(0x007f_ffff)));
    let y = o.sel_u(sub, o.bits(as_int), x);
    let e = o.and_u(o.shr_u(y, 23), o.ku(0xff));
    let e = o.sub_u(e, o.sel_u(sub, o.ku(149), o.ku(0)));
    let m = o.float_of(o.or_u(o.and_u(y, o.ku(0x007f_ffff)), o.ku(0x3f80_0000)));
    (m, e)
}

/// 2^k for `k + OFF` (`k` from -126 to 127).
fn pow2<O: Ops>(o: &O, k: O::U) -> O::F {
    o.float_of(o.shl_u(o.sub_u(k, o.ku(OFF - 127)), 23))
}

/// `v` within `lo..=hi`.
fn clamp_u<O: Ops>(o: &O, v: O::U, lo: u32, hi: u32) -> O::U {
    let v = o.sel_u(o.lt_u(v, o.ku(lo)), o.ku(lo), v);
    o.sel_u(o.lt_u(o.ku(hi), v), o.ku(hi), v)
}

/// Whether `x` (bits) is a zero, an infinity, a NaN.
fn kinds<O: Ops>(o: &O, x: O::U) -> (O::B, O::B, O::B) {
    let mag = o.and_u(x, o.ku(0x7fff_ffff));
    let inf = o.ku(0x7f80_0000);
    (o.eq_u(mag, o.ku(0)), o.eq_u(mag, inf), o.lt_u(inf, mag))
}

/// `sqrt(a)`, correctly rounded.
pub(super) fn sqrt<O: Ops>(o: &O, a: O::F) -> O::F {
    // Negative values too go the other way: `InverseSqrt` of one is
    // undefined in Vulkan.
    let (lo, hi) = SQRT_RANGE;
    let ok = o.and_b(o.le(o.kf(lo), a), o.le(a, o.kf(hi)));
    let fast = root(o, a);
    o.when(o.not_b(ok), fast, || {
        // Told apart by their bits, which a driver that flushes subnormals
        // (NVIDIA's compares them as zero) leaves alone.
        let bits = o.bits(a);
        // A positive subnormal is m·2^-149: its root is sqrt(2m)·2^-75,
        // with 2m a whole number below 2^24 (exact as an f32).
        let sub = o.lt_u(o.sub_u(bits, o.ku(1)), o.ku(0x007f_ffff));
        let two_m = o.float_of_u(o.add_u(bits, bits));
        // A positive normal below the range: scaled into it by 2^64 and the
        // root back by 2^-32, both exact. One root serves both.
        let small = o.lt_u(
            o.sub_u(bits, o.ku(0x0080_0000)),
            o.ku(lo.to_bits() - 0x0080_0000),
        );
        let up = o.mul(a, o.kf(2f32.powi(64)));
        let x = o.sel_f(sub, two_m, up);
        let back = o.sel_f(sub, o.kf(2f32.powi(-75)), o.kf(2f32.powi(-32)));
        let scaled = o.mul(root(o, x), back);
        // Zeros, infinity and NaN are their own roots; anything else with
        // the sign bit set is negative, its root NaN.
        let negative = o.lt_u(o.ku(0x8000_0000), bits);
        let own = o.sel_f(negative, o.kf(f32::NAN), a);
        o.sel_f(o.or_b(sub, small), scaled, own)
    })
}

/// `sqrt(a)` for `a` in [`SQRT_RANGE`].
fn root<O: Ops>(o: &O, a: O::F) -> O::F {
    let y = o.rsqrt(a);
    let h = o.mul(y, o.kf(0.5));
    let s0 = o.mul(a, y);
    let s1 = correct(o, a, s0, s0, h);
    let h = o.fma(o.fma(o.neg(s1), y, o.kf(1.0)), h, h);
    let s2 = correct(o, a, s1, s1, h);
    // 4^k (1 - 2^-24): the f32 below a power of two.
    let below = o.float_of(o.or_u(o.sub_u(o.bits(s2), o.ku(1)), o.ku(0x007f_ffff)));
    o.sel_f(has_bits(o, a, 0x00ff_ffff, 0x007f_ffff), below, s2)
}
