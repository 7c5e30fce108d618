//! Which loops the watchdog need not count (`compiler::bounded`).

mod common;
use common::Source;
use compiler::bounded::trip_bound;
use compiler::kir::{Block, Function, StmtKind};

/// The trip bound of the first loop at the top of the kernel body.
fn bound_of(src: &str) -> Option<i128> {
    let k = Source::new(src).kernel(0);
    let f = &k.entry;
    find(f, &f.body)
}

fn find(f: &Function, b: &Block) -> Option<i128> {
    for (i, s) in b.iter().enumerate() {
        match &s.kind {
            StmtKind::Loop { body, continuing } => return trip_bound(f, &b[..i], body, continuing),
            StmtKind::If { then, els, .. } => {
                if let Some(n) = find(f, then).or_else(|| find(f, els)) {
                    return Some(n);
                }
            }
            _ => {}
        }
    }
    None
}

fn kernel(body: &str) -> String {
    format!("let out = zeros(i32, 64);\nparallel loop for i in 0..64 {{\n{body}\nout[i] = k;\n}}")
}

#[test]
fn an_escape_loop_with_a_constant_bound_is_bounded() {
    let src = kernel(
        "let k = 0; let x = 0.5f32;\nwhile k < 255 && x * x <= 4.0f32 { x = x * x + 0.25f32; k += 1; }",
    );
    assert_eq!(bound_of(&src), Some(255));
    let src = kernel("let k = 3; while k <= 30 { k += 2; }");
    assert_eq!(bound_of(&src), Some(14));
    let src = kernel("let k = 0; for j in 0..100 { k += j; }");
    assert_eq!(bound_of(&src), Some(100));
}

#[test]
fn loops_that_may_not_advance_or_start_anywhere_are_not() {
    // The step is conditional.
    assert_eq!(
        bound_of(&kernel("let k = 0; while k < 255 { if i > 3 { k += 1; } }")),
        None
    );
    // A `continue` may skip the step.
    assert_eq!(
        bound_of(&kernel(
            "let k = 0; while k < 255 { if i > 3 { continue; } k += 1; }"
        )),
        None
    );
    // The start is not a constant.
    assert_eq!(
        bound_of(&kernel("let k = i; while k < 255 { k += 1; }")),
        None
    );
    // The step goes the wrong way.
    assert_eq!(
        bound_of(&kernel("let k = 0; while k < 255 { k -= 1; }")),
        None
    );
    // Set again inside the loop.
    assert_eq!(
        bound_of(&kernel("let k = 0; while k < 255 { k += 1; k = k * 1; }")),
        None
    );
    // A bound that is not a constant.
    assert_eq!(
        bound_of(&kernel("let k = 0; while k < i { k += 1; }")),
        None
    );
    let src = kernel("let k = 0; for j in 0..i { k += j; }");
    assert_eq!(bound_of(&src), None);
}

/// Which kernels llvmpipe's hidden cap on loop back-edges may cut short
/// (they get the guard that reports it): `compiler::plan::may_reach_loop_cap`.
#[test]
fn kernels_that_may_reach_the_drivers_loop_cap() {
    let reach = |src: &str| compiler::plan::may_reach_loop_cap(&Source::new(src).kernel(0));
    // Flat, no loop: each invocation gets a handful of iterations.
    assert!(!reach(
        "let a = zeros(f32, 64); parallel loop for i in 0..64 { a[i] = 1.0; }"
    ));
    // Flat with a small constant-bound escape loop (Mandelbrot).
    assert!(!reach(&kernel(
        "let k = 0; let x = 0.5f32;\nwhile k < 255 && x * x <= 4.0f32 { x = x * x + 0.25f32; k += 1; }"
    )));
    // Nested constant bounds past the margin.
    assert!(reach(&kernel(
        "let k = 0; for y in 0..10000 { for z in 0..100 { k += 1; } }"
    )));
    // A loop with no bound the compiler can prove.
    assert!(reach(&kernel("let k = 0; while k < i * 1000 { k += 1; }")));
    // One lane walks every iteration itself.
    assert!(reach(
        "let a = zeros(f32, 64); serial loop for i in 0..64 { a[i] = 1.0; }"
    ));
}
