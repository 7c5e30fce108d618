//! Helpers shared by the tests of the device math (unit tests here,
//! `compiler/tests`, the workspace's device tests): not part of the
//! compiler's interface.

/// The distance in ulps of two `f64` results: 0 for two NaNs; `u64::MAX`
/// when only one is NaN, or when an infinity or a zero differs in any bit
/// from the other result.
pub fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    if a.is_infinite() || b.is_infinite() || a == 0.0 || b == 0.0 {
        return if a.to_bits() == b.to_bits() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            -(b & i64::MAX)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

/// A xorshift64 stream of test arguments (the same for the same seed).
pub struct Rng(pub u64);

impl Rng {
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A double with binary exponent uniform in `lo..=hi` (log-uniform),
    /// random mantissa, and random sign when `signed`.
    pub fn logu(&mut self, lo: i32, hi: i32, signed: bool) -> f64 {
        let r = self.bits();
        let e = lo + (r % (hi - lo + 1) as u64) as i32;
        let m = 1.0 + (self.bits() >> 12) as f64 / 4503599627370496.0;
        let v = m * 2f64.powi(e);
        if signed && r >> 63 == 1 {
            -v
        } else {
            v
        }
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.bits() >> 11) as f64 / 9007199254740992.0
    }
}

/// Bases and exponents where `pow` has special cases or is hard to get
/// right (signed zeros, infinities, NaN, odd integers past 2^53 and 2^32,
/// values next to 1, subnormals).
pub const POW_SPECIALS: [f64; 25] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    1.5,
    -1.5,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1e300,
    -1e300,
    1e-300,
    5e-324,
    -5e-324,
    9007199254740993.0,
    4294967297.0,
    -4294967297.0,
    1.0000000000000002,
    0.9999999999999999,
];
