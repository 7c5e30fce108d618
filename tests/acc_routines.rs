//! OpenACC runtime routines on both backends: `acc_async_test(q)` and
//! `acc_async_test_all()` (true once the queue's work is done, which then
//! lands as `wait` does), `acc_on_device()` (true only in code running on
//! a Vulkan device).

mod common;
use common::run;

const SRC: &str = "let n = 1000; let x = zeros(f32, n); let on = zeros(bool, 4);
enter data copyin(x);
parallel loop present(x) async(1) for i in 0..n { x[i] = i as f32 * 2.0; }
update self(x) async(1);
let polls = 0;
while !acc_async_test(1) { polls += 1; }
let idle = acc_async_test(7);
let all = acc_async_test_all();
parallel loop for i in 0..4 { on[i] = acc_on_device(); }
let host_on = acc_on_device();
let last = x[n - 1];";

#[test]
fn async_tests_and_on_device_on_both_backends() {
    for device in [false, true] {
        let r = run(SRC, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let v = |n: &str| r.engine.get_value(n).unwrap().to_string();
        // Once the test says done, the host reads the copy without a wait
        // (no race reported) and sees the device's values.
        assert_eq!(v("last"), "1998.0");
        assert_eq!(v("idle"), "true", "a queue never used has nothing left");
        assert_eq!(v("all"), "true");
        assert_eq!(v("host_on"), "false");
        let on = r
            .engine
            .array("on")
            .unwrap()
            .data()
            .get(0)
            .unwrap()
            .to_string();
        assert_eq!(on, device.to_string(), "device: {device}");
    }
}
