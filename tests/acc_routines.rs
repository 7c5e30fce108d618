//! OpenACC runtime routines on both backends: `acc_async_test(q)` and
//! `acc_wait_any`, `acc_memcpy_device`, `acc_get_device_type`,
//! `acc_get_property(_string)`, `set device_type(..)`, and
//! `acc_async_test_all()` (true once the queue's work is done, which then
//! lands as `wait` does), `acc_on_device()` (true only in code running on
//! a Vulkan device), and the data and wait routines (`acc_copyin(a)` and
//! the rest), which are the directives they equal.

use crate::common;
use common::{run, values_on_both};

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

const COPY: &str =
    "let n = 64; let a = zeros(f32, n); let b = full(f32, -1.0, n); let m = zeros(f32, 8, 8);
for i in 0..n { a[i] = i as f32 * 0.5; }
enter data copyin(a) create(b, m);
acc_memcpy_device(b, a);
acc_memcpy_device(m, b);
acc_memcpy_device(a, a);
parallel loop present(b) for i in 0..n { b[i] = b[i] * 2.0; }
update self(b, m);
let stale = a[3] == 1.5;
exit data delete(a, b, m);";

#[test]
fn memcpy_device_copies_on_the_device_and_agrees_with_the_host() {
    let (_, dev) = common::same_as_host(COPY, common::Floats::Exact);
    let b = dev.engine.get_array::<f32>("b").unwrap().0;
    assert_eq!(b[5], 5.0, "b = 2 * a, copied on the device");
    let m = dev.engine.get_array::<f32>("m").unwrap();
    assert_eq!((m.0[9], m.1.as_slice()), (4.5, &[8usize, 8][..]));
    // Not present, different sizes: the same error on both backends.
    for (src, code) in [
        (
            "let a = zeros(f32, 4); let b = zeros(f32, 4); enter data copyin(a); acc_memcpy_device(b, a);",
            "accl::run::not_present",
        ),
        (
            "let a = zeros(f32, 4); let b = zeros(f32, 5); enter data copyin(a, b); acc_memcpy_device(b, a);",
            "accl::run::size_mismatch",
        ),
        (
            "let a = zeros(f32, 8); let b = zeros(f32, 8); enter data copyin(a, b[0:4]); acc_memcpy_device(b, a);",
            "accl::run::not_present",
        ),
    ] {
        common::same_failure(src, code);
    }
}

/// `acc_memcpy_device` between sections: thirds of one array into two
/// others and back (the V&V test's pattern), a column of a matrix into a
/// row of another, a section into another section of the same device copy
/// (overlapping: the copy reads before it writes), and a section into a
/// second present section of the same array.
const COPY_SECTIONS: &str = "const n = 100;
let h = zeros(f64, 3 * n);
for x in 0..3 * n { h[x] = x as f64; }
let a = zeros(f64, n); let b = zeros(f64, n);
acc_copyin(h);
enter data create(a[0:n], b[0:n]);
acc_memcpy_device(a, h[n:n]);
acc_memcpy_device(b, h[2 * n:n]);
acc_memcpy_device(h[0:n], b);
exit data copyout(a[0:n], b[0:n]);
acc_copyout(h);
let m = zeros(i32, 4, 5); let t = zeros(i32, 3, 4);
for i in 0..4 { for j in 0..5 { m[i, j] = i * 10 + j; } }
enter data copyin(m) create(t);
acc_memcpy_device(t[1:1, 0:4], m[0:4, 2:1]);
exit data copyout(t) delete(m);
let s = zeros(i32, 10);
for i in 0..10 { s[i] = i; }
enter data copyin(s);
acc_memcpy_device(s[2:6], s[0:6]);
exit data copyout(s);
let p = zeros(f32, 8);
for i in 0..8 { p[i] = i as f32; }
enter data copyin(p[0:4], p[4:4]);
acc_memcpy_device(p[4:4], p[0:4]);
for i in 0..8 { p[i] = -1.0; }
exit data copyout(p[0:4], p[4:4]);";

#[test]
fn memcpy_device_copies_between_sections() {
    let (_, dev) = common::same_as_host(COPY_SECTIONS, common::Floats::Exact);
    let get = |n: &str| dev.engine.get_array::<f64>(n).unwrap().0;
    let (a, b, h) = (get("a"), get("b"), get("h"));
    for x in 0..100 {
        assert_eq!(a[x], (100 + x) as f64, "a[{x}]");
        assert_eq!(b[x], (200 + x) as f64, "b[{x}]");
        assert_eq!(h[x], (200 + x) as f64, "h[{x}]");
        assert_eq!(h[100 + x], (100 + x) as f64, "h[100 + {x}] unchanged");
    }
    let t = dev.engine.get_array::<i32>("t").unwrap().0;
    assert_eq!(&t[4..8], &[2, 12, 22, 32], "column 2 of m into row 1 of t");
    assert!(t[..4].iter().chain(&t[8..]).all(|&v| v == 0), "{t:?}");
    let s = dev.engine.get_array::<i32>("s").unwrap().0;
    assert_eq!(
        s,
        vec![0, 1, 0, 1, 2, 3, 4, 5, 8, 9],
        "memmove, not a smear"
    );
    let p = dev.engine.get_array::<f32>("p").unwrap().0;
    assert_eq!(p, vec![0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0]);
}

#[test]
fn memcpy_device_section_errors_name_the_side() {
    for (src, code, side) in [
        // The source section is not present (only another third is).
        (
            "let h = zeros(f64, 30); let a = zeros(f64, 10); enter data copyin(h[0:10]) create(a); acc_memcpy_device(a, h[10:10]);",
            "accl::run::not_present",
            "`h[10:10]` is not present",
        ),
        // The destination section is not present.
        (
            "let h = zeros(f64, 30); let a = zeros(f64, 10); enter data copyin(h[0:10]) create(a); acc_memcpy_device(h[20:10], a);",
            "accl::run::not_present",
            "`h[20:10]` is not present",
        ),
        // A section across two present sections lies inside neither.
        (
            "let h = zeros(f64, 30); let a = zeros(f64, 10); enter data copyin(h[0:10], h[10:20]) create(a); acc_memcpy_device(a, h[5:10]);",
            "accl::run::not_present",
            "`h[5:10]` is not present",
        ),
        (
            "let h = zeros(f64, 30); let a = zeros(f64, 10); enter data copyin(h, a); acc_memcpy_device(a, h[0:11]);",
            "accl::run::size_mismatch",
            "`a` has 10 elements and `h[0:11]` 11",
        ),
        (
            "let m = zeros(f32, 4, 4); let a = zeros(f32, 3); enter data copyin(m, a); acc_memcpy_device(a, m[0:4, 1:1]);",
            "accl::run::size_mismatch",
            "`a` has 3 elements and `m[0:4, 1:1]` 4",
        ),
    ] {
        let (h, d) = common::same_failure(src, code);
        for r in [h, d] {
            let e = r.result.unwrap_err();
            assert!(e.diags[0].message.contains(side), "{}", e.render(100));
        }
    }
}

#[test]
fn wait_any_returns_a_finished_queue_and_lands_its_results() {
    let src = "let n = 256; let x = zeros(i32, n); let y = zeros(i32, n); let qs = zeros(i64, 2);
        qs[0] = 3; qs[1] = 5;
        enter data create(x, y);
        parallel loop present(x) async(3) for i in 0..n { x[i] = i * 3; }
        update self(x) async(3);
        parallel loop present(y) async(5) for i in 0..n { y[i] = i * 5; }
        update self(y) async(5);
        let first = acc_wait_any(qs);
        let rest = zeros(i64, 1);
        rest[0] = qs[1 - first];
        let second = acc_wait_any(rest);
        let none = acc_wait_any(zeros(i32, 0));
        let sum = x[n - 1] + y[n - 1];";
    for device in [false, true] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let v = |n: &str| r.engine.get_value(n).unwrap().to_string();
        assert!(["0", "1"].contains(&v("first").as_str()));
        assert_eq!(v("second"), "0");
        assert_eq!(v("none"), "-1");
        // Both queues' copies landed without a `wait`: reading them is no
        // race (the device backend would report one).
        assert_eq!(v("sum"), (255 * 3 + 255 * 5).to_string(), "device {device}");
    }
}

#[test]
fn device_type_and_properties_describe_the_device() {
    let src = r#"let kind = acc_get_device_type();
        let name = acc_get_property_string(0, "name");
        let vendor = acc_get_property_string(0, "vendor");
        let driver = acc_get_property_string(0, "driver");
        let mem = acc_get_property(0, "memory");"#;
    for (device, kind) in [(false, "host"), (true, "cpu")] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let e = &r.engine;
        assert_eq!(e.get_str("kind").as_deref(), Some(kind));
        assert!(!e.get_str("name").unwrap().is_empty());
        assert!(!e.get_str("driver").unwrap().is_empty());
        if device {
            // lavapipe: Mesa's vendor id.
            assert_eq!(e.get_str("vendor").as_deref(), Some("Mesa"));
            assert!(e.get_str("name").unwrap().contains("llvmpipe"));
        }
        assert!(e.get::<i64>("mem").unwrap() > 0);
        for (bad, code) in [
            (
                r#"acc_get_property(0, "colour");"#,
                "accl::run::bad_property",
            ),
            (
                r#"acc_get_property_string(9, "name");"#,
                "accl::run::bad_device",
            ),
        ] {
            let r = run(bad, device);
            assert_eq!(r.result.as_ref().unwrap_err().code(), code);
        }
    }
}

#[test]
fn set_device_type_chooses_a_device_of_that_kind() {
    for (device, kind) in [(false, "host"), (true, "cpu")] {
        let src = format!(
            "set device_type({kind}); let k = acc_get_device_type(); set device_type(any) device_num(0); let n = acc_get_device_num();"
        );
        let r = run(&src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        assert_eq!(r.engine.get_str("k").as_deref(), Some(kind));
        assert_eq!(r.engine.get::<i32>("n"), Some(0));
        // No GPU here (lavapipe is a CPU driver; the host reference is host).
        let r = run("set device_type(gpu);", device);
        let e = r.result.as_ref().unwrap_err();
        assert_eq!(e.code(), "accl::run::bad_device");
        assert!(e.to_string().contains("no `gpu` device"), "{e}");
    }
}

#[test]
fn the_host_is_a_device_type_of_every_engine() {
    // On a Vulkan engine the host becomes current: constructs then run as
    // `if(false)` makes them, on the host arrays, moving nothing; the
    // device copy of `a` keeps its zeros and comes back at the exit.
    let src = "let a = zeros(f32, 8); let b = zeros(f32, 8);
enter data copyin(a);
set device_type(host);
let t = acc_get_device_type();
parallel loop present(a) copyout(b) for i in 0..8 { a[i] = 1.0; b[i] = 2.0; }
let here = false;
serial copy(here) { here = acc_on_device(acc_device_host); }
let host_a = a[3];
acc_set_device_type(\"any\");
let t2 = acc_get_device_type();
acc_set_device_type(\"host\");
let t3 = acc_get_device_type();
set device_type(cpu);
exit data copyout(a);
assert(t == \"host\" && t2 == \"cpu\" && t3 == \"host\" && here, \"the host, then lavapipe\");
assert(host_a == 1.0 && a[3] == 0.0 && b[5] == 2.0, \"ran on the host arrays\");";
    let r = run(src, true);
    r.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    // On the host reference the host is its one device, of type host.
    let r = run(
        "set device_type(host); let t = acc_get_device_type();",
        false,
    );
    assert_eq!(r.engine.get_str("t").as_deref(), Some("host"));
    let r = run("set device_type(host) device_num(1);", false);
    assert_eq!(r.result.unwrap_err().code(), "accl::run::bad_device");
    // There is one host: a second one is not there on a Vulkan engine
    // either.
    let r = run("set device_type(host) device_num(1);", true);
    assert_eq!(r.result.unwrap_err().code(), "accl::run::bad_device");
    let r = run("acc_set_device_type(\"tpu\");", true);
    assert_eq!(
        r.result.unwrap_err().code(),
        "accl::device::bad_device_type"
    );
}

#[test]
fn data_and_wait_routines_are_the_directives_they_equal() {
    // Reference counts, finalize, async queues and a wait between queues,
    // with the known answers asserted in the script, on both backends.
    let src = "let n = 64;
let a = zeros(f32, n);
let b = zeros(f32, n);
for i in 0..n { a[i] = i as f32; }
acc_copyin(a);
acc_copyin(a);
acc_create_async(b, 1);
parallel loop present(a, b) async(1) for i in 0..n { b[i] = 2.0 * a[i]; }
acc_wait_async(1, 2);
parallel loop present(b) async(2) for i in 0..n { b[i] = b[i] + 1.0; }
acc_update_self_async(b, 2);
acc_wait(2);
assert(b[n - 1] == 2.0 * (n - 1) as f32 + 1.0, \"b after the queues\");
for i in 0..n { a[i] = -1.0; }
acc_update_device(a);
parallel loop present(a, b) for i in 0..n { b[i] = a[i]; }
acc_copyout(b);
assert(b[0] == -1.0, \"b copied out\");
acc_delete(a);
let still = acc_is_present(a);
acc_copyout_finalize(a);
let gone = !acc_is_present(a);
assert(still && gone, \"reference counts\");
acc_create(b);
acc_delete_finalize_async(b, 3);
acc_wait_all_async(4);
acc_wait_all();
let b_gone = !acc_is_present(b);";
    let (_, dev) = common::same_as_host(src, common::Floats::Exact);
    let v = |n: &str| dev.engine.get_value(n).unwrap().to_string();
    assert_eq!(v("b_gone"), "true");
}

#[test]
fn a_function_of_the_program_keeps_a_routine_s_name() {
    let src = "fn acc_copyin(x: f32[]) -> i32 { return len(x); }
let a = zeros(f32, 5);
let k = acc_copyin(a);
let present = acc_is_present(a);";
    for device in [false, true] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        assert_eq!(r.engine.get_value("k").unwrap().to_string(), "5");
        assert_eq!(r.engine.get_value("present").unwrap().to_string(), "false");
    }
}

#[test]
fn device_routines_take_a_device_type_and_number_within_it() {
    let src = "let t = acc_get_device_type();
let n = acc_get_num_devices(t);
let all = acc_get_num_devices(\"any\") == acc_get_num_devices();
acc_set_device_num(0, t);
let first = acc_get_device_num(t);
let same_memory = acc_get_property(0, t, \"memory\") == acc_get_property(acc_get_device_num(), \"memory\");
let name = acc_get_property_string(0, t, \"name\") == acc_get_property_string(acc_get_device_num(), \"name\");
let free = acc_get_property(0, t, \"free_memory\");
let free_ok = free > 0 && free <= acc_get_property(0, t, \"memory\");
let other = \"gpu\";
if t == \"gpu\" { other = \"cpu\"; }
let none_of_other = acc_get_num_devices(other) == 0 || acc_get_device_num(other) == -1;";
    for device in [false, true] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let v = |n: &str| r.engine.get_value(n).unwrap().to_string();
        let n: i32 = v("n").parse().unwrap();
        assert!(n >= 1, "device {device}: no device of the current type");
        assert_eq!(v("first"), "0");
        for name in ["all", "same_memory", "name", "none_of_other", "free_ok"] {
            assert_eq!(v(name), "true", "device {device}: {name}");
        }
    }
    // acc_init / acc_shutdown: the data stays, and shutdown lands the
    // queue's work as a wait does.
    init_and_shutdown_keep_the_data(
        "acc_init(acc_get_device_type());",
        "acc_shutdown(acc_get_device_type());",
    );
    let r = run("let k = acc_get_num_devices(\"tpu\");", false);
    let err = r.result.expect_err("not a device type");
    assert_eq!(err.code(), "accl::device::bad_device_type");
}

#[test]
fn acc_init_device_and_acc_shutdown_device_name_a_device_of_a_type() {
    // OpenACC 3.2's device-numbered forms (V&V acc_init_device,
    // acc_shutdown_device): device 0 of the current type is the current
    // device, so shutdown lands its queue's work as a wait does; a number
    // with no such device is refused.
    init_and_shutdown_keep_the_data(
        "acc_init_device(0, acc_get_device_type());",
        "acc_shutdown_device(0, acc_get_device_type());",
    );
    common::same_failure(
        "acc_init_device(7, acc_get_device_type());",
        "accl::run::bad_device",
    );
}

#[test]
fn the_default_async_queue_can_be_changed() {
    // `async` alone goes to the default queue: after acc_set_default_async(2)
    // a `wait(2)` covers it, and a kernel on queue 1 that waits for queue 2
    // sees its result; -1 names the default queue wherever a queue goes.
    let src = "let n = 32;
let a = zeros(f32, n);
let c = zeros(f32, n);
let first = acc_get_default_async();
data copyin(a) copyout(c) {
    acc_set_default_async(2);
    parallel loop async present(a) for i in 0..n { a[i] = i as f32; }
    let now = acc_get_default_async();
    parallel loop async(1) wait(2) present(a, c) for i in 0..n { c[i] = 2.0 * a[i]; }
    wait(1);
    let done = acc_async_test(-1);
    acc_set_default_async(-1);
    assert(now == 2, \"the default queue\");
}
assert(first == -1 && acc_get_default_async() == -1, \"reset\");
assert(c[n - 1] == 2.0 * (n - 1) as f32, \"after queue 2\");
set default_async(3);
parallel loop async copy(c) for i in 0..n { c[i] = 1.0; }
wait(3);
assert(acc_get_default_async() == 3 && c[0] == 1.0, \"set default_async\");";
    common::same_as_host(src, common::Floats::Exact);
    let r = run("acc_set_default_async(-5);", false);
    assert_eq!(
        r.result.expect_err("bad queue").code(),
        "accl::device::queue"
    );
}

#[test]
fn init_and_shutdown_directives() {
    // `init` checks its clauses and does nothing else (devices open on
    // first use); `shutdown` of the current device lands its queued work,
    // and its data stays present. `init` and `shutdown` stay names
    // elsewhere.
    let src = "let a = zeros(f32, 8);
init;
init device_type(any) device_num(0);
init if(false);
enter data copyin(a);
parallel loop present(a) async(2) for i in 0..8 { a[i] = 5.0; }
update self(a) async(2);
shutdown device_num(acc_get_device_num(acc_get_device_type()));
let s = a[3];
let present = acc_is_present(a);
let init = 1;
let shutdown = init + 1;";
    values_on_both(src, &[("s", "5.0"), ("present", "true"), ("shutdown", "2")]);
}

#[test]
fn the_async_constants_name_the_synchronous_and_default_queues() {
    // acc_async_sync runs a construct synchronously (the host reads the
    // result without a wait); acc_async_noval is `async` alone;
    // acc_async_default names the default queue (and resets it).
    let src = "let a = zeros(f32, 16);
parallel loop async(acc_async_sync) copy(a) for i in 0..16 { a[i] = 1.0; }
let first = a[3];
acc_set_default_async(5);
parallel loop async(acc_async_noval) copy(a) for i in 0..16 { a[i] = 2.0; }
wait(5);
let second = a[3];
set default_async(acc_async_default);
let reset = acc_get_default_async();
let qs = zeros(i32, 2);
qs[0] = acc_async_sync;
qs[1] = acc_async_sync;
let none = acc_wait_any(qs);
let done = acc_async_test(acc_async_sync);";
    values_on_both(
        src,
        &[
            ("first", "1.0"),
            ("second", "2.0"),
            ("reset", "-1"),
            ("none", "-1"),
            ("done", "true"),
        ],
    );
}

/// `init` then `shutdown` around async work on queue 1: the data stays
/// present, and the shutdown lands the queue's work as a wait does.
fn init_and_shutdown_keep_the_data(init: &str, shutdown: &str) {
    let src = format!(
        "let a = zeros(f32, 8);
{init}
enter data copyin(a);
parallel loop present(a) async(1) for i in 0..8 {{ a[i] = 3.0; }}
update self(a) async(1);
{shutdown}
let s = a[7];
let present = acc_is_present(a);"
    );
    for device in [false, true] {
        let r = run(&src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        assert_eq!(r.engine.get_value("s").unwrap().to_string(), "3.0");
        assert_eq!(r.engine.get_value("present").unwrap().to_string(), "true");
    }
}
