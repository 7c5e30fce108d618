//! Sharing the device with the host program's own Vulkan code: the
//! device's handles, and the buffer of a present array, so the host
//! program can read or fill accl's device memory with its own shaders
//! and no copies.

use super::{Engine, Error};
use crate::interop::{DeviceBuffer, VulkanDevice};

impl Engine {
    /// The Vulkan handles of the current device (opened if it is not yet)
    /// and the queue accl's synchronous work runs on. `accl::api::vulkan`
    /// on the host backend.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// assert_eq!(e.vulkan_device().unwrap_err().code(), "accl::api::vulkan");
    /// ```
    pub fn vulkan_device(&mut self) -> Result<VulkanDevice, Error> {
        self.cx
            .backend
            .clone()
            .vulkan_device(self.cx.device)
            .map_err(|m| Error::api("accl::api::vulkan", m))
    }

    /// The device copy of array variable `name` on the current device:
    /// its Vulkan buffer, offset and size. Waits until every queue of the
    /// device is idle, so work the host program submits next comes after
    /// accl's. The buffer is accl's: it lives while the array stays
    /// present (`exit data` or the end of a `data` region may free it), and
    /// the host program must finish its work on it (a fence) before the
    /// engine runs again. `accl::api::vulkan` if the array is not present
    /// as one section ([`Engine::device_buffers`] takes several) or the
    /// engine has no Vulkan device.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = zeros(f32, 8); enter data copyin(a);").unwrap();
    /// assert_eq!(e.device_buffer("a").unwrap_err().code(), "accl::api::vulkan");
    /// ```
    pub fn device_buffer(&mut self, name: &str) -> Result<DeviceBuffer, Error> {
        let dev = self.cx.device;
        match self.device_buffers(name)?[..] {
            [d] => Ok(d),
            ref d => Err(Error::api(
                "accl::api::vulkan",
                format!("`{name}`: {}", crate::interop::sections_error(dev, d.len())),
            )),
        }
    }

    /// As [`Engine::device_buffer`], for an array present as one or more
    /// sections (`enter data copyin(a[0:4], a[8:4])`): one [`DeviceBuffer`]
    /// per section, in the order of their rows.
    pub fn device_buffers(&mut self, name: &str) -> Result<Vec<DeviceBuffer>, Error> {
        let a = self.array(name).ok_or_else(|| {
            Error::api(
                "accl::api::vulkan",
                format!("there is no array variable `{name}`"),
            )
        })?;
        let b = self.cx.backend.clone();
        let dev = self.cx.device;
        b.device_buffers(&mut self.cx, dev, &a)
            .and_then(|d| match d.is_empty() {
                true => Err(format!("it is not present on device {dev}")),
                false => Ok(d),
            })
            .map_err(|m| Error::api("accl::api::vulkan", format!("`{name}`: {m}")))
    }
}

impl Engine {
    /// Make array variable `name` present on the current device in a
    /// buffer the program made (OpenACC's `acc_map_data`): its device copy
    /// is the first `rows * row bytes` of `buffer`, as if by `enter data
    /// create(name)` (a dynamic reference count of 1), with no copy: what
    /// the buffer holds is what kernels see, `update self(name)` brings it
    /// to the host, and `exit data delete(name)` ends the mapping (accl
    /// never frees the buffer). Scripts may name it in `deviceptr(name)`.
    /// `accl::api::vulkan` if the array is (partly) present already, the
    /// buffer is too small, or the engine has no Vulkan device.
    ///
    /// # Safety
    /// `buffer` is a buffer of the engine's current device
    /// ([`Engine::vulkan_device`]), bound to device memory, made with
    /// `STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST` usage and, when
    /// [`crate::VulkanDevice::queue_families`] lists several families,
    /// `CONCURRENT` sharing over them; it holds `size` bytes and outlives
    /// the mapping and the device work that uses it.
    pub unsafe fn map_device_array(
        &mut self,
        name: &str,
        buffer: crate::ash::vk::Buffer,
        size: u64,
    ) -> Result<(), Error> {
        let a = self.array(name).ok_or_else(|| {
            Error::api(
                "accl::api::vulkan",
                format!("there is no array variable `{name}`"),
            )
        })?;
        let dev = self.cx.device;
        self.cx
            .backend
            .clone()
            .map_external(dev, &a, buffer, size)
            .map_err(|m| Error::api("accl::api::vulkan", format!("`{name}`: {m}")))
    }
}

impl Engine {
    /// An engine on a Vulkan device the program made (OpenACC's sharing
    /// of the host's device): its only device, used with the features and
    /// extensions `device` says were enabled. accl never destroys the
    /// instance or the device; drop the engine before the program does.
    /// `accl::device::open` if accl cannot use it (no compute queue among
    /// `device.queues`, an unknown feature name, Vulkan below 1.2).
    ///
    /// # Safety
    /// `instance` is a live Vulkan 1.2+ instance, and `device` describes a
    /// live device on it made with timeline semaphores enabled, exactly the
    /// queues, features and extensions it lists; both outlive the engine
    /// and its work, and the program does not use those queues from
    /// another thread while the engine runs.
    pub unsafe fn from_vulkan(
        instance: crate::ash::vk::Instance,
        device: &crate::ExternalDevice,
    ) -> Result<Engine, Error> {
        let b = crate::vulkan::VulkanBackend::external(instance, device)
            .map_err(|m| Error::api("accl::device::open", format!("cannot use the device: {m}")))?;
        Ok(Engine::with_backend(std::rc::Rc::new(b)))
    }
}
