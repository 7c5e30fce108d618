//! Sharing the GPU with the host program's own Vulkan code (ash): the
//! program makes its own instance and device and hands them to accl
//! (`Engine::from_vulkan`), fills an accl array's device buffer with its
//! own compute shader, on accl's queue, then an accl script goes on from
//! there on the device, with no copy in between.
//!
//! Run: `cargo run --example embed_vulkan` (any Vulkan device; the tests
//! run it on lavapipe, with the validation layer on when
//! `ACCL_VALIDATION=1`: its messages, which this program's own messenger
//! collects, fail the run).

use accl::ash::{self, vk};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv;
use std::sync::Mutex;

const N: u32 = 10_000;

/// Warnings and errors of the validation layer.
static PROBLEMS: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "system" fn collect(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    let msg = (*data).message_as_c_str().unwrap_or_default();
    PROBLEMS
        .lock()
        .unwrap()
        .push(msg.to_string_lossy().into_owned());
    vk::FALSE
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let validation = std::env::var("ACCL_VALIDATION").as_deref() == Ok("1");
    // SAFETY: plain ash use; everything made here is destroyed at the end,
    // after the engine that uses it is dropped.
    unsafe {
        let entry = ash::Entry::load()?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let exts = [ash::ext::debug_utils::NAME.as_ptr()];
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info
                .enabled_layer_names(&layers)
                .enabled_extension_names(&exts);
        }
        let instance = entry.create_instance(&info, None)?;
        let debug = ash::ext::debug_utils::Instance::new(&entry, &instance);
        let messenger = if validation {
            Some(
                debug.create_debug_utils_messenger(
                    &vk::DebugUtilsMessengerCreateInfoEXT::default()
                        .message_severity(
                            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                        )
                        .message_type(
                            vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                                | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
                        )
                        .pfn_user_callback(Some(collect)),
                    None,
                )?,
            )
        } else {
            None
        };
        // The first device with a compute queue; one queue of that family,
        // timeline semaphores on (accl needs them).
        let (physical, family) = instance
            .enumerate_physical_devices()?
            .into_iter()
            .find_map(|p| {
                instance
                    .get_physical_device_queue_family_properties(p)
                    .iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
                    .map(|f| (p, f as u32))
            })
            .ok_or("no Vulkan device with a compute queue")?;
        let priority = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priority)];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let device = instance.create_device(
            physical,
            &vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .push_next(&mut v12),
            None,
        )?;

        let shared = accl::ExternalDevice {
            physical_device: physical,
            device: device.handle(),
            queues: vec![(family, 1)],
            features: Vec::new(),
            extensions: Vec::new(),
        };
        let r = accl::Engine::from_vulkan(instance.handle(), &shared)
            .map_err(Into::into)
            .and_then(|mut e| run(&mut e));

        device.destroy_device(None);
        if let Some(m) = messenger {
            debug.destroy_debug_utils_messenger(m, None);
        }
        instance.destroy_instance(None);
        r?;
    }
    let problems = PROBLEMS.lock().unwrap();
    if !problems.is_empty() {
        return Err(format!("validation messages:\n{}", problems.join("\n")).into());
    }
    Ok(())
}

/// accl on the program's device: `a` created there, filled by the
/// program's own shader, then used by a script.
fn run(e: &mut accl::Engine) -> Result<(), Box<dyn std::error::Error>> {
    e.eval(&format!(
        "const n = {N}; let a = zeros(f32, n); enter data create(a);"
    ))?;

    // accl's queue and the buffer that holds `a` on the device.
    let vd = e.vulkan_device()?;
    let buf = e.device_buffer("a")?;
    // SAFETY: the handles are live while `e` is, and every object made
    // there is destroyed before it returns.
    unsafe { fill_on_device(&vd, &buf)? };

    // The script takes the array as the host program left it.
    e.eval(
        "parallel loop present(a) for i in 0..n { a[i] = a[i] + 1.0; }
         exit data copyout(a);
         for i in 0..n { assert(a[i] == i as f32 * 0.5 + 1.0, \"a[i]\"); }",
    )?;
    let (a, _) = e.get_array::<f32>("a").ok_or("no array `a`")?;
    println!(
        "the host program's shader filled accl's buffer on the program's own device: a[{}] = {}",
        N - 1,
        a[N as usize - 1]
    );
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
