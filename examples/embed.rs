//! Embedding accl in a Rust program: hand it data, register a Rust
//! function, run a script with a parallel loop, read the result back, and
//! keep control with an operation limit.
//!
//! `cargo run --example embed`

use accl::Engine;
use std::cell::RefCell;
use std::rc::Rc;

fn main() {
    let mut engine = Engine::new();

    // Script output goes wherever the host wants it.
    let log = Rc::new(RefCell::new(String::new()));
    let l = log.clone();
    engine.set_print(move |s| l.borrow_mut().push_str(s));

    // Data in: a 2 x 4 matrix and a scalar, without per-element conversion.
    let m: Vec<f32> = (0..8).map(|i| i as f32).collect();
    engine.set_array("m", m, &[2, 4]).expect("shape matches");
    engine.set("gain", 0.5f32);

    // A Rust function the script can call (on the host).
    engine.register_fn("bias", |row: i32| row as f32 * 100.0);

    // Keep a runaway script from hanging the host.
    engine.set_max_operations(1_000_000);

    let script = r#"
        parallel loop collapse(2) copy(m) for j in 0..2 {
            for i in 0..4 {
                m[j, i] = m[j, i] * gain;
            }
        }
        for j in 0..2 {
            m[j, 0] += bias(j);
        }
        let total = sum(m);
        println("total = ", total);
    "#;
    if let Err(e) = engine.eval(script) {
        eprintln!("{}", e.render(100));
        std::process::exit(1);
    }

    // Data out.
    let (data, shape) = engine.get_array::<f32>("m").expect("m is an f32 array");
    println!("m {shape:?} = {data:?}");
    println!("total = {:?}", engine.get::<f32>("total"));
    print!("script printed: {}", log.borrow());

    // State persists: later inputs see earlier variables and functions.
    let v = engine.eval("total * 2.0").expect("evaluates");
    println!(
        "total * 2 = {}",
        v.map(|v| v.to_string()).unwrap_or_default()
    );

    // The operation limit stops an endless loop with a diagnostic.
    let err = engine.eval("while true { }").unwrap_err();
    println!("endless loop stopped: {}", err.code());
}
