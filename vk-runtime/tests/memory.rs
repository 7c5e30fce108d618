//! Large device buffers dropped and kept for the next buffer of their size.

mod common;

use common::*;
use vk_runtime::{Buffer, Queue};

#[test]
fn a_large_buffer_dropped_serves_the_next_of_its_size() {
    with_validation(|instance| {
        let dev = device(instance);
        let mut q = Queue::new(&dev, 0).unwrap();
        let size = 256u64 << 20;
        let (_, before) = dev.memory_in_use();
        let a = Buffer::new(&dev, size, "a").unwrap();
        q.fill(&a, 0, size, 7).unwrap();
        q.finish().unwrap();
        let (_, with_a) = dev.memory_in_use();
        assert!(with_a >= before + size, "{before} -> {with_a}");
        drop(a);
        // Kept: the device's memory blocks stay as they were.
        assert_eq!(dev.memory_in_use().1, with_a);
        let b = Buffer::new(&dev, size, "b").unwrap();
        assert_eq!(dev.memory_in_use().1, with_a, "the kept buffer was reused");
        q.fill(&b, 4, 4, 9).unwrap();
        let got = download(&mut q, &b);
        // The reused memory holds what was last written there; accl zeroes
        // or fills every device copy it makes before use.
        assert_eq!(u32s(&got[0..8]), [7, 9]);
        // Another size is a new buffer; the kept one stays for its size.
        let c = Buffer::new(&dev, size + 4096, "c").unwrap();
        assert!(dev.memory_in_use().1 >= with_a + size);
        q.fill(&c, 0, 16, 1).unwrap();
        assert_eq!(u32s(&download(&mut q, &c)[0..4]), [1]);
        drop((b, c));
    });
}

#[test]
fn smaller_buffers_are_freed_when_dropped() {
    with_validation(|instance| {
        let dev = device(instance);
        let (before, _) = dev.memory_in_use();
        for size in [4u64, 4096, 1 << 20, (16 << 20) - 4] {
            let b = Buffer::new(&dev, size, "small").unwrap();
            assert!(dev.memory_in_use().0 >= before + size);
            drop(b);
            assert_eq!(
                dev.memory_in_use().0,
                before,
                "{size} bytes stayed allocated"
            );
        }
    });
}
