//! `private`/`firstprivate` of arrays and sections on both backends: a
//! scratch row per gang iteration, a firstprivate copy written inside with
//! the host array unchanged, a per-lane copy on `loop vector`, a 2-D
//! section indexed with the original indices, and a one-gang region whose
//! gang loop reads the copy its statements filled.

mod common;
use common::values_on_both;

#[test]
fn private_scratch_row_per_gang() {
    // rowsum[i] = sum_j 2 (i + j) = 32 i + 240 for 16 columns; over 8 rows
    // that totals 32 * 28 + 240 * 8.
    values_on_both(
        "let a = zeros(i32, 8, 16);
for i in 0..8 { for j in 0..16 { a[i, j] = i + j; } }
let rowsum = zeros(i32, 8);
let t = full(i32, 99, 16);
parallel num_gangs(4) private(t[0:16]) {
    loop gang for i in 0..8 {
        loop vector for j in 0..16 { t[j] = 2 * a[i, j]; }
        loop seq for j in 0..16 { rowsum[i] += t[j]; }
    }
}
let total = sum(rowsum);
let t_after = sum(t);",
        &[("total", "2816"), ("t_after", "1584")],
    );
}

#[test]
fn firstprivate_copy_written_inside_leaves_the_host_array() {
    // Each iteration's copy starts at f = [0, 1, 2, 3]: out[i] = i % 4 + i.
    values_on_both(
        "let f = zeros(i32, 4);
for j in 0..4 { f[j] = j; }
let out = zeros(i32, 100);
parallel loop firstprivate(f) for i in 0..100 {
    f[i % 4] += i;
    out[i] = f[i % 4];
}
let total = sum(out);
let f_after = sum(f);",
        &[("total", "5100"), ("f_after", "6")],
    );
}

#[test]
fn private_per_lane_on_loop_vector() {
    // o[i, j] = 100 i + j: 100 * 16 * 28 + 8 * 120.
    values_on_both(
        "let o = zeros(i32, 8, 16);
let w = zeros(i32, 3);
parallel loop gang for i in 0..8 {
    loop vector private(w) for j in 0..16 {
        w[0] = i;
        w[1] = j;
        w[2] = w[0] * 100 + w[1];
        o[i, j] = w[2];
    }
}
let total = sum(o);
let w_after = sum(w);",
        &[("total", "45760"), ("w_after", "0")],
    );
}

#[test]
fn section_of_a_2d_array_keeps_its_indices() {
    values_on_both(
        "let t = full(i32, 7, 3, 3);
let o = zeros(i32, 10);
parallel loop firstprivate(t[1:2, 0:3]) for i in 0..10 {
    t[1, 0] = i;
    t[2, 2] = t[2, 2] + 2 * i;
    o[i] = t[1, 0] + t[2, 2];
}
let total = sum(o);
let t_after = sum(t);",
        &[("total", "205"), ("t_after", "63")],
    );
}

#[test]
fn one_gang_region_shares_its_copy() {
    // serial: the statements fill the gang's copy; its gang loop reads it.
    values_on_both(
        "let c = zeros(i32, 4);
let o = zeros(i32, 8);
serial private(c) {
    for j in 0..4 { c[j] = 10 * j; }
    loop gang for i in 0..8 { o[i] = c[i % 4] + i; }
}
let total = sum(o);
let c_after = sum(c);",
        &[("total", "148"), ("c_after", "0")],
    );
}

#[test]
fn reduction_into_an_array_element() {
    values_on_both(
        "let h = zeros(i32, 4);
h[2] = 5;
let x = 2;
parallel loop reduction(+: h[x]) for i in 0..999 {
    if i % 3 == 0 { h[x] += 1; }
}
let h2 = h[2];
let others = h[0] + h[1] + h[3];",
        &[("h2", "338"), ("others", "0")],
    );
}
