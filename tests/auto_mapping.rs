//! Loops the compiler maps by itself (inner `for` loops made vector loops,
//! see `compiler::autovec`) give the host reference's results on the
//! device; and the `--explain` report of every example, as snapshots.

use crate::common;
use common::{same_as_host, Floats};

fn ok(src: &str, floats: Floats) {
    let (host, dev) = same_as_host(src, floats);
    for r in [&host.result, &dev.result] {
        if let Err(e) = r {
            panic!("failed:\n{}", e.render(100));
        }
    }
}

#[test]
fn gram_schmidt_as_the_article_writes_it() {
    // The column update of the execution-model article, unchanged: two
    // sequential inner loops, the first a sum.
    ok(
        "const rows = 70; const cols = 40;
         let Qt = zeros(f32, cols, rows);
         let seed: u32 = 7;
         for j in 0..cols { for i in 0..rows { seed = seed * 1664525 + 1013904223; Qt[j, i] = (seed >> 8) as f32 / 16777216.0; } }
         for k in 0..cols {
             let nrm = 0.0;
             for i in 0..rows { nrm += Qt[k, i] as f64 * Qt[k, i] as f64; }
             for i in 0..rows { Qt[k, i] = Qt[k, i] / sqrt(nrm) as f32; }
             parallel loop vector_length(128) for j in k + 1..cols {
                 let tmp = 0.0;
                 for i in 0..rows { tmp += Qt[k, i] as f64 * Qt[j, i] as f64; }
                 for i in 0..rows { Qt[j, i] = Qt[j, i] - tmp as f32 * Qt[k, i]; }
             }
         }
         // Gram-Schmidt's own answer: the rows end orthonormal.
         for j in 0..cols { for k in 0..cols {
             let d = 0.0;
             for i in 0..rows { d += Qt[j, i] as f64 * Qt[k, i] as f64; }
             let want = 0.0;
             if j == k { want = 1.0; }
             assert(abs(d - want) < 1e-3, \"orthonormal rows\");
         } }",
        Floats::Within(1e-4),
    );
}

#[test]
fn spmv_with_a_sequential_row_loop() {
    ok(
        "let nr = 3000; let rowptr = zeros(i32, nr + 1); let cols = zeros(i32, nr * 9);
         let vals = zeros(f64, nr * 9); let v = zeros(f64, nr); let out = zeros(f64, nr);
         for i in 0..nr + 1 { rowptr[i] = i * 9 - (i % 4) * (i % 2); }
         rowptr[nr] = nr * 9;
         for k in 0..nr * 9 { cols[k] = (k * 7919) % nr; vals[k] = (k % 13) as f64 * 0.5; }
         for i in 0..nr { v[i] = (i % 17) as f64 - 8.0; }
         parallel loop for i in 0..nr {
             let s = 0.0;
             for k in rowptr[i]..rowptr[i + 1] { s += vals[k] * v[cols[k]]; }
             out[i] = s;
         }
         // Computed independently (Python, the same formulas).
         assert(out[0] == -12.5 && out[1] == -53.0 && out[1234] == -6.5 && out[2999] == 11.0, \"rows\");",
        Floats::Within(1e-12),
    );
}

#[test]
fn every_recognised_reduction_on_the_device() {
    ok(
        "let n = 300; let m = 77; let a = zeros(i32, n, m); let b = zeros(bool, n, m);
         for r in 0..n { for i in 0..m { a[r, i] = (r * 31 + i * 17) % 103 - 50; b[r, i] = (r + i) % 7 != 0; } }
         let o = zeros(i64, n, 9); let ob = zeros(bool, n, 2);
         parallel loop for r in 0..n {
             let s = 0; let p = 1; let mx = -1000; let mn = 1000; let an = -1; let orr = 0; let x = 0;
             let all = true; let any = false;
             for i in 0..m {
                 s += a[r, i]; p *= a[r, i] % 3 + 2; mx = max(mx, a[r, i]); mn = min(a[r, i], mn);
                 an &= a[r, i] + 64; orr = orr | a[r, i]; x ^= a[r, i];
                 all = all && b[r, i]; any = any || !b[r, i];
             }
             o[r, 0] = s as i64; o[r, 1] = p as i64; o[r, 2] = mx as i64; o[r, 3] = mn as i64;
             o[r, 4] = an as i64; o[r, 5] = orr as i64; o[r, 6] = x as i64;
             ob[r, 0] = all; ob[r, 1] = any;
         }
         // Computed independently (Python, the same formulas; the product
         // meets a factor 0 and the and-reduction a 0).
         assert(o[0, 0] == 160 && o[0, 1] == 0 && o[0, 2] == 52 && o[0, 3] == -50, \"row 0\");
         assert(o[0, 4] == 0 && o[0, 5] == -1 && o[0, 6] == 22 && !ob[0, 0] && ob[0, 1], \"row 0 bits\");
         assert(o[299, 0] == 186 && o[299, 3] == -46 && o[299, 6] == 56, \"row 299\");",
        Floats::Exact,
    );
}

#[test]
fn a_body_the_gang_shape_refuses_runs_as_written() {
    // The atomic's old value is used outside the inner loop: only one lane
    // of a gang would have it, so the construct stays one iteration per lane.
    ok(
        "let n = 200; let m = 50; let x = zeros(f32, m); let y = zeros(f32, n); let c = zeros(i32, 1);
         for i in 0..m { x[i] = i as f32 * 0.5; }
         parallel loop for r in 0..n {
             let old = atomic_add(c[0], 1);
             let s = 0.0f32;
             for i in 0..m { s += x[i]; }
             y[r] = s + (old - old) as f32;
         }
         assert(y[0] == 612.5 && y[199] == 612.5 && c[0] == 200, \"sum of x, one add per row\");",
        Floats::Within(1e-6),
    );
    let report = accl::cli::explain_text(
        "t.accl",
        "let n = 200; let m = 50; let x = zeros(f32, m); let y = zeros(f32, n); let c = zeros(i32, 1);
         parallel loop for r in 0..n {
             let old = atomic_add(c[0], 1);
             let s = 0.0f32;
             for i in 0..m { s += x[i]; }
             y[r] = s + old as f32;
         }",
        None,
    )
    .unwrap();
    assert!(
        report.contains("a value only one lane computes"),
        "{report}"
    );
}

#[test]
fn the_explain_report_of_every_example() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "accl"))
        .collect();
    files.sort();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        let report = accl::cli::explain_text(&name, &text, None)
            .unwrap_or_else(|| panic!("{name} does not check"));
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_snapshot_suffix(name.trim_end_matches(".accl"));
        settings.bind(|| insta::assert_snapshot!("explain", report));
    }
}

#[test]
fn the_report_for_a_device_says_what_it_does() {
    let spec = compiler::Spec {
        subgroup_size: 32,
        coarsen: 4,
        ..compiler::Spec::default()
    };
    let report = accl::cli::explain_text(
        "t.accl",
        "let n = 1000; let x = zeros(f32, n); let y = zeros(f32, n); let p = zeros(i32, n + 1);
         parallel loop for i in 0..n { y[i] = 2.0 * x[i] + y[i]; }
         parallel loop for r in 0..n {
             let s = 0.0f32;
             for k in p[r]..p[r + 1] { s += x[k]; }
             y[r] = s;
         }",
        Some(&spec),
    )
    .unwrap();
    assert!(
        report.contains("4 iterations per lane per trip"),
        "{report}"
    );
    assert!(
        report.contains("a team of 32 lanes in one 32-lane subgroup, 8 teams per workgroup, 4 gang iterations at a time"),
        "{report}"
    );
}

#[test]
fn kernels_regions_split_into_parallel_and_serial_parts() {
    // Parallel loops, recognised reductions (every operator), loops that
    // must stay in order (a carried dependence, an indirect write, a
    // scalar carried between iterations), statements between loops, and
    // `kernels loop`.
    ok(
        "let n = 700; let a = zeros(f32, n); let b = zeros(f32, n); let idx = zeros(i32, n); let k = zeros(i32, n);
         for i in 0..n { a[i] = (i % 37) as f32 * 0.5 - 3.0; idx[i] = (i * 7) % n; k[i] = (i * 13) % 101; }
         let s = 0.0f32; let p = 1.0f32; let hi = -100.0f32; let lo = 100.0f32;
         let ia = -1; let io = 0; let ix = 0; let all = true; let any = false;
         kernels copyin(a, idx, k) copy(b) {
             for i in 0..n { b[i] = a[i] * 2.0; }
             for i in 0..n {
                 s += a[i]; p *= 1.0 + a[i] * 0.0001; hi = max(hi, a[i]); lo = min(a[i], lo);
                 ia &= k[i] + 128; io = io | k[i]; ix ^= k[i];
                 all = all && a[i] > -10.0; any = any || a[i] > 10.0;
             }
             for i in 1..n { b[i] = b[i - 1] * 0.5 + b[i]; }
             for i in 0..n { b[idx[i]] = b[idx[i]] + 1.0; }
             for i in 0..n { let t = 0.0f32; t = a[i]; b[i] = b[i] + t; }
             let first = a[3] + 1.0;
             b[0] = first;
         }
         kernels loop for i in 0..n { b[i] = b[i] + 1.0; }
         serial { b[5] = 7.0; }
         // Computed independently (Python with f32 rounding).
         assert(s == 4174.5 && abs(p - 1.5177419) < 1e-4 && hi == 15.0 && lo == -3.0, \"float reductions\");
         assert(ia == 128 && io == 127 && ix == 65 && all && any, \"integer and logical reductions\");
         assert(b[0] == 0.5 && b[1] == -9.5 && b[5] == 7.0 && b[100] == 49.0 && b[699] == 66.5, \"b\");",
        Floats::Within(1e-4),
    );
}

#[test]
fn kernels_parts_are_explained() {
    let report = accl::cli::explain_text(
        "k.accl",
        "let n = 100; let a = zeros(f32, n); let s = 0.0f32;
kernels copy(a) {
    for i in 0..n { a[i] = a[i] * 2.0; }
    for i in 1..n { a[i] = a[i - 1] + 1.0; }
    for i in 0..n { s += a[i]; }
    a[0] = 1.0;
}",
        None,
    )
    .unwrap();
    insta::assert_snapshot!("explain_kernels", report);
}

#[test]
fn loop_auto_inside_a_gang_runs_parallel_only_when_proven() {
    ok(
        "let n = 64; let m = 40; let a = zeros(i64, n, m); let c = zeros(i64, n);
         for r in 0..n { for i in 0..m { a[r, i] = (r * 7 + i * 3) as i64; } }
         parallel loop gang vector_length(8) for r in 0..n {
             let s: i64 = 0;
             loop auto reduction(+: s) for i in 0..m { s += a[r, i]; }
             loop auto for i in 1..m { a[r, i] = a[r, i - 1] + a[r, i]; }
             c[r] = s;
         }
         // Both are sum over i of 7r + 3i: 280r + 2340.
         for r in 0..n { assert(c[r] == 280 * r as i64 + 2340 && a[r, m - 1] == c[r], \"row sums\"); }",
        Floats::Exact,
    );
}

#[test]
fn default_none_with_every_clause_runs() {
    ok(
        "let n = 64; let a = zeros(f32, n); let b = zeros(f32, n);
         for i in 0..n { a[i] = i as f32; }
         data copyin(a) {
             parallel loop default(none) copyout(b) for i in 0..n { b[i] = a[i] * 2.0; }
         }
         assert(b[0] == 0.0 && b[63] == 126.0, \"doubled\");",
        Floats::Exact,
    );
}

#[test]
fn tiled_stencils_match_the_host() {
    ok(
        "let n = 301; let m = 203;
         let A = zeros(f32, n, m); let B = zeros(f32, n, m); let s = 0.0;
         for i in 0..n { for j in 0..m { A[i, j] = ((i * 7 + j * 3) % 17) as f32; } }
         parallel loop tile(32, 4) reduction(+: s) for i in 1..n - 1 {
             for j in 1..m - 1 {
                 B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]);
                 s += B[i, j] as f64;
             }
         }
         parallel loop tile(8) for i in 0..n { for j in 0..m { A[i, j] = B[i, j] * 2.0; } }
         // Computed independently (Python; quarters of integers are exact).
         assert(s == 480783.0 && B[1, 1] == 5.75 && A[150, 100] == 14.0 && A[0, 5] == 0.0, \"stencil\");",
        Floats::Within(1e-12),
    );
}

#[test]
fn cached_sections_read_like_the_array() {
    // A gang caches the window of `x` its rows read (workgroup memory);
    // reads outside the section, a flat loop's cache (ignored) and a cache
    // of an array the kernel writes (ignored) give the same results too.
    ok(
        "const w = 5; let n = 2000;
         let x = zeros(f32, n + 2 * w); let y = zeros(f32, n); let z = zeros(f32, n); let v = zeros(f32, n + 64);
         for i in 0..n + 2 * w { x[i] = ((i * 37) % 101) as f32 * 0.1; }
         parallel loop gang vector_length(64) for r in 0..n / 16 {
             cache(x[r * 16:16 + 2 * w]);
             loop vector for k in 0..16 {
                 let i = r * 16 + k;
                 let s = 0.0f32;
                 for d in 0..2 * w + 1 { s += x[i + d]; }
                 y[i] = s + x[(i * 7) % n];
             }
         }
         parallel loop for i in 0..n { cache(x[i:3]); z[i] = x[i] + x[i + 1] + x[i + 9]; }
         parallel loop gang vector_length(32) for r in 0..n / 32 {
             cache(v[r * 32:32]);
             loop vector for k in 0..32 { v[r * 32 + k] = x[r * 32 + k] * 2.0; }
         }
         // Computed independently (Python, the same formulas).
         assert(abs(y[0] - 52.0) < 1e-4 && abs(y[1999] - 56.9) < 1e-4, \"window sums\");
         assert(abs(z[0] - 6.7) < 1e-5 && abs(z[1999] - 16.0) < 1e-5 && v[1983] == 9.0, \"reads\");",
        Floats::Within(1e-6),
    );
}

#[test]
fn the_report_says_default_present_arrays_must_be_present() {
    let report = accl::cli::explain_text(
        "t.accl",
        "let a = zeros(f32, 8);
         parallel loop default(present) for i in 0..8 { a[i] = 1.0; }
         parallel loop for i in 0..8 { a[i] = 2.0; }",
        None,
    )
    .unwrap();
    let lines: Vec<&str> = report.lines().filter(|l| l.contains("data: `a`")).collect();
    assert_eq!(
        lines,
        [
            "  data: `a` written: `default(present)`: must be on the device already",
            "  data: `a` written: present, else `copy(a)` for this launch",
        ],
        "{report}"
    );
}
