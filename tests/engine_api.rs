//! The embedding API: state across inputs, variables and arrays by name,
//! registered functions, limits.

use accl::stdlib::Elem;
use accl::Engine;

fn round_trip<T: Elem>(make: impl Fn(usize) -> T) {
    for shape in [vec![5], vec![2, 3], vec![2, 3, 4]] {
        let n: usize = shape.iter().product();
        let data: Vec<T> = (0..n).map(&make).collect();
        let mut e = Engine::new();
        e.set_array("a", data.clone(), &shape).unwrap();
        // The script sees the type, rank and data, and its writes come back.
        let ty = format!("{}[{}]", T::SCALAR, ",".repeat(shape.len() - 1));
        e.eval(&format!(
            "let b: {ty} = clone(a); let n = len(b); let r = shape(b, {});",
            shape.len() - 1
        ))
        .unwrap();
        assert_eq!(e.get::<i32>("n"), Some(n as i32));
        assert_eq!(e.get::<i32>("r"), Some(*shape.last().unwrap() as i32));
        assert_eq!(
            e.get_array::<T>("b"),
            Some((data.clone(), shape.clone())),
            "{ty}"
        );
        let mut buf = vec![T::default(); n];
        assert_eq!(e.read_array_into("a", &mut buf), Some(shape.clone()));
        assert_eq!(buf, data);
        // The wrong element type gives None, not a conversion.
        assert!(e.get_array::<T>("n").is_none());
        e.set_array_from_slice("c", &data, &shape).unwrap();
        assert_eq!(
            e.array("c").unwrap().with_bytes(|b| b.len()),
            n * T::SCALAR.size()
        );
    }
}

#[test]
fn arrays_of_every_type_and_rank() {
    round_trip(|i| i % 3 == 0);
    round_trip(|i| i as i32 - 7);
    round_trip(|i| (i as i64) << 40);
    round_trip(|i| i as u32 * 1000);
    round_trip(|i| i as u8);
    round_trip(|i| i as f32 * 0.5);
    round_trip(|i| i as f64 / 3.0);
}

#[test]
fn scalars_of_every_type() {
    let mut e = Engine::new();
    e.set("b", true);
    e.set("i", -3i32);
    e.set("l", 1i64 << 40);
    e.set("u", 7u32);
    e.set("y", 200u8);
    e.set("f", 1.5f32);
    e.set("d", 0.25f64);
    e.eval("b = !b; i *= 2; l += 1i64; u -= 1u32; y += 100u8; f *= 2.0; d /= 2.0;")
        .unwrap();
    assert_eq!(e.get::<bool>("b"), Some(false));
    assert_eq!(e.get::<i32>("i"), Some(-6));
    assert_eq!(e.get::<i64>("l"), Some((1i64 << 40) + 1));
    assert_eq!(e.get::<u32>("u"), Some(6));
    assert_eq!(e.get::<u8>("y"), Some(44));
    assert_eq!(e.get::<f32>("f"), Some(3.0));
    assert_eq!(e.get::<f64>("d"), Some(0.125));
    assert_eq!(e.get::<f64>("f"), None);
}

#[test]
fn state_persists_and_failures_leave_it_unchanged() {
    let mut e = Engine::new();
    e.eval(
        "const N = 4; fn twice(x: i32) -> i32 { return 2 * x; } let a = zeros(i32, N); let k = 1;",
    )
    .unwrap();
    e.eval("for i in 0..N { a[i] = twice(i) + k; }").unwrap();
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![1, 3, 5, 7]);
    // A type error: nothing changes.
    assert!(e.eval("k = 5; let z = twice(1.5);").is_err());
    assert_eq!(e.get::<i32>("k"), Some(1));
    assert!(e.get::<i32>("z").is_none());
    // A run-time error: no new variables, scalars keep their values.
    assert_eq!(
        e.eval("k = 9; let w = 3; assert(false, \"stop\");")
            .unwrap_err()
            .code(),
        "accl::run::assert_failed"
    );
    assert_eq!(e.get::<i32>("k"), Some(1));
    assert!(e.get::<i32>("w").is_none());
    // Declarations of a later input work beside earlier ones.
    e.eval("fn thrice(x: i32) -> i32 { return twice(x) + x; }")
        .unwrap();
    assert_eq!(e.eval("thrice(N)").unwrap().unwrap().to_string(), "12");
    // Redeclaring a variable (even with another type) replaces it.
    e.eval("let k = 2.5;").unwrap();
    assert_eq!(e.get::<f64>("k"), Some(2.5));
    let names: Vec<String> = e.variables().into_iter().map(|v| v.0).collect();
    assert_eq!(names, ["a", "k"]);
}

#[test]
fn registered_functions() {
    let mut e = Engine::new();
    e.register_fn("answer", || 42i32);
    e.register_fn("scale", |x: f32| x * 3.0);
    e.register_fn(
        "mix",
        |a: u8, b: i64, c: bool| if c { a as i64 + b } else { -1 },
    );
    e.register_fn("sum4", |a: f64, b: f64, c: f64, d: f64| a + b + c + d);
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let l = log.clone();
    e.register_fn("record", move |x: i32| l.borrow_mut().push(x));
    e.eval("for i in 0..3 { record(i * answer()); }").unwrap();
    assert_eq!(*log.borrow(), vec![0, 42, 84]);
    assert_eq!(e.eval("scale(1.5f32)").unwrap().unwrap().to_string(), "4.5");
    assert_eq!(
        e.eval("mix(3u8, 4i64, true)").unwrap().unwrap().to_string(),
        "7"
    );
    assert_eq!(
        e.eval("sum4(1.0, 2.0, 3.0, 4.0)")
            .unwrap()
            .unwrap()
            .to_string(),
        "10"
    );
    // Checked like any call: wrong types are compile errors.
    assert!(e
        .eval("let d = 1.5; scale(d)")
        .unwrap_err()
        .code()
        .starts_with("accl::type"));
    // Host functions cannot run inside device constructs.
    let err = e
        .eval("let a = zeros(i32, 2); parallel loop for i in 0..2 { a[i] = answer(); }")
        .unwrap_err();
    assert!(err.code().starts_with("accl::device"), "{}", err.render(80));
}

#[test]
fn operation_limit_stops_endless_loops() {
    let mut e = Engine::new();
    e.set_max_operations(100_000);
    assert_eq!(
        e.eval("while true {}").unwrap_err().code(),
        "accl::run::operation_limit"
    );
    assert_eq!(
        e.eval("for i in 0..i64::MAX { }").unwrap_err().code(),
        "accl::run::operation_limit"
    );
    assert_eq!(
        e.eval("fn f(n: i32) -> i32 { let s = 0; for i in 0..n { s += i; } return s; } let t = 0; while true { t += f(10); }")
            .unwrap_err()
            .code(),
        "accl::run::operation_limit"
    );
    assert_eq!(
        e.eval("let a = zeros(i32, 1); parallel loop for i in 0..1000000 { a[0] = 1; }")
            .unwrap_err()
            .code(),
        "accl::run::operation_limit"
    );
    // The budget is per input: a short script still runs.
    e.eval("let s = 0; for i in 0..1000 { s += i; }").unwrap();
    assert_eq!(e.get::<i32>("s"), Some(499500));
}

#[test]
fn progress_callback_and_depth() {
    let mut e = Engine::new();
    let calls = std::rc::Rc::new(std::cell::Cell::new(0));
    let c = calls.clone();
    e.on_progress(100, move |_| {
        c.set(c.get() + 1);
        c.get() < 5
    });
    assert_eq!(
        e.eval("while true {}").unwrap_err().code(),
        "accl::run::aborted"
    );
    assert_eq!(calls.get(), 5);
    let mut e = Engine::new();
    e.set_max_call_depth(50);
    e.eval("fn d(n: i32) -> i32 { if n == 0 { return 0; } return 1 + d(n - 1); }")
        .unwrap();
    assert_eq!(e.eval("d(40)").unwrap().unwrap().to_string(), "40");
    assert_eq!(
        e.eval("d(60)").unwrap_err().code(),
        "accl::run::recursion_limit"
    );
}

#[test]
fn deep_recursion_at_the_default_limit_does_not_overflow_the_stack() {
    // Test threads have small stacks; the default depth must fit in them.
    let mut e = Engine::new();
    let r = e.eval(
        "fn d(n: i32) -> i32 { if n == 0 { return 0; } let s = 0; for i in 0..1 { if n > 0 { s = 1 + d(n - 1); } } return s; } d(120)",
    );
    assert_eq!(r.unwrap().unwrap().to_string(), "120");
}

#[test]
fn file_access_is_off_by_default() {
    let mut e = Engine::new();
    for src in [
        "save_npy(zeros(u8, 1), \"x.npy\");",
        "let a = load_npy(u8, \"x.npy\");",
        "write_png(zeros(u8, 1, 1), \"x.png\");",
    ] {
        assert_eq!(e.eval(src).unwrap_err().code(), "accl::run::fs_disabled");
    }
}

#[test]
fn a_registered_function_can_replace_a_builtin_and_unit_tails_are_none() {
    let mut e = Engine::new();
    e.register_fn("clock", || 12.5f64);
    assert_eq!(e.eval("clock()").unwrap().unwrap().to_string(), "12.5");
    e.set_print(|_| {});
    assert!(e.eval("println(1)").unwrap().is_none());
}

#[test]
fn declarations_can_be_replaced() {
    let mut e = Engine::new();
    e.eval("const K = 2; fn f(x: i32) -> i32 { return x * K; }")
        .unwrap();
    assert_eq!(e.eval("f(5)").unwrap().unwrap().to_string(), "10");
    e.eval("fn f(x: i32) -> i32 { return x + K; }").unwrap();
    assert_eq!(e.eval("f(5)").unwrap().unwrap().to_string(), "7");
    e.eval("const K = 10;").unwrap();
    assert_eq!(e.eval("f(5)").unwrap().unwrap().to_string(), "15");
    // A replacement that breaks a caller fails as a whole and changes nothing.
    e.eval("fn g() -> i32 { return f(1); }").unwrap();
    assert!(e.eval("fn f(x: f64) -> f64 { return x; }").is_err());
    assert_eq!(e.eval("g()").unwrap().unwrap().to_string(), "11");
}

#[test]
fn errors_are_miette_diagnostics_with_location() {
    fn run() -> miette::Result<()> {
        let mut e = Engine::new();
        e.eval("let a = zeros(f32, 2);\nlet b = a[3];")?;
        Ok(())
    }
    let report = run().unwrap_err();
    assert_eq!(
        report.code().unwrap().to_string(),
        "accl::run::index_out_of_bounds"
    );
    // The fancy report quotes the source line.
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, report.as_ref())
        .unwrap();
    assert!(out.contains("let b = a[3];"), "{out}");
    // Display: code, message and place; Debug: the plain rendering.
    let mut e = Engine::new();
    let err = e.eval("let x = 1;\nlet y = x / 0;").unwrap_err();
    let shown = err.to_string();
    assert!(shown.starts_with("accl::"), "{shown}");
    assert!(shown.ends_with(":2:9"), "{shown}");
    let debug = format!("{err:?}");
    assert!(
        debug.contains("let y = x / 0;") && !debug.contains("Span {"),
        "{debug}"
    );
}

#[test]
fn call_fn_calls_a_script_function_many_times() {
    use accl::lang::Value;
    let mut e = Engine::new();
    e.eval(
        "fn axpy(a: f32, x: f32[], y: f32[]) { parallel loop for i in 0..len(x) { y[i] = a * x[i] + y[i]; } }
         fn norm2(x: f32[]) -> f64 { let s = 0.0; for i in 0..len(x) { s += x[i] as f64 * x[i] as f64; } return s; }",
    )
    .unwrap();
    let x = accl::Array::zeros(accl::lang::Scalar::F32, vec![4]).unwrap();
    let y = accl::Array::zeros(accl::lang::Scalar::F32, vec![4]).unwrap();
    x.data_mut().fill(Value::F32(1.0));
    for _ in 0..3 {
        let r = e
            .call_fn(
                "axpy",
                &[
                    accl::Val::Scalar(Value::F32(2.0)),
                    accl::Val::Array(x.clone()),
                    accl::Val::Array(y.clone()),
                ],
            )
            .unwrap();
        assert!(r.is_none());
    }
    assert_eq!(y.data().get(3), Some(Value::F32(6.0)));
    let n = e
        .call_fn("norm2", &[accl::Val::Array(y.clone())])
        .unwrap()
        .unwrap();
    assert_eq!(n.to_string(), "144");
    // The argument variables do not stay behind.
    assert!(e.variables().iter().all(|(n, _)| !n.starts_with("__")));
    // A wrong call is the checker's error, with its code.
    let err = e
        .call_fn("norm2", &[accl::Val::Scalar(Value::I32(1))])
        .unwrap_err();
    assert!(err.code().starts_with("accl::type::"), "{}", err.code());
    assert_eq!(
        e.call_fn("nope", &[]).unwrap_err().code(),
        "accl::name::unknown_fn"
    );
}

#[test]
fn registered_functions_take_and_return_arrays() {
    use accl::lang::{Scalar, Type, Value};
    use accl::Val;
    let mut e = Engine::new();
    e.register_val_fn(
        "ramp",
        vec![Type::I32],
        Type::Array(Scalar::F64, 1),
        std::rc::Rc::new(|v: &[Val]| {
            let Val::Scalar(Value::I32(n)) = v[0] else {
                return Err("n".into());
            };
            let a = accl::Array::zeros(Scalar::F64, vec![n.max(0) as usize])
                .map_err(|e| format!("{e:?}"))?;
            {
                let mut d = a.data_mut();
                for i in 0..a.len() {
                    d.set(i, Value::F64(i as f64 * 0.5));
                }
            }
            Ok(Val::Array(a))
        }),
    );
    e.eval("let r = ramp(5); let s = sum(r);").unwrap();
    assert_eq!(e.get::<f64>("s"), Some(5.0));
    // An error of the function is a diagnostic at the call.
    e.register_val_fn(
        "fails",
        vec![Type::Array(Scalar::F64, 1)],
        Type::Unit,
        std::rc::Rc::new(|_: &[Val]| Err("no".into())),
    );
    assert_eq!(
        e.eval("fails(r);").unwrap_err().code(),
        "accl::run::host_function"
    );
}

/// Each input keeps its own source: a diagnostic numbers lines from its
/// input's first line and quotes only that input, and a label in an
/// earlier input (a function declared there) quotes that input, under its
/// own name.
#[test]
fn each_input_renders_with_its_own_source() {
    let mut e = Engine::new();
    e.eval(
        "const K = 3;\n\nfn scale(x: f32,\n         k: i32) -> f32 {\n    return x * k as f32;\n}",
    )
    .unwrap();
    e.eval("let a = zeros(f32, K);\nlet unused = 1;").unwrap();
    e.eval("fn poke(v: f32[], i: i32) { v[i] = 1.0; }").unwrap();
    // A type error with a label two inputs back.
    let err = e.eval("let y = scale(2.0);").unwrap_err();
    assert_eq!(
        err.to_string(),
        "accl::type::arity: `scale` takes 2 arguments but 1 was given at <input 4>:1:9"
    );
    insta::assert_snapshot!("arity_across_inputs", err.render(80));
    // A run-time error inside a function declared in an earlier input:
    // the input of the function, line 1 of it.
    let err = e.eval("let ok = 1;\npoke(a, K + 2);").unwrap_err();
    assert_eq!(err.code(), "accl::run::index_out_of_bounds");
    assert!(err.to_string().ends_with(" at <input 3>:1:31"), "{err}");
    insta::assert_snapshot!("run_time_error_in_an_earlier_input", err.render(80));
    // A one-line input's error is on its line 1, whatever came before.
    let err = e.eval("let z = K[0];").unwrap_err();
    assert!(err.to_string().ends_with(" at <input 6>:1:9"), "{err}");
    let r = err.render(80);
    assert!(!r.contains("const K") && !r.contains("Failed"), "{r}");
    // `eval_source` names its input; the earlier ones keep theirs.
    let err = e
        .eval_source("extra.accl", "\nscale(1.0, 2, 3)")
        .unwrap_err();
    let r = err.render(80);
    assert!(
        r.contains("[extra.accl:2:1]") && r.contains("[<input 1>:3:4]"),
        "{r}"
    );
}

/// `assert`'s message is made only when its condition is false (as C's and
/// Python's): a message that could not be made, or costs a format, is never
/// evaluated while the check passes.
#[test]
fn assert_makes_its_message_only_on_failure() {
    let mut e = Engine::new();
    e.eval("let a = zeros(i32, 4); let made = 0;").unwrap();
    e.eval(
        "fn note() -> str { made += 1; return \"noted\"; }\n\
         for i in 0..4 { assert(a[i] == 0, format(\"{} {}\", a[i + 10], note())); }",
    )
    .unwrap();
    assert_eq!(e.get::<i32>("made"), Some(0));
    let err = e
        .eval("a[2] = 5; for i in 0..4 { assert(a[i] == 0, format(\"a[{}] is {}, {}\", i, a[i], note())); }")
        .unwrap_err();
    assert_eq!(err.code(), "accl::run::assert_failed");
    // (The failed input's scalar changes are undone, so `made` is back to
    // 0; the message shows `note` ran.)
    assert!(format!("{err:?}").contains("a[2] is 5, noted"), "{err:?}");
    // A failing condition whose message fails reports the message's error.
    assert_eq!(
        e.eval("assert(false, format(\"{}\", a[9]));")
            .unwrap_err()
            .code(),
        "accl::run::index_out_of_bounds"
    );
}
