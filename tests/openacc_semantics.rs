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
