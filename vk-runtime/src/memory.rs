//! Device storage buffers and host-visible staging buffers.
//!
//! Shape: a buffer's Vulkan handle and its gpu-allocator `Allocation` live
//! in one `Arc<BufferInner>` that also holds the device's `Arc`. The user's
//! handle ([`Buffer`], [`StagingBuffer`]) is one owner; every queue batch
//! that records the buffer is another, so dropping a handle while the GPU
//! still uses the buffer is harmless: the memory is freed when the last
//! batch using it is observed complete. `Drop` of `BufferInner` frees the
//! allocation before destroying the buffer, both before the device.
//!
//! A [`Buffer`] is always a storage buffer. Without buffer device
//! addresses it is never larger than the device's `maxStorageBufferRange`,
//! the most one binding can show a kernel; with them it may be as large as
//! the device's largest buffer ([`Buffer::max_size`]), and kernels reach it through
//! its 64-bit address ([`Buffer::device_address`]). Bigger requests are
//! refused with [`VkError::BufferTooLarge`] naming both sizes; splitting is
//! the caller's job. Where the chosen memory is host-visible and coherent
//! (integrated GPUs, CPU drivers), it stays mapped and callers may copy
//! directly ([`Buffer::write`], [`Buffer::read`]) instead of staging.
//!
//! A [`HostBuffer`] is the other way round: host memory the caller owns
//! (an array's elements), imported through VK_EXT_external_memory_host so
//! that a copy engine moves bytes straight between it and device memory,
//! with no staging buffer and no host copy.

use std::fmt;
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::{AllocationError, MemoryLocation};

use crate::device::{Device, DeviceShared};
use crate::error::{vkerr, Result, VkError};
use crate::instance::DeviceType;
use crate::retained::Retained;

/// Buffers of at least this many bytes get memory of their own, allocated
/// for that buffer (`VkMemoryDedicatedAllocateInfo`): the driver then knows
/// the memory holds one buffer and may place it as it likes, as Vulkan
/// advises for large resources. (On an H100 it measured neither faster nor
/// slower than memory from the allocator's blocks.)
const DEDICATED_FROM: u64 = 64 << 20;

/// Device buffers at least this large are kept when dropped, for a later
/// buffer of the same size ([`Retained`]). From 16 MiB: below the
/// allocator's 64 MiB blocks' size, a buffer of 32-64 MiB fills a block of
/// its own, and making and freeing it each time (the array of private
/// copies a construct creates at every launch) cost ~2 ms of host time a
/// buffer on an H100 (`vkAllocateMemory`/`vkFreeMemory`).
pub(crate) const RETAIN_FROM: u64 = 16 << 20;

#[doc(hidden)]
pub struct BufferInner {
    pub(crate) raw: vk::Buffer,
    /// `None` only during drop, and for imported host memory.
    allocation: Option<Allocation>,
    /// Imported host memory ([`HostBuffer`]), freed after the buffer;
    /// null otherwise.
    imported: vk::DeviceMemory,
    /// Size the caller asked for (the Vulkan buffer is rounded up to 4).
    pub(crate) size: u64,
    host_visible: bool,
    name: String,
    /// Made and owned by the program that embeds accl
    /// ([`Buffer::from_external`]): never destroyed here.
    external: bool,
    /// Kept for reuse when dropped ([`Retained`]): its usage.
    retain: Option<vk::BufferUsageFlags>,
    /// Made with `UNIFORM_TEXEL_BUFFER` usage: kernels may read it through
    /// texel buffer views ([`BufferInner::texel_view`]).
    texel: bool,
    /// The texel buffer views made of it so far: format, offset, range.
    views: Mutex<Vec<(vk::Format, u64, u64, vk::BufferView)>>,
    pub(crate) device: Arc<DeviceShared>,
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        // SAFETY: no batch holds this buffer any more (each holds an Arc),
        // so the GPU is done with it, and with its views.
        let views = self.views.get_mut().unwrap_or_else(|e| e.into_inner());
        for (_, _, _, v) in views.drain(..) {
            unsafe { self.device.raw.destroy_buffer_view(v, None) };
        }
        if let Some(usage) = self.retain {
            if let Some(alloc) = self.allocation.take() {
                let kept = Retained::new(self.raw, alloc, self.size.div_ceil(4) * 4, usage);
                match self.device.retain(kept) {
                    None => return,
                    Some(back) => self.allocation = Some(back.into_parts().1),
                }
            }
        }
        if let Some(alloc) = self.allocation.take() {
            if let Some(a) = self.device.allocator().as_mut() {
                let _ = a.free(alloc);
            }
        }
        if !self.external {
            unsafe { self.device.raw.destroy_buffer(self.raw, None) };
        }
        if self.imported != vk::DeviceMemory::null() {
            // SAFETY: its only buffer is gone; the host allocation behind it
            // is still alive (the importer's contract).
            unsafe { self.device.raw.free_memory(self.imported, None) };
        }
    }
}

impl BufferInner {
    /// A view of `range` bytes from `offset` as texels of `format` (made
    /// on first use, destroyed with the buffer); `None` when the buffer
    /// was not made for texel views.
    pub(crate) fn texel_view(
        &self,
        format: vk::Format,
        offset: u64,
        range: u64,
    ) -> Result<Option<vk::BufferView>> {
        if !self.texel {
            return Ok(None);
        }
        let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = views
            .iter()
            .find(|v| (v.0, v.1, v.2) == (format, offset, range))
        {
            return Ok(Some(v.3));
        }
        let info = vk::BufferViewCreateInfo::default()
            .buffer(self.raw)
            .format(format)
            .offset(offset)
            .range(range);
        let view = unsafe { self.device.raw.create_buffer_view(&info, None) }
            .map_err(vkerr("vkCreateBufferView"))?;
        views.push((format, offset, range, view));
        Ok(Some(view))
    }
}

impl BufferInner {
    fn new(
        device: &Device,
        size: u64,
        name: &str,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<BufferInner> {
        if size == 0 {
            return Err(VkError::usage(format!("buffer '{name}' has size 0")));
        }
        let shared = &device.shared;
        let raw_size = size.div_ceil(4) * 4;
        let retain = (location == MemoryLocation::GpuOnly && size >= RETAIN_FROM).then_some(usage);
        if retain.is_some() {
            if let Some(kept) = shared.take_retained(raw_size, usage) {
                let (raw, allocation) = kept.into_parts();
                return Ok(BufferInner {
                    raw,
                    allocation: Some(allocation),
                    imported: vk::DeviceMemory::null(),
                    size,
                    host_visible: false,
                    name: name.to_string(),
                    external: false,
                    retain,
                    texel: usage.contains(vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER),
                    views: Mutex::new(Vec::new()),
                    device: shared.clone(),
                });
            }
        }
        let info = shared.sharing(vk::BufferCreateInfo::default().size(raw_size).usage(usage));
        let raw = unsafe { shared.raw.create_buffer(&info, None) }
            .map_err(|e| VkError::from_vk_sized("vkCreateBuffer", e, size, name))?;
        let requirements = unsafe { shared.raw.get_buffer_memory_requirements(raw) };
        let destroy = |e| {
            unsafe { shared.raw.destroy_buffer(raw, None) };
            e
        };
        let allocation = {
            let mut guard = shared.allocator();
            let Some(allocator) = guard.as_mut() else {
                return Err(destroy(VkError::usage("device is being destroyed")));
            };
            let desc = AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: if size >= DEDICATED_FROM {
                    AllocationScheme::DedicatedBuffer(raw)
                } else {
                    AllocationScheme::GpuAllocatorManaged
                },
            };
            let mut got = allocator.allocate(&desc);
            if matches!(got, Err(AllocationError::OutOfMemory))
                && shared.release_retained(allocator)
            {
                // Kept buffers were holding memory this one needs.
                got = allocator.allocate(&desc);
            }
            got.map_err(|e| {
                destroy(match e {
                    AllocationError::OutOfMemory => VkError::OutOfMemory {
                        kind: if location == MemoryLocation::GpuOnly {
                            "device"
                        } else {
                            "host-visible"
                        },
                        requested: size,
                        what: format!("buffer '{name}'"),
                    },
                    e => VkError::Allocator {
                        requested: size,
                        what: format!("buffer '{name}'"),
                        message: e.to_string(),
                    },
                })
            })?
        };
        let bind = unsafe {
            shared
                .raw
                .bind_buffer_memory(raw, allocation.memory(), allocation.offset())
        };
        let host_visible = allocation.mapped_ptr().is_some()
            && allocation.memory_properties().contains(
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            );
        let inner = BufferInner {
            raw,
            allocation: Some(allocation),
            imported: vk::DeviceMemory::null(),
            size,
            host_visible,
            name: name.to_string(),
            external: false,
            retain: None,
            texel: usage.contains(vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER),
            views: Mutex::new(Vec::new()),
            device: shared.clone(),
        };
        // On failure `inner`'s Drop frees the allocation and the buffer.
        bind.map_err(|e| VkError::from_vk_sized("vkBindBufferMemory", e, size, name))?;
        let mut inner = inner;
        inner.retain = retain;
        Ok(inner)
    }

    fn mapped(&self) -> Option<*mut u8> {
        if !self.host_visible {
            return None;
        }
        self.allocation
            .as_ref()
            .and_then(|a| a.mapped_ptr())
            .map(|p| p.as_ptr() as *mut u8)
    }

    fn check_range(&self, offset: u64, len: usize) -> Result<()> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|end| end > self.size)
        {
            return Err(VkError::usage(format!(
                "range {offset}..{} is outside buffer '{}' of {} bytes",
                offset as u128 + len as u128,
                self.name,
                self.size
            )));
        }
        Ok(())
    }
}

/// Something a queue can copy from or to, or bind to a kernel.
pub trait GpuBuffer: sealed::Sealed {
    /// Size in bytes as requested at creation.
    fn size(&self) -> u64;
    #[doc(hidden)]
    fn inner(&self) -> &Arc<BufferInner>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Buffer {}
    impl Sealed for super::StagingBuffer {}
    impl Sealed for super::HostBuffer {}
}

/// A device storage buffer (usage STORAGE | TRANSFER_SRC | TRANSFER_DST).
/// Cloning gives another handle onto the same buffer.
#[derive(Clone)]
pub struct Buffer {
    pub(crate) inner: Arc<BufferInner>,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("name", &self.inner.name)
            .field("size", &self.inner.size)
            .field("host_visible", &self.inner.host_visible)
            .finish()
    }
}

impl Buffer {
    /// Whether kernels may read it through texel views
    /// ([`crate::Binding::Texels`]): buffers made by [`Buffer::new`] on a
    /// CPU device may.
    pub fn takes_texel_views(&self) -> bool {
        self.inner.texel
    }

    /// Allocates a storage buffer of `size` bytes (`name` is for messages).
    /// Refused with [`VkError::BufferTooLarge`] above [`Buffer::max_size`].
    pub fn new(device: &Device, size: u64, name: &str) -> Result<Buffer> {
        let (max, limit) = Buffer::max_size(device);
        if size > max {
            return Err(VkError::BufferTooLarge {
                requested: size,
                max,
                limit,
            });
        }
        let mut usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        if device.features().buffer_device_address {
            usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        }
        if device.info().device_type == DeviceType::Cpu {
            // Kernels may also read it through texel views there: a CPU
            // driver (llvmpipe) gathers a texel buffer's elements but loads
            // a storage buffer's lane by lane. GPUs keep their buffers as
            // they were.
            usage |= vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER;
        }
        Ok(Buffer {
            inner: Arc::new(BufferInner::new(
                device,
                size,
                name,
                usage,
                MemoryLocation::GpuOnly,
            )?),
        })
    }

    /// A small storage buffer in mapped, host-coherent memory: kernels
    /// write it and the host reads it after a wait, with no copy (accl's
    /// fault buffer). Refused where the allocator gives unmapped memory.
    pub fn new_mapped(device: &Device, size: u64, name: &str) -> Result<Buffer> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let inner = BufferInner::new(device, size, name, usage, MemoryLocation::GpuToCpu)?;
        if inner.mapped().is_none() {
            return Err(VkError::Allocator {
                requested: size,
                what: format!("mapped buffer '{name}'"),
                message: "the allocator returned memory that is not mapped and coherent".into(),
            });
        }
        Ok(Buffer {
            inner: Arc::new(inner),
        })
    }

    /// Copy the start of a mapped buffer's contents into `out`; false
    /// when the buffer is not mapped. Read only after the device work that
    /// writes it has completed (a timeline wait).
    pub fn read_mapped(&self, out: &mut [u8]) -> bool {
        let Some(p) = self.inner.mapped() else {
            return false;
        };
        let n = out.len().min(self.inner.size as usize);
        // SAFETY: mapped for `size` bytes for the buffer's whole life; a
        // volatile copy because the device writes this memory.
        for (i, o) in out[..n].iter_mut().enumerate() {
            *o = unsafe { std::ptr::read_volatile(p.add(i)) };
        }
        true
    }

    /// Write `data` at the start of a mapped buffer; false when it is not
    /// mapped. No device work using the buffer may be running.
    pub fn write_mapped(&self, data: &[u8]) -> bool {
        let Some(p) = self.inner.mapped() else {
            return false;
        };
        let n = data.len().min(self.inner.size as usize);
        for (i, &b) in data[..n].iter().enumerate() {
            // SAFETY: as in `read_mapped`.
            unsafe { std::ptr::write_volatile(p.add(i), b) };
        }
        true
    }

    /// Copies `out.len()` bytes from `offset` of a mapped buffer (see
    /// [`Buffer::new_mapped`]) after a host wait covered the device's
    /// writes; false if it is not mapped or the range is outside it.
    pub fn read_mapped_at(&self, offset: u64, out: &mut [u8]) -> bool {
        let Some(p) = self.inner.mapped() else {
            return false;
        };
        if offset
            .checked_add(out.len() as u64)
            .is_none_or(|end| end > self.inner.size)
        {
            return false;
        }
        // The host wait that saw the device's work done ordered its writes
        // before this read (the queue ends each batch with a barrier to host
        // reads); the fence keeps the compiler from hoisting the copy.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: mapped for `size` bytes for the buffer's whole life, and
        // the range is inside it.
        unsafe {
            std::ptr::copy_nonoverlapping(p.add(offset as usize), out.as_mut_ptr(), out.len())
        };
        true
    }

    /// Size in bytes.
    /// A buffer the embedding program made on this device, used as accl's
    /// storage of an array (`size` bytes of it, from its start); accl
    /// never frees it.
    ///
    /// # Safety
    /// `raw` is a buffer of `device`, bound to device memory, with storage
    /// and transfer (source and destination) usage, shared concurrently by
    /// every queue family accl uses when there are several, of at least
    /// `size` bytes; it outlives this `Buffer` and every batch that uses it.
    pub unsafe fn from_external(device: &Device, raw: vk::Buffer, size: u64, name: &str) -> Buffer {
        Buffer {
            inner: Arc::new(BufferInner {
                raw,
                allocation: None,
                imported: vk::DeviceMemory::null(),
                size,
                host_visible: false,
                name: name.to_string(),
                external: true,
                retain: None,
                texel: false,
                views: Mutex::new(Vec::new()),
                device: device.shared.clone(),
            }),
        }
    }

    /// The Vulkan buffer, for a host program's own Vulkan code on the same
    /// device (see [`crate::Device::raw_handles`]). It stays valid while
    /// this `Buffer` (or a clone) lives.
    pub fn raw_handle(&self) -> vk::Buffer {
        self.inner.raw
    }

    pub fn size(&self) -> u64 {
        self.inner.size
    }

    /// The largest buffer [`Buffer::new`] makes on `device`, and the
    /// Vulkan limit that sets it: `maxStorageBufferRange` (the most one
    /// binding shows a kernel), or with buffer device addresses
    /// `maxBufferSize` (the device-local memory where the driver does not
    /// say). One allocation holds each buffer, and `maxMemoryAllocationSize`
    /// is not a bound: the Vulkan spec says a larger allocation *may* fail
    /// (NVIDIA reports 4 GiB and makes larger ones); where it does, the
    /// driver's error is reported.
    pub fn max_size(device: &Device) -> (u64, &'static str) {
        let info = device.info();
        let l = &info.limits;
        let range = l.max_storage_buffer_range;
        let (max, limit) = if l.max_buffer_size != 0 {
            (l.max_buffer_size, "maxBufferSize")
        } else {
            (info.device_local_memory, "device-local memory")
        };
        if device.features().buffer_device_address && max > range {
            (max, limit)
        } else {
            (range, "maxStorageBufferRange")
        }
    }

    /// The buffer's 64-bit device address, for kernels that reach it
    /// through a pointer rather than a binding; `None` on a device without
    /// buffer device addresses, and for a buffer the embedding program
    /// made ([`Buffer::from_external`]: its usage is not known).
    pub fn device_address(&self) -> Option<u64> {
        let shared = &self.inner.device;
        if !shared.enabled.buffer_device_address || self.inner.external {
            return None;
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.inner.raw);
        // SAFETY: the buffer lives (this handle owns it), was created with
        // SHADER_DEVICE_ADDRESS usage (`new` adds it when the feature is
        // enabled) and is bound to memory allocated with the address flag
        // (the allocator's `buffer_device_address`).
        Some(unsafe { shared.raw.get_buffer_device_address(&info) })
    }

    /// Whether the memory is host-visible and coherent, so that
    /// [`Buffer::write`] and [`Buffer::read`] work.
    pub fn is_host_visible(&self) -> bool {
        self.inner.host_visible
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Copies `data` into the buffer at `offset` through the mapping.
    /// The caller must make sure no pending GPU work uses that range
    /// (wait on the queue values that touch it first).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let ptr = self.inner.mapped().ok_or(VkError::NotHostVisible)?;
        self.inner.check_range(offset, data.len())?;
        // SAFETY: the range is inside the mapped allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(offset as usize), data.len())
        };
        Ok(())
    }

    /// Copies from the buffer at `offset` into `out` through the mapping
    /// (same caveat as [`Buffer::write`]).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let ptr = self.inner.mapped().ok_or(VkError::NotHostVisible)?;
        self.inner.check_range(offset, out.len())?;
        // SAFETY: the range is inside the mapped allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr.add(offset as usize), out.as_mut_ptr(), out.len())
        };
        Ok(())
    }
}

impl GpuBuffer for Buffer {
    fn size(&self) -> u64 {
        self.inner.size
    }
    fn inner(&self) -> &Arc<BufferInner> {
        &self.inner
    }
}

/// Direction a [`StagingBuffer`] is optimised for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StagingKind {
    /// Host writes, device reads (`CpuToGpu` memory).
    Upload,
    /// Device writes, host reads (`GpuToCpu`, cached where possible).
    Download,
}

/// A persistently mapped, host-visible, coherent transfer buffer.
///
/// Not `Clone`: the one handle owns the mapping's `&mut` access. The caller
/// must not touch the contents while a submitted copy that uses it is
/// pending (wait on its timeline value first); queues keep the buffer
/// itself alive until such copies complete.
pub struct StagingBuffer {
    pub(crate) inner: Arc<BufferInner>,
    kind: StagingKind,
}

impl fmt::Debug for StagingBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagingBuffer")
            .field("name", &self.inner.name)
            .field("size", &self.inner.size)
            .field("kind", &self.kind)
            .finish()
    }
}

impl StagingBuffer {
    /// Allocates a mapped staging buffer of `size` bytes.
    pub fn new(device: &Device, size: u64, kind: StagingKind, name: &str) -> Result<StagingBuffer> {
        let max = device.info().limits.max_memory_allocation_size;
        if max != 0 && size > max {
            return Err(VkError::BufferTooLarge {
                requested: size,
                max,
                limit: "maxMemoryAllocationSize",
            });
        }
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let location = match kind {
            StagingKind::Upload => MemoryLocation::CpuToGpu,
            StagingKind::Download => MemoryLocation::GpuToCpu,
        };
        let inner = BufferInner::new(device, size, name, usage, location)?;
        if inner.mapped().is_none() {
            return Err(VkError::Allocator {
                requested: size,
                what: format!("staging buffer '{name}'"),
                message: "the allocator returned memory that is not mapped and coherent".into(),
            });
        }
        Ok(StagingBuffer {
            inner: Arc::new(inner),
            kind,
        })
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.inner.size
    }

    /// Upload or download.
    pub fn kind(&self) -> StagingKind {
        self.kind
    }

    /// The mapped contents.
    pub fn as_slice(&self) -> &[u8] {
        let ptr = self.inner.mapped().expect("staging buffers are mapped");
        // SAFETY: mapped for `size` bytes for the buffer's whole life.
        unsafe { std::slice::from_raw_parts(ptr, self.inner.size as usize) }
    }

    /// The mapped contents, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let ptr = self.inner.mapped().expect("staging buffers are mapped");
        // SAFETY: as above; `&mut self` makes this the only host view.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.inner.size as usize) }
    }
}

impl GpuBuffer for StagingBuffer {
    fn size(&self) -> u64 {
        self.inner.size
    }
    fn inner(&self) -> &Arc<BufferInner> {
        &self.inner
    }
}

/// Host memory imported as a transfer buffer (VK_EXT_external_memory_host):
/// queues copy straight between it and device buffers.
///
/// The import covers the whole pages around the caller's bytes (imports
/// must be aligned to the device's `minImportedHostPointerAlignment`);
/// [`HostBuffer::offset`] is where the caller's first byte lies in it.
/// Cloning gives another handle onto the same import.
#[derive(Clone)]
pub struct HostBuffer {
    pub(crate) inner: Arc<BufferInner>,
    offset: u64,
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("name", &self.inner.name)
            .field("size", &self.inner.size)
            .field("offset", &self.offset)
            .finish()
    }
}

impl HostBuffer {
    /// Imports the `len` bytes at `ptr`. `Ok(None)` when this device cannot
    /// import them (no extension, no host-coherent memory type for them, a
    /// range over the allocation limit, or the driver refused): the caller
    /// stages instead. Errors only for a lost device.
    ///
    /// # Safety
    /// The pages holding the `len` bytes at `ptr` must stay allocated and
    /// mapped for as long as the returned buffer, any clone of it, or any
    /// queue batch that recorded it exists; and the host must not access
    /// bytes that a pending copy writes.
    pub unsafe fn import(
        device: &Device,
        ptr: *const u8,
        len: usize,
        name: &str,
    ) -> Result<Option<HostBuffer>> {
        let shared = &device.shared;
        let Some(imp) = &shared.host_import else {
            return Ok(None);
        };
        if len == 0 {
            return Ok(None);
        }
        let start = ptr as u64 / imp.align * imp.align;
        let Some(end) = (ptr as u64)
            .checked_add(len as u64)
            .and_then(|e| e.checked_next_multiple_of(imp.align))
        else {
            return Ok(None);
        };
        let size = end - start;
        let max = shared.info.limits.max_memory_allocation_size;
        if max != 0 && size > max {
            return Ok(None);
        }
        let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
        let mut props = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: `start` is mapped host memory (the caller's contract).
        let r = unsafe {
            (imp.fns.fp().get_memory_host_pointer_properties_ext)(
                shared.raw.handle(),
                handle,
                start as *const std::ffi::c_void,
                &mut props,
            )
        };
        if r != vk::Result::SUCCESS {
            return Ok(None);
        }
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let info = shared
            .sharing(
                vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST),
            )
            .push_next(&mut external);
        let raw = unsafe { shared.raw.create_buffer(&info, None) }
            .map_err(|e| VkError::from_vk_sized("vkCreateBuffer", e, size, name))?;
        // From here on, every early return drops `inner`, whose Drop
        // destroys the buffer (and frees the memory once imported).
        let mut inner = BufferInner {
            raw,
            allocation: None,
            imported: vk::DeviceMemory::null(),
            size,
            host_visible: false,
            name: name.to_string(),
            external: false,
            retain: None,
            texel: false,
            views: Mutex::new(Vec::new()),
            device: shared.clone(),
        };
        let req = unsafe { shared.raw.get_buffer_memory_requirements(raw) };
        let bits = req.memory_type_bits & props.memory_type_bits;
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = &imp.memory.memory_types[..imp.memory.memory_type_count as usize];
        let usable =
            |i: &usize| bits & (1 << i) != 0 && types[*i].property_flags.contains(coherent);
        // Cached memory first: the host reads what lands there.
        let index = (0..types.len()).filter(usable).max_by_key(|&i| {
            types[i]
                .property_flags
                .contains(vk::MemoryPropertyFlags::HOST_CACHED)
        });
        let Some(index) = index.filter(|_| req.size <= size) else {
            return Ok(None);
        };
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(handle)
            .host_pointer(start as *mut std::ffi::c_void);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(index as u32)
            .push_next(&mut import);
        inner.imported = match unsafe { shared.raw.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e @ vk::Result::ERROR_DEVICE_LOST) => {
                return Err(VkError::from_vk("vkAllocateMemory", e))
            }
            Err(_) => return Ok(None),
        };
        unsafe { shared.raw.bind_buffer_memory(raw, inner.imported, 0) }
            .map_err(|e| VkError::from_vk_sized("vkBindBufferMemory", e, size, name))?;
        Ok(Some(HostBuffer {
            inner: Arc::new(inner),
            offset: ptr as u64 - start,
        }))
    }

    /// Where the imported pointer's first byte lies in the buffer.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether another handle, or a queue batch not yet retired, holds
    /// this buffer.
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
}

impl GpuBuffer for HostBuffer {
    fn size(&self) -> u64 {
        self.inner.size
    }
    fn inner(&self) -> &Arc<BufferInner> {
        &self.inner
    }
}
