//! Synchronous kernels complete lazily: the host goes on after a
//! synchronous construct and waits only where it would see the difference
//! (a copy to the host, a reduction's variable, `clock()`, async work, the
//! end of an input). Every program here must give what the host reference
//! gives, which runs each construct to completion at once. On lavapipe
//! with the validation layer on.

use crate::common;
use common::{device_engine, same_as_host, Floats};

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
}

#[test]
fn kernels_in_a_row_then_a_copy_to_the_host() {
    let (_, dev) = same_as_host(
        "let n = 4096;
         let a = zeros(f32, n);
         let b = zeros(f32, n);
         data copy(a) copyout(b) {
             for k in 0..100 {
                 parallel loop present(a) for i in 0..n { a[i] = a[i] + (k as f32); }
             }
             parallel loop present(a, b) for i in 0..n { b[i] = a[i] * 2.0; }
             update self(a[0:16]);
             let early = a[3];
             parallel loop present(a) for i in 0..n { a[i] = a[i] - 1.0; }
         }",
        Floats::Exact,
    );
    ok(&dev);
    // a[i] = 0 + 1 + .. + 99 = 4950, then b = 2a, then a - 1.
    let e = &dev.engine;
    assert_eq!(e.get_array::<f32>("a").unwrap().0[4095], 4949.0);
    assert_eq!(e.get_array::<f32>("b").unwrap().0[0], 9900.0);
}

#[test]
fn a_reduction_lands_when_its_variable_is_read() {
    let (_, dev) = same_as_host(
        "let a = arange(f32, 1000.0);
         let s = 5.0f32;
         enter data copyin(a);
         parallel loop present(a) reduction(+: s) for i in 0..1000 { s += a[i]; }
         let read = s * 2.0;
         // Two pending results into one variable land in launch order.
         let m = 1.0f32;
         parallel loop present(a) reduction(max: m) for i in 0..1000 { m = max(m, a[i]); }
         parallel loop present(a) reduction(+: m) for i in 0..10 { m += a[i]; }
         let got_m = m;
         // A compound assignment reads the pending result first.
         let c = 1;
         parallel loop reduction(+: c) for i in 0..50 { c += i; }
         c += 1000;
         // So does a kernel that takes the variable as a scalar.
         let t = 0.0f32;
         parallel loop present(a) reduction(+: t) for i in 0..100 { t += a[i]; }
         let b = zeros(f32, 4);
         parallel loop for i in 0..4 { b[i] = t + i as f32; }
         // And a later reduction into it whose result is not deferred.
         let u = 2.0f32;
         parallel loop present(a) reduction(*: u) for i in 0..3 { u *= 2.0; }
         exit data delete(a);",
        Floats::Within(1e-5),
    );
    ok(&dev);
    // The known answers: 5 + (0 + .. + 999); max 999 then + (0 + .. + 9);
    // 1 + (0 + .. + 49) + 1000; 0 + .. + 99; 2 * 2^3.
    let e = &dev.engine;
    assert_eq!(e.get::<f32>("read"), Some(999_010.0));
    assert_eq!(e.get::<f32>("got_m"), Some(1044.0));
    assert_eq!(e.get::<i32>("c"), Some(2226));
    assert_eq!(
        e.get_array::<f32>("b").unwrap().0,
        [4950.0, 4951.0, 4952.0, 4953.0]
    );
    assert_eq!(e.get::<f32>("u"), Some(16.0));
}

#[test]
fn a_write_that_replaces_the_variable_drops_the_pending_result() {
    let (_, dev) = same_as_host(
        "let a = arange(f32, 256.0);
         let s = 0.0f32;
         let sums = zeros(f32, 8);
         for k in 0..8 {
             s = 0.0f32;
             parallel loop reduction(+: s) for i in 0..256 { s += a[i] * (k as f32); }
             if k % 2 == 0 { sums[k] = s; }
         }
         s = 7.0f32;",
        Floats::Exact,
    );
    ok(&dev);
    // Even k: k * (0 + .. + 255) = 32640 k; the last write wins.
    let e = &dev.engine;
    let sums = e.get_array::<f32>("sums").unwrap().0;
    assert_eq!(sums, [0.0, 0.0, 65280.0, 0.0, 130560.0, 0.0, 195840.0, 0.0]);
    assert_eq!(e.get::<f32>("s"), Some(7.0));
}

#[test]
fn reductions_into_a_function_local_land_before_it_returns_its_value() {
    let (_, dev) = same_as_host(
        "fn total(a: f32[], n: i32) -> f32 {
             let s = 0.0f32;
             parallel loop present(a) reduction(+: s) for i in 0..n { s += a[i]; }
             let unused = 0.0f32;
             parallel loop present(a) reduction(+: unused) for i in 0..n { unused += 1.0; }
             return s;
         }
         let a = arange(f32, 300.0);
         enter data copyin(a);
         let x = total(a, 300);
         let y = total(a, 10) + total(a, 20);
         exit data delete(a);",
        Floats::Exact,
    );
    ok(&dev);
    // 0 + .. + 299; (0 + .. + 9) + (0 + .. + 19).
    let e = &dev.engine;
    assert_eq!(e.get::<f32>("x"), Some(44850.0));
    assert_eq!(e.get::<f32>("y"), Some(235.0));
}

#[test]
fn async_work_sees_the_synchronous_kernels_before_it() {
    let (_, dev) = same_as_host(
        "let n = 2048;
         let a = zeros(f32, n);
         let b = zeros(f32, n);
         data copy(a, b) {
             for k in 0..20 {
                 parallel loop present(a) for i in 0..n { a[i] = a[i] + 1.0; }
             }
             parallel loop async(1) present(a, b) for i in 0..n { b[i] = a[i] * 3.0; }
             update self(b) async(1);
             wait(1);
         }",
        Floats::Exact,
    );
    ok(&dev);
    // Twenty increments, then b = 3a.
    let b = dev.engine.get_array::<f32>("b").unwrap().0;
    assert!(b.iter().all(|&v| v == 60.0), "{:?}", &b[..4]);
}

#[test]
fn a_reduction_not_read_in_its_input_lands_at_the_end() {
    let mut e = device_engine();
    e.eval("let a = arange(f32, 64.0); let s = 1.0f32; enter data copyin(a);")
        .unwrap();
    e.eval("parallel loop present(a) for i in 0..64 { a[i] = a[i] * 2.0; }")
        .unwrap();
    e.eval("parallel loop present(a) reduction(+: s) for i in 0..64 { s += a[i]; }")
        .unwrap();
    assert_eq!(e.get::<f32>("s"), Some(4033.0));
    e.eval("exit data copyout(a);").unwrap();
    assert_eq!(e.eval("a[63]").unwrap().unwrap().to_string(), "126");
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn a_watchdog_fault_of_a_lazy_kernel_is_reported_at_its_loop() {
    let mut e = device_engine();
    let out = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let o = out.clone();
    e.set_print(move |s| o.borrow_mut().push_str(s));
    // Under llvmpipe's own cap of 65,535 iterations of one loop.
    e.set_loop_budget(10_000);
    let err = e
        .eval(
            "let a = zeros(i32, 64);
             enter data copyin(a);
             parallel loop present(a) for i in 0..64 {
                 let k = 0;
                 while k >= 0 { k = (k + 1) % 7; }
                 a[i] = k;
             }
             let after = 1;
             println(after);",
        )
        .expect_err("the watchdog stops the kernel");
    assert_eq!(err.diags[0].code, "accl::device::loop_budget");
    let text = err.render(100);
    assert!(text.contains("while k >= 0"), "{text}");
    // The host went on past the construct; the fault is found by the wait
    // at the end of the input. On llvmpipe this kernel may stop and resume
    // over several dispatches (docs/reliability.md), each waited for: the
    // fault is found at the construct.
    let llvmpipe = e.devices().first().is_some_and(|d| d.contains("llvmpipe"));
    assert_eq!(out.borrow().trim(), if llvmpipe { "" } else { "1" });
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn an_input_ends_with_its_kernels_done() {
    let mut e = device_engine();
    e.set_print(|_| {});
    // Under llvmpipe's own cap of 65,535 iterations of one loop.
    e.set_loop_budget(10_000);
    e.eval(
        "fn bump(a: f32[]) -> i32 {
             parallel loop present(a) for i in 0..64 { a[i] = a[i] + 1.0; }
             return 1;
         }
         fn endless(a: f32[]) -> i32 {
             parallel loop present(a) for i in 0..64 {
                 let k = 0;
                 while k >= 0 { k = (k + 1) % 5; }
                 a[i] = k as f32;
             }
             return 2;
         }
         let a = zeros(f32, 64);
         enter data copyin(a);",
    )
    .unwrap();
    e.eval("parallel loop present(a) for i in 0..64 { a[i] = a[i] * 3.0; }")
        .unwrap();
    assert!(e.pending().is_empty(), "{:?}", e.pending());
    assert_eq!(e.eval_as::<i32>("bump(a)").unwrap(), 1);
    // A kernel launched by the input's value is waited for by that input:
    // its fault is this input's error, not the next one's.
    let err = e.eval("endless(a)").expect_err("the watchdog stops it");
    assert_eq!(err.code(), "accl::device::loop_budget");
    e.eval("exit data delete(a);").unwrap();
    assert!(e.take_validation_messages().is_empty());
}
