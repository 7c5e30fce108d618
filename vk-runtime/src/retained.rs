//! Large device buffers kept when dropped, for the next of their size.

use ash::vk;
use gpu_allocator::vulkan::{Allocation, Allocator};

/// A large device buffer dropped by its owner, kept with its memory for
/// the next buffer of the same size and use instead of being freed: on an
/// H100 freeing 8 GiB made the driver clear it in the background, taking
/// 13% of the memory bandwidth from the kernels of the next 20 ms (as
/// PyTorch's caching allocator, which never frees, does not). Freed when
/// an allocation would fail without them, and with the device.
pub(crate) struct Retained {
    raw: vk::Buffer,
    allocation: Allocation,
    raw_size: u64,
    usage: vk::BufferUsageFlags,
}

impl Retained {
    pub(crate) fn new(
        raw: vk::Buffer,
        allocation: Allocation,
        raw_size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Retained {
        Retained {
            raw,
            allocation,
            raw_size,
            usage,
        }
    }

    /// The buffer and its memory, to be used again.
    pub(crate) fn into_parts(self) -> (vk::Buffer, Allocation) {
        (self.raw, self.allocation)
    }

    /// Frees it (the caller holds the allocator).
    pub(crate) fn free(self, d: &ash::Device, allocator: &mut Allocator) {
        let _ = allocator.free(self.allocation);
        unsafe { d.destroy_buffer(self.raw, None) };
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.allocation.size()
    }

    pub(crate) fn fits(&self, raw_size: u64, usage: vk::BufferUsageFlags) -> bool {
        self.raw_size == raw_size && self.usage == usage
    }
}
