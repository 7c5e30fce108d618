//! Every construct takes its clauses in any order (`if` and `wait` first
//! included), on the device against the host reference.

use crate::common;
use common::{same_as_host, Floats};

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
