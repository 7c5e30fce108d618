//! Compile once, run many: a session with 300 declarations, a small input
//! evaluated again and again (`eval`: parse, check, compile, run each time)
//! against the same input compiled once (`compile`) and run (`run`), and a
//! script function called from Rust (`call_fn`). A compiled program checks
//! that the variables it uses still have their types before it runs.
//!
//! `cargo run --release --example embed_compile`

use accl::lang::Value;
use accl::{Engine, Val};
use std::time::Instant;

fn per_call(n: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
}

fn main() -> miette::Result<()> {
    let mut e = Engine::new();
    // 150 constants and 150 functions, as a long session would have.
    let mut decls = String::new();
    for i in 0..150 {
        decls += &format!(
            "const K{i} = {i}.5;\n\
             fn g{i}(x: f64) -> f64 {{ let s = x; for j in 0..3 {{ s += K{i} * j as f64; }} return s; }}\n"
        );
    }
    e.eval(&decls)?;
    e.eval("let acc = 0.0;")?;

    let input = "acc += g7(1.0);";
    let n = 200;
    let eval_us = per_call(n, || {
        e.eval(input).expect("runs");
    });
    let t = Instant::now();
    let p = e.compile(input)?;
    let compile_us = t.elapsed().as_secs_f64() * 1e6;
    let run_us = per_call(n, || {
        e.run(&p).expect("runs");
    });
    let x = Val::Scalar(Value::F64(1.0));
    let call_us = per_call(n, || {
        e.call_fn("g7", std::slice::from_ref(&x)).expect("runs");
    });
    println!("300 declarations; `{input}` {n} times");
    println!("  eval:    {eval_us:8.2} us per call");
    println!("  compile: {compile_us:8.2} us, once");
    println!("  run:     {run_us:8.2} us per call");
    println!("  call_fn: {call_us:8.2} us per call");
    // g7(1.0) = 1 + 7.5 * (0 + 1 + 2) = 23.5, added 2n times.
    let acc = e.get::<f64>("acc").expect("acc is f64");
    assert_eq!(acc, 23.5 * f64::from(2 * n));
    println!("acc = {acc}");

    // The program names `acc`: giving `acc` another type makes it stale.
    e.set("acc", 0i32);
    let err = e.run(&p).expect_err("acc is i32 now");
    println!("after `acc` became i32: {}", err.code());
    Ok(())
}
