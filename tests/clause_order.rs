//! Every construct takes its clauses in any order (`if` and `wait` first
//! included), on the device against the host reference; a constant size
//! clause no device can run is refused alike on both, a run-time one runs
//! as the host runs it.

use crate::common;
use common::{same_as_host, same_failure, Floats};

fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn compute_constructs_take_clauses_in_any_order() {
    ok("let n = 16; let a = zeros(i32, n); let s = 0;
        parallel loop if(true) wait async(1) reduction(+: s) copy(a) for i in 0..n { a[i] = i; s += i; }
        wait(1);
        parallel wait(1) if(n > 0) num_gangs(2) copy(a) { a[0] = 40; }
        serial wait(1) async(2) copy(a) { a[1] = 41; }
        wait(2);
        data copy(a) {
            kernels wait(1, 2) async(3) present(a) { a[2] = 42; }
            wait(3);
        }
        kernels if(n > 0) copy(a) { a[3] = 43; }
        serial loop wait if(true) private(s) copy(a) for i in 4..6 { s = i; a[i] = s * 10; }
        data copy(a) {
            kernels loop if(true) async(4) independent present(a) for i in 6..8 { a[i] = 70; }
            wait(4);
        }
        parallel loop copy(a) private(s) vector_length(4) num_gangs(2) gang vector for i in 8..10 { a[i] = 80; }
        assert(a[0] == 40); assert(a[1] == 41); assert(a[2] == 42); assert(a[3] == 43);
        assert(a[5] == 50); assert(a[7] == 70); assert(a[9] == 80);");
}

#[test]
fn loop_data_and_update_take_clauses_in_any_order() {
    ok(
        "let n = 16; let a = zeros(i32, n); let b = zeros(i32, n); let s = 0;
        data if(true) wait copy(a) copyin(b) {
            parallel present(a) {
                loop private(s) independent gang for i in 0..n { s = i * 2; a[i] = s; }
            }
            update if(true) async(1) self(a);
            wait(1);
            update wait device(a) if_present;
        }
        enter data if(true) async(2) copyin(b);
        exit data wait(2) if(true) copyout(b);
        wait async(1) if(true);
        wait;
        assert(a[3] == 6);",
    );
}

#[test]
fn constant_sizes_out_of_range_are_refused_on_both_backends() {
    let a = "let a = zeros(f32, 4);";
    for (src, code) in [
        (
            "parallel loop vector_length(2048) for i in 0..4 { a[i] = 1.0; }",
            "accl::device::vector_length",
        ),
        (
            "const V = 0; kernels loop vector_length(V) for i in 0..4 { a[i] = 1.0; }",
            "accl::device::vector_length",
        ),
        (
            "parallel num_workers(1025) { a[0] = 1.0; }",
            "accl::device::num_workers",
        ),
        (
            "parallel loop num_gangs(2, 0) for i in 0..4 { a[i] = 1.0; }",
            "accl::device::num_gangs",
        ),
        (
            "parallel num_gangs(-1) { a[0] = 1.0; }",
            "accl::device::num_gangs",
        ),
    ] {
        let (h, _) = same_failure(&format!("{a} {src}"), code);
        assert_eq!(h.result.unwrap_err().diags.len(), 1, "{src}");
    }
    ok("let a = zeros(f32, 4);
        parallel loop num_gangs(2, 3) num_workers(1) vector_length(1024) for i in 0..4 { a[i] = 1.0; }
        parallel loop num_workers(1024) vector_length(1) for i in 0..4 { a[i] += 1.0; }
        assert(a[3] == 2.0);");
}

#[test]
fn run_time_sizes_out_of_range_run_as_on_the_host() {
    // A run-time vector_length past 1024 runs with 1024 lanes, a num_gangs
    // or vector_length below 1 with the default: the host reference's
    // result on the device (2 * (0 + 1 + .. + 4999) = 24,995,000).
    ok("let n = 5000; let w = 100000; let g = 0; let z = -3;
        let a = zeros(i32, n); let s = 0;
        parallel loop vector_length(w) for i in 0..n { a[i] = 2 * i; }
        parallel loop num_gangs(g) reduction(+: s) for i in 0..n { s += a[i]; }
        assert(s == 24995000, \"sum\");
        parallel loop num_gangs(z) vector_length(z) for i in 0..n { a[i] += 1; }
        parallel loop gang num_gangs(g) vector_length(w) for i in 0..n { a[i] += 1; }
        assert(a[n - 1] == 2 * (n - 1) + 2, \"last\");");
}
