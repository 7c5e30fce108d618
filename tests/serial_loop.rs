//! `serial loop` and `kernels`/`serial` followed by `if(..)`, `wait` or
//! `async` in any clause order, on the device against the host reference.

use crate::common;
use common::{same_as_host, same_failure, Floats};

/// Runs on both backends and compares (a failure on either fails).
fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn serial_loop_runs_every_iteration_in_order() {
    ok(
        "let n = 100; let a = zeros(i32, n); let s = 0; let f = zeros(f64, n);
        serial loop copy(a) reduction(+: s) for i in 0..n { a[i] = i * 2; s += i; }
        assert(s == 4950); assert(a[99] == 198);
        // In order: each iteration reads the one before.
        serial loop copy(f) for i in 1..n { f[i] = f[i - 1] * 0.5 + 1.0; }
        serial loop async(1) copy(a) for i in 0..n { a[i] += 1; }
        wait(1);
        assert(a[99] == 199);",
    );
}

#[test]
fn kernels_and_serial_take_if_and_wait_first() {
    ok("let n = 10; let a = zeros(i32, n);
        serial if(true) copy(a) { a[0] = 5; }
        serial if(false) copy(a) { a[3] = 5; }
        data copy(a) {
            kernels if(n > 0) wait async(1) present(a) { a[1] = 7; }
            wait;
            serial wait async(2) present(a) { a[2] = 9; }
            kernels wait(2) present(a) { a[4] = 1; }
            serial async present(a) { a[5] = 2; }
            wait;
        }
        assert(a[0] == 5); assert(a[1] == 7); assert(a[2] == 9); assert(a[3] == 5);
        assert(a[4] == 1); assert(a[5] == 2);");
}

#[test]
fn serial_refuses_sizes_that_parallel_and_kernels_take() {
    // OpenACC 3.3, 2.5.3: `serial` is one gang of one worker with vector
    // length 1, so a size written on it is an error on both backends.
    for src in [
        "let a = zeros(f32, 4); serial num_gangs(2) { a[0] = 1.0; }",
        "let a = zeros(f32, 4); serial num_workers(2) { a[0] = 1.0; }",
        "let a = zeros(f32, 4); serial vector_length(2) { a[0] = 1.0; }",
        "let a = zeros(f32, 4); serial loop num_gangs(2) for i in 0..4 { a[i] = 1.0; }",
        "let a = zeros(f32, 4); serial loop num_workers(2) for i in 0..4 { a[i] = 1.0; }",
    ] {
        let (h, _) = same_failure(src, "accl::device::clause_not_allowed");
        assert_eq!(h.result.unwrap_err().diags.len(), 1, "{src}");
    }
    ok("let a = zeros(f32, 4);
        serial { a[0] = 1.0; }
        serial loop gang vector for i in 1..4 { a[i] = a[i - 1] + 1.0; }
        parallel num_gangs(2) num_workers(2) vector_length(32) {
            loop gang for i in 0..4 { a[i] += 1.0; }
        }
        parallel loop num_gangs(2) num_workers(2) vector_length(32) for i in 0..4 { a[i] += 1.0; }
        kernels num_gangs(2) num_workers(2) vector_length(32) { for i in 0..4 { a[i] += 1.0; } }
        kernels loop num_gangs(2) num_workers(2) vector_length(32) for i in 0..4 { a[i] += 1.0; }
        assert(a[0] == 5.0); assert(a[3] == 8.0);");
}
