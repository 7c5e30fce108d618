//! f64 transcendentals on the device (lavapipe in CI) against the host
//! reference (Rust's `f64` functions): every one of `exp exp2 log log2 sin
//! cos tan asin acos atan sinh cosh tanh pow atan2` over thousands of
//! arguments spread log-uniformly and their edge cases (zeros of both signs,
//! subnormals, huge values, infinities, NaN, near multiples of π/2, near 1,
//! domain errors, negative bases), each result within 2 ulp of the host's,
//! NaN where the host has NaN, infinities and zeros (signs included)
//! exactly. The validation layer and `spirv-val` are on (`common`).

use crate::common;

/// Worst ulp distances seen, printed by each test (`--nocapture`).
fn report(name: &str, w: (u64, usize)) {
    println!("{name}: worst {} ulp (argument #{})", w.0, w.1);
}

use compiler::testing::{ulps, Rng};

const EDGES: [f64; 26] = [
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
    -2.2250738585072014e-308,
    1e-10,
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
    1e22,
];

/// `EDGES`, `extra`, then `n` log-uniform arguments with binary exponents
/// in `lo..=hi`, both signs.
fn args(seed: u64, lo: i32, hi: i32, n: usize, extra: &[f64]) -> Vec<f64> {
    let mut r = Rng(seed);
    let mut v = EDGES.to_vec();
    v.extend_from_slice(extra);
    v.extend((0..n).map(|_| r.logu(lo, hi, true)));
    v
}

/// Run `body` (a statement over `x[i]`, and `y[i]` when `y` is given,
/// storing to `r1[i]`, `r2[i]`, ...) as a `parallel loop` on the host and on
/// the device; the `outs` result arrays, host's then device's.
fn both(body: &str, outs: usize, x: &[f64], y: Option<&[f64]>) -> Vec<(Vec<f64>, Vec<f64>)> {
    let n = x.len();
    let mut src = format!("let n = {n};\n");
    for k in 1..=outs {
        src += &format!("let r{k} = zeros(f64, n);\n");
    }
    src += &format!("parallel loop for i in 0..n {{ {body} }}\n");
    let mut res: Vec<Vec<Vec<f64>>> = Vec::new();
    for device in [false, true] {
        let run = common::run_with(&src, device, |e| {
            e.set_array_from_slice("x", x, &[n]).unwrap();
            if let Some(y) = y {
                e.set_array_from_slice("y", y, &[n]).unwrap();
            }
        });
        if let Err(d) = &run.result {
            panic!("{}", d.render(100));
        }
        let e = &run.engine;
        if device {
            // The kernel ran as a device kernel, with our f64 functions.
            let spirv = e.last_spirv().expect("a kernel was compiled");
            assert!(spirv.contains("accl_"), "no f64 function in:\n{spirv}");
        }
        res.push(
            (1..=outs)
                .map(|k| e.get_array::<f64>(&format!("r{k}")).unwrap().0)
                .collect(),
        );
    }
    let dev = res.pop().unwrap();
    let host = res.pop().unwrap();
    host.into_iter().zip(dev).collect()
}

/// Every element within 2 ulp; the worst distance and where.
fn check(name: &str, x: &[f64], y: Option<&[f64]>, host: &[f64], dev: &[f64]) -> (u64, usize) {
    let mut w = (0, 0);
    for i in 0..x.len() {
        let u = ulps(host[i], dev[i]);
        let at = match y {
            Some(y) => format!("({:e}, {:e})", x[i], y[i]),
            None => format!("({:e} = {:#x})", x[i], x[i].to_bits()),
        };
        assert!(
            u <= 2,
            "{name}{at}: device {:e}, host {:e} ({u} ulp)",
            dev[i],
            host[i]
        );
        if u > w.0 {
            w = (u, i);
        }
    }
    report(name, w);
    w
}

/// The known answer: Rust's own `f64` function of each name, called here,
/// not through accl (a wrong builtin both backends share shows).
fn rust_f64(name: &str) -> fn(f64) -> f64 {
    match name {
        "exp" => f64::exp,
        "exp2" => f64::exp2,
        "log" => f64::ln,
        "log2" => f64::log2,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "sinh" => f64::sinh,
        "cosh" => f64::cosh,
        "tanh" => f64::tanh,
        _ => panic!("no known answer for {name}"),
    }
}

/// The host's results are Rust's bit for bit (NaN where Rust has NaN).
fn host_is_known(name: &str, x: &[f64], host: &[f64], known: &[f64]) {
    for i in 0..x.len() {
        assert!(
            ulps(known[i], host[i]) == 0,
            "{name}({:e}): host {:e}, Rust {:e}",
            x[i],
            host[i],
            known[i]
        );
    }
}

fn unary(names: &[&str], x: &[f64]) {
    let body: String = names
        .iter()
        .enumerate()
        .map(|(k, f)| format!("r{}[i] = {f}(x[i]); ", k + 1))
        .collect();
    for (name, (h, d)) in names.iter().zip(both(&body, names.len(), x, None)) {
        check(name, x, None, &h, &d);
        let known: Vec<f64> = x.iter().map(|&v| rust_f64(name)(v)).collect();
        host_is_known(name, x, &h, &known);
    }
}

const N: usize = 4000;

#[test]
fn exp_and_exp2() {
    let mut r = Rng(11);
    let mut x = args(
        1,
        -60,
        10,
        N,
        &[
            709.78,
            709.782712893384,
            709.79,
            710.0,
            -708.4,
            -740.0,
            -745.13,
            -745.14,
            -746.0,
            1023.99,
            1024.0,
            -1022.0,
            -1074.0,
            -1074.5,
            -1075.0,
            -1076.0,
            0.25,
            -1.5,
            3.4657359027997264e-1,
            1.0397207708399179,
        ],
    );
    x.extend((0..N / 2).map(|_| (r.unit() - 0.5) * 1500.0));
    x.extend((0..N / 2).map(|_| (r.unit() - 0.5) * 2200.0));
    x.extend((-1080..1030).step_by(7).map(f64::from));
    unary(&["exp", "exp2"], &x);
}

#[test]
fn log_and_log2() {
    let mut r = Rng(12);
    let mut x = args(
        2,
        -1074,
        1023,
        N,
        &[4.0, 8.0, 0.25, 1024.0, 1e-320, 3.0, 10.0],
    );
    // Near 1, on both sides.
    x.extend((0..N / 2).map(|_| 1.0 + (r.unit() - 0.5) * 2f64.powi(-((r.bits() % 53) as i32))));
    x.extend((0..N / 4).map(|_| r.unit() * 4.0));
    unary(&["log", "log2"], &x);
}

#[test]
fn sin_cos_tan() {
    let mut r = Rng(13);
    let mut x = args(
        3,
        -60,
        1023,
        N,
        &[
            1647099.3291652855,
            1647099.329165286,
            1647099.3291652853,
            -1647099.3291652855,
            1572864.0,
            1e15,
            8.98846567431158e307,
            3.0 * std::f64::consts::FRAC_PI_2,
            7.0 * std::f64::consts::FRAC_PI_4,
        ],
    );
    // Medium arguments, and the doubles nearest multiples of π/2 and their
    // neighbours (n up to 2^40).
    x.extend((0..N / 2).map(|_| r.logu(-3, 25, true)));
    for i in 0..N / 2 {
        let n = (r.bits() % (1u64 << (i % 41))) as f64;
        let c = n * std::f64::consts::FRAC_PI_2;
        let d = (r.bits() % 5) as i64 - 2;
        x.push(f64::from_bits((c.to_bits() as i64 + d) as u64));
    }
    unary(&["sin", "cos", "tan"], &x);
}

/// The double nearest a multiple of π/2 relative to its size: the C
/// library's cos and tan are 8 and 16 ulp off there (so no host
/// comparison); the device gives the exact results rounded.
#[test]
fn sin_cos_tan_of_the_hardest_argument() {
    let x = 6381956970095103.0 * 2f64.powi(797);
    let dev: Vec<Vec<f64>> = both(
        "r1[i] = sin(x[i]); r2[i] = cos(x[i]); r3[i] = tan(x[i]);",
        3,
        &[x, -x],
        None,
    )
    .into_iter()
    .map(|(_, d)| d)
    .collect();
    let cos = f64::from_bits(0xbc214ae72e6ba22f); // -4.687165924254628e-19
    let tan = f64::from_bits(0xc3bd9ba9a7975636); // -2.133485385753704e18
    assert_eq!(dev[0], [1.0, -1.0]);
    assert_eq!(dev[1], [cos, cos]);
    assert_eq!(dev[2], [tan, -tan]);
}

#[test]
fn asin_acos_atan() {
    let mut r = Rng(14);
    let mut x = args(
        4,
        -60,
        0,
        N,
        &[
            0.975,
            -0.975,
            0.4999999999999999,
            1.0000000000000002,
            -1.0000000000000002,
            1.5,
            -2.0,
            0.9999999999999999,
            -0.9999999999999999,
        ],
    );
    x.extend((0..N / 2).map(|_| (r.unit() - 0.5) * 2.0));
    x.extend((0..N / 4).map(|_| 1.0 - r.logu(-53, -1, false)));
    x.extend((0..N / 4).map(|_| -1.0 + r.logu(-53, -1, false)));
    x.extend((0..N / 2).map(|_| r.logu(1, 1023, true)));
    unary(&["asin", "acos", "atan"], &x);
}

#[test]
fn sinh_cosh_tanh() {
    let mut r = Rng(15);
    let mut x = args(
        5,
        -60,
        10,
        N,
        &[
            22.0,
            21.999999999999996,
            709.78,
            710.0,
            710.4758600739439,
            710.475860073944,
            711.0,
            -710.4758600739439,
            0.3465,
            1.0,
            0.9999999999999999,
            2f64.powi(-28),
            2f64.powi(-55),
        ],
    );
    x.extend((0..N / 2).map(|_| (r.unit() - 0.5) * 1440.0));
    x.extend((0..N / 2).map(|_| (r.unit() - 0.5) * 4.0));
    unary(&["sinh", "cosh", "tanh"], &x);
}

#[test]
fn pow_over_bases_and_exponents() {
    let mut special = compiler::testing::POW_SPECIALS.to_vec();
    special.extend([1e20, -1e20]);
    let (mut x, mut y) = (vec![], vec![]);
    for &a in &special {
        for &b in &special {
            x.push(a);
            y.push(b);
        }
    }
    let mut r = Rng(16);
    for _ in 0..N {
        // Any positive base, y so that |y·log2 x| stays below about 1100.
        let a = r.logu(-1074, 1023, false);
        let l = a.log2().abs().max(1e-300);
        x.push(a);
        y.push((r.unit() - 0.5) * 2.0 * (1100.0 / l).min(1e10));
        // Negative bases with integer exponents (and a few not).
        let a = r.logu(-30, 30, true);
        x.push(a);
        y.push(if r.bits() & 7 == 0 {
            r.unit() * 10.0
        } else {
            ((r.unit() - 0.5) * 200.0).round()
        });
        // Near 1 with huge exponents.
        x.push(1.0 + (r.unit() - 0.5) * 2f64.powi(-((r.bits() % 52) as i32)));
        y.push(r.logu(0, 62, true));
    }
    let res = both("r1[i] = pow(x[i], y[i]);", 1, &x, Some(&y));
    check("pow", &x, Some(&y), &res[0].0, &res[0].1);
    let known: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| a.powf(b)).collect();
    host_is_known("pow", &x, &res[0].0, &known);
}

#[test]
fn atan2_over_the_plane() {
    let (mut y, mut x) = (vec![], vec![]);
    for &a in &EDGES {
        for &b in &EDGES {
            y.push(a);
            x.push(b);
        }
    }
    let mut r = Rng(17);
    for _ in 0..N {
        y.push(r.logu(-1074, 1023, true));
        x.push(r.logu(-1074, 1023, true));
        y.push(r.logu(-20, 20, true));
        x.push(r.logu(-20, 20, true));
    }
    let res = both("r1[i] = atan2(y[i], x[i]);", 1, &x, Some(&y));
    check("atan2", &y, Some(&x), &res[0].0, &res[0].1);
    let known: Vec<f64> = y.iter().zip(&x).map(|(&a, &b)| a.atan2(b)).collect();
    host_is_known("atan2", &y, &res[0].0, &known);
}

/// All fifteen in one kernel, through a device function, with a reduction
/// over them (the functions are emitted once per module and called from
/// wherever they are used).
#[test]
fn every_function_in_one_kernel_through_a_device_function() {
    let (h, d) = common::same_as_host(
        "fn all(x: f64) -> f64 {
             return exp(x) + exp2(x) + log(x) + log2(x) + sin(x) + cos(x) + tan(x)
                 + asin(x / 8.0) + acos(x / 8.0) + atan(x) + sinh(x) + cosh(x) + tanh(x)
                 + pow(x, 1.5) + atan2(x, 0.5);
         }
         let n = 1000;
         let r = zeros(f64, n);
         let s = 0.0;
         parallel loop reduction(+: s) for i in 0..n {
             let x = 0.001 + (i as f64) * 0.007;
             r[i] = all(x) + sin(x * 1.0e6) * cos(x * 3.0e9);
             s += r[i];
         }",
        // Each term within 2 ulp; the sum in another order.
        common::Floats::Within(1e-13),
    );
    assert!(h.result.is_ok() && d.result.is_ok());
    // The known answer: the same formula with Rust's functions.
    let all = |x: f64| {
        x.exp()
            + x.exp2()
            + x.ln()
            + x.log2()
            + x.sin()
            + x.cos()
            + x.tan()
            + (x / 8.0).asin()
            + (x / 8.0).acos()
            + x.atan()
            + x.sinh()
            + x.cosh()
            + x.tanh()
            + x.powf(1.5)
            + x.atan2(0.5)
    };
    let want: Vec<f64> = (0..1000)
        .map(|i| {
            let x = 0.001 + (i as f64) * 0.007;
            all(x) + (x * 1.0e6).sin() * (x * 3.0e9).cos()
        })
        .collect();
    let total: f64 = want.iter().sum();
    for r in [&h, &d] {
        let got = r.engine.get_array::<f64>("r").unwrap().0;
        for i in [0, 1, 500, 998, 999] {
            let tol = 1e-13 * want[i].abs().max(1.0);
            assert!(
                (got[i] - want[i]).abs() <= tol,
                "r[{i}]: {} vs {}",
                got[i],
                want[i]
            );
        }
        let s = r.engine.get::<f64>("s").unwrap();
        assert!(
            (s - total).abs() <= 1e-12 * total.abs(),
            "s: {s} vs {total}"
        );
    }
    let spirv = d.engine.last_spirv().unwrap();
    // Each function once (its `OpName`), sin/cos/tan sharing one.
    for f in [
        "exp",
        "exp2",
        "log",
        "log2",
        "sincostan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "pow",
        "exp_half",
    ] {
        let name = format!("\"accl_{f}_f64\"");
        assert_eq!(spirv.matches(&name).count(), 1, "{name} in\n{spirv}");
    }
}
