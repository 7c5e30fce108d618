//! Kernels compiled ahead of their first launch: when an input is compiled,
//! its kernels' SPIR-V and pipelines are built for the current device on
//! worker threads ([`DevState::prefetch`]); a launch takes its own result
//! in [`DevState::module`].

use super::device::{DevState, Prefetched};
use compiler::Spec;
use std::sync::Arc;
use vk_runtime::ComputePipeline;

/// A kernel to compile ahead of its first launch.
pub struct PrefetchJob {
    pub key: u64,
    pub kernel: compiler::Kernel,
    pub spec: Spec,
    /// The work-group size its launch will most likely use, with the
    /// pipeline's binding count and push-constant bytes.
    pub wg: u32,
    pub bindings: Vec<vk_runtime::Binding>,
    pub push_bytes: u32,
}

impl DevState {
    /// Whether the module of `kernel` under `spec` is here or on its way
    /// (so a repeated input costs no job, nor a copy of its kernel).
    pub fn has_module(&self, key: u64, kernel: &compiler::Kernel, spec: &Spec) -> bool {
        self.modules.contains(key, kernel, spec) || self.prefetching.contains_key(&(key, *spec))
    }

    /// Start compiling `jobs` (none of which [`DevState::has_module`]) on
    /// worker threads, as many as the machine has cores and at most one per
    /// job: SPIR-V, then the pipeline.
    pub fn prefetch(&mut self, jobs: Vec<PrefetchJob>) {
        let jobs: Vec<_> = jobs
            .into_iter()
            .map(|j| {
                let (tx, rx) = std::sync::mpsc::channel();
                self.prefetching.insert((j.key, j.spec), rx);
                (j, tx)
            })
            .collect();
        if jobs.is_empty() {
            return;
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(jobs.len());
        let queue = Arc::new(std::sync::Mutex::new(jobs));
        self.workers.retain(|w| !w.is_finished());
        for _ in 0..workers {
            let queue = queue.clone();
            let device = self.device.clone();
            let worker = std::thread::spawn(move || loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop());
                let Some((j, tx)) = next else { break };
                let start = std::time::Instant::now();
                let words = compiler::compile(&j.kernel, &j.spec).map(Arc::new);
                let pipeline = words.as_ref().ok().map(|w| {
                    let p = ComputePipeline::with_bindings(
                        &device,
                        w,
                        "main",
                        &j.bindings,
                        j.push_bytes,
                        &[(0, j.wg)],
                    );
                    (j.wg, p)
                });
                // The launch may never come (its receiver is gone): fine.
                let took = (start, std::time::Instant::now());
                let _ = tx.send(Prefetched {
                    took,
                    words,
                    pipeline,
                });
            });
            self.workers.push(worker);
        }
    }
}
