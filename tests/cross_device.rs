//! Copies between the device copies of arrays on two devices
//! (`acc_memcpy_d2d`): on two logical lavapipe devices (`ACCL_DEVICES=0,0`),
//! with the validation layer on; the values are checked against what the
//! program computes, and the host reference (one device) refuses device 1.

use crate::common;
use common::{run, run_devices};

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
    assert!(r.engine.take_validation_messages().is_empty());
}

#[test]
fn a_copy_between_two_devices_carries_what_the_first_computed() {
    let dev = run_devices(
        "let a = arange(f32, 1000.0);
         let b = zeros(f32, 10, 100);
         set device_num(0);
         enter data copyin(a);
         parallel loop present(a) async(1) for i in 0..1000 { a[i] = a[i] * 2.0; }
         wait(1);
         // A synchronous kernel not waited for yet: the copy finds it done.
         parallel loop present(a) for i in 0..1000 { a[i] = a[i] + 0.5; }
         set device_num(1);
         enter data create(b);
         acc_memcpy_d2d(b, a, 1, 0);
         parallel loop present(b) for i in 0..10 { for j in 0..100 { b[i, j] = b[i, j] + 1.0; } }
         exit data copyout(b);
         // The same array on both devices: device 1's copy from device 0's.
         enter data create(a);
         acc_memcpy_d2d(a, a, 1, 0);
         exit data copyout(a);
         set device_num(0);
         exit data delete(a);",
        "0,0",
    );
    ok(&dev);
    let (b, _) = dev.engine.get_array::<f32>("b").unwrap();
    let want: Vec<f32> = (0..1000).map(|i| i as f32 * 2.0 + 1.5).collect();
    assert_eq!(b, want);
    let (a, _) = dev.engine.get_array::<f32>("a").unwrap();
    let want: Vec<f32> = (0..1000).map(|i| i as f32 * 2.0 + 0.5).collect();
    assert_eq!(a, want);
    assert!(dev.engine.present().is_empty());
}

/// Copies back and forth, step after step, with kernels on both devices
/// between them (synchronous ones not waited for yet), and a copy
/// into an array of another shape among them: every step goes through the
/// same host memory, reused while the shape stays, and still carries what
/// the last kernel computed. 128K elements, so the copies go straight
/// between device and host memory where the device can.
#[test]
fn repeated_copies_between_devices_carry_each_step() {
    let dev = run_devices(
        "let n = 131072;
         let a = arange(f32, n as f32);
         let m = zeros(f32, 256, 512);
         set device_num(1); enter data copyin(a, m);
         set device_num(0); enter data copyin(a);
         for step in 0..6 {
             parallel loop present(a) async(1) for i in 0..n { a[i] = a[i] + 1.0; }
             wait(1);
             acc_memcpy_d2d(a, a, 1, 0);
             set device_num(1);
             parallel loop present(a) for i in 0..n { a[i] = a[i] * 0.5; }
             if step % 2 == 1 {
                 // Another shape, same count: the copy changes its host memory.
                 acc_memcpy_d2d(m, a, 1, 1);
             }
             set device_num(0);
             acc_memcpy_d2d(a, a, 0, 1);
         }
         exit data copyout(a);
         set device_num(1); exit data copyout(m) delete(a);",
        "0,0",
    );
    ok(&dev);
    let mut want: Vec<f32> = (0..131072).map(|i| i as f32).collect();
    let mut m = Vec::new();
    for step in 0..6 {
        for v in &mut want {
            *v = (*v + 1.0) * 0.5;
        }
        if step % 2 == 1 {
            m = want.clone();
        }
    }
    let (a, _) = dev.engine.get_array::<f32>("a").unwrap();
    assert_eq!(a, want);
    let (got_m, shape) = dev.engine.get_array::<f32>("m").unwrap();
    assert_eq!((got_m, shape), (m, vec![256, 512]));
    assert!(dev.engine.present().is_empty());
}

/// Copies of 64 MiB, both ways, step after step: every row arrives where
/// it belongs.
#[test]
fn large_copies_between_devices_carry_every_row() {
    let dev = run_devices(
        "let a = reshape(arange(i32, 4100 * 4096), 4100, 4096);
         set device_num(1); enter data create(a);
         set device_num(0); enter data copyin(a);
         for step in 0..2 {
             set device_num(0);
             parallel loop collapse(2) present(a)
             for i in 0..4100 { for j in 0..4096 { a[i, j] = a[i, j] + step + 1; } }
             acc_memcpy_d2d(a, a, 1, 0);
             set device_num(1);
             parallel loop collapse(2) present(a)
             for i in 0..4100 { for j in 0..4096 { a[i, j] = a[i, j] * 2; } }
             acc_memcpy_d2d(a, a, 0, 1);
         }
         set device_num(1); exit data delete(a);
         set device_num(0); exit data copyout(a);",
        "0,0",
    );
    ok(&dev);
    let (a, shape) = dev.engine.get_array::<i32>("a").unwrap();
    assert_eq!(shape, vec![4100, 4096]);
    let want: Vec<i32> = (0..4100 * 4096).map(|i| ((i + 1) * 2 + 2) * 2).collect();
    assert!(a == want, "rows lost or misplaced");
}

#[test]
fn copies_between_devices_are_checked() {
    let code = |src: &str| {
        let r = run_devices(src, "0,0");
        r.result.expect_err("refused").code()
    };
    let setup = "let a = zeros(f32, 16); let b = zeros(f32, 16); let c = zeros(f32, 8);
                 set device_num(0); enter data copyin(a); ";
    // The destination is not present on device 1.
    assert_eq!(
        code(&format!("{setup} acc_memcpy_d2d(b, a, 1, 0);")),
        "accl::run::not_present"
    );
    // No device 2.
    assert_eq!(
        code(&format!("{setup} acc_memcpy_d2d(b, a, 2, 0);")),
        "accl::run::bad_device"
    );
    // Different element counts.
    assert_eq!(
        code(&format!("{setup} acc_memcpy_d2d(c, a, 1, 0);")),
        "accl::run::size_mismatch"
    );
    // The host reference has one device.
    let host = run("let a = zeros(f32, 4); acc_memcpy_d2d(a, a, 1, 0);", false);
    assert_eq!(
        host.result.expect_err("refused").code(),
        "accl::run::bad_device"
    );
}

/// Device 0's queue 1 computes `a` and a reduction and copies `a` back;
/// device 1's queue 2 goes on from there.
const JOINED: &str = "let a = zeros(f32, 1000); let s = 0.0f32; let t = 0.0f32;
     set device_num(0);
     enter data copyin(a);
     parallel loop present(a) async(1) for i in 0..1000 { a[i] = i as f32; }
     parallel loop present(a) async(1) reduction(+: s) for i in 0..1000 { s += a[i]; }
     update self(a) async(1);
     set device_num(1);
     WAIT
     t = s;
     enter data copyin(a) async(2);
     parallel loop present(a) async(2) for i in 0..1000 { a[i] = a[i] + 1.0; }
     update self(a) async(2);
     wait(2);
     exit data delete(a);
     set device_num(0);
     exit data delete(a);";

#[test]
fn a_queue_of_one_device_waits_for_a_queue_of_another() {
    for wait in [
        "wait(devnum: 0, 1) async(2);",
        "wait(devnum: 0, 1);",
        "wait(devnum: 0);",
    ] {
        let dev = run_devices(&JOINED.replace("WAIT", wait), "0,0");
        ok(&dev);
        assert_eq!(dev.engine.get::<f32>("t"), Some(499500.0), "{wait}");
        let (a, _) = dev.engine.get_array::<f32>("a").unwrap();
        assert!(
            a.iter().enumerate().all(|(i, &x)| x == i as f32 + 1.0),
            "{wait}"
        );
    }
    // Without it, device 1 reads the host array device 0 is copying into.
    let racy = run_devices(&JOINED.replace("WAIT", ""), "0,0");
    let code = racy.result.expect_err("a race").code();
    assert!(code.starts_with("accl::race::"), "{code}");
}

#[test]
fn cross_device_waits_are_checked() {
    let r = run_devices("wait(devnum: 2, 1);", "0,0");
    assert_eq!(
        r.result.expect_err("refused").code(),
        "accl::run::bad_device"
    );
    let r = run_devices("wait(dev: 0, 1);", "0,0");
    assert_eq!(
        r.result.expect_err("refused").code(),
        "accl::parse::wait_argument"
    );
    // On the current device it is the plain wait.
    let r = run_devices(
        "let a = zeros(i32, 8); enter data copyin(a);
         parallel loop present(a) async(3) for i in 0..8 { a[i] = i; }
         update self(a) async(3);
         wait(devnum: 0, 3);
         let x = a[7];",
        "0,0",
    );
    ok(&r);
    assert_eq!(r.engine.get::<i32>("x"), Some(7));
}

/// Sections on both sides: rows of a 2-D array into rows of another, a
/// block into part of a 1-D array (elements paired in row-major order),
/// each inside one present section; a box that reaches outside its
/// present section is refused.
#[test]
fn a_copy_between_devices_takes_sections() {
    let dev = run_devices(
        "let a = zeros(f64, 8, 4); let b = zeros(f64, 8, 4); let c = zeros(f64, 12);
         for i in 0..8 { for j in 0..4 { a[i, j] = (i * 10 + j) as f64; } }
         set device_num(0); enter data copyin(a);
         set device_num(1); enter data create(b[2:4]) create(c);
         acc_memcpy_d2d(b[2:3], a[5:3, 0:4], 1, 0);
         acc_memcpy_d2d(c[3:6], a[0:2, 1:3], 1, 0);
         exit data copyout(b[2:4], c);",
        "0,0",
    );
    ok(&dev);
    let (b, _) = dev.engine.get_array::<f64>("b").unwrap();
    let mut want = vec![0.0; 32];
    for i in 0..3 {
        for j in 0..4 {
            want[(2 + i) * 4 + j] = ((5 + i) * 10 + j) as f64;
        }
    }
    assert_eq!(b, want);
    let (c, _) = dev.engine.get_array::<f64>("c").unwrap();
    assert_eq!(
        c,
        [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 0.0, 0.0, 0.0]
    );
    let r = run_devices(
        "let a = zeros(f64, 8); let b = zeros(f64, 8);
         set device_num(0); enter data copyin(a);
         set device_num(1); enter data create(b[0:4]);
         acc_memcpy_d2d(b[2:4], a[0:4], 1, 0);",
        "0,0",
    );
    let e = r.result.expect_err("refused");
    assert_eq!(e.code(), "accl::run::not_present");
    assert!(
        e.render(100).contains("overlaps the present elements"),
        "{}",
        e.render(100)
    );
}
