//! Declare once, call many times: a script's functions called from Rust
//! with `call_fn` (arrays passed by reference, so results land in them),
//! and a Rust function on arrays registered with `register_val_fn`.
//!
//! `cargo run --example embed_call`

use accl::lang::{Scalar, Type, Value};
use accl::{Array, Engine, Val};
use std::rc::Rc;

fn main() {
    let mut e = Engine::new();
    // A Rust function the script calls with an array: fills it with a ramp.
    e.register_val_fn(
        "fill_ramp",
        vec![Type::Array(Scalar::F32, 1)],
        Type::Unit,
        Rc::new(|v: &[Val]| {
            let Val::Array(x) = &v[0] else {
                return Err("an array".into());
            };
            let mut d = x.data_mut();
            for i in 0..x.len() {
                d.set(i, Value::F32(i as f32));
            }
            Ok(Val::Unit)
        }),
    );
    e.eval(
        "fn step(x: f32[], y: f32[], a: f32) {
             parallel loop for i in 0..len(x) { y[i] = a * x[i] + y[i]; }
         }
         fn setup(x: f32[]) { fill_ramp(x); }",
    )
    .expect("the functions check");

    let x = Array::zeros(Scalar::F32, vec![8]).expect("small");
    let y = Array::zeros(Scalar::F32, vec![8]).expect("small");
    e.call_fn("setup", &[Val::Array(x.clone())])
        .expect("setup runs");
    for k in 0..10 {
        let a = Val::Scalar(Value::F32(0.5 + k as f32 * 0.1));
        e.call_fn("step", &[Val::Array(x.clone()), Val::Array(y.clone()), a])
            .expect("a step runs");
    }
    let last = y.data().get(7).expect("8 elements");
    println!("y[7] after 10 steps = {last}");
    // sum over k of (0.5 + 0.1 k) * 7 = 7 * (5 + 4.5) = 66.5
    assert_eq!(last, Value::F32(66.5));
}
