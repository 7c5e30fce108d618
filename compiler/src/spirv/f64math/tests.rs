//! The algorithms evaluated on the host, operation by operation as the
//! device runs them (one rounding each, no fma), against Rust's `f64`
//! functions: within 2 ulp, NaN where they are NaN, infinities and zeros
//! (signs included) exactly.

use super::*;

/// [`Ops`] evaluated in f64 on the host.
struct Host;

impl Ops for Host {
    type F = f64;
    type U = u32;
    type B = bool;
    fn kf(&self, v: f64) -> f64 {
        v
    }
    fn ku(&self, v: u32) -> u32 {
        v
    }
    fn fop(&self, op: FOp, a: f64, b: f64) -> f64 {
        match op {
            FOp::Add => a + b,
            FOp::Sub => a - b,
            FOp::Mul => a * b,
            FOp::Div => a / b,
        }
    }
    fn f1(&self, op: F1, a: f64) -> f64 {
        match op {
            F1::Neg => -a,
            F1::Abs => a.abs(),
            F1::Floor => a.floor(),
            F1::Trunc => a.trunc(),
            F1::Sqrt => a.sqrt(),
        }
    }
    fn fcmp(&self, op: FCmp, a: f64, b: f64) -> bool {
        match op {
            FCmp::Lt => a < b,
            FCmp::Le => a <= b,
            FCmp::Gt => a > b,
            FCmp::Ge => a >= b,
            FCmp::Eq => a == b,
        }
    }
    fn is_nan(&self, a: f64) -> bool {
        a.is_nan()
    }
    fn fsel(&self, c: bool, a: f64, b: f64) -> f64 {
        if c {
            a
        } else {
            b
        }
    }
    fn usel(&self, c: bool, a: u32, b: u32) -> u32 {
        if c {
            a
        } else {
            b
        }
    }
    fn words(&self, a: f64) -> (u32, u32) {
        let b = a.to_bits();
        ((b >> 32) as u32, b as u32)
    }
    fn join(&self, hi: u32, lo: u32) -> f64 {
        f64::from_bits((hi as u64) << 32 | lo as u64)
    }
    fn uop(&self, op: UOp, a: u32, b: u32) -> u32 {
        match op {
            UOp::Add => a.wrapping_add(b),
            UOp::Sub => a.wrapping_sub(b),
            UOp::And => a & b,
            UOp::Or => a | b,
            UOp::Xor => a ^ b,
            UOp::Shl => a << b,
            UOp::Shr => a >> b,
            UOp::Sar => ((a as i32) >> b) as u32,
        }
    }
    fn ucmp(&self, op: UCmp, a: u32, b: u32) -> bool {
        let (sa, sb) = (a as i32, b as i32);
        match op {
            UCmp::Eq => a == b,
            UCmp::Ne => a != b,
            UCmp::ULt => a < b,
            UCmp::ULe => a <= b,
            UCmp::UGt => a > b,
            UCmp::UGe => a >= b,
            UCmp::SLt => sa < sb,
            UCmp::SGt => sa > sb,
            UCmp::SGe => sa >= sb,
        }
    }
    fn umul(&self, a: u32, b: u32) -> (u32, u32) {
        let p = a as u64 * b as u64;
        (p as u32, (p >> 32) as u32)
    }
    fn band(&self, a: bool, b: bool) -> bool {
        a & b
    }
    fn bor(&self, a: bool, b: bool) -> bool {
        a | b
    }
    fn bnot(&self, a: bool) -> bool {
        !a
    }
    fn i2f(&self, a: u32) -> f64 {
        a as i32 as f64
    }
    fn u2f(&self, a: u32) -> f64 {
        a as f64
    }
    fn f2i(&self, a: f64) -> u32 {
        // Out of range is undefined on the device: the algorithms must not.
        assert!(
            (-2147483648.0..2147483648.0).contains(&a),
            "f2i of {a} (out of range)"
        );
        a as i32 as u32
    }
    fn call(&self, f: Fun, args: &[f64]) -> f64 {
        assert_eq!(args.len(), f.arity());
        let a: Vec<F<'_, Host>> = args.iter().map(|&v| F { o: self, v }).collect();
        body(f, &a).v
    }
    fn branch<const N: usize>(
        &self,
        c: bool,
        then: impl FnOnce() -> [f64; N],
        els: impl FnOnce() -> [f64; N],
    ) -> [f64; N] {
        if c {
            then()
        } else {
            els()
        }
    }
    fn table(&self, i: u32) -> u32 {
        trig::TWO_OVER_PI[i as usize]
    }
}

fn eval(f: Fun, args: &[f64]) -> f64 {
    Host.call(f, args)
}

pub(crate) use crate::testing::{ulps, Rng};

const EDGES: [f64; 24] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    1e-300,
    -1e-300,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    std::f64::consts::PI,
    std::f64::consts::FRAC_PI_2,
    -std::f64::consts::FRAC_PI_4,
    1e-10,
];

/// The worst ulp distance of `f` from `host` over `xs`, and where.
fn worst(f: Fun, host: fn(f64) -> f64, xs: &[f64], extra: &[f64]) -> (u64, f64) {
    let mut w = (0, 0.0);
    for &x in xs {
        let mut a = vec![x];
        a.extend_from_slice(extra);
        let (d, h) = (eval(f, &a), host(x));
        let u = ulps(d, h);
        assert!(
            u <= 2,
            "{f:?}({x:e} = {:#x}): {d:e} vs host {h:e} ({u} ulp)",
            x.to_bits()
        );
        if u > w.0 {
            w = (u, x);
        }
    }
    w
}

fn inputs(rng: &mut Rng, lo: i32, hi: i32, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = EDGES.to_vec();
    v.extend((0..n).map(|_| rng.logu(lo, hi, true)));
    v
}

/// Random arguments per family (`ACCL_F64MATH_N` overrides).
fn n() -> usize {
    std::env::var("ACCL_F64MATH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

#[test]
fn exp_family() {
    let mut r = Rng(0x9e3779b97f4a7c15);
    let mut xs = inputs(&mut r, -60, 9, n());
    xs.extend((0..n() / 4).map(|_| (r.unit() - 0.5) * 1500.0));
    xs.extend([
        709.78,
        709.782712893383973096,
        709.79,
        -745.13,
        -745.14,
        -708.4,
        -740.0,
    ]);
    println!("exp {:?}", worst(Fun::Exp, f64::exp, &xs, &[]));
    let mut ys = xs.clone();
    ys.extend((0..n() / 4).map(|_| (r.unit() - 0.5) * 2200.0));
    ys.extend([
        1023.99, 1024.0, -1074.0, -1074.5, -1075.0, -1022.5, 0.25, -1.5,
    ]);
    println!("exp2 {:?}", worst(Fun::Exp2, f64::exp2, &ys, &[]));
    let mut hs = xs.clone();
    hs.extend([
        710.4758600739439,
        710.475860073944,
        22.0,
        21.99,
        0.3465,
        -0.3466,
    ]);
    println!("sinh {:?}", worst(Fun::Sinh, f64::sinh, &hs, &[]));
    println!("cosh {:?}", worst(Fun::Cosh, f64::cosh, &hs, &[]));
    println!("tanh {:?}", worst(Fun::Tanh, f64::tanh, &hs, &[]));
}

#[test]
fn log_family() {
    let mut r = Rng(0x2545f4914f6cdd1d);
    let mut xs = inputs(&mut r, -1074, 1023, n());
    xs.extend((0..n() / 2).map(|_| 1.0 + (r.unit() - 0.5) * 2f64.powi(-((r.bits() % 50) as i32))));
    xs.extend((0..n() / 4).map(|_| r.unit() * 4.0));
    println!("log {:?}", worst(Fun::Log, f64::ln, &xs, &[]));
    println!("log2 {:?}", worst(Fun::Log2, f64::log2, &xs, &[]));
}

#[test]
fn trig_family() {
    let mut r = Rng(0x853c49e6748fea9b);
    let mut xs = inputs(&mut r, -60, 1023, n());
    xs.extend((0..n() / 2).map(|_| r.logu(-3, 25, true)));
    // Near multiples of π/2, the nearest doubles and their neighbours.
    for i in 0..n() / 4 {
        let n = (r.bits() % (1 << (i % 40))) as f64;
        let c = n * std::f64::consts::FRAC_PI_2;
        let d = (r.bits() % 5) as i64 - 2;
        xs.push(f64::from_bits((c.to_bits() as i64 + d) as u64));
    }
    // The hardest double of all for the reduction, and others close to a
    // multiple of π/2.
    xs.extend([
        1e22,
        8.98846567431158e307,
        1647099.3291652855,
        1647099.329165286,
        1647099.3291652853,
        2f64.powi(20) * 1.5,
    ]);
    for (mode, host) in [
        (0.0, f64::sin as fn(f64) -> f64),
        (1.0, f64::cos),
        (2.0, f64::tan),
    ] {
        println!("trig {mode} {:?}", worst(Fun::Trig, host, &xs, &[mode]));
    }
    // The double closest to a multiple of π/2 (relatively): the C library's
    // cos and tan are 8 and 16 ulp off there, these are the exact results
    // rounded.
    let x = 6381956970095103.0 * 2f64.powi(797);
    let cos = f64::from_bits(0xbc214ae72e6ba22f);
    let tan = f64::from_bits(0xc3bd9ba9a7975636);
    for (x, want) in [
        ([x, 0.0], 1.0),
        ([x, 1.0], cos),
        ([x, 2.0], tan),
        ([-x, 0.0], -1.0),
        ([-x, 1.0], cos),
        ([-x, 2.0], -tan),
    ] {
        assert_eq!(eval(Fun::Trig, &x), want, "{x:?}");
    }
}

#[test]
fn inverse_trig() {
    let mut r = Rng(0xda942042e4dd58b5);
    let mut xs = inputs(&mut r, -60, 0, n());
    xs.extend((0..n() / 2).map(|_| (r.unit() - 0.5) * 2.0));
    xs.extend((0..n() / 4).map(|_| 1.0 - r.logu(-53, -1, false)));
    xs.extend((0..n() / 4).map(|_| -1.0 + r.logu(-53, -1, false)));
    xs.extend([0.975, -0.975, 0.5, 0.4999999999999999, 1.0000000000000002]);
    println!("asin {:?}", worst(Fun::Asin, f64::asin, &xs, &[]));
    println!("acos {:?}", worst(Fun::Acos, f64::acos, &xs, &[]));
    let ts = inputs(&mut r, -60, 1023, n());
    println!("atan {:?}", worst(Fun::Atan, f64::atan, &ts, &[]));
    let ys = inputs(&mut r, -1074, 1023, n());
    let mut w = 0;
    for (i, &y) in ys.iter().enumerate() {
        let x = if i < EDGES.len() * EDGES.len() {
            EDGES[i % EDGES.len()]
        } else {
            r.logu(-1074, 1023, true)
        };
        let y = if i < EDGES.len() * EDGES.len() {
            EDGES[i / EDGES.len()]
        } else {
            y
        };
        let (d, h) = (eval(Fun::Atan2, &[y, x]), y.atan2(x));
        let u = ulps(d, h);
        assert!(u <= 2, "atan2({y:e}, {x:e}): {d:e} vs {h:e} ({u} ulp)");
        w = w.max(u);
    }
    println!("atan2 {w}");
}

#[test]
fn pow_cases() {
    let mut r = Rng(0x6a09e667f3bcc909);
    let specials = crate::testing::POW_SPECIALS;
    let mut w = 0;
    let mut check = |x: f64, y: f64| {
        let (d, h) = (eval(Fun::Pow, &[x, y]), x.powf(y));
        let u = ulps(d, h);
        assert!(u <= 2, "pow({x:e}, {y:e}): {d:e} vs {h:e} ({u} ulp)");
        w = w.max(u);
    };
    for &x in &specials {
        for &y in &specials {
            check(x, y);
        }
    }
    for _ in 0..n() {
        let x = r.logu(-1074, 1023, false);
        // y so that |y·log2 x| stays below about 1100.
        let l = x.log2().abs().max(1e-300);
        let y = (r.unit() - 0.5) * 2.0 * (1100.0 / l).min(1e10);
        check(x, y);
        let x = r.logu(-30, 30, true);
        let y = ((r.unit() - 0.5) * 200.0).round();
        check(x, y);
        let x = 1.0 + (r.unit() - 0.5) * 2f64.powi(-((r.bits() % 52) as i32));
        let y = r.logu(0, 62, true);
        check(x, y);
    }
    println!("pow {w}");
}

/// Modules calling every function pass `spirv-val` for Vulkan 1.2 and 1.1
/// targets, in bounds-check mode, with 64-bit indices, and without `Int64`
/// (the functions need only `Float64`).
#[test]
fn modules_pass_spirv_val_without_int64() {
    let src = "let n = 64; let x = zeros(f64, n); let y = zeros(f64, n); let r = zeros(f64, n);
        parallel loop for i in 0..n {
            r[i] = exp(x[i]) + exp2(x[i]) + log(x[i]) + log2(x[i]) + sin(x[i]) + cos(x[i])
                + tan(x[i]) + asin(x[i]) + acos(x[i]) + atan(x[i]) + sinh(x[i]) + cosh(x[i])
                + tanh(x[i]) + pow(x[i], y[i]) + atan2(y[i], x[i]);
        }";
    let b = stdlib::builtins();
    let program = lang::check_source(src, &b).unwrap().program;
    let c = program
        .main
        .block
        .iter()
        .find_map(|s| match &s.kind {
            lang::hir::StmtKind::Construct(c) => Some(c),
            _ => None,
        })
        .unwrap();
    let k = crate::lower(&program, &program.main, c, &b).unwrap();
    let d = crate::Spec::default();
    let no_int64 = crate::Features {
        int64: false,
        int64_atomics: false,
        ..d.features
    };
    for spec in [
        d,
        crate::Spec {
            spirv_version: (1, 3),
            ..d
        },
        crate::Spec { checks: true, ..d },
        crate::Spec {
            index_width: crate::IndexWidth::U64,
            ..d
        },
        crate::Spec {
            features: no_int64,
            ..d
        },
    ] {
        let words = crate::compile(&k, &spec).unwrap();
        if let Err(e) = vk_runtime::testing::spirv_val(&words) {
            panic!("{spec:?}: spirv-val failed:\n{e}");
        }
        let text = crate::disassemble(&words);
        if !spec.features.int64 {
            assert!(!text.contains("Int64"), "{text}");
        }
        // One function for sin, cos and tan together.
        assert_eq!(text.matches("\"accl_sincostan_f64\"").count(), 1);
    }
}
