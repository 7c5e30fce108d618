//! OpenACC's own semantics on programs written the way other OpenACC test
//! suites and real codes write them, each with an answer worked out by
//! hand, on the host reference and on the device: a `loop` reduction in a
//! region into a scalar of the host (combined over every gang), scalars as
//! data with device copies of their own, `private`/`firstprivate` on the
//! construct, joins of async queues, and the C idioms `kernels` must see
//! through.

use crate::common;
use common::values_on_both;

#[test]
fn loop_gang_reduction_in_a_region_combines_over_every_gang() {
    // 0 + 1 + .. + 99 = 4950, whatever the number of gangs.
    values_on_both(
        "let res = 0;
parallel num_gangs(8) copy(res) { loop gang reduction(+: res) for i in 0..100 { res += i; } }
let start = 7;
parallel num_gangs(3) { loop gang reduction(+: start) for i in 0..100 { start += i; } }
let f = 0.0f32;
parallel num_gangs(1000) { loop gang reduction(+: f) for i in 0..100000 { f += 1.0f32; } }",
        &[("res", "4950"), ("start", "4957"), ("f", "100000.0")],
    );
}

#[test]
fn gang_and_vector_reductions_nest_into_one_host_scalar() {
    // a[i, j] = i + j over 50 x 40: sum = 40 * (0+..+49) + 50 * (0+..+39)
    // = 40 * 1225 + 50 * 780 = 88000, plus the host's 10.
    values_on_both(
        "let a = zeros(i32, 50, 40);
parallel loop collapse(2) for i in 0..50 { for j in 0..40 { a[i, j] = i + j; } }
let s = 10;
let hi = -1;
parallel num_gangs(5) vector_length(32) {
    loop gang reduction(+: s) reduction(max: hi) for i in 0..50 {
        loop vector reduction(+: s) reduction(max: hi) for j in 0..40 {
            s += a[i, j];
            hi = max(hi, a[i, j]);
        }
    }
}",
        &[("s", "88010"), ("hi", "88")],
    );
}

#[test]
fn loop_reductions_of_any_level_in_a_region_of_one_gang() {
    // serial: max of 0..77 is 76; one gang: 2^10; a worker loop: 3 * 55.
    values_on_both(
        "let m = 0;
serial { loop reduction(max: m) for i in 0..77 { m = max(m, i); } }
let p = 1.0;
parallel vector_length(64) { loop vector reduction(*: p) for i in 0..10 { p *= 2.0; } }
let w = 0;
parallel num_gangs(1) { loop worker reduction(+: w) for i in 1..11 { w += 3 * i; } }
let b = true;
serial loop reduction(&&: b) for i in 0..5 { b = b && i < 5; }",
        &[("m", "76"), ("p", "1024.0"), ("w", "165"), ("b", "true")],
    );
}

#[test]
fn private_and_firstprivate_on_the_construct_give_each_gang_a_copy() {
    // Each iteration writes the gang's copy and reads it back: out[j] = j,
    // g[j] = 100 + j; a firstprivate copy starts at the host's 100 (g[j]
    // += 100); the host's scalars are unchanged.
    values_on_both(
        "let out = zeros(i32, 4);
let res = 0;
parallel num_gangs(4) private(res) copyout(out) { loop gang for j in 0..4 { res = j; out[j] = res; } }
let o0 = out[0];
let o3 = out[3];
let f = 100;
let g = zeros(i32, 6);
parallel num_gangs(3) firstprivate(f) copyout(g) {
    loop gang for j in 0..6 { f = 100 + j; g[j] = f; }
}
parallel num_gangs(3) firstprivate(f) copy(g) { loop gang for j in 0..6 { g[j] += f; } }
let g0 = g[0];
let g5 = g[5];
let r = zeros(i32, 8);
parallel num_gangs(8) copyout(r) {
    let t = 5;
    loop gang for j in 0..8 { t = j * 2; r[j] = t; }
}
let r7 = r[7];",
        &[
            ("o0", "0"),
            ("o3", "3"),
            ("res", "0"),
            ("f", "100"),
            ("g0", "200"),
            ("g5", "205"),
            ("r7", "14"),
        ],
    );
}

#[test]
fn a_construct_private_scalar_assigned_in_a_vector_loop_is_still_a_race() {
    // `private` on the construct is one copy per gang: the lanes of a
    // `loop vector` share it.
    let src = "let out = zeros(i32, 64);
let t = 0;
parallel private(t) { loop vector for j in 0..64 { t = j; out[j] = t; } }";
    let r = common::run(src, false);
    let e = r.result.as_ref().expect_err("a race");
    assert_eq!(e.code(), "accl::device::race", "{}", e.render(100));
}

#[test]
fn a_join_then_a_wait_lands_the_joined_queues_copies() {
    // `wait async(0)` joins every queue into 0; `wait(0)` then waits for
    // queue 1's kernel and its `update self` too (device), and the host
    // reads 9.0. Chains of joins (3 into 2 into 4) as well.
    values_on_both(
        "const N = 1000;
let a = zeros(f32, N);
let b = zeros(f32, N);
enter data copyin(a, b);
parallel loop present(a, b) async(1) for i in 0..N { b[i] = 9.0; }
update self(b) async(1);
wait async(0);
wait(0);
let joined = b[5];
let done1 = acc_async_test(1);
parallel loop present(a, b) async(1) for i in 0..N { b[i] = 7.0; }
update self(b) async(1);
wait(1) async(0);
wait(0);
let named = b[999];
parallel loop present(a, b) async(3) for i in 0..N { b[i] = 5.0; }
update self(b) async(3);
wait(3) async(2);
wait(2) async(4);
wait(4);
let chained = b[0];
let all = acc_async_test_all();",
        &[
            ("joined", "9.0"),
            ("done1", "true"),
            ("named", "7.0"),
            ("chained", "5.0"),
            ("all", "true"),
        ],
    );
}

#[test]
fn a_scalar_in_a_data_clause_has_a_device_copy_of_its_own() {
    // copyin/create: the device's assignments stay on the device; copy:
    // they come back at the end of the region, not before; enter data /
    // update / exit data move the value as for an array.
    values_on_both(
        "let i = 1;
kernels copyin(i) { i = 2; }
let after_kernels = i;
parallel create(i) { i = 3; }
let after_create = i;
data copyin(i) { parallel present(i) { i = 4; } }
let after_data = i;
let j = 5;
parallel copy(j) { j = 6; }
let copied = j;
let inside = 0;
data copy(j) { parallel present(j) { j = 7; } inside = j; }
let x = 10;
enter data copyin(x);
let present = acc_is_present(x);
x = 11;
serial present(x) { x = x + 5; }
let host_x = x;
update self(x);
let updated = x;
x = 100;
update device(x);
serial { x = x * 2; }
exit data copyout(x);
let gone = !acc_is_present(x);",
        &[
            ("after_kernels", "1"),
            ("after_create", "1"),
            ("after_data", "1"),
            ("copied", "6"),
            ("inside", "6"),
            ("j", "7"),
            ("present", "true"),
            ("host_x", "11"),
            ("updated", "15"),
            ("x", "200"),
            ("gone", "true"),
        ],
    );
}

#[test]
fn atomic_updates_of_a_host_scalar_go_to_its_device_copy() {
    // 64 iterations add 1, 2 .. 64 (2080); max of k * 7 % 100 over 0..64 is
    // 99 (k = 57).
    values_on_both(
        "let c = 0;
parallel loop copy(c) for k in 0..64 { atomic c += k + 1; }
let m = 0.0;
data copy(m) {
    parallel loop present(m) for k in 0..64 { atomic m max= ((k * 7) % 100) as f64; }
}",
        &[("c", "2080"), ("m", "99.0")],
    );
}

#[test]
fn a_scalar_that_stays_a_value_has_no_device_copy_to_ask_about() {
    let src = "let s = 0;
parallel loop reduction(+: s) for i in 0..4 { s += i; }
let p = acc_is_present(s);";
    let r = common::run(src, false);
    let e = r.result.as_ref().expect_err("refused");
    assert_eq!(
        e.code(),
        "accl::device::scalar_not_data",
        "{}",
        e.render(100)
    );
}

#[test]
fn ping_pong_buffers_swap_inside_a_data_region() {
    // Three sweeps b = a + 1 with a swap after each: the array mapped by
    // `copy(a)` at the region's start (a0) last received sweep 2's
    // values, i + 2 (it held i + 1 + 1); `create(b)`'s array is not
    // copied back. As C's pointer swap under `copy(a[0:n])`.
    values_on_both(
        "const N = 64;
let a = zeros(f64, N);
let b = zeros(f64, N);
for i in 0..N { a[i] = i as f64; }
let a0 = a;
let b0 = b;
data copy(a) create(b) {
    for step in 0..3 {
        parallel loop present(a, b) for i in 0..N { b[i] = a[i] + 1.0; }
        let t = a;
        a = b;
        b = t;
    }
}
let x = a0[5];
let y = b0[5];
let even = zeros(f32, 8);
let odd = zeros(f32, 8);
data copy(even, odd) {
    for step in 0..4 {
        parallel loop for i in 0..8 { odd[i] = even[i] + 1.0; }
        let t = even;
        even = odd;
        odd = t;
    }
}
let e = even[3];",
        &[("x", "7.0"), ("y", "0.0"), ("e", "4.0")],
    );
}

#[test]
fn kernels_runs_c_style_loops_in_parallel() {
    // A scalar set before it is read in each iteration is the iteration's
    // own; `a[i * C + j]` with `j` in 0..C gives each `i` its own block.
    let src = "const R = 64;
const C = 48;
let a = zeros(f32, R * C);
let b = zeros(f32, R * C);
for i in 0..R * C { b[i] = i as f32; }
let t = 0.5f32;
let s = -1.0f32;
kernels copyout(a) copyin(b) {
    for i in 0..R {
        for j in 0..C {
            t = b[i * C + j] * 2.0f32;
            a[i * C + j] = t;
        }
    }
    for i in 0..R { s = b[i] + 1.0f32; a[i] = s; }
}
let last = a[R * C - 1];
let first = a[5];";
    values_on_both(
        src,
        &[
            ("last", "6142.0"),
            ("first", "6.0"),
            ("t", "0.5"),
            ("s", "-1.0"),
        ],
    );
    let report = accl::cli::explain_text("t.accl", src, None).expect("checks");
    assert!(!report.contains("serial"), "{report}");
    assert_eq!(
        report.matches("kernels: parallel loop auto").count(),
        2,
        "{report}"
    );
    assert!(
        report.contains("gang, vector: loop `i` (line 9)"),
        "{report}"
    );
    // A row shifted by one is not a block of its own: still in order.
    let shifted = "let a = zeros(i32, 65);
kernels { for i in 0..64 { a[i + 1] = a[i] + 1; } }";
    let report = accl::cli::explain_text("t.accl", shifted, None).expect("checks");
    assert!(report.contains("in order on one lane"), "{report}");
    values_on_both(&format!("{shifted}\nlet e = a[64];"), &[("e", "64")]);
    // C's `int k = i * cols + j;` first: the index is what `k` holds, so
    // both loops are independent and run collapsed (srad's kernels). Each
    // element is 3 * its index + 1 (k = 4091 for the last), and `d` the
    // neighbour difference of b (1 everywhere but the last column).
    let via_let = "const R = 64;
const C = 64;
let a = zeros(i32, R * C);
let d = zeros(i32, R * C);
let b = zeros(i32, R * C);
for i in 0..R * C { b[i] = i; }
kernels {
    for i in 0..R {
        for j in 0..C {
            let k = i * C + j;
            a[k] = 3 * b[k] + 1;
            if j < C - 1 { d[k] = b[k + 1] - b[k]; }
        }
    }
}
let last = a[R * C - 1];
let dsum = 0;
for i in 0..R * C { dsum += d[i]; }";
    values_on_both(via_let, &[("last", "12286"), ("dsum", "4032")]);
    let report = accl::cli::explain_text("t.accl", via_let, None).expect("checks");
    assert!(
        report.contains("loops `i` (line 8), `j` (line 9), one iteration per lane"),
        "{report}"
    );
    assert!(report.contains("collapsed automatically"), "{report}");
    // The same with `j` over one more than the row (blocks overlap), or `k`
    // changed after its `let`: in order.
    for (range, change) in [("0..65", ""), ("0..64", "k = k + 1;")] {
        let overlapping = format!(
            "let a = zeros(i32, 64 * 65);
kernels {{ for i in 0..63 {{ for j in {range} {{ let k = i * 64 + j; {change} a[k] = a[k] + 1; }} }} }}"
        );
        let report = accl::cli::explain_text("t.accl", &overlapping, None).expect("checks");
        assert!(
            report.contains("in order on one lane"),
            "{range} {change}: {report}"
        );
    }
    // `loop independent` in `kernels` is named for what it is.
    let report = accl::cli::explain_text(
        "t.accl",
        "let a = zeros(i32, 64);\nkernels { loop independent for i in 0..64 { a[i] = 1; } }",
        None,
    )
    .expect("checks");
    assert!(
        report.contains("kernels: parallel loop independent"),
        "{report}"
    );
}

#[test]
fn atomic_read_and_write_in_a_regions_own_code() {
    // The write is done once per gang (the same value); every invocation
    // reads 5 back.
    values_on_both(
        "let a = zeros(i32, 4);
let r = zeros(i32, 4);
parallel num_gangs(3) copy(a, r) {
    atomic write a[0] = 5;
    let v = 0;
    atomic read v = a[0];
    atomic write r[0] = v + 1;
}
let a0 = a[0];
let r0 = r[0];",
        &[("a0", "5"), ("r0", "6")],
    );
}

#[test]
fn clauses_and_routines_as_other_suites_write_them() {
    // gang(static: n) / gang(static: *) are gang loops; several `wait`
    // clauses wait for every queue named; acc_device_default is the
    // default device's type (one device here); acc_is_present of a
    // section asks about that section.
    values_on_both(
        "let a = zeros(i32, 100);
parallel num_gangs(4) copy(a) { loop gang(static: 2) for i in 0..100 { a[i] = i; } }
let s1 = a[99];
parallel num_gangs(4) copy(a) { loop gang(static: *) vector for i in 0..100 { a[i] = 2 * i; } }
let s2 = a[99];
parallel loop async(1) copy(a) for i in 0..100 { a[i] = 1; }
parallel loop async(2) copy(a) wait(1) wait(2) for i in 0..100 { a[i] += 1; }
wait;
let w = a[50];
acc_init(acc_device_default);
let n = acc_get_num_devices(acc_device_default);
let e = zeros(f32, 100);
enter data copyin(e[10:20]);
let inside = acc_is_present(e[10:20]);
let part = acc_is_present(e[15:5]);
let across = acc_is_present(e[0:15]);
let whole = acc_is_present(e);
exit data delete(e[10:20]);",
        &[
            ("s1", "99"),
            ("s2", "198"),
            ("w", "2"),
            ("n", "1"),
            ("inside", "true"),
            ("part", "true"),
            ("across", "false"),
            ("whole", "false"),
        ],
    );
}

#[test]
fn a_construct_in_a_function_reads_top_level_variables() {
    // The function reads `g` and `arr` just before the construct: the
    // kernel sees g's value then (7, then 8) and writes arr itself.
    values_on_both(
        "let g = 7;
let arr = zeros(i32, 10);
let out = zeros(i32, 10);
fn f(o: i32[]) { parallel loop copy(o) for i in 0..10 { o[i] = g + arr[i]; arr[i] = 1; } }
f(out);
let first = out[3];
g = 8;
f(out);
let second = out[3];
let written = arr[9];",
        &[("first", "7"), ("second", "9"), ("written", "1")],
    );
}

#[test]
fn a_vector_loop_inside_a_vector_loop_is_refused_by_the_checker() {
    let src = "let a = zeros(i32, 64);
parallel copy(a) { loop vector for i in 0..8 { loop vector for j in 0..8 { a[i * 8 + j] = 1; } } }";
    for device in [false, true] {
        let r = common::run(src, device);
        let e = r.result.as_ref().expect_err("refused");
        assert_eq!(e.code(), "accl::device::loop_nesting", "{}", e.render(100));
    }
}

#[test]
fn atomic_capture_into_an_element_in_a_regions_own_code() {
    // Captured old values stored into elements: once per gang, by the
    // lane that stores (a[1] = 3 with old 0, a[2] = 7 with old 0; the
    // capture after the update reads the new 2).
    values_on_both(
        "let a = zeros(i32, 4);
let r = zeros(i32, 4);
parallel num_gangs(1) copy(a, r) {
    atomic capture { r[2] = a[2]; a[2] += 7; }
    r[1] = atomic_add(a[1], 3);
    atomic capture { a[3] += 2; r[3] = a[3]; }
}
let a1 = a[1];
let r1 = r[1];
let a2 = a[2];
let r2 = r[2];
let r3 = r[3];",
        &[
            ("a1", "3"),
            ("r1", "0"),
            ("a2", "7"),
            ("r2", "0"),
            ("r3", "2"),
        ],
    );
}
