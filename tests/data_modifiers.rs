//! Data-clause modifiers `zero:` and `readonly:`, sections without a
//! lower bound (`a[:n]`), and the OpenACC 2.0 clause names (`pcopy`,
//! `present_or_create`, ...), on the device against the host reference.

use crate::common;
use common::{same_as_host, Floats};

/// Runs on both backends and compares (a failure on either fails).
fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn zero_copies_start_at_zero() {
    ok(
        "let n = 64; let a = full(i32, 7, n); let b = full(f64, 2.5, n); let c = full(i32, 3, 8);
        data copyout(zero: a) create(zero: b) {
            parallel loop for i in 0..n { a[i] += i; b[i] += 1.0; a[i] += b[i] as i32; }
        }
        for i in 0..n { assert(a[i] == i + 1); }
        // A section made present again starts at zero too, next to one
        // that stayed present.
        enter data create(c[0:4]); enter data create(c[4:4]);
        parallel loop present(c[0:4]) for i in 0..4 { c[i] = 9; }
        parallel loop present(c[4:4]) for i in 4..8 { c[i] = 9; }
        exit data delete(c[4:4]);
        enter data create(zero: c[4:4]);
        parallel loop present(c[4:4]) for i in 4..8 { c[i] += 1; }
        exit data copyout(c[0:4]); exit data copyout(c[4:4]);
        for i in 0..4 { assert(c[i] == 9); assert(c[i + 4] == 1); }",
    );
}

#[test]
fn readonly_and_sections_without_lower_bound() {
    ok(
        "let n = 40; let a = zeros(f32, n); let b = zeros(f32, n); let m = zeros(i32, 4, 5);
        for i in 0..n { a[i] = i as f32; }
        data copyin(readonly: a[:n]) copyout(b[:n / 2]) {
            parallel loop for i in 0..n / 2 { cache(readonly: a[0:8]); b[i] = a[i] * 2.0f32; }
        }
        data copy(m[:2, :]) { parallel loop for i in 0..2 { m[i, 4] = i + 1; } }
        for i in 0..n / 2 { assert(b[i] == 2.0f32 * i as f32); }
        assert(m[1, 4] == 2);",
    );
}

#[test]
fn present_or_names_are_the_data_clauses() {
    // `pcopy`/`present_or_copy` is `copy`, and likewise for `copyin`,
    // `copyout` and `create`; a function may still be called `pcopy`.
    ok(
        "fn pcopy(x: i32) -> i32 { return x + 1; }
        let a = zeros(f64, 4); let b = full(f64, 2.0, 4); let c = zeros(f64, 4); let d = zeros(f64, 4);
        data pcopyin(b) present_or_copyout(a) pcreate(d) present_or_copy(c) {
            parallel loop for i in 0..4 { d[i] = b[i]; a[i] = d[i] + 1.0; c[i] += 5.0; }
        }
        for i in 0..4 { assert(a[i] == 3.0); assert(c[i] == 5.0); }
        enter data present_or_copyin(b) present_or_create(d);
        parallel loop pcopyout(a) pcopy(c) present(b) for i in 0..4 { a[i] = b[i]; c[i] += 1.0; }
        exit data delete(b, d);
        for i in 0..4 { assert(a[i] == 2.0); assert(c[i] == 6.0); }
        assert(pcopy(1) == 2);",
    );
}

#[test]
fn implicit_arrays_only_read_are_not_copied_back() {
    // saxpy without a data region: x and y go in, only y comes back (it
    // took three copies to the host with x; now two over both kernels).
    let src = "let x = zeros(f32, 1000); let y = zeros(f32, 1000);
        for i in 0..1000 { x[i] = i as f32; }
        parallel loop for i in 0..1000 { y[i] = 2.0 * x[i] + y[i]; }
        let w = y;
        parallel loop for i in 0..1000 { let t = y[i]; w[i] = t + 1.0; }
        assert(y[999] == 1999.0 && x[999] == 999.0, \"values\");";
    ok(src);
    let back = common::trace_events(src)
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("copy an array to the host"))
        })
        .count();
    assert_eq!(back, 2);
}
