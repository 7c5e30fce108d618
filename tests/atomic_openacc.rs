//! The OpenACC spellings of `atomic`: `atomic update`, `x = x op e`,
//! `x = e op x`, `/= <<= >>=`, and `atomic capture` (blocks,
//! `v = x op= e` and `v = x = x op e`), on the device against the host reference.

use crate::common;
use common::{run, same_as_host, Floats};

fn ok(src: &str) {
    let (host, dev) = same_as_host(src, Floats::Exact);
    for r in [&host.result, &dev.result] {
        if let Err(e) = r {
            panic!("failed:\n{}", e.render(100));
        }
    }
}

/// Runs on both backends with its own asserts (results that depend on the
/// order of the updates are not compared between the backends).
fn both(src: &str) {
    for device in [false, true] {
        if let Err(e) = &run(src, device).result {
            panic!("failed (device: {device}):\n{}", e.render(100));
        }
    }
}

#[test]
fn update_forms_of_every_operator() {
    ok("let n = 80; let a = zeros(i32, 8); let b = zeros(f64, 8); let c = zeros(u32, 8);
        let d = full(i32, 1 << 20, 8); let e = full(f64, 1099511627776.0, 8); let s = full(i32, 1, 8);
        let r = full(i64, 1 << 40, 8); let m = zeros(i32, 8); let x = full(u32, 255u32, 8);
        parallel loop for i in 0..n {
            let k = i % 8;
            atomic update a[k] += 1;
            atomic a[k] = a[k] + 2;
            atomic update a[k] = 3 + a[k];
            atomic b[k] = b[k] + 0.5;
            atomic update b[k] = 0.25 + b[k];
            atomic c[k] = c[k] | (1u32 << (i as u32 % 32));
            atomic update d[k] /= 2;
            atomic e[k] = e[k] / 2.0;
            atomic update s[k] <<= 1;
            atomic r[k] >>= 1;
            atomic update m[k] = max(m[k], i);
            atomic x[k] = (i as u32) ^ x[k];
        }
        for k in 0..8 {
            assert(a[k] == 60);
            assert(d[k] == 1 << 10);
            assert(s[k] == 1 << 10);
            assert(r[k] == (1 as i64) << 30);
        }");
}

#[test]
fn reversed_updates() {
    // `x = e - x` twice and `x = e / x` twice give x back, in any order.
    ok(
        "let a = full(i32, 7, 4); let f = full(f32, 2.0f32, 4); let g = full(f64, 0.5, 4);
        parallel loop for i in 0..64 {
            let k = i % 4;
            atomic update a[k] = 10 - a[k];
            atomic f[k] = 1.0f32 / f[k];
            atomic g[k] = 3.0 - g[k];
        }
        for k in 0..4 { assert(a[k] == 7); assert(f[k] == 2.0f32); assert(g[k] == 0.5); }",
    );
}

#[test]
fn reversed_shifts_and_counts_past_the_width() {
    // `x = e << x` and `x = e >> x` shift e by the element; every atomic
    // shift count wraps at the bit width, as the host's `<<` does.
    ok(
        "let n = 48; let a = zeros(i32, n); let b = zeros(i64, n); let c = zeros(u32, n);
        let v = zeros(i32, n); let w = zeros(i64, n); let s = full(i32, 1, n);
        parallel loop for i in 0..n {
            a[i] = i; b[i] = (i as i64) + 30; c[i] = i as u32;
            atomic a[i] = (1 + i) << a[i];
            atomic update b[i] = (-100000 as i64) >> b[i];
            atomic c[i] = 0xF0F0F0F0u32 >> c[i];
            atomic capture v[i] = a[i] = 7 << a[i];
            atomic capture { w[i] = b[i]; b[i] = (3 as i64) << b[i]; }
            atomic s[i] <<= 31 + i;
        }
        for i in 0..n {
            let x = (1 + i) << i;
            assert(v[i] == 7 << x); assert(a[i] == v[i]);
            assert(w[i] == (-100000 as i64) >> ((i as i64) + 30));
            assert(b[i] == (3 as i64) << w[i]);
            assert(c[i] == 0xF0F0F0F0u32 >> (i as u32));
            assert(s[i] == 1 << (31 + i));
        }",
    );
}

#[test]
fn capture_old_and_new_values() {
    ok("let n = 300; let t = zeros(i32, n); let u = full(f64, 1.0, n); let w = zeros(u32, n);
        let c1 = zeros(i32, n); let c2 = zeros(f64, n); let c3 = zeros(u32, n); let c4 = zeros(i32, n);
        let c5 = zeros(f64, n);
        parallel loop for i in 0..n {
            t[i] = i;
            atomic capture { c1[i] = t[i]; t[i] *= 3; }
            atomic capture { u[i] -= i as f64; c2[i] = u[i]; }
            atomic capture { c3[i] = w[i]; w[i] = i as u32 + 5u32; }
            atomic capture c4[i] = t[i] += 1;
            atomic capture { u[i] = 0.5 / u[i]; c5[i] = u[i]; }
        }
        for i in 0..n {
            assert(c1[i] == i); assert(c2[i] == 1.0 - i as f64); assert(c3[i] == 0u32);
            assert(c4[i] == 3 * i + 1); assert(t[i] == 3 * i + 1);
            assert(c5[i] == 0.5 / (1.0 - i as f64));
        }");
}

#[test]
fn capture_of_an_assignment_update() {
    // `v = x = x op e;` and `v = x = e op x;` (OpenACC's capture statements)
    // update the element and capture its new value.
    ok(
        "let n = 64; let t = zeros(i32, n); let u = full(f64, 2.0, n); let w = zeros(u32, n);
        let c1 = zeros(i32, n); let c2 = zeros(f64, n); let c3 = zeros(u32, n);
        parallel loop for i in 0..n {
            t[i] = i;
            atomic capture c1[i] = t[i] = t[i] * 3;
            atomic capture c2[i] = u[i] = (i as f64) - u[i];
            atomic capture c3[i] = w[i] = (i as u32) ^ w[i];
        }
        for i in 0..n {
            assert(c1[i] == 3 * i); assert(t[i] == 3 * i);
            assert(c2[i] == i as f64 - 2.0); assert(u[i] == c2[i]);
            assert(c3[i] == i as u32); assert(w[i] == i as u32);
        }",
    );
}

#[test]
fn capture_hands_out_tickets() {
    both(
        "let n = 500; let cnt = zeros(i32, 1); let seen = zeros(i32, n); let c = zeros(i32, n);
          let m = zeros(i64, 1); let d = zeros(i64, n);
          parallel loop for i in 0..n {
              atomic capture { c[i] = cnt[0]; cnt[0] += 1; }
              atomic capture { m[0] = m[0] + 1; d[i] = m[0]; }
          }
          for i in 0..n { seen[c[i]] += 1; }
          for i in 0..n { assert(seen[i] == 1); }
          assert(cnt[0] == n);
          assert(sum(d) == (n as i64) * (n as i64 + 1) / 2);",
    );
}

#[test]
fn bad_forms_are_errors() {
    for (src, code) in [
        (
            "let a = zeros(i32, 4); parallel loop for i in 0..4 { atomic a[0] = i + 1; }",
            "accl::device::atomic_form",
        ),
        (
            "let a = zeros(i32, 4); parallel loop for i in 0..4 { atomic a[0] = a[0] % 3; }",
            "accl::device::atomic_form",
        ),
        (
            "let a = zeros(f32, 4); parallel loop for i in 0..4 { atomic a[0] <<= 1.0f32; }",
            "accl::device::atomic_type",
        ),
        (
            "let a = zeros(i32, 4); let b = zeros(i32, 4);
             parallel loop for i in 0..4 { atomic capture { b[i] = a[1]; a[0] += 1; } }",
            "accl::device::atomic_form",
        ),
    ] {
        let r = run(src, false);
        let e = r.result.expect_err(src);
        assert!(
            e.diags.iter().any(|d| d.code == code),
            "{src}: expected {code}, got:\n{}",
            e.render(100)
        );
    }
}
