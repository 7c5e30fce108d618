//! `EngineThread`: an engine on a thread of its own, driven from others.

use accl::{Engine, EngineThread};
use std::sync::Arc;

#[test]
fn the_handle_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<EngineThread>();
    check::<accl::Error>();
}

#[test]
fn a_handle_moved_to_other_threads_runs_their_closures_in_order() {
    let e = Arc::new(EngineThread::spawn(|| Ok(Engine::new())).unwrap());
    e.with(|e| e.eval("let log = zeros(i32, 8); let n = 0;").map(|_| ()))
        .unwrap()
        .unwrap();
    let threads: Vec<_> = (0..8i32)
        .map(|k| {
            let e = Arc::clone(&e);
            std::thread::spawn(move || {
                e.with(move |e| {
                    e.set("k", k);
                    e.eval("log[k] = n; n += 1;").map(|_| ())
                })
                .unwrap()
                .unwrap()
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Every call ran exactly once, one after another: the stamps are a
    // permutation of 0..8.
    let mut log = e.with(|e| e.get_array::<i32>("log").unwrap().0).unwrap();
    log.sort();
    assert_eq!(log, (0..8).collect::<Vec<i32>>());
    // Errors come back as values, with their code.
    let err = e
        .with(|e| e.eval("let d = 0; let z = 1 / d;").map(|_| ()))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), "accl::run::division_by_zero");
}

#[test]
fn a_failing_start_and_a_panicking_closure_are_errors_not_hangs() {
    let err = EngineThread::spawn(|| {
        let mut e = Engine::new();
        e.eval("let x: i32 = 1.5;")?;
        Ok(e)
    })
    .err()
    .expect("the engine's setup fails");
    assert_eq!(err.code(), "accl::type::mismatch");
    let e = EngineThread::spawn(|| Ok(Engine::new())).unwrap();
    let r = e.with(|_| -> i32 { panic!("a bug in the closure") });
    assert_eq!(r.unwrap_err().code(), "accl::api::engine_stopped");
    let r = e.with(|e| e.eval_as::<i32>("1 + 1"));
    assert_eq!(r.unwrap_err().code(), "accl::api::engine_stopped");
}
