//! `sin cos tan asin acos atan atan2` on f64.
//!
//! * `sin cos tan` (one function, [`trig`]): `x = n·π/2 + y`, `|y| <= π/4`
//!   as a two-part `y0 + y1`; then fdlibm's kernels `k_sin k_cos k_tan`
//!   (`k_tan` computes `-1/tan` accurately for odd `n`), picked by `n mod 4`
//!   (cos is sin one quadrant on). The reduction is exact enough for the
//!   kernels to be within 1 ulp of sin/cos/tan of the exact argument for
//!   every finite `x`, as the host's:
//!   - `|x| <= π/4`: none;
//!   - `|x| < 2^20·π/2`: fdlibm's Cody–Waite reduction, π/2 in three 33-bit
//!     parts and their tails (each `n·part` exact), up to three rounds as
//!     fdlibm decides from the cancellation seen;
//!   - beyond (every finite double up to `f64::MAX`): Payne–Hanek in 32-bit
//!     integers, a structured branch: with `x = M·2^e`, the 192 bits of 2/π
//!     that matter ([`TWO_OVER_PI`]) times `M` modulo 2^192 give `n mod 4`
//!     and 190 bits of the fraction (the worst case over all doubles needs
//!     about 120), made a double-double and multiplied by π/2 exactly.
//! * `asin acos`: fdlibm's `e_asin.c e_acos.c` (a rational approximation in
//!   `x²` or, for `|x| >= 1/2`, in `(1-|x|)/2` with its square root in two
//!   parts).
//! * `atan`: fdlibm's `s_atan.c` (reduction by `atan(c)` for `c` in
//!   `{1/2, 1, 3/2, ∞}` with those in two parts, then a degree-22 odd
//!   polynomial).
//! * `atan2`: fdlibm's `e_atan2.c` on `atan(|y/x|)`, with its special cases
//!   (signed zeros and infinities as C99 says).

use super::{fast_two_sum, table, two_prod_const, two_sum, Fun, Ops, B, F, U};

/// The bits of 2/π after the binary point, most significant first, 32 to an
/// element, after two elements of zeros (so that a window may start before
/// the binary point).
pub(super) const TWO_OVER_PI: [u32; 40] = [
    0x00000000, 0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
    0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e,
    0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b,
    0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
    0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab,
];

const NAN: f64 = f64::NAN;
const INV_PIO2: f64 = 6.36619772367581382433e-01; // 0x3fe45f30_6dc9c883
const TO_INT: f64 = 6755399441055744.0; // 1.5·2^52
const PIO2_1: f64 = 1.57079632673412561417e+00; // 0x3ff921fb_54400000
const PIO2_1T: f64 = 6.07710050650619224932e-11; // 0x3dd0b461_1a626331
const PIO2_2: f64 = 6.07710050630396597660e-11; // 0x3dd0b461_1a600000
const PIO2_2T: f64 = 2.02226624879595063154e-21; // 0x3ba3198a_2e037073
const PIO2_3: f64 = 2.02226624871116645580e-21; // 0x3ba3198a_2e000000
const PIO2_3T: f64 = 8.47842766036889956997e-32; // 0x397b839a_252049c1
const PIO2_H: f64 = 1.5707963267948966; // 0x3ff921fb_54442d18
const PIO2_L: f64 = 6.123233995736766e-17; // π/2 - PIO2_H

/// fdlibm's reduction for `|x| < 2^20·π/2`: `[n, y0, y1]`.
fn medium<'a, O: Ops>(x: F<'a, O>) -> [F<'a, O>; 3] {
    let fnn = x * INV_PIO2 + TO_INT - TO_INT;
    let r1 = x - fnn * PIO2_1;
    let w1 = fnn * PIO2_1T;
    let y01 = r1 - w1;
    let ex = x.ahi() >> 20;
    let ey1 = (y01.hi() >> 20) & 0x7ffu32;
    // Second round, good to 118 bits.
    let w = fnn * PIO2_2;
    let r2 = r1 - w;
    let w2 = fnn * PIO2_2T - ((r1 - r2) - w);
    let y02 = r2 - w2;
    let ey2 = (y02.hi() >> 20) & 0x7ffu32;
    // Third round, good to 151 bits.
    let w = fnn * PIO2_3;
    let r3 = r2 - w;
    let w3 = fnn * PIO2_3T - ((r2 - r3) - w);
    let y03 = r3 - w3;
    let do2 = (ex - ey1).sgt(16i32);
    let do3 = do2 & (ex - ey2).sgt(49i32);
    let r = do3.sel(r3, do2.sel(r2, r1));
    let w = do3.sel(w3, do2.sel(w2, w1));
    let y0 = do3.sel(y03, do2.sel(y02, y01));
    [fnn, y0, (r - y0) - w]
}

/// Payne–Hanek reduction of a finite `|x| >= 2^20·π/2`: `[n, y0, y1]`.
fn large<'a, O: Ops>(x: F<'a, O>) -> [F<'a, O>; 3] {
    let (hx, lx) = x.words();
    let ix = hx & 0x7fff_ffffu32;
    // x = M·2^e with e = E - 1075 >= -32. Bits of 2/π of weight 2^-i for
    // i <= e - 2 add multiples of 4 to x·2/π: the window starts at weight
    // 2^-(e-1), which is bit e - 1 + 63 of the table.
    let p0 = (ix >> 20) - 1013u32;
    let wi = p0 >> 5;
    let sh = p0 & 31u32;
    let words: Vec<U<'a, O>> = (0..7u32).map(|k| table(wi + k)).collect();
    let rsh = hx.k(31) - sh;
    // The window B as six limbs, least significant first.
    let limb: Vec<U<'a, O>> = (0..6)
        .map(|k| (words[5 - k] << sh) | ((words[6 - k] >> 1) >> rsh))
        .collect();
    let m1 = (hx & 0x000f_ffffu32) | 0x0010_0000u32;
    let m0 = lx;
    // P = M·B mod 2^192 = x·2/π·2^190 mod 2^192.
    let lo_hi: Vec<_> = limb.iter().map(|&b| m0.umul(b)).collect();
    let lo_hi1: Vec<_> = limb[..5].iter().map(|&b| m1.umul(b)).collect();
    let mut p = Vec::with_capacity(6);
    let mut carry = hx.k(0);
    for t in 0..6 {
        let mut terms = vec![lo_hi[t].0];
        if t >= 1 {
            terms.push(lo_hi[t - 1].1);
            terms.push(lo_hi1[t - 1].0);
        }
        if t >= 2 {
            terms.push(lo_hi1[t - 2].1);
        }
        let mut s = carry;
        let mut next = hx.k(0);
        for term in terms {
            let s2 = s + term;
            next = next + s2.ult(term).selu(1u32, 0u32);
            s = s2;
        }
        p.push(s);
        carry = next;
    }
    // The top two bits are n mod 4; the other 190 the fraction f. From
    // f >= 1/2 on, take n + 1 and f - 1, whose magnitude 2^190 - F is
    // computed in integers (no cancellation in floating point).
    let q = p[5] >> 30;
    let half = (p[5] >> 29) & 1u32;
    let up = half.eq(1u32);
    p[5] = p[5] & 0x3fff_ffffu32;
    let mut c = hx.k(1);
    let mut frac = Vec::with_capacity(6);
    for (k, &f) in p.iter().enumerate() {
        let g = !f + c;
        c = c & g.eq(0u32).selu(1u32, 0u32);
        let g = if k == 5 { g & 0x3fff_ffffu32 } else { g };
        frac.push(up.selu(g, f));
    }
    let q = q + half;
    // The fraction as a double-double (each limb exact, summed exactly).
    let limb_f = |k: usize| frac[k].to_uf() * f64::powi(2.0, 32 * k as i32 - 190);
    let mut h = limb_f(5);
    let mut l = x.k(0.0);
    for k in (0..5).rev() {
        let (s, e) = two_sum(h, limb_f(k));
        h = s;
        l = l + e;
    }
    let (h, l) = fast_two_sum(h, l);
    // Times π/2.
    let (ph, pe) = two_prod_const(h, PIO2_H);
    let pe = pe + (h * PIO2_L + l * PIO2_H);
    let (y0, y1) = fast_two_sum(ph, pe);
    let xneg = (hx >> 31).eq(1u32);
    let flip = ((hx >> 31) ^ half).eq(1u32);
    let n = xneg.selu(hx.k(0) - q, q);
    [n.to_f(), flip.sel(-y0, y0), flip.sel(-y1, y1)]
}

const S1: f64 = -1.66666666666666324348e-01;
const S2: f64 = 8.33333333332248946124e-03;
const S3: f64 = -1.98412698298579493134e-04;
const S4: f64 = 2.75573137070700676789e-06;
const S5: f64 = -2.50507602534068634195e-08;
const S6: f64 = 1.58969099521155010221e-10;

/// sin(x + y) for |x| <= π/4; `y` is taken as 0 where `no_tail`.
fn k_sin<'a, O: Ops>(x: F<'a, O>, y: F<'a, O>, no_tail: B<'a, O>) -> F<'a, O> {
    let z = x * x;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * x;
    no_tail.sel(
        x + v * (S1 + z * r),
        x - ((z * (0.5 * y - v * r) - y) - v * S1),
    )
}

const C1: f64 = 4.16666666666666019037e-02;
const C2: f64 = -1.38888888888741095749e-03;
const C3: f64 = 2.48015872894767294178e-05;
const C4: f64 = -2.75573143513906633035e-07;
const C5: f64 = 2.08757232129817482790e-09;
const C6: f64 = -1.13596475577881948265e-11;

/// cos(x + y) for |x| <= π/4.
fn k_cos<'a, O: Ops>(x: F<'a, O>, y: F<'a, O>) -> F<'a, O> {
    let z = x * x;
    let w = z * z;
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

const T: [f64; 13] = [
    3.33333333333334091986e-01,
    1.33333333333201242699e-01,
    5.39682539762260521377e-02,
    2.18694882948595424599e-02,
    8.86323982359930005737e-03,
    3.59207910759131235356e-03,
    1.45620945432529025516e-03,
    5.88041240820264096874e-04,
    2.46463134818469906812e-04,
    7.81794442939557092300e-05,
    7.14072491382608190305e-05,
    -1.85586374855275456654e-05,
    2.59073051863633712884e-05,
];
const PIO4: f64 = 7.85398163397448278999e-01;
const PIO4_LO: f64 = 3.06161699786838301793e-17;

/// tan(x + y) (`odd` = 0) or -1/tan(x + y) (`odd` = 1) for |x| <= π/4.
fn k_tan<'a, O: Ops>(x: F<'a, O>, y: F<'a, O>, odd: U<'a, O>) -> F<'a, O> {
    let hx = x.hi();
    let big = (hx & 0x7fff_ffffu32).uge(0x3fe5_9428u32); // |x| >= 0.6744
    let neg = (hx >> 31).eq(1u32);
    let odd = odd.eq(1u32);
    let xa = neg.sel(-x, x);
    let ya = neg.sel(-y, y);
    let x = big.sel((PIO4 - xa) + (PIO4_LO - ya), x);
    let y = big.sel(0.0, y);
    let z = x * x;
    let w = z * z;
    let r = T[1] + w * (T[3] + w * (T[5] + w * (T[7] + w * (T[9] + w * T[11]))));
    let v = z * (T[2] + w * (T[4] + w * (T[6] + w * (T[8] + w * (T[10] + w * T[12])))));
    let s = z * x;
    let r = y + z * (s * (r + v) + y) + s * T[0];
    let w = x + r;
    let sb = odd.sel(-1.0, 1.0);
    let vb = sb - 2.0 * (x + (r - w * w / (w + sb)));
    let vbig = neg.sel(-vb, vb);
    // -1/(x+r) accurately
    let w0 = w.low0();
    let v = r - (w0 - x);
    let a = -1.0 / w;
    let a0 = a.low0();
    let vodd = a0 + a * (1.0 + a0 * w0 + a0 * v);
    big.sel(vbig, odd.sel(vodd, w))
}

/// sin (`mode` 0), cos (1) or tan (2) of `x`.
pub(super) fn trig<'a, O: Ops>(x: F<'a, O>, mode: F<'a, O>) -> F<'a, O> {
    let ix = x.ahi();
    let finite = ix.ult(0x7ff0_0000u32);
    let xs = finite.sel(x, 0.0);
    let big = ix.uge(0x4139_21fbu32) & finite;
    let [nf, y0, y1] = big.branch(|| large(xs), || medium(xs));
    let small = ix.ule(0x3fe9_21fbu32);
    let n = small.selu(0u32, nf.to_i());
    let y0 = small.sel(xs, y0);
    let y1 = small.sel(0.0, y1);
    let s = k_sin(y0, y1, small);
    let c = k_cos(y0, y1);
    let t = k_tan(y0, y1, n & 1u32);
    let is_cos = mode.eq(1.0);
    let is_tan = mode.eq(2.0);
    let q = n + is_cos.selu(1u32, 0u32);
    let sc = (q & 1u32).eq(1u32).sel(c, s);
    let sc = (q & 2u32).eq(2u32).sel(-sc, sc);
    let r = is_tan.sel(t, sc);
    let r = is_cos.sel(
        ix.ult(0x3e46_a09eu32).sel(1.0, r),
        is_tan.sel(
            ix.ult(0x3e40_0000u32).sel(x, r),
            ix.ult(0x3e50_0000u32).sel(x, r),
        ),
    );
    finite.sel(r, NAN)
}

const PS0: f64 = 1.66666666666666657415e-01;
const PS1: f64 = -3.25565818622400915405e-01;
const PS2: f64 = 2.01212532134862925881e-01;
const PS3: f64 = -4.00555345006794114027e-02;
const PS4: f64 = 7.91534994289814532176e-04;
const PS5: f64 = 3.47933107596021167570e-05;
const QS1: f64 = -2.40339491173441421878e+00;
const QS2: f64 = 2.02094576023350569471e+00;
const QS3: f64 = -6.88283971605453293030e-01;
const QS4: f64 = 7.70381505559019352791e-02;
const X1P_120: f64 = 7.52316384526264e-37; // 2^-120

fn comp_r<'a, O: Ops>(z: F<'a, O>) -> F<'a, O> {
    let p = z * (PS0 + z * (PS1 + z * (PS2 + z * (PS3 + z * (PS4 + z * PS5)))));
    let q = 1.0 + z * (QS1 + z * (QS2 + z * (QS3 + z * QS4)));
    p / q
}

pub(super) fn asin<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let (hx, lx) = x.words();
    let ix = hx & 0x7fff_ffffu32;
    let small = ix.ult(0x3fe0_0000u32);
    let z = small.sel(x * x, (1.0 - x.abs()) * 0.5);
    let r = comp_r(z);
    let s = z.sqrt();
    let v1 = PIO2_H - (2.0 * (s + s * r) - PIO2_L);
    let f = s.low0();
    let c = (z - f * f) / (s + f);
    let v2 = 0.5 * PIO2_H - (2.0 * s * r - (PIO2_L - 2.0 * c) - (0.5 * PIO2_H - 2.0 * f));
    let v = ix.uge(0x3fef_3333u32).sel(v1, v2);
    let v = (hx >> 31).eq(1u32).sel(-v, v);
    let y = small.sel(x + x * r, v);
    let y = ix.ult(0x3e50_0000u32).sel(x, y);
    let one = ix.eq(0x3ff0_0000u32) & lx.eq(0u32);
    ix.uge(0x3ff0_0000u32)
        .sel(one.sel(x * PIO2_H + X1P_120, NAN), y)
}

pub(super) fn acos<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let (hx, lx) = x.words();
    let ix = hx & 0x7fff_ffffu32;
    let neg = (hx >> 31).eq(1u32);
    let small = ix.ult(0x3fe0_0000u32);
    let z = small.sel(x * x, neg.sel((1.0 + x) * 0.5, (1.0 - x) * 0.5));
    let r = comp_r(z);
    let s = z.sqrt();
    let ysmall = PIO2_H - (x - (PIO2_L - x * r));
    let ysmall = ix.ule(0x3c60_0000u32).sel(PIO2_H + X1P_120, ysmall);
    let yneg = 2.0 * (PIO2_H - (s + (r * s - PIO2_L)));
    let df = s.low0();
    let c = (z - df * df) / (s + df);
    let ypos = 2.0 * (df + (r * s + c));
    let y = small.sel(ysmall, neg.sel(yneg, ypos));
    let one = ix.eq(0x3ff0_0000u32) & lx.eq(0u32);
    ix.uge(0x3ff0_0000u32)
        .sel(one.sel(neg.sel(2.0 * PIO2_H + X1P_120, 0.0), NAN), y)
}

const ATANHI: [f64; 4] = [
    4.63647609000806093515e-01,
    7.85398163397448278999e-01,
    9.82793723247329054082e-01,
    1.57079632679489655800e+00,
];
const ATANLO: [f64; 4] = [
    2.26987774529616870924e-17,
    3.06161699786838301793e-17,
    1.39033110312309984516e-17,
    6.12323399573676603587e-17,
];
const AT: [f64; 11] = [
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02,
];

pub(super) fn atan<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let ix = x.ahi();
    let ax = x.abs();
    // |x| < 7/16: none; < 11/16: atan(1/2); < 19/16: atan(1); < 39/16:
    // atan(3/2); beyond: atan(∞).
    let c0 = ix.ult(0x3fdc_0000u32);
    let c1 = ix.ult(0x3fe6_0000u32);
    let c2 = ix.ult(0x3ff3_0000u32);
    let c3 = ix.ult(0x4003_8000u32);
    let pick = |v: [f64; 4]| c1.sel(v[0], c2.sel(v[1], c3.sel(v[2], v[3])));
    let num = c0.sel(
        ax,
        c1.sel(2.0 * ax - 1.0, c2.sel(ax - 1.0, c3.sel(ax - 1.5, -1.0))),
    );
    let den = c0.sel(
        1.0,
        c1.sel(2.0 + ax, c2.sel(ax + 1.0, c3.sel(1.0 + 1.5 * ax, ax))),
    );
    let t = num / den;
    let z = t * t;
    let w = z * z;
    let s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))));
    let s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))));
    let rbig = pick(ATANHI) - (t * (s1 + s2) - pick(ATANLO) - t);
    let r = c0.sel(t - t * (s1 + s2), rbig);
    let r = ix.uge(0x4410_0000u32).sel(ATANHI[3] + X1P_120, r);
    let r = r.copysign(x);
    let r = ix.ult(0x3e40_0000u32).sel(x, r);
    x.is_nan().sel(x, r)
}

const PI: f64 = 3.1415926535897931160E+00;
const PI_LO: f64 = 1.2246467991473531772E-16;

pub(super) fn atan2<'a, O: Ops>(y: F<'a, O>, x: F<'a, O>) -> F<'a, O> {
    let (hx, lx) = x.words();
    let (hy, ly) = y.words();
    let ix = hx & 0x7fff_ffffu32;
    let iy = hy & 0x7fff_ffffu32;
    // m = 2·sign(x) + sign(y)
    let ym = (hy >> 31).eq(1u32);
    let xm = (hx >> 31).eq(1u32);
    let by_m = |v: [f64; 4]| xm.sel(ym.sel(v[3], v[2]), ym.sel(v[1], v[0]));
    let z = (y / x).abs().call(Fun::Atan, &[]);
    // |y/x| < 2^-64 with x < 0: atan is 0 to the result's precision.
    let z = (xm & (iy + (64u32 << 20)).ult(ix)).sel(0.0, z);
    let res = xm.sel(ym.sel((z - PI_LO) - PI, PI - (z - PI_LO)), ym.sel(-z, z));
    let pio2 = ym.sel(-PI / 2.0, PI / 2.0);
    // |y/x| > 2^64, or y infinite
    let res = ((ix + (64u32 << 20)).ult(iy) | iy.eq(0x7ff0_0000u32)).sel(pio2, res);
    let xinf = iy.eq(0x7ff0_0000u32).sel(
        by_m([PI / 4.0, -PI / 4.0, 3.0 * PI / 4.0, -3.0 * PI / 4.0]),
        by_m([0.0, -0.0, PI, -PI]),
    );
    let res = ix.eq(0x7ff0_0000u32).sel(xinf, res);
    let res = (ix | lx).eq(0u32).sel(pio2, res);
    let yzero = xm.sel(ym.sel(-PI, PI), y);
    let res = (iy | ly).eq(0u32).sel(yzero, res);
    (x.is_nan() | y.is_nan()).sel(x + y, res)
}
