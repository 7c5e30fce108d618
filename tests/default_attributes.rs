//! OpenACC 3.3's default data attributes of scalars: firstprivate on
//! `parallel` and `serial` (the construct's copy is assigned, the host's
//! value stays), `copy` in `kernels` (the value goes back), on the device
//! against the host reference, with known answers checked in the scripts.

use crate::common;
use common::{same_as_host, same_failure, Floats};

fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_scalar_assigned_in_parallel_is_the_constructs_copy() {
    // The V&V blocking tests: a scalar updated between two loops of one
    // region, firstprivate by default.
    ok("let n = 100; let c = zeros(f64, n); let m = 1.0;
        parallel copy(c) {
            loop vector for x in 0..n { c[x] = x as f64 * m; }
            m += 1.0;
            loop vector for x in 0..n { c[x] += x as f64 * m; }
        }
        assert(m == 1.0, \"the host's m is unchanged\");
        for x in 0..n { assert(c[x] == 3.0 * x as f64, \"c = 3x\"); }
        let k = 3;
        parallel num_gangs(4) copy(c) { k = k * 2; c[0] = k as f64; }
        assert(k == 3); assert(c[0] == 6.0);");
}

#[test]
fn a_scalar_assigned_in_serial_or_in_a_loop_seq_is_firstprivate() {
    ok("let n = 50; let a = zeros(i32, n); let s = 10;
        serial copy(a) { for i in 0..n { s += 1; a[i] = s; } }
        assert(s == 10); assert(a[n - 1] == 60);
        let u = 1;
        parallel copy(a) { loop seq for i in 0..n { u = u + 1; a[i] = u; } }
        assert(u == 1); assert(a[n - 1] == 51);
        let w = 2;
        serial { w = w * 3; loop seq for i in 0..n { w += 1; } a[0] = w; }
        assert(w == 2); assert(a[0] == 56);");
}

#[test]
fn a_scalar_assigned_in_kernels_is_copied_back() {
    ok(
        "let n = 64; let a = zeros(f64, n); let k = 0; let t = 0.0; let flag = false;
        kernels copy(a) {
            k = 7;
            for i in 0..n { a[i] = i as f64; }
            t = a[3] + 1.0;
            flag = t > 3.5;
        }
        assert(k == 7); assert(t == 4.0); assert(flag);
        // A loop in a one-lane kernels region updating a scalar (the V&V
        // kernels_scalar_default_copy test).
        let sum = 0.0;
        kernels num_gangs(1) vector_length(1) { loop for x in 0..n { sum = sum + a[x]; } }
        assert(sum == 2016.0);
        // A seq loop assigning it: in order, on one lane.
        let last = -1;
        kernels loop seq copy(a) for i in 0..n { last = i; a[i] = 1.0; }
        assert(last == 63);
        let f: f32 = -0.5;
        kernels { f = f * 3.0; }
        assert(f == -1.5);
        let b: u8 = 200;
        kernels async(1) { b = b + 50; }
        wait(1);
        assert(b == 250);",
    );
}

#[test]
fn an_unordered_write_still_races() {
    // Iterations of a parallel loop share the construct's copy.
    same_failure(
        "let n = 8; let a = zeros(f32, n); let s = 0.0f32;
         parallel loop for i in 0..n { s = a[i]; }",
        "accl::device::race",
    );
    // In `kernels`, a scalar each iteration sets before reading it is the
    // iteration's own; one read before it is set carries a value between
    // iterations.
    same_failure(
        "let n = 8; let a = zeros(f32, n); let s = 0.0f32;
         kernels { loop independent for i in 0..n { a[i] = s; s = a[i] + 1.0f32; } }",
        "accl::device::race",
    );
    // A construct's own loop, even in order on one lane: name the variable
    // in `private` (or `firstprivate`) to give each iteration its copy.
    same_failure(
        "let n = 8; let a = zeros(i32, n); let t = 0;
         serial loop for i in 0..n { t = a[i] * 2; a[i] = t; }",
        "accl::device::race",
    );
    // A `loop` without `seq` in a `serial` region runs as a vector loop.
    same_failure(
        "let n = 8; let w = 0; serial { loop for i in 0..n { w = i; } }",
        "accl::device::race",
    );
}

#[test]
fn scalars_in_data_clauses() {
    // On a compute construct, `copy`/`copyout` say that what a kernel
    // assigns to a scalar comes back, and `copyin` leaves the host's as it
    // was. A `data` region gives it a device copy that the kernels inside
    // share, copied back at the end of the region.
    ok("let x = 1.0; let y = 2; let z = 3; let t = 0.0;
        serial copy(x) { x = 5.0; }
        assert(x == 5.0);
        data copy(y) { serial { y = 7; } assert(y == 2); serial { y = y + 2; } }
        assert(y == 9);
        parallel copyin(z) { z = 11; }
        assert(z == 3);
        data copyin(z) copy(t) { parallel loop reduction(+: t) for i in 0..10 { t += z as f64; } }
        assert(t == 30.0);");
}
