//! Compute pipelines built from SPIR-V words.
//!
//! Shape: accl kernels all have the same interface — N bindings at set 0,
//! bindings 0..N, each a storage buffer or a uniform texel buffer
//! ([`Binding`]), and one push-constant block for scalars and base offsets
//! — so a pipeline is fully described by the SPIR-V, the entry point, the
//! bindings, the push-constant size and specialisation constants.
//! The descriptor-set layout and pipeline layout are owned by the pipeline
//! (no cross-pipeline layout cache: layouts are tiny and this keeps
//! ownership trivial). Creation goes through the device's `VkPipelineCache`,
//! which [`crate::Device::save_pipeline_cache`] persists across runs.
//!
//! The pipeline lives in an `Arc` so that queue batches that dispatched it
//! keep it alive until they complete.

use std::ffi::CString;
use std::fmt;
use std::sync::Arc;

use ash::vk;

use crate::device::{Device, DeviceShared};
use crate::error::{vkerr, Result, VkError};

/// What a kernel sees at one binding of set 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// A storage buffer.
    Storage,
    /// A uniform texel buffer of 32-bit texels, read only: the buffer bound
    /// is seen through a view of this format.
    Texels(TexelFormat),
}

/// The format of a [`Binding::Texels`] view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    F32,
    U32,
    I32,
}

impl TexelFormat {
    /// The format of 32-bit elements of this kind.
    pub fn of(float: bool, signed: bool) -> TexelFormat {
        match (float, signed) {
            (true, _) => TexelFormat::F32,
            (false, true) => TexelFormat::I32,
            (false, false) => TexelFormat::U32,
        }
    }

    pub(crate) fn vk(self) -> vk::Format {
        match self {
            TexelFormat::F32 => vk::Format::R32_SFLOAT,
            TexelFormat::U32 => vk::Format::R32_UINT,
            TexelFormat::I32 => vk::Format::R32_SINT,
        }
    }
}

impl Binding {
    fn descriptor_type(self) -> vk::DescriptorType {
        match self {
            Binding::Storage => vk::DescriptorType::STORAGE_BUFFER,
            Binding::Texels(_) => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        }
    }
}

#[doc(hidden)]
pub struct PipelineInner {
    pub(crate) raw: vk::Pipeline,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) bindings: Vec<Binding>,
    pub(crate) num_storage_buffers: u32,
    pub(crate) push_constant_bytes: u32,
    /// Its buffers are pushed (VK_KHR_push_descriptor), not bound as a set.
    pub(crate) push_descriptors: bool,
    pub(crate) entry: String,
    pub(crate) device: Arc<DeviceShared>,
}

impl Drop for PipelineInner {
    fn drop(&mut self) {
        // SAFETY: no pending batch holds this pipeline (each holds an Arc).
        unsafe {
            let d = &self.device.raw;
            d.destroy_pipeline(self.raw, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// A compute pipeline with its layouts (cheap to clone).
#[derive(Clone)]
pub struct ComputePipeline {
    pub(crate) inner: Arc<PipelineInner>,
}

impl fmt::Debug for ComputePipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComputePipeline")
            .field("entry", &self.inner.entry)
            .field("num_storage_buffers", &self.inner.num_storage_buffers)
            .field("push_constant_bytes", &self.inner.push_constant_bytes)
            .finish()
    }
}

impl ComputePipeline {
    /// Builds a compute pipeline.
    ///
    /// * `spirv`: the module's words; `entry`: its GLCompute entry point.
    /// * `num_storage_buffers`: bindings 0..N of set 0 are storage buffers.
    /// * `push_constant_bytes`: size of the push-constant block (a multiple
    ///   of 4, at most `maxPushConstantsSize`; 0 for none).
    /// * `specialization`: `(constant id, u32 value)` pairs.
    pub fn new(
        device: &Device,
        spirv: &[u32],
        entry: &str,
        num_storage_buffers: u32,
        push_constant_bytes: u32,
        specialization: &[(u32, u32)],
    ) -> Result<ComputePipeline> {
        let bindings = vec![Binding::Storage; num_storage_buffers as usize];
        Self::with_bindings(
            device,
            spirv,
            entry,
            &bindings,
            push_constant_bytes,
            specialization,
        )
    }

    /// [`ComputePipeline::new`] with a kind per binding: `bindings[i]` at
    /// binding i of set 0.
    pub fn with_bindings(
        device: &Device,
        spirv: &[u32],
        entry: &str,
        bindings: &[Binding],
        push_constant_bytes: u32,
        specialization: &[(u32, u32)],
    ) -> Result<ComputePipeline> {
        let num_storage_buffers = bindings.len() as u32;
        let kinds = bindings;
        let shared = &device.shared;
        let d = &shared.raw;
        let max_pc = shared.info.limits.max_push_constants_size;
        if push_constant_bytes % 4 != 0 || push_constant_bytes > max_pc {
            return Err(VkError::usage(format!(
                "push-constant block of {push_constant_bytes} bytes: must be a multiple of 4 and at most {max_pc}"
            )));
        }
        if spirv.first() != Some(&0x0723_0203) {
            return Err(VkError::usage(
                "the SPIR-V module does not start with the magic number",
            ));
        }
        let entry_c = CString::new(entry)
            .map_err(|_| VkError::usage("entry point name contains a NUL byte"))?;

        let bindings: Vec<_> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(k.descriptor_type())
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let push_descriptors = num_storage_buffers > 0
            && shared
                .push_descriptor
                .as_ref()
                .is_some_and(|(_, max)| num_storage_buffers <= *max);
        let mut set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        if push_descriptors {
            set_info = set_info.flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR);
        }
        let set_layout = unsafe { d.create_descriptor_set_layout(&set_info, None) }
            .map_err(vkerr("vkCreateDescriptorSetLayout"))?;

        // From here on, a partially built pipeline is destroyed by Drop.
        let mut inner = PipelineInner {
            raw: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout,
            bindings: kinds.to_vec(),
            num_storage_buffers,
            push_constant_bytes,
            push_descriptors,
            entry: entry.to_string(),
            device: shared.clone(),
        };
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push_constant_bytes)];
        let set_layouts = [set_layout];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_constant_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        inner.layout = unsafe { d.create_pipeline_layout(&layout_info, None) }
            .map_err(vkerr("vkCreatePipelineLayout"))?;

        let _serial = crate::validation_lock(shared.instance.validation);
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
        }
        .map_err(|result| VkError::Pipeline {
            entry: entry.to_string(),
            result,
        })?;

        let map: Vec<_> = specialization
            .iter()
            .enumerate()
            .map(|(i, (id, _))| {
                vk::SpecializationMapEntry::default()
                    .constant_id(*id)
                    .offset(4 * i as u32)
                    .size(4)
            })
            .collect();
        let data: Vec<u8> = specialization
            .iter()
            .flat_map(|(_, v)| v.to_ne_bytes())
            .collect();
        let spec = vk::SpecializationInfo::default()
            .map_entries(&map)
            .data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry_c);
        if !specialization.is_empty() {
            stage = stage.specialization_info(&spec);
        }
        let create = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(inner.layout)];
        let result = {
            let cache = shared
                .pipeline_cache
                .read()
                .unwrap_or_else(|e| e.into_inner());
            unsafe { d.create_compute_pipelines(*cache, &create, None) }
        };
        unsafe { d.destroy_shader_module(module, None) };
        inner.raw = match result {
            Ok(p) => p[0],
            Err((_, result)) => {
                return Err(VkError::Pipeline {
                    entry: entry.to_string(),
                    result,
                })
            }
        };
        Ok(ComputePipeline {
            inner: Arc::new(inner),
        })
    }

    /// Number of bindings (storage buffers and texel buffers).
    pub fn num_storage_buffers(&self) -> u32 {
        self.inner.num_storage_buffers
    }

    /// Size of the push-constant block in bytes.
    pub fn push_constant_bytes(&self) -> u32 {
        self.inner.push_constant_bytes
    }

    /// The entry point name.
    pub fn entry(&self) -> &str {
        &self.inner.entry
    }
}
