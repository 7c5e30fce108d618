//! Checker diagnostics that name what the user wrote, rendered as the user
//! sees them (insta snapshots of `render_plain` at 80 columns).

use crate::common::rendered_failure as fail;
use insta::assert_snapshot;

#[test]
fn a_loop_nest_too_shallow_names_its_clause() {
    let tile = fail(
        "let a = zeros(f32, 8, 8);
parallel loop tile(2, 2, 2) for j in 0..8 {
    for i in 0..8 { a[j, i] = 1.0; }
}",
    );
    assert!(tile.contains("`tile` with 3 sizes"), "{tile}");
    assert_snapshot!("tile", tile);
    let collapse = fail(
        "let a = zeros(f32, 8, 8);
parallel loop collapse(3) copy(a) for j in 0..8 {
    for i in 0..8 { a[j, i] = 1.0; }
}",
    );
    assert!(collapse.contains("`collapse(3)`"), "{collapse}");
    assert_snapshot!("collapse", collapse);
}

#[test]
fn a_literal_takes_the_other_operands_type_on_either_side() {
    // `m[0]` is f32, so both products are f32 whichever side the literal is
    // on, and the destination's f64 is what differs.
    let left = fail("let m = zeros(f32, 4);\nlet x: f64 = 0.5 * m[0];");
    let right = fail("let m = zeros(f32, 4);\nlet x: f64 = m[0] * 0.5;");
    assert!(left.contains("expected `f64`, found `f32`"), "{left}");
    assert!(right.contains("expected `f64`, found `f32`"), "{right}");
    assert_snapshot!("literal_on_the_left", left);
    // An f32 destination takes both orders.
    let mut e = accl::Engine::new();
    e.eval(
        "let m = zeros(f32, 4); m[0] = 3.0; let p: f32 = -0.5 * m[0]; let q: f32 = m[0] * -0.5;",
    )
    .unwrap();
    assert_eq!(e.get::<f32>("p"), Some(-1.5));
    assert_eq!(e.get::<f32>("q"), Some(-1.5));
}
