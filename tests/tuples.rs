//! Functions returning tuples and destructuring (`let (a, _) = f(..);`,
//! `(x[i], y) = f(..);`, `return (a, b);`) on both backends: known
//! answers computed here in Rust, and the device against the host
//! reference, in `parallel loop`, `serial`, `kernels` and `routine`
//! functions.

use crate::common;
use common::{run, same_as_host, Floats};

fn vec_of<T: stdlib::Elem>(r: &common::Run, name: &str) -> Vec<T> {
    r.engine
        .array(name)
        .unwrap_or_else(|| panic!("no array `{name}`"))
        .to_vec::<T>()
        .unwrap_or_else(|| panic!("`{name}` of another type"))
}

fn value(r: &common::Run, name: &str) -> String {
    r.engine
        .get_value(name)
        .unwrap_or_else(|| panic!("no scalar `{name}`"))
        .to_string()
}

/// Products of quarters are exact in `f32`: contracted or not, every
/// backend gets the same bits.
const COMPLEX: &str = "fn cmul(ar: f32, ai: f32, br: f32, bi: f32) -> (f32, f32) {
    return (ar * br - ai * bi, ar * bi + ai * br);
}
let n = 64;
let re = zeros(f32, n);
let im = zeros(f32, n);
let zr = zeros(f32, n);
let zi = zeros(f32, n);
for i in 0..n {
    re[i] = (i as f32) * 0.25 - 3.0;
    im[i] = 1.5 - ((i % 7) as f32) * 0.5;
}
parallel loop copyin(re, im) copyout(zr, zi)
for i in 0..n {
    (zr[i], zi[i]) = cmul(re[i], im[i], re[i], im[i]);
}";

#[test]
fn a_complex_product_destructured_into_array_elements() {
    let (host, dev) = same_as_host(COMPLEX, Floats::Exact);
    for r in [&host, &dev] {
        let (zr, zi) = (vec_of::<f32>(r, "zr"), vec_of::<f32>(r, "zi"));
        for i in 0..64 {
            let a = i as f32 * 0.25 - 3.0;
            let b = 1.5 - (i % 7) as f32 * 0.5;
            assert_eq!((zr[i], zi[i]), (a * a - b * b, 2.0 * a * b), "z[{i}]");
        }
    }
}

const INTEGERS: &str = "fn divmod(a: i64, b: i64) -> (i64, i64, bool) {
    if b == 0 {
        return (0, 0, false);
    }
    return (a / b, a % b, true);
}
fn fwd(a: i64) -> (i64, i64, bool) {
    return divmod(a, a % 5);
}
fn bytes(x: u32) -> (u8, u8) {
    return ((x & 255) as u8, ((x >> 8) & 255) as u8);
}
let n = 100;
let q = zeros(i64, n);
let r = zeros(i64, n);
let ok = zeros(bool, n);
let lo = zeros(u8, n);
let hi = zeros(u8, n);
parallel loop copyout(q, r, ok, lo, hi)
for i in 0..n {
    let (a, b, c) = fwd(i as i64 * 37 - 1000);
    q[i] = a;
    r[i] = b;
    ok[i] = c;
    let (l, _) = bytes(i as u32 * 1000);
    let (_, h: u8) = bytes(i as u32 * 1000);
    lo[i] = l;
    hi[i] = h;
}";

#[test]
fn early_returns_forwarding_and_every_integer_type() {
    let (host, dev) = same_as_host(INTEGERS, Floats::Exact);
    for run in [&host, &dev] {
        let (q, r) = (vec_of::<i64>(run, "q"), vec_of::<i64>(run, "r"));
        let ok = vec_of::<bool>(run, "ok");
        let (lo, hi) = (vec_of::<u8>(run, "lo"), vec_of::<u8>(run, "hi"));
        for i in 0..100 {
            let a = i as i64 * 37 - 1000;
            let b = a % 5;
            let want = if b == 0 {
                (0, 0, false)
            } else {
                (a / b, a % b, true)
            };
            assert_eq!((q[i], r[i], ok[i]), want, "divmod at {i}");
            let x = i as u32 * 1000;
            assert_eq!((lo[i], hi[i]), (x as u8, (x >> 8) as u8), "bytes at {i}");
        }
    }
}

/// Eight elements of every scalar type through one call.
const WIDE: &str = "fn all(i: i32) -> (bool, i32, i64, u32, u8, f32, f64, i32) {
    return (i % 2 == 0, -i, i as i64 * 3000000000, i as u32 * 7, (i * 3) as u8, i as f32 * 0.5, i as f64 / 4.0, i * i);
}
let n = 50;
let b = zeros(bool, n);
let s = zeros(i64, n);
let f = zeros(f64, n);
parallel loop copyout(b, s, f)
for i in 0..n {
    let (even, neg, big, seven, three, half, quarter, sq) = all(i);
    b[i] = even;
    s[i] = neg as i64 + big + seven as i64 + three as i64 + sq as i64;
    f[i] = half as f64 + quarter;
}";

#[test]
fn eight_elements_of_every_scalar_type() {
    let (host, dev) = same_as_host(WIDE, Floats::Exact);
    for r in [&host, &dev] {
        let (b, s, f) = (
            vec_of::<bool>(r, "b"),
            vec_of::<i64>(r, "s"),
            vec_of::<f64>(r, "f"),
        );
        for i in 0..50i64 {
            let k = i as usize;
            assert_eq!(b[k], i % 2 == 0);
            let three = (i * 3) as u8 as i64;
            assert_eq!(
                s[k],
                -i + i * 3_000_000_000 + i * 7 + three + i * i,
                "s[{i}]"
            );
            assert_eq!(f[k], i as f32 as f64 * 0.5 + i as f64 / 4.0, "f[{i}]");
        }
    }
}

/// Tuple functions called from `routine` functions (a `seq` one called
/// per iteration, a `vector` one whose `loop vector` calls them), from
/// `serial` and from `kernels`, with destructuring assignment to
/// variables declared outside the loop.
const ROUTINES: &str = "fn minmax(a: f64, b: f64) -> (f64, f64) {
    if a < b {
        return (a, b);
    }
    return (b, a);
}
routine seq fn spread(a: f64[], i: i32) -> (f64, f64, i32) {
    let (lo, hi) = minmax(a[i], a[i + 1]);
    return (lo, hi, i);
}
routine vector fn widths(a: f64[], out: f64[], n: i32) {
    loop vector
    for i in 0..n - 1 {
        let (lo, hi, _) = spread(a, i);
        out[i] = hi - lo;
    }
}
let n = 40;
let a = zeros(f64, n);
for i in 0..n {
    a[i] = ((i * 7) % 11) as f64 - 0.5 * (i % 3) as f64;
}
let w = zeros(f64, n);
let e = zeros(f64, n);
let best = zeros(f64, 2);
parallel copyin(a) copyout(w) num_gangs(1) {
    widths(a, w, n);
}
serial copyin(a) copyout(best) {
    let top = -1.0;
    let at = -1;
    for i in 0..n - 1 {
        let (lo, hi, k) = spread(a, i);
        if hi - lo > top {
            (top, at) = (hi - lo, k);
        }
    }
    best[0] = top;
    best[1] = at as f64;
}
kernels copyin(a) copyout(e) {
    for i in 0..n - 1 {
        let s = 0.0;
        let t = 0.0;
        (s, t) = minmax(a[i], a[i + 1]);
        (s, t) = (t, s);
        e[i] = s * 100.0 + t;
    }
}";

#[test]
fn called_from_routines_serial_and_kernels() {
    let (host, dev) = same_as_host(ROUTINES, Floats::Exact);
    let a: Vec<f64> = (0..40)
        .map(|i| ((i * 7) % 11) as f64 - 0.5 * (i % 3) as f64)
        .collect();
    for r in [&host, &dev] {
        let (w, e, best) = (
            vec_of::<f64>(r, "w"),
            vec_of::<f64>(r, "e"),
            vec_of::<f64>(r, "best"),
        );
        let mut top = (-1.0, -1.0);
        for i in 0..39 {
            let (lo, hi) = (a[i].min(a[i + 1]), a[i].max(a[i + 1]));
            assert_eq!(w[i], hi - lo, "w[{i}]");
            assert_eq!(e[i], hi * 100.0 + lo, "e[{i}]");
            if hi - lo > top.0 {
                top = (hi - lo, i as f64);
            }
        }
        assert_eq!((best[0], best[1]), top);
    }
}

#[test]
fn swaps_wildcards_shadowing_and_literal_types_on_the_host() {
    let src = "fn bump(c: i32[]) -> i32 {
    c[0] += 1;
    return c[0];
}
fn pair(c: i32[]) -> (i32, f64) {
    return (bump(c), 0.5);
}
let calls = zeros(i32, 1);
let a = 1;
let b = 2;
(a, b) = (b, a);
let (x, _) = (10, bump(calls));
let (_, h) = pair(calls);
pair(calls);
let (a, b) = (b + 100, a + 100);
let (f: f32, g: i64) = (1, 2);
let (p, q) = (2.5, 7);";
    let r = run(src, false);
    r.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    // The swap read both before writing either; the new `a`, `b` were
    // computed from the old ones.
    assert_eq!(
        (value(&r, "a"), value(&r, "b")),
        ("101".into(), "102".into())
    );
    assert_eq!(value(&r, "x"), "10");
    assert_eq!(value(&r, "h"), "0.5");
    // A dropped element is still computed, and so is a call whose
    // results are all dropped.
    assert_eq!(vec_of::<i32>(&r, "calls"), [3]);
    // Literals take the written types, else the defaults.
    assert_eq!(value(&r, "f"), "1.0");
    assert_eq!(format!("{:?}", r.engine.get_value("g").unwrap()), "I64(2)");
    assert_eq!((value(&r, "p"), value(&r, "q")), ("2.5".into(), "7".into()));
}

#[test]
fn destructured_variables_persist_between_inputs() {
    let mut e = accl::Engine::new();
    e.eval("fn two(x: f64) -> (f64, f64) { return (x, x * 2.0); }\nlet (a, b) = two(3.0);")
        .unwrap_or_else(|d| panic!("{}", d.render(100)));
    e.eval("(a, b) = (b, a);")
        .unwrap_or_else(|d| panic!("{}", d.render(100)));
    assert_eq!(e.get::<f64>("a"), Some(6.0));
    assert_eq!(e.get::<f64>("b"), Some(3.0));
    // Only the names written are variables: no hidden ones.
    let mut names: Vec<String> = e.variables().into_iter().map(|(n, _)| n).collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
}

/// A `routine vector` returning a tuple runs inline in the calling gang:
/// its `loop vector` reductions give both results; one that passes on
/// another function's tuple (`return two(x);`) too.
const VECTOR_ROUTINE: &str = "routine vector fn stats(a: f64[,], r: i32, n: i32) -> (f64, f64) {
    let s = 0.0;
    let m = -1.0e30;
    loop vector reduction(+: s) reduction(max: m)
    for i in 0..n {
        s += a[r, i];
        m = max(m, a[r, i]);
    }
    return (s, m);
}
fn two(x: f64) -> (f64, f64) {
    return (x, x * 2.0);
}
routine vector fn fwd(x: f64) -> (f64, f64) {
    return two(x);
}
let n = 64;
let rows = 8;
let a = zeros(f64, rows, n);
for r in 0..rows {
    for i in 0..n {
        a[r, i] = ((r * 13 + i * 7) % 17) as f64;
    }
}
let sums = zeros(f64, rows);
let maxs = zeros(f64, rows);
let o = zeros(f64, rows);
parallel loop gang copyin(a) copyout(sums, maxs, o)
for r in 0..rows {
    let (s, m) = stats(a, r, n);
    sums[r] = s;
    maxs[r] = m;
    let (x, y) = fwd(r as f64);
    o[r] = x + y;
}";

#[test]
fn a_vector_routine_returning_a_tuple_runs_inline() {
    let (host, dev) = same_as_host(VECTOR_ROUTINE, Floats::Exact);
    for r in [&host, &dev] {
        let (sums, maxs, o) = (
            vec_of::<f64>(r, "sums"),
            vec_of::<f64>(r, "maxs"),
            vec_of::<f64>(r, "o"),
        );
        for row in 0..8 {
            let vals: Vec<f64> = (0..64).map(|i| ((row * 13 + i * 7) % 17) as f64).collect();
            assert_eq!(sums[row], vals.iter().sum::<f64>(), "sum of row {row}");
            assert_eq!(maxs[row], vals.iter().cloned().fold(f64::MIN, f64::max));
            assert_eq!(o[row], 3.0 * row as f64);
        }
    }
}

#[test]
fn an_embedder_cannot_take_a_tuple_as_one_value() {
    let mut e = accl::Engine::new();
    e.eval("fn two(x: f64) -> (f64, f64) { return (x, x * 2.0); }")
        .unwrap_or_else(|d| panic!("{}", d.render(100)));
    let arg = accl::Val::Scalar(accl::lang::Value::F64(1.0));
    let err = e.call_fn("two", &[arg]).expect_err("a tuple is no value");
    assert_eq!(err.code(), "accl::type::tuple_value", "{}", err.render(100));
}
