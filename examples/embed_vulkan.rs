//! Sharing the GPU with the host program's own Vulkan code (ash): the
//! program fills an accl array's device buffer with its own compute shader,
//! on accl's device and queue, then an accl script goes on from there on
//! the device, with no copy in between.
//!
//! Run: `cargo run --example embed_vulkan` (any Vulkan device; the tests
//! run it on lavapipe with the validation layer on).

use accl::ash::{self, vk};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv;

const N: u32 = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut e = accl::Engine::vulkan(0)?;
    e.eval(&format!(
        "const n = {N}; let a = zeros(f32, n); enter data create(a);"
    ))?;

    // accl's device and the buffer that holds `a` there.
    let vd = e.vulkan_device()?;
    let buf = e.device_buffer("a")?;
    // SAFETY: the handles are live while `e` is, and every object made
    // below is destroyed before the function returns.
    unsafe { fill_on_device(&vd, &buf)? };

    // The script takes the array as the host program left it.
    e.eval(
        "parallel loop present(a) for i in 0..n { a[i] = a[i] + 1.0; }
         exit data copyout(a);
         for i in 0..n { assert(a[i] == i as f32 * 0.5 + 1.0, \"a[i]\"); }",
    )?;
    let (a, _) = e.get_array::<f32>("a").ok_or("no array `a`")?;
    println!(
        "the host program's shader filled accl's buffer: a[{}] = {}",
        N - 1,
        a[N as usize - 1]
    );
    let messages = e.take_validation_messages();
    if !messages.is_empty() {
        return Err(format!("validation messages:\n{}", messages.join("\n")).into());
    }
    Ok(())
}

/// Run `a[i] = i * 0.5` over the device buffer with our own pipeline, on
/// accl's queue, and wait for it.
unsafe fn fill_on_device(
    vd: &accl::VulkanDevice,
    buf: &accl::DeviceBuffer,
) -> Result<(), Box<dyn std::error::Error>> {
    let entry = ash::Entry::load()?;
    let instance = ash::Instance::load(entry.static_fn(), vd.instance);
    let device = ash::Device::load(instance.fp_v1_0(), vd.device);

    let words = fill_shader();
    let module =
        device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)?;
    let binding = [vk::DescriptorSetLayoutBinding::default()
        .binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)];
    let set_layout = device.create_descriptor_set_layout(
        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
        None,
    )?;
    let push = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(4)];
    let layouts = [set_layout];
    let layout = device.create_pipeline_layout(
        &vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&layouts)
            .push_constant_ranges(&push),
        None,
    )?;
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let pipeline = device
        .create_compute_pipelines(
            vk::PipelineCache::null(),
            &[vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)],
            None,
        )
        .map_err(|(_, e)| e)?[0];
    let sizes = [vk::DescriptorPoolSize::default()
        .ty(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)];
    let pool = device.create_descriptor_pool(
        &vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes),
        None,
    )?;
    let set = device.allocate_descriptor_sets(
        &vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts),
    )?[0];
    let info = [vk::DescriptorBufferInfo::default()
        .buffer(buf.buffer)
        .offset(buf.offset)
        .range(buf.size)];
    device.update_descriptor_sets(
        &[vk::WriteDescriptorSet::default()
            .dst_set(set)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info)],
        &[],
    );

    let cmd_pool = device.create_command_pool(
        &vk::CommandPoolCreateInfo::default().queue_family_index(vd.queue_family),
        None,
    )?;
    let cmd = device.allocate_command_buffers(
        &vk::CommandBufferAllocateInfo::default()
            .command_pool(cmd_pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1),
    )?[0];
    device.begin_command_buffer(
        cmd,
        &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
    )?;
    // accl's earlier writes to the buffer happen before our shader's.
    let all = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
    device.cmd_pipeline_barrier(
        cmd,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::DependencyFlags::empty(),
        &[all],
        &[],
        &[],
    );
    device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
    device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
    device.cmd_push_constants(
        cmd,
        layout,
        vk::ShaderStageFlags::COMPUTE,
        0,
        &N.to_ne_bytes(),
    );
    device.cmd_dispatch(cmd, N.div_ceil(64), 1, 1);
    device.end_command_buffer(cmd)?;

    let queue = device.get_device_queue(vd.queue_family, vd.queue_index);
    let fence = device.create_fence(&vk::FenceCreateInfo::default(), None)?;
    let cmds = [cmd];
    device.queue_submit(
        queue,
        &[vk::SubmitInfo::default().command_buffers(&cmds)],
        fence,
    )?;
    device.wait_for_fences(&[fence], true, u64::MAX)?;

    device.destroy_fence(fence, None);
    device.destroy_command_pool(cmd_pool, None);
    device.destroy_descriptor_pool(pool, None);
    device.destroy_pipeline(pipeline, None);
    device.destroy_pipeline_layout(layout, None);
    device.destroy_descriptor_set_layout(set_layout, None);
    device.destroy_shader_module(module, None);
    Ok(())
}

/// A compute shader, `a[i] = float(i) * 0.5` for `i < n` (push constant),
/// 64 lanes a workgroup, built with rspirv.
fn fill_shader() -> Vec<u32> {
    use spirv::{Decoration as D, StorageClass as S};
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(spirv::Capability::Shader);
    b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
    let void = b.type_void();
    let fn_ty = b.type_function(void, vec![]);
    let u32t = b.type_int(32, 0);
    let f32t = b.type_float(32, None);
    let boolt = b.type_bool();
    let v3u = b.type_vector(u32t, 3);
    let rt = b.type_runtime_array(f32t);
    b.decorate(rt, D::ArrayStride, [Operand::LiteralBit32(4)]);
    let data = b.type_struct([rt]);
    b.decorate(data, D::Block, []);
    b.member_decorate(data, 0, D::Offset, [Operand::LiteralBit32(0)]);
    let data_ptr = b.type_pointer(None, S::StorageBuffer, data);
    let buffer = b.variable(data_ptr, None, S::StorageBuffer, None);
    b.decorate(buffer, D::DescriptorSet, [Operand::LiteralBit32(0)]);
    b.decorate(buffer, D::Binding, [Operand::LiteralBit32(0)]);
    let pc = b.type_struct([u32t]);
    b.decorate(pc, D::Block, []);
    b.member_decorate(pc, 0, D::Offset, [Operand::LiteralBit32(0)]);
    let pc_ptr = b.type_pointer(None, S::PushConstant, pc);
    let push = b.variable(pc_ptr, None, S::PushConstant, None);
    let gid_ptr = b.type_pointer(None, S::Input, v3u);
    let gid = b.variable(gid_ptr, None, S::Input, None);
    b.decorate(
        gid,
        D::BuiltIn,
        [Operand::BuiltIn(spirv::BuiltIn::GlobalInvocationId)],
    );
    let zero = b.constant_bit32(u32t, 0);
    let half = b.constant_bit32(f32t, 0.5f32.to_bits());
    let u32_pc = b.type_pointer(None, S::PushConstant, u32t);
    let f32_sb = b.type_pointer(None, S::StorageBuffer, f32t);

    let main = b
        .begin_function(void, None, spirv::FunctionControl::NONE, fn_ty)
        .unwrap();
    b.begin_block(None).unwrap();
    let g = b.load(v3u, None, gid, None, []).unwrap();
    let i = b.composite_extract(u32t, None, g, [0]).unwrap();
    let n_ptr = b.access_chain(u32_pc, None, push, [zero]).unwrap();
    let n = b.load(u32t, None, n_ptr, None, []).unwrap();
    let inside = b.u_less_than(boolt, None, i, n).unwrap();
    let (body, merge) = (b.id(), b.id());
    b.selection_merge(merge, spirv::SelectionControl::NONE)
        .unwrap();
    b.branch_conditional(inside, body, merge, []).unwrap();
    b.begin_block(Some(body)).unwrap();
    let f = b.convert_u_to_f(f32t, None, i).unwrap();
    let v = b.f_mul(f32t, None, f, half).unwrap();
    let at = b.access_chain(f32_sb, None, buffer, [zero, i]).unwrap();
    b.store(at, v, None, []).unwrap();
    b.branch(merge).unwrap();
    b.begin_block(Some(merge)).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(spirv::ExecutionModel::GLCompute, main, "main", [gid]);
    b.execution_mode(main, spirv::ExecutionMode::LocalSize, [64, 1, 1]);
    use rspirv::binary::Assemble;
    b.module().assemble()
}
