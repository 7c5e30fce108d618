//! Float `%` on the device (lavapipe in CI) is the host's exact remainder
//! (Rust's `%`, C's `fmod`), bit for bit, in `f32` and `f64`: huge ratios
//! (`1e300 % 3e-300`, `-3e39 % 7.0`), dividends just below, at and above
//! integer multiples, signed zeros, infinities and NaN, and `%` in compound
//! assignments, device functions and inner loops. The operands come from
//! arrays (literal operands are folded on the host). The validation layer
//! and `spirv-val` are on (`common`).

use crate::common;
use common::{same_as_host, Floats};
use compiler::testing::Rng;

/// Edge operands of both signs: zeros, subnormals, the ends of the normal
/// range, infinities, NaN, and values with near-integer or huge ratios.
const EDGES: [f64; 28] = [
    0.0,
    1.0,
    0.5,
    1.5,
    2.0,
    7.0,
    0.01,
    0.1,
    5.5,
    1e-300,
    3e-300,
    3e-39,
    1e-30,
    3e38,
    1e300,
    3e39,
    1e22,
    9007199254740993.0,
    16777217.0,
    std::f64::consts::PI,
    2.2250738585072014e-308,
    1e-310,
    3e-320,
    5e-324,
    1e-45,
    f64::MAX,
    f64::INFINITY,
    f64::NAN,
];

/// Pairs of operands: every pair of edges (both signs), random pairs over
/// the whole range and near integer multiples, the near-worst case for the
/// device's loop.
fn operands(seed: u64, f32_range: bool) -> (Vec<f64>, Vec<f64>) {
    let mut e: Vec<f64> = EDGES.to_vec();
    e.extend(EDGES.map(|v| -v));
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &e {
        for &b in &e {
            x.push(a);
            y.push(b);
        }
    }
    let mut r = Rng(seed);
    let top = if f32_range { 126 } else { 1022 };
    for i in 0..4000u64 {
        let b = r.logu(-60, 60, true);
        let n = (r.bits() % (1 << (i % 50 + 1))) as f64;
        let a = n * b;
        x.extend([r.logu(-top, top, true), a.next_down(), a, a.next_up()]);
        y.extend([r.logu(-top, top, true), b, b, b]);
    }
    (x, y)
}

/// `r[i] = x[i] % y[i]` as a `parallel loop` on the host and on the device
/// (`T` is `f32` or `f64`), and Rust's own `%` here: all three the same
/// bits, or NaN alike.
fn check<T>(ty: &str, x: &[T], y: &[T])
where
    T: accl::stdlib::Elem + Copy + std::ops::Rem<Output = T> + std::fmt::Debug + Into<f64>,
{
    let n = x.len();
    let src = format!(
        "let n = {n}; let r = zeros({ty}, n);\n\
         parallel loop for i in 0..n {{ r[i] = x[i] % y[i]; }}"
    );
    let mut results = Vec::new();
    for device in [false, true] {
        let run = common::run_with(&src, device, |e| {
            e.set_array_from_slice("x", x, &[n]).unwrap();
            e.set_array_from_slice("y", y, &[n]).unwrap();
        });
        if let Err(d) = &run.result {
            panic!("{}", d.render(100));
        }
        let e = &run.engine;
        if device {
            let spirv = e.last_spirv().expect("a kernel was compiled");
            assert!(
                spirv.contains("accl_rem_"),
                "no remainder function:\n{spirv}"
            );
        }
        results.push(e.get_array::<T>("r").unwrap().0);
    }
    let same = |a: T, b: T| {
        let (a, b): (f64, f64) = (a.into(), b.into());
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    };
    for i in 0..n {
        let want = x[i] % y[i];
        let (h, d) = (results[0][i], results[1][i]);
        assert!(
            same(h, want),
            "host {:?} % {:?}: {h:?}, Rust {want:?}",
            x[i],
            y[i]
        );
        assert!(
            same(d, want),
            "device {:?} % {:?}: {d:?}, host {want:?}",
            x[i],
            y[i]
        );
    }
}

#[test]
fn f64_remainders_are_the_hosts_bit_for_bit() {
    let (mut x, mut y) = operands(0xf64, false);
    // 1e300 % 3e-300, and operands near the loop's most trips.
    x.extend([1e300, f64::MAX, -f64::MAX]);
    y.extend([3e-300, f64::from_bits(0x0015_5555_5555_5555), 7.0]);
    check("f64", &x, &y);
}

#[test]
fn f32_remainders_are_the_hosts_bit_for_bit() {
    let (x, y) = operands(0xf32, true);
    let mut x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut y: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    x.extend([f32::MAX, -3e38, 1.0]);
    y.extend([f32::from_bits(0x00e0_0000), 7.0, 1e-45]);
    check("f32", &x, &y);
}

#[test]
fn known_remainders_in_every_form() {
    // `%`, `%=`, in a device function and in an inner loop (whose `%`s
    // count towards llvmpipe's loop cap: the plan guards the kernel).
    let (h, _) = same_as_host(
        "let x = [1.0, 0.0, -3e39, 5.5, -4.0, 1e300]; let y = [0.01, 3.0, 7.0, 2.0, 2.0, 3e-300];
         let o = zeros(f64, 6); let c = zeros(f64, 6); let g = zeros(f64, 6); let s = zeros(f64, 6);
         let a = [1.0f32, 5.5f32, -3e38f32, 7.0f32]; let b = [0.01f32, -2.0f32, 7.0f32, 7.0f32];
         let p = zeros(f32, 4);
         fn wrap(v: f64, m: f64) -> f64 { return v % m; }
         parallel loop for i in 0..6 {
             o[i] = x[i] % y[i];
             c[i] = x[i]; c[i] %= y[i];
             g[i] = wrap(x[i], y[i]);
             let t = x[i];
             for k in 0..6 { t = t % y[k] + x[k]; }
             s[i] = t;
         }
         parallel loop for i in 0..4 { p[i] = a[i] % b[i]; }",
        Floats::Exact,
    );
    h.result.unwrap();
    let o = h.engine.get_array::<f64>("o").unwrap().0;
    let want: [f64; 6] = [0.00999999999999998, 0.0, -5.0, 1.5, -0.0, 1e300 % 3e-300];
    assert_eq!(
        o.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    for v in ["c", "g"] {
        assert_eq!(h.engine.get_array::<f64>(v).unwrap().0, o, "{v}");
    }
    let p = h.engine.get_array::<f32>("p").unwrap().0;
    assert_eq!(p, [1.0f32 % 0.01, 1.5, -3e38f32 % 7.0, 0.0]);
}
