//! A device's submission thread: `vkQueueSubmit` off the caller's thread,
//! and copies held back until what they wait for is done.
//!
//! On NVIDIA's driver one `vkQueueSubmit` costs the calling thread about
//! 10 us (8-15 us on an H200, driver 580). A host that issues blocks of
//! work to several queues and devices in turn, a kernel and a copy back
//! each, spent most of each block's 20-35 us there.
//! [`crate::Queue::hand_off`] gives a recorded batch to this thread instead
//! and returns at once with the timeline value the batch will signal.
//!
//! Held batches ([`crate::Queue::hand_off_when_ready`]): a copy to the host
//! that waits on the device for another queue's kernel slowed that
//! kernel's queue. On an H200, with each block's copy submitted at once
//! behind a semaphore wait, the next kernel on the same Vulkan queue
//! started a median 40 us after the one before ended, against 19 us
//! without the copies, and an idle queue started a kernel 40 us after its
//! submission instead of 17. In traces, that next kernel started only
//! once the copy itself had started, which it could not while the copy
//! engine still moved another block's copy. So such a batch stays here
//! until the host sees every value it waits for reached, and is submitted
//! then; its semaphore waits stay in it (already met, they cost nothing).
//!
//! Held batches also go one at a time: the next only once the host sees
//! the one before done (a fence of the thread's own). A copy submitted as
//! soon as its kernel was done, while another copy still ran on the copy
//! engine, slowed the kernels too. On an H200, 16 Mandelbrot blocks with
//! their copies back took a median 2.61 ms on one device and 1.45-1.48 ms
//! on two with held copies, and 2.50-2.54 and 1.35-1.44 ms with held
//! copies one at a time. The copy engine moves one copy at a time anyway
//! (each at the link's rate), so this only orders them by whose kernel
//! finished first. (All copies on one Vulkan queue, in order there, was
//! slower still: 2.81-2.86 and 1.53-1.61 ms.)
//!
//! A batch handed over while the thread sleeps (it sleeps once it has had
//! nothing to do for [`SPIN`]) is submitted on the caller's thread
//! instead, which costs the caller the submission: waking the thread took
//! longer. On two H200s, with the first block of every run handed to a
//! sleeping thread, 16 Mandelbrot blocks with their copies back took a
//! median 1.45 ms on two devices and 2.53 on one; submitted on the
//! caller's thread, 1.37 and 2.51 ms (four alternating pairs of runs in
//! one call, two devices faster in each).
//!
//! Order: a batch is submitted only after every batch handed over before
//! it for the same Vulkan queue, and after the batches whose values it
//! waits for (no wait comes before its signal). Batches of other queues
//! may pass a held one. [`crate::Queue::submit`] submits on the caller's
//! thread when the thread holds nothing, else through it, waiting for its
//! own batch to go.
//!
//! Failure: a batch whose submission fails never signals its value. The
//! thread keeps the error and submits nothing after it (a later batch may
//! wait for that value, and a Vulkan queue stuck on it would never go
//! idle); every later submit, wait or poll of the device's queues returns
//! the error, and a host wait looks for it at least every
//! [`FAILURE_CHECK`] instead of waiting for a value that will not come.

use crate::error::{Result, VkError};
use ash::vk;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Whether a device gets a submission thread: `ACCL_SUBMIT_THREAD=1` or
/// `0` says; by default, an NVIDIA GPU in a process that may run on at
/// least [`THREAD_CORES`] cores.
///
/// Measured on two H200s (`accl bench async`, in two calls on two hosts,
/// three runs each way in each), with copies held and sent one at a time:
/// one device's async pipelines ran faster with the thread (the 16-block
/// Mandelbrot on two queues 2.48-2.54 ms against 2.59-2.83; on one device
/// over 16 queues 2.51-2.57 against 2.59-2.89, and one slow run of 2.84),
/// two devices alike (1.33-1.43 ms and that run's 1.68, against
/// 1.33-1.57), and the launch cost of a chain of tiny kernels and
/// synchronous kernels (the 1 GiB streams) were unchanged. In a
/// process bound to fewer cores the thread takes the interpreter's: under
/// `mpirun`, which binds each rank to one core, a `jacobi_mpi` 8192²
/// iteration took 1.14 ms with it instead of 0.66. Other drivers were not
/// measured, and lavapipe's work runs on the host's cores.
pub(crate) fn wanted(info: &crate::AdapterInfo) -> bool {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    wanted_by(
        std::env::var("ACCL_SUBMIT_THREAD").ok().as_deref(),
        info.vendor_id,
        cores,
    )
}

/// [`wanted`] for the knob's value `knob`, the vendor and the cores the
/// process may run on.
fn wanted_by(knob: Option<&str>, vendor_id: u32, cores: usize) -> bool {
    match knob {
        Some("1") => true,
        Some("0") => false,
        _ => vendor_id == 0x10de && cores >= THREAD_CORES,
    }
}

/// The fewest cores (in the process's affinity mask) with which a device
/// gets a submission thread by default.
const THREAD_CORES: usize = 4;

/// How often a host wait on a device with a submission thread looks for a
/// failed submission.
pub(crate) const FAILURE_CHECK: Duration = Duration::from_millis(100);

/// One recorded batch to submit.
pub(crate) struct Job {
    /// Index of the Vulkan queue in the device's queue list.
    pub(crate) slot: usize,
    /// Null for a batch that only waits and signals.
    pub(crate) cmd: vk::CommandBuffer,
    pub(crate) waits: Vec<(vk::Semaphore, u64)>,
    pub(crate) signal: (vk::Semaphore, u64),
    /// Submit only once the host sees every wait met.
    pub(crate) held: bool,
    /// Told when the batch is submitted (or failed), for a caller that
    /// waits for that.
    pub(crate) done: Option<mpsc::SyncSender<()>>,
}

/// Batches handed over and submitted so far.
#[derive(Default)]
struct Progress {
    handed: u64,
    submitted: u64,
    /// Callers blocked in [`Submitter::drain`]: the thread wakes them only
    /// when there are any (a wake-up is a system call).
    waiting: usize,
}

struct State {
    progress: Mutex<Progress>,
    drained: Condvar,
    failed: AtomicBool,
    failure: Mutex<Option<vk::Result>>,
    /// The thread is blocked waiting for a batch ([`next_job`]).
    asleep: AtomicBool,
}

/// The thread and the way to it; dropping it waits for the batches handed
/// over and stops the thread.
pub(crate) struct Submitter {
    tx: Option<mpsc::Sender<Job>>,
    state: Arc<State>,
    thread: Option<JoinHandle<()>>,
}

impl Submitter {
    /// Starts the thread for the queues `queues` (raw handle and lock of
    /// each Vulkan queue, by slot) of device `raw`, on an instance with the
    /// validation layer on or not.
    pub(crate) fn start(
        raw: ash::Device,
        queues: Vec<(vk::Queue, Arc<Mutex<()>>)>,
        name: &str,
        validation: bool,
    ) -> Result<Submitter> {
        let (tx, rx) = mpsc::channel::<Job>();
        let state = Arc::new(State {
            progress: Mutex::new(Progress::default()),
            drained: Condvar::new(),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            asleep: AtomicBool::new(false),
        });
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("accl-submit {name}"))
            .spawn(move || run(&raw, validation, &queues, &st, rx))
            .map_err(|e| VkError::usage(format!("cannot start the submission thread: {e}")))?;
        Ok(Submitter {
            tx: Some(tx),
            state,
            thread: Some(thread),
        })
    }

    /// Queues `job` for submission.
    pub(crate) fn hand_off(&self, job: Job) {
        self.state
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handed += 1;
        let tx = self.tx.as_ref().expect("present until drop");
        // The thread ends only when the sender is dropped.
        let _ = tx.send(job);
    }

    /// Whether the thread sleeps, waiting for a batch, with none to submit:
    /// then a batch submitted on the caller's thread keeps every queue's
    /// order, and reaches the device sooner than a wake-up would.
    pub(crate) fn asleep(&self) -> bool {
        self.state.asleep.load(Ordering::Acquire) && self.idle()
    }

    /// Batches ever handed over.
    pub(crate) fn handed(&self) -> u64 {
        self.state
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handed
    }

    /// Whether every batch handed over is submitted.
    pub(crate) fn idle(&self) -> bool {
        self.unsubmitted() == 0
    }

    /// Batches handed over and not yet submitted.
    pub(crate) fn unsubmitted(&self) -> u64 {
        let p = self
            .state
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        p.handed - p.submitted
    }

    /// Blocks until every batch handed over is submitted (or failed).
    pub(crate) fn drain(&self) {
        let mut p = self
            .state
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if p.submitted == p.handed {
            return;
        }
        p.waiting += 1;
        while p.submitted < p.handed {
            p = self
                .state
                .drained
                .wait(p)
                .unwrap_or_else(|e| e.into_inner());
        }
        p.waiting -= 1;
    }

    /// The error of a failed submission, if one failed.
    pub(crate) fn failure(&self) -> Option<VkError> {
        if !self.state.failed.load(Ordering::Acquire) {
            return None;
        }
        let r = *self.state.failure.lock().unwrap_or_else(|e| e.into_inner());
        r.map(|r| VkError::from_vk("vkQueueSubmit", r))
    }
}

impl Drop for Submitter {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: takes batches as they come and submits each as soon as it
/// may go; while some are held, looks at the values they wait for.
fn run(
    raw: &ash::Device,
    validation: bool,
    queues: &[(vk::Queue, Arc<Mutex<()>>)],
    st: &State,
    rx: mpsc::Receiver<Job>,
) {
    let mut last_held = HeldFence::default();
    submit_all(raw, validation, queues, st, &rx, &mut last_held);
    last_held.destroy(raw);
}

/// The fence of the last held batch submitted, while the host has not
/// seen it signalled.
#[derive(Default)]
struct HeldFence {
    fence: vk::Fence,
    busy: bool,
}

impl HeldFence {
    /// Whether the last held batch is done (or none is out).
    fn done(&mut self, raw: &ash::Device) -> bool {
        if self.busy {
            // SAFETY: the fence is this thread's; an error (a lost device)
            // counts as done, so that nothing waits for it forever.
            if !unsafe { raw.get_fence_status(self.fence) }.unwrap_or(true) {
                return false;
            }
            self.busy = false;
            // SAFETY: signalled (or the device lost), so no submission uses
            // it any more. One that cannot be reset is replaced.
            unsafe {
                if raw.reset_fences(&[self.fence]).is_err() {
                    raw.destroy_fence(self.fence, None);
                    self.fence = vk::Fence::null();
                }
            }
        }
        true
    }

    /// The fence for the next held batch (made on first use; null if the
    /// driver cannot make one).
    fn take(&mut self, raw: &ash::Device) -> vk::Fence {
        if self.fence == vk::Fence::null() {
            // SAFETY: a plain fence of this device.
            self.fence = unsafe { raw.create_fence(&vk::FenceCreateInfo::default(), None) }
                .unwrap_or(vk::Fence::null());
        }
        self.fence
    }

    fn destroy(self, raw: &ash::Device) {
        if self.fence == vk::Fence::null() {
            return;
        }
        // SAFETY: once signalled (or the device lost), no submission uses it.
        unsafe {
            if self.busy {
                let _ = raw.wait_for_fences(&[self.fence], true, u64::MAX);
            }
            raw.destroy_fence(self.fence, None);
        }
    }
}

fn submit_all(
    raw: &ash::Device,
    validation: bool,
    queues: &[(vk::Queue, Arc<Mutex<()>>)],
    st: &State,
    rx: &mpsc::Receiver<Job>,
    last_held: &mut HeldFence,
) {
    let mut pending: VecDeque<Job> = VecDeque::new();
    loop {
        if pending.is_empty() {
            match next_job(rx, st) {
                Some(j) => pending.push_back(j),
                None => return,
            }
        }
        while let Ok(j) = rx.try_recv() {
            pending.push_back(j);
        }
        let mut sent = 0;
        let mut i = 0;
        while i < pending.len() {
            let go = {
                // Held batches are polled: see `crate::validation_lock`.
                let _serial = crate::validation_lock(validation && pending[i].held);
                may_go(raw, &pending, i) && (!pending[i].held || last_held.done(raw))
            };
            if go {
                let job = pending.remove(i).expect("in range");
                let fence = match job.held {
                    true => last_held.take(raw),
                    false => vk::Fence::null(),
                };
                if submit_one(raw, queues, st, &job, fence) && fence != vk::Fence::null() {
                    last_held.busy = true;
                }
                sent += 1;
                if let Some(d) = &job.done {
                    // Counted before the caller goes on.
                    count(st, std::mem::take(&mut sent));
                    let _ = d.send(());
                }
            } else {
                i += 1;
            }
        }
        if sent > 0 {
            count(st, sent);
        } else if !pending.is_empty() {
            // Only held batches are left: their values come from work
            // already on the device, within microseconds to milliseconds.
            std::thread::yield_now();
        }
    }
}

/// Counts `sent` more batches submitted, waking whoever drains.
fn count(st: &State, sent: u64) {
    if sent == 0 {
        return;
    }
    let mut p = st.progress.lock().unwrap_or_else(|e| e.into_inner());
    p.submitted += sent;
    if p.waiting > 0 && p.submitted == p.handed {
        st.drained.notify_all();
    }
}

/// How long the thread looks for the next batch before it sleeps: a host
/// issuing blocks hands batches over every few microseconds, and waking a
/// sleeping thread took 10-15 us on an H200's host.
const SPIN: Duration = Duration::from_micros(200);

/// The next batch, or `None` once the device is gone.
fn next_job(rx: &mpsc::Receiver<Job>, st: &State) -> Option<Job> {
    let start = std::time::Instant::now();
    while start.elapsed() < SPIN {
        match rx.try_recv() {
            Ok(j) => return Some(j),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
    st.asleep.store(true, Ordering::Release);
    let j = rx.recv().ok();
    st.asleep.store(false, Ordering::Release);
    j
}

/// Whether `pending[i]` may be submitted now.
fn may_go(raw: &ash::Device, pending: &VecDeque<Job>, i: usize) -> bool {
    let job = &pending[i];
    let earlier = pending.iter().take(i);
    // In order on its Vulkan queue.
    if earlier.clone().any(|e| e.slot == job.slot) {
        return false;
    }
    // No wait before the batch that signals it is submitted.
    let waits_on_pending = |(s, v): &(vk::Semaphore, u64)| {
        pending
            .iter()
            .enumerate()
            .any(|(k, p)| k != i && p.signal.0 == *s && p.signal.1 <= *v)
    };
    if job.waits.iter().any(waits_on_pending) {
        return false;
    }
    if job.held {
        // SAFETY: the semaphores live while a batch waits on them (the
        // waiting queue's batch holds them).
        return job.waits.iter().all(|(s, v)| {
            unsafe { raw.get_semaphore_counter_value(*s) }.map_or(true, |c| c >= *v)
        });
    }
    true
}

/// Submits `job` with `fence` (may be null), unless a submission failed
/// before; whether it was submitted.
fn submit_one(
    raw: &ash::Device,
    queues: &[(vk::Queue, Arc<Mutex<()>>)],
    st: &State,
    job: &Job,
    fence: vk::Fence,
) -> bool {
    if st.failed.load(Ordering::Acquire) {
        return false;
    }
    let (queue, lock) = &queues[job.slot];
    // SAFETY: the batch's command buffer and semaphores live until its
    // value is reached (its queue holds them), which only this submission
    // makes happen; the fence is unsignalled and not in use.
    match unsafe { queue_submit(raw, *queue, lock, job, fence) } {
        Ok(()) => true,
        Err(e) => {
            *st.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
            st.failed.store(true, Ordering::Release);
            false
        }
    }
}

/// `vkQueueSubmit` of one batch: its command buffer (if not null), its
/// semaphore waits (at every stage) and its timeline signal, under the
/// queue's lock; `fence` (if not null) is signalled when it is done.
///
/// # Safety
/// `queue` is a queue of `raw`, `lock` its external synchronisation, the
/// batch's command buffer and semaphores stay alive until it is done, and
/// `fence` is null or unsignalled and unused.
pub(crate) unsafe fn queue_submit(
    raw: &ash::Device,
    queue: vk::Queue,
    lock: &Mutex<()>,
    job: &Job,
    fence: vk::Fence,
) -> std::result::Result<(), vk::Result> {
    let wait_sems: Vec<_> = job.waits.iter().map(|(s, _)| *s).collect();
    let wait_values: Vec<_> = job.waits.iter().map(|(_, v)| *v).collect();
    let wait_stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; wait_sems.len()];
    let signal_sems = [job.signal.0];
    let signal_values = [job.signal.1];
    let cmds = [job.cmd];
    let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
        .wait_semaphore_values(&wait_values)
        .signal_semaphore_values(&signal_values);
    let mut submit = vk::SubmitInfo::default()
        .wait_semaphores(&wait_sems)
        .wait_dst_stage_mask(&wait_stages)
        .signal_semaphores(&signal_sems)
        .push_next(&mut timeline);
    if job.cmd != vk::CommandBuffer::null() {
        submit = submit.command_buffers(&cmds);
    }
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    raw.queue_submit(queue, &[submit], fence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_nvidia_gpu_gets_a_thread_where_the_process_has_the_cores() {
        const NVIDIA: u32 = 0x10de;
        assert!(wanted_by(None, NVIDIA, THREAD_CORES));
        assert!(wanted_by(None, NVIDIA, 32));
        // `mpirun` binds a rank to one core: the thread would take it.
        assert!(!wanted_by(None, NVIDIA, 1));
        assert!(!wanted_by(None, NVIDIA, THREAD_CORES - 1));
        // lavapipe (its work runs on the host's cores), other vendors.
        assert!(!wanted_by(None, 0x10005, 32));
        assert!(!wanted_by(None, 0x1002, 32));
        // The knob decides either way; another value leaves the default.
        assert!(wanted_by(Some("1"), 0x10005, 1));
        assert!(!wanted_by(Some("0"), NVIDIA, 32));
        assert!(wanted_by(Some("yes"), NVIDIA, 32));
        assert!(!wanted_by(Some(""), NVIDIA, 1));
    }
}
