//! accl queues: batches of recorded work ordered by a timeline semaphore.
//!
//! Shape (after wgpu-hal's `Fence`): a [`Queue`]
//! is one accl queue. It maps onto one `VkQueue` of its device (several
//! accl queues may share one; submission takes that `VkQueue`'s mutex), owns
//! a timeline semaphore and the last `u64` it submitted, and one open
//! command buffer into which operations are recorded. [`Queue::submit`]
//! closes the batch and submits it signalling `last + 1`, which is returned;
//! [`Queue::wait_on`] makes the next submission wait on another queue's
//! value on the device (no host block); [`Queue::host_wait`] blocks in
//! `vkWaitSemaphores` and a timeout is `Ok(false)`, not an error.
//!
//! Every submitted batch is kept in an in-flight list with the value it
//! signals, its command buffer, its descriptor and query pools, and an
//! `Arc` of every buffer, pipeline and foreign semaphore it uses. When the
//! host observes the value (any call that polls: recording, submitting,
//! waiting) the batch is retired: the `Arc`s are released (so dropped
//! buffers are freed only now), descriptor pools are reset and command
//! buffers, descriptor pools and query pools go back to free lists. The
//! in-flight list is capped ([`MAX_IN_FLIGHT`]): submitting beyond it
//! waits for the oldest batch, so pools stay bounded however many batches
//! are submitted.
//!
//! Synchronisation is deliberately conservative (correctness first): a full
//! compute/transfer memory barrier precedes every recorded operation (the
//! one before a batch's first operation also orders it after earlier
//! submissions to the same `VkQueue`), and each batch ends with a barrier
//! making device writes visible to the host.
//!
//! Optional timestamps: with [`Queue::enable_timestamps`], a timestamp is
//! written before and after each operation; once its batch retires,
//! [`Queue::take_timings`] returns `(label, start_ns, end_ns)` per operation.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ash::vk;

use crate::device::{Device, DeviceShared, QueueRole, VkQueueInfo};
use crate::error::{vkerr, Result, VkError};
use crate::memory::{Buffer, BufferInner, GpuBuffer};
use crate::pipeline::PipelineInner;

mod dispatch;
mod regions;
mod submission;
pub use regions::CopyRegion;

/// Most batches a queue keeps in flight before `submit` waits for the oldest.
pub const MAX_IN_FLIGHT: usize = 16;
const POOL_SETS: u32 = 64;
const POOL_DESCRIPTORS: u32 = 512;
const QUERIES_PER_POOL: u32 = 128;

/// A timeline semaphore; shared with the batches of other queues that wait
/// on it, so it is destroyed only once no pending submission refers to it.
struct Timeline {
    raw: vk::Semaphore,
    device: Arc<DeviceShared>,
}

impl Drop for Timeline {
    fn drop(&mut self) {
        // SAFETY: every batch that waits on or signals it holds this Arc.
        unsafe { self.device.raw.destroy_semaphore(self.raw, None) };
    }
}

/// A range of a [`Buffer`] bound to one storage-buffer binding of a kernel.
#[derive(Clone, Copy, Debug)]
pub struct BufferBinding<'a> {
    /// The buffer.
    pub buffer: &'a Buffer,
    /// Start in bytes (a multiple of `minStorageBufferOffsetAlignment`).
    pub offset: u64,
    /// Length in bytes.
    pub range: u64,
}

impl<'a> BufferBinding<'a> {
    /// The whole buffer.
    pub fn whole(buffer: &'a Buffer) -> Self {
        BufferBinding {
            buffer,
            offset: 0,
            range: buffer.size(),
        }
    }
}

/// Device time of one recorded operation.
#[derive(Clone, Debug, PartialEq)]
pub struct OpTiming {
    /// The operation's label.
    pub label: String,
    /// Timeline value of the batch it ran in.
    pub value: u64,
    /// Start, in nanoseconds of the device clock.
    pub start_ns: u64,
    /// End, in nanoseconds of the device clock.
    pub end_ns: u64,
}

/// Counters showing that a queue recycles its pools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Batches submitted.
    pub submissions: u64,
    /// Command buffers ever allocated.
    pub command_buffers_created: usize,
    /// Descriptor pools ever created.
    pub descriptor_pools_created: usize,
    /// Query pools ever created.
    pub query_pools_created: usize,
    /// Batches submitted and not yet observed complete.
    pub in_flight: usize,
}

#[derive(Clone, Copy)]
struct DescPool {
    raw: vk::DescriptorPool,
    sets: u32,
    descriptors: u32,
}

struct Batch {
    cmd: vk::CommandBuffer,
    /// Timeline value it signals (0 while open).
    value: u64,
    /// Pools used; the last one is current, with what is left in it.
    desc_pools: Vec<DescPool>,
    sets_left: u32,
    descriptors_left: u32,
    buffers: Vec<Arc<BufferInner>>,
    pipelines: Vec<Arc<PipelineInner>>,
    waits: Vec<(Arc<Timeline>, u64)>,
    ops: u32,
    query_pools: Vec<vk::QueryPool>,
    /// Labels of timed operations; op i uses queries 2i and 2i+1 overall.
    labels: Vec<String>,
    /// Host work to run once the batch is observed complete.
    on_complete: Vec<Box<dyn FnOnce() + Send>>,
    /// What the command buffer has bound for compute so far
    /// (`dispatch` leaves out what the next dispatch would set again).
    bound: Bound,
}

impl Batch {
    /// An open batch recording into `cmd` (null: one that only waits and
    /// signals), reusing the vectors of `spare`.
    fn new(cmd: vk::CommandBuffer, spare: Spare) -> Batch {
        Batch {
            cmd,
            value: 0,
            desc_pools: spare.desc_pools,
            sets_left: 0,
            descriptors_left: 0,
            buffers: spare.buffers,
            pipelines: spare.pipelines,
            waits: Vec::new(),
            ops: 0,
            query_pools: Vec::new(),
            labels: Vec::new(),
            on_complete: Vec::new(),
            bound: Bound::default(),
        }
    }
}

/// The compute state a batch's command buffer holds: the pipeline bound,
/// the buffers pushed for its layout and the push constants. A dispatch
/// that would set the same again records nothing for it: on an H100 the
/// driver's recording was about half of the 5 us a tiny async kernel of a
/// chain cost the host.
#[derive(Default)]
struct Bound {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    buffers: Vec<(vk::Buffer, u64, u64)>,
    constants: Vec<u8>,
}

/// Retired batches whose vectors are kept (one is open at a time, a few
/// are in flight).
const SPARE_BATCHES: usize = 4;

/// The vectors of a retired batch, empty, with their capacity.
#[derive(Default)]
struct Spare {
    buffers: Vec<Arc<BufferInner>>,
    pipelines: Vec<Arc<PipelineInner>>,
    desc_pools: Vec<DescPool>,
}

/// One accl queue (see the module documentation).
pub struct Queue {
    device: Device,
    hw: VkQueueInfo,
    timeline: Arc<Timeline>,
    submitted: u64,
    completed: u64,
    cmd_pool: vk::CommandPool,
    free_cmds: Vec<vk::CommandBuffer>,
    free_desc_pools: Vec<DescPool>,
    free_query_pools: Vec<vk::QueryPool>,
    open: Option<Batch>,
    /// Emptied vectors of retired batches, kept for their capacity: a
    /// stream of tiny kernels would otherwise grow fresh ones per batch.
    spare: Vec<Spare>,
    in_flight: VecDeque<Batch>,
    pending_waits: Vec<(Arc<Timeline>, u64)>,
    stats: QueueStats,
    timestamps: bool,
    timings: Vec<OpTiming>,
    next_label: Option<String>,
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("vk_queue", &self.hw)
            .field("submitted", &self.submitted)
            .field("completed", &self.completed)
            .finish()
    }
}

/// What work of a queue of this role writes (a copy engine has no shader
/// stage to name).
fn writes(role: QueueRole) -> vk::AccessFlags {
    match role {
        QueueRole::Compute => vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
        QueueRole::TransferOnly => vk::AccessFlags::TRANSFER_WRITE,
    }
}

/// Every write before it visible to every access after it.
fn full_barrier(role: QueueRole) -> vk::MemoryBarrier<'static> {
    let reads = match role {
        QueueRole::Compute => vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ,
        QueueRole::TransferOnly => vk::AccessFlags::TRANSFER_READ,
    };
    vk::MemoryBarrier::default()
        .src_access_mask(writes(role))
        .dst_access_mask(writes(role) | reads)
}

/// The stages work of a queue of this role runs in.
fn work_stages(role: QueueRole) -> vk::PipelineStageFlags {
    match role {
        QueueRole::Compute => WORK_STAGES,
        QueueRole::TransferOnly => vk::PipelineStageFlags::TRANSFER,
    }
}

const WORK_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
);

impl Queue {
    /// Creates accl queue number `n` of `device`, on compute queue
    /// `n mod (number of compute queues)`.
    pub fn new(device: &Device, n: usize) -> Result<Queue> {
        Self::on_vk_queue(device, device.compute_queue_for(n))
    }

    /// Creates an accl queue on a given Vulkan queue of `device` (one of
    /// [`Device::vk_queues`]). Kernels may only be dispatched on compute queues.
    pub fn on_vk_queue(device: &Device, hw: VkQueueInfo) -> Result<Queue> {
        let d = &device.shared.raw;
        if device.shared.queues.get(hw.slot).map(|q| q.info) != Some(hw) {
            return Err(VkError::usage(
                "the Vulkan queue does not belong to this device",
            ));
        }
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let raw = unsafe {
            d.create_semaphore(
                &vk::SemaphoreCreateInfo::default().push_next(&mut type_info),
                None,
            )
        }
        .map_err(vkerr("vkCreateSemaphore"))?;
        let timeline = Arc::new(Timeline {
            raw,
            device: device.shared.clone(),
        });
        let cmd_pool = unsafe {
            d.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(hw.family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .map_err(vkerr("vkCreateCommandPool"))?;
        Ok(Queue {
            device: device.clone(),
            hw,
            timeline,
            submitted: 0,
            completed: 0,
            cmd_pool,
            free_cmds: Vec::new(),
            free_desc_pools: Vec::new(),
            free_query_pools: Vec::new(),
            open: None,
            in_flight: VecDeque::new(),
            pending_waits: Vec::new(),
            stats: QueueStats::default(),
            timestamps: false,
            timings: Vec::new(),
            next_label: None,
            spare: Vec::new(),
        })
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The Vulkan queue this accl queue submits to.
    pub fn vk_queue(&self) -> VkQueueInfo {
        self.hw
    }

    /// The last timeline value submitted (0 before the first submission).
    pub fn submitted_value(&self) -> u64 {
        self.submitted
    }

    /// Number of operations recorded in the open batch.
    pub fn pending_ops(&self) -> u32 {
        self.open.as_ref().map_or(0, |b| b.ops)
    }

    /// Pool and submission counters.
    pub fn stats(&self) -> QueueStats {
        QueueStats {
            in_flight: self.in_flight.len(),
            ..self.stats
        }
    }

    /// The highest timeline value the device has reached.
    pub fn completed_value(&self) -> Result<u64> {
        // Callers poll this in loops: see `validation_lock`.
        let shared = &self.device.shared;
        let _serial = crate::validation_lock(shared.instance.validation);
        unsafe { shared.raw.get_semaphore_counter_value(self.timeline.raw) }
            .map_err(vkerr("vkGetSemaphoreCounterValue"))
    }

    /// Turns per-operation timestamps on or off (from the next batch on).
    /// Refused where the queue family has no timestamps.
    pub fn enable_timestamps(&mut self, on: bool) -> Result<()> {
        if on && self.hw.timestamp_valid_bits == 0 {
            return Err(VkError::usage(
                "this queue family does not support timestamps",
            ));
        }
        self.timestamps = on;
        Ok(())
    }

    /// Timings of operations whose batches have completed, oldest first.
    pub fn take_timings(&mut self) -> Vec<OpTiming> {
        std::mem::take(&mut self.timings)
    }

    /// Runs `f` on the host once the work recorded so far on this queue is
    /// observed complete (by any call that polls: recording, `submit`,
    /// `host_wait`, `poll`, or dropping the queue), in recording order. This
    /// is where completion work such as copying a staging buffer into a host
    /// array belongs. With nothing recorded, `f` waits for the
    /// next submission's batch.
    pub fn on_complete(&mut self, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.batch()?.on_complete.push(Box::new(f));
        Ok(())
    }

    /// Records a wait for `event` (`crate::event`): later operations of
    /// this queue (and of the Vulkan queue it runs on) start once the host
    /// has set it. The batch keeps the event alive until it is retired.
    pub fn wait_host_event(&mut self, event: &crate::event::HostEvent) -> Result<()> {
        let event = event.inner.clone();
        self.same_device(&event.device)?;
        let cmd = self.batch()?.cmd;
        let (dst, access) = match self.hw.role {
            QueueRole::Compute => (
                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ,
            ),
            QueueRole::TransferOnly => (
                vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::TRANSFER_READ,
            ),
        };
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::HOST_WRITE)
            .dst_access_mask(access);
        unsafe {
            self.device.shared.raw.cmd_wait_events(
                cmd,
                &[event.raw],
                vk::PipelineStageFlags::HOST,
                dst,
                &[barrier],
                &[],
                &[],
            )
        };
        let b = self.batch()?;
        b.ops += 1;
        b.on_complete.push(Box::new(move || drop(event)));
        Ok(())
    }

    /// Labels the next recorded operation (for timings).
    pub fn set_label(&mut self, label: &str) {
        // Labels name timed operations only: untimed launches skip the copy.
        if self.timestamps {
            self.next_label = Some(label.to_string());
        }
    }

    // ---- recording -------------------------------------------------------

    fn same_device(&self, other: &Arc<DeviceShared>) -> Result<()> {
        if Arc::ptr_eq(&self.device.shared, other) {
            Ok(())
        } else {
            Err(VkError::usage(
                "a buffer or pipeline of another device was used on this queue",
            ))
        }
    }

    /// Opens a batch if none is open.
    fn batch(&mut self) -> Result<&mut Batch> {
        if self.open.is_none() {
            self.poll()?;
            let d = &self.device.shared.raw;
            let cmd = match self.free_cmds.pop() {
                Some(c) => c,
                None => {
                    let info = vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.cmd_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1);
                    let c = unsafe { d.allocate_command_buffers(&info) }
                        .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
                    self.stats.command_buffers_created += 1;
                    c
                }
            };
            // The pool has RESET_COMMAND_BUFFER, so begin resets it.
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            if let Err(e) = unsafe { d.begin_command_buffer(cmd, &begin) } {
                self.free_cmds.push(cmd);
                return Err(VkError::from_vk("vkBeginCommandBuffer", e));
            }
            let spare = self.spare.pop().unwrap_or_default();
            self.open = Some(Batch::new(cmd, spare));
        }
        Ok(self.open.as_mut().expect("opened above"))
    }

    /// Barrier and optional start timestamp before an operation.
    fn begin_op(
        &mut self,
        default_label: &dyn Fn() -> String,
    ) -> Result<(vk::CommandBuffer, Option<(vk::QueryPool, u32)>)> {
        let next = self.next_label.take();
        let timestamps = self.timestamps;
        let role = self.hw.role;
        // The shared state, not the `ash::Device`: its function tables are about
        // 1.5 KB to copy.
        let shared = self.device.shared.clone();
        let d = &shared.raw;
        // Query pool for the timestamps, if needed.
        let mut query = None;
        if timestamps {
            let (needs_pool, index) = {
                let b = self.batch()?;
                let used = 2 * b.labels.len() as u32;
                (used % QUERIES_PER_POOL == 0, used % QUERIES_PER_POOL)
            };
            // QUERIES_PER_POOL is even, so an op's two queries share a pool.
            if needs_pool {
                let pool = match self.free_query_pools.pop() {
                    Some(p) => p,
                    None => {
                        let info = vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(QUERIES_PER_POOL);
                        let p = unsafe { d.create_query_pool(&info, None) }
                            .map_err(vkerr("vkCreateQueryPool"))?;
                        self.stats.query_pools_created += 1;
                        p
                    }
                };
                let b = self.batch()?;
                unsafe { d.cmd_reset_query_pool(b.cmd, pool, 0, QUERIES_PER_POOL) };
                b.query_pools.push(pool);
            }
            let b = self.batch()?;
            query = Some((*b.query_pools.last().expect("pushed above"), index));
        }
        let b = self.batch()?;
        unsafe {
            d.cmd_pipeline_barrier(
                b.cmd,
                work_stages(role),
                work_stages(role),
                vk::DependencyFlags::empty(),
                &[full_barrier(role)],
                &[],
                &[],
            );
        }
        if let Some((pool, index)) = query {
            unsafe {
                d.cmd_write_timestamp(b.cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, index)
            };
            b.labels.push(next.unwrap_or_else(default_label));
        }
        b.ops += 1;
        Ok((b.cmd, query))
    }

    /// End timestamp after an operation (the query after the start one).
    fn end_op(&mut self, query: Option<(vk::QueryPool, u32)>) {
        if let (Some((pool, index)), Some(b)) = (query, self.open.as_ref()) {
            unsafe {
                self.device.shared.raw.cmd_write_timestamp(
                    b.cmd,
                    vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                    pool,
                    index + 1,
                )
            };
        }
    }

    fn check_range(what: &str, buf: &dyn GpuBuffer, offset: u64, size: u64) -> Result<()> {
        if offset.checked_add(size).is_none_or(|end| end > buf.size()) {
            return Err(VkError::usage(format!(
                "{what} range {offset}..{} is outside a buffer of {} bytes",
                offset as u128 + size as u128,
                buf.size()
            )));
        }
        Ok(())
    }

    /// Records a copy of `size` bytes between two buffers (device or
    /// staging, either direction). A size of 0 records nothing.
    pub fn copy_buffer(
        &mut self,
        src: &dyn GpuBuffer,
        src_offset: u64,
        dst: &dyn GpuBuffer,
        dst_offset: u64,
        size: u64,
    ) -> Result<()> {
        self.same_device(&src.inner().device)?;
        self.same_device(&dst.inner().device)?;
        Self::check_range("copy source", src, src_offset, size)?;
        Self::check_range("copy destination", dst, dst_offset, size)?;
        if Arc::ptr_eq(src.inner(), dst.inner())
            && src_offset < dst_offset + size
            && dst_offset < src_offset + size
        {
            return Err(VkError::usage("copy source and destination overlap"));
        }
        if size == 0 {
            return Ok(());
        }
        let (cmd, query) = self.begin_op(&|| "copy".to_string())?;
        let region = vk::BufferCopy {
            src_offset,
            dst_offset,
            size,
        };
        unsafe {
            self.device
                .shared
                .raw
                .cmd_copy_buffer(cmd, src.inner().raw, dst.inner().raw, &[region])
        };
        self.end_op(query);
        let b = self.open.as_mut().expect("open");
        b.buffers.push(src.inner().clone());
        b.buffers.push(dst.inner().clone());
        Ok(())
    }

    /// Records filling `size` bytes at `offset` with the 32-bit pattern
    /// `value`. `offset` must be a multiple of 4, and `size` too unless the
    /// range ends at the end of the buffer.
    pub fn fill(&mut self, dst: &dyn GpuBuffer, offset: u64, size: u64, value: u32) -> Result<()> {
        self.same_device(&dst.inner().device)?;
        Self::check_range("fill", dst, offset, size)?;
        let ends = offset + size == dst.size();
        if offset % 4 != 0 || (size % 4 != 0 && !ends) {
            return Err(VkError::usage(format!(
                "fill of {size} bytes at offset {offset}: offset and size must be multiples of 4"
            )));
        }
        if size == 0 {
            return Ok(());
        }
        // The Vulkan buffer is rounded up to 4 bytes, so this stays inside.
        let size = size.div_ceil(4) * 4;
        let (cmd, query) = self.begin_op(&|| "fill".to_string())?;
        unsafe {
            self.device
                .shared
                .raw
                .cmd_fill_buffer(cmd, dst.inner().raw, offset, size, value)
        };
        self.end_op(query);
        self.open
            .as_mut()
            .expect("open")
            .buffers
            .push(dst.inner().clone());
        Ok(())
    }

    /// Records zeroing `size` bytes at `offset` (see [`Queue::fill`]).
    pub fn zero(&mut self, dst: &dyn GpuBuffer, offset: u64, size: u64) -> Result<()> {
        self.fill(dst, offset, size, 0)
    }

    // ---- submission and waiting -------------------------------------------

    /// Makes this queue's next submission wait (on the device) until
    /// `other` reaches `value`. Work already recorded here is submitted
    /// first, so only later operations wait. `value` must have been
    /// submitted on `other`, which must belong to the same device.
    pub fn wait_on(&mut self, other: &Queue, value: u64) -> Result<()> {
        if !Arc::ptr_eq(&self.device.shared, &other.device.shared) {
            return Err(VkError::usage(
                "queues of different devices cannot wait on each other on the device; use host_wait",
            ));
        }
        if value > other.submitted {
            return Err(VkError::WaitNotSubmitted {
                value,
                submitted: other.submitted,
            });
        }
        if Arc::ptr_eq(&self.timeline, &other.timeline) || value == 0 {
            return Ok(());
        }
        if self.pending_ops() > 0 {
            self.submit()?;
        }
        match self
            .pending_waits
            .iter_mut()
            .find(|(t, _)| Arc::ptr_eq(t, &other.timeline))
        {
            Some((_, v)) => *v = (*v).max(value),
            None => self.pending_waits.push((other.timeline.clone(), value)),
        }
        Ok(())
    }

    fn wait_value(&self, value: u64, timeout_ns: u64) -> Result<bool> {
        let sems = [self.timeline.raw];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // With a submission thread, the value may never come (its batch
        // failed to submit): wait in slices, looking for that failure.
        // Without one (or for a poll, the host's spin loop) one call, with
        // no clock read.
        let shared = &self.device.shared;
        let slice = match shared.submitter {
            Some(_) => crate::submit::FAILURE_CHECK.as_nanos() as u64,
            None => u64::MAX,
        };
        if timeout_ns <= slice {
            // A poll, maybe in a loop: see `crate::validation_lock`.
            let _serial = crate::validation_lock(shared.instance.validation && timeout_ns == 0);
            return match unsafe { shared.raw.wait_semaphores(&info, timeout_ns) } {
                Ok(()) => Ok(true),
                Err(vk::Result::TIMEOUT) => match shared.submit_failure() {
                    Some(e) => Err(e),
                    None => Ok(false),
                },
                Err(e) => Err(VkError::from_vk("vkWaitSemaphores", e)),
            };
        }
        let start = std::time::Instant::now();
        loop {
            let spent = start.elapsed().as_nanos() as u64;
            let left = timeout_ns.saturating_sub(spent);
            match unsafe { shared.raw.wait_semaphores(&info, left.min(slice)) } {
                Ok(()) => return Ok(true),
                Err(vk::Result::TIMEOUT) => {
                    if let Some(e) = shared.submit_failure() {
                        return Err(e);
                    }
                    if left <= slice {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(VkError::from_vk("vkWaitSemaphores", e)),
            }
        }
    }

    /// Blocks until this queue reaches `value` or `timeout` passes.
    /// Returns `Ok(false)` on timeout. Completed batches are retired.
    pub fn host_wait(&mut self, value: u64, timeout: Duration) -> Result<bool> {
        if value > self.submitted {
            return Err(VkError::WaitNotSubmitted {
                value,
                submitted: self.submitted,
            });
        }
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        let reached = value <= self.completed || self.wait_value(value, ns)?;
        self.poll()?;
        Ok(reached)
    }

    /// Submits the open batch and waits for everything submitted so far.
    pub fn finish(&mut self) -> Result<()> {
        let v = self.submit()?;
        self.host_wait(v, Duration::MAX)?;
        Ok(())
    }

    /// Whether none of this queue's submitted work is still running (after
    /// retiring what finished). Cheap when nothing is in flight.
    pub fn idle(&mut self) -> Result<bool> {
        self.poll()?;
        Ok(self.in_flight.is_empty())
    }

    /// Retires every batch whose value the device has reached. Returns
    /// the completed value.
    pub fn poll(&mut self) -> Result<u64> {
        if self.in_flight.is_empty() {
            return Ok(self.completed);
        }
        if let Some(e) = self.device.shared.submit_failure() {
            return Err(e);
        }
        let done = self.completed_value()?;
        self.completed = self.completed.max(done);
        while self.in_flight.front().is_some_and(|b| b.value <= done) {
            let b = self.in_flight.pop_front().expect("checked");
            self.retire(b)?;
        }
        Ok(self.completed)
    }

    /// Collects a completed batch's timings and recycles its pools.
    fn retire(&mut self, batch: Batch) -> Result<()> {
        if !batch.labels.is_empty() {
            let d = &self.device.shared.raw;
            let period = self.device.shared.info.limits.timestamp_period as f64;
            let bits = self.hw.timestamp_valid_bits;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let total = 2 * batch.labels.len() as u32;
            let mut ticks = Vec::with_capacity(total as usize);
            for (i, pool) in batch.query_pools.iter().enumerate() {
                let n = (total - i as u32 * QUERIES_PER_POOL).min(QUERIES_PER_POOL);
                let mut data = vec![0u64; n as usize];
                unsafe {
                    d.get_query_pool_results(
                        *pool,
                        0,
                        &mut data,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )
                }
                .map_err(vkerr("vkGetQueryPoolResults"))?;
                ticks.extend(data);
            }
            for (i, label) in batch.labels.iter().enumerate() {
                let to_ns = |t: u64| ((t & mask) as f64 * period) as u64;
                self.timings.push(OpTiming {
                    label: label.clone(),
                    value: batch.value,
                    start_ns: to_ns(ticks[2 * i]),
                    end_ns: to_ns(ticks[2 * i + 1]),
                });
            }
        }
        let mut batch = batch;
        for f in batch.on_complete.drain(..) {
            f();
        }
        self.recycle(batch);
        Ok(())
    }

    /// `vkQueueWaitIdle` on this queue's hardware queue (errors ignored:
    /// on device loss the work is gone anyway).
    fn drain_driver(&self) {
        let hw = &self.device.shared.queues[self.hw.slot];
        let _guard = hw.submit_lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the lock is the queue's external synchronisation.
        let _ = unsafe { self.device.shared.raw.queue_wait_idle(hw.raw) };
    }

    /// Returns a batch's command buffer and pools to the free lists (the
    /// batch is complete or was never submitted).
    fn recycle(&mut self, mut batch: Batch) {
        let d = &self.device.shared.raw;
        if batch.cmd != vk::CommandBuffer::null() {
            self.free_cmds.push(batch.cmd);
        }
        for p in batch.desc_pools.drain(..) {
            // Resetting cannot fail (the spec allows only VK_SUCCESS).
            let _ =
                unsafe { d.reset_descriptor_pool(p.raw, vk::DescriptorPoolResetFlags::empty()) };
            self.free_desc_pools.push(p);
        }
        self.free_query_pools.extend(batch.query_pools);
        if batch.waits.iter().any(|(t, _)| Arc::strong_count(t) == 1) {
            // The last hold on another queue's timeline (that queue is
            // gone). A driver may still be releasing its own record of the
            // wait after signalling this batch (Mesa's emulated timelines
            // do, on their submit thread), so the semaphore goes only once
            // this queue is idle.
            self.drain_driver();
        }
        batch.waits.clear();
        // The buffers and pipelines the batch held are released here.
        batch.buffers.clear();
        batch.pipelines.clear();
        if self.spare.len() < SPARE_BATCHES {
            self.spare.push(Spare {
                buffers: batch.buffers,
                pipelines: batch.pipelines,
                desc_pools: batch.desc_pools,
            });
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Wait for everything submitted (ignoring device loss: then the
        // work is gone anyway), then release batches and destroy pools.
        let _ = self.wait_value(self.submitted, u64::MAX);
        // The timeline signal is not the driver's last touch of a batch:
        // Mesa's submit thread (lavapipe) releases the batch's waits on
        // other queues' timelines after signalling, and a semaphore
        // destroyed in between was a use after free (a SIGSEGV in lavapipe
        // now and then when an engine was dropped). An idle queue has
        // finished with all of them.
        self.drain_driver();
        let _ = self.poll();
        // The shared state, not the `ash::Device`: its function tables are about
        // 1.5 KB to copy.
        let shared = self.device.shared.clone();
        let d = &shared.raw;
        // SAFETY: nothing of this queue is pending any more. An unsubmitted
        // open batch's command buffer is freed with its pool.
        unsafe {
            for b in self.in_flight.drain(..).chain(self.open.take()) {
                for p in b.desc_pools {
                    d.destroy_descriptor_pool(p.raw, None);
                }
                for q in b.query_pools {
                    d.destroy_query_pool(q, None);
                }
            }
            for p in self.free_desc_pools.drain(..) {
                d.destroy_descriptor_pool(p.raw, None);
            }
            for q in self.free_query_pools.drain(..) {
                d.destroy_query_pool(q, None);
            }
            d.destroy_command_pool(self.cmd_pool, None);
        }
        // `timeline` is destroyed when the last batch waiting on it goes.
    }
}

#[cfg(test)]
mod tests;
