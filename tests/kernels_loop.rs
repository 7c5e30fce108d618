//! `kernels loop` and `serial loop` with the clauses of `loop`, and a
//! `loop` inside `kernels`, which gets the analysis a bare `for` gets: on
//! the device against the host reference, with known answers.

use crate::common;
use common::{same_as_host, Floats};

fn ok(src: &str) {
    same_as_host(src, Floats::Exact);
}

fn explain(src: &str) -> String {
    accl::cli::explain_text("t.accl", src, None).expect("the script checks")
}

#[test]
fn kernels_loop_takes_every_loop_clause() {
    ok("let n = 64; let a = zeros(i32, n); let b = zeros(f64, n, n); let s = 0; let m = 0; let p = 0;
        kernels loop independent copy(a) for i in 0..n { a[i] = i; }
        kernels loop reduction(+: s) for i in 0..n { s += a[i]; }
        assert(s == 2016);
        kernels loop independent reduction(max: m) for i in 0..n { m = max(m, a[i] * 2); }
        assert(m == 126);
        kernels loop seq copy(a) for i in 1..n { a[i] = a[i - 1] + 2; }
        assert(a[n - 1] == 126);
        kernels loop auto private(p) copy(a) for i in 0..n { p = i * 3; a[i] = p; }
        assert(a[5] == 15);
        kernels loop gang worker vector num_gangs(4) copy(a) for i in 0..n { a[i] = 1; }
        assert(a[63] == 1);
        kernels loop collapse(2) copy(b) for i in 0..n { for j in 0..n { b[i, j] = (i + j) as f64; } }
        assert(b[3, 4] == 7.0);
        data copy(b) {
            kernels loop tile(8, 8) async(1) present(b) for i in 0..n { for j in 0..n { b[i, j] = (i * j) as f64; } }
            wait(1);
        }
        assert(b[3, 4] == 12.0);");
}

#[test]
fn serial_loop_takes_every_loop_clause() {
    ok("let n = 32; let a = zeros(i32, n); let s = 0; let p = 0; let b = zeros(f32, n, n);
        serial loop independent copy(a) for i in 0..n { a[i] = i; }
        serial loop seq reduction(+: s) for i in 0..n { s += a[i]; }
        assert(s == 496);
        serial loop auto gang worker vector private(p) copy(a) for i in 0..n { p = i + 1; a[i] = p; }
        assert(a[31] == 32);
        serial loop collapse(2) copy(b) for i in 0..n { for j in 0..n { b[i, j] = 1.0; } }
        serial loop tile(*, *) copy(b) for i in 0..n { for j in 0..n { b[i, j] += (i - j) as f32; } }
        assert(b[5, 2] == 4.0);");
}

#[test]
fn a_loop_in_kernels_runs_in_parallel_when_independent() {
    let src = "let n = 1000; let a = zeros(f32, n); let s = 0.0;
        kernels copy(a) {
            loop for i in 0..n { a[i] = i as f32; }
            loop for i in 0..n { s += a[i] as f64; }
        }
        assert(s == 499500.0);";
    ok(src);
    let report = explain(src);
    // Both loops become `parallel loop auto` parts (the second a reduction),
    // not one-lane serial parts.
    assert_eq!(report.matches("parallel loop auto").count(), 2, "{report}");
    assert!(!report.contains("serial (one gang"), "{report}");
}

#[test]
fn a_dependent_loop_in_kernels_stays_in_order() {
    ok("let n = 100; let f = zeros(f64, n); f[0] = 1.0;
        kernels copy(f) { loop for i in 1..n { f[i] = f[i - 1] * 0.5 + 1.0; } }
        assert(abs(f[99] - 2.0) < 1e-9);");
}

/// The launch labels of a device run's trace of `src`.
fn launches(src: &str) -> Vec<String> {
    common::trace_events(src)
        .iter()
        .filter_map(|e| e["name"].as_str())
        .filter(|n| n.starts_with("launch "))
        .map(String::from)
        .collect()
}

/// Needleman-Wunsch's anti-diagonals (Rodinia's `kernels` loops): the
/// cells of one diagonal, read from the diagonal before, for an `m` by `m`
/// matrix, with the host recurrence row by row to check against.
fn needleman_wunsch(m: u32) -> String {
    format!(
        "let m = {m}; let a = zeros(i32, m * m); let r = zeros(i32, m * m);
        for k in 0..m * m {{ r[k] = (k * 7) % 11 - 5; }}
        for k in 0..m {{ a[k * m] = -k; a[k] = -k; }}
        let h = zeros(i32, m * m);
        for k in 0..m * m {{ h[k] = a[k]; }}
        data copy(a) copyin(r) {{
            for i in 0..m - 2 {{
                kernels present(a, r) {{
                    for idx in 0..=i {{
                        let index = (idx + 1) * m + (i + 1 - idx);
                        a[index] = max(a[index - 1 - m] + r[index], max(a[index - 1] - 1, a[index - m] - 1));
                    }}
                }}
            }}
        }}
        for y in 1..m - 1 {{
            for x in 1..m - y {{
                let k = y * m + x;
                h[k] = max(h[k - 1 - m] + r[k], max(h[k - 1] - 1, h[k - m] - 1));
            }}
        }}
        for k in 0..m * m {{ assert(a[k] == h[k]); }}"
    )
}

#[test]
fn a_kernels_loop_whose_indices_the_launch_shows_apart_runs_in_parallel() {
    // m - 1 divides none of the distances 1, m, m + 1: every launch with
    // two iterations or more takes the parallel kernel.
    let src = needleman_wunsch(24);
    ok(&src);
    let l = launches(&src);
    assert_eq!(l.len(), 22, "{l:?}");
    let parallel = l
        .iter()
        .filter(|n| n.contains("(auto: in parallel)"))
        .count();
    assert_eq!(parallel, 22, "{l:?}"); // one iteration is apart from none
    let e = explain(&src);
    assert!(
        e.contains("seq: one lane runs loop `idx`")
            && e.contains("or, at a launch whose values keep the iterations apart: gang, vector"),
        "{e}"
    );
}

#[test]
fn a_kernels_loop_whose_indices_meet_at_launch_stays_in_order() {
    // A shift the next iteration reads; then one array under two names
    // (apart as two arrays, not as one); then two arrays, apart.
    let src =
        "let n = 64; let s = 1; let a = zeros(i32, 2 * n); let b = a; let c = zeros(i32, 2 * n);
        kernels copy(a) { for j in 0..n { a[j + s] = a[j] + 1; } }
        assert(a[n] == 64);
        s = n;
        kernels copy(a, b) { for j in 0..n { a[j + s] = b[j] * 2; } }
        assert(a[n + 5] == 10);
        kernels copy(a, c) { for j in 0..n { c[j + s] = c[j] * 2 + a[j]; } }
        assert(c[n + 5] == 5);";
    ok(src);
    let l = launches(src);
    let parallel: Vec<bool> = l
        .iter()
        .map(|n| n.contains("(auto: in parallel)"))
        .collect();
    assert_eq!(parallel, [false, false, true], "{l:?}");
}
