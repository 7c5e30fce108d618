//! Devices opened on a thread of their own while the host works.
//!
//! Opening a Vulkan device costs about half a second on an NVIDIA GPU
//! (the driver's own start, as a CUDA context's), and most programs do
//! host work (reading or generating their input) before their first
//! construct. So when a program that will use the current device is
//! compiled, that device starts opening on a thread ([`Opening::start`]),
//! which then starts compiling the program's kernels for it (the pipeline
//! cache loaded first, as a synchronous open does); the device's first
//! real use joins the thread ([`Opening::join`]) and reports its error, if
//! any, as a synchronous open would have.
//!
//! Ownership: only a `vk_runtime::Device` (an `Arc` handle, `Send`)
//! crosses threads; the `DevState` around it, with its `Rc`s and its
//! queues, is made on the program's thread at the join. The thread never
//! outlives its backend: dropping an [`Opening`] joins it, and the device
//! it opened goes the way an opened device goes (its kernels compiled
//! ahead are waited for, its workers joined, its pipeline cache saved).

use super::device::{self, DevState, KernelOptions, Traits};
use super::prefetch::{self, Waiting};
use crate::interp::machine::DeviceCode;
use crate::interp::present::Fault;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::Duration;
use vk_runtime::{Device, Instance};

/// A kernel for the opening device to compile: what of a program's
/// `DeviceCode` may cross threads.
struct Ahead {
    key: u64,
    kernel: compiler::Kernel,
    total: Option<u64>,
}

/// What the thread made: the device and the kernels it started compiling.
struct Opened {
    device: Device,
    waiting: Waiting,
    workers: Vec<JoinHandle<()>>,
    /// How long opening took on the thread (the driver's device, its
    /// queues, the pipeline cache), kernels not counted.
    took: Duration,
}

impl Drop for Opened {
    fn drop(&mut self) {
        // Not joined into a DevState: no worker may still be inside the
        // driver when the device goes.
        self.waiting.clear();
        for w in std::mem::take(&mut self.workers) {
            let _ = w.join();
        }
    }
}

/// A device of the backend that is being opened, or whose opening failed.
pub enum Opening {
    Running(Running),
    /// Why it could not be opened, for its next use to report (a use
    /// after that tries again, as after a failed synchronous open).
    Failed(Fault),
}

/// The opening thread, joined when dropped.
pub struct Running {
    thread: Option<JoinHandle<Result<Opened, Fault>>>,
    /// Kernels of inputs compiled since it started: compiled ahead once
    /// it is joined.
    pub later: Vec<Rc<DeviceCode>>,
}

impl Opening {
    /// Start opening adapter `adapter` of `instance` on a thread, then
    /// compiling `kernels` for it under `options`. None if no thread
    /// could be started (the device then opens at its first use).
    pub fn start(
        instance: &Instance,
        adapter: usize,
        kernels: &[Rc<DeviceCode>],
        options: &KernelOptions,
    ) -> Option<Opening> {
        let ahead: Vec<Ahead> = kernels
            .iter()
            .filter_map(|code| {
                let kernel = code.kernel.as_ref().ok()?;
                Some(Ahead {
                    key: *code.fingerprint.get_or_init(|| kernel.fingerprint()),
                    kernel: kernel.clone(),
                    total: code.total_hint,
                })
            })
            .collect();
        let instance = instance.clone();
        let options = options.clone();
        let thread = std::thread::Builder::new()
            .name("accl-open-device".into())
            .spawn(move || open(&instance, adapter, ahead, &options))
            .ok()?;
        Some(Opening::Running(Running {
            thread: Some(thread),
            later: Vec::new(),
        }))
    }

    /// Wait for the opening thread: the device's state, with its kernels
    /// compiling, and how long the opening took on the thread. `options`
    /// are those the kernels of later inputs compile under.
    pub fn join(self, options: &KernelOptions) -> Result<(DevState, Duration), Fault> {
        match self {
            Opening::Running(mut r) => r.finish(options),
            Opening::Failed(f) => Err(f),
        }
    }
}

impl Running {
    fn finish(&mut self, options: &KernelOptions) -> Result<(DevState, Duration), Fault> {
        let Some(thread) = self.thread.take() else {
            return Err(Fault::Failed("the device was opened already".into()));
        };
        let mut opened = thread.join().unwrap_or_else(|_| {
            Err(Fault::Failed(
                "the thread opening the device panicked".into(),
            ))
        })?;
        let mut d = DevState::opened(opened.device.clone())?;
        d.take_prefetched((
            std::mem::take(&mut opened.waiting),
            std::mem::take(&mut opened.workers),
        ));
        d.prefetch(&std::mem::take(&mut self.later), options);
        Ok((d, opened.took))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.later.clear();
            // The device it opened goes as an opened device goes: the
            // kernels it compiles are waited for and join the pipeline
            // cache.
            let _ = self.finish(&KernelOptions::default());
        }
    }
}

/// The opening thread's work.
fn open(
    instance: &Instance,
    adapter: usize,
    kernels: Vec<Ahead>,
    options: &KernelOptions,
) -> Result<Opened, Fault> {
    let t0 = std::time::Instant::now();
    let device = Device::new(instance, adapter).map_err(Fault::from)?;
    device::load_cache(&device);
    let took = t0.elapsed();
    let traits = Traits::of(&device);
    let spec = traits.spec(&device, options);
    let mut seen = std::collections::HashSet::new();
    let jobs = kernels
        .iter()
        .filter_map(|k| {
            let spec = prefetch::launch_spec(&k.kernel, spec, traits.texel_reads);
            seen.insert((k.key, spec))
                .then(|| prefetch::job(k.key, &k.kernel, k.total, spec))
        })
        .collect();
    let (waiting, workers) = prefetch::spawn(&device, jobs);
    Ok(Opened {
        device,
        waiting,
        workers,
        took,
    })
}

#[cfg(test)]
#[path = "opener_tests.rs"]
mod tests;
