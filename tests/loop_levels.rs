//! OpenACC's execution model inside regions and functions: `loop gang`,
//! `loop worker`, `loop vector` and `loop seq` nested in `parallel { .. }`
//! regions, `loop`s with no level, and `routine gang|worker|vector|seq`
//! functions called from gang loops. Every script runs on both backends
//! with the device's results compared against the host reference, and
//! asserts its known answers itself (a bug both backends share would
//! otherwise pass).

use crate::common;

use common::{run, same_as_host, Floats};

/// A CSR matrix of `n` rows with `per` nonzeros each, and a vector `x`.
fn csr(n: u32, per: u32) -> String {
    format!(
        "const n = {n};
const per = {per};
let rowptr = zeros(i32, n + 1);
let cols = zeros(i32, n * per);
let vals = zeros(f32, n * per);
let x = zeros(f32, n);
for r in 0..n {{
    rowptr[r] = r * per;
    for k in 0..per {{
        cols[r * per + k] = (r + k * 13) % n;
        vals[r * per + k] = 1.0 + (k % 4) as f32;
    }}
    x[r] = (r % 7) as f32;
}}
rowptr[n] = n * per;
// The known answer, on the host: small integers, exact in f32.
let want = zeros(f32, n);
for r in 0..n {{
    for k in rowptr[r]..rowptr[r + 1] {{ want[r] += vals[k] * x[cols[k]]; }}
}}
"
    )
}

#[test]
fn region_gang_vector_with_a_reduction() {
    let src = csr(300, 9)
        + "let y = zeros(f32, n);
parallel num_gangs(16) copyin(rowptr, cols, vals, x) copyout(y) {
    loop gang for i in 0..n {
        let s = 0.0f32;
        loop vector reduction(+: s) for k in rowptr[i]..rowptr[i + 1] {
            s += vals[k] * x[cols[k]];
        }
        y[i] = s;
    }
}
for i in 0..n { assert(y[i] == want[i], \"region gang > vector\"); }
";
    same_as_host(&src, Floats::Exact);
}

#[test]
fn region_gang_worker_vector_sweep() {
    let src = "const nk = 7;
const nj = 5;
const ni = 45;
let a = zeros(f32, nk, nj, ni);
let b = zeros(f32, nk, nj, ni);
for k in 0..nk { for j in 0..nj { for i in 0..ni { a[k, j, i] = (k * 10000 + j * 100 + i) as f32; } } }
parallel copyin(a) copyout(b) {
    loop gang for k in 0..nk {
        let kk = k * 2;
        loop worker for j in 0..nj {
            loop vector for i in 0..ni {
                b[k, j, i] = a[k, j, i] + kk as f32;
            }
        }
    }
}
for k in 0..nk { for j in 0..nj { for i in 0..ni { assert(b[k, j, i] == a[k, j, i] + (2 * k) as f32, \"sweep\"); } } }
";
    same_as_host(src, Floats::Exact);
}

#[test]
fn region_gang_seq_vector_and_statements_between() {
    let src = "const nk = 6;
const nj = 5;
const ni = 40;
let c = zeros(f32, nk, nj, ni);
let e = zeros(f32, nk, nj, ni);
for k in 0..nk { for j in 0..nj { for i in 0..ni { c[k, j, i] = (j * 100 + i) as f32; } } }
parallel num_gangs(3) copyin(c) copy(e) {
    loop gang for k in 0..nk {
        let base = k as f32;
        e[k, 0, 0] = base;
        loop seq for j in 1..nj {
            loop vector for i in 0..ni {
                e[k, j, i] = e[k, j - 1, i] + c[k, j, i] + base;
            }
        }
        // Not the gang loop's only work: the gang runs it as one worker.
        loop worker for j in 0..nj {
            loop vector for i in 0..ni {
                e[k, j, i] += 1.0;
            }
        }
    }
}
for k in 0..nk {
    let want = base_sum(c, k, nj - 1, 7);
    assert(e[k, nj - 1, 7] == want + 1.0, \"gang > seq > vector\");
}
fn base_sum(c: f32[,,], k: i32, j: i32, i: i32) -> f32 {
    let s = 0.0f32;
    if i == 0 { s = k as f32; }
    for q in 1..j + 1 { s += c[k, q, i] + k as f32; }
    return s;
}
";
    same_as_host(src, Floats::Exact);
}

#[test]
fn gang_iteration_variables_are_private_to_the_iteration() {
    // `t` is declared in the gang loop's body: each gang iteration has its
    // own, however many iterations a gang runs.
    let src = "const n = 100;
let out = zeros(i32, n);
parallel num_gangs(4) copyout(out) {
    loop gang for i in 0..n {
        let t = i * 3;
        loop vector reduction(+: t) for k in 0..10 {
            t += k;
        }
        out[i] = t;
    }
}
for i in 0..n { assert(out[i] == i * 3 + 45, \"private per gang iteration\"); }
";
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_loop_without_a_level_gets_one() {
    let src = "const n = 64;
const m = 33;
let a = zeros(f32, n, m);
let rows = zeros(f32, n);
for i in 0..n { for j in 0..m { a[i, j] = (i + j) as f32; } }
parallel copy(a) {
    loop for i in 0..n {
        loop for j in 0..m {
            a[i, j] = a[i, j] * 2.0;
        }
    }
}
parallel loop gang copyin(a) copyout(rows) for i in 0..n {
    let s = 0.0f32;
    loop reduction(+: s) for j in 0..m {
        s += a[i, j];
    }
    rows[i] = s;
}
for i in 0..n { assert(rows[i] == (2 * (m * i + m * (m - 1) / 2)) as f32, \"level-less\"); }
";
    same_as_host(src, Floats::Exact);
}

#[test]
fn explain_names_the_levels_chosen() {
    // Each (i, j, k) updates its own element (`a[i, j] += 1.0` in the
    // vector loop would be a race between its lanes).
    let src = "const n = 64;
let a = zeros(f32, n, n, n);
parallel copy(a) {
    loop gang for i in 0..n {
        loop worker for j in 0..n {
            loop vector for k in 0..n { a[i, j, k] += 1.0; }
        }
    }
}
";
    let r = run(src, true);
    r.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    let _ = r;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("levels.accl");
    std::fs::write(&path, src).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_accl"))
        .args(["check", "--explain"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("`loop gang` is the region's only work"),
        "{text}"
    );
    assert!(
        text.contains("`loop worker`: collapsed into the gang loop"),
        "{text}"
    );
}

const ROUTINES: &str =
    "routine vector fn row_dot(rowptr: i32[], cols: i32[], vals: f32[], x: f32[], i: i32) -> f32 {
    let s = 0.0f32;
    loop vector reduction(+: s) for k in rowptr[i]..rowptr[i + 1] {
        s += vals[k] * x[cols[k]];
    }
    return s;
}
routine worker fn scale_plane(a: f32[,,], k: i32, f: f32) {
    loop worker for j in 0..5 {
        loop vector for i in 0..40 {
            a[k, j, i] = a[k, j, i] * f;
        }
    }
}
routine seq fn tri(n: i32) -> i32 {
    let t = 0;
    loop seq for i in 0..n { t += i; }
    return t;
}
fn twice(v: f32) -> f32 { return v * 2.0; }
";

#[test]
fn routines_called_from_gang_loops() {
    let src = String::from(ROUTINES)
        + &csr(250, 6)
        + "let y = zeros(f32, n);
parallel loop gang copyin(rowptr, cols, vals, x) copyout(y) for i in 0..n {
    y[i] = twice(row_dot(rowptr, cols, vals, x, i));
}
for i in 0..n { assert(y[i] == 2.0 * want[i], \"routine vector\"); }
let a = zeros(f32, 4, 5, 40);
for k in 0..4 { for j in 0..5 { for i in 0..40 { a[k, j, i] = (k + j + i) as f32; } } }
parallel loop gang copy(a) for k in 0..4 {
    scale_plane(a, k, 3.0f32);
}
assert(a[3, 4, 39] == 138.0, \"routine worker\");
parallel copy(a) {
    loop gang for k in 0..4 {
        scale_plane(a, k, 0.5f32);
    }
}
assert(a[3, 4, 39] == 69.0, \"routine worker in a region\");
let t = zeros(i32, 20);
parallel loop copyout(t) for i in 0..20 { t[i] = tri(i); }
for i in 0..20 { assert(t[i] == i * (i - 1) / 2, \"routine seq\"); }
// On the host, outside any construct, the levels run in order.
assert(row_dot(rowptr, cols, vals, x, 3) == want[3], \"host call\");
";
    same_as_host(&src, Floats::Exact);
}

#[test]
fn a_gang_routine_in_a_region() {
    let src = "routine gang fn fill(a: f32[], n: i32, v: f32) {
    loop gang for i in 0..n { a[i] = v + i as f32; }
}
let a = zeros(f32, 1000);
parallel num_gangs(4) copy(a) {
    fill(a, 1000, 2.0f32);
}
for i in 0..1000 { assert(a[i] == 2.0 + i as f32, \"gang routine\"); }
";
    same_as_host(src, Floats::Exact);
}

/// The CSR SpMV of the GTC deck in its three forms, all giving the host's
/// answer.
#[test]
fn spmv_three_ways() {
    let src = String::from(ROUTINES)
        + &csr(1000, 16)
        + "let ya = zeros(f32, n);
let yb = zeros(f32, n);
let yc = zeros(f32, n);
parallel loop gang copyin(rowptr, cols, vals, x) copyout(ya) for i in 0..n {
    ya[i] = row_dot(rowptr, cols, vals, x, i);
}
parallel copyin(rowptr, cols, vals, x) copyout(yb) {
    loop gang for i in 0..n {
        let s = 0.0f32;
        loop vector reduction(+: s) for k in rowptr[i]..rowptr[i + 1] {
            s += vals[k] * x[cols[k]];
        }
        yb[i] = s;
    }
}
parallel loop copyin(rowptr, cols, vals, x) copyout(yc) for i in 0..n {
    let s = 0.0f32;
    for k in rowptr[i]..rowptr[i + 1] {
        s += vals[k] * x[cols[k]];
    }
    yc[i] = s;
}
for i in 0..n {
    assert(ya[i] == want[i] && yb[i] == want[i] && yc[i] == want[i], \"spmv\");
}
";
    same_as_host(&src, Floats::Exact);
}

#[test]
fn refusals_say_why() {
    // A routine called inside a condition cannot run before it: refused
    // on the device with the reason (the host runs it).
    let src = "routine vector fn total(a: f32[], n: i32) -> f32 {
    let s = 0.0f32;
    loop vector reduction(+: s) for k in 0..n { s += a[k]; }
    return s;
}
let a = zeros(f32, 8);
let y = zeros(f32, 8);
parallel loop gang copyin(a) copyout(y) for i in 0..8 {
    if total(a, i) > 0.0 { y[i] = 1.0; }
}
";
    assert!(run(src, false).result.is_ok());
    let d = run(src, true);
    let e = d.result.as_ref().expect_err("refused on the device");
    let text = e.render(100);
    assert!(text.contains("in a condition or a loop bound"), "{text}");
    assert!(text.contains("help"), "{text}");
}

#[test]
fn the_named_routine_form_gives_a_function_its_level() {
    // `routine(f) vector;` (before or after `f`) is `routine vector fn f`:
    // its `loop vector` runs in the calling gang, with the host's answer.
    let src = "routine(row_sum) vector;
fn row_sum(a: f32[,], i: i32, m: i32) -> f32 {
    let s = 0.0f32;
    loop vector reduction(+: s) for j in 0..m { s += a[i, j]; }
    return s;
}
fn twice(x: f32) -> f32 { return 2.0 * x; }
routine(twice) seq;
let n = 64;
let m = 48;
let a = zeros(f32, n, m);
for i in 0..n { for j in 0..m { a[i, j] = (i + j) as f32; } }
let out = zeros(f32, n);
parallel loop gang copyin(a) copyout(out) for i in 0..n { out[i] = twice(row_sum(a, i, m)); }
for i in 0..n { assert(out[i] == 2.0 * (m * i + m * (m - 1) / 2) as f32, \"row sums\"); }";
    same_as_host(src, Floats::Exact);
    let r = run("routine(nowhere) vector;", false);
    assert!(r.result.is_err(), "a named routine without its function");
}

#[test]
fn the_named_routine_form_takes_clauses_after_its_level() {
    // `routine(f) vector bind(g);` is `routine vector bind(g) fn f` (the
    // OpenACC V&V routine_bind test): calls in compute constructs go to
    // `g`, the host's to `f`. It was a parse error at the level.
    let src = "routine(f) vector bind(g);
fn f(a: f64[], i: i32) -> f64 { return a[i]; }
fn g(a: f64[], i: i32) -> f64 { return -a[i]; }
fn h(x: f64) -> f64 { return x + 1.0; }
routine(h) seq nohost;
let a = arange(f64, 8);
let b = zeros(f64, 8);
parallel loop gang copyin(a) copyout(b) for i in 0..8 { b[i] = h(f(a, i)); }
for i in 0..8 { assert(b[i] == 1.0 - i as f64 && f(a, i) == i as f64, \"bound\"); }";
    same_as_host(src, Floats::Exact);
}
