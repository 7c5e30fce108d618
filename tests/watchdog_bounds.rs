//! The loop watchdog leaves loops with a small constant trip bound
//! uncounted (`compiler::bounded`), and still stops the others.

use crate::common;

fn engine(budget: u32) -> accl::Engine {
    let mut e = common::device_engine();
    e.set_print(|_| {});
    e.set_loop_budget(budget);
    e
}

#[test]
fn a_bounded_escape_loop_runs_past_a_small_budget() {
    // 100 iterations per invocation under a budget of 10: counted, this
    // would stop with `accl::device::loop_budget`.
    let src = "let a = zeros(i32, 64);
parallel loop for i in 0..64 {
    let k = 0;
    let x = 0.0f32;
    while k < 100 && x <= 1000.0f32 { x = x + 1.0f32; k += 1; }
    a[i] = k + i;
}
for i in 0..64 { assert(a[i] == 100 + i, \"escape loop\"); }";
    let mut e = engine(10);
    if let Err(err) = e.eval(src) {
        panic!("{}", err.render(100));
    }
}

#[test]
fn a_loop_whose_start_is_not_constant_is_still_counted() {
    // The same loop starting from the invocation's index: no proof, so the
    // budget of 10 stops it.
    let src = "let a = zeros(i32, 64);
parallel loop for i in 0..64 {
    let k = i;
    while k < 100 { k += 1; }
    a[i] = k;
}";
    let mut e = engine(10);
    let err = e.eval(src).expect_err("over budget");
    assert_eq!(err.diags[0].code, "accl::device::loop_budget");
}
