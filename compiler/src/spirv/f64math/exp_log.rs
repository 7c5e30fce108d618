//! `exp exp2 log log2 pow sinh cosh tanh` on f64.
//!
//! * `exp`: fdlibm's `e_exp.c` (musl's form): `x = k·ln2 + r`, `|r| <= ln2/2`
//!   with ln2 in two parts, a degree-5 rational approximation of `exp(r)`,
//!   scaled by `2^k` in two exact steps (one rounding for subnormal results).
//! * `exp2`: `x = k + f`, `|f| <= 1/2`, `f·ln2` as an exact product plus a
//!   tail, then `exp`'s kernel on that.
//! * `log`, `log2`: fdlibm's `e_log.c`/`e_log2.c` (musl's form): `x = 2^k·m`,
//!   `m` in `[√2/2, √2)`, `s = (m-1)/(m+1)`, a degree-14 polynomial in `s`;
//!   `log2` carries the result in two parts.
//! * `pow`: fdlibm's `e_pow.c`: `log2|x|` in two parts from a series in
//!   `(m-1.5)/(m+1.5)` or `(m-1)/(m+1)`, times `y` split in two, `2^` that
//!   with its own kernel; its special cases are C99's (as the host's).
//! * `sinh cosh tanh`: from `expm1(|x|)` (or `expm1(2|x|)`) computed in
//!   double-double, combined in double-double and rounded once, below 22;
//!   from there on `exp(|x|)/2` (a function) and ±1.
//!
//! Branches of the C code are computed side by side and selected.

use super::{
    dd_add, dd_div, dd_mul, fast_two_sum, two_prod, two_prod_const, two_sum, Dd, Fun, Ops, B, F, U,
};

const INF: f64 = f64::INFINITY;
const LN2HI: f64 = 6.93147180369123816490e-01; // 0x3fe62e42_fee00000
const LN2LO: f64 = 1.90821492927058770002e-10; // 0x3dea39ef_35793c76
const INVLN2: f64 = 1.44269504088896338700e+00; // 0x3ff71547_652b82fe
const P1: f64 = 1.66666666666666019037e-01;
const P2: f64 = -2.77777777770155933842e-03;
const P3: f64 = 6.61375632143793436117e-05;
const P4: f64 = -1.65339022054652515390e-06;
const P5: f64 = 4.13813679705723846039e-08;

/// `2^k` for `-1022 <= k <= 1023`.
pub(super) fn pow2<'a, O: Ops>(k: U<'a, O>) -> F<'a, O> {
    ((k + 1023u32) << 20).join(0u32)
}

/// `y·2^k` with one rounding (`|k| <= 2044`, `y` normal near 1): two exact
/// power-of-two factors.
pub(super) fn scalbn<'a, O: Ops>(y: F<'a, O>, k: U<'a, O>) -> F<'a, O> {
    let k1 = k.sar(1);
    let k2 = k - k1;
    y * pow2(k1) * pow2(k2)
}

/// `2^k·exp(hi - lo)` for `|hi - lo| <= ln2/2` (fdlibm's kernel).
fn exp_kernel<'a, O: Ops>(hi: F<'a, O>, lo: F<'a, O>, k: U<'a, O>) -> F<'a, O> {
    let r = hi - lo;
    let xx = r * r;
    let c = r - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    scalbn(y, k)
}

pub(super) fn exp<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let y = exp_scaled(x, 0);
    let y = x.gt(709.782712893383973096).sel(INF, y);
    let y = x.lt(-745.13321910194110842).sel(0.0, y);
    x.is_nan().sel(x, y)
}

/// `exp(x)/2` for `x <= 710.475860073943977` (`sinh` and `cosh` of large
/// arguments: one rounding after the kernel, no overflow on the way).
pub(super) fn expo2<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let y = exp_scaled(x, -1);
    let y = x.gt(710.4758600739439).sel(INF, y);
    x.is_nan().sel(x, y)
}

/// `exp(x)·2^shift` for `|x| <= 746` (else anything).
fn exp_scaled<'a, O: Ops>(x: F<'a, O>, shift: i32) -> F<'a, O> {
    // NaN and |x| > 746 (results selected by the callers) stay out of the
    // integer conversion.
    let xs = x.abs().le(746.0).sel(x, 0.0);
    let hx = xs.ahi();
    let sign = xs.sign();
    let kbig = (xs * INVLN2 + sign.eq(0u32).sel(0.5, -0.5)).trunc().to_i();
    let kmid = xs.uk(1) - sign - sign;
    let k = hx
        .uge(0x3ff0_a2b2u32)
        .selu(kbig, hx.ugt(0x3fd6_2e42u32).selu(kmid, 0u32));
    let kf = k.to_f();
    exp_kernel(xs - kf * LN2HI, kf * LN2LO, k + shift)
}

const LN2: f64 = 6.93147180559945286227e-01; // 0x3fe62e42_fefa39ef
const LN2_TAIL: f64 = 2.3190468138462996e-17; // ln2 - LN2

pub(super) fn exp2<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let xs = x.abs().le(1100.0).sel(x, 0.0);
    let kf = (xs + 0.5).floor();
    let f = xs - kf;
    let (ph, pl) = two_prod_const(f, LN2);
    let pl = pl + f * LN2_TAIL;
    let y = exp_kernel(ph, -pl, kf.to_i());
    let y = x.ge(1024.0).sel(INF, y);
    let y = x.lt(-1075.0).sel(0.0, y);
    x.is_nan().sel(x, y)
}

const LG1: f64 = 6.666666666666735130e-01;
const LG2: f64 = 3.999999999940941908e-01;
const LG3: f64 = 2.857142874366239149e-01;
const LG4: f64 = 2.222219843214978396e-01;
const LG5: f64 = 1.818357216161805012e-01;
const LG6: f64 = 1.531383769920937332e-01;
const LG7: f64 = 1.479819860511658591e-01;
const X1P54: f64 = 18014398509481984.0;

/// `log`'s reduction: (k, f, hfsq, s, R) with `x = 2^k·(1+f)`, of a finite
/// positive `x` (others are replaced by 1).
#[allow(clippy::type_complexity)]
fn log_reduce<'a, O: Ops>(x: F<'a, O>) -> (U<'a, O>, F<'a, O>, F<'a, O>, F<'a, O>, F<'a, O>) {
    let ok = x.gt(0.0) & x.ahi().ult(0x7ff0_0000u32);
    let xs = ok.sel(x, 1.0);
    let sub = xs.hi().ult(0x0010_0000u32);
    let xn = sub.sel(xs * X1P54, xs);
    let k0 = sub.selu(-54i32, 0u32);
    let (hx, lx) = xn.words();
    let hx = hx + (0x3ff0_0000u32 - 0x3fe6_a09e);
    let k = k0 + ((hx >> 20) - 0x3ffu32);
    let hx = (hx & 0x000f_ffffu32) + 0x3fe6_a09eu32;
    let f = hx.join(lx) - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    (k, f, hfsq, s, t2 + t1)
}

/// `log`'s special cases over `y`.
fn log_special<'a, O: Ops>(x: F<'a, O>, y: F<'a, O>) -> F<'a, O> {
    let y = x.eq(INF).sel(x, y);
    let y = (x.lt(0.0) | x.is_nan()).sel(f64::NAN, y);
    x.eq(0.0).sel(-INF, y)
}

pub(super) fn log<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let (k, f, hfsq, s, r) = log_reduce(x);
    let dk = k.to_f();
    let y = s * (hfsq + r) + dk * LN2LO - hfsq + f + dk * LN2HI;
    log_special(x, y)
}

const IVLN2HI: f64 = 1.44269504072144627571e+00; // 0x3ff71547_65200000
const IVLN2LO: f64 = 1.67517131648865118353e-10; // 0x3de705fc_2eefa200

pub(super) fn log2<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let (k, f, hfsq, s, r) = log_reduce(x);
    let hi = (f - hfsq).low0();
    let lo = f - hi - hfsq + s * (hfsq + r);
    let val_hi = hi * IVLN2HI;
    let val_lo = (lo + hi) * IVLN2LO + lo * IVLN2HI;
    let y = k.to_f();
    let w = y + val_hi;
    let val_lo = val_lo + ((y - w) + val_hi);
    log_special(x, val_lo + w)
}

const BP1: f64 = 1.5;
const DP_H1: f64 = 5.84962487220764160156e-01; // 0x3fe2b803_40000000
const DP_L1: f64 = 1.35003920212974897128e-08; // 0x3e4cfdeb_43cfd006
const TWO53: f64 = 9007199254740992.0;
const L1: f64 = 5.99999999999994648725e-01;
const L2: f64 = 4.28571428578550184252e-01;
const L3: f64 = 3.33333329818377432918e-01;
const L4: f64 = 2.72728123808534006489e-01;
const L5: f64 = 2.30660745775561754067e-01;
const L6: f64 = 2.06975017800338417784e-01;
const LG2_H: f64 = 6.93147182464599609375e-01; // 0x3fe62e43_00000000
const LG2_L: f64 = -1.90465429995776804525e-09; // 0xbe205c61_0ca86c39
const OVT: f64 = 8.0085662595372944372e-17; // -(1024-log2(ovfl+.5ulp))
const CP: f64 = 9.61796693925975554329e-01; // 2/(3ln2)
const CP_H: f64 = 9.61796700954437255859e-01; // (float)cp
const CP_L: f64 = -7.02846165095275826516e-09; // tail of cp_h
const IVLN2: f64 = 1.44269504088896338700e+00;
const IVLN2_TAIL: f64 = 2.0355273740931033e-17; // 1/ln2 - IVLN2

/// `log2|x|` as `t1 + t2` for finite nonzero `x` (others: anything).
fn pow_log2<'a, O: Ops>(x: F<'a, O>) -> (F<'a, O>, F<'a, O>) {
    let ok = x.ahi().ult(0x7ff0_0000u32) & !x.eq(0.0);
    let ax = ok.sel(x.abs(), 1.0);
    let sub = ax.hi().ult(0x0010_0000u32);
    let ax = sub.sel(ax * TWO53, ax);
    let n = sub.selu(-53i32, 0u32);
    let ix = ax.hi();
    let n = n + ((ix >> 20) - 0x3ffu32);
    let j = ix & 0x000f_ffffu32;
    let ixn = j | 0x3ff0_0000u32;
    // |x| < sqrt(3/2): k = 0; < sqrt(3): k = 1; else k = 0 with x/2.
    let lo = j.ule(0x3988eu32);
    let mid = !lo & j.ult(0xbb67au32);
    let high = !lo & !mid;
    let n = high.selu(n + 1u32, n);
    let ixn = high.selu(ixn - 0x0010_0000u32, ixn);
    let kk = mid.selu(1u32, 0u32);
    let ax = ax.with_hi(ixn);
    let bp = mid.sel(BP1, 1.0);
    let dp_h = mid.sel(DP_H1, 0.0);
    let dp_l = mid.sel(DP_L1, 0.0);
    // ss = s_h + s_l = (x-1)/(x+1) or (x-1.5)/(x+1.5)
    let u = ax - bp;
    let v = 1.0 / (ax + bp);
    let ss = u * v;
    let s_h = ss.low0();
    let t_h = (((ixn >> 1) | 0x2000_0000u32) + 0x0008_0000u32 + (kk << 18)).join(0u32);
    let t_l = ax - (t_h - bp);
    let s_l = v * ((u - s_h * t_h) - s_h * t_l);
    // log(ax)
    let s2 = ss * ss;
    let r = s2 * s2 * (L1 + s2 * (L2 + s2 * (L3 + s2 * (L4 + s2 * (L5 + s2 * L6)))));
    let r = r + s_l * (s_h + ss);
    let s2 = s_h * s_h;
    let t_h = (3.0 + s2 + r).low0();
    let t_l = r - ((t_h - 3.0) - s2);
    let u = s_h * t_h;
    let v = s_l * t_h + t_l * ss;
    // 2/(3log2)*(ss+...)
    let p_h = (u + v).low0();
    let p_l = v - (p_h - u);
    let z_h = CP_H * p_h;
    let z_l = CP_L * p_h + p_l * CP + dp_l;
    // log2(ax) = (ss+..)*2/(3*log2) = n + dp_h + z_h + z_l
    let t = n.to_f();
    let t1 = (((z_h + z_l) + dp_h) + t).low0();
    let t2 = z_l - (((t1 - t) - dp_h) - z_h);
    (t1, t2)
}

/// Whether the f64 with high word `iy` (sign cleared) and low word `ly` is
/// an integer, and whether it is an odd one, from its bits alone (zero is
/// an even integer; NaN and infinities count as even integers).
fn integer_parity<'a, O: Ops>(iy: U<'a, O>, ly: U<'a, O>) -> (B<'a, O>, B<'a, O>) {
    let big = iy.uge(0x4340_0000u32); // |y| >= 2^53
    let zero = (iy | ly).eq(0u32);
    let ge1 = iy.uge(0x3ff0_0000u32) & !big;
    // The exponent, 0..=52 where it is used.
    let k = (iy >> 20) - 0x3ffu32;
    // Exponent above 20: the units bit is in the low word, at 52 - k.
    let low = ge1 & k.ugt(20u32);
    let s1 = low.selu(iy.k(52) - k, 0u32);
    let j1 = ly >> s1;
    let int1 = low & (j1 << s1).eq(ly);
    // Exponent 0..=20: the low word is zero and the units bit is in the
    // high word, at 20 - k.
    let high = ge1 & !k.ugt(20u32);
    let s2 = high.selu(iy.k(20) - k, 0u32);
    let j2 = iy >> s2;
    let int2 = high & ly.eq(0u32) & (j2 << s2).eq(iy);
    let odd = (int1 & (j1 & 1u32).eq(1u32)) | (int2 & (j2 & 1u32).eq(1u32));
    (big | zero | int1 | int2, odd)
}

pub(super) fn pow<'a, O: Ops>(x: F<'a, O>, y: F<'a, O>) -> F<'a, O> {
    let (hx, lx) = x.words();
    let (hy, ly) = y.words();
    let ix = hx & 0x7fff_ffffu32;
    let iy = hy & 0x7fff_ffffu32;
    let xneg = hx.slt(0i32);
    // yisint: 0 not an integer, 1 odd, 2 even (|y| >= 2^53 and ±inf: even).
    // From the bits, as fdlibm does: a driver's f64 `Trunc` may go through
    // a 32-bit integer (lavapipe on some CPUs truncated 2^31 + 0.5 wrongly,
    // making every odd y past 2^31 even).
    let (yint, yodd) = integer_parity(iy, ly);
    let yisint = yodd.selu(1u32, yint.selu(2u32, 0u32));
    // The sign of the result (signed zeros and infinities are selected as
    // constants, not multiplied: without `SignedZeroInfNanPreserve` a driver
    // may fold `s * 0.0` to `0.0`).
    let sneg = xneg & yodd;

    // log2|x| as t1 + t2: |1-x| <= 2^-20 with |y| > 2^31 by a series,
    // else the general way.
    let ybig = iy.ugt(0x41e0_0000u32);
    let (t1g, t2g) = pow_log2(x);
    // (fdlibm's `u = ivln2_h·t` is not exact when t has more than 29
    // bits, which costs 100s of ulp for |y| near 2^31: here the product is
    // exact.)
    let t = x.abs() - 1.0;
    let w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
    let (u, ue) = two_prod_const(t, IVLN2);
    let v = ue + (t * IVLN2_TAIL - w * IVLN2);
    let t1n = (u + v).low0();
    let t2n = v - (t1n - u);
    let t1 = ybig.sel(t1n, t1g);
    let t2 = ybig.sel(t2n, t2g);

    // (y1+y2)*(t1+t2) = p_h + p_l, then 2^that.
    let y1 = y.low0();
    let p_l = (y - y1) * t1 + y * t2;
    let p_h = y1 * t1;
    let z = p_l + p_h;
    let (j, i) = z.words();
    let over =
        j.sge(0x4090_0000i32) & (((j - 0x4090_0000u32) | i).ne(0u32) | (p_l + OVT).gt(z - p_h));
    let under = j.slt(0x4090_0000i32)
        & (j & 0x7fff_ffffu32).uge(0x4090_cc00u32)
        & (((j - 0xc090_cc00u32) | i).ne(0u32) | p_l.le(z - p_h));
    // n = nearest integer to z (|z| > 1/2), p_h -= n
    let ia = j & 0x7fff_ffffu32;
    let k = (ia >> 20) - 0x3ffu32;
    let round = ia.ugt(0x3fe0_0000u32);
    let nn = j + (j.k(0x0010_0000) >> (k + 1u32));
    let k = ((nn & 0x7fff_ffffu32) >> 20) - 0x3ffu32;
    let tt = (nn & !(j.k(0x000f_ffff) >> k)).join(0u32);
    let nn = ((nn & 0x000f_ffffu32) | 0x0010_0000u32) >> (j.k(20) - k);
    let nn = j.slt(0i32).selu(j.k(0) - nn, nn);
    let n = round.selu(nn, 0u32);
    let p_h = round.sel(p_h - tt, p_h);
    let t = (p_l + p_h).low0();
    let u = t * LG2_H;
    let v = (p_l - (t - p_h)) * LN2 + t * LG2_L;
    let z = u + v;
    let w = v - (z - u);
    let t = z * z;
    let t1 = z - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    let r = (z * t1) / (t1 - 2.0) - (w + z * w);
    let z = 1.0 - (r - z);
    let signed = |c: B<'a, O>, v: f64| c.sel(-v, v);
    let res = scalbn(z, n);
    let res = sneg.sel(-res, res);
    let res = over.sel(signed(sneg, INF), res);
    let res = under.sel(signed(sneg, 0.0), res);

    // |y| > 2^31: over/underflow unless x is within 2^-20 of 1; |y| > 2^64:
    // always.
    let hy_neg = hy.slt(0i32);
    let hy_pos = hy.sgt(0i32);
    let inf_or_0 = |c: B<'a, O>, neg: B<'a, O>| c.sel(signed(neg, INF), signed(neg, 0.0));
    let huge = ix
        .ule(0x3fef_ffffu32)
        .sel(hy_neg.sel(INF, 0.0), hy_pos.sel(INF, 0.0));
    let mid = ix.ult(0x3fef_ffffu32).sel(
        inf_or_0(hy_neg, sneg),
        ix.ugt(0x3ff0_0000u32).sel(inf_or_0(hy_pos, sneg), res),
    );
    let res = ybig.sel(iy.ugt(0x43f0_0000u32).sel(huge, mid), res);
    // (x<0)**(non-int) is NaN
    let res = (xneg & yisint.eq(0u32)).sel(f64::NAN, res);

    // x = ±0, ±inf, ±1
    let xspecial = lx.eq(0u32) & (ix.eq(0x7ff0_0000u32) | ix.eq(0u32) | ix.eq(0x3ff0_0000u32));
    let ax = x.abs();
    let inv = ix.eq(0u32).sel(INF, ix.eq(0x3ff0_0000u32).sel(1.0, 0.0));
    let z = hy_neg.sel(inv, ax);
    let zneg = (ix.eq(0x3ff0_0000u32) & yisint.eq(0u32)).sel(f64::NAN, yisint.eq(1u32).sel(-z, z));
    let res = xspecial.sel(xneg.sel(zneg, z), res);

    // y = ±inf, ±1, 2, 1/2
    let ylo0 = ly.eq(0u32);
    let recip = x.eq(0.0).sel(x.k(INF).copysign(x), 1.0 / x);
    let res = (ylo0 & hy.eq(0x3fe0_0000u32) & hx.sge(0i32)).sel(x.sqrt(), res);
    let res = (ylo0 & hy.eq(0x4000_0000u32)).sel(x * x, res);
    let res = (ylo0 & iy.eq(0x3ff0_0000u32)).sel(hy_neg.sel(recip, x), res);
    let yinf = (ix.eq(0x3ff0_0000u32) & lx.eq(0u32)).sel(
        1.0,
        ix.uge(0x3ff0_0000u32)
            .sel(hy_neg.sel(0.0, INF), hy_neg.sel(INF, 0.0)),
    );
    let res = (ylo0 & iy.eq(0x7ff0_0000u32)).sel(yinf, res);
    // NaN if either is NaN, but x**0 = 1 and 1**y = 1 even then.
    let res = (x.is_nan() | y.is_nan()).sel(x + y, res);
    let res = (hx.eq(0x3ff0_0000u32) & lx.eq(0u32)).sel(1.0, res);
    (iy | ly).eq(0u32).sel(1.0, res)
}

const LN2_3: f64 = 1.1612227229362532e-26; // ln2 - LN2HI - LN2LO
/// 1/n! for n = 3..=16.
const INV_FACT: [f64; 14] = [
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
    1.1470745597729725e-11,
    7.647163731819816e-13,
    4.779477332387385e-14,
];

/// `e^y - 1` as a double-double for `0 <= y <= 45`, relative error below
/// 2^-57: `y = k·ln2 + r` (ln2 in three parts, `r` a double-double),
/// `expm1(r)` by its Taylor series with the first two terms in
/// double-double, then `2^k·expm1(r) + (2^k - 1)`.
fn expm1_dd<'a, O: Ops>(y: F<'a, O>) -> Dd<'a, O> {
    let kf = (y * INVLN2 + 0.5).floor();
    let rh = y - kf * LN2HI; // both exact
    let (p, pe) = two_prod_const(kf, LN2LO);
    let (s, e) = two_sum(rh, -p);
    let (rh, rl) = fast_two_sum(s, e - (pe + kf * LN2_3));
    let (a, ae) = two_prod(rh, rh);
    let ae = ae + 2.0 * rh * rl;
    let mut c = y.k(INV_FACT[INV_FACT.len() - 1]);
    for &f in INV_FACT[..INV_FACT.len() - 1].iter().rev() {
        c = f + rh * c;
    }
    let (s1, e1) = two_sum(0.5 * a, a * rh * c);
    let (s2, e2) = two_sum(rh, s1);
    let (ph, pl) = fast_two_sum(s2, rl + 0.5 * ae + e1 + e2);
    let tk = pow2(kf.to_i());
    dd_add(two_sum(tk, y.k(-1.0)), (tk * ph, tk * pl))
}

/// `sinh(x)`: below 22, `(m + m/(m+1))/2` with `m = expm1(|x|)`, all in
/// double-double and rounded once (under 0.51 ulp); beyond, `exp(|x|)/2`.
/// (fdlibm's `e_sinh.c` computes the same expressions in doubles, up to 2
/// ulp off.)
pub(super) fn sinh<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let ix = x.ahi();
    let ax = x.abs();
    let small = ix.ult(0x4036_0000u32);
    let m = expm1_dd(small.sel(ax, 0.0));
    let q = dd_div(m, dd_add(m, (x.k(1.0), x.k(0.0))));
    let v = dd_add(m, q).0 * 0.5;
    let big = ax.call(Fun::Expo2, &[]);
    let y = small.sel(v, big).copysign(x);
    let y = ix.ult(0x3e30_0000u32).sel(x, y);
    ix.uge(0x7ff0_0000u32).sel(x + x, y)
}

/// `cosh(x)`: below 22, `1 + m²/(2(m+1))` with `m = expm1(|x|)` in
/// double-double, rounded once; beyond, `exp(|x|)/2`.
pub(super) fn cosh<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let ix = x.ahi();
    let ax = x.abs();
    let small = ix.ult(0x4036_0000u32);
    let m = expm1_dd(small.sel(ax, 0.0));
    let d = dd_add(m, (x.k(1.0), x.k(0.0)));
    let q = dd_div(dd_mul(m, m), (2.0 * d.0, 2.0 * d.1));
    let v = dd_add((x.k(1.0), x.k(0.0)), q).0;
    let y = small.sel(v, ax.call(Fun::Expo2, &[]));
    let y = ix.ult(0x3c80_0000u32).sel(1.0, y);
    ix.uge(0x7ff0_0000u32).sel(x * x, y)
}

/// `tanh(x)`: below 22, `m/(m+2)` with `m = expm1(2|x|)` in double-double,
/// rounded once; beyond, ±1.
pub(super) fn tanh<'a, O: Ops>(x: F<'a, O>) -> F<'a, O> {
    let ix = x.ahi();
    let ax = x.abs();
    let small = ix.ult(0x4036_0000u32);
    let m = expm1_dd(small.sel(2.0 * ax, 0.0));
    let z = dd_div(m, dd_add(m, (x.k(2.0), x.k(0.0)))).0;
    let z = small.sel(z, 1.0).copysign(x);
    let z = ix.ult(0x3c80_0000u32).sel(x, z);
    x.is_nan().sel(x, z)
}
