//! Rust closures as script functions: strings (`&str`, `String`) and arrays
//! (`accl::Array`) as arguments, `String` and `Result` returns, each typed
//! at the script's call site.

use accl::lang::Scalar;
use accl::stdlib::Elem;
use accl::{Array, Engine};
use std::cell::RefCell;
use std::rc::Rc;

#[test]
fn strings_in_and_out() {
    let mut e = Engine::new();
    e.register_fn("shout", |s: &str| s.to_uppercase() + "!");
    e.register_fn("count", |s: &str, c: &str| s.matches(c).count() as i32);
    e.register_fn("owned", |s: String, n: i32| s.repeat(n.max(0) as usize));
    e.register_fn("name", || String::from("accl"));
    e.register_fn("mixed", |a: f64, s: &str, b: bool, t: String| {
        format!("{a}/{s}/{b}/{t}")
    });
    assert_eq!(
        e.eval("shout(\"heat\")").unwrap().unwrap().to_string(),
        "HEAT!"
    );
    assert_eq!(e.eval_as::<i32>("count(\"banana\", \"an\")").unwrap(), 2);
    e.eval("let s = owned(name() + \"-\", 3); let m = mixed(1.5, s, true, \"x\");")
        .unwrap();
    assert_eq!(e.get_str("s").as_deref(), Some("accl-accl-accl-"));
    assert_eq!(
        e.get_str("m").as_deref(),
        Some("1.5/accl-accl-accl-/true/x")
    );
    // A string result is a `str`: it takes part in string expressions.
    assert_eq!(
        e.eval("shout(\"a\") + shout(\"b\") == \"A!B!\"")
            .unwrap()
            .unwrap()
            .to_string(),
        "true"
    );
    // Typed at the call site.
    for bad in [
        "shout(1)",
        "shout(1.5)",
        "count(\"a\")",
        "let x: i32 = shout(\"a\");",
    ] {
        let err = e.eval(bad).unwrap_err();
        assert!(err.code().starts_with("accl::type::"), "{bad}: {err:?}");
    }
}

#[test]
fn a_str_argument_borrows_the_scripts_string() {
    // The closure sees the text for the call; it may keep a copy.
    let seen = Rc::new(RefCell::new(Vec::<String>::new()));
    let s = seen.clone();
    let mut e = Engine::new();
    e.register_fn("log", move |m: &str| s.borrow_mut().push(m.to_string()));
    e.eval("for i in 0..3 { log(format(\"step {}\", i)); }")
        .unwrap();
    assert_eq!(*seen.borrow(), ["step 0", "step 1", "step 2"]);
}

#[test]
fn arrays_as_arguments() {
    let mut e = Engine::new();
    // Any array: the closure reads its type and shape.
    e.register_fn("describe", |a: Array| {
        format!("{}{:?}", a.scalar(), a.shape())
    });
    // And writes to it: the script sees the writes.
    e.register_fn("fill", |a: Array, v: f64| -> Result<(), String> {
        let ty = a.scalar();
        let mut d = a.data_mut();
        let x = f64::slice_mut(&mut d).ok_or(format!("`fill` takes f64 arrays, not {ty}"))?;
        x.fill(v);
        Ok(())
    });
    e.register_fn("total", |a: Array, w: f32| {
        a.to_vec::<f32>()
            .map_or(-1.0, |v| v.iter().sum::<f32>() * w)
    });
    e.eval("let m = zeros(f64, 2, 3); fill(m, 2.5); let t = describe(m);")
        .unwrap();
    assert_eq!(e.get_str("t").as_deref(), Some("f64[2, 3]"));
    assert_eq!(e.get_array::<f64>("m").unwrap().0, [2.5; 6]);
    assert_eq!(e.eval_as::<f32>("total(ones(f32, 4), 0.5)").unwrap(), 2.0);
    // A scalar where an array is expected: a type error at the call.
    let err = e.eval("describe(1)").unwrap_err();
    assert_eq!(err.code(), "accl::type::builtin_args");
    assert!(
        err.render(100).contains("an array as argument 1"),
        "{err:?}"
    );
    // The closure's own error: a run-time diagnostic at the call.
    let err = e.eval("fill(zeros(i32, 2), 1.0);").unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
    assert!(
        err.render(100).contains("takes f64 arrays, not i32"),
        "{err:?}"
    );
    // Not in device code.
    let err = e
        .eval("let a = zeros(f64, 4); parallel loop for i in 0..4 { a[i] = total(ones(f32, 1), 1.0) as f64; }")
        .unwrap_err();
    assert!(err.code().starts_with("accl::device"), "{err:?}");
    // Array arguments of every element type and rank.
    for src in [
        "describe(zeros(bool, 1))",
        "describe(zeros(u8, 1, 2, 3))",
        "describe(arange(i64, 3))",
    ] {
        assert!(e.eval(src).is_ok(), "{src}");
    }
    let a = Array::zeros(Scalar::U32, vec![4]).unwrap();
    e.set_array_handle("h", a);
    assert_eq!(
        e.eval("describe(h)").unwrap().unwrap().to_string(),
        "u32[4]"
    );
}

#[test]
fn results_and_scalars() {
    let mut e = Engine::new();
    e.register_fn("checked_sqrt", |x: f64| {
        if x < 0.0 {
            Err(format!("sqrt of {x}"))
        } else {
            Ok(x.sqrt())
        }
    });
    assert_eq!(e.eval_as::<f64>("checked_sqrt(9.0)").unwrap(), 3.0);
    let err = e.eval("let y = checked_sqrt(-4.0);").unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
    assert!(err.render(100).contains("sqrt of -4"), "{err:?}");
    // Literals take the parameter's type.
    e.register_fn("u", |a: u8, b: i64, c: u32| a as i64 + b + c as i64);
    assert_eq!(e.eval_as::<i64>("u(1, 2, 3)").unwrap(), 6);
    assert!(e.eval("u(300, 2, 3)").is_err());
}

#[test]
fn the_synopsis_names_the_parameters() {
    let mut e = Engine::new();
    e.register_fn("f", |_: Array, _: &str, _: f32| ());
    let err = e.eval("f()").unwrap_err();
    assert!(
        err.render(100).contains("f(array, str, f32) -> ()"),
        "{err:?}"
    );
}

#[test]
fn typed_slices_of_any_rank() {
    let mut e = Engine::new();
    e.register_fn("scale", |x: &mut [f32], k: f32| {
        for v in x {
            *v *= k;
        }
    });
    e.register_fn("dot", |a: &[f64], b: &[f64]| {
        a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>()
    });
    e.register_fn("copy_into", |dst: &mut [i32], src: &[i32]| {
        let n = dst.len().min(src.len());
        dst[..n].copy_from_slice(&src[..n]);
    });
    e.eval("let m = ones(f32, 2, 2); scale(m, 3.0); let v = arange(f64, 4);")
        .unwrap();
    assert_eq!(e.get_array::<f32>("m").unwrap().0, [3.0; 4]);
    // The same array twice, read twice: fine.
    assert_eq!(e.eval_as::<f64>("dot(v, v)").unwrap(), 14.0);
    // The element type is checked at the call, the rank is free.
    let err = e.eval("scale(v, 2.0);").unwrap_err();
    assert_eq!(err.code(), "accl::type::builtin_args");
    assert!(err.render(100).contains("an array of `f32`"), "{err:?}");
    // Written and read at once: a run-time error, not a panic.
    e.eval("let a = arange(i32, 3); let b = zeros(i32, 5); copy_into(b, a);")
        .unwrap();
    assert_eq!(e.get_array::<i32>("b").unwrap().0, [0, 1, 2, 0, 0]);
    let err = e.eval("copy_into(a, a);").unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
    assert!(err.render(100).contains("same array"), "{err:?}");
    // A handle beside a borrow of the same array is refused too; two
    // handles are not.
    e.register_fn("peek", |a: Array, x: &[i32]| a.len() as i32 + x[0]);
    e.register_fn("both", |a: Array, b: Array| a.same(&b));
    assert_eq!(
        e.eval("peek(a, a)").unwrap_err().code(),
        "accl::run::host_function"
    );
    assert_eq!(e.eval_as::<i32>("peek(b, a)").unwrap(), 5);
    assert!(e.eval_as::<bool>("both(a, a)").unwrap());
}
