//! The submission thread: batches handed to it keep each queue's order and
//! the joins between queues, a held batch goes only once what it waits for
//! is done, and a submission on the caller's thread comes after the
//! batches it depends on. By default only an NVIDIA GPU gets a thread;
//! these tests ask for one.

mod common;

use common::*;
use vk_runtime::{Buffer, BufferBinding, ComputePipeline, Device, Instance, Queue, StagingBuffer};
use vk_runtime::{StagingKind, VkError};

fn threaded(instance: &Instance) -> Device {
    let dev = Device::with_submission_thread(instance, 0, true).expect("device");
    assert!(dev.submits_on_a_thread());
    dev
}

/// The slow kernel on `a`, handed off: its output and value.
fn slow_kernel(dev: &Device, a: &mut Queue) -> (Buffer, u64) {
    let slow = ComputePipeline::new(dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
    let out = Buffer::new(dev, 4 * SLOW_N as u64, "out").unwrap();
    dispatch_slow(a, &slow, &out, SLOW_ITERS);
    (out, a.hand_off().unwrap())
}

/// Records on `q` one step `x -> m x + c` over the `n` elements of `buf`,
/// and applies it to `want`, the host's copy.
fn affine_step(
    q: &mut Queue,
    affine: &ComputePipeline,
    buf: &Buffer,
    n: u32,
    (m, c): (u32, u32),
    want: &mut [u32],
) {
    q.dispatch(
        affine,
        &[BufferBinding::whole(buf)],
        &bytes_of_u32(&[m, c, n]),
        groups_for(n),
    )
    .unwrap();
    want.iter_mut().for_each(|w| *w = affine_cpu(*w, m, c));
}

/// Polls until the thread holds nothing, asserting (with `what`) that `q`
/// had reached `value` by then (read after the count); whether a batch was
/// seen held while `q` had not.
fn held_until(dev: &Device, q: &Queue, value: u64, what: &str) -> bool {
    let mut seen_held = false;
    loop {
        let held = dev.batches_on_thread();
        let done = q.completed_value().unwrap() >= value;
        if held == 0 {
            assert!(done, "{what}");
            return seen_held;
        }
        seen_held |= !done;
    }
}

#[test]
fn only_where_asked_for() {
    with_validation(|instance| {
        let on = threaded(instance);
        let off = Device::with_submission_thread(instance, 0, false).unwrap();
        assert!(!off.submits_on_a_thread());
        // By default, not on another vendor's device (lavapipe here).
        let default = Device::new(instance, 0).unwrap();
        if std::env::var_os("ACCL_SUBMIT_THREAD").is_none() && default.info().vendor_id != 0x10de {
            assert!(!default.submits_on_a_thread());
        }
        drop((on, off, default));
    });
}

#[test]
fn handed_off_batches_keep_queue_order_and_joins() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let affine = ComputePipeline::new(&dev, &affine_spirv(), "main", 1, 12, &[]).unwrap();
        let mut a = Queue::new(&dev, 0).unwrap();
        let mut b = Queue::new(&dev, 1).unwrap();
        let n = 256u32;
        let init: Vec<u32> = (0..n).collect();
        let buf = upload(&mut a, &bytes_of_u32(&init));
        let mut want = init.clone();
        // Fifty batches of dependent steps on A, each handed off alone: a
        // batch overtaking the one before would give other numbers.
        let mut last = a.submitted_value();
        for step in 0..50u32 {
            let mc = (3 + step % 4, step * 7919);
            affine_step(&mut a, &affine, &buf, n, mc, &mut want);
            let v = a.hand_off().unwrap();
            assert_eq!(v, last + 1, "values are given at once, in order");
            last = v;
        }
        // B copies A's result after joining it, also handed off.
        let copy = Buffer::new(&dev, buf.size(), "copy").unwrap();
        b.wait_on(&a, last).unwrap();
        b.copy_buffer(&buf, 0, &copy, 0, buf.size()).unwrap();
        let vb = b.hand_off().unwrap();
        assert!(b.host_wait(vb, FOREVER).unwrap());
        assert!(a.completed_value().unwrap() >= last);
        assert_eq!(u32s(&download(&mut b, &copy)), want);
    });
}

#[test]
fn a_held_copy_goes_after_the_kernel_it_waits_for() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let [mut a, mut c, mut d] = [0, 1, 2].map(|n| Queue::new(&dev, n).unwrap());
        let (out, va) = slow_kernel(&dev, &mut a);
        // The copy back waits for the kernel, held by the thread.
        let st = StagingBuffer::new(&dev, out.size(), StagingKind::Download, "st").unwrap();
        c.wait_on(&a, va).unwrap();
        c.copy_buffer(&out, 0, &st, 0, out.size()).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        // Not submitted while the kernel runs: whenever the thread holds
        // nothing, the kernel was done before (read after the count).
        let seen_held = held_until(
            &dev,
            &a,
            va,
            "the copy was submitted before its kernel finished",
        );
        // A submission on this thread that waits for the held copy: it goes
        // through the thread, after the copy.
        let flag = Buffer::new(&dev, 4, "flag").unwrap();
        d.wait_on(&c, vc).unwrap();
        d.fill(&flag, 0, 4, 1).unwrap();
        let vd = d.submit().unwrap();
        assert!(d.host_wait(vd, FOREVER).unwrap());
        assert!(c.completed_value().unwrap() >= vc, "the copy went first");
        assert!(a.completed_value().unwrap() >= va, "after the kernel");
        let got = u32s(st.as_slice());
        for i in (0..SLOW_N).step_by(97) {
            assert_eq!(got[i as usize], slow_cpu(i, SLOW_ITERS), "element {i}");
        }
        assert!(seen_held, "the kernel finished before the copy was held");
    });
}

#[test]
fn waits_and_submissions_report_errors_as_before() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let mut a = Queue::new(&dev, 0).unwrap();
        let mut b = Queue::new(&dev, 1).unwrap();
        // Values not handed over are refused whichever way they are asked.
        assert!(matches!(
            b.wait_on(&a, 1),
            Err(VkError::WaitNotSubmitted { .. })
        ));
        assert!(matches!(
            a.host_wait(1, FOREVER),
            Err(VkError::WaitNotSubmitted { .. })
        ));
        // Nothing recorded: nothing handed over.
        assert_eq!(a.hand_off().unwrap(), 0);
        assert_eq!(a.hand_off_when_ready().unwrap(), 0);
        // A device wait for everything includes what the thread holds.
        let buf = Buffer::new(&dev, 4096, "buf").unwrap();
        a.fill(&buf, 0, 4096, 5).unwrap();
        let va = a.hand_off().unwrap();
        dev.wait_idle().unwrap();
        assert!(a.completed_value().unwrap() >= va);
        assert_eq!(u32s(&download(&mut b, &buf)), vec![5; 1024]);
    });
}

#[test]
fn a_submission_here_comes_after_the_held_batch_it_waits_for() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let [mut a, mut c, mut d] = [0, 1, 2].map(|n| Queue::new(&dev, n).unwrap());
        let (out, va) = slow_kernel(&dev, &mut a);
        let copy = Buffer::new(&dev, out.size(), "copy").unwrap();
        c.wait_on(&a, va).unwrap();
        c.copy_buffer(&out, 0, &copy, 0, out.size()).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        // Submitted on this thread, D's batch waits for the held copy: it
        // must not reach the driver before the copy does, so the call
        // returns only once the kernel is done and the copy submitted.
        d.wait_on(&c, vc).unwrap();
        let st = StagingBuffer::new(&dev, copy.size(), StagingKind::Download, "st").unwrap();
        d.copy_buffer(&copy, 0, &st, 0, copy.size()).unwrap();
        let vd = d.submit().unwrap();
        assert!(
            a.completed_value().unwrap() >= va,
            "submitted before the copy it waits for"
        );
        assert!(d.host_wait(vd, FOREVER).unwrap());
        let got = u32s(st.as_slice());
        for i in (0..SLOW_N).step_by(89) {
            assert_eq!(got[i as usize], slow_cpu(i, SLOW_ITERS), "element {i}");
        }
    });
}

#[test]
fn held_batches_go_one_at_a_time() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let [mut a, mut c] = [0, 1].map(|n| Queue::new(&dev, n).unwrap());
        // A held batch with nothing to wait for goes at once: the slow
        // kernel, held.
        let slow = ComputePipeline::new(&dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
        let out = Buffer::new(&dev, 4 * SLOW_N as u64, "out").unwrap();
        dispatch_slow(&mut a, &slow, &out, SLOW_ITERS);
        let va = a.hand_off_when_ready().unwrap();
        // A second held batch, on another queue, waits for nothing either;
        // it goes only once the first is done.
        let flag = Buffer::new(&dev, 4096, "flag").unwrap();
        c.fill(&flag, 0, 4096, 7).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        let seen_held = held_until(
            &dev,
            &a,
            va,
            "the second held batch went while the first ran",
        );
        assert!(c.host_wait(vc, FOREVER).unwrap());
        assert_eq!(u32s(&download(&mut c, &flag)), vec![7; 1024]);
        let mut b = Queue::new(&dev, 2).unwrap();
        let got = u32s(&download(&mut b, &out));
        for i in (0..SLOW_N).step_by(101) {
            assert_eq!(got[i as usize], slow_cpu(i, SLOW_ITERS), "element {i}");
        }
        assert!(
            seen_held,
            "the slow kernel finished before the second batch was held"
        );
    });
}

#[test]
fn a_batch_for_a_sleeping_thread_is_submitted_here() {
    with_validation(|instance| {
        let dev = threaded(instance);
        let affine = ComputePipeline::new(&dev, &affine_spirv(), "main", 1, 12, &[]).unwrap();
        let mut a = Queue::new(&dev, 0).unwrap();
        let n = 256u32;
        let init: Vec<u32> = (0..n).collect();
        let buf = upload(&mut a, &bytes_of_u32(&init));
        let mut want = init.clone();
        let mut step = |a: &mut Queue, k: u32| {
            affine_step(a, &affine, &buf, n, (3, k), &mut want);
            a.hand_off().unwrap()
        };
        // The thread sleeps once it has had nothing to do for a while.
        let start = std::time::Instant::now();
        while !dev.submission_thread_asleep() {
            assert!(start.elapsed() < FOREVER, "the thread never slept");
            std::thread::yield_now();
        }
        let handed = dev.batches_handed_over();
        let v = step(&mut a, 1);
        assert_eq!(dev.batches_handed_over(), handed, "submitted here");
        assert_eq!(dev.batches_on_thread(), 0);
        // While the thread holds a batch, the next one goes to it, in
        // order after the first.
        let (out, slow) = slow_kernel(&dev, &mut a);
        let mut b = Queue::new(&dev, 1).unwrap();
        b.wait_on(&a, slow).unwrap();
        b.fill(&out, 0, 4, 7).unwrap();
        b.hand_off_when_ready().unwrap();
        let handed = dev.batches_handed_over();
        let w = step(&mut a, 2);
        assert!(w > v);
        assert_eq!(dev.batches_handed_over(), handed + 1, "handed over");
        assert!(a.host_wait(w, FOREVER).unwrap());
        assert_eq!(u32s(&download(&mut a, &buf)), want);
    });
}
