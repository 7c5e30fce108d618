//! OpenACC 3.3's remaining data forms on both backends, with known
//! answers: `declare` (top level: until the program ends; in a function:
//! for the call, on every way out), one array in several data clauses of
//! one construct, `data .. async(q)` releasing its data on q,
//! `acc_memcpy_to_device` / `acc_memcpy_from_device`, `acc_on_device(t)`
//! and `routine nohost` / `bind(f)`.

use crate::common;
use common::{run, same_as_host, same_failure, values_on_both, Floats};

/// A top-level `declare copyout` copies back when the program ends, not
/// before; `declare copyin` data is present for kernels and `present`.
#[test]
fn top_level_declare_lives_until_the_program_ends() {
    let src = "let a = zeros(f32, 8);
let b = full(f32, 2.0, 8);
declare copyout(a) copyin(b);
parallel loop present(b) for i in 0..8 { a[i] = b[i] * i as f32; }
let before = a[7];
let present = acc_is_present(a) && acc_is_present(b);
let c = zeros(f32, 8);
parallel loop for i in 0..8 { c[i] = a[i] + 1.0; }";
    values_on_both(src, &[("present", "true"), ("before", "0.0")]);
    let (_, dev) = same_as_host(src, Floats::Exact);
    let a = dev.engine.get_array::<f32>("a").unwrap().0;
    assert_eq!(a, (0..8).map(|i| 2.0 * i as f32).collect::<Vec<_>>());
    let c = dev.engine.get_array::<f32>("c").unwrap().0;
    assert_eq!(
        c[7], 15.0,
        "a kernel after the declare sees its device copy"
    );
}

/// In a function, the data lives for the call: entered at the
/// declaration, released at every return (an early one too), so nothing
/// stays present afterwards; `copyout` comes back at the return.
#[test]
fn function_declare_lives_for_the_call() {
    let src = "fn fill(c: f32[], d: f32[], k: i32) -> i32 {
    declare copyout(c[0:4]) create(d);
    parallel loop present(c[0:4], d) for i in 0..4 { c[i] = (i + k) as f32; d[i] = 1.0; }
    if k > 0 { return 1; }
    if !acc_is_present(d) { return -1; }
    return 0;
}
let c = zeros(f32, 8);
let d = zeros(f32, 4);
let r1 = fill(c, d, 10);
let kept1 = c[1] + c[6];
let r2 = fill(c, d, 0);
let kept2 = c[1] + c[6];
let dz = d[0];
let left = acc_is_present(c) || acc_is_present(d);";
    values_on_both(
        src,
        &[
            ("r1", "1"),
            ("kept1", "11.0"),
            ("r2", "0"),
            ("kept2", "1.0"),
            ("dz", "0.0"),
            ("left", "false"),
        ],
    );
}

/// A run-time error inside a function's declare scope releases its data
/// (without copying back, as a `data` region does): the next input finds
/// nothing present and the host copy as it was.
#[test]
fn function_declare_is_released_on_error() {
    same_failure(
        "fn f(c: f32[]) {
    declare copy(c);
    parallel loop present(c) for i in 0..4 { c[i] = 1.0; }
    assert(false, \"stop\");
}
let c = zeros(f32, 4);
f(c);",
        "accl::run::assert_failed",
    );
    for device in [false, true] {
        let mut r = run(
            "fn f(c: f32[]) {
    declare copy(c);
    parallel loop present(c) for i in 0..4 { c[i] = 1.0; }
    assert(false, \"stop\");
}
let c = zeros(f32, 4);",
            device,
        );
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let e = r.engine.eval("f(c);").expect_err("the assert stops it");
        assert_eq!(e.code(), "accl::run::assert_failed");
        r.engine
            .eval("let left = acc_is_present(c); let kept = c[0] + c[3];")
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let v = |n: &str| r.engine.get_value(n).unwrap().to_string();
        assert_eq!(v("left"), "false", "device {device}");
        assert_eq!(v("kept"), "0.0", "device {device}");
    }
}

/// `device_resident` is `create`; `link` does nothing until a data clause
/// names the array; `present` needs the data there already.
#[test]
fn declare_device_resident_link_and_present() {
    let src = "let a = zeros(i32, 4);
let l = full(i32, 5, 4);
fn twice(a: i32[]) {
    declare present(a);
    parallel loop for i in 0..4 { a[i] = a[i] * 2; }
}
declare device_resident(a) link(l);
let linked = acc_is_present(l);
parallel loop present(a) for i in 0..4 { a[i] = i + 1; }
twice(a);
update self(a);
let s = a[0] + a[1] + a[2] + a[3];";
    values_on_both(src, &[("linked", "false"), ("s", "20")]);
    same_failure(
        "fn f(a: i32[]) { declare present(a); }\nlet a = zeros(i32, 2);\nf(a);",
        "accl::run::not_present",
    );
}

/// `copyin(a) copyout(a)` is `copy(a)`, in either order, as are
/// `copyout(a) copy(a)` and `create(a) copyin(a)` (copied in).
#[test]
fn one_array_in_two_clauses_acts_once() {
    let src = "let a = full(f64, 1.0, 16);
let b = full(f64, 1.0, 16);
let c = full(f64, 1.0, 16);
parallel loop copyin(a[0:16]) copyout(a[0:16]) for i in 0..16 { a[i] += 1.0; }
parallel loop copyout(b) copy(b) for i in 0..16 { b[i] += 2.0; }
data create(c) copyin(c) { parallel loop for i in 0..16 { c[i] += 3.0; } }
let sa = a[3];
let sb = b[3];
let sc = c[3];
enter data copyin(a) create(a);
exit data delete(a);
let still = acc_is_present(a);
exit data delete(a);
let gone = !acc_is_present(a);";
    values_on_both(
        src,
        &[
            ("sa", "2.0"),
            ("sb", "3.0"),
            ("sc", "1.0"),
            ("still", "true"),
            ("gone", "true"),
        ],
    );
}

/// `data .. async(q)` releases its data on q: a kernel on another queue
/// joined into q inside the region is finished before the copy back.
#[test]
fn data_async_exits_on_its_queue() {
    let src = "let a = zeros(f32, 256);
data copy(a) async(2) {
    parallel loop async(1) for i in 0..256 { a[i] = i as f32; }
    wait(1) async(2);
}
wait(2);
let last = a[255];
data copy(a) async(3) { parallel loop for i in 0..256 { a[i] += 1.0; } }
data copy(a) async(3) { parallel loop for i in 0..256 { a[i] += 1.0; } }
wait(3);
let again = a[255];";
    values_on_both(src, &[("last", "255.0"), ("again", "257.0")]);
}

/// `acc_memcpy_to_device(dst, src)` writes the device copy of `dst` (a
/// section) from `src`'s host data; `acc_memcpy_from_device` the other
/// way; the host copy of the device side is untouched.
#[test]
fn memcpy_to_and_from_the_device() {
    let src = "let a = zeros(f64, 4, 3);
for i in 0..4 { for j in 0..3 { a[i, j] = (10 * i + j) as f64; } }
let s = full(f64, 7.0, 4);
enter data copyin(a);
acc_memcpy_to_device(a[1:2, 1:2], s);
let host_kept = a[1, 1];
let back = zeros(f64, 2, 3);
acc_memcpy_from_device_async(back, a[1:2, :], 1);
wait(1);
let r = zeros(f64, 2);
acc_memcpy_from_device(r, a[2:1, 1:2]);
exit data copyout(a);
let b0 = back[0, 0] + back[0, 1] + back[1, 2];
let dev = a[1, 1] + a[2, 2] + a[3, 1];";
    values_on_both(
        src,
        &[("host_kept", "11.0"), ("b0", "24.0"), ("dev", "45.0")],
    );
    let (host, _) = same_as_host(src, Floats::Exact);
    assert_eq!(host.engine.get_array::<f64>("r").unwrap().0, vec![7.0, 7.0]);
    same_failure(
        "let a = zeros(f32, 4); let s = zeros(f32, 4);\nacc_memcpy_to_device(a, s);",
        "accl::run::not_present",
    );
    same_failure(
        "let a = zeros(f32, 4); let s = zeros(f32, 3);\nenter data create(a);\nacc_memcpy_to_device(a, s);",
        "accl::run::size_mismatch",
    );
}

/// `acc_on_device(t)`: on the host reference everything runs on the host;
/// on a Vulkan device, code in a compute construct is on `not_host`,
/// `default` and the device's own type, host code (and a construct whose
/// `if` is false) on `host`.
#[test]
fn on_device_with_a_device_type() {
    let src = "let t = acc_get_device_type();
let r = zeros(i32, 6);
parallel {
    if acc_on_device(acc_device_host) { r[0] = 1; }
    if acc_on_device(acc_device_not_host) { r[1] = 1; }
    if acc_on_device(t) { r[2] = 1; }
    if acc_on_device(acc_device_default) { r[3] = 1; }
    if acc_on_device(\"host\") { r[4] = 1; }
}
if acc_on_device(acc_device_host) && !acc_on_device(acc_device_not_host) { r[5] = 1; }
let code = r[0] * 100000 + r[1] * 10000 + r[2] * 1000 + r[3] * 100 + r[4] * 10 + r[5];
let off = zeros(i32, 2);
let on = false;
parallel if(on) {
    if acc_on_device(acc_device_host) { off[0] = 1; }
    if acc_on_device(t) { off[1] = 1; }
}
let host_if_false = off[0] * 10 + off[1];";
    let host = run(src, false);
    host.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(host.engine.get_value("code").unwrap().to_string(), "101011");
    let dev = run(src, true);
    dev.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(dev.engine.get_value("code").unwrap().to_string(), "11101");
    // `if(false)` runs the construct on the host, which the answer follows.
    assert_eq!(
        host.engine.get_value("host_if_false").unwrap().to_string(),
        "11"
    );
    assert_eq!(
        dev.engine.get_value("host_if_false").unwrap().to_string(),
        "10"
    );
}

/// `routine .. bind(f)`: device code calling the routine calls `f`; host
/// code calls the routine itself. `nohost` routines run in device code.
#[test]
fn routine_bind_and_nohost() {
    let src = "routine seq nohost fn dev_sum(a: f32[], n: i32) -> f32 {
    let s = 0.0f32;
    for i in 0..n { s += a[i]; }
    return 2.0f32 * s;
}
routine seq bind(dev_sum) fn total(a: f32[], n: i32) -> f32 {
    let s = 0.0f32;
    for i in 0..n { s += a[i]; }
    return s;
}
let a = full(f32, 1.0, 8);
let out = zeros(f32, 2);
parallel loop copyin(a) copy(out) for i in 0..1 { out[0] = total(a, 8); }
let host = total(a, 8);
let dev = out[0];";
    values_on_both(src, &[("host", "8.0"), ("dev", "16.0")]);
}
