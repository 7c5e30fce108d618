//! Buffers, staging, real kernels, several devices and the pipeline cache.

mod common;

use common::*;
use vk_runtime::{
    Buffer, BufferBinding, ComputePipeline, CopyRegion, Device, GpuBuffer, HostBuffer, Queue,
    StagingBuffer, StagingKind, VkError,
};

#[test]
fn staging_round_trip_1_mib() {
    with_validation(|instance| {
        let dev = device(instance);
        let mut q = Queue::new(&dev, 0).unwrap();
        let data = Rng(0x9e37_79b9_7f4a_7c15).bytes(1 << 20);
        let buf = upload(&mut q, &data);
        assert_eq!(buf.size(), 1 << 20);
        let back = download(&mut q, &buf);
        assert!(back == data, "round trip changed the bytes");

        // A device-to-device copy with offsets, then fill and zero.
        let other = Buffer::new(&dev, 4096, "other").unwrap();
        q.copy_buffer(&buf, 1000, &other, 96, 2000).unwrap();
        q.fill(&other, 0, 16, 0xdead_beef).unwrap();
        q.zero(&other, 4000, 96).unwrap();
        q.finish().unwrap();
        let got = download(&mut q, &other);
        assert_eq!(&got[96..2096], &data[1000..3000]);
        assert_eq!(u32s(&got[0..16]), vec![0xdead_beef; 4]);
        assert!(got[4000..].iter().all(|&b| b == 0));
    });
}

#[test]
fn strided_copies_move_only_their_regions() {
    with_validation(|instance| {
        let dev = device(instance);
        let mut q = Queue::new(&dev, 0).unwrap();
        let data = Rng(0x2545_f491_4f6c_dd1d).bytes(4096);
        let buf = upload(&mut q, &data);
        let other = Buffer::new(&dev, 4096, "other").unwrap();
        q.zero(&other, 0, 4096).unwrap();
        // A column of 4-byte elements of 16 rows of 256 bytes, and an odd
        // region; an empty one records nothing.
        let mut regions: Vec<CopyRegion> = (0..16)
            .map(|r| CopyRegion {
                src_offset: r * 256 + 12,
                dst_offset: r * 256 + 12,
                size: 4,
            })
            .collect();
        regions.push(CopyRegion {
            src_offset: 1,
            dst_offset: 4001,
            size: 3,
        });
        regions.push(CopyRegion {
            src_offset: 0,
            dst_offset: 0,
            size: 0,
        });
        q.copy_regions(&buf, &other, &regions).unwrap();
        q.finish().unwrap();
        let got = download(&mut q, &other);
        for (i, b) in got.iter().enumerate() {
            let want = if i % 256 >= 12 && i % 256 < 16 {
                data[i]
            } else if (4001..4004).contains(&i) {
                data[i - 4000]
            } else {
                0
            };
            assert_eq!(*b, want, "byte {i}");
        }
        // Out of range, and one buffer as both ends, are refused.
        let past = [CopyRegion {
            src_offset: 4090,
            dst_offset: 0,
            size: 8,
        }];
        assert!(matches!(
            q.copy_regions(&buf, &other, &past),
            Err(VkError::Usage { .. })
        ));
        assert!(matches!(
            q.copy_regions(&buf, &buf, &regions[..1]),
            Err(VkError::Usage { .. })
        ));
    });
}

#[test]
fn imported_host_memory_is_copied_to_and_from_directly() {
    with_validation(|instance| {
        let dev = device(instance);
        // lavapipe has VK_EXT_external_memory_host: CI runs this path.
        assert!(
            dev.imports_host_memory(),
            "{} cannot import host memory",
            dev.info().name
        );
        let mut q = Queue::new(&dev, 0).unwrap();
        let data = Rng(0x51ed_2701_9a3c_55e1).bytes(300_001);
        let buf = upload(&mut q, &data);
        // An odd length at an odd address: the import covers whole pages
        // and the copies touch only the bytes asked for.
        let mut host = vec![7u8; 300_011];
        let at = 5;
        let import = unsafe { HostBuffer::import(&dev, host.as_ptr().add(at), 300_001, "host") }
            .unwrap()
            .expect("an import");
        assert!(import.size() >= 300_001 + import.offset());
        q.copy_buffer(&buf, 0, &import, import.offset(), 300_001)
            .unwrap();
        q.finish().unwrap();
        assert!(host[at..at + 300_001] == data[..], "device to host");
        assert!(host[..at]
            .iter()
            .chain(&host[at + 300_001..])
            .all(|&b| b == 7));
        // Host to device: change the host bytes, copy them back up.
        host[at..at + 1000].fill(9);
        let other = Buffer::new(&dev, 1000, "other").unwrap();
        q.copy_buffer(&import, import.offset(), &other, 0, 1000)
            .unwrap();
        q.finish().unwrap();
        assert_eq!(download(&mut q, &other), vec![9u8; 1000]);
        assert!(!import.in_use(), "retired batches let go of the import");
        drop(import);
        drop(host);
    });
}

#[test]
fn direct_host_access_where_memory_is_host_visible() {
    with_validation(|instance| {
        let dev = device(instance);
        let buf = Buffer::new(&dev, 64, "direct").unwrap();
        if !buf.is_host_visible() {
            assert!(matches!(
                buf.write(0, &[1, 2, 3]),
                Err(VkError::NotHostVisible)
            ));
            return;
        }
        buf.write(8, &[1, 2, 3, 4]).unwrap();
        let mut out = [0u8; 4];
        buf.read(8, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(matches!(buf.write(62, &[0; 4]), Err(VkError::Usage { .. })));
        // And the GPU sees what the host wrote.
        let mut q = Queue::new(&dev, 0).unwrap();
        assert_eq!(&download(&mut q, &buf)[8..12], &[1, 2, 3, 4]);
    });
}

#[test]
fn oversized_buffer_is_refused_with_both_sizes() {
    with_validation(|instance| {
        let dev = device(instance);
        let (max, limit) = Buffer::max_size(&dev);
        match Buffer::new(&dev, max + 1, "huge") {
            Err(e @ VkError::BufferTooLarge { .. }) => {
                let VkError::BufferTooLarge {
                    requested,
                    max: m,
                    limit: l,
                } = e
                else {
                    unreachable!()
                };
                assert_eq!((requested, m, l), (max + 1, max, limit));
                let text = e.to_string();
                assert!(text.contains(&(max + 1).to_string()) && text.contains(&max.to_string()));
                let code = miette::Diagnostic::code(&e).unwrap().to_string();
                assert_eq!(code, "accl::vk::buffer_too_large");
            }
            other => panic!("expected BufferTooLarge, got {other:?}"),
        }
        assert!(matches!(
            Buffer::new(&dev, 0, "empty"),
            Err(VkError::Usage { .. })
        ));
    });
}

#[test]
fn out_of_memory_is_a_typed_error() {
    with_validation(|instance| {
        let dev = device(instance);
        // Far beyond any real allocation limit, but below u64 overflow.
        match StagingBuffer::new(&dev, 1 << 50, StagingKind::Upload, "absurd") {
            Err(VkError::OutOfMemory { requested, .. })
            | Err(VkError::BufferTooLarge { requested, .. }) => {
                assert_eq!(requested, 1 << 50)
            }
            other => panic!("expected an out-of-memory error, got {other:?}"),
        }
    });
}

fn run_saxpy(dev: &Device, n: u32, a: f32, seed: u64) {
    let words = saxpy_spirv();
    let pipe = ComputePipeline::new(dev, &words, "main", 2, 8, &[]).unwrap();
    let mut q = Queue::new(dev, 0).unwrap();
    let mut rng = Rng(seed);
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next_u64() % 1000) as f32 / 7.0)
        .collect();
    let y: Vec<f32> = (0..n)
        .map(|_| (rng.next_u64() % 1000) as f32 / 3.0)
        .collect();
    let xb = upload(&mut q, &bytes_of_f32(&x));
    let yb = upload(&mut q, &bytes_of_f32(&y));
    let mut pc = a.to_le_bytes().to_vec();
    pc.extend(n.to_le_bytes());
    q.dispatch(
        &pipe,
        &[BufferBinding::whole(&xb), BufferBinding::whole(&yb)],
        &pc,
        groups_for(n),
    )
    .unwrap();
    let got = f32s(&download(&mut q, &yb));
    for i in 0..n as usize {
        let want = a * x[i] + y[i];
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "y[{i}]: {} != {want}",
            got[i]
        );
    }
}

#[test]
fn saxpy_kernel_matches_cpu() {
    let words = saxpy_spirv();
    spirv_val(&words);
    with_validation(|instance| {
        let dev = device(instance);
        // n not a multiple of the work-group size: exercises the bounds check.
        run_saxpy(&dev, 10_007, 2.5, 1);
    });
}

#[test]
fn dispatches_in_one_batch_keep_or_change_what_is_bound() {
    // One command buffer: the same pipeline with the same buffers and
    // constants, new constants, other buffers, then the first again. Each
    // dispatch must see its own bindings and constants whether or not the
    // queue records them again.
    with_validation(|instance| {
        let dev = device(instance);
        let words = saxpy_spirv();
        let pipe = ComputePipeline::new(&dev, &words, "main", 2, 8, &[]).unwrap();
        let mut q = Queue::new(&dev, 0).unwrap();
        let n = 1000u32;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let (mut y1, mut y2): (Vec<f32>, Vec<f32>) =
            ((0..n).map(|i| i as f32).collect(), vec![1.0; n as usize]);
        let xb = upload(&mut q, &bytes_of_f32(&x));
        let y1b = upload(&mut q, &bytes_of_f32(&y1));
        let y2b = upload(&mut q, &bytes_of_f32(&y2));
        let pc = |a: f32| {
            let mut v = a.to_le_bytes().to_vec();
            v.extend(n.to_le_bytes());
            v
        };
        let steps: [(f32, bool); 5] = [
            (2.0, true),
            (2.0, true),
            (3.0, true),
            (3.0, false),
            (2.0, true),
        ];
        let before = q.submitted_value();
        for &(a, first) in &steps {
            let y = if first { &y1b } else { &y2b };
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(&xb), BufferBinding::whole(y)],
                &pc(a),
                groups_for(n),
            )
            .unwrap();
            let yh = if first { &mut y1 } else { &mut y2 };
            for i in 0..n as usize {
                yh[i] += a * x[i];
            }
        }
        // Recorded into one command buffer: nothing was submitted between.
        assert_eq!(q.submitted_value(), before);
        assert_eq!(q.pending_ops() as usize, steps.len());
        for (yb, want) in [(&y1b, &y1), (&y2b, &y2)] {
            let got = f32s(&download(&mut q, yb));
            for i in 0..n as usize {
                assert_eq!(
                    got[i].to_bits(),
                    want[i].to_bits(),
                    "y[{i}]: {} != {}",
                    got[i],
                    want[i]
                );
            }
        }
    });
}

#[test]
fn two_logical_devices_on_one_adapter() {
    with_validation(|instance| {
        let d0 = Device::new(instance, 0).unwrap();
        let d1 = Device::new(instance, 0).unwrap();
        // Interleave: both alive at once, each with its own allocator/queues.
        let t0 = std::thread::spawn({
            let d0 = d0.clone();
            move || run_saxpy(&d0, 4096, 3.0, 2)
        });
        run_saxpy(&d1, 5000, -1.5, 3);
        t0.join().unwrap();
        // Objects of one device are refused on the other.
        let b0 = Buffer::new(&d0, 16, "b0").unwrap();
        let b1 = Buffer::new(&d1, 16, "b1").unwrap();
        let mut q1 = Queue::new(&d1, 0).unwrap();
        assert!(matches!(
            q1.copy_buffer(&b0, 0, &b1, 0, 16),
            Err(VkError::Usage { .. })
        ));
    });
}

#[test]
fn specialization_and_argument_checks() {
    with_validation(|instance| {
        let dev = device(instance);
        let words = affine_spirv();
        let pipe = ComputePipeline::new(&dev, &words, "main", 1, 12, &[]).unwrap();
        let mut q = Queue::new(&dev, 0).unwrap();
        let b = Buffer::new(&dev, 64, "b").unwrap();
        let pc = bytes_of_u32(&[1, 1, 16]);
        // Wrong number of bindings, push constants too long, bad offset.
        assert!(q.dispatch(&pipe, &[], &pc, [1, 1, 1]).is_err());
        assert!(q
            .dispatch(&pipe, &[BufferBinding::whole(&b)], &[0; 16], [1, 1, 1])
            .is_err());
        let bad = BufferBinding {
            buffer: &b,
            offset: 1,
            range: 32,
        };
        assert!(q.dispatch(&pipe, &[bad], &pc, [1, 1, 1]).is_err());
        let over = [u32::MAX, 1, 1];
        assert!(q
            .dispatch(&pipe, &[BufferBinding::whole(&b)], &pc, over)
            .is_err());
        // Nothing was recorded by the refused calls.
        assert_eq!(q.pending_ops(), 0);
        // Bad SPIR-V and bad entry points are typed errors, not panics.
        assert!(ComputePipeline::new(&dev, &[1, 2, 3], "main", 1, 12, &[]).is_err());
        assert!(ComputePipeline::new(&dev, &words, "main", 1, 13, &[]).is_err());
        // Specialisation constants the module does not declare are allowed.
        ComputePipeline::new(&dev, &words, "main", 1, 12, &[(7, 64)]).unwrap();
    });
}

#[test]
fn pipeline_cache_save_then_load() {
    with_validation(|instance| {
        let dir = temp_path("cache");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pipelines.bin");
        let dev = device(instance);
        let words = saxpy_spirv();
        let _p = ComputePipeline::new(&dev, &words, "main", 2, 8, &[]).unwrap();
        dev.save_pipeline_cache(&path).unwrap();
        let saved = std::fs::read(&path).unwrap();
        assert!(saved.len() >= 32, "cache data has at least its header");

        // A fresh device loads it and still builds and runs pipelines.
        let dev2 = Device::new(instance, 0).unwrap();
        let n = dev2.load_pipeline_cache(&path).unwrap();
        assert_eq!(n, saved.len());
        run_saxpy(&dev2, 100, 1.0, 9);
        let after = dev2.pipeline_cache_data().unwrap();
        assert!(after.len() >= 32);

        // Garbage and missing files: ignored / typed error.
        std::fs::write(
            dir.join("junk.bin"),
            b"not a cache at all, just some bytes!",
        )
        .unwrap();
        dev2.load_pipeline_cache(dir.join("junk.bin")).unwrap();
        assert!(matches!(
            dev2.load_pipeline_cache(dir.join("missing.bin")),
            Err(VkError::CacheIo { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    });
}
