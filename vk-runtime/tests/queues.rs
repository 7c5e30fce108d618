//! Timeline ordering, joins between queues, recycling and timestamps.

mod common;

use std::time::{Duration, Instant};

use common::*;
use vk_runtime::{
    Buffer, BufferBinding, ComputePipeline, Device, HostEvent, Queue, StagingBuffer, StagingKind,
    VkError, MAX_IN_FLIGHT,
};

fn affine(dev: &Device) -> ComputePipeline {
    ComputePipeline::new(dev, &affine_spirv(), "main", 1, 12, &[]).unwrap()
}

#[test]
fn kernels_validate() {
    spirv_val(&affine_spirv());
    spirv_val(&slow_spirv());
}

#[test]
fn chain_of_1000_dependent_dispatches() {
    with_validation(|instance| {
        let dev = device(instance);
        let pipe = affine(&dev);
        let mut q = Queue::new(&dev, 0).unwrap();
        let n = 256u32;
        let init: Vec<u32> = (0..n).collect();
        let buf = upload(&mut q, &bytes_of_u32(&init));
        let mut want = init.clone();
        let mut values = Vec::new();
        for step in 0..1000u32 {
            let (m, c) = (3 + (step % 5), step.wrapping_mul(7919));
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(&buf)],
                &bytes_of_u32(&[m, c, n]),
                groups_for(n),
            )
            .unwrap();
            for w in &mut want {
                *w = affine_cpu(*w, m, c);
            }
            // Mix batch sizes: submit every 37 steps, plus at the end.
            if step % 37 == 36 {
                values.push(q.submit().unwrap());
            }
        }
        values.push(q.submit().unwrap());
        assert!(
            values.windows(2).all(|w| w[1] == w[0] + 1),
            "monotonic values"
        );
        assert!(q.host_wait(*values.last().unwrap(), FOREVER).unwrap());
        assert!(q.completed_value().unwrap() >= *values.last().unwrap());
        assert_eq!(u32s(&download(&mut q, &buf)), want);
    });
}

#[test]
fn join_between_two_queues() {
    with_validation(|instance| {
        let dev = device(instance);
        let slow = ComputePipeline::new(&dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
        // Queue A and B: on different Vulkan queues where the device has
        // several (then a missing join gives wrong data), else both share
        // the only one (lavapipe).
        let mut a = Queue::new(&dev, 0).unwrap();
        let mut b = Queue::new(&dev, 1).unwrap();
        let out = Buffer::new(&dev, 4 * SLOW_N as u64, "out").unwrap();
        let copy = Buffer::new(&dev, 4 * SLOW_N as u64, "copy").unwrap();
        a.zero(&out, 0, out.size()).unwrap();
        a.submit().unwrap();
        // B is busy with unrelated work before joining.
        b.zero(&copy, 0, copy.size()).unwrap();
        let b0 = b.submit().unwrap();

        let t = Instant::now();
        dispatch_slow(&mut a, &slow, &out, SLOW_ITERS);
        let va = a.submit().unwrap();
        b.wait_on(&a, va).unwrap();
        b.copy_buffer(&out, 0, &copy, 0, out.size()).unwrap();
        let st = StagingBuffer::new(&dev, copy.size(), StagingKind::Download, "st").unwrap();
        b.copy_buffer(&copy, 0, &st, 0, copy.size()).unwrap();
        let vb = b.submit().unwrap();
        assert!(vb > b0);
        // Only B is waited on by the host: A's completion must follow.
        assert!(b.host_wait(vb, FOREVER).unwrap());
        assert!(a.completed_value().unwrap() >= va, "B finished before A");
        let got = u32s(st.as_slice());
        for i in (0..SLOW_N).step_by(97) {
            assert_eq!(got[i as usize], slow_cpu(i, SLOW_ITERS), "element {i}");
        }
        eprintln!("slow kernel + join took {:?}", t.elapsed());
    });
}

#[test]
fn wait_on_unsubmitted_value_and_timeouts() {
    with_validation(|instance| {
        let dev = device(instance);
        let slow = ComputePipeline::new(&dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
        let mut a = Queue::new(&dev, 0).unwrap();
        let mut b = Queue::new(&dev, 1).unwrap();
        assert!(matches!(
            b.wait_on(&a, 1),
            Err(VkError::WaitNotSubmitted {
                value: 1,
                submitted: 0
            })
        ));
        assert!(matches!(
            a.host_wait(5, FOREVER),
            Err(VkError::WaitNotSubmitted { .. })
        ));
        // Nothing recorded: submit is a no-op returning the last value.
        assert_eq!(a.submit().unwrap(), 0);
        assert!(a.host_wait(0, Duration::ZERO).unwrap());

        // A timeout is Ok(false), not an error: the kernel waits for an
        // event the host sets only after the timed wait.
        let out = Buffer::new(&dev, 4 * SLOW_N as u64, "out").unwrap();
        let gate = HostEvent::new(&dev).unwrap();
        a.wait_host_event(&gate).unwrap();
        dispatch_slow(&mut a, &slow, &out, SLOW_ITERS);
        let v = a.submit().unwrap();
        let reached = a.host_wait(v, Duration::from_micros(1)).unwrap();
        gate.set().unwrap();
        assert!(!reached, "a kernel behind an unset event finished");
        assert!(a.host_wait(v, FOREVER).unwrap());
        // An empty submission that only carries a join still gets a value,
        // so joins are transitive.
        b.wait_on(&a, v).unwrap();
        let vb = b.submit().unwrap();
        assert_eq!(vb, 1);
        assert!(b.host_wait(vb, FOREVER).unwrap());
    });
}

#[test]
fn pools_are_recycled_over_10000_submissions() {
    with_validation(|instance| {
        let dev = device(instance);
        let pipe = affine(&dev);
        let mut q = Queue::new(&dev, 0).unwrap();
        let buf = upload(&mut q, &bytes_of_u32(&[0; 4]));
        let t = Instant::now();
        let mut last = 0;
        let mut want = 0u32;
        for i in 0..10_000u32 {
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(&buf)],
                &bytes_of_u32(&[1, i, 1]),
                [1, 1, 1],
            )
            .unwrap();
            want = want.wrapping_add(i);
            last = q.submit().unwrap();
            assert!(q.stats().in_flight <= MAX_IN_FLIGHT);
        }
        assert!(q.host_wait(last, FOREVER).unwrap());
        let s = q.stats();
        eprintln!("10,000 submissions in {:?}: {s:?}", t.elapsed());
        assert_eq!(s.in_flight, 0);
        assert!(s.command_buffers_created <= MAX_IN_FLIGHT + 2, "{s:?}");
        assert!(s.descriptor_pools_created <= MAX_IN_FLIGHT + 2, "{s:?}");
        if dev.pushes_descriptors() {
            // Buffers pushed into the command buffer: no set, no pool.
            assert_eq!(s.descriptor_pools_created, 0, "{s:?}");
        }
        assert_eq!(u32s(&download(&mut q, &buf))[0], want);
    });
}

#[test]
fn buffers_dropped_while_pending_stay_alive() {
    with_validation(|instance| {
        let dev = device(instance);
        let slow = ComputePipeline::new(&dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
        let mut q = Queue::new(&dev, 0).unwrap();
        let out = Buffer::new(&dev, 4 * SLOW_N as u64, "out").unwrap();
        dispatch_slow(&mut q, &slow, &out, SLOW_ITERS);
        q.submit().unwrap();
        // Drop the buffer and the pipeline while the kernel may still run;
        // the layer would report destroying in-use objects.
        drop(out);
        drop(slow);
        // And the queue itself with recorded, unsubmitted work.
        let b = Buffer::new(&dev, 16, "b").unwrap();
        q.zero(&b, 0, 16).unwrap();
        drop(q);
    });
}

#[test]
fn repeated_dispatches_keep_what_they_use_alive() {
    // A dispatch of the buffers and pipeline the one before it used adds
    // nothing to what the batch holds; dropped before the batch is even
    // submitted, they must still outlive it (the layer reports destroying
    // objects in use), and the results must come out in order.
    with_validation(|instance| {
        let dev = device(instance);
        let pipe = affine(&dev);
        let mut q = Queue::new(&dev, 0).unwrap();
        let n = 64u32;
        let init: Vec<u32> = (0..n).collect();
        let a = upload(&mut q, &bytes_of_u32(&init));
        let c = upload(&mut q, &bytes_of_u32(&init));
        // The uploads' batch is done: only the dispatches hold `c`.
        q.finish().unwrap();
        let mut want = init.clone();
        let mut run = |q: &mut Queue, buf: &Buffer, m: u32, add: u32, track: bool| {
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(buf)],
                &bytes_of_u32(&[m, add, n]),
                groups_for(n),
            )
            .unwrap();
            if track {
                for w in &mut want {
                    *w = affine_cpu(*w, m, add);
                }
            }
        };
        run(&mut q, &a, 2, 1, true);
        run(&mut q, &a, 3, 0, true);
        run(&mut q, &c, 5, 1, false);
        run(&mut q, &c, 1, 1, false);
        run(&mut q, &a, 1, 7, true);
        drop(c);
        drop(pipe);
        // Were `c` freed, a buffer made now could take its memory, and the
        // dispatches above would write over what is filled in here.
        let d = Buffer::new(&dev, 4 * n as u64, "d").unwrap();
        let mut other = Queue::new(&dev, 1).unwrap();
        other.fill(&d, 0, 4 * n as u64, 0xDEAD).unwrap();
        other.finish().unwrap();
        q.finish().unwrap();
        assert_eq!(u32s(&download(&mut q, &a)), want);
        assert_eq!(u32s(&download(&mut q, &d)), vec![0xDEAD; n as usize]);
    });
}

#[test]
fn timestamps_per_operation() {
    with_validation(|instance| {
        let dev = device(instance);
        let pipe = affine(&dev);
        let mut q = Queue::new(&dev, 0).unwrap();
        if q.vk_queue().timestamp_valid_bits == 0 {
            assert!(q.enable_timestamps(true).is_err());
            return;
        }
        q.enable_timestamps(true).unwrap();
        let buf = Buffer::new(&dev, 1024, "buf").unwrap();
        q.set_label("clear");
        q.zero(&buf, 0, 1024).unwrap();
        // Enough operations to need more than one query pool.
        for _ in 0..70 {
            q.dispatch(
                &pipe,
                &[BufferBinding::whole(&buf)],
                &bytes_of_u32(&[2, 1, 256]),
                [4, 1, 1],
            )
            .unwrap();
        }
        q.finish().unwrap();
        let t = q.take_timings();
        assert_eq!(t.len(), 71);
        assert_eq!(t[0].label, "clear");
        assert_eq!(t[1].label, "dispatch main");
        for w in t.windows(2) {
            assert!(w[0].start_ns <= w[0].end_ns);
            assert!(
                w[0].end_ns <= w[1].start_ns,
                "operations are serialised: {w:?}"
            );
        }
        assert!(q.take_timings().is_empty());
    });
}

#[test]
fn completion_work_runs_when_the_value_is_observed() {
    use std::sync::{Arc, Mutex};
    with_validation(|instance| {
        let dev = device(instance);
        let mut q = Queue::new(&dev, 0).unwrap();
        let buf = upload(&mut q, &bytes_of_u32(&[5, 6, 7, 8]));
        let st = Arc::new(Mutex::new(
            StagingBuffer::new(&dev, 16, StagingKind::Download, "st").unwrap(),
        ));
        let host = Arc::new(Mutex::new(Vec::new()));
        q.copy_buffer(&buf, 0, &*st.lock().unwrap(), 0, 16).unwrap();
        let (st2, host2) = (st.clone(), host.clone());
        q.on_complete(move || {
            *host2.lock().unwrap() = u32s(st2.lock().unwrap().as_slice());
        })
        .unwrap();
        let v = q.submit().unwrap();
        assert!(q.host_wait(v, FOREVER).unwrap());
        assert_eq!(*host.lock().unwrap(), vec![5, 6, 7, 8]);
    });
}

/// Mesa's emulated timelines (lavapipe) release a submission's waits on
/// other queues' semaphores on the driver's submit thread *after* they
/// signal the submission's own value. A queue that dropped a waited-on
/// semaphore as soon as its own value was reached freed it under that
/// thread (a SIGSEGV inside lavapipe now and then at engine teardown).
/// The window is narrow (about one in eight runs of the V&V suite, 281
/// engines, crashed before the fix; this test did not crash in 30 runs
/// without it), so this is a regression exercise of both drop orders
/// under the validation layer rather than a reproducer.
#[test]
fn queues_waited_on_can_be_dropped_in_any_order() {
    with_validation(|instance| {
        let dev = device(instance);
        let buf = Buffer::new(&dev, 4096, "buf").unwrap();
        for round in 0..150u32 {
            let mut waited: Vec<Queue> = (0..6).map(|i| Queue::new(&dev, i).unwrap()).collect();
            let mut values = Vec::new();
            for (i, q) in waited.iter_mut().enumerate() {
                q.fill(&buf, 64 * i as u64, 64, round).unwrap();
                values.push(q.submit().unwrap());
            }
            let mut a = Queue::new(&dev, 6).unwrap();
            for (q, v) in waited.iter().zip(&values) {
                a.wait_on(q, *v).unwrap();
            }
            a.fill(&buf, 1024, 64, round + 1).unwrap();
            let va = a.submit().unwrap();
            assert!(a.host_wait(va, Duration::from_secs(120)).unwrap());
            if round % 2 == 0 {
                // The waiting queue goes first, then the semaphores.
                drop(a);
                drop(waited);
            } else {
                // The semaphores' own queues go first; the waiting queue's
                // batch holds the last references.
                drop(waited);
                drop(a);
            }
        }
        let mut q = Queue::new(&dev, 0).unwrap();
        let got = download(&mut q, &buf);
        let got = u32s(&got);
        // The last round's values: every waited queue's fill, then the
        // waiting queue's.
        assert_eq!(got[0], 149);
        assert_eq!(got[16 * 5], 149);
        assert_eq!(got[256], 150);
    })
}
