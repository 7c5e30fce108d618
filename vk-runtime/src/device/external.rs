//! A device the embedding program made ([`Device::from_external`]): accl
//! uses the queues, features and extensions the program says it enabled,
//! and never destroys the `VkDevice`.

use ash::vk;

use super::{assemble, has_ext, hw_queue, Device, Extensions, QueueRole};
use crate::error::{Result, VkError};
use crate::instance::{AdapterFeatures, Instance};

/// A device the embedding program made, for [`Device::from_external`].
#[derive(Debug, Clone)]
pub struct ExternalDevice {
    pub physical_device: vk::PhysicalDevice,
    pub device: vk::Device,
    /// Queue families accl may submit to, each with the number of queues
    /// the program created in it (all of them are used).
    pub queues: Vec<(u32, u32)>,
    /// The features the program enabled, by their Vulkan names
    /// (`shaderFloat64`, ...: [`EXTERNAL_FEATURES`]); accl uses only these.
    /// `timelineSemaphore` must be enabled, and is assumed.
    pub features: Vec<String>,
    /// The device extensions the program enabled; accl uses those it
    /// knows (`VK_KHR_push_descriptor`, `VK_EXT_external_memory_host`,
    /// `VK_EXT_shader_atomic_float`).
    pub extensions: Vec<String>,
}

/// The feature names [`ExternalDevice::features`] may list.
pub const EXTERNAL_FEATURES: &[&str] = &[
    "shaderFloat64",
    "shaderInt64",
    "shaderInt16",
    "shaderInt8",
    "storageBuffer8BitAccess",
    "storageBuffer16BitAccess",
    "shaderBufferFloat32AtomicAdd",
    "shaderBufferFloat64AtomicAdd",
    "shaderBufferInt64Atomics",
    "robustBufferAccess",
    "bufferDeviceAddress",
];

impl Device {
    /// A device the embedding program made on `instance`, used by accl
    /// with the features and extensions the program says it enabled, and
    /// never destroyed here (accl's own objects on it are, when the last
    /// `Device` handle goes).
    ///
    /// # Safety
    /// `ext.device` is a live device of `ext.physical_device` on
    /// `instance`, created with timeline semaphores, the queues and the
    /// features and extensions `ext` lists; it outlives this `Device` and
    /// its work; the program does not use those queues from another thread
    /// while accl runs.
    pub unsafe fn from_external(instance: &Instance, ext: &ExternalDevice) -> Result<Device> {
        let _serial = crate::lifecycle_lock();
        let pds = instance.physical_devices()?;
        let Some((physical, info)) = pds.into_iter().find(|(p, _)| *p == ext.physical_device)
        else {
            return Err(VkError::usage(
                "the physical device is not one of the instance's adapters with a compute queue",
            ));
        };
        if let Some(bad) = ext
            .features
            .iter()
            .find(|f| !EXTERNAL_FEATURES.contains(&f.as_str()))
        {
            return Err(VkError::usage(format!(
                "`{bad}` is not a feature accl uses; those are {}",
                EXTERNAL_FEATURES.join(", ")
            )));
        }
        let on = |name: &str, avail: bool| avail && ext.features.iter().any(|f| f == name);
        let avail = &info.features;
        let enabled = AdapterFeatures {
            shader_float64: on("shaderFloat64", avail.shader_float64),
            shader_int64: on("shaderInt64", avail.shader_int64),
            shader_int16: on("shaderInt16", avail.shader_int16),
            shader_int8: on("shaderInt8", avail.shader_int8),
            storage_buffer_8bit_access: on(
                "storageBuffer8BitAccess",
                avail.storage_buffer_8bit_access,
            ),
            storage_buffer_16bit_access: on(
                "storageBuffer16BitAccess",
                avail.storage_buffer_16bit_access,
            ),
            timeline_semaphore: true,
            shader_buffer_float32_atomic_add: on(
                "shaderBufferFloat32AtomicAdd",
                avail.shader_buffer_float32_atomic_add,
            ),
            shader_buffer_float64_atomic_add: on(
                "shaderBufferFloat64AtomicAdd",
                avail.shader_buffer_float64_atomic_add,
            ),
            shader_buffer_int64_atomics: on(
                "shaderBufferInt64Atomics",
                avail.shader_buffer_int64_atomics,
            ),
            robust_buffer_access: on("robustBufferAccess", avail.robust_buffer_access),
            buffer_device_address: on("bufferDeviceAddress", avail.buffer_device_address),
            subgroup_operations: avail.subgroup_operations.clone(),
            ext_shader_atomic_float: false,
        };
        let has = |n: &std::ffi::CStr| {
            ext.extensions.iter().any(|e| e.as_bytes() == n.to_bytes()) && has_ext(&info, n)
        };
        let enabled = AdapterFeatures {
            ext_shader_atomic_float: has(ash::ext::shader_atomic_float::NAME),
            ..enabled
        };
        let raw_instance = &instance.shared.raw;
        let raw = ash::Device::load(raw_instance.fp_v1_0(), ext.device);
        let mut queues = Vec::new();
        let mut families = Vec::new();
        for &(family, count) in &ext.queues {
            let Some(q) = info.queue_families.iter().find(|q| q.index == family) else {
                return Err(VkError::usage(format!(
                    "the device has no queue family {family}"
                )));
            };
            if !(q.compute || q.is_transfer_only()) || count == 0 || count > q.count {
                return Err(VkError::usage(format!(
                    "queue family {family}: {count} queue(s) of a family with {} that {}",
                    q.count,
                    if q.compute {
                        "computes"
                    } else {
                        "does not compute or copy only"
                    }
                )));
            }
            families.push(family);
            for i in 0..count {
                queues.push(hw_queue(&raw, q, i, queues.len()));
            }
        }
        if !queues.iter().any(|q| q.info.role == QueueRole::Compute) {
            return Err(VkError::usage("accl needs a compute queue among `queues`"));
        }
        let ext = Extensions {
            host_import: has(ash::ext::external_memory_host::NAME),
            push_descriptor: has(ash::khr::push_descriptor::NAME),
            submission_thread: crate::submit::wanted(&info),
        };
        assemble(
            instance, raw, physical, info, enabled, queues, families, ext, true,
        )
    }
}
