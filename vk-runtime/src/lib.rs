//! accl's Vulkan compute runtime: instance, devices, memory, pipelines and
//! queues. It knows nothing of the language; the SPIR-V emitter and the
//! interpreter drive it.
//!
//! One module per concept: [`instance`] (the `VkInstance`, validation
//! messages, adapter descriptions), [`device`] (a `VkDevice` with its
//! allocator, pipeline cache and queues), [`memory`] (storage and staging
//! buffers), [`pipeline`] (compute pipelines), [`queue`] (accl queues on
//! timeline semaphores), [`clocks`] (keeping an NVIDIA GPU at its working
//! clocks while it is open) and [`error`].
//!
//! # Ownership and teardown order
//!
//! This is the one place the order is written down; `Drop`
//! impls enforce it because every child holds an `Arc` of its parent:
//!
//! 1. **Work and allocations.** A [`Queue`] drop waits for its last
//!    submitted value, releases its in-flight batches (which hold `Arc`s
//!    of every buffer, pipeline and foreign semaphore they use) and destroys
//!    its command, descriptor and query pools. A buffer's `Drop` frees its
//!    gpu-allocator allocation, then destroys the `VkBuffer`.
//! 2. **Resources.** Pipelines (pipeline, layout, set layout) and timeline
//!    semaphores are destroyed when their last `Arc` (user handle or
//!    pending batch) goes.
//! 3. **Allocator.** The device's `Drop` runs only when all of the above
//!    are gone: it waits for the device to be idle, destroys the pipeline
//!    cache, drops the allocator (freeing its memory blocks) and then
//! 4. **Device** (`vkDestroyDevice`), and releases its `Arc` of the
//! 5. **Instance**, whose `Drop` destroys the debug messenger and then the
//!    `VkInstance`; the validation-message list outlives both.
//!
//! With the validation layer on, creating and dropping everything in any
//! order the types allow produces no message.

pub mod clocks;
pub mod device;
pub mod error;
pub mod event;
pub mod instance;
pub mod memory;
pub mod pipeline;
pub mod queue;
mod retained;
mod submit;
pub mod testing;

/// Serialises instance and device creation and destruction across the
/// process. The loader, the validation layer (1.3.239 shares its layer
/// settings between instances) and some drivers are not safe when two
/// threads create or destroy instances at once: CI saw a SIGSEGV with test
/// threads each opening their own validated instance. Cheap: these calls are
/// rare and slow anyway.
pub(crate) fn lifecycle_lock() -> std::sync::MutexGuard<'static, ()> {
    LIFECYCLE.lock().unwrap_or_else(|e| e.into_inner())
}

static LIFECYCLE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// With the validation layer on, the same lock around shader-module and
/// pipeline creation and around polls of a timeline's value. The layer
/// (1.3.239) finds its data for each call in one map of the whole process,
/// which creating or destroying an instance or device writes without a lock
/// (KhronosGroup/Vulkan-ValidationLayers#4391): it crashed inside
/// `vkCreateComputePipelines` of one instance while another thread's
/// instance was busy (a SIGSEGV about once in 300 runs of a test binary),
/// and inside `vkGetSemaphoreCounterValue` of a thread polling a timeline
/// while another thread was in `vkCreateDevice` (CI, and one run in a few
/// dozen here under load), or reported that thread's live device unknown.
/// Polls are where one thread makes millions of calls while another opens
/// a device. Without validation, nothing is serialised.
pub(crate) fn validation_lock(validation: bool) -> Option<std::sync::MutexGuard<'static, ()>> {
    validation.then(lifecycle_lock)
}

pub use clocks::ClockHoldState;
pub use device::external::{ExternalDevice, EXTERNAL_FEATURES};
pub use device::{Device, OpenTimes, QueueRole, RawHandles, VkQueueInfo};
pub use error::{Result, VkError};
pub use event::HostEvent;
pub use instance::{
    AdapterFeatures, AdapterInfo, AdapterLimits, DeviceType, Instance, InstanceOptions,
    QueueFamilyInfo, StartTimes,
};
pub use memory::{Buffer, GpuBuffer, HostBuffer, StagingBuffer, StagingKind};
pub use pipeline::{Binding, ComputePipeline, TexelFormat};
pub use queue::{BufferBinding, CopyRegion, OpTiming, Queue, QueueStats, MAX_IN_FLIGHT};
