//! Data-clause modifiers `zero:` and `readonly:`, and sections without a
//! lower bound (`a[:n]`), on the device against the host reference.

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
