//! `atomic read v = a[i];` and `atomic write a[i] = e;` on every element
//! type that has atomics, on the device against the host reference; and
//! `read`/`write` staying ordinary names everywhere else.

use crate::common;
use common::{same_as_host, Floats};

/// Runs on both backends and compares (a failure on either fails).
fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

#[test]
fn read_and_write_every_atomic_type() {
    for (ty, value) in [
        ("i32", "(i * 7 - 300) as i32"),
        ("u32", "(i as u32) * 2654435761u32"),
        ("i64", "(i as i64) * 10000000007"),
        ("f32", "i as f32 * 0.37 - 5.0"),
        ("f64", "i as f64 * 1.0e-3 + 0.25"),
    ] {
        ok(&format!(
            "let n = 700; let a = zeros({ty}, n); let b = zeros({ty}, n); let c = zeros({ty}, n);
             for i in 0..n {{ a[i] = {value}; }}
             parallel loop for i in 0..n {{
                 let v = a[0]; atomic read v = a[n - 1 - i];
                 b[i] = v;
                 atomic write c[i] = v + a[i];
             }}
             assert(b[0] == a[n - 1] && b[9] == a[n - 10] && c[5] == a[n - 6] + a[5], \"known values\");"
        ));
    }
}

#[test]
fn atomic_writes_mix_with_updates_of_one_float_array() {
    // The array has both a native-or-CAS add and plain atomic stores: one
    // view of its bits serves both.
    ok("let n = 512; let f = zeros(f32, n); let g = zeros(f32, 8);
        parallel loop for i in 0..n {
            atomic write f[i] = i as f32 * 0.5;
            atomic g[i % 8] += 1.0;
        }
        parallel loop for i in 0..8 { let x = 0.0f32; atomic read x = g[i]; f[i] = x; }
        assert(f[3] == 64.0f32 && f[100] == 50.0f32 && g[7] == 64.0f32, \"known values\");");
}

#[test]
fn read_and_write_are_still_names() {
    ok("let read = zeros(i32, 4); let write = 3;
        parallel loop for i in 0..4 { atomic read[i] += write; }
        let v = 0; atomic read v = read[2];
        let r = read[1] + v;
        assert(r == 6 && v == 3, \"known values\");");
}
