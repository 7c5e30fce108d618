//! A logical device (`VkDevice`) on one adapter, with its allocator, its
//! pipeline cache and every queue it can use for compute or copies.
//!
//! Shape: [`Device`] is a clonable handle onto `Arc<DeviceShared>`; buffers,
//! pipelines and queues each hold such an `Arc`, so the device outlives all
//! its children and its `Drop` (wait idle, destroy the pipeline cache, drop
//! the allocator, destroy the device) runs exactly once, last. The
//! `DeviceShared` in turn holds the instance's `Arc`.
//!
//! Every queue of every compute-capable family and of every transfer-only
//! family is opened at creation: accl queue numbers are mapped round robin
//! onto the compute queues, and copy engines are recorded
//! separately so that later stages can route copies to them. Several accl
//! queues may share one `VkQueue` (lavapipe has a single one), so each
//! `VkQueue` carries its own submission mutex (`vkQueueSubmit` requires
//! external synchronisation of the queue).
//!
//! Nothing here prevents opening several `Device`s on the same physical
//! device: each has its own `VkDevice`, allocator and queues, which is how
//! tests emulate a multi-GPU machine on lavapipe.

use std::ffi::CStr;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use gpu_allocator::{AllocationSizes, AllocatorDebugSettings};

use crate::clocks::{ClockHold, ClockHoldState};
use crate::error::{vkerr, Result, VkError};
use crate::instance::{AdapterFeatures, AdapterInfo, Instance, InstanceShared, QueueFamilyInfo};
use crate::submit::Submitter;

pub mod external;

/// Which role a Vulkan queue has for accl.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueRole {
    /// A queue of a compute-capable family (runs kernels and copies).
    Compute,
    /// A queue of a transfer-only family (a copy engine).
    TransferOnly,
}

/// One opened Vulkan queue of a [`Device`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VkQueueInfo {
    /// Position in [`Device::vk_queues`].
    pub slot: usize,
    /// Queue family index.
    pub family: u32,
    /// Index within the family.
    pub index: u32,
    /// Compute or transfer-only.
    pub role: QueueRole,
    /// Valid timestamp bits of the family (0: no timestamps).
    pub timestamp_valid_bits: u32,
}

pub(crate) struct HwQueue {
    pub(crate) raw: vk::Queue,
    pub(crate) info: VkQueueInfo,
    /// `vkQueueSubmit` needs the queue externally synchronised (shared
    /// with the submission thread).
    pub(crate) submit_lock: Arc<Mutex<()>>,
}

/// Raw Vulkan handles of a [`Device`] ([`Device::raw_handles`]).
#[derive(Debug, Clone, Copy)]
pub struct RawHandles {
    pub instance: vk::Instance,
    pub physical_device: vk::PhysicalDevice,
    pub device: vk::Device,
    /// The device's Vulkan version (major, minor, patch).
    pub api_version: (u32, u32, u32),
}

/// Shared internals of a [`Device`].
pub(crate) struct DeviceShared {
    pub(crate) raw: ash::Device,
    pub(crate) physical: vk::PhysicalDevice,
    pub(crate) info: AdapterInfo,
    pub(crate) enabled: AdapterFeatures,
    /// `None` only during drop (the allocator must go before the device).
    allocator: Mutex<Option<Allocator>>,
    pub(crate) queues: Vec<HwQueue>,
    /// The families of those queues: buffers are shared by all of them.
    pub(crate) families: Vec<u32>,
    /// Read-locked to create pipelines (thread-safe per the spec), write
    /// locked to merge into it (externally synchronised).
    pub(crate) pipeline_cache: RwLock<vk::PipelineCache>,
    /// Importing host memory (VK_EXT_external_memory_host), where the
    /// device has it.
    pub(crate) host_import: Option<HostImport>,
    /// Binding a kernel's buffers by pushing them into the command buffer
    /// (VK_KHR_push_descriptor), where the device has it: no descriptor set
    /// is allocated and written per dispatch. With the most bindings one
    /// push may carry.
    pub(crate) push_descriptor: Option<(ash::khr::push_descriptor::Device, u32)>,
    /// Dropped after `Drop::drop` has destroyed the device.
    pub(crate) instance: Arc<InstanceShared>,
    /// Made by the program that embeds accl ([`Device::from_external`]):
    /// never destroyed here (accl's own objects on it are).
    external: bool,
    /// Keeps an NVIDIA GPU at its working clocks while the device is open.
    clock_hold: Option<ClockHold>,
    /// Large buffers dropped and kept for reuse ([`crate::retained::Retained`]).
    /// Lock order: the allocator first.
    retained: Mutex<Vec<crate::retained::Retained>>,
    /// Where [`crate::Queue::hand_off`] sends batches, if the device has
    /// a submission thread ([`crate::submit`]).
    pub(crate) submitter: Option<Submitter>,
    /// Where opening it went.
    pub(crate) open_times: OpenTimes,
}

/// Where the time to open a device went, for a user who asks why a short
/// run is slow: on an NVIDIA GPU the driver's own start is most of it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpenTimes {
    /// Listing the adapters and querying the chosen one's properties.
    pub adapters: Duration,
    /// `vkCreateDevice` and getting its queues.
    pub create: Duration,
    /// accl's own objects on it: the memory allocator, the pipeline
    /// cache, the submission thread.
    pub setup: Duration,
}

/// What importing host allocations needs: the extension's function, the
/// alignment of an imported range, and the memory types to choose from.
pub(crate) struct HostImport {
    pub(crate) fns: ash::ext::external_memory_host::Device,
    pub(crate) align: u64,
    pub(crate) memory: vk::PhysicalDeviceMemoryProperties,
}

impl DeviceShared {
    /// The error of a batch the submission thread failed to submit.
    pub(crate) fn submit_failure(&self) -> Option<VkError> {
        self.submitter.as_ref().and_then(Submitter::failure)
    }

    /// How buffers are shared between queue families: concurrently by
    /// every family opened when there are several (NVIDIA's
    /// graphics+compute and compute-only families, copy engines), so that
    /// no queue family ownership transfers are needed. (Buffers are not
    /// compressed, so concurrent sharing costs nothing.)
    pub(crate) fn sharing<'a>(
        &'a self,
        info: vk::BufferCreateInfo<'a>,
    ) -> vk::BufferCreateInfo<'a> {
        if self.families.len() > 1 {
            info.sharing_mode(vk::SharingMode::CONCURRENT)
                .queue_family_indices(&self.families)
        } else {
            info.sharing_mode(vk::SharingMode::EXCLUSIVE)
        }
    }

    /// Keeps a dropped buffer for reuse, unless the kept ones would then
    /// hold more than a quarter of the device's memory (it comes back).
    pub(crate) fn retain(&self, b: crate::retained::Retained) -> Option<crate::retained::Retained> {
        let mut kept = self.retained.lock().unwrap_or_else(|e| e.into_inner());
        let held: u64 = kept.iter().map(|k| k.bytes()).sum();
        let cap = match self.info.device_local_memory {
            0 => 4 << 30,
            m => m / 4,
        };
        if held + b.bytes() > cap {
            return Some(b);
        }
        kept.push(b);
        None
    }

    /// A kept buffer of exactly this size and use.
    pub(crate) fn take_retained(
        &self,
        raw_size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Option<crate::retained::Retained> {
        let mut kept = self.retained.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|k| k.fits(raw_size, usage))?;
        Some(kept.swap_remove(i))
    }

    /// Frees every kept buffer (with the allocator held); whether there
    /// were any.
    pub(crate) fn release_retained(&self, allocator: &mut Allocator) -> bool {
        let kept: Vec<_> =
            std::mem::take(&mut *self.retained.lock().unwrap_or_else(|e| e.into_inner()));
        let any = !kept.is_empty();
        for k in kept {
            k.free(&self.raw, allocator);
        }
        any
    }

    pub(crate) fn allocator(&self) -> MutexGuard<'_, Option<Allocator>> {
        // A poisoned lock only means a panic elsewhere; the allocator is
        // still consistent (its methods do not unwind mid-update).
        self.allocator.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // SAFETY: this is the last reference: every buffer, pipeline and
        // queue holds an Arc of it, so all of them are gone. Order: idle,
        // cache, allocator (frees its memory blocks), device.
        // The thread goes first: it uses the device (every queue, whose
        // batches it submits, is gone, so it has nothing left to do). Before
        // the lock: with validation its polls take it.
        drop(self.submitter.take());
        let _serial = crate::lifecycle_lock();
        unsafe {
            let _ = self.raw.device_wait_idle();
            let cache = *self
                .pipeline_cache
                .get_mut()
                .unwrap_or_else(|e| e.into_inner());
            self.raw.destroy_pipeline_cache(cache, None);
            {
                let mut a = self.allocator();
                if let Some(a) = a.as_mut() {
                    self.release_retained(a);
                }
            }
            drop(self.allocator().take());
            if !self.external {
                self.raw.destroy_device(None);
            }
        }
    }
}

/// A logical Vulkan device (cheap to clone).
#[derive(Clone)]
pub struct Device {
    pub(crate) shared: Arc<DeviceShared>,
}

impl Device {
    /// Bytes of device memory the allocator has handed out now, and the
    /// bytes of the memory blocks it holds (handed out or not): what a soak
    /// watches for leaks.
    pub fn memory_in_use(&self) -> (u64, u64) {
        match self.shared.allocator().as_ref() {
            Some(a) => {
                let r = a.generate_report();
                (r.total_allocated_bytes, r.total_capacity_bytes)
            }
            None => (0, 0),
        }
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("adapter", &self.shared.info.name)
            .field("queues", &self.vk_queues())
            .finish()
    }
}

fn has_ext(info: &AdapterInfo, name: &CStr) -> bool {
    info.extensions
        .iter()
        .any(|e| e.as_bytes() == name.to_bytes())
}

impl Device {
    /// Opens a logical device on adapter `adapter` (an index into
    /// [`Instance::adapters`]). Timeline semaphores are required.
    pub fn new(instance: &Instance, adapter: usize) -> Result<Device> {
        Self::open(instance, adapter, None, None)
    }

    /// [`Device::new`] with a submission thread ([`Queue::hand_off`]) or
    /// without, whatever the device and `ACCL_SUBMIT_THREAD` say.
    ///
    /// [`Queue::hand_off`]: crate::Queue::hand_off
    pub fn with_submission_thread(instance: &Instance, adapter: usize, on: bool) -> Result<Device> {
        Self::open(instance, adapter, Some(on), None)
    }

    /// [`Device::new`] for work that goes to one compute queue (a program
    /// with no async queues): on NVIDIA, whose driver takes about 18 ms a
    /// queue to create, only the first compute family's queue is made,
    /// besides the copy engines'. Async queues still work on such a
    /// device, one after another on that queue.
    pub fn for_sync_work(instance: &Instance, adapter: usize) -> Result<Device> {
        Self::open(instance, adapter, None, Some(1))
    }

    fn open(
        instance: &Instance,
        adapter: usize,
        thread: Option<bool>,
        compute_queues: Option<usize>,
    ) -> Result<Device> {
        let _serial = crate::lifecycle_lock();
        let t0 = Instant::now();
        let pds = instance.physical_devices()?;
        let count = pds.len();
        let (physical, info) = pds.into_iter().nth(adapter).ok_or(VkError::NoAdapter {
            index: adapter,
            count,
        })?;
        let avail = info.features.clone();
        if !avail.timeline_semaphore {
            return Err(VkError::MissingFeature {
                adapter: info.name.clone(),
                feature: "timeline semaphores (Vulkan 1.2)",
            });
        }

        let families = families_to_open(&info, compute_queues);
        let max_count = families.iter().map(|q| q.count).max().unwrap_or(1) as usize;
        let priorities = vec![1.0f32; max_count];
        let queue_infos: Vec<_> = families
            .iter()
            .map(|q| {
                vk::DeviceQueueCreateInfo::default()
                    .queue_family_index(q.index)
                    .queue_priorities(&priorities[..q.count as usize])
            })
            .collect();

        // Extensions.
        let mut ext_ptrs = Vec::new();
        let atomic_float = has_ext(&info, ash::ext::shader_atomic_float::NAME);
        if atomic_float {
            ext_ptrs.push(ash::ext::shader_atomic_float::NAME.as_ptr());
        }
        // Lets copies to and from host arrays skip the staging buffer.
        let host_import = has_ext(&info, ash::ext::external_memory_host::NAME);
        if host_import {
            ext_ptrs.push(ash::ext::external_memory_host::NAME.as_ptr());
        }
        // `ACCL_PUSH_DESCRIPTORS=0` keeps descriptor sets (for measuring,
        // and so the tests cover both ways of binding).
        let push_descriptor = has_ext(&info, ash::khr::push_descriptor::NAME)
            && std::env::var_os("ACCL_PUSH_DESCRIPTORS").is_none_or(|v| v != "0");
        if push_descriptor {
            ext_ptrs.push(ash::khr::push_descriptor::NAME.as_ptr());
        }
        if has_ext(&info, ash::khr::portability_subset::NAME) {
            ext_ptrs.push(ash::khr::portability_subset::NAME.as_ptr());
        }

        // Features: everything useful that exists.
        let t_create = Instant::now();
        let b = |x: bool| if x { vk::TRUE } else { vk::FALSE };
        let f10 = vk::PhysicalDeviceFeatures::default()
            .robust_buffer_access(avail.robust_buffer_access)
            .shader_float64(avail.shader_float64)
            .shader_int64(avail.shader_int64)
            .shader_int16(avail.shader_int16);
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(avail.storage_buffer_16bit_access);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .timeline_semaphore(true)
            .shader_int8(avail.shader_int8)
            .storage_buffer8_bit_access(avail.storage_buffer_8bit_access)
            .shader_buffer_int64_atomics(avail.shader_buffer_int64_atomics)
            .buffer_device_address(avail.buffer_device_address);
        // Only the add bits: float load/store/exchange can be done on the
        // integer bit patterns, and enabling what is absent is an error.
        let mut fatomic = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT {
            shader_buffer_float32_atomic_add: b(avail.shader_buffer_float32_atomic_add),
            shader_buffer_float64_atomic_add: b(avail.shader_buffer_float64_atomic_add),
            ..Default::default()
        };
        let mut features2 = vk::PhysicalDeviceFeatures2::default()
            .features(f10)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if atomic_float {
            features2 = features2.push_next(&mut fatomic);
        }
        let create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_infos)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut features2);
        let raw_instance = &instance.shared.raw;
        // SAFETY: `physical` belongs to this instance; all pointers outlive the call.
        let raw = unsafe { raw_instance.create_device(physical, &create, None) }
            .map_err(vkerr("vkCreateDevice"))?;

        let mut queues = Vec::new();
        for q in &families {
            for i in 0..q.count {
                // SAFETY: the device was created with `q.count` queues of it.
                queues.push(unsafe { hw_queue(&raw, q, i, queues.len()) });
            }
        }

        let families = families.iter().map(|q| q.index).collect();
        let times = OpenTimes {
            adapters: t_create - t0,
            create: t_create.elapsed(),
            setup: Duration::ZERO,
        };
        let enabled = AdapterFeatures {
            timeline_semaphore: true,
            ..avail
        };
        let ext = Extensions {
            host_import,
            push_descriptor,
            submission_thread: thread.unwrap_or_else(|| crate::submit::wanted(&info)),
        };
        // SAFETY: made above on `physical` of this instance, with these
        // queues and extensions; destroyed there if assembling fails.
        unsafe {
            assemble(
                instance, raw, physical, info, enabled, queues, families, ext, false,
            )
        }
        .map(|mut d| {
            if let Some(s) = Arc::get_mut(&mut d.shared) {
                s.open_times = OpenTimes {
                    setup: t_create.elapsed() - times.create,
                    ..times
                };
            }
            d
        })
    }

    /// The queue families accl's queues use on this device (buffers are
    /// shared concurrently by all of them when there are several).
    pub fn queue_families(&self) -> Vec<u32> {
        self.shared.families.clone()
    }

    /// The Vulkan handles of this device, for a host program that records
    /// its own work on it (the handles stay valid while the `Device`
    /// lives; the host program must not destroy them).
    pub fn raw_handles(&self) -> RawHandles {
        RawHandles {
            instance: self.shared.instance.raw.handle(),
            physical_device: self.shared.physical,
            device: self.shared.raw.handle(),
            api_version: self.shared.info.api_version,
        }
    }

    /// Where the time to open it went (zero for a device the embedder
    /// made).
    pub fn open_times(&self) -> OpenTimes {
        self.shared.open_times
    }

    /// The adapter this device runs on.
    pub fn info(&self) -> &AdapterInfo {
        &self.shared.info
    }

    /// Whether host memory can be imported ([`crate::HostBuffer`]).
    /// Whether kernels' buffers are pushed into the command buffer
    /// (VK_KHR_push_descriptor) rather than bound through descriptor sets.
    pub fn pushes_descriptors(&self) -> bool {
        self.shared.push_descriptor.is_some()
    }

    pub fn imports_host_memory(&self) -> bool {
        self.shared.host_import.is_some()
    }

    /// The features enabled on this device.
    pub fn features(&self) -> &AdapterFeatures {
        &self.shared.enabled
    }

    /// The instance this device belongs to.
    pub fn instance(&self) -> Instance {
        Instance {
            shared: self.shared.instance.clone(),
        }
    }

    /// Every opened Vulkan queue: compute queues first (in family order),
    /// then transfer-only ones.
    pub fn vk_queues(&self) -> Vec<VkQueueInfo> {
        let mut v: Vec<_> = self.shared.queues.iter().map(|q| q.info).collect();
        v.sort_by_key(|q| (q.role == QueueRole::TransferOnly, q.slot));
        v
    }

    /// The compute-capable Vulkan queues.
    pub fn compute_queues(&self) -> Vec<VkQueueInfo> {
        self.vk_queues()
            .into_iter()
            .filter(|q| q.role == QueueRole::Compute)
            .collect()
    }

    /// The queues of transfer-only families (copy engines); may be empty.
    pub fn transfer_queues(&self) -> Vec<VkQueueInfo> {
        self.vk_queues()
            .into_iter()
            .filter(|q| q.role == QueueRole::TransferOnly)
            .collect()
    }

    /// The compute queue accl queue number `n` maps to: round robin over
    /// the compute queues in use, taking one queue of each family in turn
    /// (queue 0 of every family, then queue 1, ...), so that consecutive
    /// accl queues land on different families (on NVIDIA, the
    /// graphics+compute family and the compute-only one) where the hardware
    /// runs them concurrently. Which queues are in use:
    /// [`Device::hardware_queues`].
    pub fn compute_queue_for(&self, n: usize) -> VkQueueInfo {
        let mut c = self.compute_queues();
        c.sort_by_key(|q| (q.index, q.family));
        c.truncate(self.hardware_queues().max(1));
        c[n % c.len()]
    }

    /// How many compute queues accl queues are spread over: every one,
    /// except on NVIDIA, where queues of one family time-slice rather than
    /// run side by side: measured on an H200, 16 accl queues over 16
    /// hardware queues ran 16 Mandelbrot blocks 1.8x slower than over one
    /// queue per family, so there it is one queue per family.
    /// `ACCL_HW_QUEUES=N` overrides both (a tuning knob).
    pub fn hardware_queues(&self) -> usize {
        let all = self.compute_queues();
        if let Some(k) = std::env::var("ACCL_HW_QUEUES")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            return k.clamp(1, all.len().max(1));
        }
        if self.info().vendor_id == 0x10de {
            let mut fams: Vec<u32> = all.iter().map(|q| q.family).collect();
            fams.sort_unstable();
            fams.dedup();
            return fams.len();
        }
        all.len()
    }

    /// Whether batches handed off ([`crate::Queue::hand_off`]) go to a
    /// submission thread.
    pub fn submits_on_a_thread(&self) -> bool {
        self.shared.submitter.is_some()
    }

    /// Whether the submission thread sleeps with nothing to submit (so a
    /// batch handed off now is submitted on the caller's thread); false
    /// without a thread.
    pub fn submission_thread_asleep(&self) -> bool {
        self.shared
            .submitter
            .as_ref()
            .is_some_and(Submitter::asleep)
    }

    /// Batches ever handed to the submission thread.
    pub fn batches_handed_over(&self) -> u64 {
        self.shared.submitter.as_ref().map_or(0, Submitter::handed)
    }

    /// Batches handed off and not yet submitted (held ones among them).
    pub fn batches_on_thread(&self) -> u64 {
        self.shared
            .submitter
            .as_ref()
            .map_or(0, Submitter::unsubmitted)
    }

    /// Blocks until the device has finished all submitted work, handed-off
    /// batches included.
    pub fn wait_idle(&self) -> Result<()> {
        if let Some(t) = &self.shared.submitter {
            t.drain();
        }
        // vkDeviceWaitIdle requires all of the device's queues to be
        // externally synchronised.
        let _guards: Vec<_> = self
            .shared
            .queues
            .iter()
            .map(|q| q.submit_lock.lock().unwrap_or_else(|e| e.into_inner()))
            .collect();
        unsafe { self.shared.raw.device_wait_idle() }.map_err(vkerr("vkDeviceWaitIdle"))
    }

    /// Whether accl holds this GPU at its working clocks (see
    /// [`crate::clocks`]).
    pub fn clock_hold(&self) -> ClockHoldState {
        ClockHold::state(self.shared.clock_hold.as_ref())
    }

    /// Bytes currently allocated by the device's allocator (blocks included).
    pub fn allocated_bytes(&self) -> u64 {
        self.shared
            .allocator()
            .as_ref()
            .map(|a| a.capacity())
            .unwrap_or(0)
    }

    /// The current contents of the device's pipeline cache.
    pub fn pipeline_cache_data(&self) -> Result<Vec<u8>> {
        let cache = self
            .shared
            .pipeline_cache
            .read()
            .unwrap_or_else(|e| e.into_inner());
        unsafe { self.shared.raw.get_pipeline_cache_data(*cache) }
            .map_err(vkerr("vkGetPipelineCacheData"))
    }

    /// Writes the pipeline cache to `path` (created or replaced).
    pub fn save_pipeline_cache(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let data = self.pipeline_cache_data()?;
        std::fs::write(path, data).map_err(|source| VkError::CacheIo {
            path: path.display().to_string(),
            source,
        })
    }

    /// Merges the pipeline cache saved at `path` into the device's cache.
    /// Data written by another driver or device is ignored by the driver
    /// (the cache header says whom it belongs to), so a stale file is
    /// harmless. Returns the number of bytes read.
    pub fn load_pipeline_cache(&self, path: impl AsRef<Path>) -> Result<usize> {
        let path = path.as_ref();
        let data = std::fs::read(path).map_err(|source| VkError::CacheIo {
            path: path.display().to_string(),
            source,
        })?;
        self.merge_pipeline_cache_data(&data)?;
        Ok(data.len())
    }

    /// Merges cache data (as returned by [`Device::pipeline_cache_data`]).
    pub fn merge_pipeline_cache_data(&self, data: &[u8]) -> Result<()> {
        if !pipeline_cache_header_matches(&self.shared.info, self.physical_uuid(), data) {
            // Not ours: the driver would ignore it anyway; do not pass
            // foreign bytes to it.
            return Ok(());
        }
        let raw = &self.shared.raw;
        let info = vk::PipelineCacheCreateInfo::default().initial_data(data);
        let src = unsafe { raw.create_pipeline_cache(&info, None) }
            .map_err(vkerr("vkCreatePipelineCache"))?;
        let dst = self
            .shared
            .pipeline_cache
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let r = unsafe { raw.merge_pipeline_caches(*dst, &[src]) };
        unsafe { raw.destroy_pipeline_cache(src, None) };
        r.map_err(vkerr("vkMergePipelineCaches"))
    }

    fn physical_uuid(&self) -> [u8; vk::UUID_SIZE] {
        let props = unsafe {
            self.shared
                .instance
                .raw
                .get_physical_device_properties(self.shared.physical)
        };
        props.pipeline_cache_uuid
    }
}

/// Checks the version-one header of pipeline cache data (spec: "Pipeline
/// Cache Header"): length, version, vendor, device, cache UUID.
fn pipeline_cache_header_matches(
    info: &AdapterInfo,
    uuid: [u8; vk::UUID_SIZE],
    data: &[u8],
) -> bool {
    if data.len() < 32 {
        return false;
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let header_len = word(0) as usize;
    header_len >= 32
        && header_len <= data.len()
        && word(4) == vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32
        && word(8) == info.vendor_id
        && word(12) == info.device_id
        && data[16..32] == uuid
}

/// The optional device extensions accl asked for (or the embedder enabled).
struct Extensions {
    host_import: bool,
    push_descriptor: bool,
    /// Start a submission thread ([`crate::submit`]).
    submission_thread: bool,
}

/// A [`Device`] from a created `VkDevice`: its allocator, pipeline cache
/// and extension functions. On failure an accl-made device (`!external`)
/// is destroyed; an embedder's is left to it.
///
/// # Safety
/// `raw` is a live device of `physical` on `instance`, created with
/// `queues` and the extensions `ext` names.
#[allow(clippy::too_many_arguments)]
unsafe fn assemble(
    instance: &Instance,
    raw: ash::Device,
    physical: vk::PhysicalDevice,
    info: AdapterInfo,
    enabled: AdapterFeatures,
    queues: Vec<HwQueue>,
    families: Vec<u32>,
    ext: Extensions,
    external: bool,
) -> Result<Device> {
    let raw_instance = &instance.shared.raw;
    let fail = |e: VkError| {
        if !external {
            raw.destroy_device(None);
        }
        e
    };
    let allocator = Allocator::new(&AllocatorCreateDesc {
        instance: raw_instance.clone(),
        device: raw.clone(),
        physical_device: physical,
        debug_settings: AllocatorDebugSettings::default(),
        // Every allocation can then hold a buffer kernels reach by address.
        buffer_device_address: enabled.buffer_device_address,
        allocation_sizes: AllocationSizes::new(64 << 20, 16 << 20),
    })
    .map_err(|e| {
        fail(VkError::Allocator {
            requested: 0,
            what: "the device allocator".into(),
            message: e.to_string(),
        })
    })?;
    let cache = match raw.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) {
        Ok(c) => c,
        Err(e) => {
            drop(allocator);
            return Err(fail(VkError::from_vk("vkCreatePipelineCache", e)));
        }
    };
    let host_import = ext
        .host_import
        .then(|| host_import_of(raw_instance, &raw, physical));
    let push_descriptor = ext
        .push_descriptor
        .then(|| push_descriptor_of(raw_instance, &raw, physical));
    let clock_hold = ClockHold::start(info.vendor_id, device_uuid(raw_instance, physical));
    let submitter = if ext.submission_thread {
        let hw = queues.iter().map(|q| (q.raw, q.submit_lock.clone()));
        let validation = instance.shared.validation;
        Some(Submitter::start(
            raw.clone(),
            hw.collect(),
            &info.name,
            validation,
        )?)
    } else {
        None
    };
    Ok(Device {
        shared: Arc::new(DeviceShared {
            raw,
            physical,
            info,
            enabled,
            allocator: Mutex::new(Some(allocator)),
            queues,
            families,
            pipeline_cache: RwLock::new(cache),
            host_import,
            push_descriptor,
            instance: instance.shared.clone(),
            external,
            clock_hold,
            retained: Mutex::new(Vec::new()),
            submitter,
            open_times: OpenTimes::default(),
        }),
    })
}

/// `VkPhysicalDeviceIDProperties::deviceUUID` of `physical`.
///
/// # Safety
/// `physical` belongs to `instance` (Vulkan 1.1 or later).
unsafe fn device_uuid(instance: &ash::Instance, physical: vk::PhysicalDevice) -> [u8; 16] {
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
    instance.get_physical_device_properties2(physical, &mut props);
    id.device_uuid
}

/// What importing host memory needs on `raw` (VK_EXT_external_memory_host).
///
/// # Safety
/// `physical` belongs to `instance`; `raw` is a device of it with the
/// extension enabled.
unsafe fn host_import_of(
    instance: &ash::Instance,
    raw: &ash::Device,
    physical: vk::PhysicalDevice,
) -> HostImport {
    let mut p = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p);
    instance.get_physical_device_properties2(physical, &mut p2);
    let align = p.min_imported_host_pointer_alignment.max(1);
    HostImport {
        fns: ash::ext::external_memory_host::Device::new(instance, raw),
        align,
        memory: instance.get_physical_device_memory_properties(physical),
    }
}

/// The push-descriptor functions of `raw` and the most bindings one push
/// carries (VK_KHR_push_descriptor).
///
/// # Safety
/// As [`host_import_of`], with that extension enabled.
unsafe fn push_descriptor_of(
    instance: &ash::Instance,
    raw: &ash::Device,
    physical: vk::PhysicalDevice,
) -> (ash::khr::push_descriptor::Device, u32) {
    let mut p = vk::PhysicalDevicePushDescriptorPropertiesKHR::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p);
    instance.get_physical_device_properties2(physical, &mut p2);
    (
        ash::khr::push_descriptor::Device::new(instance, raw),
        p.max_push_descriptors,
    )
}

/// Queue `i` of family `q` of `raw`, the `slot`-th accl uses.
///
/// # Safety
/// `raw` was created with at least `i + 1` queues of that family.
/// The queue families a device opens, each with the number of its queues
/// to create: all of every compute family and of every transfer-only
/// family, except on NVIDIA, whose driver takes about 18 ms per queue in
/// `vkCreateDevice` (all 34 of an H100's: 650-780 ms, against 57 ms for
/// one). There only the queues accl uses are made: one per compute family
/// ([`Device::hardware_queues`]), or `compute_queues` (`ACCL_HW_QUEUES=N`
/// asks for N) spread over the families in order, and two of the first
/// transfer-only family (the copy engines' queue and its companion for
/// split copies).
fn families_to_open(info: &AdapterInfo, compute_queues: Option<usize>) -> Vec<QueueFamilyInfo> {
    let all = info
        .queue_families
        .iter()
        .filter(|q| q.count > 0 && (q.compute || q.is_transfer_only()));
    if info.vendor_id != 0x10de {
        return all.cloned().collect();
    }
    let compute_families = all.clone().filter(|q| q.compute).count().max(1);
    let wanted = std::env::var("ACCL_HW_QUEUES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .or(compute_queues)
        .unwrap_or(compute_families)
        .max(1);
    let first_transfer = all.clone().find(|q| q.is_transfer_only()).map(|q| q.index);
    let mut nth_compute = 0;
    all.filter(|q| q.compute || Some(q.index) == first_transfer)
        .filter_map(|q| {
            let count = if q.compute {
                // Family k of F gets the k-th share of the wanted queues.
                let k = nth_compute;
                nth_compute += 1;
                (wanted / compute_families + usize::from(k < wanted % compute_families)) as u32
            } else {
                2
            };
            (count > 0).then(|| QueueFamilyInfo {
                count: q.count.min(count),
                ..q.clone()
            })
        })
        .collect()
}

unsafe fn hw_queue(raw: &ash::Device, q: &QueueFamilyInfo, i: u32, slot: usize) -> HwQueue {
    HwQueue {
        raw: raw.get_device_queue(q.index, i),
        info: VkQueueInfo {
            slot,
            family: q.index,
            index: i,
            role: if q.compute {
                QueueRole::Compute
            } else {
                QueueRole::TransferOnly
            },
            timestamp_valid_bits: q.timestamp_valid_bits,
        },
        submit_lock: Arc::new(Mutex::new(())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InstanceOptions;

    /// An H100's queue families: graphics+compute (16), transfer-only (2),
    /// compute-only (8), and two more transfer-only ones (7 and 1).
    fn h100_families(mut info: AdapterInfo) -> AdapterInfo {
        let fam = |index, compute, graphics, count| QueueFamilyInfo {
            index,
            compute,
            transfer: true,
            graphics,
            count,
            timestamp_valid_bits: 64,
        };
        info.queue_families = vec![
            fam(0, true, true, 16),
            fam(1, false, false, 2),
            fam(2, true, false, 8),
            fam(3, false, false, 7),
            fam(4, false, false, 1),
        ];
        info
    }

    #[test]
    fn nvidia_opens_only_the_queues_accl_uses() {
        let instance = Instance::new(&InstanceOptions::default()).unwrap();
        let info = h100_families(instance.adapters().unwrap().remove(0));
        let counts_for = |info: &AdapterInfo, wanted: Option<usize>| -> Vec<(u32, u32)> {
            families_to_open(info, wanted)
                .iter()
                .map(|q| (q.index, q.count))
                .collect()
        };
        let counts = |info: &AdapterInfo| counts_for(info, None);
        // Elsewhere, every queue of every family accl can use.
        let other = AdapterInfo {
            vendor_id: 0x1002,
            ..info.clone()
        };
        assert_eq!(counts(&other), [(0, 16), (1, 2), (2, 8), (3, 7), (4, 1)]);
        let nvidia = AdapterInfo {
            vendor_id: 0x10de,
            ..info
        };
        if std::env::var_os("ACCL_HW_QUEUES").is_none() {
            assert_eq!(counts(&nvidia), [(0, 1), (1, 2), (2, 1)]);
            // Work for one queue: the first compute family's, and the
            // copy engines'.
            assert_eq!(counts_for(&nvidia, Some(1)), [(0, 1), (1, 2)]);
            assert_eq!(counts_for(&nvidia, Some(3)), [(0, 2), (1, 2), (2, 1)]);
        }
    }

    /// The messenger really records layer messages: a deliberately invalid
    /// call (a buffer of size 0) must produce one, and taking clears it.
    #[test]
    fn validation_messages_are_captured() {
        let instance = Instance::new(&InstanceOptions {
            validation: true,
            app_name: "unit".into(),
        })
        .unwrap();
        let dev = Device::new(&instance, 0).unwrap();
        let info = vk::BufferCreateInfo::default()
            .size(0)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: deliberately invalid; the layer reports it (and may skip
        // the call). Whatever was created is destroyed.
        unsafe {
            if let Ok(b) = dev.shared.raw.create_buffer(&info, None) {
                dev.shared.raw.destroy_buffer(b, None);
            }
        }
        let msgs = instance.take_validation_messages();
        assert!(
            msgs.iter()
                .any(|m| m.contains("VUID-VkBufferCreateInfo-size-00912")),
            "{msgs:?}"
        );
        assert!(instance.validation_messages().is_empty());
        drop(dev);
        assert!(instance.validation_messages().is_empty());
    }
}
