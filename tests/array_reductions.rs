//! `reduction(op: h)` with `h` an array (OpenACC 2.7): every operator and
//! element type, in flat loops, gang loops and regions, starting from
//! values that are not the identity, on the device against the host
//! reference (floats within the reordering tolerance: the lanes' updates
//! land in any order).

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

/// `(operator, element types, update of h[k] with x)`.
const CASES: &[(&str, &[&str], &str)] = &[
    ("+", &["i32", "u32", "i64", "f32", "f64"], "h[k] += x;"),
    ("+", &["i32", "f64"], "h[k] = h[k] + x;"),
    ("+", &["i64", "f32"], "h[k] -= x;"),
    ("*", &["i32", "u32", "i64", "f32", "f64"], "h[k] *= x;"),
    (
        "max",
        &["i32", "u32", "i64", "f32", "f64"],
        "h[k] = max(h[k], x);",
    ),
    (
        "min",
        &["i32", "u32", "i64", "f32", "f64"],
        "h[k] = min(h[k], x);",
    ),
    ("&", &["i32", "u32", "i64"], "h[k] &= x;"),
    ("|", &["i32", "u32", "i64"], "h[k] = h[k] | x;"),
    ("^", &["i32", "u32", "i64"], "h[k] ^= x;"),
];

fn value(ty: &str, op: &str) -> String {
    match (ty, op) {
        // Products of values near 1 stay finite (and exact for integers).
        (_, "*") if ty.starts_with('f') => format!("(1.0 + ((i % 7) as {ty} - 3.0) * 0.001)"),
        (_, "*") => format!("((i % 3) as {ty} + 1 as {ty})"),
        ("f32" | "f64", _) => format!("((i * 37 % 101) as {ty} * 0.25 - 7.0)"),
        ("u32", _) => "((i as u32) * 2654435761u32)".into(),
        _ => format!("((i * 7919 % 2003 - 1000) as {ty})"),
    }
}

#[test]
fn every_operator_and_type_in_a_flat_loop() {
    for (op, types, update) in CASES {
        for ty in *types {
            let x = value(ty, op);
            // The known answer: the same updates in a sequential host loop
            // into `e` (a bug the backends share shows there).
            let expect_update = update.replace("h[", "e[");
            let check = if ty.starts_with('f') {
                format!("assert(abs(h[b] - e[b]) <= 0.0001 as {ty} * max(abs(e[b]), 1.0 as {ty}), \"bin\");")
            } else {
                "assert(h[b] == e[b], \"bin\");".to_string()
            };
            // Few bins for `*` (long products overflow into the same bits
            // on both sides, but keep them readable); 40 bins otherwise.
            ok(
                &format!(
                    "let n = 3000; let h = zeros({ty}, 40); let e = zeros({ty}, 40);
                     for b in 0..40 {{ h[b] = (b + 2) as {ty}; e[b] = h[b]; }}
                     parallel loop reduction({op}: h) for i in 0..n {{
                         let k = (i * 13) % 40; let x = {x}; {update}
                     }}
                     for i in 0..n {{ let k = (i * 13) % 40; let x = {x}; {expect_update} }}
                     for b in 0..40 {{ {check} }}"
                ),
                Floats::Within(1e-5),
            );
        }
    }
}

#[test]
fn gang_loops_and_regions_reduce_arrays() {
    // Updates from `loop vector` lanes and from gang-redundant code.
    ok(
        "let rows = 300; let h = zeros(i32, 16); let g = zeros(f64, 16);
         parallel loop gang vector_length(8) reduction(+: h, g) for r in 0..rows {
             h[r % 16] += 1;
             loop vector for k in 0..r % 11 { h[(r + k) % 16] += k; g[k] += 0.5; }
         }
         // Computed independently (Python, the same loops); g[k] counts the
         // rows with r % 11 > k, halves are exact in f64.
         assert(h[0] == 296 && h[2] == 290 && h[9] == 304 && h[15] == 304, \"h\");
         let total = 0; for b in 0..16 { total += h[b]; }
         assert(total == 4756, \"h total\");
         assert(g[0] == 136.0 && g[3] == 94.5 && g[9] == 13.5 && g[10] == 0.0 && g[15] == 0.0, \"g\");",
        Floats::Within(1e-9),
    );
    ok(
        "let h = zeros(i64, 8);
         parallel num_gangs(4) reduction(max: h) {
             loop gang vector for i in 0..1000 { h[i % 8] = max(h[i % 8], (i * 31 % 997) as i64); }
         }
         // Computed independently (Python, the same formula).
         assert(h[0] == 992 && h[1] == 993 && h[4] == 996 && h[5] == 899 && h[7] == 961, \"maxima\");",
        Floats::Exact,
    );
}

#[test]
fn a_histogram_reduction_equals_the_atomic_one() {
    ok(
        "let n = 200000; let keys = zeros(i32, n); let a = zeros(i32, 256); let b = zeros(i32, 256);
         for i in 0..n { keys[i] = (((i as u32) * 2654435761u32) >> 24u32) as i32; }
         parallel loop reduction(+: a) for i in 0..n { a[keys[i]] += 1; }
         parallel loop for i in 0..n { atomic b[keys[i]] += 1; }
         let same = true; for k in 0..256 { same = same && a[k] == b[k]; }
         assert(same);",
        Floats::Exact,
    );
}
