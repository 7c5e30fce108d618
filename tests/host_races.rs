//! Race detection on the host reference backend: its async work runs at
//! once, but stays pending in program order until the program waits for
//! it, so `--host` rejects exactly the programs a device run rejects
//! (`accl::race::*`), with the same diagnostic. Each program runs on both
//! backends (lavapipe with validation for the device).

use crate::common;
use common::run;

/// Racy programs, each refused on both backends alike.
const RACY: &[&str] = &[
    // A host read of what a pending copy writes.
    "let a = zeros(f32, 1000);
data copy(a) {
    parallel loop async(1) for i in 0..1000 { a[i] = 1.0; }
    update self(a) async(1);
    let x = a[3];
}",
    // A host write of what a pending kernel reads.
    "let a = arange(f32, 1000); let b = zeros(f32, 1000); enter data copyin(a, b);
parallel loop async(4) for i in 0..1000 { b[i] = a[i] * 2.0; }
a[10] = 5.0;",
    // Freeing memory another queue's kernel writes.
    "let a = zeros(f32, 1000); enter data copyin(a);
parallel loop async(1) for i in 0..1000 { a[i] = 1.0; }
exit data copyout(a) async(2);",
    // A data region ending with unwaited work.
    "let a = zeros(f32, 1000);
data copy(a) {
    parallel loop async(7) for i in 0..1000 { a[i] = 1.0; }
}",
    // Two queues writing overlapping rows.
    "let a = zeros(f32, 1000);
enter data create(a);
parallel loop async(1) for i in 0..600 { a[i] = 1.0; }
parallel loop async(2) for i in 500..1000 { a[i] = 2.0; }
wait;",
    // One queue reading what another writes.
    "let a = zeros(f32, 100);
let b = zeros(f32, 100);
enter data create(a, b);
parallel loop async(1) for i in 0..100 { a[i] = 1.0; }
parallel loop async(2) for i in 0..100 { b[i] = a[i]; }
wait;",
    // A join of the wrong queue.
    "let a = zeros(i32, 1000);
let b = zeros(i32, 1000);
data create(a) copyout(b) {
    parallel loop async(1) for i in 0..1000 { a[i] = i; }
    wait(3) async(2);
    parallel loop async(2) for i in 0..1000 { b[i] = a[i] * 2; }
    wait(2);
}",
    // A device copy while another queue writes its source.
    "let a = zeros(f32, 64); let b = zeros(f32, 64); enter data copyin(a, b);
parallel loop async(1) for i in 0..64 { a[i] = 1.0; }
acc_memcpy_device(b, a);",
    // Reading a whole array (sum) while a copy into it is pending.
    "let a = zeros(f32, 64); enter data create(a);
parallel loop async(1) for i in 0..64 { a[i] = 2.0; }
exit data copyout(a) async(1);
let s = sum(a);",
    // Blocks of rows picked by a captured scalar, two queues on one block.
    "let c = zeros(f32, 400); let e = zeros(i32, 4); enter data create(c, e);
let x = 1;
parallel loop async(1) for y in 0..100 { c[x * 100 + y] = 1.0; }
parallel loop async(2) reduction(+: e[x]) for y in 0..100 { e[x] += 1; }
parallel loop async(2) for y in 0..100 { c[100 + y] = 2.0; }
wait;",
    // An array picked by a condition on a captured scalar, true on both
    // queues.
    "let a = zeros(f32, 100); let b = zeros(f32, 100); enter data create(a, b);
for q in 1..3 {
    let pick = q - q;
    parallel loop async(q) for k in 0..100 { if pick == 0 { a[k] = 1.0; } else { b[k] = 1.0; } }
}
wait;",
];

/// The same programs made correct: both backends run them.
const FIXED: &[&str] = &[
    "let a = zeros(f32, 1000);
data copy(a) {
    parallel loop async(1) for i in 0..1000 { a[i] = 1.0; }
    update self(a) async(1);
    wait(1);
    let x = a[3];
    assert(x == 1.0, \"the update brought the kernel's value\");
}
assert(a[999] == 1.0, \"copied out\");",
    "let a = zeros(f32, 1000);
enter data create(a);
parallel loop async(1) for i in 0..500 { a[i] = 1.0; }
parallel loop async(2) for i in 500..1000 { a[i] = 2.0; }
wait;
exit data delete(a);
assert(a[0] == 0.0 && a[999] == 0.0, \"delete leaves the host array as it was\");",
    "let a = zeros(i32, 1000);
let b = zeros(i32, 1000);
data create(a) copyout(b) {
    parallel loop async(1) for i in 0..1000 { a[i] = i; }
    wait(1) async(2);
    parallel loop async(2) for i in 0..1000 { b[i] = a[i] * 2; }
    wait(2);
}
assert(b[999] == 1998 && b[1] == 2 && a[5] == 0, \"b from a, a never copied out\");",
    "let a = zeros(f32, 64); let b = zeros(f32, 64); enter data copyin(a, b);
parallel loop async(1) for i in 0..64 { a[i] = 1.0; }
while !acc_async_test(1) { }
acc_memcpy_device(b, a);
exit data copyout(b) delete(a);
assert(b[63] == 1.0 && a[0] == 0.0, \"b is the device copy of a\");",
    // Each queue its own block of rows (`c[x * n + y]`) and its own
    // element (`e[x]`), picked by a captured scalar.
    "let c = zeros(f32, 400); let e = zeros(i32, 4); enter data create(c, e);
for x in 0..4 {
    parallel loop async(x) for y in 0..100 { c[x * 100 + y] = 1.0; }
    parallel loop async(x) reduction(+: e[x]) for y in 0..100 { e[x] += 1; }
}
wait;
exit data delete(c) copyout(e);
assert(e[0] == 100 && e[3] == 100 && c[0] == 0.0, \"one count per row\");",
    // Each queue's kernel picks its array by a condition on a captured
    // scalar: at launch, the branches not taken touch nothing.
    "let a = zeros(f32, 100); let b = zeros(f32, 100); let c = zeros(f32, 100);
data copy(a, b, c) {
    for q in 0..3 {
        parallel loop async(q) for k in 0..100 {
            if q == 0 { a[k] = 1.0; } else if q == 1 { b[k] = 2.0; } else { c[k] = 3.0; }
        }
    }
    wait;
}
assert(a[99] == 1.0 && b[0] == 2.0 && c[50] == 3.0, \"one array per queue\");",
];

#[test]
fn the_host_refuses_every_race_the_device_refuses_with_the_same_diagnostic() {
    for src in RACY {
        let (h, d) = (run(src, false), run(src, true));
        let (he, de) = match (&h.result, &d.result) {
            (Err(he), Err(de)) => (he, de),
            (hr, dr) => panic!(
                "both must refuse:\n{src}\nhost: {:?}\ndevice: {:?}",
                hr.as_ref().map_err(|e| e.render(100)),
                dr.as_ref().map_err(|e| e.render(100))
            ),
        };
        assert!(de.code().starts_with("accl::race::"), "{}", de.render(100));
        let (hd, dd) = (&he.diags[0], &de.diags[0]);
        assert_eq!(
            (hd.code, &hd.message, &hd.labels, &hd.help),
            (dd.code, &dd.message, &dd.labels, &dd.help),
            "{src}"
        );
    }
}

#[test]
fn correct_async_programs_run_on_both() {
    for src in FIXED {
        let (_, dev) = common::same_as_host(src, common::Floats::Exact);
        if let Err(e) = &dev.result {
            panic!("{src}\n{}", e.render(100));
        }
    }
}

/// Rows worked out at launch: each queue's kernel writes its own row of a
/// flattened array (`c[x * n + y]`) and its own counter (`errors[x] += 1`),
/// and a boundary row (`a[rows, i]`) is computed on one queue beside the
/// interior on another. None of them races; both backends agree on the
/// values.
#[test]
fn rows_fixed_for_a_launch_do_not_race() {
    let src = "const n = 50;
let c = zeros(f64, 4 * n);
let errors = zeros(i32, 4);
data copy(c, errors) {
    for x in 0..4 {
        parallel loop async(x) for y in 0..n { c[x * n + y] = (x * 100 + y) as f64; }
        serial loop async(x) for y in 0..n { if c[x * n + y] >= 100.0 * x as f64 { errors[x] += 1; } }
    }
    wait;
}
let rows = 6;
let m = 8;
let a = zeros(f64, rows + 2, m);
let b = zeros(f64, rows + 2, m);
for i in 0..m { a[0, i] = 1.0; a[rows + 1, i] = 2.0; }
data copyin(a) copy(b) {
    parallel loop async(1) for i in 0..m { b[rows, i] = a[rows - 1, i] + a[rows + 1, i]; }
    parallel loop collapse(2) async(2) for j in 1..rows { for i in 0..m { b[j, i] = a[j - 1, i]; } }
    wait;
}";
    for device in [false, true] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("device {device}:\n{}", e.render(100)));
        let errors = r.engine.get_array::<i32>("errors").unwrap().0;
        assert_eq!(errors, [50, 50, 50, 50], "device {device}");
        let c = r.engine.get_array::<f64>("c").unwrap().0;
        assert_eq!(c[3 * 50 + 7], 307.0, "device {device}");
        let (b, _) = r.engine.get_array::<f64>("b").unwrap();
        assert_eq!(
            &b[6 * 8..7 * 8],
            [2.0; 8],
            "device {device}: the boundary row"
        );
        assert_eq!(
            &b[8..16],
            [1.0; 8],
            "device {device}: the first interior row"
        );
    }
}

#[test]
fn a_device_copy_racing_a_queue_is_reported_as_a_device_copy() {
    // `acc_memcpy_device` reads the device copy of `a`: the race is between
    // the queues, not with the host (which reads nothing here).
    let src = "let a = zeros(f32, 64); let b = zeros(f32, 64); enter data copyin(a, b);
parallel loop async(1) for i in 0..64 { a[i] = 1.0; }
acc_memcpy_device(b, a);";
    for device in [false, true] {
        let r = run(src, device);
        let e = r.result.expect_err("a race");
        let d = &e.diags[0];
        assert_eq!(d.code, "accl::race::queues", "{}", e.render(100));
        assert!(d.message.contains("device-to-device copy"), "{}", d.message);
        assert!(!d.message.contains("the host"), "{}", d.message);
    }
}
