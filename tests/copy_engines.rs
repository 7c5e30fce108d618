//! Direct copies of async queues on companion copy queues.
//!
//! On a GPU with copy engines (a transfer-only queue family), an async
//! queue's large copies to the host run on a companion queue there, so they
//! overlap the kernels of other queues. lavapipe has no copy engine, so this
//! test binary sets `ACCL_COPY_QUEUES=1`, which puts the companions on the
//! compute queue: every path (the device-side waits both ways, host waits
//! and joins covering the copy, traces) runs in CI under the validation
//! layer. It sets `ACCL_SUBMIT_THREAD=1` too, as a GPU has it: async
//! batches go through the device's submission thread, and each copy is
//! held there until the kernel it follows is done. Every test of this binary sets it first (once per process, before
//! any engine opens), so the tests may run in parallel. Results are compared with the host reference.

mod common;
use common::{run, run_devices, same_as_host, Floats};

fn companions() {
    common::set_env_once(&[("ACCL_COPY_QUEUES", "1"), ("ACCL_SUBMIT_THREAD", "1")]);
}

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
}

/// Names and tracks of the device events of a traced run of `src`.
fn traced(src: &str) -> Vec<(String, String)> {
    common::trace_events(src)
        .iter()
        .filter(|x| x["pid"].as_u64().is_some_and(|p| p > 0) && x["ph"] == "X")
        .map(|x| {
            (
                x["name"].as_str().unwrap_or("").to_string(),
                x["tid"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The tracks of the events named `name`.
fn on<'a>(ev: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    ev.iter()
        .filter(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
        .collect()
}

#[test]
fn blocks_copied_on_companions_equal_the_host_reference() {
    companions();
    // Two queues, each computing blocks of 512 KiB and copying them back.
    let src = "
        let img = zeros(i32, 1024, 512);
        enter data create(img);
        for b in 0..8 {
            let y0 = b * 128;
            parallel loop async(b % 2) for y in y0..y0 + 128 {
                for x in 0..512 { img[y, x] = (y * 31 + x * 7 + b) % 1000; }
            }
            update self(img[y0:128]) async(b % 2);
        }
        wait;
        exit data delete(img);";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    // The known answer, from the script's formula (block b holds rows
    // 128 b to 128 b + 127).
    let (img, shape) = dev.engine.get_array::<i32>("img").unwrap();
    assert_eq!(shape, [1024, 512]);
    for y in 0..1024 {
        for x in 0..512 {
            let want = ((y * 31 + x * 7 + y / 128) % 1000) as i32;
            assert_eq!(img[y * 512 + x], want, "img[{y}, {x}]");
        }
    }
    let ev = traced(src);
    let copies: Vec<_> = ev.iter().filter(|(n, _)| n == "download direct").collect();
    assert_eq!(copies.len(), 8, "{ev:?}");
    assert!(
        copies
            .iter()
            .all(|(_, t)| t == "async(0) copies" || t == "async(1) copies"),
        "{ev:?}"
    );
}

#[test]
fn a_queue_s_next_kernel_runs_after_its_copy_to_the_host() {
    companions();
    // The second kernel overwrites what the copy reads: the host must get
    // the first values. Then a join: queue 2 overwrites them again after
    // `wait(1) async(2)`, which must cover queue 1's copy too.
    let src = "
        let a = zeros(f32, 512, 256);
        let first = zeros(f32, 512, 256);
        enter data create(a);
        parallel loop async(1) for i in 0..512 { for j in 0..256 { a[i, j] = (i + j) as f32; } }
        update self(a) async(1);
        parallel loop async(1) for i in 0..512 { for j in 0..256 { a[i, j] = -1.0; } }
        wait(1);
        for i in 0..512 { for j in 0..256 { first[i, j] = a[i, j]; } }
        parallel loop async(1) for i in 0..512 { for j in 0..256 { a[i, j] = (i * j) as f32; } }
        update self(a) async(1);
        wait(1) async(2);
        parallel loop async(2) for i in 0..512 { for j in 0..256 { a[i, j] = 7.0; } }
        wait(2);
        let after_join = a[3, 5];
        wait;
        update self(a);
        exit data delete(a);";
    let (host, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    assert_eq!(
        host.engine.get::<f32>("after_join"),
        Some(15.0),
        "the host reference itself"
    );
    let (first, _) = dev.engine.get_array::<f32>("first").unwrap();
    assert_eq!(first[3 * 256 + 5], 8.0);
}

#[test]
fn multi_device_blocks_copied_on_companions() {
    companions();
    let src = "
        let image = zeros(u8, 2048, 1024);
        let ndev = acc_get_num_devices();
        for d in 0..ndev { set device_num(d); enter data create(image); }
        for block in 0..8 {
            let y0 = block * 256;
            set device_num(block % ndev);
            parallel loop async(block) for y in y0..y0 + 256 {
                for x in 0..1024 { image[y, x] = ((x * y + block) % 253) as u8; }
            }
            update self(image[y0:256]) async(block);
        }
        for d in 0..ndev { set device_num(d); wait; exit data delete(image); }";
    let host = run(src, false);
    ok(&host);
    let dev = run_devices(src, "0,0");
    ok(&dev);
    assert_eq!(dev.engine.get::<i32>("ndev"), Some(2));
    let (h, _) = host.engine.get_array::<u8>("image").unwrap();
    let (d, _) = dev.engine.get_array::<u8>("image").unwrap();
    assert!(h == d, "the two-device image differs from the host's");
    // The known answer, from the script's formula (block b holds rows
    // 256 b to 256 b + 255).
    for y in 0..2048 {
        for x in 0..1024 {
            let want = ((x * y + y / 256) % 253) as u8;
            assert_eq!(d[y * 1024 + x], want, "image[{y}, {x}]");
        }
    }
}

#[test]
fn a_wait_covers_a_companion_copy_after_work_already_submitted() {
    companions();
    // The kernel is the first work of queue 2, so it is submitted at once
    // (an idle queue); the copy back then follows submitted work on the
    // companion, and `wait` must cover it before the region frees `c`.
    let src = "
        let c = zeros(f32, 131072);
        data create(c) {
            parallel loop async(2) for i in 0..131072 { c[i] = 3.0 * i as f32; }
            update self(c) async(2);
            wait;
        }
        let s = c[131071];";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    assert_eq!(dev.engine.get::<f32>("s"), Some(393_213.0));
    // The same through a join: queue 3 joins queue 2, and a wait for
    // queue 3 covers queue 2's copy.
    let src = "
        let c = zeros(f32, 131072);
        let d = zeros(f32, 8);
        data create(c) copy(d) {
            parallel loop async(2) for i in 0..131072 { c[i] = 3.0 * i as f32; }
            update self(c) async(2);
            wait(2) async(3);
            parallel loop async(3) for i in 0..8 { d[i] = 1.0; }
            wait(3);
            let s = c[131071];
            wait(2);
        }";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    assert_eq!(dev.engine.get_array::<f32>("d").unwrap().0, [1.0; 8]);
    assert_eq!(
        dev.engine.get_array::<f32>("c").unwrap().0[131_071],
        393_213.0
    );
}

#[test]
fn synchronous_copies_run_on_the_companion_in_order() {
    companions();
    // Each synchronous direct copy (512 KiB, above the direct-copy size)
    // goes through the sync queue's companion: a kernel before it must
    // have finished (the copy to the host sees its values), and a kernel
    // after it must see what the copy to the device brought.
    let src = "
        let n = 131072;
        let a = zeros(f32, n);
        let seen = zeros(f32, n);
        enter data create(a);
        for round in 0..3 {
            parallel loop for i in 0..n { a[i] = (i + round * 7) as f32; }
            update self(a);
            for i in 0..n { seen[i] = seen[i] + a[i]; a[i] = 2.0 * a[i]; }
            update device(a);
            parallel loop for i in 0..n { a[i] = a[i] + 1.0; }
            update self(a);
            assert(a[n - 1] == 2.0 * (n - 1 + round * 7) as f32 + 1.0, \"round trip\");
        }
        exit data delete(a);
        assert(seen[5] == 36.0, \"kernel values seen by the host\");";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    let ev = traced(src);
    let (down, up) = (on(&ev, "download direct"), on(&ev, "upload direct"));
    assert_eq!((down.len(), up.len()), (6, 3), "{ev:?}");
    assert!(
        down.iter().chain(&up).all(|t| t.ends_with("copies")),
        "{ev:?}"
    );
}

#[test]
fn a_large_synchronous_copy_is_shared_by_two_companions() {
    companions();
    // 40 MiB each way: past the size from which a synchronous copy is cut
    // in two halves, one per companion; rows of 1 MiB, so the cut falls
    // inside the array and inside a section.
    let src = "
        let a = zeros(i32, 40, 262144);
        for r in 0..40 { for c in 0..262144 { a[r, c] = (r * 7919 + c * 7) % 1001; } }
        enter data create(a);
        update device(a);
        parallel loop present(a) for r in 0..40 {
            for c in 0..262144 { a[r, c] = a[r, c] + (r + c) % 13; }
        }
        update self(a);
        for c in 0..262144 { a[39, c] = -1; }
        update self(a[4:36]);
        exit data delete(a);";
    let (_, dev) = same_as_host(src, Floats::Exact);
    ok(&dev);
    let (a, shape) = dev.engine.get_array::<i32>("a").unwrap();
    assert_eq!(shape, [40, 262144]);
    for r in 0..40usize {
        for c in (0..262144usize)
            .step_by(997)
            .chain([131071, 131072, 262143])
        {
            let want = ((r * 7919 + c * 7) % 1001 + (r + c) % 13) as i32;
            assert_eq!(a[r * 262144 + c], want, "a[{r}, {c}]");
        }
    }
    let ev = traced(src);
    // Each copy in two halves, both on the synchronous queue's companions.
    let (down, up) = (on(&ev, "download direct"), on(&ev, "upload direct"));
    assert_eq!((down.len(), up.len()), (4, 2), "{ev:?}");
    assert!(
        down.iter().chain(&up).all(|t| *t == "sync copies"),
        "{ev:?}"
    );
}
