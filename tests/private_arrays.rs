//! `private`/`firstprivate` of arrays and sections on both backends: a
//! scratch row per gang iteration, a firstprivate copy written inside with
//! the host array unchanged, a per-lane copy on `loop vector`, a 2-D
//! section indexed with the original indices, and a one-gang region whose
//! gang loop reads the copy its statements filled; then the placement of
//! the copies on the device: in workgroup memory per lane (flat loops,
//! `loop vector`/`worker`, a region's gang loop spread over lanes) and per
//! gang (shared by its lanes, across barriers), each started fresh, and in
//! the scratch buffer where they do not fit or the host reuses them; and
//! a lane's copy of a small section as its own local array (at 256 lanes
//! too, where the workgroup's copies would not fit).

use crate::common;
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

#[test]
fn flat_loop_copy_in_workgroup_memory_starts_fresh_each_iteration() {
    // A lane runs several iterations: each starts at zero, so o[i] = i.
    values_on_both(
        "let c = zeros(i32, 4);
let o = zeros(i32, 5000);
parallel loop private(c) for i in 0..5000 {
    c[i % 4] += i;
    c[(i + 1) % 4] += 1;
    o[i] = c[i % 4] + c[(i + 2) % 4];
}
let total = sum(o);",
        &[("total", "12497500")],
    );
}

#[test]
fn flat_loop_copy_too_large_stays_in_the_scratch_buffer() {
    // 3000 i32 per lane cannot fit in the workgroup budget.
    values_on_both(
        "let c = zeros(i32, 3000);
let o = zeros(i32, 40);
parallel loop private(c) for i in 0..40 {
    for j in 0..3000 { c[j] = i + j; }
    o[i] = c[2999] + c[i];
}
let total = sum(o);",
        &[("total", "122300")],
    );
}

#[test]
fn firstprivate_2d_section_per_lane() {
    // t[1:2, 1:3] holds 10 * r + c; each iteration adds i to one element.
    values_on_both(
        "let t = zeros(f32, 4, 5);
for r in 0..4 { for c in 0..5 { t[r, c] = (10 * r + c) as f32; } }
let o = zeros(f32, 300);
parallel loop firstprivate(t[1:2, 1:3]) for i in 0..300 {
    t[1 + i % 2, 1 + i % 3] += i as f32;
    o[i] = t[1 + i % 2, 1 + i % 3] + t[2, 3];
}
let total = sum(o);
let t_after = sum(t);",
        &[("total", "64450.0"), ("t_after", "340.0")],
    );
}

#[test]
fn gang_copy_shared_and_updated_by_its_lanes() {
    // Per gang iteration i: t[j] = 1000 i + j (lane writes), then every
    // lane adds its neighbour's value (read after a barrier) into u, and
    // the gang sums u: rowsum[i] = 2 * 16 * 1000 i + 2 * 120.
    values_on_both(
        "let t = full(i32, 5, 16);
let u = zeros(i32, 16);
let rowsum = zeros(i32, 8);
parallel num_gangs(3) {
    loop gang private(t, u) for i in 0..8 {
        t[0] = 1000 * i;
        loop vector for j in 1..16 { t[j] = t[0] + j; }
        loop vector for j in 0..16 { u[j] += t[j] + t[(j + 1) % 16]; }
        loop seq for j in 0..16 { rowsum[i] += u[j]; }
    }
}
let total = sum(rowsum);
let t_after = sum(t);",
        &[("total", "897920"), ("t_after", "80")],
    );
}

#[test]
fn gang_loops_of_a_region_share_copies_iteration_by_iteration() {
    // Copy i of the region's `c` is iteration i's in both gang loops: the
    // second sees what the first left (c[0] = i), so p[i] = 4 i + 2.
    values_on_both(
        "let c = zeros(i32, 2);
let o = zeros(i32, 64);
let p = zeros(i32, 64);
parallel num_gangs(2) private(c) {
    loop gang for i in 0..64 { c[0] += i; c[1] += 2; o[i] = c[0] + c[1]; }
    loop gang for i in 0..64 { c[1] += 3 * i; p[i] = c[0] + c[1]; }
}
let total = sum(o) + sum(p);",
        &[("total", "10336")],
    );
}

#[test]
fn gang_loop_of_a_region_owns_a_copy_per_lane() {
    // One of the region's two gang loops uses `c`: a copy per iteration,
    // each on the lane that runs it.
    values_on_both(
        "let c = zeros(i32, 3);
let o = zeros(i32, 300);
parallel num_gangs(2) private(c) {
    loop gang for i in 0..300 { c[i % 3] += i; c[(i + 1) % 3] += 1; o[i] = c[0] + c[1] + c[2]; }
    loop gang for i in 0..300 { o[i] += 1; }
}
let total = sum(o);",
        &[("total", "45450")],
    );
}

#[test]
fn a_sequential_loop_around_loop_vector_keeps_its_copies() {
    // The copy (i, j) is the same on each trip of r: it accumulates.
    values_on_both(
        "let w = zeros(i32, 2);
let o = zeros(i32, 4, 8);
parallel loop gang for i in 0..4 {
    for r in 0..3 {
        loop vector private(w) for j in 0..8 { w[0] += r + 1; o[i, j] = w[0] + i; }
    }
}
let total = sum(o);",
        &[("total", "240")],
    );
}

#[test]
fn explain_says_where_the_copies_live() {
    let text = accl::cli::explain_text(
        "t.accl",
        "let c = zeros(i32, 4);
let w = zeros(i32, 2);
let o = zeros(i32, 8, 8);
parallel loop gang firstprivate(c) for i in 0..8 {
    loop vector for j in 0..8 { o[i, j] = c[j % 4]; }
    loop seq private(w) for j in 0..8 { w[0] = j; o[i, j] += w[0]; }
}",
        None,
    )
    .expect("the script checks");
    assert!(
        text.contains("firstprivate `c` (line 4): a copy per gang in workgroup memory when the workgroup's copies fit in 8192 bytes (checked as the kernel starts), else in `c'private1` (a device scratch buffer)"),
        "{text}"
    );
    assert!(
        text.contains("private `w` (line 6): copies in `w'private0`, a device scratch buffer (its loop runs in order)"),
        "{text}"
    );
}

#[test]
fn firstprivate_gang_copy_read_across_lanes() {
    // Gang i's copy starts at t[0, j] = j, its lanes add i, then read
    // another lane's element: o[i, j] = 7 - j + i.
    values_on_both(
        "let t = zeros(i32, 2, 8);
for j in 0..8 { t[0, j] = j; t[1, j] = 100; }
let o = zeros(i32, 16, 8);
parallel loop gang firstprivate(t[0:1, 0:8]) for i in 0..16 {
    loop vector for j in 0..8 { t[0, j] += i; }
    loop vector for j in 0..8 { o[i, j] = t[0, 7 - j]; }
}
let total = sum(o);
let t_after = sum(t);",
        &[("total", "1408"), ("t_after", "828")],
    );
}

#[test]
fn private_per_iteration_of_a_worker_loop() {
    // Each (i, j) starts at zero: o[i, j] = 10 j.
    values_on_both(
        "let w = zeros(i32, 3);
let o = zeros(i32, 8, 32);
parallel loop gang num_workers(4) for i in 0..8 {
    loop worker private(w) for j in 0..32 {
        w[j % 3] += j;
        w[(j + 1) % 3] += i;
        o[i, j] = w[j % 3] * 10 + w[(j + 2) % 3];
    }
}
let total = sum(o);",
        &[("total", "39680")],
    );
}

#[test]
fn region_of_one_gang_shares_one_copy_in_workgroup_memory() {
    // The region's statements start from the fresh zero copy; its gang
    // loop (spread over the gang's lanes) reads what they left.
    values_on_both(
        "let c = zeros(i32, 8);
let o = zeros(i32, 64);
parallel private(c) {
    for j in 0..8 { c[j] += 10 * j; }
    loop gang for i in 0..64 { o[i] = c[i % 8] + i; }
}
let total = sum(o);
let c_after = sum(c);",
        &[("total", "4256"), ("c_after", "0")],
    );
}

#[test]
fn compute_constructs_in_functions_take_private_arrays() {
    // A function's own `parallel loop`/`parallel` is the compute construct
    // that makes the copies, each call afresh: rows 0..8 of a[i, j] = i + j
    // over 16 columns sum (doubled) to 32 i + 240, 2816 in all, rows 0..4
    // to 1152; shifted: out[i] = base[i % 4] + i, 2 * 100 + 28; inner:
    // s[i] = 3 i over 0..5.
    values_on_both(
        "fn rowsums(a: i32[,], n: i32, m: i32) -> i32[] {
    let t = full(i32, 99, m);
    let out = zeros(i32, n);
    parallel loop private(t) for i in 0..n {
        for j in 0..m { t[j] = 2 * a[i, j]; }
        let s = 0;
        for j in 0..m { s += t[j]; }
        out[i] = s;
    }
    return out;
}
fn shifted(base: i32[], n: i32) -> i32[] {
    let out = zeros(i32, n);
    parallel loop firstprivate(base) for i in 0..n { base[i % 4] += i; out[i] = base[i % 4]; }
    return out;
}
fn inner(n: i32) -> i32 {
    let t = zeros(i32, 3);
    let s = zeros(i32, n);
    parallel num_gangs(2) private(t[0:3]) {
        loop gang for i in 0..n {
            loop vector for j in 0..3 { t[j] = i * j; }
            loop seq for j in 0..3 { s[i] += t[j]; }
        }
    }
    return sum(s);
}
let a = zeros(i32, 8, 16);
for i in 0..8 { for j in 0..16 { a[i, j] = i + j; } }
let total = sum(rowsums(a, 8, 16));
let fewer = sum(rowsums(a, 4, 16));
let base = [10, 20, 30, 40];
let firsts = sum(shifted(base, 8));
let base_after = sum(base);
let region = inner(5);",
        &[
            ("total", "2816"),
            ("fewer", "1152"),
            ("firsts", "228"),
            ("base_after", "100"),
            ("region", "30"),
        ],
    );
}

#[test]
fn small_private_array_per_lane_is_function_local_at_vector_length_256() {
    // Each iteration fills its 16 f32 from its index and sums them:
    // o[i] = 16 i + 120; over 0..1000 that totals 16 * 499500 + 120000.
    // At 256 lanes the workgroup's copies (16 KiB) would not fit.
    values_on_both(
        "let tmp = zeros(f32, 16);
let o = zeros(f32, 1000);
parallel loop gang vector private(tmp) vector_length(256) for i in 0..1000 {
    for k in 0..16 { tmp[k] = (i + k) as f32; }
    let s = 0.0f32;
    for k in 0..16 { s += tmp[k]; }
    o[i] = s;
}
let total = sum(o);
let tmp_after = sum(tmp);",
        &[("total", "8112000.0"), ("tmp_after", "0.0")],
    );
}

#[test]
fn small_firstprivate_array_per_lane_starts_from_the_host_values() {
    // t[k] = k * k; each iteration adds i to t[i % 8]:
    // o[i] = (i % 8)^2 + i + ((i + 1) % 8)^2, which over 0..800 totals
    // 100 * 140 + 319600 + 100 * 140; the host's t keeps its sum 140.
    values_on_both(
        "let t = zeros(i32, 8);
for k in 0..8 { t[k] = k * k; }
let o = zeros(i32, 800);
parallel loop firstprivate(t) for i in 0..800 {
    t[i % 8] += i;
    o[i] = t[i % 8] + t[(i + 1) % 8];
}
let total = sum(o);
let t_after = sum(t);",
        &[("total", "347600"), ("t_after", "140")],
    );
}

#[test]
fn private_array_past_the_local_limit_uses_workgroup_memory() {
    // 100 i32 per lane is past the 64 a lane holds; 16 lanes' copies
    // (6400 bytes) fit in workgroup memory. o[i] = c[99] + c[i % 100]
    // = (i + 99) + (i + i % 100); over 0..400: 2 * 79800 + 99 * 400 + 4 * 4950.
    values_on_both(
        "let c = zeros(i32, 100);
let o = zeros(i32, 400);
parallel loop gang vector private(c) vector_length(16) for i in 0..400 {
    for j in 0..100 { c[j] = i + j; }
    o[i] = c[99] + c[i % 100];
}
let total = sum(o);",
        &[("total", "219000")],
    );
}

#[test]
fn explain_names_the_function_local_copy() {
    let text = accl::cli::explain_text(
        "t.accl",
        "let tmp = zeros(f32, 16);
let o = zeros(f32, 64);
parallel loop gang vector private(tmp) for i in 0..64 {
    for k in 0..16 { tmp[k] = (i + k) as f32; }
    o[i] = tmp[3];
}",
        None,
    )
    .expect("the script checks");
    assert!(
        text.contains("private `tmp` (line 3): a copy per lane: function-local (the lane's own array of the section's f32 elements) when the section has at most 64 (known as the kernel launches), else in workgroup memory when the workgroup's copies fit in 8192 bytes (checked as the kernel starts), else in `tmp'private0` (a device scratch buffer)"),
        "{text}"
    );
}

/// `launches` launches of a `parallel loop` of `n` iterations whose private
/// copy of `c` (`len` i32) each iteration reads before writing it: from
/// zero, so o[i] = 2i.
fn reads_its_copy_first(len: u32, n: u32, launches: u32) -> String {
    format!(
        "let c = zeros(i32, {len});
let o = zeros(i32, {n});
for r in 0..{launches} {{
    parallel loop private(c) copy(o) for i in 0..{n} {{
        c[i % 4] += i;
        o[i] = c[i % 4] + c[(i + 1) % 4] + i;
    }}
}}
let total = sum(o);
let last = o[{n} - 1];"
    )
}

#[test]
fn copies_kept_in_the_lanes_leave_their_array_uncleared() {
    // Each iteration reads its copy before writing it: zeros on both
    // backends, o[i] = 2i. With 4 elements a lane keeps its copy in the
    // lane and the hidden array of copies is never read, so no launch
    // clears it; with 100 elements the copies live in that array (or in
    // workgroup memory, decided in the kernel) and each launch clears it.
    let src = |len: u32| reads_its_copy_first(len, 4096, 3);
    for len in [4, 100] {
        values_on_both(&src(len), &[("total", "16773120")]);
        let zeros = common::trace_events(&src(len))
            .iter()
            .filter(|e| e["name"].as_str() == Some("zero"))
            .count();
        let want = if len == 4 { 0 } else { 3 };
        assert_eq!(zeros, want, "private copies of {len} elements");
    }
}

#[test]
fn constant_loops_over_a_lanes_copy_give_the_hosts_answer() {
    // The loops over a lane's local copy are unrolled whole on llvmpipe;
    // out[i] = sum over k < 16 of (i + k)(i + 15 - k), exact in f64.
    values_on_both(
        "let n = 1000;
let out = zeros(f64, n);
let t = zeros(f64, 16);
parallel loop gang vector private(t) for i in 0..n {
    for k in 0..16 { t[k] = (i + k) as f64; }
    let s = 0.0;
    for k in 0..16 { s += t[k] * t[15 - k]; }
    out[i] = s;
}
let total = sum(out);",
        &[("total", "5445776000.0")],
    );
}

#[test]
fn copies_kept_in_the_lanes_take_no_device_memory() {
    // 65,536 iterations: one copy each of 4 i32 would be 1 MiB, past the
    // 512 KiB cap, while `o` takes 256 KiB. Kept in the lanes, the copies
    // need none of it; 100 elements a copy (26 MB) is refused by the cap.
    let src = |len: u32| reads_its_copy_first(len, 65536, 1);
    let cap = |e: &mut accl::Engine| {
        e.set_max_device_bytes(Some(512 << 10));
    };
    let r = common::run_with(&src(4), true, cap);
    r.result
        .as_ref()
        .unwrap_or_else(|d| panic!("{}", d.render(100)));
    assert_eq!(r.engine.get::<i32>("last"), Some(2 * 65535));
    let r = common::run_with(&src(100), true, cap);
    let err = r.result.expect_err("a hidden array of 26 MB");
    assert_eq!(
        err.code(),
        "accl::device::out_of_memory",
        "{}",
        err.render(100)
    );
}
