//! Every builtin of `stdlib/src/sigs.rs` on the host, and the scalar and
//! control-flow semantics of the interpreter.

use std::cell::RefCell;
use std::rc::Rc;

/// Run `src`, return what it printed.
fn out(src: &str) -> String {
    let buf = Rc::new(RefCell::new(String::new()));
    let b = buf.clone();
    let mut e = accl::Engine::new();
    e.set_print(move |s| b.borrow_mut().push_str(s));
    if let Err(err) = e.eval_source("t.accl", src) {
        panic!("{}", err.render(100));
    }
    let s = buf.borrow().clone();
    s
}

/// The value of the expression `src`, as printed.
fn val(src: &str) -> String {
    let mut e = accl::Engine::new();
    match e.eval_source("t.accl", src) {
        Ok(v) => v.map(|v| v.to_string()).unwrap_or_default(),
        Err(err) => panic!("{}", err.render(100)),
    }
}

#[test]
fn math_every_type() {
    assert_eq!(val("abs(-3)"), "3");
    assert_eq!(val("abs(i32::MIN)"), "-2147483648");
    assert_eq!(val("abs(-2i64)"), "2");
    assert_eq!(val("abs(7u8)"), "7");
    assert_eq!(val("abs(-1.5f32)"), "1.5");
    assert_eq!(val("min(3u32, 9u32)"), "3");
    assert_eq!(val("max(-1.0, 2.0)"), "2");
    assert_eq!(val("max(f64::NAN, 1.0)"), "1");
    assert_eq!(val("clamp(15, 0, 10)"), "10");
    assert_eq!(val("clamp(5, 10, 0)"), "0");
    assert_eq!(val("clamp(0.5f32, 0.0, 1.0)"), "0.5");
    for (f, x, want) in [
        ("sqrt", "16.0", 4.0f64),
        ("exp", "0.0", 1.0),
        ("exp2", "3.0", 8.0),
        ("log", "1.0", 0.0),
        ("log2", "8.0", 3.0),
        ("sin", "0.0", 0.0),
        ("cos", "0.0", 1.0),
        ("tan", "0.0", 0.0),
        ("asin", "0.0", 0.0),
        ("acos", "1.0", 0.0),
        ("atan", "0.0", 0.0),
        ("sinh", "0.0", 0.0),
        ("cosh", "0.0", 1.0),
        ("tanh", "0.0", 0.0),
        ("floor", "-1.5", -2.0),
        ("ceil", "-1.5", -1.0),
        ("round", "2.5", 3.0),
        ("trunc", "-2.7", -2.0),
    ] {
        assert_eq!(val(&format!("{f}({x})")), want.to_string(), "{f} f64");
        assert_eq!(
            val(&format!("{f}({x}f32)")),
            (want as f32).to_string(),
            "{f} f32"
        );
    }
    assert_eq!(val("pow(2.0, 10.0)"), "1024");
    assert_eq!(val("pow(2.0f32, 0.5f32)"), 2f32.powf(0.5).to_string());
    assert_eq!(
        val("atan2(1.0, 1.0)"),
        std::f64::consts::FRAC_PI_4.to_string()
    );
    assert_eq!(val("fma(2.0, 3.0, 1.0)"), "7");
    assert_eq!(
        val("fma(0.1f32, 10.0f32, -1.0f32)"),
        // Below 1e-5 in magnitude: scientific notation.
        format!("{:e}", 0.1f32.mul_add(10.0, -1.0))
    );
    assert_eq!(val("f32::MAX"), format!("{:e}", f32::MAX));
    assert_eq!(val("u8::MAX"), "255");
    assert_eq!(val("f64::PI"), std::f64::consts::PI.to_string());
}

#[test]
fn array_builtins() {
    assert_eq!(out("println(zeros(i32, 3));"), "[0 0 0]\n");
    assert_eq!(
        out("println(full(f32, 1.5, 2, 2));"),
        "[[1.5 1.5]\n [1.5 1.5]]\n"
    );
    assert_eq!(out("println(arange(i64, 4));"), "[0 1 2 3]\n");
    assert_eq!(out("println(arange(f64, 1.0, 4.0));"), "[1 2 3]\n");
    assert_eq!(out("println(arange(u8, 3u8, 6u8));"), "[3 4 5]\n");
    assert_eq!(out("println(linspace(f32, 0.0, 1.0, 3));"), "[0 0.5 1]\n");
    assert_eq!(
        out("let a = zeros(bool, 2, 1, 2); println(a);"),
        "[[[false false]]\n\n [[false false]]]\n"
    );
    assert_eq!(val("len(zeros(u8, 3, 4))"), "12");
    assert_eq!(val("shape(zeros(u8, 3, 4, 5), 2)"), "5");
    assert_eq!(val("sum(arange(i32, 5))"), "10");
    assert_eq!(val("sum(full(u8, 200u8, 2))"), "144"); // wraps
    assert_eq!(val("sum(linspace(f64, 0.0, 1.0, 5))"), "2.5");
    assert_eq!(val("maxval(arange(f32, 5))"), "4");
    assert_eq!(val("minval(arange(i64, 3i64, 9i64))"), "3");
    assert_eq!(val("maxval(zeros(f64, 0))"), "-inf");
    // clone copies; assignment aliases.
    assert_eq!(val("let a = zeros(i32, 2); let b = a; let c = clone(a); b[0] = 5; c[1] = 7; a[0] * 10 + a[1]"), "50");
    // Large arrays are summarised.
    assert_eq!(
        out("println(arange(i32, 5000));"),
        "[0 1 2 ... 4997 4998 4999]\n"
    );
}

#[test]
fn print_formats() {
    assert_eq!(
        out("print(1, \" \", 2.5, \" \", true, \" \", 1.0f32);"),
        "1 2.5 true 1"
    );
    assert_eq!(
        out("println(-0.0, \" \", f64::INFINITY, \" \", f32::NAN);"),
        "-0 inf NaN\n"
    );
    assert_eq!(out("println();"), "\n");
}

#[test]
fn assert_and_clock() {
    assert_eq!(out("assert(true, \"fine\"); assert(1 < 2);"), "");
    assert_eq!(
        val("let t0 = clock(); let t1 = clock(); t1 >= t0 && t0 >= 0.0"),
        "true"
    );
}

#[test]
fn files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = accl::Engine::new();
    e.set_fs_access(Some(dir.path().to_path_buf()));
    e.eval(
        "let a = zeros(f64, 2, 3); a[1, 2] = 4.5; save_npy(a, \"a.npy\");
         let b = load_npy2(f64, \"a.npy\");
         let flat = load_npy(f64, \"a.npy\");
         let c = zeros(u8, 2, 2, 2); c[1, 1, 1] = 9u8; save_npy(c, \"c.npy\");
         let d = load_npy3(u8, \"c.npy\");
         let img = zeros(u8, 4, 5); img[0, 0] = 255u8; write_png(img, \"g.png\");
         let rgb = zeros(u8, 4, 5, 3); write_png(rgb, \"c.png\");",
    )
    .unwrap();
    assert_eq!(
        e.get_array::<f64>("b").unwrap(),
        (vec![0.0, 0.0, 0.0, 0.0, 0.0, 4.5], vec![2, 3])
    );
    assert_eq!(e.get_array::<f64>("flat").unwrap().1, vec![6]);
    assert_eq!(e.get_array::<u8>("d").unwrap().0[7], 9);
    for f in ["g.png", "c.png"] {
        let png = std::fs::read(dir.path().join(f)).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
    // CSV: a header line is skipped, rank 1 is one column, values round trip.
    std::fs::write(dir.path().join("t.csv"), "time,temp\n0.5, 20.25\n1.5,21\n").unwrap();
    e.eval(
        "let t = load_csv(f32, \"t.csv\"); let v = arange(i64, 4); save_csv(v, \"v.csv\");
         save_csv(t, \"t2.csv\"); let t2 = load_csv(f32, \"t2.csv\"); let v2 = load_csv(i64, \"v.csv\");",
    )
    .unwrap();
    assert_eq!(
        e.get_array::<f32>("t").unwrap(),
        (vec![0.5, 20.25, 1.5, 21.0], vec![2, 2])
    );
    assert_eq!(
        e.get_array::<f32>("t2").unwrap(),
        e.get_array::<f32>("t").unwrap()
    );
    assert_eq!(
        e.get_array::<i64>("v2").unwrap(),
        (vec![0, 1, 2, 3], vec![4, 1])
    );
    let err = e.eval("let x = load_csv(u8, \"t.csv\");").unwrap_err();
    assert_eq!(err.code(), "accl::run::bad_table");
    assert!(
        err.to_string()
            .contains("line 2, field 1: `0.5` is not a `u8`"),
        "{err}"
    );
    assert!(!err.to_string().contains("cannot access"), "{err}");
    // Columns separated by white space (a Rodinia-style data file).
    std::fs::write(dir.path().join("w.txt"), "3 4\n1\t2.5  -1\n").unwrap();
    let err = e.eval("let w = load_csv(f64, \"w.txt\");").unwrap_err();
    assert_eq!(err.code(), "accl::run::bad_table");
    assert!(err.to_string().contains("line 2 has 3 fields"), "{err}");
    std::fs::write(dir.path().join("w.txt"), "3 4\n1\t2.5\n").unwrap();
    e.eval("let w = load_csv(f64, \"w.txt\");").unwrap();
    assert_eq!(
        e.get_array::<f64>("w").unwrap(),
        (vec![3.0, 4.0, 1.0, 2.5], vec![2, 2])
    );
    // Wrong element type or rank: a diagnostic, not a conversion.
    assert_eq!(
        e.eval("let x = load_npy(f32, \"a.npy\");")
            .unwrap_err()
            .code(),
        "accl::run::io"
    );
    assert_eq!(
        e.eval("let x = load_npy3(f64, \"a.npy\");")
            .unwrap_err()
            .code(),
        "accl::run::io"
    );
}

#[test]
fn device_api() {
    assert_eq!(val("acc_get_num_devices()"), "1");
    assert_eq!(val("acc_set_device_num(0); acc_get_device_num()"), "0");
    assert_eq!(
        val("let a = zeros(f32, 3); enter data copyin(a); acc_is_present(a)"),
        "true"
    );
    assert_eq!(val("let a = zeros(f32, 3); acc_is_present(a)"), "false");
}

#[test]
fn atomics() {
    assert_eq!(
        val("let h = zeros(i32, 2); let old = atomic_add(h[1], 5); let o2 = atomic_add(h[1], 2); old * 100 + o2 * 10 + h[1]"),
        "57"
    );
    assert_eq!(
        val("let h = full(f32, 3.0, 1); let o = atomic_max(h[0], 7.0); o + h[0]"),
        "10"
    );
    assert_eq!(
        val("let h = full(i64, 3i64, 1); let o = atomic_min(h[0], -7i64); o * 100 + h[0]"),
        "293"
    );
    assert_eq!(
        val("let h = full(u32, 3u32, 1); let o = atomic_xchg(h[0], 9u32); o * 10 + h[0]"),
        "39"
    );
    assert_eq!(
        val("let h = full(i32, 12, 1); atomic h[0] -= 2; atomic h[0] *= 3; atomic h[0] &= 14; atomic h[0] |= 1; atomic h[0] ^= 3; atomic h[0] max= 8; atomic h[0] min= 100; h[0]"),
        "12"
    );
}

#[test]
fn scalar_semantics() {
    assert_eq!(val("i32::MAX + 1"), "-2147483648");
    assert_eq!(val("let x: u8 = 250; x + 10u8"), "4");
    assert_eq!(val("let x: u32 = 0; x - 1u32"), "4294967295");
    assert_eq!(val("i64::MIN / -1i64"), "-9223372036854775808");
    assert_eq!(val("-7 % 3"), "-1");
    assert_eq!(val("let s = 33; 1 << s"), "2");
    assert_eq!(val("let x = -1.5; x as u8"), "0");
    assert_eq!(val("-1.5 as u8"), "255"); // `as` binds tighter than unary minus
    assert_eq!(val("300.0 as u8"), "255");
    assert_eq!(val("f64::NAN as i32"), "0");
    assert_eq!(val("-1 as u32"), "4294967295");
    assert_eq!(val("true as u8 + 1u8"), "2");
    assert_eq!(val("(0.1f32 as f64) == 0.1"), "false");
    assert_eq!(val("16777217 as f32"), "16777216");
    assert_eq!(val("!5u8"), "250");
}

#[test]
fn control_flow() {
    // Short circuit: the right side would divide by zero.
    assert_eq!(val("let z = 0; false && 1 / z == 1"), "false");
    assert_eq!(val("let z = 0; true || 1 / z == 1"), "true");
    // Inclusive ranges reach the top of the type without overflow.
    assert_eq!(val("let n = 0; for i in 250u8..=255u8 { n += 1; } n"), "6");
    assert_eq!(
        val("let n = 0; for i in i64::MAX - 2i64..=i64::MAX { n += 1; } n"),
        "3"
    );
    assert_eq!(val("let n = 0; for i in 5..2 { n += 1; } n"), "0");
    assert_eq!(
        val("let s = 0; for i in 0..10 { if i == 3 { continue; } if i == 6 { break; } s += i; } s"),
        "12"
    );
    assert_eq!(
        val("let i = 0; while true { i += 1; if i > 4 { break; } } i"),
        "5"
    );
    assert_eq!(
        val("fn fib(n: i32) -> i32 { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); } fib(15)"),
        "610"
    );
    assert_eq!(
        val("fn first(a: i32[], x: i32) -> i32 { for i in 0..len(a) { if a[i] == x { return i; } } return -1; } first(arange(i32, 10), 7)"),
        "7"
    );
    assert_eq!(
        val("fn mk(n: i32) -> f32[] { return full(f32, 2.0, n); } sum(mk(4))"),
        "8"
    );
    assert_eq!(
        val("fn put(a: f64[,]) { a[1, 1] = 3.0; } let m = zeros(f64, 2, 2); put(m); m[1, 1]"),
        "3"
    );
}

#[test]
fn constructs_on_the_host() {
    // Every reduction operator with its identity.
    assert_eq!(
        val("let s = 10; let p = 2; let mx = -5; let mn = 5; let a: u32 = 0xFF; let o: u32 = 0; let x: u32 = 0; let al = true; let an = false;
             parallel loop reduction(+: s) reduction(*: p) reduction(max: mx) reduction(min: mn)
                 reduction(&: a) reduction(|: o) reduction(^: x) reduction(&&: al) reduction(||: an)
             for i in 1..5 {
                 s += i; p *= i; mx = max(mx, i); mn = min(mn, i);
                 a &= 0xF0 | i as u32; o |= 1u32 << i as u32; x ^= i as u32; al = al && i < 5; an = an || i == 3;
             }
             println(s, \" \", p, \" \", mx, \" \", mn, \" \", a, \" \", o, \" \", x, \" \", al, \" \", an);
             0"),
        "0"
    );
    assert_eq!(
        out("let s = 10; let p = 2; let mx = -5; let mn = 5; let a: u32 = 0xFF; let o: u32 = 0; let x: u32 = 0; let al = true; let an = false;
             parallel loop reduction(+: s) reduction(*: p) reduction(max: mx) reduction(min: mn)
                 reduction(&: a) reduction(|: o) reduction(^: x) reduction(&&: al) reduction(||: an)
             for i in 1..5 {
                 s += i; p *= i; mx = max(mx, i); mn = min(mn, i);
                 a &= 0xF0 | i as u32; o |= 1u32 << i as u32; x ^= i as u32; al = al && i < 5; an = an || i == 3;
             }
             println(s, \" \", p, \" \", mx, \" \", mn, \" \", a, \" \", o, \" \", x, \" \", al, \" \", an);"),
        "20 48 4 1 240 30 4 true true\n"
    );
    // collapse(2), private/firstprivate restore the outer value, if(false).
    assert_eq!(
        val("let m = zeros(i32, 3, 4); let t = 7; let q = 1;
             parallel loop collapse(2) private(t) firstprivate(q) for j in 0..3 { for i in 0..4 { t = i; q = q + 1; m[j, i] = j * 10 + i; } }
             m[2, 3] * 100 + t * 10 + q"),
        "2371"
    );
    assert_eq!(
        val("let a = zeros(f32, 4); let on = false; parallel loop if(on) present(a) for i in 0..4 { a[i] = 1.0; } sum(a)"),
        "4"
    );
    // A parallel region with a vector loop and a reduction; async/wait are no-ops.
    assert_eq!(
        val("let a = arange(f64, 8); let total = 0.0;
             parallel num_gangs(4) vector_length(32) async(1) {
                 let t = 0.0;
                 loop vector reduction(+: t) for i in 0..8 { t += a[i]; }
                 loop vector for i in 0..8 { a[i] = t; }
             }
             wait(1); wait; wait(1) async(2);
             a[0]"),
        "28"
    );
}

#[test]
fn numpy_basics() {
    let mut e = accl::Engine::new();
    e.eval(
        "let r = rand(f64, 42, 1000); let r2 = rand(f64, 42, 1000); let r3 = rand(f32, 7, 10, 10);
         let same = true; let inside = true;
         for i in 0..1000 { same = same && r[i] == r2[i]; inside = inside && r[i] >= 0.0 && r[i] < 1.0; }
         let m = mean(r);
         let o = ones(i32, 2, 3); let a = arange(f32, 6); let b = reshape(a, 2, 3); let c = astype(b, i32);
         let d = dot(a, a); let hi = argmax(a); let lo = argmin(a); let mi = mean(o);
         let w = arange(i32, 5); w[3] = 9; let wa = argmax(w);",
    )
    .unwrap();
    let v = |n: &str| e.get_value(n).unwrap().to_string();
    assert_eq!(v("same"), "true");
    assert_eq!(v("inside"), "true");
    let m: f64 = v("m").parse().unwrap();
    assert!((m - 0.5).abs() < 0.05, "mean of 1000 uniform values: {m}");
    assert_eq!(v("d"), "55.0");
    assert_eq!(v("hi"), "5");
    assert_eq!(v("lo"), "0");
    assert_eq!(v("mi"), "1.0");
    assert_eq!(v("wa"), "3");
    assert_eq!(e.array("c").unwrap().shape(), &[2, 3]);
    assert_eq!(e.array("r3").unwrap().shape(), &[10, 10]);
    // A seed gives the same numbers on every machine.
    let first = e
        .array("r")
        .unwrap()
        .data()
        .get(0)
        .unwrap()
        .as_f64()
        .unwrap();
    assert_eq!(
        first,
        stdlib::ops::rand(lang::Scalar::F64, 42, &[1])
            .unwrap()
            .data()
            .get(0)
            .unwrap()
            .as_f64()
            .unwrap()
    );
    // Shapes that do not fit are errors with a code.
    let err = e.eval("let z = reshape(a, 4, 2);").unwrap_err();
    assert_eq!(err.diags[0].code, "accl::run::bad_reshape");
    let err = e.eval("let z = dot(a, arange(f32, 3));").unwrap_err();
    assert_eq!(err.diags[0].code, "accl::run::bad_shape");
}
