//! Devices opened on a thread of their own while the host works.
//!
//! Opening a Vulkan device costs about 0.1 s on an NVIDIA H100 (the
//! driver's own start, as a CUDA context's; 0.7 s when it made all 34
//! queues, see `vk_runtime`'s `families_to_open`), and most programs do
//! host work (reading or generating their input) before their first
//! construct. So when a checked program will use the current device, that
//! device starts opening on a thread ([`Opening::start`]) before the
//! program's host code is compiled. The compile hands the thread the
//! program's kernels ([`Running::compile`]); once the device is open (and
//! its pipeline cache loaded, as a synchronous open does) the thread
//! starts compiling those it has, sends what it made and ends. The
//! device's first real use takes that ([`Opening::join`]: no wait if the
//! thread is done, so no wake-up of it either) and reports its error, if
//! any, as a synchronous open would have; kernels handed over after the
//! thread was done compile from there.
//!
//! Ownership: only a `vk_runtime::Device` (an `Arc` handle, `Send`) and
//! the kernel IR cross threads; the `DevState` around the device, with its
//! `Rc`s and its queues, is made on the program's thread at the join. The
//! thread never outlives its backend: dropping a [`Running`] joins it, and
//! the device it opened goes the way an opened device goes (its kernels
//! compiled ahead are waited for, its workers joined, its pipeline cache
//! saved).

use super::device::{self, DevState, KernelOptions, Traits};
use super::prefetch::{self, PrefetchJob, Waiting};
use crate::interp::machine::DeviceCode;
use crate::interp::present::Fault;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, Sender};
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
    /// Of that, loading the pipeline cache.
    cache: Duration,
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
    thread: Option<JoinHandle<()>>,
    /// What the thread made, sent as soon as the device is open (so that
    /// a join finds it without waking the thread).
    opened: Receiver<Result<Opened, Fault>>,
    /// What it sent, once seen ([`Running::ready`]).
    made: Option<Result<Opened, Fault>>,
    /// Where the kernels of compiled programs go to the thread, which
    /// compiles those it finds there once the device is open.
    kernels: Sender<Vec<Ahead>>,
    /// Every kernel sent: those the thread did not take are compiled at
    /// the join.
    sent: Vec<Rc<DeviceCode>>,
}

impl Opening {
    /// Start opening adapter `adapter` of `instance` on a thread, which
    /// then compiles the kernels it was sent ([`Running::compile`]) under
    /// `options`. None if no thread could be started (the device then
    /// opens at its first use).
    pub fn start(
        instance: &Instance,
        adapter: usize,
        options: &KernelOptions,
        one_queue: bool,
    ) -> Option<Opening> {
        let instance = instance.clone();
        let options = options.clone();
        let (kernels, rx) = std::sync::mpsc::channel();
        let (tx, opened) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("accl-open-device".into())
            .spawn(move || {
                // The receiver goes only with the backend, which joins
                // this thread first.
                let _ = tx.send(open(&instance, adapter, one_queue, &rx, &options));
            })
            .ok()?;
        Some(Opening::Running(Running {
            thread: Some(thread),
            opened,
            made: None,
            kernels,
            sent: Vec::new(),
        }))
    }

    /// Wait for the device to be open: its state, with its kernels
    /// compiling, and how long the opening took on the thread. `options`:
    /// what kernels the thread did not take compile under.
    pub fn join(self, options: &KernelOptions) -> Result<(DevState, Duration), Fault> {
        match self {
            Opening::Running(mut r) => r.finish(options),
            Opening::Failed(f) => Err(f),
        }
    }
}

impl Running {
    /// Whether the thread is done opening (so a join would not wait).
    pub fn ready(&mut self) -> bool {
        if self.made.is_none() {
            self.made = self.opened.try_recv().ok();
        }
        self.made.is_some()
    }

    /// Compile `kernels` (a compiled program's) on the device once it is
    /// open.
    pub fn compile(&mut self, kernels: &[Rc<DeviceCode>]) {
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
        if !ahead.is_empty() {
            self.sent.extend(kernels.iter().cloned());
            // A thread that is done is gone: the join compiles these.
            let _ = self.kernels.send(ahead);
        }
    }

    fn finish(&mut self, options: &KernelOptions) -> Result<(DevState, Duration), Fault> {
        let Some(thread) = self.thread.take() else {
            return Err(Fault::Failed("the device was opened already".into()));
        };
        let made = match self.made.take() {
            Some(m) => m,
            None => self.opened.recv().unwrap_or_else(|_| {
                Err(Fault::Failed(
                    "the thread opening the device panicked".into(),
                ))
            }),
        };
        // It has sent: it ends at once, if it has not.
        let _ = thread.join();
        let mut opened = made?;
        let mut d = DevState::opened(opened.device.clone())?;
        d.cache_load = opened.cache;
        d.take_prefetched((
            std::mem::take(&mut opened.waiting),
            std::mem::take(&mut opened.workers),
        ));
        // (Those the thread took are on their way: `prefetch` skips them.)
        d.prefetch(&std::mem::take(&mut self.sent), options);
        Ok((d, opened.took))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.thread.is_some() {
            // The device it opened goes as an opened device goes: the
            // kernels it compiles are waited for and join the pipeline
            // cache.
            self.sent.clear();
            let _ = self.finish(&KernelOptions::default());
        }
    }
}

/// The opening thread's work: open (`one_queue`: with one compute queue),
/// then start compiling the kernels `kernels` brought meanwhile.
fn open(
    instance: &Instance,
    adapter: usize,
    one_queue: bool,
    kernels: &Receiver<Vec<Ahead>>,
    options: &KernelOptions,
) -> Result<Opened, Fault> {
    let t0 = std::time::Instant::now();
    let device = if one_queue {
        Device::for_sync_work(instance, adapter)
    } else {
        Device::new(instance, adapter)
    }
    .map_err(Fault::from)?;
    let cache = device::load_cache(&device);
    let took = t0.elapsed();
    let traits = Traits::of(&device);
    let spec = traits.spec(&device, options);
    let mut seen = std::collections::HashSet::new();
    let jobs = kernels
        .try_iter()
        .flatten()
        .filter_map(|k| {
            let spec = prefetch::launch_spec(&k.kernel, spec, traits.texel_reads);
            seen.insert((k.key, spec)).then_some(PrefetchJob {
                key: k.key,
                kernel: k.kernel,
                spec,
                total: k.total,
            })
        })
        .collect();
    let (waiting, workers) = prefetch::spawn(&device, jobs);
    Ok(Opened {
        device,
        waiting,
        workers,
        took,
        cache,
    })
}

#[cfg(test)]
#[path = "opener_tests.rs"]
mod tests;
