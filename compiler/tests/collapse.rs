//! Automatic collapse (`compiler::collapse`): which nests become deeper
//! kernels, and which stay sequential inside each iteration. (Device
//! results of collapsed nests against the host reference are in the
//! root crate's device tests and examples.)

mod common;
use common::Source;

/// Levels of the first kernel of `body`, after a common prelude.
fn levels(body: &str) -> usize {
    let src = format!(
        "let a = zeros(f32, 4, 8); let b = zeros(f32, 4); let n = 8; let m = 3;
         fn f(x: i32, y: i32) -> f32 {{ return (x * y) as f32; }}
         {body}"
    );
    Source::new(&src).kernel(0).levels.len()
}

#[test]
fn an_independent_inner_loop_is_collapsed() {
    assert_eq!(
        levels("parallel loop for y in 0..4 { for x in 0..8 { a[y, x] = f(x, y); } }"),
        2
    );
    // Bounds from outside the construct, an inclusive range, locals of the
    // iteration, reads of other arrays, pure builtins, inner sequential loops.
    assert_eq!(
        levels(
            "parallel loop for y in 0..4 { for x in 0..=n - 1 {
                 let t = sqrt(b[y] + 1.0);
                 let k = 0;
                 while k < m { t = t * 0.5; k += 1; }
                 a[y, x] = a[y, x] + t;
             } }"
        ),
        2
    );
}

#[test]
fn dependent_or_unclear_inner_loops_stay_sequential() {
    for body in [
        // Reads what another iteration writes.
        "parallel loop for y in 0..4 { for x in 1..8 { a[y, x] = a[y, x - 1] + 1.0; } }",
        // Every iteration writes one element.
        "parallel loop for y in 0..4 { for x in 0..8 { b[y] = a[y, x]; } }",
        // Accumulates into a local of the outer iteration.
        "parallel loop for y in 0..4 { let s = 0.0f32; for x in 0..8 { s += a[y, x]; } b[y] = s; }",
        // Bounds that depend on the outer variable.
        "parallel loop for y in 0..4 { for x in 0..y { a[y, x] = 1.0; } }",
        // Leaves the loop.
        "parallel loop for y in 0..4 { for x in 0..8 { if a[y, x] > 1.0 { break; } a[y, x] = 2.0; } }",
        // Atomics.
        "parallel loop for y in 0..4 { for x in 0..8 { atomic b[y] += a[y, x]; } }",
        // An index through another array.
        "let idx = zeros(i32, 8); parallel loop for y in 0..4 { for x in 0..8 { a[y, idx[x]] = 1.0; } }",
        // The user chose the mapping.
        "parallel loop seq for y in 0..4 { for x in 0..8 { a[y, x] = 1.0; } }",
        "parallel loop vector_length(64) for y in 0..4 { for x in 0..8 { a[y, x] = 1.0; } }",
    ] {
        assert_eq!(levels(body), 1, "{body}");
    }
}

#[test]
fn an_explicit_collapse_is_kept() {
    assert_eq!(
        levels("parallel loop collapse(2) for y in 0..4 { for x in 0..8 { a[y, x] = 1.0; } }"),
        2
    );
}

#[test]
fn a_perfect_nest_collapses_to_three_levels_at_most() {
    let src = "let c = zeros(f32, 2, 3, 4);
               parallel loop for i in 0..2 { for j in 0..3 { for k in 0..4 { c[i, j, k] = 1.0; } } }";
    assert_eq!(Source::new(src).kernel(0).levels.len(), 3);
}
