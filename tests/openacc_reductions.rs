//! Reductions as OpenACC writes them: a `reduction` on `parallel` applies
//! to the loops in it that update the variable, and array reductions take
//! the element on either side of the operator; on the device against the
//! host reference, with known answers.

use crate::common;
use common::{same_as_host, Floats};

fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_construct_reduction_covers_its_loops() {
    ok(
        "let n = 1000; let a = zeros(i32, n); for i in 0..n { a[i] = i % 17; }
        let s = 0; let m = -1; let p: i64 = 1;
        parallel copyin(a) reduction(+: s) reduction(max: m) {
            loop independent for i in 0..n { s += a[i]; }
            loop for i in 0..n { m = max(m, a[i]); }
        }
        let want = 0; for i in 0..n { want += i % 17; }
        assert(s == want, \"sum\"); assert(m == 16, \"max\");
        serial reduction(*: p) { loop for i in 1..11 { p *= i as i64; } }
        assert(p == 3628800, \"product\");
        let t = 5;
        parallel loop gang reduction(+: t) for r in 0..10 { loop vector for k in 0..10 { t += 1; } }
        assert(t == 105, \"nested\");",
    );
}

#[test]
fn array_reductions_take_either_operand_order() {
    ok("let n = 200; let lo = zeros(i32, 4); let hi = zeros(i32, 4); let c = zeros(f64, 4); let x = zeros(u32, 4);
        for k in 0..4 { lo[k] = 1000; }
        parallel loop reduction(min: lo) for i in 0..n { lo[i % 4] = min(n - i, lo[i % 4]); }
        parallel loop reduction(max: hi) for i in 0..n { hi[i % 4] = max(i, hi[i % 4]); }
        parallel loop reduction(+: c) for i in 0..n { c[i % 4] = 0.5 + c[i % 4]; }
        parallel loop reduction(|: x) for i in 0..n { x[i % 4] = (1 << (i % 7)) as u32 | x[i % 4]; }
        assert(lo[0] == 4); assert(lo[3] == 1); assert(hi[0] == 196); assert(hi[3] == 199);
        assert(c[2] == 25.0); assert(x[0] == 127);");
}
