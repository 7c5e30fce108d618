//! Kernels compiled ahead of their first launch: when an input is compiled,
//! its kernels' SPIR-V and pipelines are built for the current device on
//! worker threads ([`DevState::prefetch`]; for a device still opening, by
//! the thread that opens it, `opener.rs`); a launch takes its own result
//! in [`DevState::module`].

use super::device::spec::{binding_kinds, work_group_size};
use super::device::{DevState, KernelOptions, Prefetched};
use crate::interp::machine::DeviceCode;
use compiler::Spec;
use std::rc::Rc;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;
use vk_runtime::{ComputePipeline, Device};

/// A kernel to compile ahead of its first launch, for the specialisation
/// its launch will most likely use ([`launch_spec`]), with its iteration
/// count when that is a constant.
pub struct PrefetchJob {
    pub key: u64,
    pub kernel: compiler::Kernel,
    pub spec: Spec,
    pub total: Option<u64>,
}

/// The specialisation a launch of `kernel` will most likely use, from the
/// device's `spec`: it reads arrays through texels where it may (most
/// arrays fit a texel view) on a device that does (`texel_reads`).
pub fn launch_spec(kernel: &compiler::Kernel, spec: Spec, texel_reads: bool) -> Spec {
    Spec {
        texels: if texel_reads {
            Spec::texel_candidates(kernel)
        } else {
            0
        },
        ..spec
    }
}

/// The pipeline shape of job `j`: the work-group size its launch will most
/// likely use (that of its constant iteration count, else the device's
/// default; a wrong guess costs what compiling at the launch always cost),
/// its bindings' kinds and its push-constant bytes.
fn shape(j: &PrefetchJob) -> (u32, Vec<vk_runtime::Binding>, u32) {
    let (kernel, spec) = (&j.kernel, &j.spec);
    let plan = compiler::Plan::of(kernel, spec);
    let n = plan.layout.num_bindings(kernel)
        + u32::from(spec.uses_fault_buffer())
        + u32::from(plan.resume);
    let wg = work_group_size(
        kernel,
        spec,
        kernel.vector_length,
        j.total.unwrap_or(u64::MAX),
    );
    (
        wg,
        binding_kinds(kernel, spec, n),
        plan.layout.push_constant_bytes(),
    )
}

/// What a launch waits on for its kernel compiled ahead, by (fingerprint,
/// specialisation).
pub(super) type Waiting = Vec<((u64, Spec), Receiver<Prefetched>)>;

/// Start compiling `jobs` on `device` on worker threads, as many as the
/// machine has cores and at most one per job: SPIR-V, then the pipeline.
/// The workers must be joined before the device goes (a worker inside the
/// driver while the device or the process goes away can crash it).
pub(super) fn spawn(device: &Device, jobs: Vec<PrefetchJob>) -> (Waiting, Vec<JoinHandle<()>>) {
    let mut waiting = Vec::new();
    let jobs: Vec<_> = jobs
        .into_iter()
        .map(|j| {
            let (tx, rx) = std::sync::mpsc::channel();
            waiting.push(((j.key, j.spec), rx));
            (j, tx)
        })
        .collect();
    if jobs.is_empty() {
        return (waiting, Vec::new());
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    let queue = Arc::new(std::sync::Mutex::new(jobs));
    let mut handles = Vec::new();
    for _ in 0..workers {
        let queue = queue.clone();
        let device = device.clone();
        let worker = std::thread::spawn(move || loop {
            let next = queue.lock().ok().and_then(|mut q| q.pop());
            let Some((j, tx)) = next else { break };
            let start = std::time::Instant::now();
            let words = compiler::compile(&j.kernel, &j.spec).map(Arc::new);
            let pipeline = words.as_ref().ok().map(|w| {
                let (wg, bindings, push_bytes) = shape(&j);
                let p = ComputePipeline::with_bindings(
                    &device,
                    w,
                    "main",
                    &bindings,
                    push_bytes,
                    &[(0, wg)],
                );
                (wg, p)
            });
            // The launch may never come (its receiver is gone): fine.
            let took = (start, std::time::Instant::now());
            let _ = tx.send(Prefetched {
                took,
                words,
                pipeline,
            });
        });
        handles.push(worker);
    }
    (waiting, handles)
}

impl DevState {
    /// Whether the module of `kernel` under `spec` is here or on its way
    /// (so a repeated input costs no job, nor a copy of its kernel).
    pub fn has_module(&self, key: u64, kernel: &compiler::Kernel, spec: &Spec) -> bool {
        self.modules.contains(key, kernel, spec) || self.prefetching.contains_key(&(key, *spec))
    }

    /// Start compiling the kernels of `codes` for this device under
    /// `options`, those not here or on their way.
    pub fn prefetch(&mut self, codes: &[Rc<DeviceCode>], options: &KernelOptions) {
        let spec = self.spec(options);
        // Several constructs may share one kernel.
        let mut seen = std::collections::HashSet::new();
        let jobs: Vec<_> = codes
            .iter()
            .filter_map(|code| {
                let kernel = code.kernel.as_ref().ok()?;
                let key = *code.fingerprint.get_or_init(|| kernel.fingerprint());
                let spec = launch_spec(kernel, spec, self.traits.texel_reads);
                (!self.has_module(key, kernel, &spec) && seen.insert((key, spec))).then(|| {
                    PrefetchJob {
                        key,
                        kernel: kernel.clone(),
                        spec,
                        total: code.total_hint,
                    }
                })
            })
            .collect();
        self.take_prefetched(spawn(&self.device, jobs));
    }

    /// Kernels being compiled ahead, for their launches to wait on.
    pub(super) fn take_prefetched(&mut self, (waiting, workers): (Waiting, Vec<JoinHandle<()>>)) {
        self.prefetching.extend(waiting);
        self.workers.retain(|w| !w.is_finished());
        self.workers.extend(workers);
    }
}
