//! Sharing the device with the host program's Vulkan code: the device's
//! handles and the buffers of a present array (`Engine::vulkan_device`,
//! `Engine::device_buffer`, `Engine::device_buffers`), on lavapipe with the
//! validation layer on.
//! The whole round trip (the host program's own shader filling accl's
//! buffer) is `examples/embed_vulkan.rs`, run by `examples_embed`.

use crate::common;
use common::device_engine;

#[test]
fn the_device_handles_and_the_queue_of_synchronous_work() {
    let mut e = device_engine();
    let vd = e.vulkan_device().unwrap();
    use accl::ash::vk::Handle;
    assert!(!vd.instance.is_null() && !vd.device.is_null() && !vd.physical_device.is_null());
    assert_eq!(vd.device_number, 0);
    assert!(
        vd.api_version.0 == 1 && vd.api_version.1 >= 2,
        "{:?}",
        vd.api_version
    );
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn a_present_section_is_its_rows_of_one_buffer() {
    let mut e = device_engine();
    e.eval("let a = zeros(f32, 10, 3); enter data copyin(a[2:5]);")
        .unwrap();
    let b = e.device_buffer("a").unwrap();
    assert_eq!((b.first_row, b.rows), (2, 5));
    assert_eq!(b.size, 5 * 3 * 4);
    assert_eq!(b.offset, 0);
    use accl::ash::vk::Handle;
    assert!(!b.buffer.is_null());
    // The same buffer while the section stays present.
    assert_eq!(e.device_buffer("a").unwrap().buffer, b.buffer);
    e.eval("exit data delete(a[2:5]);").unwrap();
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn what_has_no_device_buffer_is_an_api_error() {
    let mut e = device_engine();
    e.eval("let a = zeros(i32, 8); let x = 1.0;").unwrap();
    let err = e.device_buffer("a").unwrap_err();
    assert_eq!(err.code(), "accl::api::vulkan");
    assert!(err.to_string().contains("not present on device 0"), "{err}");
    assert_eq!(
        e.device_buffer("x").unwrap_err().code(),
        "accl::api::vulkan"
    );
    e.eval("enter data copyin(a[0:2]); enter data copyin(a[5:2]);")
        .unwrap();
    let err = e.device_buffer("a").unwrap_err();
    assert!(err.to_string().contains("2 separate sections"), "{err}");
    e.eval("exit data delete(a[0:2]); exit data delete(a[5:2]);")
        .unwrap();

    let mut host = accl::Engine::new();
    host.eval("let a = zeros(i32, 8); enter data copyin(a);")
        .unwrap();
    assert_eq!(
        host.vulkan_device().unwrap_err().code(),
        "accl::api::vulkan"
    );
    assert_eq!(
        host.device_buffer("a").unwrap_err().code(),
        "accl::api::vulkan"
    );
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn the_buffer_is_handed_out_after_pending_work_is_done() {
    let mut e = device_engine();
    // Async work and lazily completed synchronous kernels on `a`: the
    // buffer is handed out once the device is idle, and the values the
    // script computed are there when they are copied back.
    e.eval(
        "let a = zeros(f32, 4096); enter data copyin(a);
         parallel loop present(a) async(1) for i in 0..4096 { a[i] = i as f32; }
         wait(1);
         parallel loop present(a) for i in 0..4096 { a[i] = a[i] * 2.0; }",
    )
    .unwrap();
    e.device_buffer("a").unwrap();
    e.eval("exit data copyout(a);").unwrap();
    let (a, _) = e.get_array::<f32>("a").unwrap();
    assert_eq!(a[4095], 8190.0);
    assert!(e.take_validation_messages().is_empty());
}

/// Fill `buf` with the 32-bit pattern `bits` with our own command buffer
/// on accl's queue, and wait for it (what an embedder's function inside
/// `host_data` does with its own Vulkan code).
fn fill_with(vd: &accl::VulkanDevice, buf: &accl::DeviceBuffer, bits: u32) {
    use accl::ash::{self, vk};
    // SAFETY: accl's live handles; every object made here is destroyed
    // before returning, and the fence is waited for.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let instance = ash::Instance::load(entry.static_fn(), vd.instance);
        let device = ash::Device::load(instance.fp_v1_0(), vd.device);
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(vd.queue_family),
                None,
            )
            .unwrap();
        let cmd = device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .command_buffer_count(1),
            )
            .unwrap()[0];
        device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .unwrap();
        let all = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
        device.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &[all],
            &[],
            &[],
        );
        device.cmd_fill_buffer(cmd, buf.buffer, buf.offset, buf.size, bits);
        device.end_command_buffer(cmd).unwrap();
        let fence = device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .unwrap();
        let queue = device.get_device_queue(vd.queue_family, vd.queue_index);
        let cmds = [cmd];
        device
            .queue_submit(
                queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                fence,
            )
            .unwrap();
        device.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        device.destroy_fence(fence, None);
        device.destroy_command_pool(pool, None);
    }
}

#[test]
fn an_array_present_as_sections_gives_one_buffer_each() {
    let mut e = device_engine();
    let vd = e.vulkan_device().unwrap();
    // Entered last row block first: the buffers come in row order.
    e.eval("let a = zeros(f32, 10, 3); enter data copyin(a[6:3]); enter data copyin(a[0:2]);")
        .unwrap();
    let bufs = e.device_buffers("a").unwrap();
    let rows: Vec<_> = bufs.iter().map(|b| (b.first_row, b.rows, b.size)).collect();
    assert_eq!(rows, [(0, 2, 2 * 3 * 4), (6, 3, 3 * 3 * 4)]);
    assert_ne!(bufs[0].buffer, bufs[1].buffer);
    // The one-buffer form says why it has none.
    let err = e.device_buffer("a").unwrap_err();
    assert!(err.to_string().contains("2 separate sections"), "{err}");
    // Each buffer holds its own rows: filled here, read back by the script.
    fill_with(&vd, &bufs[0], 1.5f32.to_bits());
    fill_with(&vd, &bufs[1], 2.5f32.to_bits());
    e.eval("update self(a[0:2]); update self(a[6:3]); exit data delete(a[0:2], a[6:3]);")
        .unwrap();
    let (a, _) = e.get_array::<f32>("a").unwrap();
    for (r, row) in a.chunks(3).enumerate() {
        let want = match r {
            0..2 => 1.5,
            6..9 => 2.5,
            _ => 0.0,
        };
        assert!(row.iter().all(|&x| x == want), "row {r}: {row:?}");
    }
    // A single section is a list of one; nothing present is an error.
    e.eval("enter data copyin(a);").unwrap();
    assert_eq!(e.device_buffers("a").unwrap().len(), 1);
    e.eval("exit data delete(a);").unwrap();
    let err = e.device_buffers("a").unwrap_err();
    assert!(err.to_string().contains("not present on device 0"), "{err}");
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn host_data_hands_the_device_copy_to_an_embedders_function() {
    let mut e = device_engine();
    let vd = e.vulkan_device().unwrap();
    let seen = std::rc::Rc::new(std::cell::Cell::new(None));
    let s = seen.clone();
    e.register_fn("fill_device", move |b: accl::DeviceBuffer, x: f32| {
        s.set(Some(b));
        fill_with(&vd, &b, x.to_bits());
    });
    e.eval(
        "let a = zeros(f32, 64, 4);
         data copyin(a[8:16]) {
             parallel loop present(a[8:16]) for i in 8..24 { a[i, 0] = 1.0; }
             host_data use_device(a) { fill_device(a, 2.5); }
             parallel loop present(a[8:16]) for i in 8..24 { a[i, 1] = a[i, 1] + 1.0; }
             update self(a[8:16]);
         }",
    )
    .unwrap();
    let b = seen.get().expect("the function ran");
    assert_eq!((b.first_row, b.rows, b.size), (8, 16, 16 * 4 * 4));
    let (a, _) = e.get_array::<f32>("a").unwrap();
    // Rows 8..24: what the embedder wrote, then the kernel after it.
    assert_eq!(&a[8 * 4..8 * 4 + 4], &[2.5, 3.5, 2.5, 2.5]);
    assert_eq!(&a[23 * 4..24 * 4], &[2.5, 3.5, 2.5, 2.5]);
    // Other rows were never on the device.
    assert!(a[..8 * 4].iter().chain(&a[24 * 4..]).all(|&x| x == 0.0));
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn host_data_misuse_is_reported() {
    let mut e = device_engine();
    e.register_fn("takes_device", |_b: accl::DeviceBuffer| {});
    e.eval("let a = zeros(f32, 16); let x = 1.0;").unwrap();
    // Outside `host_data`, the function has no device copy to take.
    let err = e.eval("takes_device(a);").unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
    assert!(err.to_string().contains("host_data use_device"), "{err}");
    // Not present.
    let err = e
        .eval("host_data use_device(a) { takes_device(a); }")
        .unwrap_err();
    assert_eq!(err.code(), "accl::device::host_data");
    assert!(err.to_string().contains("not present on device 0"), "{err}");
    // `if_present`: the body runs; the function still has nothing to take.
    let err = e
        .eval("host_data use_device(a) if_present { takes_device(a); }")
        .unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
    // The clause is required, and names arrays.
    let err = e.eval("host_data { takes_device(a); }").unwrap_err();
    assert_eq!(err.code(), "accl::device::missing_clause");
    let err = e.eval("host_data use_device(x) { }").unwrap_err();
    assert_eq!(err.code(), "accl::device::clause_arguments");
    // Not inside a device construct.
    let err = e
        .eval("enter data copyin(a); parallel { host_data use_device(a) { } }")
        .unwrap_err();
    assert_eq!(err.code(), "accl::device::nested_construct");
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn on_the_host_backend_host_data_runs_its_body_without_device_copies() {
    let mut e = accl::Engine::new();
    e.register_fn("takes_device", |_b: accl::DeviceBuffer| {});
    e.register_fn("rows", |a: accl::Array| a.shape()[0] as i32);
    e.eval("let a = zeros(f32, 16); enter data copyin(a); let n = 0; host_data use_device(a) { n = rows(a); }")
        .unwrap();
    assert_eq!(e.get::<i32>("n"), Some(16));
    let err = e
        .eval("host_data use_device(a) { takes_device(a); }")
        .unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
}

/// A device-local buffer of `size` bytes made with our own Vulkan code on
/// accl's device, as `Engine::map_device_array` asks: (device, buffer,
/// memory), for `free_own_buffer`.
fn own_buffer(
    vd: &accl::VulkanDevice,
    size: u64,
) -> (
    accl::ash::Device,
    accl::ash::vk::Buffer,
    accl::ash::vk::DeviceMemory,
) {
    use accl::ash::{self, vk};
    // SAFETY: accl's live handles; the caller frees what is made here.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let instance = ash::Instance::load(entry.static_fn(), vd.instance);
        let device = ash::Device::load(instance.fp_v1_0(), vd.device);
        let mut info = vk::BufferCreateInfo::default().size(size).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST,
        );
        if vd.queue_families.len() > 1 {
            info = info
                .sharing_mode(vk::SharingMode::CONCURRENT)
                .queue_family_indices(&vd.queue_families);
        }
        let buffer = device.create_buffer(&info, None).unwrap();
        let req = device.get_buffer_memory_requirements(buffer);
        let props = instance.get_physical_device_memory_properties(vd.physical_device);
        let ty = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .expect("a device-local memory type");
        let memory = device
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            )
            .unwrap();
        device.bind_buffer_memory(buffer, memory, 0).unwrap();
        (device, buffer, memory)
    }
}

#[test]
fn an_array_mapped_onto_the_programs_own_buffer() {
    let mut e = device_engine();
    let vd = e.vulkan_device().unwrap();
    let (device, buffer, memory) = own_buffer(&vd, 1024 * 4);
    e.eval("let a = zeros(f32, 1024); let small = zeros(f32, 2048);")
        .unwrap();
    // SAFETY: made above as the method asks; freed after the mapping ends.
    unsafe {
        e.map_device_array("a", buffer, 1024 * 4).unwrap();
        let err = e.map_device_array("a", buffer, 1024 * 4).unwrap_err();
        assert!(err.to_string().contains("already present"), "{err}");
        let err = e.map_device_array("small", buffer, 1024 * 4).unwrap_err();
        assert!(err.to_string().contains("the array needs 8192"), "{err}");
    }
    e.eval(
        "parallel loop deviceptr(a) for i in 0..1024 { a[i] = i as f32 * 3.0; }
         let before = a[5];
         update self(a);
         let after = a[5];",
    )
    .unwrap();
    assert_eq!(e.get::<f32>("before"), Some(0.0));
    assert_eq!(e.get::<f32>("after"), Some(15.0));
    // The device copy is the program's buffer.
    assert_eq!(e.device_buffer("a").unwrap().buffer, buffer);
    e.eval("exit data delete(a);").unwrap();
    assert!(e.device_buffer("a").is_err());
    // SAFETY: accl no longer uses it (the device is idle after the wait
    // `device_buffer` made, and the mapping ended).
    unsafe {
        device.destroy_buffer(buffer, None);
        device.free_memory(memory, None);
    }
    let mut host = accl::Engine::new();
    host.eval("let a = zeros(f32, 4);").unwrap();
    // SAFETY: refused before the handle is used.
    let err = unsafe { host.map_device_array("a", buffer, 16) }.unwrap_err();
    assert_eq!(err.code(), "accl::api::vulkan");
    assert!(e.take_validation_messages().is_empty());
}

/// An engine on a device this test made itself: the features it says it
/// enabled are the ones accl uses, and a bad description is refused.
#[test]
fn an_engine_on_the_programs_own_device() {
    use accl::ash::{self, vk};
    common::set_env_once(&[]);
    // SAFETY: plain ash use; the device and instance are destroyed after
    // the engines that use them are dropped.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .unwrap();
        let (physical, family) = instance
            .enumerate_physical_devices()
            .unwrap()
            .into_iter()
            .find_map(|p| {
                instance
                    .get_physical_device_queue_family_properties(p)
                    .iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
                    .map(|f| (p, f as u32))
            })
            .unwrap();
        let priority = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priority)];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .push_next(&mut v12),
                None,
            )
            .unwrap();
        let mut shared = accl::ExternalDevice {
            physical_device: physical,
            device: device.handle(),
            queues: vec![(family, 1)],
            features: vec!["shaderFloat128".into()],
            extensions: Vec::new(),
        };
        let Err(err) = accl::Engine::from_vulkan(instance.handle(), &shared) else {
            panic!("refused")
        };
        assert_eq!(err.code(), "accl::device::open");
        assert!(err.to_string().contains("shaderFloat64"), "{err}");
        shared.features.clear();
        shared.queues = vec![(family, 99)];
        let Err(err) = accl::Engine::from_vulkan(instance.handle(), &shared) else {
            panic!("refused")
        };
        assert!(err.to_string().contains("99 queue(s)"), "{err}");
        shared.queues = vec![(family, 1)];
        {
            let mut e = accl::Engine::from_vulkan(instance.handle(), &shared).unwrap();
            assert_eq!(e.devices().len(), 1);
            e.eval(
                "let a = arange(f32, 1000.0); let s = 0.0f32;
                 parallel loop reduction(+: s) for i in 0..1000 { s += a[i]; }
                 parallel loop async(1) for i in 0..1000 { a[i] = a[i] * 2.0; }
                 wait(1);",
            )
            .unwrap();
            assert_eq!(e.get::<f32>("s"), Some(499500.0));
            assert_eq!(e.get_array::<f32>("a").unwrap().0[999], 1998.0);
            assert_eq!(e.vulkan_device().unwrap().device, device.handle());
            // shaderFloat64 was not enabled: f64 arithmetic in a kernel
            // is refused, not run on a feature the device lacks.
            let err = e
                .eval(
                    "let d = zeros(f64, 4); parallel loop for i in 0..4 { d[i] = i as f64 * 0.5; }",
                )
                .unwrap_err();
            assert!(err.to_string().to_lowercase().contains("float64"), "{err}");
        }
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
}
