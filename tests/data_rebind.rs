//! Giving an array variable a new array inside a `data` region that maps
//! it: the region's device copy, and its copy back at the end, belong to
//! the old array, so a kernel's results would be lost without a word.
//! Refused at check time, on both backends and by `accl check`.

use crate::common;

const REBIND: &str = "let a = zeros(f32, 100);
data copy(a) {
    parallel loop for i in 0..100 { a[i] = 1.0; }
    a = zeros(f32, 100);
}
";

#[test]
fn rebinding_an_array_inside_its_data_region_is_refused() {
    for device in [false, true] {
        let r = common::run(REBIND, device);
        let err = r.result.expect_err("the rebinding must be refused");
        let text = err.render(100);
        assert_eq!(err.code(), "accl::device::rebound_in_data_region", "{text}");
        assert!(text.contains("a = zeros(f32, 100)"), "{text}");
        assert!(text.contains("the region maps the old array"), "{text}");
    }
    // Deeper in the region too (an `if`, a loop), and with `copyout`.
    let nested = "let b = zeros(i32, 8);
data copyout(b) {
    for k in 0..2 { if k == 1 { b = ones(i32, 8); } }
}
";
    let r = common::run(nested, false);
    assert_eq!(
        r.result.unwrap_err().code(),
        "accl::device::rebound_in_data_region"
    );
}

#[test]
fn writing_elements_or_rebinding_after_the_region_is_fine() {
    let ok = "let a = zeros(f32, 100);
data copy(a) {
    parallel loop for i in 0..100 { a[i] = 1.0; }
    parallel loop for i in 0..2 { a[i] = 2.0; }
}
let s = sum(a);
a = zeros(f32, 100);
let t = sum(a);
";
    for device in [false, true] {
        let r = common::run(ok, device);
        if let Err(e) = &r.result {
            panic!("{}", e.render(100));
        }
        assert_eq!(r.engine.get::<f32>("s"), Some(102.0));
        assert_eq!(r.engine.get::<f32>("t"), Some(0.0));
    }
}

#[test]
fn accl_check_reports_the_rebinding() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rebind.accl");
    std::fs::write(&f, REBIND).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_accl"))
        .arg("check")
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("accl::device::rebound_in_data_region"),
        "{err}"
    );
}
