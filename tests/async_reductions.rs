//! `async` reductions: the launch does not wait; the result lands in the
//! variable when the host waits for the queue (OpenACC), and a host read or
//! write of the variable before that is a race. On lavapipe with the
//! validation layer on; values against the host reference, which runs
//! constructs at once.

use crate::common;
use common::{device_engine, same_as_host, Floats};

const TOL: Floats = Floats::Within(1e-5);

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
}

/// The error code of `src` on the device.
fn device_error(src: &str) -> (String, String) {
    let mut e = device_engine();
    e.set_print(|_| {});
    let err = e.eval(src).expect_err("expected a race");
    assert!(e.take_validation_messages().is_empty());
    (err.diags[0].code.to_string(), err.render(100))
}

#[test]
fn an_async_reduction_lands_at_the_wait_for_its_queue() {
    let (_, dev) = same_as_host(
        "let a = arange(f32, 1000.0);
         let s = 5.0f32;
         let m = 0.0f32;
         parallel loop async(1) reduction(+: s) reduction(max: m) for i in 0..1000 {
             s += a[i];
             m = max(m, a[i] * 2.0);
         }
         let t = 0;
         parallel loop async(2) reduction(+: t) for i in 0..77 { t += i; }
         wait(1);
         let got_s = s;
         let got_m = m;
         wait(2);
         let got_t = t;",
        TOL,
    );
    ok(&dev);
    // 5 + (0 + .. + 999), 2 * 999, 0 + .. + 76.
    let e = &dev.engine;
    assert_eq!(e.get::<f32>("got_s"), Some(499_505.0));
    assert_eq!(e.get::<f32>("got_m"), Some(1998.0));
    assert_eq!(e.get::<i32>("got_t"), Some(2926));
}

#[test]
fn reductions_launched_in_a_loop_land_in_order_at_one_wait() {
    let (_, dev) = same_as_host(
        "let a = arange(i64, 100);
         let s = 1i64;
         for k in 0..4 {
             parallel loop async(3) reduction(+: s) for i in 0..100 { s += a[i] * (k as i64 + 1); }
         }
         wait;
         let got = s;",
        Floats::Exact,
    );
    ok(&dev);
    // 1 + (1 + 2 + 3 + 4) * (0 + .. + 99).
    assert_eq!(dev.engine.get::<i64>("got"), Some(49_501));
}

#[test]
fn a_reduction_not_waited_for_lands_at_the_end_of_the_input() {
    let mut e = device_engine();
    e.eval("let a = arange(f32, 64.0); let s = 0.0f32;")
        .unwrap();
    e.eval("parallel loop async(1) reduction(+: s) for i in 0..64 { s += a[i]; }")
        .unwrap();
    assert_eq!(e.eval("s").unwrap().unwrap().to_string(), "2016");
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn reading_the_variable_before_the_wait_is_a_race() {
    let (code, text) = device_error(
        "let a = arange(f32, 64.0); let s = 0.0f32;
         parallel loop async(1) reduction(+: s) for i in 0..64 { s += a[i]; }
         let early = s * 2.0;
         wait(1);",
    );
    assert_eq!(code, "accl::race::host", "{text}");
    assert!(text.contains("reads `s`"), "{text}");
    assert!(text.contains("wait(1);"), "{text}");
}

#[test]
fn writing_the_variable_before_the_wait_is_a_race() {
    let (code, text) = device_error(
        "let a = arange(f32, 64.0); let s = 0.0f32;
         parallel loop async(1) reduction(+: s) for i in 0..64 { s += a[i]; }
         s = 1.0;
         wait(1);",
    );
    assert_eq!(code, "accl::race::host", "{text}");
    assert!(text.contains("writes `s`"), "{text}");
}

#[test]
fn a_wait_for_another_queue_does_not_land_it() {
    let (code, text) = device_error(
        "let a = arange(f32, 64.0); let s = 0.0f32;
         parallel loop async(1) reduction(+: s) for i in 0..64 { s += a[i]; }
         wait(2) async(1);
         wait(2);
         let early = s;",
    );
    assert_eq!(code, "accl::race::host", "{text}");
}

#[test]
fn a_reduction_into_a_local_of_a_function_that_returns_first_is_dropped() {
    // The function's variable is gone before any wait; the engine goes on.
    let (_, dev) = same_as_host(
        "fn partial(a: f32[]) -> f32 {
             let s = 0.0f32;
             parallel loop async(1) reduction(+: s) for i in 0..16 { s += a[i]; }
             return 1.0;
         }
         fn waited(a: f32[]) -> f32 {
             let s = 0.0f32;
             parallel loop async(1) reduction(+: s) for i in 0..16 { s += a[i]; }
             wait(1);
             return s;
         }
         let a = arange(f32, 16.0);
         let x = partial(a);
         wait;
         let y = waited(a);",
        TOL,
    );
    ok(&dev);
    let e = &dev.engine;
    assert_eq!(e.get::<f32>("x"), Some(1.0));
    assert_eq!(e.get::<f32>("y"), Some(120.0));
}

#[test]
fn in_check_mode_an_async_reduction_is_waited_for_at_once() {
    let mut e = device_engine();
    e.set_checks(true);
    e.eval(
        "let a = arange(f32, 64.0); let s = 0.0f32;
         parallel loop async(1) reduction(+: s) for i in 0..64 { s += a[i]; }
         let now = s;",
    )
    .unwrap();
    assert_eq!(e.eval("now").unwrap().unwrap().to_string(), "2016");
}
