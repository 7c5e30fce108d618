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
#[derive(Debug, Clone, Copy)]
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
