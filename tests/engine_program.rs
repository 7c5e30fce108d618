//! Compile once, run many (`Engine::compile`, `Engine::run`): the program
//! against a changing engine, and the front end that checks an input with
//! only the declarations it can reach.

use accl::lang::{Type, Value};
use accl::{Engine, Val};

#[test]
fn a_program_runs_many_times_and_keeps_what_eval_keeps() {
    let mut e = Engine::new();
    e.eval("fn inc(x: i32) -> i32 { return x + 1; } let n = 0;")
        .unwrap();
    let p = e.compile("n = inc(n); n * 10").unwrap();
    for k in 1..=5 {
        let v = e.run(&p).unwrap().unwrap();
        assert_eq!(v.to_string(), (k * 10).to_string());
    }
    assert_eq!(e.get::<i32>("n"), Some(5));
    // Run, not eval: nothing was checked again.
    assert_eq!(e.last_timings().check, std::time::Duration::ZERO);
    // Its `let`s, `fn`s and `const`s stay, as after eval.
    let q = e
        .compile("const STEP = 3; fn add(x: i32) -> i32 { return x + STEP; } let m = add(n);")
        .unwrap();
    assert!(e.eval("add(1)").is_err(), "compiling declares nothing");
    e.run(&q).unwrap();
    assert_eq!(e.get::<i32>("m"), Some(8));
    assert_eq!(e.eval_as::<i32>("add(STEP)").unwrap(), 6);
    // A failing run keeps nothing new and leaves scalars as they were.
    let r = e
        .compile("n = 100; let w = 1; assert(n < 50, \"too big\");")
        .unwrap();
    assert_eq!(e.run(&r).unwrap_err().code(), "accl::run::assert_failed");
    assert_eq!(e.get::<i32>("n"), Some(5));
    assert!(e.get::<i32>("w").is_none());
    // Compile errors are eval's.
    assert_eq!(
        e.compile("let z: i32 = 1.5;").unwrap_err().code(),
        "accl::type::mismatch"
    );
    assert_eq!(
        e.compile("let z = nope;").unwrap_err().code(),
        "accl::name::unknown"
    );
}

#[test]
fn a_program_is_a_snapshot_of_the_declarations() {
    let mut e = Engine::new();
    e.eval("fn f() -> i32 { return 1; }").unwrap();
    let p = e.compile("f()").unwrap();
    e.eval("fn f() -> i32 { return 2; }").unwrap();
    assert_eq!(e.run(&p).unwrap().unwrap().to_string(), "1");
    assert_eq!(e.eval_as::<i32>("f()").unwrap(), 2);
}

#[test]
fn a_program_checks_the_variables_it_uses() {
    let mut e = Engine::new();
    e.set_array("x", vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    e.set("unused", 1i32);
    let p = e.compile("x[0] += 1.0; len(x)").unwrap();
    assert_eq!(e.run(&p).unwrap().unwrap().to_string(), "3");
    // Variables it does not name may change or go.
    assert!(e.remove("unused"));
    e.set_str("other", "text");
    // Another array of the same type and rank, of another length: fine.
    e.set_array("x", vec![0.0f32; 5], &[5]).unwrap();
    assert_eq!(e.run(&p).unwrap().unwrap().to_string(), "5");
    assert_eq!(e.get_array::<f32>("x").unwrap().0[0], 1.0);
    // Another element type, rank or kind: refused before anything runs.
    for change in [
        &(|e: &mut Engine| e.set_array("x", vec![0.0f64; 3], &[3]).unwrap())
            as &dyn Fn(&mut Engine),
        &|e: &mut Engine| e.set_array("x", vec![0.0f32; 4], &[2, 2]).unwrap(),
        &|e: &mut Engine| e.set("x", 1.0f32),
        &|e: &mut Engine| e.set_str("x", "x"),
    ] {
        change(&mut e);
        let err = e.run(&p).unwrap_err();
        assert_eq!(err.code(), "accl::api::stale_program");
        assert!(err.to_string().contains("`x: f32[]`"), "{err}");
        assert!(err.render(80).contains("compile it again"), "{err:?}");
    }
    assert!(e.remove("x"));
    let err = e.run(&p).unwrap_err();
    assert_eq!(err.code(), "accl::api::stale_program");
    assert!(err.to_string().contains("no longer exists"), "{err}");
    // The same variables again: it runs again.
    e.set_array("x", vec![7.0f32], &[1]).unwrap();
    e.run(&p).unwrap();
    assert_eq!(e.get_array::<f32>("x").unwrap().0, [8.0]);
}

#[test]
fn a_program_checks_the_registered_functions_it_names() {
    let mut e = Engine::new();
    e.register_fn("twice", |x: i32| 2 * x);
    let p = e.compile("twice(21)").unwrap();
    // Registering again with the same signature: the new closure runs.
    e.register_fn("twice", |x: i32| x + x + 1);
    assert_eq!(e.run(&p).unwrap().unwrap().to_string(), "43");
    // Unrelated registrations do not matter.
    e.register_fn("other", |x: f64| x);
    assert_eq!(e.run(&p).unwrap().unwrap().to_string(), "43");
    // Another signature: refused.
    e.register_fn("twice", |x: f64| 2.0 * x);
    let err = e.run(&p).unwrap_err();
    assert_eq!(err.code(), "accl::api::stale_program");
    assert!(err.to_string().contains("`twice`"), "{err}");
    // A builtin the program uses, replaced by a registered function.
    let q = e.compile("sqrt(4.0)").unwrap();
    e.register_fn("sqrt", |x: i32| x);
    assert_eq!(e.run(&q).unwrap_err().code(), "accl::api::stale_program");
    // A function a declaration calls counts too.
    e.register_fn("h", |x: i32| x);
    e.eval("fn g(x: i32) -> i32 { return h(x); }").unwrap();
    let r = e.compile("g(1)").unwrap();
    e.register_fn("h", |x: u8| x);
    assert_eq!(e.run(&r).unwrap_err().code(), "accl::api::stale_program");
}

#[test]
fn a_program_runs_on_another_engine_with_the_same_variables() {
    let mut a = Engine::new();
    a.set("k", 2i64);
    a.eval("fn sq(x: i64) -> i64 { return x * x; }").unwrap();
    let p = a.compile("k = sq(k); k").unwrap();
    let mut b = Engine::new();
    assert_eq!(b.run(&p).unwrap_err().code(), "accl::api::stale_program");
    b.set("k", 3i64);
    assert_eq!(b.run(&p).unwrap().unwrap().to_string(), "9");
    // It declared nothing of its own: `sq` stays `a`'s.
    assert!(b.eval("sq(2)").is_err());
    b.register_fn("sq", |x: i64| x);
    assert_eq!(b.run(&p).unwrap_err().code(), "accl::api::stale_program");
}

#[test]
fn call_fn_in_a_session_with_many_declarations() {
    let mut e = Engine::new();
    let mut src = String::new();
    for i in 0..300 {
        src += &format!("fn g{i}(x: f64) -> f64 {{ return x + {i}.0; }}\n");
    }
    e.eval(&src).unwrap();
    for i in 0..20 {
        let v = e
            .call_fn(&format!("g{i}"), &[Val::Scalar(Value::F64(0.5))])
            .unwrap()
            .unwrap();
        assert_eq!(v.to_string(), format!("{i}.5"));
    }
    assert_eq!(e.eval_as::<f64>("g299(g1(0.0))").unwrap(), 300.0);
}

#[test]
fn call_fn_follows_redeclarations_and_argument_types() {
    let mut e = Engine::new();
    e.eval("fn f(x: f64) -> f64 { return x * 2.0; }").unwrap();
    let x = [Val::Scalar(Value::F64(1.5))];
    assert_eq!(e.call_fn("f", &x).unwrap().unwrap().to_string(), "3");
    assert_eq!(e.call_fn("f", &x).unwrap().unwrap().to_string(), "3");
    e.eval("fn f(x: f64) -> f64 { return x * 4.0; }").unwrap();
    assert_eq!(e.call_fn("f", &x).unwrap().unwrap().to_string(), "6");
    // Other argument types: checked again (and refused here).
    let err = e.call_fn("f", &[Val::Scalar(Value::I32(1))]).unwrap_err();
    assert!(err.code().starts_with("accl::type::"), "{err:?}");
    e.eval("fn f(s: str) -> str { return s + s; }").unwrap();
    let s = [Val::Str(std::rc::Rc::new("ab".into()))];
    assert_eq!(e.call_fn("f", &s).unwrap().unwrap().to_string(), "abab");
    // A registered function it calls, registered again with another
    // signature: the call is compiled again (and refused here).
    e.register_fn("h", |x: i32| x + 1);
    e.eval("fn k(x: i32) -> i32 { return h(x); }").unwrap();
    let one = [Val::Scalar(Value::I32(1))];
    assert_eq!(e.call_fn("k", &one).unwrap().unwrap().to_string(), "2");
    e.register_fn("h", |x: i32| x + 10);
    assert_eq!(e.call_fn("k", &one).unwrap().unwrap().to_string(), "11");
    e.register_fn("h", |x: i64| x);
    assert!(e
        .call_fn("k", &one)
        .unwrap_err()
        .code()
        .starts_with("accl::type::"));
    // Nothing is left behind, and the timings are a run's.
    e.eval("fn z() -> i32 { return 7; }").unwrap();
    e.call_fn("z", &[]).unwrap();
    e.call_fn("z", &[]).unwrap();
    assert_eq!(e.last_timings().check, std::time::Duration::ZERO);
    assert!(e.variables().is_empty());
}

#[test]
fn an_input_is_checked_with_what_it_reaches() {
    let mut e = Engine::new();
    e.eval(
        "const A = 2; const B = A * 3;
         fn f() -> i32 { return B; }
         fn h() -> i32 { return f() + 1; }
         fn k(a: i32[]) { parallel loop for i in 0..len(a) { a[i] = h(); } }
         fn unrelated() -> f64 { return 1.5; }",
    )
    .unwrap();
    assert_eq!(e.eval_as::<i32>("h()").unwrap(), 7);
    // A replacement of `f` that cannot run on a device breaks `k`, which
    // calls it through `h`: refused, and `f` stays as it was.
    let err = e
        .eval("fn f() -> i32 { println(1); return 1; }")
        .unwrap_err();
    assert!(err.code().starts_with("accl::device"), "{err:?}");
    assert_eq!(e.eval_as::<i32>("h()").unwrap(), 7);
    // A replacement of `B` changes `f` and `h`.
    e.eval("const B = 30;").unwrap();
    assert_eq!(e.eval_as::<i32>("h()").unwrap(), 31);
    // An unknown name is told about the declarations it may mean.
    let err = e.eval("unrelatd()").unwrap_err();
    assert!(err.render(100).contains("unrelated"), "{err:?}");
    // A host function that a declaration the input does not reach calls
    // changed signature: only inputs that reach it fail.
    e.register_fn("hf", |x: i32| x);
    e.eval("fn uses_hf() -> i32 { return hf(1); }").unwrap();
    e.register_fn("hf", |x: f64| x);
    assert_eq!(e.eval_as::<i32>("f()").unwrap(), 30);
    assert!(e.eval("uses_hf()").is_err());
    // Types of what the input reaches, and a call from a kernel.
    e.eval("let a = zeros(i32, 4); k(a);").unwrap();
    assert_eq!(e.get_array::<i32>("a").unwrap().0, [31; 4]);
    assert_eq!(
        e.type_of("unrelated() * 2.0").unwrap(),
        Type::Scalar(accl::lang::Scalar::F64)
    );
}

/// `compile` then `run` is `eval`: the same value or error code, and the
/// same variables afterwards, input after input.
#[test]
fn compile_then_run_is_eval() {
    let sessions: &[&[&str]] = &[
        &[
            "const N = 8; fn sq(x: f32) -> f32 { return x * x; } let a = zeros(f32, N);",
            "parallel loop for i in 0..N { a[i] = sq(i as f32); } sum(a)",
            "let s = format(\"{:.1}\", a[3]); s + \"!\"",
            "fn sq(x: f32) -> f32 { return x + 1.0; } sq(2.0)",
            "a[N] = 1.0;",
            "let k: i32 = 1.5;",
            "let t = 0; for i in 0..10 { t += i; } t",
            "let a = 3; a * sq(1.0) as i32",
        ],
        &[
            "fn f(n: i32) -> i32 { if n < 2 { return n; } return f(n - 1) + f(n - 2); }",
            "f(15)",
            "fn g(x: f64[]) { for i in 0..len(x) { x[i] = f(i) as f64; } } let v = zeros(f64, 6); g(v); v",
            "const C = 2; fn f(n: i32) -> i32 { return n * C; } f(4)",
            "unknown_name + 1",
            "let w = \"x\"; w = w + w; w",
        ],
    ];
    for session in sessions {
        let mut a = Engine::new();
        let mut b = Engine::new();
        a.set_print(|_| {});
        b.set_print(|_| {});
        for src in *session {
            let ra = a.eval(src);
            let rb = b.compile(src).and_then(|p| b.run(&p));
            match (&ra, &rb) {
                (Ok(x), Ok(y)) => assert_eq!(
                    x.as_ref().map(|v| v.to_string()),
                    y.as_ref().map(|v| v.to_string()),
                    "{src}"
                ),
                (Err(x), Err(y)) => assert_eq!(x.code(), y.code(), "{src}"),
                _ => panic!("{src}: eval {ra:?}, compile + run {rb:?}"),
            }
            assert_eq!(a.variables(), b.variables(), "{src}");
        }
    }
}
