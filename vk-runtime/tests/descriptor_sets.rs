//! Kernels bound through descriptor sets, as on a device without
//! VK_KHR_push_descriptor: this binary turns push descriptors off
//! (`ACCL_PUSH_DESCRIPTORS=0`, for every test in it), so both ways of
//! binding run under the validation layer in CI.

mod common;

use common::*;
use vk_runtime::{BufferBinding, ComputePipeline, Queue};

#[test]
fn dispatches_bind_their_buffers_through_descriptor_sets() {
    std::env::set_var("ACCL_PUSH_DESCRIPTORS", "0");
    with_validation(|instance| {
        let dev = device(instance);
        assert!(!dev.pushes_descriptors());
        let pipe = ComputePipeline::new(&dev, &affine_spirv(), "main", 1, 12, &[]).unwrap();
        let mut q = Queue::new(&dev, 0).unwrap();
        let n = 256u32;
        let init: Vec<u32> = (0..n).collect();
        let buf = upload(&mut q, &bytes_of_u32(&init));
        for k in 0..100u32 {
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(&buf)],
                &bytes_of_u32(&[3, k, n]),
                groups_for(n),
            )
            .unwrap();
        }
        let got = u32s(&download(&mut q, &buf));
        for (i, &g) in got.iter().enumerate() {
            let want = (0..100u32).fold(i as u32, |v, k| affine_cpu(v, 3, k));
            assert_eq!(g, want, "element {i}");
        }
        assert!(q.stats().descriptor_pools_created >= 1);
    });
}
