//! A standalone reproduction of a wrong result seen on NVIDIA GPUs (driver
//! 580, H100): a load of a storage-buffer element right after the same
//! invocation stored it returns the element's old value. Not run in CI.
//!
//!     spirv-as --target-env vulkan1.2 -o call.spv scripts/gpu/stale_load/call.spvasm
//!     cargo run --release -p vk-runtime --example stale_load -- call.spv inline.spv coherent.spv
//!
//! Each module (see `scripts/gpu/stale_load/README.md`) computes, for
//! invocation `i < 5` of one work group, `c[i*3 + j] = a[i*3 + j] - 64` and
//! `s += c[i*3 + j] & 63` for `j` in `0..3`, then `o[i] = s`. The runner
//! fills `a`, zeroes `c` and `o`, dispatches once and compares `o` and `c`
//! with the same computation on the host. Uses ash directly, as accl's
//! runtime does; robustBufferAccess is enabled where the device has it.

use ash::vk;

const N: usize = 5;
const M: usize = 3;

struct Buf {
    buf: vk::Buffer,
    mem: vk::DeviceMemory,
    ptr: *mut u32,
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    assert!(!paths.is_empty(), "usage: stale_load MODULE.spv..");
    // SAFETY: the loader stays loaded while `entry` lives (to the end).
    let entry = unsafe { ash::Entry::load() }.expect("Vulkan loader");
    let app = vk::ApplicationInfo::default()
        .application_name(c"stale_load")
        .api_version(vk::API_VERSION_1_2);
    let instance = unsafe {
        entry.create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
    }
    .unwrap();
    let pd = unsafe { instance.enumerate_physical_devices() }.unwrap()[0];
    let props = unsafe { instance.get_physical_device_properties(pd) };
    let name = props
        .device_name_as_c_str()
        .unwrap_or(c"?")
        .to_string_lossy();
    println!("device: {name}, driver version {:#x}", props.driver_version);
    let qfi = unsafe { instance.get_physical_device_queue_family_properties(pd) }
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .expect("a compute queue") as u32;
    let prio = [1.0f32];
    let qinfo = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(qfi)
        .queue_priorities(&prio)];
    let avail = unsafe { instance.get_physical_device_features(pd) };
    let features = vk::PhysicalDeviceFeatures::default()
        .robust_buffer_access(avail.robust_buffer_access == vk::TRUE);
    let d = unsafe {
        instance.create_device(
            pd,
            &vk::DeviceCreateInfo::default()
                .queue_create_infos(&qinfo)
                .enabled_features(&features),
            None,
        )
    }
    .unwrap();
    let queue = unsafe { d.get_device_queue(qfi, 0) };
    let mem_props = unsafe { instance.get_physical_device_memory_properties(pd) };
    let buffer = |len: usize| -> Buf {
        let info = vk::BufferCreateInfo::default()
            .size((len * 4) as u64)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        let buf = unsafe { d.create_buffer(&info, None) }.unwrap();
        let req = unsafe { d.get_buffer_memory_requirements(buf) };
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let ty = (0..mem_props.memory_type_count)
            .find(|&t| {
                req.memory_type_bits & (1 << t) != 0
                    && mem_props.memory_types[t as usize]
                        .property_flags
                        .contains(want)
            })
            .expect("host-visible coherent memory");
        let mem = unsafe {
            d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            )
        }
        .unwrap();
        unsafe { d.bind_buffer_memory(buf, mem, 0) }.unwrap();
        let ptr = unsafe { d.map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
            .unwrap() as *mut u32;
        Buf { buf, mem, ptr }
    };
    let a_host: Vec<u32> = (0..N * M)
        .map(|k| ((k / M * 7 + k % M * 5 + 18) % 11) as u32)
        .collect();
    let c_want: Vec<u32> = a_host.iter().map(|&x| x.wrapping_sub(64)).collect();
    let o_want: Vec<u32> = (0..N)
        .map(|i| (0..M).map(|j| c_want[i * M + j] & 63).sum())
        .collect();
    let mut wrong = 0;
    for path in &paths {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let words = ash::util::read_spv(&mut std::io::Cursor::new(bytes)).unwrap();
        let bufs = [buffer(64), buffer(64), buffer(64)];
        // SAFETY: each mapping holds 64 u32s; the device is idle here.
        let view = |b: &Buf| unsafe { std::slice::from_raw_parts_mut(b.ptr, 64) };
        view(&bufs[0])[..N * M].copy_from_slice(&a_host);
        view(&bufs[1]).fill(0);
        view(&bufs[2]).fill(0);
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .unwrap();
        let lb: Vec<_> = (0..3)
            .map(|k| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(k)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb),
                None,
            )
        }
        .unwrap();
        let layouts = [set_layout];
        let layout = unsafe {
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                None,
            )
        }
        .unwrap();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let pipeline = unsafe {
            d.create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(layout)],
                None,
            )
        }
        .unwrap()[0];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(3)];
        let pool = unsafe {
            d.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .unwrap();
        let set = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
        }
        .unwrap()[0];
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = bufs
            .iter()
            .map(|b| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(b.buf)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let writes: Vec<_> = (0..3)
            .map(|k| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(k as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[k])
            })
            .collect();
        unsafe { d.update_descriptor_sets(&writes, &[]) };
        let cmd_pool = unsafe {
            d.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(qfi),
                None,
            )
        }
        .unwrap();
        let cmd = unsafe {
            d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(cmd_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
        }
        .unwrap()[0];
        let to_host = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)];
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.unwrap();
        unsafe {
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cmd, 1, 1, 1);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &to_host,
                &[],
                &[],
            );
            d.end_command_buffer(cmd).unwrap();
            let cmds = [cmd];
            d.queue_submit(
                queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                fence,
            )
            .unwrap();
            d.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        }
        let o = view(&bufs[2])[..N].to_vec();
        let c = view(&bufs[1])[..N * M].to_vec();
        let ok = o == o_want && c == c_want;
        wrong += usize::from(!ok);
        println!(
            "{path}: o = {o:?} (host {o_want:?}), c {}: {}",
            if c == c_want {
                "as the host"
            } else {
                "differs"
            },
            if ok { "right" } else { "WRONG" }
        );
        unsafe {
            d.destroy_fence(fence, None);
            d.destroy_command_pool(cmd_pool, None);
            d.destroy_descriptor_pool(pool, None);
            d.destroy_pipeline(pipeline, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set_layout, None);
            d.destroy_shader_module(module, None);
            for b in bufs {
                d.destroy_buffer(b.buf, None);
                d.free_memory(b.mem, None);
            }
        }
    }
    unsafe {
        d.destroy_device(None);
        instance.destroy_instance(None);
    }
    std::process::exit(i32::from(wrong > 0));
}
