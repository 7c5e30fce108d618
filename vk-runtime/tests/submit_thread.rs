//! The submission thread: batches handed to it keep each queue's order and
//! the joins between queues, a held batch goes only once what it waits for
//! is done, and a submission on the caller's thread comes after the
//! batches it depends on. By default only an NVIDIA GPU gets a thread;
//! these tests ask for one.

mod common;

use common::*;
use vk_runtime::{Buffer, BufferBinding, ComputePipeline, Device, Instance, Queue, StagingBuffer};
use vk_runtime::{HostEvent, StagingKind, VkError};

fn threaded(instance: &Instance) -> Device {
    let dev = Device::with_submission_thread(instance, 0, true).expect("device");
    assert!(dev.submits_on_a_thread());
    dev
}

/// The slow kernel on `a`, after a wait for `gate` (set by the test when
/// it has looked at what the thread holds), handed off: its output and
/// value.
fn gated_kernel(dev: &Device, a: &mut Queue, gate: &Gate) -> (Buffer, u64) {
    let slow = ComputePipeline::new(dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
    let out = Buffer::new(dev, 4 * SLOW_N as u64, "out").unwrap();
    a.wait_host_event(&gate.0).unwrap();
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

/// A host event that device work waits behind; set when dropped too, so
/// that a failed assertion fails the test instead of leaving its queues
/// waiting forever.
struct Gate(HostEvent);

impl Gate {
    fn new(dev: &Device) -> Gate {
        Gate(HostEvent::new(dev).unwrap())
    }

    fn open(&self) {
        self.0.set().unwrap();
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.0.set();
    }
}

/// Polls until the thread holds `n` batches (it cannot pass `n` by
/// itself while the test holds a gate closed); whether it did within
/// [`FOREVER`].
fn reached_held(dev: &Device, n: u64) -> bool {
    let start = std::time::Instant::now();
    while dev.batches_on_thread() != n {
        if start.elapsed() > FOREVER {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

fn until_held(dev: &Device, n: u64) {
    assert!(reached_held(dev, n), "the thread never held {n}");
}

/// Polls until the thread holds nothing, asserting (with `what`) that `q`
/// had reached `value` by then (read after the count).
fn held_until(dev: &Device, q: &Queue, value: u64, what: &str) {
    while dev.batches_on_thread() != 0 {}
    assert!(q.completed_value().unwrap() >= value, "{what}");
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
        let gate = Gate::new(&dev);
        let (out, va) = gated_kernel(&dev, &mut a, &gate);
        // The copy back waits for the kernel, held by the thread.
        let st = StagingBuffer::new(&dev, out.size(), StagingKind::Download, "st").unwrap();
        c.wait_on(&a, va).unwrap();
        c.copy_buffer(&out, 0, &st, 0, out.size()).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        // While the kernel cannot run, the copy stays with the thread.
        until_held(&dev, 1);
        let kernel_waited = a.completed_value().unwrap() < va;
        gate.open();
        assert!(kernel_waited, "the kernel ran before its gate was set");
        // Once the thread holds nothing, the kernel was done before (read
        // after the count).
        held_until(
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
        let gate = Gate::new(&dev);
        let (out, va) = gated_kernel(&dev, &mut a, &gate);
        let copy = Buffer::new(&dev, out.size(), "copy").unwrap();
        c.wait_on(&a, va).unwrap();
        c.copy_buffer(&out, 0, &copy, 0, out.size()).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        // Submitted on this thread, D's batch waits for the held copy: it
        // must not reach the driver before the copy does, so the call
        // returns only once the kernel is done and the copy submitted.
        // Another thread opens the gate once D's batch is with the thread
        // too, behind the held copy.
        until_held(&dev, 1);
        d.wait_on(&c, vc).unwrap();
        let st = StagingBuffer::new(&dev, copy.size(), StagingKind::Download, "st").unwrap();
        d.copy_buffer(&copy, 0, &st, 0, copy.size()).unwrap();
        let (vd, reached) = std::thread::scope(|s| {
            let opener = s.spawn(|| {
                let reached = reached_held(&dev, 2);
                gate.open();
                reached
            });
            let vd = d.submit().unwrap();
            (vd, opener.join().unwrap())
        });
        assert!(reached, "D's batch did not go to the thread");
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
        // kernel behind a gate, held.
        let gate = Gate::new(&dev);
        let slow = ComputePipeline::new(&dev, &slow_spirv(), "main", 1, 8, &[]).unwrap();
        let out = Buffer::new(&dev, 4 * SLOW_N as u64, "out").unwrap();
        a.wait_host_event(&gate.0).unwrap();
        dispatch_slow(&mut a, &slow, &out, SLOW_ITERS);
        let va = a.hand_off_when_ready().unwrap();
        // A second held batch, on another queue, waits for nothing either;
        // it goes only once the first is done, which it cannot be while
        // the gate is closed.
        let flag = Buffer::new(&dev, 4096, "flag").unwrap();
        c.fill(&flag, 0, 4096, 7).unwrap();
        let vc = c.hand_off_when_ready().unwrap();
        until_held(&dev, 1);
        let first_waited = a.completed_value().unwrap() < va;
        let second_waited = c.completed_value().unwrap() < vc;
        gate.open();
        assert!(first_waited, "the kernel ran before its gate was set");
        assert!(
            second_waited,
            "the second held batch went while the first ran"
        );
        held_until(
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
        // order after the first. B's batch is held until A is past an
        // event that only this thread sets, so the thread cannot be done
        // with it and asleep again, however slow the machine.
        let mut b = Queue::new(&dev, 1).unwrap();
        let flag = Buffer::new(&dev, 4, "flag").unwrap();
        let gate = Gate::new(&dev);
        a.wait_host_event(&gate.0).unwrap();
        let opened = a.hand_off().unwrap();
        b.wait_on(&a, opened).unwrap();
        b.fill(&flag, 0, 4, 7).unwrap();
        let vb = b.hand_off_when_ready().unwrap();
        let handed = dev.batches_handed_over();
        let w = step(&mut a, 2);
        let handed_after = dev.batches_handed_over();
        gate.open();
        assert!(w > v);
        assert_eq!(handed_after, handed + 1, "handed over");
        assert!(a.host_wait(w, FOREVER).unwrap());
        assert!(b.host_wait(vb, FOREVER).unwrap());
        assert_eq!(u32s(&download(&mut a, &buf)), want);
        assert_eq!(u32s(&download(&mut b, &flag)), vec![7]);
    });
}
