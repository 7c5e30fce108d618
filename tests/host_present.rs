//! The present-table rules on the host backend: reference
//! counts, finalize, sections, partially present, not present, if_present,
//! no_create and implicit copies. The host keeps a separate device copy, so
//! transfers (or their absence) are visible.

use accl::interp::present::{Env, EnvError, Find, PresentTable, Region, Section};
use accl::Array;

fn rows(lo: usize, hi: usize) -> Region {
    Region::rows(lo, hi)
}

fn eval(e: &mut accl::Engine, src: &str) -> String {
    match e.eval(src) {
        Ok(v) => v.map(|v| v.to_string()).unwrap_or_default(),
        Err(err) => panic!("{}", err.render(100)),
    }
}

fn code(src: &str) -> &'static str {
    accl::Engine::new().eval(src).unwrap_err().code()
}

#[test]
fn reference_counts_directly() {
    let a = Array::from_vec(vec![1.0f32; 10], vec![10]).unwrap();
    let mut t = PresentTable::default();
    t.attach(0, &a, &rows(0, 10), true, false).unwrap();
    t.attach(0, &a, &rows(0, 10), true, false).unwrap();
    t.attach(0, &a, &rows(2, 4), true, true).unwrap(); // inside: only a count
    assert_eq!(
        t.sections(0, &a),
        vec![Section {
            bx: rows(0, 10),
            structured: 1,
            dynamic: 2
        }]
    );
    assert!(t.is_present(0, &a));
    assert!(!t.is_present(1, &a), "another device has its own table");
    t.detach(0, &a, &rows(0, 10), true, false, false).unwrap();
    t.detach(0, &a, &rows(0, 10), false, true, false).unwrap();
    assert_eq!(
        t.sections(0, &a),
        vec![Section {
            bx: rows(0, 10),
            structured: 0,
            dynamic: 1
        }]
    );
    t.detach(0, &a, &rows(0, 10), true, false, false).unwrap();
    assert!(t.sections(0, &a).is_empty());
    // Counts never go below zero; exit of absent data is a no-op.
    t.detach(0, &a, &rows(0, 10), true, false, false).unwrap();
    t.attach(0, &a, &rows(0, 5), false, false).unwrap();
    assert_eq!(t.find(0, &a, &rows(3, 8)), Find::Partial(rows(0, 5)));
    assert_eq!(
        t.attach(0, &a, &rows(3, 8), true, false),
        Err(EnvError::Partial(rows(0, 5)))
    );
    assert_eq!(t.find(0, &a, &rows(5, 10)), Find::Absent);
    assert_eq!(t.find(0, &a, &rows(1, 2)), Find::Inside(0));
}

#[test]
fn copy_on_present_data_only_bumps_counts() {
    let mut e = accl::Engine::new();
    // `a` is present (dynamic count 1); the data region's copy must neither
    // copy in nor copy out.
    eval(
        &mut e,
        "let a = full(f32, 1.0, 4); enter data copyin(a); a[0] = 5.0;",
    );
    eval(
        &mut e,
        "data copy(a) { parallel loop for i in 0..4 { a[i] = a[i] + 10.0; } }",
    );
    assert_eq!(
        eval(&mut e, "a[0] * 100.0 + a[1]"),
        "501",
        "no copy back while still present"
    );
    eval(&mut e, "exit data copyout(a);");
    assert_eq!(
        eval(&mut e, "a[0] * 100.0 + a[1]"),
        "1111",
        "device copy never saw a[0] = 5"
    );
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "false");
}

#[test]
fn finalize_and_unbalanced_exits() {
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let a = zeros(i32, 4); enter data copyin(a); enter data copyin(a); enter data create(a);",
    );
    eval(&mut e, "exit data delete(a);");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "true");
    eval(&mut e, "exit data delete(a) finalize;");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "false");
    // Exit of absent data: no-op, counts stay at zero.
    eval(
        &mut e,
        "exit data delete(a); exit data copyout(a) finalize;",
    );
    eval(&mut e, "enter data create(a);");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "true");
    eval(&mut e, "exit data delete(a);");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "false");
}

#[test]
fn finalize_keeps_structured_references() {
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let a = zeros(i32, 4); let seen = false;
         data create(a) { enter data copyin(a); exit data delete(a) finalize; seen = acc_is_present(a); }",
    );
    assert_eq!(eval(&mut e, "seen && !acc_is_present(a)"), "true");
}

#[test]
fn sections() {
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let a = arange(f64, 10); enter data copyin(a[0:5]);",
    );
    assert_eq!(
        eval(&mut e, "acc_is_present(a)"),
        "false",
        "only half is present"
    );
    eval(&mut e, "enter data copyin(a[5:5]);");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "true");
    // A section inside a present one is present; update copies only it.
    eval(
        &mut e,
        "parallel loop present(a[1:2]) for i in 0..10 { a[i] = -1.0; }",
    );
    eval(&mut e, "update self(a[1:2]);");
    assert_eq!(eval(&mut e, "a[0] * 100.0 + a[1] * 10.0 + a[3]"), "-7");
    assert_eq!(
        code("let a = zeros(f64, 10); enter data copyin(a[0:5]); enter data copyin(a[4:2]);"),
        "accl::run::partially_present"
    );
    assert_eq!(
        code("let a = zeros(f64, 10); enter data copyin(a[0:5]); update device(a);"),
        "accl::run::partially_present"
    );
    assert_eq!(
        code("let a = zeros(f64, 10); enter data copyin(a[0:5]); exit data delete(a[2:6]);"),
        "accl::run::partially_present"
    );
    // Rank 2: sections are whole rows.
    let mut e = accl::Engine::new();
    eval(&mut e, "let m = zeros(i32, 4, 3); enter data create(m[1:2]); parallel loop present(m[1:2]) for j in 1..3 { for i in 0..3 { m[j, i] = j; } }");
    eval(&mut e, "exit data copyout(m[1:2]);");
    assert_eq!(eval(&mut e, "m[0, 0] * 100 + m[1, 2] * 10 + m[2, 0]"), "12");
}

#[test]
fn not_present_and_if_present() {
    assert_eq!(
        code("let a = zeros(f32, 2); update device(a);"),
        "accl::run::not_present"
    );
    assert_eq!(
        code("let a = zeros(f32, 2); data present(a) { }"),
        "accl::run::not_present"
    );
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let a = zeros(f32, 2); update self(a) if_present; update device(a) if_present;",
    );
    eval(&mut e, "data default(present) { }");
}

#[test]
fn no_create() {
    let mut e = accl::Engine::new();
    // Absent: no_create allocates nothing (the host backend then uses the host array).
    eval(
        &mut e,
        "let a = zeros(f32, 3); parallel loop no_create(a) for i in 0..3 { a[i] = 2.0; }",
    );
    assert_eq!(eval(&mut e, "sum(a)"), "6");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "false");
    // Present: used like `present` (the device copy, no transfer).
    eval(
        &mut e,
        "enter data create(a); parallel loop no_create(a) for i in 0..3 { a[i] = 5.0; }",
    );
    assert_eq!(eval(&mut e, "a[0] + a[1] + a[2]"), "6");
    eval(&mut e, "exit data copyout(a);");
    assert_eq!(eval(&mut e, "sum(a)"), "15");
}

#[test]
fn implicit_copy() {
    let mut e = accl::Engine::new();
    // Absent arrays are copied in and out around the construct.
    eval(
        &mut e,
        "let a = full(i32, 1, 4); parallel loop for i in 0..4 { a[i] += i; }",
    );
    assert_eq!(eval(&mut e, "sum(a)"), "10");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "false");
    // Present arrays are used in place: no copy back until exit data.
    eval(
        &mut e,
        "enter data copyin(a); parallel loop for i in 0..4 { a[i] = 0; }",
    );
    assert_eq!(eval(&mut e, "a[0] + a[1] + a[2] + a[3]"), "10");
    eval(&mut e, "exit data copyout(a);");
    assert_eq!(eval(&mut e, "sum(a)"), "0");
    // Aliases are the same array.
    eval(&mut e, "let b = a; enter data copyin(b);");
    assert_eq!(eval(&mut e, "acc_is_present(a)"), "true");
}

#[test]
fn implicit_arrays_written_under_any_name_come_back() {
    // An array the kernel only reads goes in only; one it writes, under
    // any of its names, comes back. Here `y` is read first, then written
    // through `w`, the same array: the host backend keeps a separate
    // device copy, so a write left on it would show.
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let x = full(i32, 3, 4); let y = full(i32, 1, 4); let w = y;
         parallel loop for i in 0..4 { let t = y[i] + x[i]; w[i] = t; }",
    );
    assert_eq!(eval(&mut e, "sum(y)"), "16");
    assert_eq!(eval(&mut e, "sum(x)"), "12");
    // Written in a function the kernel calls.
    eval(
        &mut e,
        "fn put(v: i32[], i: i32) { v[i] = 7; }
         let z = zeros(i32, 4);
         parallel loop for i in 0..4 { put(z, i); }",
    );
    assert_eq!(eval(&mut e, "sum(z)"), "28");
    // Written in part: the rest keeps the host's values (copied in too).
    eval(
        &mut e,
        "let p = full(i32, 5, 8); parallel loop for i in 0..4 { p[i] = 1; }",
    );
    assert_eq!(eval(&mut e, "sum(p)"), "24");
}

#[test]
fn copyin_copyout_create_transfers() {
    let mut e = accl::Engine::new();
    eval(
        &mut e,
        "let a = full(i32, 3, 2); let b = full(i32, 3, 2); let c = full(i32, 3, 2);
         parallel loop copyin(a) copyout(b) create(c) for i in 0..2 { a[i] += 1; b[i] = a[i] + c[i]; c[i] = 9; }",
    );
    // copyin: not copied back; copyout: copied back (c's device copy started at zero); create: neither.
    assert_eq!(eval(&mut e, "a[0] * 100 + b[0] * 10 + c[0]"), "343");
}

#[test]
fn whole_array_reductions_read_the_device_copy_when_present() {
    let mut e = accl::Engine::new();
    eval(&mut e, "let a = full(i32, 1, 4); enter data copyin(a); parallel loop for i in 0..4 { a[i] = 2; } a[0] = 100;");
    assert_eq!(eval(&mut e, "sum(a)"), "8");
    assert_eq!(eval(&mut e, "maxval(a) * 10 + minval(a)"), "22");
    eval(&mut e, "exit data delete(a);");
    assert_eq!(eval(&mut e, "sum(a)"), "103");
}
