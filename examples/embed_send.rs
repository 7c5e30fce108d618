//! An engine that moves between threads (`accl::SendEngine`): made on the
//! main thread, handed to a worker that runs a script on it, handed back.
//! (To share one engine between threads at once, see `embed_thread.rs`.)
//!
//! Run: `cargo run --example embed_send` (Vulkan device 0 when there is
//! one, else the host reference).

use std::sync::mpsc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut e = accl::SendEngine::vulkan(0).unwrap_or_else(|_| accl::SendEngine::new());
    e.register_fn("scale", |x: &mut [f32], k: f32| {
        x.iter_mut().for_each(|v| *v *= k)
    });
    e.set_array("x", (0..1000).map(|i| i as f32).collect(), &[1000])?;

    let (to_worker, work) = mpsc::channel::<accl::SendEngine>();
    let (to_main, back) = mpsc::channel::<(accl::SendEngine, std::thread::ThreadId)>();
    let worker = std::thread::spawn(move || {
        for mut e in work {
            e.eval(
                "scale(x, 2.0);
                 parallel loop for i in 0..1000 { x[i] = x[i] + 1.0; }",
            )
            .expect("the script runs on the worker");
            to_main.send((e, std::thread::current().id())).unwrap();
        }
    });
    to_worker.send(e)?;
    let (mut e, ran_on) = back.recv()?;
    drop(to_worker);
    worker.join().unwrap();
    assert_ne!(ran_on, std::thread::current().id());

    let s = e.eval_as::<f32>("let s = 0.0f32; for i in 0..1000 { s += x[i]; } s")?;
    assert_eq!(s, 2.0 * 499500.0 + 1000.0);
    if !e.take_validation_messages().is_empty() {
        return Err("validation messages".into());
    }
    println!("the engine moved to a worker thread and back: sum = {s}");
    Ok(())
}
