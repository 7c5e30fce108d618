//! Sharing the device with the host program's Vulkan code: the device's
//! handles and the buffer of a present array (`Engine::vulkan_device`,
//! `Engine::device_buffer`), on lavapipe with the validation layer on.
//! The whole round trip (the host program's own shader filling accl's
//! buffer) is `examples/embed_vulkan.rs`, run by `examples_embed`.

mod common;
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
