//! What a host program's own Vulkan code gets to share a device with accl
//! ([`crate::Engine::vulkan_device`], [`crate::Engine::device_buffer`]).

use ash::vk;

/// The Vulkan handles of an engine's device, and the queue its synchronous
/// work runs on. Valid while the engine lives; never destroy them.
///
/// A host program that records its own work on the device loads the
/// functions with `ash::Instance::load` / `ash::Device::load` from these
/// handles and its own `ash::Entry`, and submits to `queue_family` /
/// `queue_index`: on that queue, the barrier at the start of accl's next
/// batch orders accl's work after the host program's. Finish that work
/// (a fence) before the engine runs again.
#[derive(Debug, Clone)]
pub struct VulkanDevice {
    /// The accl device number.
    pub device_number: usize,
    pub instance: vk::Instance,
    pub physical_device: vk::PhysicalDevice,
    pub device: vk::Device,
    /// The device's Vulkan version (major, minor, patch).
    pub api_version: (u32, u32, u32),
    pub queue_family: u32,
    pub queue_index: u32,
    /// Every queue family accl uses on the device: a buffer the program
    /// hands to [`crate::Engine::map_device_array`] must be shared
    /// concurrently by them when there are several.
    pub queue_families: Vec<u32>,
}

/// The device copy of a present array: a range of a Vulkan storage buffer
/// holding the rows `first_row..first_row + rows` of the array, row-major,
/// elements of the array's type (`bool` as 4-byte words).
#[derive(Debug, Clone, Copy)]
pub struct DeviceBuffer {
    /// The accl device number.
    pub device_number: usize,
    pub buffer: vk::Buffer,
    /// Bytes from the start of `buffer` to the first element.
    pub offset: u64,
    /// Bytes of the rows held.
    pub size: u64,
    pub first_row: usize,
    pub rows: usize,
}

/// Why an array present as `n` sections on device `dev` has no one
/// [`DeviceBuffer`].
pub(crate) fn sections_error(dev: usize, n: usize) -> String {
    format!("it is present on device {dev} as {n} separate sections; one is needed")
}

thread_local! {
    /// The device copies the `host_data use_device(..)` constructs running
    /// on this thread hand over, by array id (innermost last).
    static USE_DEVICE: std::cell::RefCell<Vec<(u64, DeviceBuffer)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `f` with `bufs` handed over (a `host_data` construct's body).
pub(crate) fn with_use_device<R>(bufs: Vec<(u64, DeviceBuffer)>, f: impl FnOnce() -> R) -> R {
    let n = bufs.len();
    USE_DEVICE.with(|u| u.borrow_mut().extend(bufs));
    let r = f();
    USE_DEVICE.with(|u| {
        let mut u = u.borrow_mut();
        let keep = u.len().saturating_sub(n);
        u.truncate(keep);
    });
    r
}

/// The device copy of array `id` that a running `host_data` hands over.
pub(crate) fn use_device_of(id: u64) -> Option<DeviceBuffer> {
    USE_DEVICE.with(|u| {
        u.borrow()
            .iter()
            .rev()
            .find(|(a, _)| *a == id)
            .map(|(_, d)| *d)
    })
}
