//! Checker diagnostics that name what the user wrote, rendered as the user
//! sees them (insta snapshots of `render_plain` at 80 columns).

use insta::assert_snapshot;

fn fail(src: &str) -> String {
    let mut e = accl::Engine::new();
    e.set_print(|_| {});
    match e.eval_source("test.accl", src) {
        Ok(_) => panic!("expected an error from:\n{src}"),
        Err(err) => lang::diag::render_plain(&err.source, &err.diags, 80),
    }
}

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
