//! An engine on a thread of its own, for a program whose threads, tasks or
//! workers share one. The engine itself is not `Send` (its arrays and
//! values are reference-counted without atomics, and the API hands clones
//! of them out), so it stays on the thread that made it; closures go to it
//! and their results come back. The handle is `Send + Sync`.

use super::{Engine, Error};
use std::sync::mpsc;

type Job = Box<dyn FnOnce(&mut Engine) + Send>;

/// A handle to an [`Engine`] living on its own thread: move it to another
/// thread, or share it (`Arc`) between several; their calls run one after
/// another, in the order they arrive.
///
/// ```
/// let e = accl::EngineThread::spawn(|| Ok(accl::Engine::new())).unwrap();
/// let worker = std::thread::spawn(move || {
///     e.with(|e| e.eval_as::<i32>("let x = 40; x + 2")).unwrap()
/// });
/// assert_eq!(worker.join().unwrap().unwrap(), 42);
/// ```
pub struct EngineThread {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn stopped() -> Error {
    Error::api(
        "accl::api::engine_stopped",
        "the engine's thread has stopped (a closure given to `with` panicked)",
    )
}

impl EngineThread {
    /// Start a thread and make its engine there with `make` (a Vulkan
    /// engine opens its device on that thread); `make`'s error comes back.
    pub fn spawn(
        make: impl FnOnce() -> Result<Engine, Error> + Send + 'static,
    ) -> Result<EngineThread, Error> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::channel::<Result<(), Error>>();
        let thread = std::thread::Builder::new()
            .name("accl engine".into())
            .spawn(move || {
                let mut engine = match make() {
                    Ok(e) => e,
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                for job in rx {
                    job(&mut engine);
                }
            })
            .map_err(|e| {
                Error::api(
                    "accl::api::engine_stopped",
                    format!("cannot start the engine's thread: {e}"),
                )
            })?;
        match ready.recv() {
            Ok(Ok(())) => Ok(EngineThread {
                jobs: Some(jobs),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(stopped())
            }
        }
    }

    /// Run `f` with the engine on its thread and return what it returns,
    /// blocking until it has run. An error only when the thread has
    /// stopped (an earlier closure panicked; the engine is gone with it).
    ///
    /// ```
    /// let e = accl::EngineThread::spawn(|| Ok(accl::Engine::new())).unwrap();
    /// e.with(|e| e.set_array("x", vec![1.0f32, 2.0, 3.0], &[3]).map(|_| ())).unwrap().unwrap();
    /// let x = e.with(|e| e.get_array::<f32>("x").unwrap().0).unwrap();
    /// assert_eq!(x, [1.0, 2.0, 3.0]);
    /// ```
    pub fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> Result<R, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |e| {
            let _ = tx.send(f(e));
        });
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        rx.recv().map_err(|_| stopped())
    }
}

impl Drop for EngineThread {
    /// The engine is dropped on its own thread (pending device work lands
    /// first, as when any engine drops), and the thread is joined.
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
