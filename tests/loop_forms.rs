//! OpenACC 3.3's loop clause forms: `tile(*, ..)` and tiles of three or
//! more loops, `collapse(force: n)`, `gang(dim: k)` and multi-dimensional
//! `num_gangs(n, m[, l])`; on the device against the host reference.

use crate::common;
use common::{same_as_host, Floats};

fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn tile_star_lets_the_compiler_choose() {
    let src = "let n = 40; let a = zeros(f64, n, n); let b = zeros(i32, n);
        parallel loop tile(*, *) copy(a) for i in 0..n { for j in 0..n { a[i, j] = (i * n + j) as f64; } }
        assert(a[3, 4] == 124.0);
        parallel loop tile(*) copy(b) for i in 0..n { b[i] = 2 * i; }
        assert(b[39] == 78);
        parallel loop tile(*, 4) copy(a) for i in 0..n { for j in 0..n { a[i, j] = 1.0; } }
        assert(a[39, 39] == 1.0);";
    ok(src);
    let report = accl::cli::explain_text("t.accl", src, None).expect("the script checks");
    assert!(
        report.contains("the compiler chose tile(16, 16)"),
        "{report}"
    );
    assert!(report.contains("the compiler chose tile(64)"), "{report}");
}

#[test]
fn tiles_of_three_loops() {
    ok("let c = zeros(f64, 6, 5, 4);
        parallel loop tile(2, 2, 2) copy(c) for i in 0..6 { for j in 0..5 { for k in 0..4 { c[i, j, k] = (i * 100 + j * 10 + k) as f64; } } }
        assert(c[5, 4, 3] == 543.0);
        parallel loop tile(*, *, *) copy(c) for i in 0..6 { for j in 0..5 { for k in 0..4 { c[i, j, k] += 1.0; } } }
        assert(c[0, 0, 0] == 1.0); assert(c[5, 4, 3] == 544.0);");
}

#[test]
fn collapse_force_runs_the_statements_between_the_loops() {
    ok("let n = 30; let i2 = zeros(f64, 10); for x in 0..10 { i2[x] = x as f64 * 0.5; }
        let c = zeros(f64, 10 * n);
        parallel { loop collapse(force: 2) for x in 0..10 { let nx = i2[x]; for y in 0..n { c[x * n + y] = nx + y as f64; } } }
        for x in 0..10 { for y in 0..n { assert(c[x * n + y] == x as f64 * 0.5 + y as f64, \"c\"); } }
        parallel loop collapse(force: 2) for x in 0..10 { for y in 0..n { c[x * n + y] = 1.0; } }
        assert(c[10 * n - 1] == 1.0);");
}

#[test]
fn gang_dimensions_are_linearised() {
    ok("let n = 12; let a = zeros(f64, n, n); let b = zeros(f64, 4, 4, 4);
        parallel num_gangs(n, n) copy(a) {
            loop gang(dim: 2) for i in 0..n { for j in 0..n { a[i, j] = a[i, j] + 1.0; } }
        }
        assert(a[11, 11] == 1.0);
        parallel loop num_gangs(4, 4, 4) gang(dim: 1) copy(b) for i in 0..4 { for j in 0..4 { for k in 0..4 { b[i, j, k] = 2.0; } } }
        assert(b[3, 3, 3] == 2.0);");
}

#[test]
fn collapsed_indices_split_exactly_at_every_size() {
    // Flat indices of collapsed loops split into the loops' variables; on
    // a CPU driver through a floating-point reciprocal, corrected to the
    // exact quotient. Every index is checked, including the exact
    // multiples of each count, where a reciprocal's quotient lands one
    // below, and counts that are not powers of two.
    ok("let counts = [1, 3, 7, 1021, 65537];
        for k in 0..len(counts) {
            let c = counts[k];
            let r = 2100000 / c + 3;
            let jj = zeros(i32, r, c);
            let ii = zeros(i32, r, c);
            parallel loop collapse(2) copyout(jj, ii) for j in 0..r {
                for i in 0..c { jj[j, i] = j; ii[j, i] = i; }
            }
            for j in 0..r {
                for i in 0..c { assert(jj[j, i] == j && ii[j, i] == i, \"index split\"); }
            }
        }
        let k3 = zeros(i32, 37, 101, 13);
        parallel loop collapse(3) copyout(k3) for a in 0..37 {
            for b in 0..101 { for d in 0..13 { k3[a, b, d] = (a * 101 + b) * 13 + d; } }
        }
        for a in 0..37 { for b in 0..101 { for d in 0..13 {
            assert(k3[a, b, d] == (a * 101 + b) * 13 + d, \"three levels\");
        } } }");
}
