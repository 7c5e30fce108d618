//! Every run-time error, rendered as the user sees it (insta snapshots of
//! `render_plain` at 80 columns).

use insta::assert_snapshot;

fn fail(src: &str) -> String {
    fail_with(&mut accl::Engine::new(), src)
}

fn fail_with(e: &mut accl::Engine, src: &str) -> String {
    e.set_print(|_| {});
    match e.eval_source("test.accl", src) {
        Ok(_) => panic!("expected an error from:\n{src}"),
        Err(err) => lang::diag::render_plain(&err.source, &err.diags, 80),
    }
}

#[test]
fn index_out_of_bounds() {
    assert_snapshot!(fail("let a = zeros(f32, 4);\nlet i = 4;\na[i] = 1.0;"));
    assert_snapshot!(
        "read_2d",
        fail("let m = zeros(i32, 2, 3);\nlet x = m[1, -1];")
    );
    assert_snapshot!(
        "read_3d",
        fail("let m = zeros(u8, 2, 2, 2);\nlet k = 5;\nlet x = m[0, 1, k - 3];")
    );
}

#[test]
fn division_by_zero() {
    assert_snapshot!(fail("let z = 0;\nlet x = 10 / z;"));
    assert_snapshot!("remainder", fail("let z: u8 = 0;\nlet x: u8 = 7;\nx %= z;"));
}

#[test]
fn float_division_by_zero_is_not_an_error() {
    let mut e = accl::Engine::new();
    assert_eq!(
        e.eval("let z = 0.0; 1.0 / z").unwrap().unwrap().to_string(),
        "inf"
    );
}

#[test]
fn failed_assert() {
    assert_snapshot!(fail("let n = 3;\nassert(n == 4, \"n must be four\");"));
    assert_snapshot!("no_message", fail("assert(false);"));
}

#[test]
fn io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = accl::Engine::new();
    e.set_fs_access(Some(dir.path().to_path_buf()));
    let r = fail_with(&mut e, "let a = load_npy(f32, \"missing.npy\");");
    let r = r.replace(&dir.path().display().to_string(), "TMP");
    assert_snapshot!(r);
    std::fs::write(dir.path().join("bad.npy"), b"not numpy").unwrap();
    let r = fail_with(&mut e, "let a = load_npy(f32, \"bad.npy\");")
        .replace(&dir.path().display().to_string(), "TMP");
    assert_snapshot!("malformed", r);
}

#[test]
fn file_access_off() {
    assert_snapshot!(fail("write_png(zeros(u8, 2, 2), \"x.png\");"));
}

#[test]
fn not_present() {
    assert_snapshot!(fail(
        "let a = zeros(f32, 8);\nparallel loop present(a) for i in 0..8 {\n    a[i] = 1.0;\n}"
    ));
    assert_snapshot!(
        "default_present",
        fail("let a = zeros(f32, 8);\nparallel loop default(present) for i in 0..8 {\n    a[i] = 1.0;\n}")
    );
    assert_snapshot!("update", fail("let a = zeros(f32, 8);\nupdate self(a);"));
}

#[test]
fn partially_present() {
    assert_snapshot!(fail(
        "let a = zeros(f64, 10);\nenter data copyin(a[0:5]);\nparallel loop present(a[3:4]) for i in 3..7 {\n    a[i] = 1.0;\n}"
    ));
}

#[test]
fn bad_section() {
    assert_snapshot!(fail("let a = zeros(f64, 10);\nenter data copyin(a[8:5]);"));
}

#[test]
fn recursion_too_deep() {
    assert_snapshot!(fail(
        "fn down(n: i64) -> i64 {\n    return down(n + 1);\n}\nlet x = down(0);"
    ));
}

#[test]
fn operation_limit() {
    let mut e = accl::Engine::new();
    e.set_max_operations(1000);
    assert_snapshot!(fail_with(
        &mut e,
        "let x = 0;\nwhile true {\n    x += 1;\n}"
    ));
}

#[test]
fn bad_device_and_shape() {
    assert_snapshot!("device", fail("set device_num(3);"));
    assert_snapshot!("api_device", fail("acc_set_device_num(-1);"));
    assert_snapshot!("shape", fail("let n = -2;\nlet a = zeros(f32, n);"));
    assert_snapshot!("axis", fail("let a = zeros(f32, 3);\nlet s = shape(a, 1);"));
}

#[test]
fn a_failed_construct_leaves_host_arrays_unchanged() {
    let mut e = accl::Engine::new();
    e.eval("let a = full(i32, 5, 4); let z = 0;").unwrap();
    assert!(e
        .eval("parallel loop for i in 0..4 { a[i] = 10 / (z + i); }")
        .is_err());
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![5, 5, 5, 5]);
    assert!(!e
        .eval("acc_is_present(a)")
        .unwrap()
        .unwrap()
        .to_string()
        .contains("true"));
}

#[test]
fn huge_arrays_are_refused_not_aborted() {
    let mut e = accl::Engine::new();
    assert_eq!(
        e.eval("let a = zeros(f64, 1i64 << 40);")
            .unwrap_err()
            .code(),
        "accl::run::bad_shape"
    );
    assert_eq!(
        e.eval("let a = zeros(u8, 1i64 << 31, 1i64 << 31, 4);")
            .unwrap_err()
            .code(),
        "accl::run::bad_shape"
    );
    assert_eq!(
        e.eval("let a = arange(f32, 1.0e30);").unwrap_err().code(),
        "accl::run::bad_shape"
    );
}
