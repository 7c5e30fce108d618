//! Async queues, joins, multi-device and race detection on the Vulkan
//! backend (lavapipe in CI: one `VkQueue`, so every accl queue shares it and
//! these tests exercise the queue model itself, not hardware concurrency).
//! Results are compared with the host reference run of the same script;
//! race diagnostics are checked for their code and both spans.

use crate::common;
use common::{run, run_devices, same_as_host, Floats};

fn example(name: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.accl"));
    std::fs::read_to_string(p).unwrap()
}

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
}

/// The error of a run: its code, and the source text under each label.
fn failure(src: &str, r: &common::Run) -> (&'static str, Vec<String>) {
    let e = r.result.as_ref().expect_err("the script should fail");
    let d = &e.diags[0];
    let texts = d
        .labels
        .iter()
        .map(|(s, _)| src[s.start as usize..s.end as usize].to_string())
        .collect();
    (d.code, texts)
}

#[test]
fn mandelbrot_multi_on_two_logical_devices() {
    let src = example("mandelbrot_multi");
    let host = run(&src, false);
    ok(&host);
    let dev = run_devices(&src, "0,0");
    ok(&dev);
    assert!(
        dev.out.borrow().contains("computed on 2 device(s)"),
        "{}",
        dev.out.borrow()
    );
    let (h, _) = host.engine.get_array::<u8>("image").unwrap();
    let (d, _) = dev.engine.get_array::<u8>("image").unwrap();
    assert!(h == d, "the two-device image differs from the host's");
    // Each device kept its own present table; both were released.
    assert!(dev.engine.present().is_empty());
}

#[test]
fn a_long_chain_of_async_kernels_runs_in_order() {
    // Each step depends on the one before: any reordering changes the result.
    let src = "
        let a = zeros(i32, 300);
        data copy(a) {
            for k in 0..400 {
                parallel loop async(3) for i in 0..300 {
                    a[i] = (a[i] * 3 + k + i) % 65521;
                }
            }
            wait(3);
        }";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    // The recurrence, step by step, computed here.
    let want: Vec<i32> = (0..300)
        .map(|i| (0..400).fold(0i64, |a, k| (a * 3 + k + i) % 65521) as i32)
        .collect();
    assert_eq!(dev.engine.get_array::<i32>("a").unwrap().0, want);
}

#[test]
fn wait_p_async_q_orders_q_after_p_without_blocking_the_host() {
    // Queue 1 computes `a` in many steps; queue 2 reads it after the join.
    // Without the join the race detector refuses queue 2's kernel, so this
    // fails if the join were ignored; the values check the device order.
    let src = "
        let a = zeros(i32, 1000);
        let b = zeros(i32, 1000);
        data create(a) copyout(b) {
            for k in 0..50 {
                parallel loop async(1) for i in 0..1000 { a[i] = a[i] + i + k; }
            }
            wait(1) async(2);
            parallel loop async(2) for i in 0..1000 { b[i] = a[i] * 2; }
            wait(2);
        }
        for i in 0..1000 { assert(b[i] == 2 * (50 * i + 1225), \"b\"); }";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    let unjoined = src.replace("wait(1) async(2);", "");
    let r = run(&unjoined, true);
    let (code, labels) = failure(&unjoined, &r);
    assert_eq!(code, "accl::race::queues");
    assert!(
        labels[0].contains("async(2)") && labels[1].contains("async(1)"),
        "{labels:?}"
    );
}

#[test]
fn sixty_four_queue_numbers_share_fewer_hardware_queues() {
    let src = "
        let a = zeros(i32, 64 * 32);
        data copyout(a) {
            for q in 0..64 {
                parallel loop async(q) for i in q * 32..q * 32 + 32 { a[i] = q * 1000 + i; }
            }
            wait;
        }
        for i in 0..64 * 32 { assert(a[i] == (i / 32) * 1000 + i, \"a\"); }";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
}

#[test]
fn async_copies_land_when_the_host_waits() {
    let src = "
        let a = arange(f32, 4096);
        let b = zeros(f32, 4096);
        enter data copyin(a) async(5);
        enter data create(b) async(5);
        parallel loop async(5) for i in 0..4096 { b[i] = a[i] * 0.5; }
        update self(b) async(5);
        exit data delete(a) async(5);
        wait(5);
        exit data delete(b);
        let s: f32 = 0.0;
        for i in 0..4096 { s += b[i]; }";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    // (0 + .. + 4095) / 2, every partial sum exact in f32.
    assert_eq!(dev.engine.get::<f32>("s"), Some(4_193_280.0));
}

#[test]
fn exit_data_on_the_same_queue_while_work_is_pending() {
    // The memory is released only after the queued kernel and copy finish.
    let src = "
        let a = zeros(f32, 100000);
        enter data copyin(a);
        parallel loop async(1) for i in 0..100000 { a[i] = i as f32 + 1.0; }
        exit data copyout(a) async(1);
        wait(1);
        assert(a[99999] == 100000.0, \"copied out after the kernel\");";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
}

#[test]
fn a_copy_in_after_a_copy_out_on_the_same_queue_reads_what_came_out() {
    // A small (staged) copy out lands in the host array only when the host
    // observes the queue; the copy in after it on the same queue must read
    // the array as that copy out left it (OpenACC V&V
    // acc_copyout_finalize_async, T4). It read the old values.
    let src = "
        let c = zeros(f64, 100);
        enter data create(c);
        parallel loop present(c) async(1) for x in 0..100 { c[x] = 1.0; }
        exit data copyout(c) async(1);
        enter data copyin(c) async(1);
        parallel loop present(c) async(1) for x in 0..100 { c[x] += 1.0; }
        exit data copyout(c) async(1);
        wait(1);
        assert(c[0] == 2.0 && c[99] == 2.0, \"the second kernel adds to the first's result\");";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
}

#[test]
fn a_reduction_on_an_async_construct_is_ready_after_it() {
    let src = "
        let a = arange(i64, 10000);
        let s: i64 = 0;
        parallel loop async(2) copyin(a) reduction(+: s) for i in 0..10000 { s += a[i]; }
        wait(2);";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    assert_eq!(dev.engine.get::<i64>("s"), Some(49995000));
}

#[test]
fn host_read_of_an_array_a_pending_copy_writes_is_an_error() {
    let src = "let a = zeros(f32, 1000);
data copy(a) {
    parallel loop async(1) for i in 0..1000 { a[i] = 1.0; }
    update self(a) async(1);
    let x = a[3];
}";
    let r = run(src, true);
    let (code, labels) = failure(src, &r);
    assert_eq!(code, "accl::race::host");
    assert_eq!(labels[0], "a[3]");
    assert!(
        labels[1].starts_with("update self(a) async(1)")
            || labels[1].starts_with("parallel loop async(1)")
    );
    let help = r.result.as_ref().unwrap_err().diags[0]
        .help
        .clone()
        .unwrap();
    assert!(help.contains("wait(1)"), "{help}");
}

#[test]
fn host_write_while_a_kernel_reads_is_an_error_and_the_engine_recovers() {
    let mut r = run(
        "let a = arange(f32, 1000); let b = zeros(f32, 1000); enter data copyin(a, b);",
        true,
    );
    ok(&r);
    let src = "parallel loop async(4) for i in 0..1000 { b[i] = a[i] * 2.0; }
a[10] = 5.0;";
    let e = r.engine.eval(src).expect_err("a race");
    let d = &e.diags[0];
    assert_eq!(d.code, "accl::race::host");
    let text = |i: usize| &e.source.text[d.labels[i].0.start as usize..d.labels[i].0.end as usize];
    assert!(text(0).starts_with("a[10]"), "{}", text(0));
    assert!(text(1).starts_with("parallel loop async(4)"), "{}", text(1));
    // The same engine goes on: wait, then the host may write.
    r.engine
        .eval("wait(4); a[10] = 5.0; update self(b); exit data delete(a, b);")
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    let (b, _) = r.engine.get_array::<f32>("b").unwrap();
    assert_eq!(b[999], 1998.0);
    let (a, _) = r.engine.get_array::<f32>("a").unwrap();
    assert_eq!(a[10], 5.0);
    assert!(r.engine.present().is_empty());
}

#[test]
fn exit_data_racing_with_another_queue_is_an_error() {
    let mut r = run("let a = zeros(f32, 1000); enter data copyin(a);", true);
    ok(&r);
    let src = "parallel loop async(1) for i in 0..1000 { a[i] = 1.0; }
exit data copyout(a) async(2);";
    let e = r.engine.eval(src).expect_err("a race");
    let d = &e.diags[0];
    assert_eq!(d.code, "accl::race::queues");
    let text = |i: usize| &e.source.text[d.labels[i].0.start as usize..d.labels[i].0.end as usize];
    assert!(text(0).starts_with("exit data"), "{}", text(0));
    assert!(text(1).starts_with("parallel loop async(1)"), "{}", text(1));
    // Nothing was lost: the section is still present and a wait then an
    // exit brings the kernel's values back.
    r.engine
        .eval("wait; exit data copyout(a);")
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(r.engine.get_array::<f32>("a").unwrap().0[999], 1.0);
    assert!(r.engine.present().is_empty());
}

#[test]
fn a_data_region_ending_with_unwaited_work_is_an_error() {
    let src = "let a = zeros(f32, 1000);
data copy(a) {
    parallel loop async(7) for i in 0..1000 { a[i] = 1.0; }
}";
    let r = run(src, true);
    let (code, labels) = failure(src, &r);
    assert_eq!(code, "accl::race::queues");
    assert!(labels[0].starts_with("data copy(a)"), "{labels:?}");
    assert!(
        labels[1].starts_with("parallel loop async(7)"),
        "{labels:?}"
    );
}

#[test]
fn two_queues_writing_overlapping_rows_is_an_error_disjoint_rows_are_not() {
    let src = "let a = zeros(f32, 1000);
enter data create(a);
parallel loop async(1) for i in 0..600 { a[i] = 1.0; }
parallel loop async(2) for i in 500..1000 { a[i] = 2.0; }
wait;";
    let r = run(src, true);
    let (code, labels) = failure(src, &r);
    assert_eq!(code, "accl::race::queues");
    assert!(
        labels[0].starts_with("parallel loop async(2)"),
        "{labels:?}"
    );
    assert!(
        labels[1].starts_with("parallel loop async(1)"),
        "{labels:?}"
    );
    let msg = &r.result.as_ref().unwrap_err().diags[0].message;
    assert!(msg.contains("rows 500..600"), "{msg}");
    let disjoint = src.replace("0..600", "0..500");
    ok(&run(&disjoint, true));
}

#[test]
fn gang_loops_of_two_queues_on_disjoint_rows_do_not_race() {
    // Blocks of rows, one gang per row and the columns over vector lanes,
    // each block on its own queue and copied back on it.
    let src = "let img = zeros(i32, 64, 48);
enter data create(img);
for b in 0..4 {
    let y0 = b * 16;
    parallel loop gang vector_length(32) async(b) for y in y0..y0 + 16 {
        loop vector for x in 0..48 { img[y, x] = y * 100 + x + b; }
    }
    update self(img[y0:16]) async(b);
}
wait;
exit data delete(img);";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    let (img, _) = dev.engine.get_array::<i32>("img").unwrap();
    for y in 0..64 {
        for x in 0..48 {
            assert_eq!(
                img[y * 48 + x],
                (y * 100 + x + y / 16) as i32,
                "img[{y}, {x}]"
            );
        }
    }
    // Blocks that overlap by a row race.
    let overlap = src.replace("for y in y0..y0 + 16", "for y in y0..min(y0 + 17, 64)");
    let r = run(&overlap, true);
    assert_eq!(failure(&overlap, &r).0, "accl::race::queues");
}

#[test]
fn one_queue_reading_what_another_writes_is_an_error() {
    let src = "let a = zeros(f32, 100);
let b = zeros(f32, 100);
enter data create(a, b);
parallel loop async(1) for i in 0..100 { a[i] = 1.0; }
parallel loop async(2) for i in 0..100 { b[i] = a[i]; }
wait;";
    let r = run(src, true);
    assert_eq!(failure(src, &r).0, "accl::race::queues");
}

#[test]
fn large_copies_go_straight_between_device_and_host_arrays() {
    // Copies of 256 KiB or more move between device memory and the host
    // array itself (imported host memory, no staging). Rows of 1001 bytes
    // put the sections at odd host offsets; the `bool` array and the small
    // copies go through staging. Results must equal the host reference's.
    let src = "
        let img = zeros(u8, 2048, 1001);
        let src = zeros(i32, 2048, 257);
        for y in 0..2048 { for x in 0..257 { src[y, x] = y * 7 + x; } }
        let flags = zeros(bool, 600000);
        let small = zeros(f32, 1000);
        enter data create(img, flags, small);
        enter data copyin(src) async(1);
        wait(1);
        for b in 0..4 {
            let y0 = 1 + b * 511;
            let q = b % 2 + 1;
            parallel loop async(q) for y in y0..y0 + 511 {
                for x in 0..1001 { img[y, x] = ((src[y, x % 257] + x) % 251) as u8; }
            }
            update self(img[y0:511]) async(q);
        }
        wait;
        for y in 0..2048 { src[y, 0] = -y; }
        update device(src[0:2048]) async(2);
        parallel loop async(2) for i in 0..600000 { flags[i] = i % 3 == 0 || src[i % 2048, 0] < -2000; }
        parallel loop async(2) for i in 0..1000 { small[i] = src[i, 0] as f32 * 0.5; }
        update self(flags) async(2);
        update self(small) async(2);
        wait(2);
        parallel loop for y in 0..2048 { img[y, 0] = (src[y, 0] % 200 + 200) as u8; }
        update self(img[0:2048]);
        wait;
        exit data delete(img, flags, small, src);";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    // The known answer, from the script's formulas: the blocks cover rows
    // 1 to 2044 from the first `src`; column 0 comes from the negated one
    // (`%` keeps the dividend's sign); the rest stays as `create` left it.
    let e = &dev.engine;
    let img = e.get_array::<u8>("img").unwrap().0;
    for y in 0..2048 {
        for x in 0..1001 {
            let want = if x == 0 {
                (-(y as i32) % 200 + 200) as u8
            } else if (1..2045).contains(&y) {
                ((y * 7 + x % 257 + x) % 251) as u8
            } else {
                0
            };
            assert_eq!(img[y * 1001 + x], want, "img[{y}, {x}]");
        }
    }
    let flags = e.get_array::<bool>("flags").unwrap().0;
    for i in [0, 1, 2, 3, 2000, 2001, 2047, 2048, 4049, 599_999] {
        assert_eq!(flags[i], i % 3 == 0 || i % 2048 > 2000, "flags[{i}]");
    }
    let small = e.get_array::<f32>("small").unwrap().0;
    assert_eq!((small[0], small[1], small[999]), (0.0, -0.5, -499.5));

    let events = common::trace_events(src);
    let names: Vec<&str> = events.iter().filter_map(|x| x["name"].as_str()).collect();
    let count = |n: &str| names.iter().filter(|&&x| x == n).count();
    // The four blocks, the whole `img` (synchronous) and `flags` and
    // `small` (staged); `src` up twice.
    assert_eq!(count("download direct"), 5, "{names:?}");
    assert_eq!(count("download"), 2, "{names:?}");
    assert_eq!(count("upload direct"), 2, "{names:?}");
}

#[test]
fn the_trace_has_a_host_track_and_one_track_per_queue() {
    let src = "let a = zeros(f32, 4096);
data create(a) {
    parallel loop async(1) for i in 0..2048 { a[i] = 1.0; }
    parallel loop async(2) for i in 2048..4096 { a[i] = 2.0; }
    update self(a[0:2048]) async(1);
    update self(a[2048:2048]) async(2);
    wait;
}";
    let v = common::trace_of(src);
    let json = v.to_string();
    let ev = v["traceEvents"].as_array().unwrap();
    let on = |pid: u64, tid: &str, name: &str| {
        ev.iter().any(|x| {
            x["pid"] == pid && x["tid"] == tid && x["name"].as_str().unwrap_or("").contains(name)
        })
    };
    // Kernels with their source line, on their queue's track.
    assert!(on(1, "async(1)", "kernel_0 line 3"), "{json}");
    assert!(on(1, "async(2)", "kernel_1 line 4"), "{json}");
    assert!(
        on(1, "async(1)", "download") && on(1, "async(2)", "download"),
        "{json}"
    );
    // The host track: launches, the wait and the submissions it caused.
    assert!(on(0, "host", "launch kernel_0 line 3"), "{json}");
    assert!(on(0, "host", "wait (line 7)"), "{json}");
    assert!(on(0, "host", "submit device 0 async(1)"), "{json}");
    // Device events are complete events with a duration, on the host clock
    // after the launch that queued them.
    let kernel = ev.iter().find(|x| x["name"] == "kernel_0 line 3").unwrap();
    let launch = ev
        .iter()
        .find(|x| {
            x["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("launch kernel_0")
        })
        .unwrap();
    assert_eq!(kernel["ph"], "X");
    assert!(kernel["dur"].as_f64().unwrap() >= 0.0);
    // Calibration error is bounded by a wait's latency, which a loaded
    // machine stretches: the bound here (1 s) only proves the device clock
    // is mapped onto the host's (not, say, off by its epoch), whatever the
    // machine's load.
    assert!(
        kernel["ts"].as_f64().unwrap() + 1e6 >= launch["ts"].as_f64().unwrap(),
        "{kernel} before {launch}"
    );
    // Process names for Perfetto.
    assert!(ev.iter().any(|x| x["ph"] == "M" && x["pid"] == 1));
}

/// Across inputs of one engine, a kernel is named by its line in the input
/// it was written in: line 1 of a one-line input, whatever declarations
/// came before, and the line in its own input for a function's kernel.
#[test]
fn trace_lines_count_from_each_input() {
    let mut e = common::device_engine();
    e.eval("const N = 64;\nlet a = zeros(f32, N);\n\nfn fill(v: f32[]) {\n    parallel loop for i in 0..len(v) { v[i] = 2.0; }\n}")
        .unwrap();
    e.start_trace().unwrap();
    e.eval("parallel loop for i in 0..N { a[i] = 1.0; }")
        .unwrap();
    e.eval("\nfill(a);").unwrap();
    let json = e.stop_trace().unwrap();
    assert!(e.take_validation_messages().is_empty());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["name"].as_str())
        .filter(|n| n.starts_with("kernel_"))
        .collect();
    assert!(names.iter().any(|n| n.ends_with(" line 1")), "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with(" line 5 of <input 1>")),
        "{names:?}"
    );
}

#[test]
fn devices_are_chosen_by_list() {
    let r = run_devices("assert(acc_get_num_devices() == 3, \"three\");", "0,0,0");
    ok(&r);
    let bad = accl::Engine::vulkan_devices(Some("7"), 0);
    assert!(bad.is_err());
    let bad = accl::Engine::vulkan_devices(Some("zero"), 0);
    let msg = bad.err().unwrap().render(100);
    assert!(msg.contains("not a device number"), "{msg}");
}
