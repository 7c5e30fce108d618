//! Recording kernel dispatches: bindings through push descriptors where the
//! device has them, else descriptor sets from the batch's pools.

use ash::vk;
use smallvec::SmallVec;

use super::{BufferBinding, DescPool, Queue, POOL_DESCRIPTORS, POOL_SETS};
use crate::device::QueueRole;
use crate::error::{vkerr, Result, VkError};
use crate::pipeline::{Binding, ComputePipeline};
use std::sync::Arc;

/// Bindings a dispatch records without allocating.
const INLINE_BINDINGS: usize = 8;

impl Queue {
    /// Records a dispatch of `groups` work groups of `pipeline`, with
    /// `bindings[i]` at binding i of set 0 and `push_constants` at offset 0.
    pub fn dispatch(
        &mut self,
        pipeline: &ComputePipeline,
        bindings: &[BufferBinding<'_>],
        push_constants: &[u8],
        groups: [u32; 3],
    ) -> Result<()> {
        let p = &pipeline.inner;
        self.same_device(&p.device)?;
        if self.hw.role != QueueRole::Compute {
            return Err(VkError::usage(
                "kernels cannot run on a transfer-only queue",
            ));
        }
        if bindings.len() != p.num_storage_buffers as usize {
            return Err(VkError::usage(format!(
                "kernel '{}' has {} storage buffers but {} were bound",
                p.entry,
                p.num_storage_buffers,
                bindings.len()
            )));
        }
        if push_constants.len() % 4 != 0 || push_constants.len() > p.push_constant_bytes as usize {
            return Err(VkError::usage(format!(
                "kernel '{}' takes {} bytes of push constants; {} given (must be a multiple of 4 and not more)",
                p.entry,
                p.push_constant_bytes,
                push_constants.len()
            )));
        }
        let limits = &self.device.shared.info.limits;
        let align = limits.min_storage_buffer_offset_alignment.max(1);
        let texel_align = limits.min_texel_buffer_offset_alignment.max(1);
        let max_texels = u64::from(limits.max_texel_buffer_elements) * 4;
        // The texel view of each binding that is a texel buffer. (On the
        // stack for the usual few bindings: a launch of an unchanged kernel
        // is a few microseconds of host time, and allocations were a sixth
        // of it on an H100's host.)
        let mut views: SmallVec<[[vk::BufferView; 1]; INLINE_BINDINGS]> = SmallVec::new();
        for (i, (bnd, kind)) in bindings.iter().zip(&p.bindings).enumerate() {
            self.same_device(&bnd.buffer.inner.device)?;
            Self::check_range("binding", bnd.buffer, bnd.offset, bnd.range)?;
            let view = match kind {
                Binding::Storage => {
                    if bnd.range == 0
                        || bnd.offset % align != 0
                        || bnd.range > limits.max_storage_buffer_range
                    {
                        return Err(VkError::usage(format!(
                            "binding {i}: offset {} must be a multiple of {align} and range {} in 1..={}",
                            bnd.offset, bnd.range, limits.max_storage_buffer_range
                        )));
                    }
                    vk::BufferView::null()
                }
                Binding::Texels(format) => {
                    if bnd.range == 0
                        || bnd.range % 4 != 0
                        || bnd.offset % texel_align != 0
                        || bnd.range > max_texels
                    {
                        return Err(VkError::usage(format!(
                            "texel binding {i}: offset {} must be a multiple of {texel_align} and range {} a multiple of 4 in 4..={max_texels}",
                            bnd.offset, bnd.range
                        )));
                    }
                    bnd.buffer
                        .inner
                        .texel_view(format.vk(), bnd.offset, bnd.range)?
                        .ok_or_else(|| {
                            VkError::usage(format!(
                                "texel binding {i}: the buffer was not made for texel views"
                            ))
                        })?
                }
            };
            views.push([view]);
        }
        let max = limits.max_compute_work_group_count;
        if (0..3).any(|k| groups[k] > max[k]) {
            return Err(VkError::usage(format!(
                "dispatch of {groups:?} work groups exceeds the device limit {max:?}"
            )));
        }
        if groups.contains(&0) {
            return Ok(());
        }

        let set = if p.push_descriptors {
            vk::DescriptorSet::null()
        } else {
            self.allocate_set(p.set_layout, p.num_storage_buffers)?
        };
        // The shared state, not the `ash::Device`: its function tables are about
        // 1.5 KB to copy.
        let shared = self.device.shared.clone();
        let d = &shared.raw;
        let infos: SmallVec<[[vk::DescriptorBufferInfo; 1]; INLINE_BINDINGS]> = bindings
            .iter()
            .map(|b| {
                [vk::DescriptorBufferInfo {
                    buffer: b.buffer.inner.raw,
                    offset: b.offset,
                    range: b.range,
                }]
            })
            .collect();
        if !bindings.is_empty() && !p.push_descriptors {
            let writes = descriptor_writes(set, &infos, &views, &p.bindings);
            unsafe { d.update_descriptor_sets(&writes, &[]) };
        }
        let (cmd, query) = self.begin_op(&|| format!("dispatch {}", p.entry))?;
        let bound = &mut self.open.as_mut().expect("begin_op opened it").bound;
        // Push descriptors and constants stay with the layout they were
        // set for; a new layout starts both over.
        let same_layout = bound.layout == p.layout;
        let same_pipeline = same_layout && bound.pipeline == p.raw;
        let same_buffers = same_layout
            && p.push_descriptors
            && bound.buffers.len() == bindings.len()
            && bound
                .buffers
                .iter()
                .zip(bindings)
                .all(|(&(b, o, r), n)| (b, o, r) == (n.buffer.inner.raw, n.offset, n.range));
        let same_constants = same_layout && bound.constants == push_constants;
        if !same_layout {
            bound.layout = p.layout;
            bound.constants.clear();
        }
        bound.pipeline = p.raw;
        if p.push_descriptors && !same_buffers {
            bound.buffers.clear();
            bound.buffers.extend(
                bindings
                    .iter()
                    .map(|n| (n.buffer.inner.raw, n.offset, n.range)),
            );
        }
        if !same_constants {
            bound.constants.clear();
            bound.constants.extend_from_slice(push_constants);
        }
        unsafe {
            if !same_pipeline {
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, p.raw);
            }
            if p.push_descriptors && same_buffers {
                // Already pushed for this layout.
            } else if p.push_descriptors {
                let (fns, _) = self
                    .device
                    .shared
                    .push_descriptor
                    .as_ref()
                    .expect("a pipeline pushes descriptors only where the device can");
                fns.cmd_push_descriptor_set(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    p.layout,
                    0,
                    &descriptor_writes(set, &infos, &views, &p.bindings),
                );
            } else if p.num_storage_buffers > 0 {
                d.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    p.layout,
                    0,
                    &[set],
                    &[],
                );
            }
            if !push_constants.is_empty() && !same_constants {
                d.cmd_push_constants(
                    cmd,
                    p.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    push_constants,
                );
            }
            d.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
        }
        self.end_op(query);
        // The batch keeps what it uses alive; a dispatch of what the one
        // before held already adds nothing.
        let b = self.open.as_mut().expect("open");
        if !b.pipelines.last().is_some_and(|l| Arc::ptr_eq(l, p)) {
            b.pipelines.push(p.clone());
        }
        let n = bindings.len();
        let held = b.buffers.len() >= n
            && b.buffers[b.buffers.len() - n..]
                .iter()
                .zip(bindings)
                .all(|(h, bnd)| Arc::ptr_eq(h, &bnd.buffer.inner));
        if !held {
            b.buffers
                .extend(bindings.iter().map(|bnd| bnd.buffer.inner.clone()));
        }
        Ok(())
    }

    /// Allocates a descriptor set from the open batch's current pool,
    /// taking a recycled or new pool when it is full.
    fn allocate_set(
        &mut self,
        layout: vk::DescriptorSetLayout,
        descriptors: u32,
    ) -> Result<vk::DescriptorSet> {
        if descriptors == 0 {
            return Ok(vk::DescriptorSet::null());
        }
        // The shared state, not the `ash::Device`: its function tables are about
        // 1.5 KB to copy.
        let shared = self.device.shared.clone();
        let d = &shared.raw;
        let (fits, _) = {
            let b = self.batch()?;
            (b.sets_left >= 1 && b.descriptors_left >= descriptors, ())
        };
        if !fits {
            let idx = self
                .free_desc_pools
                .iter()
                .position(|p| p.descriptors >= descriptors);
            let pool = match idx {
                Some(i) => self.free_desc_pools.swap_remove(i),
                None => {
                    let count = POOL_DESCRIPTORS.max(descriptors);
                    // `descriptors` counts both kinds together, so each
                    // kind gets the whole count.
                    let sizes = [
                        vk::DescriptorPoolSize {
                            ty: vk::DescriptorType::STORAGE_BUFFER,
                            descriptor_count: count,
                        },
                        vk::DescriptorPoolSize {
                            ty: vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
                            descriptor_count: count,
                        },
                    ];
                    let info = vk::DescriptorPoolCreateInfo::default()
                        .max_sets(POOL_SETS)
                        .pool_sizes(&sizes);
                    let raw = unsafe { d.create_descriptor_pool(&info, None) }
                        .map_err(vkerr("vkCreateDescriptorPool"))?;
                    self.stats.descriptor_pools_created += 1;
                    DescPool {
                        raw,
                        sets: POOL_SETS,
                        descriptors: count,
                    }
                }
            };
            let b = self.batch()?;
            b.desc_pools.push(pool);
            b.sets_left = pool.sets;
            b.descriptors_left = pool.descriptors;
        }
        let b = self.batch()?;
        let pool = b.desc_pools.last().expect("pushed above").raw;
        let layouts = [layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        let set = unsafe { d.allocate_descriptor_sets(&info) }
            .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
        b.sets_left -= 1;
        b.descriptors_left -= descriptors;
        Ok(set)
    }
}

/// The descriptor writes of a dispatch's bindings into `set` (null for
/// push descriptors); built only where recorded (a dispatch whose buffers
/// are pushed already needs none).
fn descriptor_writes<'a>(
    set: vk::DescriptorSet,
    infos: &'a [[vk::DescriptorBufferInfo; 1]],
    views: &'a [[vk::BufferView; 1]],
    kinds: &[Binding],
) -> SmallVec<[vk::WriteDescriptorSet<'a>; INLINE_BINDINGS]> {
    infos
        .iter()
        .zip(views)
        .zip(kinds)
        .enumerate()
        .map(|(i, ((info, view), kind))| {
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32);
            match kind {
                Binding::Storage => w
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info),
                Binding::Texels(_) => w
                    .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
                    .texel_buffer_view(view),
            }
        })
        .collect()
}
