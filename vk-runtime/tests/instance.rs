//! Instance creation and adapter listing, checked against an independent
//! query through ash and against lavapipe's known limits, queues and
//! features.

mod common;

use ash::vk;
use vk_runtime::{Device, DeviceType, Instance, InstanceOptions, QueueRole, VkError};

/// Limits and features read straight from the driver, without vk-runtime.
struct Independent {
    name: String,
    limits: vk::PhysicalDeviceLimits,
    f64: bool,
    i64: bool,
    timeline: bool,
    int8: bool,
    storage8: bool,
    families: Vec<vk::QueueFamilyProperties>,
}

fn independent_query() -> Vec<Independent> {
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let inst = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .unwrap();
        let mut out = Vec::new();
        for pd in inst.enumerate_physical_devices().unwrap() {
            let props = inst.get_physical_device_properties(pd);
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12);
            inst.get_physical_device_features2(pd, &mut f2);
            let f10 = f2.features;
            out.push(Independent {
                name: props
                    .device_name_as_c_str()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                limits: props.limits,
                f64: f10.shader_float64 == vk::TRUE,
                i64: f10.shader_int64 == vk::TRUE,
                timeline: f12.timeline_semaphore == vk::TRUE,
                int8: f12.shader_int8 == vk::TRUE,
                storage8: f12.storage_buffer8_bit_access == vk::TRUE,
                families: inst.get_physical_device_queue_family_properties(pd),
            });
        }
        inst.destroy_instance(None);
        out
    }
}

#[test]
fn adapters_match_the_driver() {
    common::with_validation(|instance| {
        let adapters = instance.adapters().unwrap();
        assert!(
            !adapters.is_empty(),
            "no compute adapter (is lavapipe installed?)"
        );
        let raw = independent_query();
        for (i, a) in adapters.iter().enumerate() {
            assert_eq!(a.index, i);
            let r = raw
                .iter()
                .find(|r| r.name == a.name)
                .expect("adapter also seen by the independent query");
            let l = &a.limits;
            assert_eq!(
                l.max_storage_buffer_range,
                r.limits.max_storage_buffer_range as u64
            );
            assert_eq!(
                l.max_compute_work_group_count,
                r.limits.max_compute_work_group_count
            );
            assert_eq!(
                l.max_compute_work_group_size,
                r.limits.max_compute_work_group_size
            );
            assert_eq!(
                l.max_compute_work_group_invocations,
                r.limits.max_compute_work_group_invocations
            );
            assert_eq!(
                l.max_compute_shared_memory_size,
                r.limits.max_compute_shared_memory_size
            );
            assert_eq!(l.max_push_constants_size, r.limits.max_push_constants_size);
            assert_eq!(
                l.min_storage_buffer_offset_alignment,
                r.limits.min_storage_buffer_offset_alignment
            );
            assert_eq!(l.timestamp_period, r.limits.timestamp_period);
            // Vulkan's required minimums hold everywhere.
            assert!(l.max_storage_buffer_range >= 1 << 27);
            assert!(l.max_push_constants_size >= 128);
            assert!(l.max_compute_work_group_count.iter().all(|&c| c >= 65535));
            assert!(l.subgroup_size >= 1);
            let f = &a.features;
            assert_eq!(f.shader_float64, r.f64);
            assert_eq!(f.shader_int64, r.i64);
            assert_eq!(f.timeline_semaphore, r.timeline);
            assert_eq!(f.shader_int8, r.int8);
            assert_eq!(f.storage_buffer_8bit_access, r.storage8);
            assert_eq!(a.queue_families.len(), r.families.len());
            for (q, rq) in a.queue_families.iter().zip(&r.families) {
                assert_eq!(q.count, rq.queue_count);
                assert_eq!(q.compute, rq.queue_flags.contains(vk::QueueFlags::COMPUTE));
                assert_eq!(q.timestamp_valid_bits, rq.timestamp_valid_bits);
            }
            assert!(a.queue_families.iter().any(|q| q.compute));
        }
        // Ordered discrete, integrated, virtual, CPU.
        let rank = |t: DeviceType| t as u8;
        assert!(adapters
            .windows(2)
            .all(|w| rank(w[0].device_type) <= rank(w[1].device_type)));
    });
}

#[test]
fn lavapipe_facts() {
    common::with_validation(|instance| {
        let adapters = instance.adapters().unwrap();
        let Some(lvp) = adapters.iter().find(|a| a.name.starts_with("llvmpipe")) else {
            eprintln!("lavapipe not present; skipping its facts");
            return;
        };
        assert_eq!(lvp.device_type, DeviceType::Cpu);
        assert!(lvp.api_version >= (1, 3, 0));
        assert_eq!(lvp.limits.max_storage_buffer_range, 128 << 20);
        assert_eq!(lvp.limits.max_compute_work_group_count[0], 65535);
        assert_eq!(lvp.queue_families.len(), 1);
        assert_eq!(lvp.queue_families[0].count, 1);
        assert!(lvp.queue_families[0].compute && lvp.queue_families[0].transfer);
        let f = &lvp.features;
        assert!(f.timeline_semaphore && f.shader_float64 && f.shader_int64);
        assert!(f.storage_buffer_8bit_access && f.shader_int8);
        assert!(f.ext_shader_atomic_float && f.shader_buffer_float32_atomic_add);
        assert!(
            !f.shader_buffer_float64_atomic_add,
            "lavapipe has no f64 atomic add"
        );
        assert!(f.subgroup_operations.contains(&"basic"));
        let text = lvp.to_string();
        assert!(
            text.contains("llvmpipe") && text.contains("128 MiB"),
            "{text}"
        );
        println!("{text}");

        let dev = Device::new(instance, lvp.index).unwrap();
        let qs = dev.vk_queues();
        assert_eq!(qs.len(), 1);
        assert_eq!(qs[0].role, QueueRole::Compute);
        assert!(dev.transfer_queues().is_empty());
        // Every accl queue number maps onto the single queue.
        assert_eq!(dev.compute_queue_for(7), qs[0]);
    });
}

#[test]
fn bad_adapter_index_is_a_typed_error() {
    common::with_validation(|instance| {
        let n = instance.adapters().unwrap().len();
        match Device::new(instance, n + 3) {
            Err(VkError::NoAdapter { index, count }) => {
                assert_eq!((index, count), (n + 3, n));
            }
            other => panic!("expected NoAdapter, got {other:?}"),
        }
    });
}

#[test]
fn messages_are_recorded_and_taken() {
    // A deliberate misuse through raw ash on our instance is not possible
    // from outside, so check the plumbing: empty list, take clears it.
    let instance = Instance::new(&InstanceOptions {
        validation: true,
        app_name: String::new(),
    })
    .unwrap();
    assert!(instance.validation_messages().is_empty());
    assert!(instance.take_validation_messages().is_empty());
    let dev = Device::new(&instance, 0).unwrap();
    drop(dev);
    assert!(instance.validation_messages().is_empty());
}
