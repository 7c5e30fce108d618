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

#[test]
fn rev_counts_a_range_down_on_the_host_and_inside_device_code() {
    // Known answers by hand: the order of the visits is the digits read
    // back, 4 3 2 1 0 -> 43210; `rev(1..=3)` visits 3 2 1 -> 321.
    ok("let order = 0;
        for i in rev(0..5) { order = order * 10 + i; }
        assert(order == 43210, \"rev(0..5)\");
        let incl = 0;
        for i in rev(1..=3) { incl = incl * 10 + i; }
        assert(incl == 321, \"rev(1..=3)\");
        let none = 0;
        for i in rev(5..5) { none += 1; }
        for i in rev(7..3) { none += 1; }
        assert(none == 0, \"empty ranges\");
        // u32 down to 0, i64 bounds, break and continue.
        let last = 99u32;
        for i in rev(0u32..4u32) { last = i; }
        assert(last == 0u32, \"u32 reaches 0\");
        let big = 0i64;
        let top = 5000000000i64;
        for i in rev(top - 3..top) { if i == top - 2 { continue; } big += i - top; }
        assert(big == -4i64, \"i64, continue\");
        let stop = -1;
        for i in rev(0..10) { if i == 6 { stop = i; break; } }
        assert(stop == 6, \"break\");
        // Inside a construct: a prefix product from the right per row,
        // each row's loop in order on its lane.
        let n = 6;
        let a = zeros(i32, 4, n);
        parallel loop copy(a) for r in 0..4 {
            let acc = 1;
            for j in rev(0..n) { acc = acc * 2; a[r, j] = acc + r; }
        }
        assert(a[0, 5] == 2 && a[0, 0] == 64 && a[3, 0] == 67, \"device rows\");");
}

#[test]
fn a_construct_loop_cannot_count_down() {
    let src = "let a = zeros(f32, 4); parallel loop for i in rev(0..4) { a[i] = 1.0; }";
    let Err(e) = accl::Engine::new().compile(src) else {
        panic!("a descending construct loop was accepted");
    };
    assert_eq!(e.code(), "accl::device::descending_loop");
    // In `kernels` the loop keeps its order (a serial part): each element
    // is the next one's plus 1, so a = [4, 3, 2, 1, 0]; counted up, it
    // would be [1, 1, 1, 1, 0].
    let kernels = "let a = zeros(i32, 5);
        kernels { for i in rev(0..4) { a[i] = a[i + 1] + 1; } }
        assert(a[0] == 4 && a[1] == 3 && a[3] == 1, \"kernels keeps the order\");";
    ok(kernels);
}
