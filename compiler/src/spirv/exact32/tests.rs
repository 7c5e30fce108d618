//! The algorithm of [`super`] on the host, with the driver's approximations
//! made up to [`SKEW`] ulp wrong, against Rust's correctly rounded `/` and
//! `sqrt`.

use super::{div, div_scaled, reciprocal, sqrt, Ops};

/// How many ulp the host's stand-ins for the driver's `1.0 / b` and
/// `InverseSqrt` are moved (Vulkan allows 2.5 and about 2).
const SKEW: i32 = 3;

/// [`Ops`] on the host; `skew(x)` is how many ulp the approximations of
/// `x` are moved.
struct Host<S: Fn(f32) -> i32> {
    skew: S,
    /// How many operations left the straight route.
    slow: std::cell::Cell<u32>,
}

fn moved(x: f32, by: i32) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    f32::from_bits((x.to_bits() as i64 + by as i64) as u32)
}

impl<S: Fn(f32) -> i32> Ops for Host<S> {
    type F = f32;
    type U = u32;
    type B = bool;
    fn kf(&self, v: f32) -> f32 {
        v
    }
    fn ku(&self, v: u32) -> u32 {
        v
    }
    // Where Vulkan leaves the result undefined, something wrong.
    fn recip(&self, b: f32) -> f32 {
        if b == 0.0 || !b.is_finite() {
            return 1.5;
        }
        moved(1.0 / b, (self.skew)(b))
    }
    fn rsqrt(&self, a: f32) -> f32 {
        if a <= 0.0 || !a.is_finite() {
            return 1.5;
        }
        moved((1.0 / (a as f64).sqrt()) as f32, (self.skew)(a))
    }
    fn mul(&self, a: f32, b: f32) -> f32 {
        a * b
    }
    fn fma(&self, a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn neg(&self, a: f32) -> f32 {
        -a
    }
    fn abs(&self, a: f32) -> f32 {
        a.abs()
    }
    fn gt(&self, a: f32, b: f32) -> bool {
        a > b
    }
    fn le(&self, a: f32, b: f32) -> bool {
        a <= b
    }
    fn bits(&self, a: f32) -> u32 {
        a.to_bits()
    }
    fn float_of(&self, u: u32) -> f32 {
        f32::from_bits(u)
    }
    fn sub_u(&self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b)
    }
    fn add_u(&self, a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    fn lt_u(&self, a: u32, b: u32) -> bool {
        a < b
    }
    fn float_of_u(&self, u: u32) -> f32 {
        u as f32
    }
    fn and_u(&self, a: u32, b: u32) -> u32 {
        a & b
    }
    fn or_u(&self, a: u32, b: u32) -> u32 {
        a | b
    }
    fn eq_u(&self, a: u32, b: u32) -> bool {
        a == b
    }
    fn and_b(&self, a: bool, b: bool) -> bool {
        a && b
    }
    fn or_b(&self, a: bool, b: bool) -> bool {
        a || b
    }
    fn not_b(&self, a: bool) -> bool {
        !a
    }
    fn sel_f(&self, c: bool, a: f32, b: f32) -> f32 {
        if c {
            a
        } else {
            b
        }
    }
    fn sel_u(&self, c: bool, a: u32, b: u32) -> u32 {
        if c {
            a
        } else {
            b
        }
    }
    fn xor_u(&self, a: u32, b: u32) -> u32 {
        a ^ b
    }
    fn shr_u(&self, a: u32, by: u32) -> u32 {
        a >> by
    }
    fn shl_u(&self, a: u32, by: u32) -> u32 {
        a << by
    }
    fn trunc_u(&self, a: f32) -> u32 {
        a as u32
    }
    fn sub(&self, a: f32, b: f32) -> f32 {
        a - b
    }
    fn when(&self, c: bool, v: f32, then: impl Fn() -> f32) -> f32 {
        if c {
            self.slow.set(self.slow.get() + 1);
            then()
        } else {
            v
        }
    }
}

fn host(skew: impl Fn(f32) -> i32) -> Host<impl Fn(f32) -> i32> {
    Host {
        skew,
        slow: std::cell::Cell::new(0),
    }
}

/// A skew from -SKEW to SKEW picked by the value's bits.
fn hashed(x: f32) -> i32 {
    let h = x.to_bits().wrapping_mul(0x9e37_79b9) >> 29;
    h as i32 % (2 * SKEW + 1) - SKEW
}

/// Halfway from `x` (finite) to the next f32 away from zero.
fn midpoint(x: f32) -> f64 {
    (x as f64 + moved(x, 1) as f64) / 2.0
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn f32_bits(&mut self) -> f32 {
        f32::from_bits(self.next() as u32)
    }
    /// A finite value with exponent field in `lo..=hi`.
    fn f32_in(&mut self, lo: u32, hi: u32) -> f32 {
        let r = self.next();
        let e = lo + (r >> 40) as u32 % (hi - lo + 1);
        f32::from_bits(((r as u32) & 0x807f_ffff) | e << 23)
    }
}

fn check_div(o: &impl Ops<F = f32, U = u32, B = bool>, a: f32, b: f32) {
    let got = div(o, a, b);
    assert!(
        same(got, a / b),
        "{a:e} / {b:e} ({:#x} / {:#x}): {got:e}, want {:e}",
        a.to_bits(),
        b.to_bits(),
        a / b
    );
}

fn check_sqrt(o: &impl Ops<F = f32, U = u32, B = bool>, a: f32) {
    let got = sqrt(o, a);
    assert!(
        same(got, a.sqrt()),
        "sqrt({a:e}) ({:#x}): {got:e}, want {:e}",
        a.to_bits(),
        a.sqrt()
    );
}

/// Quotients made to lie within a hair of a midpoint: `a = b * m` rounded,
/// for `m` halfway between two f32 values, so `a / b` is `m` plus or minus
/// at most half an ulp of `a` over `b`.
#[test]
fn quotients_next_to_midpoints_round_the_hosts_way() {
    let mut rng = Rng(0x51ed_2701);
    for k in -SKEW..=SKEW {
        let o = host(|_| k);
        for _ in 0..100_000 {
            let b = rng.f32_in(100, 150);
            let q = rng.f32_in(100, 150);
            let a = (b as f64 * midpoint(q)) as f32;
            check_div(&o, a, b);
            check_div(&o, -a, b);
            // Its neighbours too: each moves the quotient across a
            // fraction of an ulp.
            check_div(&o, moved(a, 1), b);
            check_div(&o, moved(a, -1), b);
        }
        assert_eq!(o.slow.get(), 0, "all in the fma route's range");
    }
}

/// Quotients below 2^-126, rounded to the subnormal grid: `a = b * m`
/// rounded for `m` halfway between two subnormals (and its neighbours),
/// where the quotient's own rounding to 24 bits could land on the tie.
#[test]
fn subnormal_quotients_round_the_hosts_way() {
    let mut rng = Rng(0x7e57_ab1e);
    for k in -SKEW..=SKEW {
        let o = host(|_| k);
        for _ in 0..100_000 {
            let b = rng.f32_in(100, 150);
            let n = (rng.next() >> 41) as u32; // below 2^23
            let m = (n as f64 + 0.5) * 2f64.powi(-149);
            let a = (b as f64 * m) as f32;
            for a in [a, moved(a, 1), moved(a, -1), -a] {
                check_div(&o, a, b);
            }
        }
    }
}

/// Subnormal operands (either or both), every skew: the quotient from
/// their exact values, as the host's.
#[test]
fn subnormal_operands_are_divided_exactly() {
    let mut rng = Rng(0x50b_0a11);
    let o = host(hashed);
    for _ in 0..200_000 {
        let s = f32::from_bits(rng.next() as u32 & 0x807f_ffff);
        let x = rng.f32_in(1, 254);
        check_div(&o, s, x);
        check_div(&o, x, s);
        check_div(&o, s, f32::from_bits(rng.next() as u32 & 0x807f_ffff));
    }
}

/// Random operands over the fma route's range and beyond, every skew.
#[test]
fn random_quotients_are_the_hosts() {
    let mut rng = Rng(0x0dd_ba11);
    let o = host(hashed);
    for _ in 0..400_000 {
        let (a, b) = (rng.f32_in(30, 254), rng.f32_in(1, 254));
        check_div(&o, a, b);
        let (a, b) = (rng.f32_in(110, 145), rng.f32_in(110, 145));
        check_div(&o, a, b);
        check_div(&o, a, a);
        check_div(&o, rng.f32_bits(), rng.f32_bits());
        // The other way, which any operands may take.
        let (a, b) = (rng.f32_bits(), rng.f32_in(90, 160));
        let got = div_scaled(&o, a, b);
        assert!(same(got, a / b), "{a:e} / {b:e}: {got:e}");
    }
    // Most took the fast way.
    assert!(o.slow.get() < 800_000, "{}", o.slow.get());
}

/// Zeros, infinities, NaN, subnormals, the ends of the range and the
/// edges of the route's bounds, all against each other.
#[test]
fn special_and_edge_quotients_are_the_hosts() {
    let mut v = vec![
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        3.0,
        0.1,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.0e-40,
        -7.0e-45,
        16_777_215.0,
        1.0 - f32::EPSILON / 2.0,
        1.0 + f32::EPSILON,
    ];
    for e in [
        1u32, 2, 3, 24, 39, 40, 41, 126, 127, 128, 251, 252, 253, 254,
    ] {
        for m in [0u32, 1, 0x40_0000, 0x7f_fffe, 0x7f_ffff] {
            v.push(f32::from_bits(e << 23 | m));
            v.push(-f32::from_bits(e << 23 | m));
        }
    }
    for k in -SKEW..=SKEW {
        let o = host(|_| k);
        for &a in &v {
            for &b in &v {
                check_div(&o, a, b);
            }
            check_sqrt(&o, a);
        }
    }
}

/// Roots made to lie within a hair of a midpoint: `a = m * m` rounded.
#[test]
fn roots_next_to_midpoints_round_the_hosts_way() {
    let mut rng = Rng(0xfeed_5eed);
    for k in -SKEW..=SKEW {
        let o = host(|_| k);
        for _ in 0..100_000 {
            let m = midpoint(rng.f32_in(100, 150).abs());
            let a = (m * m) as f32;
            check_sqrt(&o, a);
            check_sqrt(&o, moved(a, 1));
            check_sqrt(&o, moved(a, -1));
        }
        assert_eq!(o.slow.get(), 0, "all in the fma route's range");
    }
}

/// Every 257th f32 bit pattern (all signs, exponents and enough of every
/// significand), every skew: the root as the host's.
#[test]
fn roots_across_the_bit_patterns_are_the_hosts() {
    let o = host(hashed);
    for bits in (0..=u32::MAX).step_by(257) {
        check_sqrt(&o, f32::from_bits(bits));
    }
}

/// Two Newton steps from the driver's reciprocal, up to 3 ulp off, and the
/// mended last bit for an all-ones significand give the correctly rounded
/// `1/b` for every significand (every third here; all in a slower run).
#[test]
fn reciprocals_of_every_significand_are_the_hosts() {
    for k in [-SKEW, -1, 1, SKEW] {
        let o = host(|_| k);
        let ms = (0..1u32 << 23).step_by(3).chain([0x7f_ffff]);
        for m in ms {
            let b = f32::from_bits(127 << 23 | m);
            let y = reciprocal(&o, b);
            assert_eq!(y, 1.0 / b, "skew {k}: 1 / {b:e} ({m:#x})");
            check_div(&o, 1.0, b);
            check_div(&o, f32::from_bits(127 << 23 | (m ^ 0x55_5555)), b);
        }
    }
}

/// Every f32 in two binades (every root in range is one of these scaled by
/// a power of four), every start from -SKEW to SKEW ulp: the host's root.
#[test]
fn roots_of_two_binades_are_the_hosts() {
    for k in -SKEW..=SKEW {
        let o = host(|_| k);
        // Each skew sees a different third of the binades, all of them
        // over the seven skews' runs together with `hashed` below.
        let start = (k + SKEW) as u32 % 3;
        for m in (start..1 << 24).step_by(3) {
            check_sqrt(&o, f32::from_bits(126 << 23 | m));
        }
        check_sqrt(&o, f32::from_bits(126 << 23 | 0x7f_ffff));
        check_sqrt(&o, f32::from_bits(2 << 23 | 0x7f_ffff));
    }
}
