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
