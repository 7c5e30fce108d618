//! Sections of any axis in data clauses and `update`: boxes `a[lo:n, lo:n]`,
//! whole axes `a[:, lo:n]`, on 2-D and 3-D arrays. Every program runs on
//! lavapipe (validation layer and `spirv-val` on) and on the host
//! reference, and every variable must agree; the host reference models a
//! discrete device, so a box transfer that moved more than the box's
//! elements (clobbering host values outside it) or less would show. The
//! diagnostics of bad sections are insta snapshots.

use crate::common;
use common::{rendered_failure as fail, same_as_host, Floats};
use insta::assert_snapshot;

/// Run on both backends; both must succeed with the same values.
fn ok(src: &str) {
    let (host, dev) = same_as_host(src, Floats::Exact);
    if let Err(e) = &host.result {
        panic!("failed on the host:\n{}", e.render(100));
    }
    if let Err(e) = &dev.result {
        panic!("failed on the device:\n{}", e.render(100));
    }
}

/// Run on both backends; both must fail with `code` first, with the same
/// diagnostic.
fn fails_with(src: &str, code: &str) {
    let (host, dev) = common::same_failure(src, code);
    let mut shown = Vec::new();
    for (which, r) in [("host", &host), ("device", &dev)] {
        match &r.result {
            Ok(()) => panic!("{which}: expected `{code}`, it ran"),
            Err(e) => {
                assert_eq!(e.diags[0].code, code, "{which}:\n{}", e.render(100));
                shown.push(e.render(100));
            }
        }
    }
    assert_eq!(shown[0], shown[1], "host and device say it differently");
}

/// An 8x6 `f32` grid with `a[j, i] = 10 j + i`.
const GRID: &str = "
    let a = zeros(f32, 8, 6);
    for j in 0..8 { for i in 0..6 { a[j, i] = (10 * j + i) as f32; } }";

#[test]
fn copyin_and_copyout_of_columns_move_only_the_box() {
    ok(&format!(
        "{GRID}
         enter data copyin(a[:, 2:2]);
         parallel loop present(a[:, 2:2]) for j in 0..8 {{
             a[j, 2] = a[j, 2] + 100.0;
             a[j, 3] = -a[j, 3];
         }}
         // The host changes elements outside the box: a copy of whole
         // rows back would overwrite them.
         for j in 0..8 {{ a[j, 0] = 7.0; a[j, 5] = 9.0; }}
         exit data copyout(a[:, 2:2]);
         for j in 0..8 {{
             assert(a[j, 0] == 7.0 && a[j, 5] == 9.0, \"outside the box\");
             assert(a[j, 2] == (10 * j + 102) as f32, \"column 2\");
             assert(a[j, 3] == -((10 * j + 3) as f32), \"column 3\");
         }}
         assert(!acc_is_present(a), \"gone\");"
    ));
}

#[test]
fn a_data_region_copies_a_block() {
    ok(&format!(
        "{GRID}
         data copy(a[2:4, 1:3]) {{
             parallel loop collapse(2) present(a[2:4, 1:3]) for j in 2..6 {{
                 for i in 1..4 {{ a[j, i] = a[j, i] * 2.0; }}
             }}
         }}
         for j in 0..8 {{ for i in 0..6 {{
             let want = (10 * j + i) as f32;
             if j >= 2 && j < 6 && i >= 1 && i < 4 {{ want = 2.0 * want; }}
             assert(a[j, i] == want, \"block doubled, rest kept\");
         }} }}"
    ));
}

#[test]
fn update_self_and_device_of_one_column() {
    ok(&format!(
        "{GRID}
         let b = zeros(f32, 8);
         data copy(a) copyout(b) {{
             parallel loop present(a) for j in 0..8 {{ a[j, 4] = -1.0; a[j, 1] = -2.0; }}
             update self(a[0:8, 4:1]);
             assert(a[3, 4] == -1.0, \"column 4 updated\");
             assert(a[3, 1] == 31.0, \"column 1 still the host's\");
             for j in 0..8 {{ a[j, 5] = 1000.0 + j as f32; }}
             update device(a[:, 5:1]);
             parallel loop present(a) for j in 0..8 {{ b[j] = a[j, 5] + a[j, 1]; }}
         }}
         for j in 0..8 {{
             assert(b[j] == 998.0 + j as f32, \"kernel read the updated column\");
             assert(a[j, 1] == -2.0, \"copied out at the end\");
         }}"
    ));
}

#[test]
fn a_forgotten_update_leaves_stale_values_alike() {
    // Only the column that was updated reaches the device.
    ok(&format!(
        "{GRID}
         let s = zeros(f32, 8);
         data copyin(a) copyout(s) {{
             for j in 0..8 {{ a[j, 0] = 500.0; a[j, 1] = 600.0; }}
             update device(a[:, 0:1]);
             parallel loop for j in 0..8 {{ s[j] = a[j, 0] + a[j, 1]; }}
         }}
         for j in 0..8 {{ assert(s[j] == 500.0 + (10 * j + 1) as f32, \"stale column 1\"); }}"
    ));
}

#[test]
fn boxes_of_a_3d_array() {
    ok("
        let b = zeros(i32, 4, 5, 6);
        for k in 0..4 { for j in 0..5 { for i in 0..6 { b[k, j, i] = 100 * k + 10 * j + i; } } }
        // A block of every axis.
        enter data copyin(b[1:2, 1:3, 2:2]);
        parallel loop collapse(3) present(b[1:2, 1:3, 2:2]) for k in 1..3 {
            for j in 1..4 { for i in 2..4 { b[k, j, i] = -b[k, j, i]; } }
        }
        exit data copyout(b[1:2, 1:3, 2:2]);
        // The middle axis cut, the last whole: runs of whole rows.
        enter data copyin(b[:, 4:1]);
        parallel loop collapse(2) present(b[:, 4:1]) for k in 0..4 {
            for i in 0..6 { b[k, 4, i] = b[k, 4, i] + 1000; }
        }
        update self(b[1:2, 4:1]);
        assert(b[1, 4, 0] == 1140 && b[0, 4, 0] == 40, \"update of a sub-box\");
        exit data delete(b[:, 4:1]);
        // The last axis alone.
        let c = zeros(i32, 4, 5, 6);
        data copyin(b[:, :, 5:1]) copyout(c) {
            parallel loop collapse(2) present(b[:, :, 5:1]) for k in 0..4 {
                for j in 0..5 { c[k, j, 5] = b[k, j, 5] * 2; }
            }
        }
        let n = 0;
        for k in 0..4 { for j in 0..5 { for i in 0..6 {
            let v = 100 * k + 10 * j + i;
            let flipped = k >= 1 && k < 3 && j >= 1 && j < 4 && i >= 2 && i < 4;
            if flipped { assert(b[k, j, i] == -v, \"block negated\"); }
            if k >= 1 && k < 3 && j == 4 { assert(b[k, j, i] == v + 1000, \"row updated\"); }
            if (k < 1 || k >= 3) && j == 4 { assert(b[k, j, i] == v, \"not updated\"); }
            if i == 5 { assert(c[k, j, i] == 2 * b[k, j, i], \"last column\"); n += 1; }
        } } }
        assert(n == 20, \"every (k, j)\");");
}

#[test]
fn update_device_of_a_block_inside_a_present_array() {
    ok("
        let a = zeros(f64, 6, 7, 3);
        let out = zeros(f64, 6, 7, 3);
        data copyin(a) copyout(out) {
            for k in 0..6 { for j in 0..7 { for i in 0..3 { a[k, j, i] = (k * j + i) as f64; } } }
            update device(a[2:3, 1:4, 1:2]);
            parallel loop collapse(3) for k in 0..6 {
                for j in 0..7 { for i in 0..3 { out[k, j, i] = a[k, j, i]; } }
            }
        }
        for k in 0..6 { for j in 0..7 { for i in 0..3 {
            let want = 0.0;
            if k >= 2 && k < 5 && j >= 1 && j < 5 && i >= 1 { want = (k * j + i) as f64; }
            assert(out[k, j, i] == want, \"only the block went to the device\");
        } } }");
}

#[test]
fn present_of_a_box_inside_a_present_box() {
    ok(&format!(
        "{GRID}
         enter data copyin(a[0:6, 1:4]);
         assert(!acc_is_present(a), \"a box is not all of it\");
         parallel loop present(a[2:2, 2:2]) for j in 2..4 {{
             a[j, 2] = 0.5;
             a[j, 3] = 0.25;
         }}
         update self(a[2:2, 2:2]);
         exit data delete(a[0:6, 1:4]);
         assert(a[2, 2] == 0.5 && a[3, 3] == 0.25, \"inner box\");"
    ));
}

#[test]
fn column_boxes_that_cover_the_array_make_it_present() {
    ok(&format!(
        "{GRID}
         enter data copyin(a[:, 0:3]);
         let half = acc_is_present(a);
         enter data copyin(a[:, 3:3]);
         let all = acc_is_present(a);
         let s = sum(a);
         exit data delete(a[:, 0:3]);
         exit data delete(a[:, 3:3]);
         assert(!half && all, \"present once covered\");"
    ));
}

#[test]
fn a_box_overlapping_a_present_box_is_partially_present() {
    fails_with(
        &format!(
            "{GRID}
             enter data copyin(a[0:8, 0:3]);
             parallel loop present(a[2:2, 2:3]) for j in 2..4 {{ a[j, 2] = 1.0; }}"
        ),
        "accl::run::partially_present",
    );
    fails_with(
        &format!(
            "{GRID}
             enter data copyin(a[:, 1:2]);
             update self(a[0:4]);"
        ),
        "accl::run::partially_present",
    );
    fails_with(
        &format!(
            "{GRID}
             enter data copyin(a[:, 1:2]);
             enter data copyin(a[3:2, 2:2]);"
        ),
        "accl::run::partially_present",
    );
    // Disjoint boxes of the same rows are both present.
    ok(&format!(
        "{GRID}
         enter data copyin(a[:, 1:2]);
         enter data copyin(a[:, 3:2]);
         // Columns 0 and 5 were never entered.
         assert(!acc_is_present(a), \"columns 1..5 are not all of it\");
         update self(a[:, 1:2]);
         update self(a[:, 3:2]);
         exit data delete(a[:, 1:2]);
         exit data delete(a[:, 3:2]);
         // Nothing wrote the device copies: the updates bring back 10 j + i.
         for j in 0..8 {{ for i in 0..6 {{ assert(a[j, i] == (10 * j + i) as f32, \"grid\"); }} }}
         assert(a[0, 1] == 1.0 && a[7, 4] == 74.0, \"corners of the boxes\");"
    ));
}

#[test]
fn a_column_halo_exchange() {
    // Two halves of a grid, each with a ghost column: each sweep relaxes
    // both on the device, then only the boundary columns go through the
    // host into the other half's ghost column.
    ok("
        const N = 16;
        const H = 8;
        let l = zeros(f64, N, H + 1);
        let r = zeros(f64, N, H + 1);
        let ln = zeros(f64, N, H + 1);
        let rn = zeros(f64, N, H + 1);
        for j in 0..N { l[j, 0] = 1.0; r[j, H] = -1.0; }
        data copy(l, r) create(ln, rn) {
            for step in 0..10 {
                parallel loop collapse(2) for j in 1..N - 1 { for i in 1..H {
                    ln[j, i] = 0.25 * (((l[j - 1, i] + l[j + 1, i]) + l[j, i - 1]) + l[j, i + 1]);
                    rn[j, i] = 0.25 * (((r[j - 1, i] + r[j + 1, i]) + r[j, i - 1]) + r[j, i + 1]);
                } }
                parallel loop collapse(2) for j in 1..N - 1 { for i in 1..H {
                    l[j, i] = ln[j, i];
                    r[j, i] = rn[j, i];
                } }
                update self(l[:, H - 1:1]) self(r[:, 1:1]);
                for j in 0..N { l[j, H] = r[j, 1]; r[j, 0] = l[j, H - 1]; }
                update device(l[:, H:1]) device(r[:, 0:1]);
            }
        }
        assert(l[N / 2, H - 1] > 0.0 && r[N / 2, 1] < 0.0, \"heat crossed\");");
}

#[test]
fn async_updates_of_columns() {
    ok(&format!(
        "{GRID}
         let t = zeros(u8, 8, 6);
         data copy(a) copy(t) {{
             parallel loop async(1) for j in 0..8 {{ a[j, 0] = -5.0; t[j, 2] = 200u8; t[j, 3] = 7u8; }}
             update self(a[:, 0:1]) self(t[:, 2:1]) async(1);
             wait(1);
             for j in 0..8 {{ a[j, 5] = 42.0; }}
             update device(a[:, 5:1]) async(2);
             wait(2);
             parallel loop for j in 0..8 {{ a[j, 4] = a[j, 5] + 1.0; }}
         }}
         assert(a[0, 0] == -5.0 && t[7, 2] == 200u8 && t[7, 3] == 7u8 && a[7, 4] == 43.0, \"async\");"
    ));
}

#[test]
fn large_column_boxes_go_straight_between_host_and_device() {
    // 512 KiB boxes: copied with host memory imported where the device
    // allows (one region per row), smaller ones through staging.
    ok("
        let g = zeros(f32, 1024, 512);
        for j in 0..1024 { g[j, 0] = j as f32; g[j, 300] = -(j as f32); }
        enter data copyin(g[:, 0:128]);
        enter data copyin(g[:, 256:128]);
        parallel loop present(g[:, 0:128]) for j in 0..1024 {
            for i in 0..128 { g[j, i] = g[j, i] + 1.0; }
        }
        parallel loop present(g[:, 256:128]) for j in 0..1024 {
            for i in 256..384 { g[j, i] = g[j, i] * 2.0; }
        }
        for j in 0..1024 { g[j, 200] = 3.0; }
        exit data copyout(g[:, 0:128]);
        exit data copyout(g[:, 256:128]);
        assert(g[1000, 0] == 1001.0 && g[5, 300] == -10.0 && g[9, 200] == 3.0, \"big boxes\");");
}

#[test]
fn a_column_update_is_one_strided_copy() {
    let src = format!(
        "{GRID}
         data copy(a) {{
             parallel loop for j in 0..8 {{ a[j, 3] = 1.0; }}
             update self(a[:, 3:1]);
             assert(a[0, 3] == 1.0 && a[7, 3] == 1.0 && a[7, 2] == 72.0 && a[7, 4] == 74.0, \"column 3 only\");
         }}"
    );
    let names: Vec<String> = common::trace_events(&src)
        .iter()
        .filter(|x| x["pid"].as_u64().is_some_and(|p| p > 0) && x["ph"] == "X")
        .filter_map(|x| x["name"].as_str().map(str::to_string))
        .collect();
    let strided = names.iter().filter(|n| n.contains("strided")).count();
    assert_eq!(strided, 1, "{names:?}");
}

#[test]
fn sections_outside_the_array_are_refused_alike() {
    fails_with(
        &format!("{GRID}\nenter data copyin(a[:, 4:3]);"),
        "accl::run::bad_section",
    );
    fails_with(
        &format!("{GRID}\nupdate self(a[0:8, -1:2]) if_present;"),
        "accl::run::bad_section",
    );
}

// ------------------------------------------------------------ diagnostics

#[test]
fn diagnostic_more_axes_than_the_rank() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nupdate self(a[0:8, 2:2, 1:1]);"
    ));
}

#[test]
fn diagnostic_an_index_among_section_axes() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nenter data copyin(a[3, 0:2]);"
    ));
}

#[test]
fn diagnostic_a_bound_that_is_not_an_integer() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nlet x = 1.5;\nupdate device(a[:, x:1]);"
    ));
}

#[test]
fn diagnostic_a_box_partially_present() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nenter data copyin(a[:, 0:3]);\nparallel loop present(a[2:2, 2:3]) for j in 2..4 {\n    a[j, 2] = 1.0;\n}"
    ));
}

#[test]
fn diagnostic_rows_over_a_present_column_box() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nenter data copyin(a[:, 1:2]);\nupdate self(a[0:4]);"
    ));
}

#[test]
fn diagnostic_a_box_outside_the_array() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8, 6);\nenter data copyin(a[:, 4:3]);"
    ));
}

#[test]
fn diagnostic_a_box_not_present() {
    assert_snapshot!(fail("let a = zeros(f32, 8, 6);\nupdate self(a[:, 1:1]);"));
}

#[test]
fn many_runs_are_gathered_and_scattered_on_the_device() {
    // 64 rows of one column: more runs than copy regions are worth, so a
    // kernel packs them and one copy crosses; the values equal the host's.
    let src = "let a = zeros(f32, 64, 5); let b = zeros(u8, 64, 5);
        for j in 0..64 { for i in 0..5 { a[j, i] = (7 * j + i) as f32; b[j, i] = (j + i) as u8; } }
        data copyin(a, b) {
            parallel loop for j in 0..64 { a[j, 3] = a[j, 3] * 2.0; b[j, 1] = b[j, 1] + 100u8; }
            update self(a[:, 3:1], b[:, 1:1]);
            for j in 0..64 { a[j, 3] = a[j, 3] + 0.5; }
            update device(a[:, 3:1]);
            parallel loop for j in 0..64 { a[j, 4] = a[j, 3]; }
            update self(a[:, 4:1]);
        }
        // Column 3 doubled on the device, plus a half on the host, copied
        // to column 4; only the updated columns came back.
        for j in 0..64 {
            assert(a[j, 3] == (14 * j + 6) as f32 + 0.5 && a[j, 4] == a[j, 3], \"columns 3 and 4\");
            assert(a[j, 2] == (7 * j + 2) as f32 && b[j, 1] == (j + 101) as u8 && b[j, 2] == (j + 2) as u8, \"the rest\");
        }
        assert(a[63, 4] == 888.5 && b[63, 1] == 164u8, \"last row\");";
    ok(src);
    let names: Vec<String> = common::trace_events(src)
        .iter()
        .filter(|x| x["pid"].as_u64().is_some_and(|p| p > 0) && x["ph"] == "X")
        .filter_map(|x| x["name"].as_str().map(str::to_string))
        .collect();
    let count = |s: &str| names.iter().filter(|n| n.contains(s)).count();
    assert_eq!(
        (count("gather a box"), count("scatter a box")),
        (2, 1),
        "{names:?}"
    );
    // `u8` runs are not word aligned: copy regions.
    assert_eq!(count("download strided"), 1, "{names:?}");
}

/// An array present as two sections: a kernel that names neither binds the
/// one the nearest enclosing `data` region or `declare` names, also in a
/// function called inside the region; the innermost region wins while it
/// lasts. Outside every region naming one, the launch is still refused.
#[test]
fn a_kernel_binds_the_section_its_enclosing_data_region_names() {
    let src = "
        fn fill(c: f64[,], v: f64) { parallel loop for y in 0..4 { c[1, y] = v; } }
        fn declared(c: f64[,]) {
            declare present(c[0:1, 0:4]);
            parallel loop for y in 0..4 { c[0, y] = c[0, y] + 10.0; }
        }
        let c = zeros(f64, 2, 4);
        enter data copyin(c[0:1, 0:4]);
        enter data copyin(c[1:1, 0:4]);
        data present(c[1:1, 0:4]) {
            parallel loop for y in 0..4 { c[1, y] = 1.0; }
            data present(c[0:1, 0:4]) { parallel loop for y in 0..4 { c[0, y] = 2.0; } }
            parallel loop for y in 0..4 { c[1, y] = c[1, y] + 3.0; }
            fill(c, 5.0);
        }
        declared(c);
        exit data copyout(c[0:1, 0:4]);
        exit data copyout(c[1:1, 0:4]);
        assert(c[1, 3] == 5.0 && c[1, 0] == 5.0, \"row 1: from the region and the called function\");
        assert(c[0, 0] == 12.0 && c[0, 3] == 12.0, \"row 0: the inner region, then the declare\");";
    ok(src);
    let bare = "
        let c = zeros(f64, 2, 4);
        enter data copyin(c[0:1, 0:4], c[1:1, 0:4]);
        data present(c[1:1, 0:4]) { }
        parallel loop for y in 0..4 { c[1, y] = 1.0; }";
    let r = common::run(bare, true);
    let e = r.result.expect_err("no region names a section here");
    assert_eq!(e.diags[0].code, "accl::device::launch", "{}", e.render(100));
}
