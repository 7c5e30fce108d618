//! One opened accl device: the `VkDevice`, its accl queues, staging
//! buffers, compiled modules and pipelines, and the on-disk
//! `VkPipelineCache`.
//!
//! Queues: the synchronous queue and one [`Queue`] per async queue number,
//! created on first use and spread round robin over the device's compute
//! queues, so the first async queues of a GPU with several compute queues
//! really run concurrently (on lavapipe they all share its one `VkQueue`).
//! Work on an async queue is recorded and submitted in batches: when the
//! open batch is large, at a join, at a host wait. The queue model as users
//! see it is in `docs/language.md`, "Async queues".
//!
//! Transfers: large ones go straight between device memory and the host
//! array, whose pages are imported into Vulkan once (`DevState::import`);
//! the others are staged, and a staged device-to-host copy of an async queue
//! lands in a staging buffer of its own and is copied into the host array
//! when the host observes the queue's timeline value ([`DevState::observe`]).
//! On a GPU with copy engines, an async queue's direct copies to the host
//! run on a companion queue there (`CopyEngines`), ordered by semaphores:
//! after the queue's work, before its later operations on the same rows
//! ([`DevState::order_after_copies`]), and before a host wait or a join.

pub use super::prefetch::PrefetchJob;
use crate::interp::present::Fault;
use crate::interp::queue::QueueId;
use crate::interp::WaitLimits;
use compiler::Spec;
use rustc_hash::FxHashMap;
pub(crate) use spec::exact_f32;
pub use spec::{KernelOptions, Traits};
use std::cell::Cell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use stdlib::Array;
use vk_runtime::{
    Binding, Buffer, ComputePipeline, Device, HostBuffer, Instance, Queue, StagingBuffer,
    StagingKind,
};

/// Operations an async queue records before its batch is submitted without
/// waiting for a join or a wait: large enough to amortise a submission over
/// many tiny kernels, small enough that a long stream of work starts early.
const BATCH_OPS: u32 = 64;

/// An idle async queue submits its new work at once unless it was looked
/// at this recently (`DevState::settle`).
const IDLE_SUBMIT_GAP: std::time::Duration = std::time::Duration::from_micros(500);

/// A device-to-host copy of an async queue, applied to the host array when
/// the queue's timeline reaches `value`.
pub struct Completion {
    pub queue: QueueId,
    pub value: u64,
    staging: StagingBuffer,
    array: Array,
    /// Where each staged piece goes in the host array.
    pieces: Vec<Piece>,
}

/// The largest staging buffer kept (bigger transfers go in chunks).
const STAGING_MAX: u64 = 64 << 20;

/// The largest staging buffer an async copy makes: larger copies go in
/// pieces, each with a buffer of its own. Every Vulkan device allocates
/// this much at once (`maxMemoryAllocationSize` is at least 1 GiB); some
/// refuse more.
const ASYNC_STAGING_MAX: usize = 1 << 30;

/// Transfers of at least this many bytes go straight between device memory
/// and the host array, imported into Vulkan, where the device can import
/// host memory: no staging buffer, no host copy. (Smaller ones cost less
/// through staging than an import does the first time.)
const DIRECT_MIN: usize = 256 << 10;

/// Host arrays larger than this many bytes are imported in pieces of it, so
/// that copies of arrays past the device's `maxMemoryAllocationSize` (4 GiB
/// on NVIDIA) go straight too. Every Vulkan device imports this much at
/// once (the limit is at least 1 GiB).
const IMPORT_PIECE: usize = 1 << 30;

/// The key of an import of a whole array.
const WHOLE: usize = usize::MAX;

/// Bytes of spare async download staging kept per device.
const SPARE_MAX: u64 = 256 << 20;

/// Pipelines by (kernel fingerprint, specialisation, work-group size).
pub type PipelineKey = (u64, Spec, u32);

/// What a launch needs of a kernel compiled for one specialisation and
/// work-group size, found with one lookup at the launches after the first.
/// (A stream of tiny launches spent 4% of its host time hashing the
/// specialisation for three separate lookups, on an H100's host.)
#[derive(Clone)]
pub struct Prepared {
    pub words: Arc<Vec<u32>>,
    pub plan: Rc<compiler::Plan>,
    pub pipeline: ComputePipeline,
}

/// A companion copy of `queue` of rows `lo..hi` of array `array`, done
/// when `copies[copy]` reaches `value`.
struct Outstanding {
    queue: QueueId,
    array: u64,
    lo: usize,
    hi: usize,
    copy: usize,
    value: u64,
}

/// Where the direct copies of an async queue to the host run.
///
/// In the queue's own stream, a block's copy back delays whatever comes
/// next on the same Vulkan queue, often another accl queue's kernel (a GPU
/// runs each queue's work in order, and accl queues share Vulkan queues).
/// On a copy engine (a transfer-only queue family) the copy runs beside
/// the kernels instead: the companion queue waits on the device for the
/// accl queue's work so far and copies; the accl queue's later operations
/// on the same rows wait for the copy ([`DevState::order_after_copies`]),
/// and host waits and joins cover it, so the accl queue's order is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CopyEngines {
    /// Copies stay on their queue.
    Off,
    /// Companions on the transfer-only queues.
    Transfer,
    /// Companions on the compute queues, for a device without copy
    /// engines: a testing aid (`ACCL_COPY_QUEUES=1`) that runs the
    /// companion path on lavapipe.
    Forced,
}

/// What a prefetch worker made of one job.
pub(super) struct Prefetched {
    /// When the worker started and finished this job.
    pub(super) took: (std::time::Instant, std::time::Instant),
    pub(super) words: Result<Arc<Vec<u32>>, lang::Diag>,
    /// The pipeline for the job's work-group size.
    pub(super) pipeline: Option<(u32, Result<ComputePipeline, vk_runtime::VkError>)>,
}

pub struct DevState {
    // Field order is drop order: work and buffers before the device.
    /// The synchronous queue first, then async queues in order of first use.
    pub queues: Vec<(QueueId, Queue)>,
    /// Copy queues, each the companion of one async queue: where that
    /// queue's direct copies to the host go (`CopyEngines`).
    pub copies: Vec<(QueueId, Queue)>,
    copy_engines: CopyEngines,
    /// Whether synchronous direct copies run on the copy engines too
    /// (`ACCL_SYNC_COPY_ENGINE=0`: on the synchronous queue itself). On an
    /// H100 a 256 MiB copy to the host ran at 34 GB/s on the compute queue
    /// and 50 GB/s on a copy engine; the other directions and sizes alike.
    sync_on_engines: bool,
    /// Companion copies not yet seen complete, with the host array rows
    /// they copy: later operations on those rows wait for them
    /// ([`DevState::order_after_copies`]), and a host wait or a join of
    /// their queue waits for the last one.
    outstanding: Vec<Outstanding>,
    pub completions: Vec<Completion>,
    /// Host arrays imported for direct copies, by array id and piece
    /// ([`WHOLE`] for a whole array), each with a handle that keeps its
    /// (never moving) elements alive while the import exists. After
    /// `queues`: no batch records them when they go.
    imports: HashMap<(u64, usize), (HostBuffer, Array)>,
    /// Copy large transfers straight to and from host arrays.
    pub direct: bool,
    /// Host arrays larger than this are imported in pieces of this size
    /// ([`IMPORT_PIECE`]; `ACCL_IMPORT_PIECE=BYTES`, a power of two of at
    /// least 64 KiB, for testing the pieces on small arrays).
    import_piece: usize,
    /// How long a host wait polls before it blocks in the driver (`spin_time`).
    spin: std::time::Duration,
    /// The synchronous queue's second companion, by index in `copies`
    /// (`split`), once made.
    split_copy: Option<usize>,
    /// How kernels are specialised for the device.
    pub traits: Traits,
    /// Each kernel's `compiler::Spec::texel_candidates`, by its key.
    pub texel_candidates: FxHashMap<u64, u64>,
    /// Whether large synchronous copies are split over two copy engines
    /// (`ACCL_SPLIT_COPIES=0`: not, a knob for measuring).
    split_copies: bool,
    /// The fastest rate (bytes/s) a large synchronous direct copy was seen
    /// to run at (0: none yet).
    copy_rate: f64,
    /// Timestamps on for every queue.
    pub profiling: bool,
    /// Record submissions for a trace.
    pub tracing: bool,
    /// The last calibration of the device clock ([`DevState::calibrate`]).
    pub calibration: Option<(u64, std::time::Instant)>,
    /// Submissions not yet taken by the trace: queue, value, when.
    pub submits: Vec<(QueueId, u64, std::time::Instant)>,
    /// Kernel compiles not yet taken by the trace: kernel, whether ahead
    /// of the launch, start and end.
    pub compiles: Vec<(String, bool, std::time::Instant, std::time::Instant)>,
    up: Option<StagingBuffer>,
    down: Option<StagingBuffer>,
    /// Download staging buffers of applied async copies, for the next ones:
    /// allocating host-visible memory costs a millisecond or more per
    /// buffer on some drivers, more than the copy itself.
    spare: Vec<StagingBuffer>,
    /// The largest staging buffer of one async copy ([`ASYNC_STAGING_MAX`];
    /// smaller in tests, so that several pieces are cheap to make).
    async_chunk: usize,
    /// Pipelines built ahead of their kernel's first launch, which claims
    /// them.
    ahead: FxHashMap<PipelineKey, ComputePipeline>,
    /// Module, plan and pipeline of every launched kernel, together, for
    /// the launches after its first.
    prepared: FxHashMap<PipelineKey, Prepared>,
    /// Each launched kernel's plan, made once per (fingerprint,
    /// specialisation) rather than on every launch.
    plans: FxHashMap<(u64, Spec), Rc<compiler::Plan>>,
    /// Compiled modules by (kernel fingerprint, specialisation).
    pub modules: compiler::Cache,
    /// The last module compiled or launched (for `:spirv`).
    pub last_module: Option<Arc<Vec<u32>>>,
    cache_file: Option<PathBuf>,
    cache_dirty: bool,
    /// Time spent in SPIR-V generation and pipeline creation, not yet taken.
    pub jit_time: std::time::Duration,
    /// What may stop a host wait early (the running input's limits).
    pub limits: WaitLimits,
    /// Why the device was lost, once it was: every later operation fails.
    pub lost: Option<String>,
    /// Bytes of accl arrays on the device now (shared with their buffers,
    /// which give their bytes back when dropped).
    pub used: Rc<Cell<u64>>,
    /// The fault buffer every kernel with checks or a budget binds (made
    /// on first use; host-visible, so reading it needs no copy).
    fault_buf: Option<Buffer>,
    /// Host-visible buffers where reduction kernels write their per-group
    /// partials, for reuse once the host has read them.
    partials: Rc<std::cell::RefCell<Vec<Buffer>>>,
    /// The strided-copy kernel and its packed buffer, made on first use
    /// (`device/strided.rs`).
    pub(super) strided: Option<(ComputePipeline, Option<Buffer>)>,
    /// Kernels being compiled ahead of their first launch, by (fingerprint,
    /// specialisation): the launch waits for its own ([`DevState::module`]).
    pub(super) prefetching: FxHashMap<(u64, Spec), std::sync::mpsc::Receiver<Prefetched>>,
    /// The prefetch worker threads not yet joined: none may outlive the
    /// device state (a worker inside the driver while the device or the
    /// process goes away can crash it).
    pub(super) workers: Vec<std::thread::JoinHandle<()>>,
    /// When each async queue was last looked at for being idle.
    idle_submits: Vec<(QueueId, std::time::Instant)>,
    /// Synchronous kernels complete lazily (`device/completion.rs`);
    /// `ACCL_LAZY_SYNC=0` makes every one wait at its construct.
    pub lazy_sync: bool,
    /// `ACCL_BY_ADDRESS=all`: kernels reach every array through its device
    /// address, not only those larger than one binding (for testing that
    /// path on small arrays, and measuring it).
    pub by_address_all: bool,
    /// The synchronous queue holds kernels the host has not waited for.
    pub(super) sync_open: bool,
    pub device: Device,
    /// How long loading its pipeline cache from disk took.
    pub cache_load: std::time::Duration,
}

/// How long a host wait blocks before it looks at the limits again.
const WAIT_SLICE: std::time::Duration = std::time::Duration::from_millis(5);

/// How long host waits poll a device before blocking: 2 ms on GPUs (as
/// CUDA spins by default: a blocking wait's wake-up costs more than the
/// short waits of most constructs), none on CPU devices, whose work runs
/// on the cores a spinning host thread would take. `ACCL_SPIN_US=N`
/// overrides (a tuning knob; 0 always blocks).
fn spin_time(info: &vk_runtime::AdapterInfo) -> std::time::Duration {
    let us = std::env::var("ACCL_SPIN_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(match info.device_type {
            vk_runtime::DeviceType::Cpu => 0,
            _ => 2000,
        });
    std::time::Duration::from_micros(us)
}

/// Where the pipeline cache of an adapter is kept between runs:
/// `$ACCL_CACHE_DIR`, else `$XDG_CACHE_HOME/accl`, else `~/.cache/accl`;
/// `ACCL_CACHE_DIR=off` disables it.
fn cache_file(info: &vk_runtime::AdapterInfo) -> Option<PathBuf> {
    let dir = match std::env::var_os("ACCL_CACHE_DIR") {
        Some(d) if d == "off" => return None,
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_CACHE_HOME") {
            Some(x) => PathBuf::from(x).join("accl"),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/accl"),
        },
    };
    Some(dir.join(format!(
        "pipelines-{:04x}-{:04x}-{:x}.bin",
        info.vendor_id, info.device_id, info.driver_version
    )))
}

/// Merge the pipeline cache kept for the device's adapter into its cache,
/// before its first pipeline; how long that took.
pub fn load_cache(device: &Device) -> std::time::Duration {
    let t0 = std::time::Instant::now();
    if let Some(f) = cache_file(device.info()) {
        // A missing or stale cache only costs compile time.
        let _ = device.load_pipeline_cache(f);
    }
    t0.elapsed()
}

impl DevState {
    /// The specialisation of kernels for this device under the backend's
    /// kernel options (index width set per launch).
    pub fn spec(&self, o: &KernelOptions) -> Spec {
        self.traits.spec(&self.device, o)
    }

    pub fn open(instance: &Instance, adapter: usize) -> Result<DevState, Fault> {
        DevState::with_device(Device::new(instance, adapter).map_err(Fault::from)?)
    }

    /// The state of a device opened already (one the embedder made).
    pub fn with_device(device: Device) -> Result<DevState, Fault> {
        let cache = load_cache(&device);
        let mut d = DevState::opened(device)?;
        d.cache_load = cache;
        Ok(d)
    }

    /// Where opening it went.
    pub fn open_parts(&self) -> crate::interp::phases::OpenParts {
        let t = self.device.open_times();
        crate::interp::phases::OpenParts {
            adapters: t.adapters,
            create: t.create,
            setup: t.setup,
            cache: self.cache_load,
            queues: self.device.vk_queues().len(),
        }
    }

    /// The state of `device`, whose pipeline cache is loaded ([`load_cache`]).
    pub fn opened(device: Device) -> Result<DevState, Fault> {
        let queue = Queue::new(&device, 0).map_err(Fault::from)?;
        let queues = vec![(QueueId::Sync, queue)];
        let copy_engines = match std::env::var("ACCL_COPY_QUEUES").as_deref() {
            Ok("0") => CopyEngines::Off,
            Ok("1") if device.transfer_queues().is_empty() => CopyEngines::Forced,
            _ if device.transfer_queues().is_empty() => CopyEngines::Off,
            _ => CopyEngines::Transfer,
        };
        let cache_file = cache_file(device.info());
        Ok(DevState {
            queues,
            copies: Vec::new(),
            copy_engines,
            sync_on_engines: std::env::var("ACCL_SYNC_COPY_ENGINE").as_deref() != Ok("0"),
            outstanding: Vec::new(),
            completions: Vec::new(),
            imports: HashMap::new(),
            import_piece: std::env::var("ACCL_IMPORT_PIECE")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|p| p.is_power_of_two() && *p >= 64 << 10)
                .unwrap_or(IMPORT_PIECE),
            spin: spin_time(device.info()),
            split_copy: None,
            traits: Traits::of(&device),
            texel_candidates: FxHashMap::default(),
            split_copies: std::env::var_os("ACCL_SPLIT_COPIES").is_none_or(|v| v != "0"),
            copy_rate: 0.0,
            // A knob for measuring, and a way around a driver whose imports
            // misbehave.
            direct: std::env::var_os("ACCL_DIRECT_COPY").is_none_or(|v| v != "0"),
            profiling: false,
            tracing: false,
            calibration: None,
            submits: Vec::new(),
            compiles: Vec::new(),
            up: None,
            down: None,
            spare: Vec::new(),
            async_chunk: ASYNC_STAGING_MAX,
            ahead: FxHashMap::default(),
            plans: FxHashMap::default(),
            modules: compiler::Cache::new(),
            last_module: None,
            prepared: FxHashMap::default(),
            cache_file,
            cache_dirty: false,
            jit_time: std::time::Duration::ZERO,
            limits: WaitLimits::default(),
            lost: None,
            used: Rc::new(Cell::new(0)),
            fault_buf: None,
            partials: Rc::default(),
            strided: None,
            idle_submits: Vec::new(),
            lazy_sync: std::env::var_os("ACCL_LAZY_SYNC").is_none_or(|v| v != "0"),
            by_address_all: std::env::var_os("ACCL_BY_ADDRESS").is_some_and(|v| v == "all"),
            sync_open: false,
            prefetching: FxHashMap::default(),
            workers: Vec::new(),
            device,
            cache_load: std::time::Duration::ZERO,
        })
    }

    /// The accl queue `id`, created on first use.
    pub fn queue(&mut self, id: QueueId) -> Result<&mut Queue, Fault> {
        if let Some(m) = &self.lost {
            return Err(Fault::Lost(m.clone()));
        }
        let i = match self.queues.iter().position(|(q, _)| *q == id) {
            Some(i) => i,
            None => {
                let mut q = Queue::new(&self.device, self.queues.len()).map_err(Fault::from)?;
                if self.profiling {
                    q.enable_timestamps(true).map_err(Fault::from)?;
                }
                self.queues.push((id, q));
                self.queues.len() - 1
            }
        };
        Ok(&mut self.queues[i].1)
    }

    /// The companion copy queue of async queue `id` (made on first use,
    /// round robin over the copy engines), by index in `copies`.
    fn copy_queue(&mut self, id: QueueId) -> Result<usize, Fault> {
        if let Some(i) = self.copies.iter().position(|(q, _)| *q == id) {
            return Ok(i);
        }
        let n = self.copies.len();
        let mut q = match self.copy_engines {
            CopyEngines::Transfer => {
                // The first copy-engine family only: NVIDIA lists several,
                // and spreading companions over all of them measured slower
                // on an H200 (16 blocks on one device: 4.26 against 3.43 ms).
                let mut t = self.device.transfer_queues();
                let first = t[0].family;
                t.retain(|q| q.family == first);
                Queue::on_vk_queue(&self.device, t[n % t.len()])
            }
            _ => Queue::new(&self.device, self.queues.len() + n),
        }
        .map_err(Fault::from)?;
        if self.profiling {
            q.enable_timestamps(true).map_err(Fault::from)?;
        }
        self.copies.push((id, q));
        Ok(n)
    }

    /// The timeline value that covers the last operation recorded for `id`:
    /// its open batch's, or the last submitted one when nothing is open
    /// (the operation was submitted, or went to the queue's companion,
    /// which follows the submitted work).
    pub fn recorded_value(&mut self, id: QueueId) -> Result<u64, Fault> {
        let q = self.queue(id)?;
        Ok(q.submitted_value() + u64::from(q.pending_ops() > 0))
    }

    /// The timeline value the open batch of `id` will signal.
    pub fn next_value(&mut self, id: QueueId) -> Result<u64, Fault> {
        Ok(self.queue(id)?.submitted_value() + 1)
    }

    /// Before queue `id` records an operation with these accesses: wait on
    /// the device for its companion copies of rows that the operation
    /// writes on the device (the copy reads them) or reads or writes on the
    /// host side (the copy writes them there). Other operations need not
    /// wait, so a queue's next block computes while its last one is copied.
    /// (Other queues are ordered by joins, which cover the copies, and the
    /// race tracker refuses what is not.)
    pub fn order_after_copies(
        &mut self,
        id: QueueId,
        accesses: &[crate::interp::race::Access],
    ) -> Result<(), Fault> {
        use crate::interp::race::Mode;
        let waits: Vec<(usize, u64)> = self
            .outstanding
            .iter()
            .filter(|o| {
                o.queue == id
                    && accesses.iter().any(|a| {
                        a.array == o.array
                            && a.lo < o.hi
                            && o.lo < a.hi
                            && (a.device == Mode::Write || a.host != Mode::None)
                    })
            })
            .map(|o| (o.copy, o.value))
            .collect();
        if waits.is_empty() {
            return Ok(());
        }
        self.queue(id)?;
        let qi = self.queues.iter().position(|(q, _)| *q == id);
        let q = &mut self.queues[qi.expect("made above")].1;
        for (ci, v) in waits {
            q.wait_on(&self.copies[ci].1, v).map_err(Fault::from)?;
        }
        Ok(())
    }

    /// The last companion copy of `id` not seen complete: (index in
    /// `copies`, its value).
    fn last_copy(&self, id: QueueId) -> Option<(usize, u64)> {
        self.outstanding
            .iter()
            .filter(|o| o.queue == id)
            .map(|o| (o.copy, o.value))
            .max_by_key(|&(_, v)| v)
    }

    /// Submit what `id` has recorded and block until it is done; then apply
    /// the completions it reached.
    pub fn wait_queue(&mut self, id: QueueId) -> Result<(), Fault> {
        // A join's waits are `id`'s work even with nothing recorded after
        // them (`wait async(0); wait(0);` lands queue 1's copies).
        let v = self.submit_with(id, Queue::submit)?;
        self.submit_held()?;
        // Copy each finished block into its host array while the device
        // works on the next ones, rather than all of them at the end.
        while let Some(next) = self
            .completions
            .iter()
            .filter(|c| c.queue == id && c.value <= v)
            .map(|c| c.value)
            .min()
        {
            self.block_on(id, next)?;
            self.observe()?;
        }
        self.block_on(id, v)?;
        if let Some((ci, cv)) = self.last_copy(id) {
            self.block_on_at(true, ci, cv)?;
            self.outstanding.retain(|o| o.queue != id);
        }
        if id == QueueId::Sync {
            self.sync_open = false;
        }
        self.observe().map(|_| ())
    }

    /// Before a copy to the device reads host array `host`: staged copies
    /// to the host still to land in it (an `async` copyout or `update
    /// self` recorded earlier, on this copy's queue or on one joined into
    /// it) land first, by waiting for their queues. The copy would
    /// otherwise read what the array held before them, although it comes
    /// after them in its queue's order.
    pub(super) fn land_copies_into(&mut self, host: &Array) -> Result<(), Fault> {
        let mut queues: Vec<QueueId> = self
            .completions
            .iter()
            .filter(|c| c.array.same(host))
            .map(|c| c.queue)
            .collect();
        queues.sort();
        queues.dedup();
        for id in queues {
            self.wait_queue(id)?;
        }
        Ok(())
    }

    /// Block until queue `id` reaches `value`: in slices when the input
    /// has limits, so a time limit or the progress callback can stop the
    /// wait (the work goes on; a later wait finds it done).
    fn block_on(&mut self, id: QueueId, value: u64) -> Result<(), Fault> {
        self.queue(id)?;
        let i = self.queues.iter().position(|(q, _)| *q == id);
        self.block_on_at(false, i.expect("made above"), value)
    }

    /// [`DevState::block_on`] for `queues[i]`, or `copies[i]` if `copy`.
    fn block_on_at(&mut self, copy: bool, i: usize, value: u64) -> Result<(), Fault> {
        let slice = if self.limits.is_set() {
            WAIT_SLICE
        } else {
            std::time::Duration::MAX
        };
        // Poll first: a driver's blocking wait on a GPU wakes the thread
        // long after the work is done (about 0.15 ms per wait measured on
        // an H200, which doubled the time of sixteen synchronous blocks).
        let start = std::time::Instant::now();
        loop {
            let polling = start.elapsed() < self.spin;
            let q = match copy {
                false => &mut self.queues[i].1,
                true => &mut self.copies[i].1,
            };
            let timeout = if polling {
                std::time::Duration::ZERO
            } else {
                slice
            };
            match q.host_wait(value, timeout) {
                Ok(true) => return Ok(()),
                Ok(false) if polling => std::hint::spin_loop(),
                Ok(false) => self.limits.check().map_err(Fault::Stopped)?,
                Err(e) => return Err(self.fault(e)),
            }
        }
    }

    /// The fault buffer, made (zeroed) on first use.
    pub fn fault_buffer(&mut self) -> Result<Buffer, Fault> {
        if self.fault_buf.is_none() {
            let b = Buffer::new_mapped(
                &self.device,
                4 * compiler::abi::fault::WORDS as u64,
                "accl faults",
            )
            .map_err(Fault::from)?;
            b.write_mapped(&[0; 4 * compiler::abi::fault::WORDS]);
            self.fault_buf = Some(b);
        }
        Ok(self.fault_buf.clone().expect("made above"))
    }

    /// A partials buffer of at least `bytes` for a reduction kernel, from
    /// the pool when one fits; its reader gives it back
    /// ([`DevState::partials_pool`]) once read.
    pub fn partials(&mut self, bytes: u64) -> Result<Buffer, Fault> {
        let mut pool = self.partials.borrow_mut();
        if let Some(i) = pool.iter().position(|b| b.size() >= bytes) {
            return Ok(pool.swap_remove(i));
        }
        drop(pool);
        let size = bytes.max(4096).next_power_of_two();
        Buffer::new_mapped(&self.device, size, "accl partials").map_err(Fault::from)
    }

    /// Where read partials buffers go back to.
    pub fn partials_pool(&self) -> Rc<std::cell::RefCell<Vec<Buffer>>> {
        self.partials.clone()
    }

    /// The fault a finished kernel recorded, if any; the record is cleared.
    /// (Called after a wait. A kernel of another queue still running may
    /// fault after the clear; its record then waits for the next look.)
    fn take_fault(&mut self) -> Option<compiler::abi::fault::Record> {
        let b = self.fault_buf.as_ref()?;
        let mut bytes = [0u8; 4 * compiler::abi::fault::WORDS];
        b.read_mapped(&mut bytes);
        let mut w = [0u32; compiler::abi::fault::WORDS];
        for (i, c) in bytes.chunks_exact(4).enumerate() {
            w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let rec = compiler::abi::fault::Record::decode(&w)?;
        b.write_mapped(&[0; 4 * compiler::abi::fault::WORDS]);
        Some(rec)
    }

    /// A runtime error as a fault, remembering a lost device.
    fn fault(&mut self, e: vk_runtime::VkError) -> Fault {
        let f = Fault::from(e);
        if let Fault::Lost(m) = &f {
            self.lost = Some(m.clone());
        }
        f
    }

    /// Submit and wait for every queue of the device.
    pub fn wait_all(&mut self) -> Result<(), Fault> {
        let ids: Vec<QueueId> = self.queues.iter().map(|(q, _)| *q).collect();
        for id in ids {
            self.wait_queue(id)?;
        }
        Ok(())
    }

    /// Retire finished batches and apply the completions they reached;
    /// returns every queue's completed timeline value.
    pub fn observe(&mut self) -> Result<Vec<(QueueId, u64)>, Fault> {
        let mut done = Vec::with_capacity(self.queues.len());
        if let Some(m) = &self.lost {
            return Err(Fault::Lost(m.clone()));
        }
        let mut lost = None;
        for (id, q) in &mut self.queues {
            match q.poll() {
                Ok(v) => done.push((*id, v)),
                Err(e) => {
                    lost = Some(e);
                    break;
                }
            }
        }
        // Companions: retire their batches (letting go of imports) and
        // forget the copies that are done.
        for (i, (_, q)) in self.copies.iter_mut().enumerate() {
            if lost.is_some() {
                break;
            }
            match q.poll() {
                Ok(v) => self.outstanding.retain(|o| o.copy != i || o.value > v),
                Err(e) => lost = Some(e),
            }
        }
        if let Some(e) = lost {
            // A lost device applies none of its pending copies: host arrays
            // keep what they held.
            self.completions.clear();
            return Err(self.fault(e));
        }
        if let Some(rec) = self.take_fault() {
            // Copies that completed after a faulting kernel carry its
            // partial results: none of them reaches a host array.
            let reached =
                |c: &Completion| done.iter().any(|&(id, v)| id == c.queue && c.value <= v);
            self.completions.retain(|c| !reached(c));
            return Err(Fault::Kernel(super::checks::diagnostic(&rec)));
        }
        // Imports of arrays the program has dropped (and no batch records).
        self.imports
            .retain(|_, (b, a)| a.handles() > 1 || b.in_use());
        if self.completions.is_empty() {
            return Ok(done);
        }
        let reached = |c: &Completion| done.iter().any(|&(id, v)| id == c.queue && c.value <= v);
        // In recording order, so later copies of the same rows win.
        let (ready, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.completions)
            .into_iter()
            .partition(reached);
        self.completions = rest;
        for c in ready {
            scatter(&c.array, &c.pieces, c.staging.as_slice());
            self.spare_staging(c.staging);
        }
        Ok(done)
    }

    /// `wait(from) async(into)`: `into`'s next submission waits on the
    /// device for what `from` has recorded so far. Returns the value waited
    /// for (None when `from` has nothing, or is `into`).
    pub fn join(&mut self, into: QueueId, from: QueueId) -> Result<Option<u64>, Fault> {
        if into == from || !self.queues.iter().any(|(id, _)| *id == from) {
            return Ok(None);
        }
        self.queue(into)?;
        // `from`'s own joins count as what it recorded (a chain of joins).
        let v = self.submit_with(from, Queue::submit)?;
        if let Some((ci, cv)) = self.last_copy(from) {
            // What `from` copies to the host is part of what it recorded.
            let ii = self.queues.iter().position(|(id, _)| *id == into);
            let waiter = &mut self.queues[ii.expect("made above")].1;
            waiter
                .wait_on(&self.copies[ci].1, cv)
                .map_err(Fault::from)?;
        }
        if v == 0 {
            return Ok(None);
        }
        let pos = |q: QueueId| self.queues.iter().position(|(id, _)| *id == q);
        let (fi, ii) = (
            pos(from).expect("exists"),
            pos(into).expect("created above"),
        );
        let (other, waiter) = if fi < ii {
            let (l, r) = self.queues.split_at_mut(ii);
            (&l[fi].1, &mut r[0].1)
        } else {
            let (l, r) = self.queues.split_at_mut(fi);
            (&r[0].1, &mut l[ii].1)
        };
        waiter.wait_on(other, v).map_err(Fault::from)?;
        Ok(Some(v))
    }

    /// A device timestamp and the host instant it was seen at (for traces):
    /// a timestamped zero-fill on the synchronous queue, submitted and waited
    /// for. Timestamps must be on; the queue's earlier timings are dropped,
    /// so take them first.
    pub fn calibrate(&mut self) -> Result<(u64, std::time::Instant), Fault> {
        let buf = Buffer::new(&self.device, 4, "accl calibration").map_err(Fault::from)?;
        let q = self.queue(QueueId::Sync)?;
        q.set_label("calibrate");
        q.zero(&buf, 0, 4).map_err(Fault::from)?;
        let v = q.submit().map_err(Fault::from)?;
        // Polled: a blocking wait's wake-up would put every device event
        // of the trace that much late.
        while !q
            .host_wait(v, std::time::Duration::ZERO)
            .map_err(Fault::from)?
        {
            std::hint::spin_loop();
        }
        let seen = std::time::Instant::now();
        q.take_timings()
            .iter()
            .rfind(|o| o.label == "calibrate")
            .map(|o| (o.end_ns, seen))
            .ok_or_else(|| "the device gave no timestamp".into())
    }

    /// A calibration for a trace that does not wait for the device's
    /// work: a fresh one when every queue is idle (the fill waits for
    /// nothing then) or none was taken yet, else the last one (the clocks
    /// drift apart by far less than a trace's resolution between inputs).
    pub fn calibration_now(&mut self) -> Result<(u64, std::time::Instant), Fault> {
        let mut idle = true;
        for (_, q) in self.queues.iter().chain(&self.copies) {
            let done = q.completed_value().map_err(Fault::from)?;
            idle &= q.pending_ops() == 0 && done >= q.submitted_value();
        }
        match self.calibration {
            Some(c) if !idle => Ok(c),
            _ => {
                let c = self.calibrate()?;
                self.calibration = Some(c);
                Ok(c)
            }
        }
    }

    /// Turn timestamps on or off on every queue.
    pub fn set_profiling(&mut self, on: bool) -> Result<(), Fault> {
        self.profiling = on;
        for (_, q) in self.queues.iter_mut().chain(&mut self.copies) {
            q.enable_timestamps(on).map_err(Fault::from)?;
        }
        Ok(())
    }
}

impl Drop for DevState {
    fn drop(&mut self) {
        // Pending device-to-host copies still land: no data is lost when a
        // program ends without a final `wait`.
        let _ = self.wait_all();
        // Kernels still compiling ahead on worker threads: their pipelines
        // join the cache, and no worker is left inside the driver while
        // the device (or the process) goes away.
        for (_, rx) in std::mem::take(&mut self.prefetching) {
            if let Ok(Prefetched {
                pipeline: Some((_, Ok(_))),
                ..
            }) = rx.recv()
            {
                self.cache_dirty = true;
            }
        }
        for w in std::mem::take(&mut self.workers) {
            let _ = w.join();
        }
        if let (Some(f), true) = (&self.cache_file, self.cache_dirty) {
            if let Some(dir) = f.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = self.device.save_pipeline_cache(f);
        }
    }
}

impl From<vk_runtime::VkError> for Fault {
    fn from(e: vk_runtime::VkError) -> Fault {
        match e {
            vk_runtime::VkError::DeviceLost { .. } => Fault::Lost(e.to_string()),
            vk_runtime::VkError::OutOfMemory { .. } => Fault::OutOfMemory(e.to_string()),
            e => Fault::Failed(e.to_string()),
        }
    }
}

mod bytes;
mod kernels;
pub mod spec;
mod split;
mod strided;
mod submission;
mod transfer;
use bytes::{copy_bytes, scatter, Piece};

#[cfg(test)]
#[path = "device_tests.rs"]
mod tests;
