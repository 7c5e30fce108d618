//! Float `%` on the device, exact: the host's remainder (Rust's `%` on
//! `f32`/`f64`, C's `fmod`: `x - n*y` for `n` the integer part of `x/y`,
//! computed exactly, with the sign of `x`).
//!
//! `OpFRem` will not do: Vulkan leaves its precision to the driver, and
//! llvmpipe computes `x - y*trunc(x/y)`, which gives 0 for `1.0 % 0.01`
//! (the host: 0.00999999999999998) and for `-3e39 % 7.0`, where `x/y` has
//! no integer part left.
//!
//! The algorithm needs only operations Vulkan makes exact: `OpFSub` (correctly
//! rounded, so exact when the difference is representable), `Frexp` and
//! `Ldexp` (exact when the result is representable), `FAbs`, comparisons and
//! selects. With `r = |x|` and `d = |y|`: while `r >= d`, scale `d` by a power
//! of two into `r`'s binade (halved once if it then exceeds `r`), giving `t`
//! with `t <= r < 2t`, and take `r - t`, which Sterbenz's lemma makes exact;
//! each step leaves `r` at least one binade lower, and every `t` is a multiple
//! of `d`, so `r` stays congruent to `|x|` modulo `d`. At most one step per
//! binade from `|y|`'s to `|x|`'s: [`max_steps`].
//!
//! No result of `Frexp` or `Ldexp` on a subnormal value is used: lavapipe
//! gets them wrong (it keeps subnormals in arithmetic, yet gave
//! `1e-310 % 3e-320` as 5.5e-309). So a subnormal `d` is taken in two
//! stages, both exact: `|x|` modulo `d * 2^S` (a multiple of `d`, and
//! normal for `S` one more than the mantissa's bits), then that remainder
//! times `2^S` modulo `d * 2^S`, times `2^-S` (multiplications by powers
//! of two, exact in range, as these are).
//!
//! Shape of the function (one per float type a module uses, `emit.rs`):
//! the special cases first, then one structured loop of [`STEPS`] steps
//! per trip (a step whose `r` is already below `d` keeps it), left as soon
//! as `r < d` or after [`trips`] trips; the second stage, in a selection
//! taken only for a subnormal `d`, is another such loop. A `%` of operands
//! within a factor 2^[`STEPS`] of each other takes no back-edge; the worst
//! case (`f64::MAX % 3e-308`, about 250 back-edges) counts towards
//! llvmpipe's cap on the loop iterations of a shader (`crate::plan` counts
//! [`back_edges`]).
//!
//! Special cases, as the host: a NaN operand, an infinite `x` or a zero `y`
//! give NaN (its payload and sign are the device's); an infinite `y` gives
//! `x`; a zero result has the sign of `x`. Subnormals are exact where the
//! driver keeps them; where it flushes them (Vulkan allows it) a subnormal
//! `y` reads as zero and the result is NaN.
//!
//! The algorithm is written once over [`RemOps`]: the writer's
//! implementation emits the instructions, and the unit tests' evaluates the
//! same operations on the host in `f32` or `f64`.

mod emit;
#[cfg(test)]
mod tests;

use lang::Scalar;

/// The remainder functions of one module: ids reserved on first use,
/// bodies written at the end (`emit.rs`).
#[derive(Debug, Default)]
pub(in crate::spirv) struct Fns {
    f32: Option<rspirv::spirv::Word>,
    f64: Option<rspirv::spirv::Word>,
}

/// Steps per trip of the loop: each step is straight-line code (selects),
/// so a `%` of nearby operands never goes round the loop, and the worst
/// case takes a few hundred back-edges rather than thousands.
pub(super) const STEPS: u32 = 8;

/// A float type the remainder is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Width {
    F32,
    F64,
}

/// The most steps of each stage (as `frexp` counts binades: one per
/// exponent from the divisor's to the dividend's, both included): the first
/// from the smallest normal divisor to the largest finite value (frexp
/// exponents -125 ..= 128 and -1021 ..= 1024; a subnormal divisor is scaled
/// above the smallest normal), the second over a factor of `2^S`.
pub(super) const fn max_steps(w: Width, second: bool) -> u32 {
    match (w, second) {
        (Width::F32, false) => 254,
        (Width::F64, false) => 2046,
        (w, true) => scale_bits(w) + 1,
    }
}

/// `S`: a subnormal times `2^S` is normal.
pub(super) const fn scale_bits(w: Width) -> u32 {
    match w {
        Width::F32 => 24,
        Width::F64 => 53,
    }
}

/// The smallest normal value.
const fn min_normal(w: Width) -> f64 {
    match w {
        Width::F32 => f32::MIN_POSITIVE as f64,
        Width::F64 => f64::MIN_POSITIVE,
    }
}

/// The most trips of a stage's loop.
pub(super) const fn trips(w: Width, second: bool) -> u32 {
    max_steps(w, second).div_ceil(STEPS)
}

/// The most loop back-edges one float `%` of type `s` takes on the device
/// (for the loop-cap accounting of [`crate::plan`]); 0 for other types.
pub(crate) fn back_edges(s: Scalar) -> i128 {
    let w = match s {
        Scalar::F32 => Width::F32,
        Scalar::F64 => Width::F64,
        _ => return 0,
    };
    (trips(w, false) - 1 + trips(w, true) - 1) as i128
}

/// Ordered comparisons (false when an operand is NaN).
#[derive(Clone, Copy, Debug)]
pub(super) enum Cmp {
    Lt,
    Gt,
    Ge,
    Eq,
}

/// What the algorithm needs, on floats `F` of one width, the 32-bit signed
/// exponents `I` of `frexp`, and booleans `B`.
pub(super) trait RemOps {
    type F: Copy;
    type I: Copy;
    type B: Copy;
    /// A constant (exactly representable in the width).
    fn kf(&self, v: f64) -> Self::F;
    /// `a - b`, rounded once.
    fn sub(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b`, rounded once.
    fn mul(&self, a: Self::F, b: Self::F) -> Self::F;
    fn abs(&self, a: Self::F) -> Self::F;
    fn cmp(&self, op: Cmp, a: Self::F, b: Self::F) -> Self::B;
    fn is_nan(&self, a: Self::F) -> Self::B;
    fn or(&self, a: Self::B, b: Self::B) -> Self::B;
    fn sel(&self, c: Self::B, a: Self::F, b: Self::F) -> Self::F;
    /// (m, e) with `a = m * 2^e` and `0.5 <= |m| < 1`; (0, 0) for 0.
    fn frexp(&self, a: Self::F) -> (Self::F, Self::I);
    /// `a * 2^e` (exact where representable).
    fn ldexp(&self, a: Self::F, e: Self::I) -> Self::F;
    /// The magnitude of `mag` with the sign bit of `sign`.
    fn copysign(&self, mag: Self::F, sign: Self::F) -> Self::F;
    /// `r = init; do { r = step(r) } while more(r)`, at most `trips` times,
    /// as a structured loop; the last `r`.
    fn repeat(
        &self,
        init: Self::F,
        trips: u32,
        step: impl Fn(Self::F) -> Self::F,
        more: impl Fn(Self::F) -> Self::B,
    ) -> Self::F;
    /// `if c { then(v) } else { v }`, as a structured selection.
    fn when(&self, c: Self::B, v: Self::F, then: impl Fn(Self::F) -> Self::F) -> Self::F;
}

/// `x % y` as the host computes it.
pub(super) fn rem<O: RemOps>(o: &O, w: Width, x: O::F, y: O::F) -> O::F {
    let (ax, ay) = (o.abs(x), o.abs(y));
    let nan = o.or(
        o.or(o.is_nan(x), o.is_nan(y)),
        o.or(
            o.cmp(Cmp::Eq, ax, o.kf(f64::INFINITY)),
            o.cmp(Cmp::Eq, ay, o.kf(0.0)),
        ),
    );
    // |x| < |y| (an infinite y included): x itself.
    let small = o.cmp(Cmp::Lt, ax, ay);
    // Where the result is decided already, the loop gets operands that end
    // it at once (and no infinity or zero divisor for frexp).
    let decided = o.or(nan, small);
    let d = o.sel(decided, o.kf(1.0), ay);
    let tiny = o.cmp(Cmp::Lt, d, o.kf(min_normal(w)));
    let up = o.kf(2f64.powi(scale_bits(w) as i32));
    let r = reduce(
        o,
        o.sel(decided, o.kf(0.0), ax),
        o.sel(tiny, o.mul(d, up), d),
        trips(w, false),
    );
    let r = o.when(tiny, r, |r| {
        let r = reduce(o, o.mul(r, up), o.mul(d, up), trips(w, true));
        o.mul(r, o.kf(2f64.powi(-(scale_bits(w) as i32))))
    });
    let res = o.sel(small, x, o.copysign(r, x));
    o.sel(nan, o.kf(f64::NAN), res)
}

/// `r` modulo `d` (both normal, or `r` zero), where `trips` loop trips are
/// enough.
fn reduce<O: RemOps>(o: &O, r: O::F, d: O::F, trips: u32) -> O::F {
    let (dm, _) = o.frexp(d);
    o.repeat(
        r,
        trips,
        |mut r| {
            for _ in 0..STEPS {
                r = step(o, r, d, dm);
            }
            r
        },
        |r| o.cmp(Cmp::Ge, r, d),
    )
}

/// One exact reduction of `r` by a multiple of `d` (`dm`: `d`'s frexp
/// mantissa): `r - t` for `t = d * 2^k` with `t <= r < 2t`, or `r` where
/// `r < d`.
fn step<O: RemOps>(o: &O, r: O::F, d: O::F, dm: O::F) -> O::F {
    let (_, e) = o.frexp(r);
    // r and t are in [2^(e-1), 2^e): t <= r, or else t/2 <= r < t.
    let t = o.ldexp(dm, e);
    let t = o.sel(o.cmp(Cmp::Gt, t, r), o.mul(t, o.kf(0.5)), t);
    o.sel(o.cmp(Cmp::Ge, r, d), o.sub(r, t), r)
}
