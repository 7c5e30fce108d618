//! An engine shared by worker threads: `EngineThread` keeps the engine on a
//! thread of its own (an `Engine` is not `Send`) and runs the closures the
//! workers send it, one after another. Here four workers each add their
//! share into one array with a kernel (on the first Vulkan device, or the
//! host backend when there is none), and the main thread checks the sum.
//!
//! `cargo run --example embed_thread`

use accl::{Engine, EngineThread};
use std::sync::Arc;

fn main() -> miette::Result<()> {
    let engine = EngineThread::spawn(|| {
        let mut e = Engine::vulkan(0).unwrap_or_else(|_| Engine::new());
        e.eval("let total = zeros(f64, 1000);")?;
        Ok(e)
    })?;
    let engine = Arc::new(engine);
    let workers: Vec<_> = (1..=4)
        .map(|w| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                engine.with(move |e| {
                    e.set("w", w as f64);
                    e.eval("parallel loop for i in 0..1000 { total[i] = total[i] + w * i as f64; }")
                        .map(|_| ())
                })
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker panicked")??;
    }
    let (backend, sum) = engine.with(|e| (e.backend_name(), e.eval_as::<f64>("sum(total)")))?;
    let sum = sum?;
    // (1 + 2 + 3 + 4) * (0 + 1 + .. + 999)
    assert_eq!(sum, 10.0 * 499_500.0);
    println!("4 threads shared one engine ({backend} backend): sum(total) = {sum}");
    Ok(())
}
