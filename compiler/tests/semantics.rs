//! Scalar semantics on the device against the host's (`lang::value`):
//! wrapping integer arithmetic and shifts on every integer type, every cast
//! pair (saturating float→int, NaN→0), and the math builtins on f32 and f64.
//!
//! Tolerances for math: GLSL.std.450 is not IEEE-exact for transcendental
//! functions (Vulkan allows a few ULP, more for pow/atan2), so f32
//! transcendentals are compared with 1e-4 relative error (plus 1e-5
//! absolute); on f64 they are the writer's own functions (see
//! `compiler::spirv`), within 2 ulp of the host's; `sqrt` and `fma` with 1e-6
//! (f32) / 1e-12 (f64) relative; abs/min/max/clamp/floor/ceil/trunc/round
//! must be exact.

mod common;

use common::*;
use compiler::{ExactF32, Spec};
use lang::hir::BinOp;
use lang::{Scalar, Value};
use std::collections::HashMap;

const INT_OPS: [(&str, Option<BinOp>); 12] = [
    ("+", Some(BinOp::Add)),
    ("-", Some(BinOp::Sub)),
    ("*", Some(BinOp::Mul)),
    ("/", Some(BinOp::Div)),
    ("%", Some(BinOp::Rem)),
    ("&", Some(BinOp::BitAnd)),
    ("|", Some(BinOp::BitOr)),
    ("^", Some(BinOp::BitXor)),
    ("<<", Some(BinOp::Shl)),
    (">>", Some(BinOp::Shr)),
    ("!", None),
    ("<", Some(BinOp::Lt)),
];

fn int_inputs(t: Scalar, n: usize, seed: u64) -> Vec<Value> {
    let (lo, hi) = t.int_range().unwrap();
    let mut v: Vec<Value> = [
        lo,
        hi,
        0,
        1,
        -1,
        2,
        7,
        8,
        31,
        32,
        33,
        63,
        64,
        255,
        256,
        -2,
        lo + 1,
        hi - 1,
    ]
    .iter()
    .map(|&x| Value::IntLit(x).cast(t))
    .collect();
    let mut rng = Rng(seed);
    while v.len() < n {
        let r = rng.next_u64();
        // Mix small and full-width values.
        let x = if r & 3 == 0 {
            (r >> 8) as i128 % 70 - 5
        } else {
            r as i64 as i128
        };
        v.push(Value::IntLit(x).cast(t));
    }
    v
}

#[test]
fn integer_arithmetic_wraps_and_shifts_mask_like_the_host() {
    let n = 64;
    with_device(|dev| {
        for t in [Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U8] {
            let mut body = String::new();
            for (k, (op, _)) in INT_OPS.iter().enumerate() {
                let e = match *op {
                    "!" => "!a[i]".to_string(),
                    "<" => format!("(a[i] < b[i]) as {t}"),
                    op => format!("a[i] {op} b[i]"),
                };
                body.push_str(&format!("    out[{k}, i] = {e};\n"));
            }
            if t.is_signed_int() {
                body.push_str(&format!("    out[{}, i] = -a[i];\n", INT_OPS.len()));
            }
            let rows = INT_OPS.len() + 1;
            let src = Source::new(&format!(
                "const N = {n};\nlet a = zeros({t}, N);\nlet b = zeros({t}, N);\nlet out = zeros({t}, {rows}, N);\n\
                 parallel loop for i in 0..N {{\n{body}}}\n"
            ));
            let k = src.kernel(0);
            let a = int_inputs(t, n, 11);
            let mut b = int_inputs(t, n, 12);
            b.rotate_left(5); // pair different specials, including x / 0 and MIN / -1
            let mut arrays = HashMap::new();
            arrays.insert("a", Arr::whole(bytes_of(&a), &[n as u64]));
            arrays.insert("b", Arr::whole(bytes_of(&b), &[n as u64]));
            arrays.insert(
                "out",
                Arr::whole(vec![0; rows * n * t.size()], &[rows as u64, n as u64]),
            );
            let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
            let oi = k.arrays.iter().position(|(_, p)| p.name == "out").unwrap();
            let out = values_of(t, &ran.arrays[oi], rows * n);
            for (r, (op, bop)) in INT_OPS.iter().enumerate() {
                for i in 0..n {
                    let want = match (*op, bop) {
                        ("!", _) => Value::unary(lang::hir::UnOp::Not, a[i]).unwrap(),
                        // Division by zero: 0 on the device (documented).
                        (_, Some(op)) => match Value::binary(*op, a[i], b[i]) {
                            Ok(Value::Bool(x)) => Value::Bool(x).cast(t),
                            Ok(v) => v,
                            Err(_) => Value::zero(t),
                        },
                        _ => unreachable!(),
                    };
                    assert_eq!(out[r * n + i], want, "{t}: {:?} {op} {:?}", a[i], b[i]);
                }
            }
            if t.is_signed_int() {
                let r = INT_OPS.len();
                for i in 0..n {
                    let want = Value::unary(lang::hir::UnOp::Neg, a[i]).unwrap();
                    assert_eq!(out[r * n + i], want, "{t}: -{:?}", a[i]);
                }
            }
        }
    });
}

fn cast_inputs(t: Scalar) -> Vec<Value> {
    match t {
        Scalar::Bool => vec![Value::Bool(true), Value::Bool(false)],
        Scalar::F32 | Scalar::F64 => [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            -1.0,
            255.9,
            256.0,
            300.7,
            -300.7,
            2147483520.0,
            2147483647.0,
            2147483648.0,
            -2147483648.0,
            -2147483904.0,
            4294967040.0,
            4294967296.0,
            9.2e18,
            9.3e18,
            -9.3e18,
            1.8e19,
            1e30,
            -1e30,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            123456789.123,
            16777217.0,
            3.4e38,
        ]
        .iter()
        .map(|&x| {
            if t == Scalar::F32 {
                Value::F32(x as f32)
            } else {
                Value::F64(x)
            }
        })
        .collect(),
        t => {
            let (lo, hi) = t.int_range().unwrap();
            [
                lo,
                hi,
                0,
                1,
                -1,
                255,
                256,
                16777217,
                2147483647,
                9007199254740993,
                -300,
                123456789,
            ]
            .iter()
            .map(|&x| Value::IntLit(x).cast(t))
            .collect()
        }
    }
}

fn same(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

#[test]
fn every_cast_pair_matches_rust_as() {
    with_device(|dev| {
        for from in Scalar::ALL {
            for to in Scalar::ALL {
                let input = cast_inputs(from);
                let n = input.len();
                let text = format!(
                    "const N = {n};\nlet a = zeros({from}, N);\nlet out = zeros({to}, N);\n\
                     parallel loop for i in 0..N {{ out[i] = a[i] as {to}; }}\n"
                );
                // The casts the language refuses (as Rust: `bool as f32`) are not compiled.
                if let Err(d) = lang::check_source(&text, &stdlib::builtins()) {
                    assert!(d.iter().all(|d| d.code == "accl::type::bad_cast"), "{d:?}");
                    continue;
                }
                let src = Source::new(&text);
                let k = src.kernel(0);
                let mut arrays = HashMap::new();
                arrays.insert("a", Arr::whole(bytes_of(&input), &[n as u64]));
                arrays.insert("out", Arr::whole(vec![0; n * to.size()], &[n as u64]));
                let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
                let oi = k.arrays.iter().position(|(_, p)| p.name == "out").unwrap();
                let got = values_of(to, &ran.arrays[oi], n);
                for (x, g) in input.iter().zip(&got) {
                    let want = x.cast(to);
                    assert!(same(*g, want), "{x:?} as {to}: device {g:?}, host {want:?}");
                }
            }
        }
    });
}

type F1 = fn(f64) -> f64;

use compiler::testing::ulps;

/// Relative tolerance of the transcendental functions (see the module note).
fn tol(name: &str) -> f64 {
    match name {
        // lavapipe (llvmpipe) evaluates asin/acos with a coarse polynomial:
        // up to ~3e-4 relative error near |x| = 1, within Vulkan's
        // "inherited from atan2(x, sqrt(1 - x*x))" bound.
        "asin" | "acos" => 1e-3,
        _ => 1e-4,
    }
}

#[test]
fn math_builtins_f32_and_f64() {
    // (name, reference, exact?, tolerance class, input range)
    let unary: Vec<(&str, F1, u8)> = vec![
        ("abs", f64::abs, 0),
        ("floor", f64::floor, 0),
        ("ceil", f64::ceil, 0),
        ("trunc", f64::trunc, 0),
        ("round", f64::round, 0),
        ("sqrt", f64::sqrt, 1),
        ("exp", f64::exp, 2),
        ("exp2", f64::exp2, 2),
        ("log", f64::ln, 2),
        ("log2", f64::log2, 2),
        ("sin", f64::sin, 2),
        ("cos", f64::cos, 2),
        ("tan", f64::tan, 2),
        ("asin", f64::asin, 2),
        ("acos", f64::acos, 2),
        ("atan", f64::atan, 2),
        ("sinh", f64::sinh, 2),
        ("cosh", f64::cosh, 2),
        ("tanh", f64::tanh, 2),
    ];
    let n = 200;
    let mut rng = Rng(5);
    // x in (0.02, 0.98) (every unary function's domain); y anywhere, with halves.
    let xs: Vec<f64> = (0..n).map(|_| 0.02 + 0.96 * rng.unit()).collect();
    let mut ys: Vec<f64> = (0..n).map(|_| (rng.unit() - 0.5) * 40.0).collect();
    for (i, h) in [
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.49999997,
        0.0,
        -3.0,
    ]
    .iter()
    .enumerate()
    {
        ys[i] = *h;
    }
    with_device(|dev| {
        for t in [Scalar::F32, Scalar::F64] {
            let rows = unary.len() + 7;
            let mut body = String::new();
            for (k, (name, _, class)) in unary.iter().enumerate() {
                let arg = if *class == 0 { "y[i]" } else { "x[i]" };
                body.push_str(&format!("    out[{k}, i] = {name}({arg});\n"));
            }
            let u = unary.len();
            body.push_str(&format!("    out[{}, i] = min(x[i], y[i]);\n", u));
            body.push_str(&format!("    out[{}, i] = max(x[i], y[i]);\n", u + 1));
            body.push_str(&format!(
                "    out[{}, i] = clamp(y[i], -3.0, 2.5);\n",
                u + 2
            ));
            body.push_str(&format!(
                "    out[{}, i] = pow(x[i] * 4.0, y[i] * 0.1);\n",
                u + 3
            ));
            body.push_str(&format!(
                "    out[{}, i] = atan2(y[i], x[i] - 0.5);\n",
                u + 4
            ));
            body.push_str(&format!("    out[{}, i] = fma(x[i], y[i], 0.25);\n", u + 5));
            body.push_str(&format!("    out[{}, i] = y[i] % 3.0;\n", u + 6));
            let src = Source::new(&format!(
                "const N = {n};\nlet x = zeros({t}, N);\nlet y = zeros({t}, N);\nlet out = zeros({t}, {rows}, N);\n\
                 parallel loop for i in 0..N {{\n{body}}}\n"
            ));
            let k = src.kernel(0);
            let conv = |v: &[f64]| -> Vec<Value> {
                v.iter()
                    .map(|&x| {
                        if t == Scalar::F32 {
                            Value::F32(x as f32)
                        } else {
                            Value::F64(x)
                        }
                    })
                    .collect()
            };
            // The inputs as the device sees them (rounded to f32 for f32).
            let xt: Vec<f64> = conv(&xs).iter().map(|v| v.as_f64().unwrap()).collect();
            let yt: Vec<f64> = conv(&ys).iter().map(|v| v.as_f64().unwrap()).collect();
            let mut arrays = HashMap::new();
            arrays.insert("x", Arr::whole(bytes_of(&conv(&xs)), &[n as u64]));
            arrays.insert("y", Arr::whole(bytes_of(&conv(&ys)), &[n as u64]));
            arrays.insert(
                "out",
                Arr::whole(vec![0; rows * n * t.size()], &[rows as u64, n as u64]),
            );
            let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
            let oi = k.arrays.iter().position(|(_, p)| p.name == "out").unwrap();
            let got: Vec<f64> = values_of(t, &ran.arrays[oi], rows * n)
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let failures = std::cell::Cell::new(0);
            // Host values computed in the kernel's type.
            let r = |v: f64| if t == Scalar::F32 { v as f32 as f64 } else { v };
            let check = |row: usize, name: &str, class: u8, want: &dyn Fn(usize) -> f64| {
                let mut worst = 0.0f64;
                for i in 0..n {
                    let g = got[row * n + i];
                    let w = want(i);
                    let ok = match class {
                        0 => g.to_bits() == w.to_bits() || (g == 0.0 && w == 0.0),
                        1 => (g - w).abs() <= w.abs() * if t == Scalar::F32 { 1e-6 } else { 1e-12 },
                        _ if t == Scalar::F64 => ulps(g, w) <= 2,
                        _ => (g - w).abs() <= w.abs() * tol(name) + 1e-5,
                    };
                    worst = worst.max((g - w).abs() / w.abs().max(1e-3));
                    if !ok {
                        eprintln!(
                            "{t} {name} #{i} (x={}, y={}): device {g}, host {w}",
                            xt[i], yt[i]
                        );
                        failures.set(failures.get() + 1);
                    }
                }
                eprintln!("{t} {name}: worst relative error {worst:.3e}");
            };
            for (row, (name, f, class)) in unary.iter().enumerate() {
                let arg = if *class == 0 { &yt } else { &xt };
                check(row, name, *class, &|i| r(f(arg[i])));
            }
            check(u, "min", 0, &|i| r(xt[i].min(yt[i])));
            check(u + 1, "max", 0, &|i| r(xt[i].max(yt[i])));
            check(u + 2, "clamp", 0, &|i| r(yt[i].clamp(-3.0, 2.5)));
            check(u + 3, "pow", 2, &|i| {
                r((r(xt[i] * 4.0)).powf(r(yt[i] * 0.1)))
            });
            check(u + 4, "atan2", 2, &|i| r(yt[i].atan2(r(xt[i] - 0.5))));
            check(u + 5, "fma", 1, &|i| r(xt[i].mul_add(yt[i], 0.25)));
            check(u + 6, "%", 1, &|i| r(yt[i] % 3.0));
            assert_eq!(
                failures.get(),
                0,
                "math results out of tolerance (see above)"
            );
        }
    });
}

/// f32 `/` and `sqrt` by either exact route ([`Spec::exact_f32`]) give
/// the host's correctly rounded results bit for bit, `x / x` included, and
/// a division by a constant power of two is a multiplication. (lavapipe
/// divides f32 correctly either way, so the `fma` route's own unit tests
/// make the driver's approximations wrong on purpose; the module's text
/// shows which route the kernel took.)
#[test]
fn f32_division_and_sqrt_by_the_exact_routes_are_the_hosts() {
    let n = 512;
    let src = Source::new(&format!(
        "const N = {n};\nlet a = zeros(f32, N);\nlet b = zeros(f32, N);\nlet out = zeros(f32, 5, N);\n\
         parallel loop for i in 0..N {{\n\
             out[0, i] = a[i] / b[i];\n\
             out[1, i] = a[i] / a[i];\n\
             let q = b[i]; q /= a[i]; out[2, i] = q;\n\
             out[3, i] = a[i] / 4.0f32;\n\
             out[4, i] = sqrt(abs(b[i]));\n\
         }}\n"
    ));
    let k = src.kernel(0);
    let spec = |exact| Spec {
        exact_f32: exact,
        ..Spec::default()
    };
    let text = |exact| {
        let words = compiler::compile(&k, &spec(exact)).unwrap();
        spirv_val(&words);
        compiler::disassemble(&words)
    };
    let count = |t: &str, op: &str| t.matches(&format!("= {op} ")).count();
    // In f64: three divisions widen both operands and narrow the quotient,
    // the root its argument and result.
    let in_f64 = text(ExactF32::InF64);
    assert_eq!(count(&in_f64, "OpFDiv"), 3, "{in_f64}");
    assert_eq!(count(&in_f64, "OpFConvert"), 11, "{in_f64}");
    // With fma: three calls of the division, one of the root; no f64.
    let fma = text(ExactF32::Fma);
    assert_eq!(count(&fma, "OpFunctionCall"), 4, "{fma}");
    assert!(fma.contains("accl_div_f32") && fma.contains("accl_sqrt_f32"));
    assert_eq!(count(&fma, "OpFConvert"), 0, "{fma}");
    assert!(!fma.contains("OpTypeFloat 64"), "{fma}");
    let plain = text(ExactF32::Off);
    assert_eq!(count(&plain, "OpFConvert"), 0, "{plain}");
    // Random bits over the whole range, and the awkward ones.
    let mut rng = Rng(17);
    let special = [
        0.0f32,
        -0.0,
        1.0,
        3.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.0e-40,
        -7.0e-45,
        0.1,
        16_777_215.0,
    ];
    let mut a: Vec<f32> = (0..n)
        .map(|i| match i % 3 {
            0 => f32::from_bits(rng.next_u64() as u32),
            _ => (rng.unit() as f32 - 0.5) * 1000.0,
        })
        .collect();
    let mut b: Vec<f32> = (0..n)
        .map(|i| match i % 4 {
            0 => f32::from_bits(rng.next_u64() as u32),
            _ => (rng.unit() as f32) * 7.0 + 0.1,
        })
        .collect();
    for (i, &x) in special.iter().enumerate() {
        for (j, &y) in special.iter().enumerate() {
            let k = i * special.len() + j;
            a[k] = x;
            b[k] = y;
        }
    }
    // Quotients and roots within a hair of a midpoint: `a = b * m` and
    // `b = m * m` rounded, for `m` halfway between two f32 values.
    for k in special.len() * special.len()..n {
        if k % 2 == 0 {
            let m = |x: f32| (x as f64 + f32::from_bits(x.to_bits() + 1) as f64) / 2.0;
            a[k] = (b[k] as f64 * m(a[k].abs() + 1.0)) as f32;
            b[k] = (m(b[k]) * m(b[k])) as f32;
        }
    }
    let host: Vec<[f32; 5]> = (0..n)
        .map(|i| {
            let (x, y) = (a[i], b[i]);
            [x / y, x / x, y / x, x / 4.0, y.abs().sqrt()]
        })
        .collect();
    with_device(|dev| {
        // lavapipe's `Fma` rounds twice: the `fma` route with its fma in f64
        // (the rest of the code is the same), and with the reciprocals and
        // roots lavapipe gets right moved off by up to 3 ulp, as Vulkan
        // allows a driver.
        let routes = [
            (ExactF32::InF64, 0),
            (ExactF32::FmaByF64, 0),
            (ExactF32::FmaByF64, 3),
            (ExactF32::FmaByF64, -2),
        ];
        for (route, skew) in routes {
            let spec = Spec {
                exact_f32: route,
                exact_f32_skew: skew,
                ..spec_for(dev)
            };
            let route = format!("{route:?} skewed by {skew}");
            let vals = |v: &[f32]| v.iter().map(|&x| Value::F32(x)).collect::<Vec<_>>();
            let mut arrays = HashMap::new();
            arrays.insert("a", Arr::whole(bytes_of(&vals(&a)), &[n as u64]));
            arrays.insert("b", Arr::whole(bytes_of(&vals(&b)), &[n as u64]));
            arrays.insert("out", Arr::whole(vec![0; 5 * n * 4], &[5, n as u64]));
            let ran = run(dev, &src, &k, &spec, &[], &arrays);
            let oi = k.arrays.iter().position(|(_, p)| p.name == "out").unwrap();
            let got = f32s(&ran.arrays[oi], 5 * n);
            let mut wrong = 0;
            for i in 0..n {
                for (row, &want) in host[i].iter().enumerate() {
                    let g = got[row * n + i];
                    if g.to_bits() != want.to_bits() && !(g.is_nan() && want.is_nan()) {
                        eprintln!(
                            "{route}, row {row}: {:e} / {:e}: device {g:e}, host {want:e}",
                            a[i], b[i]
                        );
                        wrong += 1;
                    }
                }
            }
            assert_eq!(wrong, 0, "{route}: results unlike the host's (see above)");
        }
    });
}
