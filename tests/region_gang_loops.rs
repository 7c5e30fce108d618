//! `loop gang` in a `parallel { .. }` region beyond the region's only work:
//! a reduction on it in a region of one gang (a routine's `loop gang`
//! reduction called from `parallel { .. }`), nested gang dimensions
//! (`loop gang(dim: 1)` inside `loop gang(dim: 2)`, which runs in order on
//! each lane), a reduction in a region of several gangs into the
//! construct's own reduction variable, and one into a region variable,
//! still refused on the device.

use crate::common;
use common::{run, values_on_both};

#[test]
fn gang_reduction_in_a_one_gang_region() {
    // Row sums of a[x, y] = x + y over 16 columns: 16 x + 120.
    values_on_both(
        "routine gang fn row(a: i32[,], x: i32) -> i32 {
    let s = 0;
    loop gang reduction(+: s) for y in 0..16 { s += a[x, y]; }
    return s;
}
let a = zeros(i32, 8, 16);
for x in 0..8 { for y in 0..16 { a[x, y] = x + y; } }
let b = zeros(i32, 8);
parallel {
    for x in 0..8 { b[x] = row(a, x); }
}
let b0 = b[0];
let b7 = b[7];
let out = zeros(i32, 1);
parallel {
    let t = 0;
    loop gang reduction(+: t) for i in 0..100 { t += i; }
    out[0] = t;
}
let t = out[0];",
        &[("b0", "120"), ("b7", "232"), ("t", "4950")],
    );
}

#[test]
fn gang_reduction_into_the_constructs_own_in_a_region_of_several_gangs() {
    // Each gang folds its lanes' share into its copy; the construct
    // combines the four copies.
    values_on_both(
        "let total = 0;
let big = 0.0;
parallel num_gangs(4) reduction(+: total) reduction(max: big) {
    loop gang reduction(+: total) for i in 0..1000 { total += i; }
    loop gang reduction(max: big) for i in 0..1000 { big = max(big, i as f64); }
}",
        &[("total", "499500"), ("big", "999.0")],
    );
}

#[test]
fn nested_gang_dimensions() {
    values_on_both(
        "let a = zeros(i32, 8, 8);
parallel num_gangs(4, 4) {
    loop gang(dim: 2) for i in 0..8 {
        loop gang(dim: 1) for j in 0..8 {
            a[i, j] += i * 8 + j;
        }
    }
}
let b = zeros(i32, 4, 4, 4);
parallel num_gangs(2, 2, 2) {
    loop gang(dim: 3) for i in 0..4 {
        loop gang(dim: 2) for j in 0..4 {
            loop gang(dim: 1) for k in 0..4 { b[i, j, k] = 1; }
        }
    }
}
let total = sum(a);
let ones = sum(b);",
        &[("total", "2016"), ("ones", "64")],
    );
}

#[test]
fn gang_reduction_in_a_region_of_several_gangs_is_refused_on_the_device() {
    let src = "let out = zeros(i32, 1);
parallel num_gangs(4) {
    let t = 0;
    loop gang reduction(+: t) for i in 0..100 { t += i; }
    out[0] = t;
}";
    let host = run(src, false);
    assert!(host.result.is_ok());
    let dev = run(src, true);
    let e = dev.result.as_ref().expect_err("refused on the device");
    assert_eq!(e.code(), "accl::compile::unsupported", "{}", e.render(100));
    assert!(e.render(100).contains("several gangs"), "{}", e.render(100));
}
