//! Unit tests of the device state against device work held back by
//! host-set events (`vk_runtime::HostEvent`): "still running" then does not
//! depend on how fast the device is.

mod limits {
    //! Limits of host waits, against device work held back by a host-set
    //! event: work that cannot finish until the test lets it, however fast
    //! the device is.
    use super::super::*;
    use crate::interp::WaitStop;
    use std::time::{Duration, Instant};
    use vk_runtime::HostEvent;

    /// Queue `async(1)` of device 0 blocked on an event, with a kernel-free
    /// fill behind it; `body` gets the device state and the event, which it
    /// must set before returning.
    fn held(body: impl FnOnce(&mut DevState, &HostEvent)) {
        let r = vk_runtime::testing::with_validation("accl wait limits", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            let id = QueueId::Async(1);
            let ev = HostEvent::new(&d.device).unwrap();
            let buf = Buffer::new(&d.device, 64, "held").unwrap();
            let q = d.queue(id).unwrap();
            q.wait_host_event(&ev).unwrap();
            q.fill(&buf, 0, 64, 7).unwrap();
            body(&mut d, &ev);
            d.limits = WaitLimits::default();
            d.wait_queue(id)
                .expect("the work ends once the event is set");
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }

    #[test]
    fn a_time_limit_stops_a_host_wait_on_work_that_cannot_finish() {
        held(|d, ev| {
            let limit = Duration::from_millis(20);
            d.limits.deadline = Some((Instant::now() + limit, limit));
            let r = d.wait_queue(QueueId::Async(1));
            assert!(
                matches!(r, Err(Fault::Stopped(WaitStop::TimeLimit(t))) if t == limit),
                "{r:?}"
            );
            // The work is still pending: a second wait stops the same way.
            let r = d.wait_queue(QueueId::Async(1));
            assert!(matches!(r, Err(Fault::Stopped(_))), "{r:?}");
            ev.set().unwrap();
        });
    }

    #[test]
    fn the_progress_callback_stops_a_host_wait_and_sees_each_slice() {
        held(|d, ev| {
            let calls = Rc::new(Cell::new(0u32));
            let c = calls.clone();
            let f: crate::interp::Progress = Rc::new(std::cell::RefCell::new(move |_| {
                c.set(c.get() + 1);
                c.get() < 3
            }));
            d.limits.progress = Some(f);
            let r = d.wait_queue(QueueId::Async(1));
            assert!(matches!(r, Err(Fault::Stopped(WaitStop::Aborted))), "{r:?}");
            assert_eq!(calls.get(), 3, "asked once per slice until it said stop");
            ev.set().unwrap();
        });
    }
}

mod submission {
    //! When async work is submitted: at once when its queue is idle, in
    //! batches while the queue's earlier work runs (held back here by a
    //! host-set event, so "running" does not depend on the device's speed).
    use super::super::*;
    use vk_runtime::HostEvent;

    #[test]
    fn async_work_goes_out_at_once_on_an_idle_queue_and_in_batches_behind_running_work() {
        let r = vk_runtime::testing::with_validation("accl submission", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            let id = QueueId::Async(1);
            let buf = Buffer::new(&d.device, 64, "b").unwrap();
            let ev = HostEvent::new(&d.device).unwrap();
            // Idle queue: the first operation is submitted when recorded.
            let q = d.queue(id).unwrap();
            q.wait_host_event(&ev).unwrap();
            q.fill(&buf, 0, 64, 1).unwrap();
            d.settle(id).unwrap();
            assert_eq!(d.queue(id).unwrap().submitted_value(), 1);
            assert_eq!(d.queue(id).unwrap().pending_ops(), 0);
            // Behind held work: recorded, not submitted, until the batch is
            // large.
            for k in 0..BATCH_OPS - 1 {
                d.queue(id).unwrap().fill(&buf, 0, 64, k).unwrap();
                d.settle(id).unwrap();
            }
            assert_eq!(d.queue(id).unwrap().submitted_value(), 1);
            assert_eq!(d.queue(id).unwrap().pending_ops(), BATCH_OPS - 1);
            d.queue(id).unwrap().fill(&buf, 0, 64, 99).unwrap();
            d.settle(id).unwrap();
            assert_eq!(d.queue(id).unwrap().submitted_value(), 2);
            // Work held back behind running work goes out once the queue is
            // idle, when the interpreter asks (`submit_idle`).
            d.queue(id).unwrap().fill(&buf, 0, 64, 7).unwrap();
            d.settle(id).unwrap();
            assert_eq!(d.queue(id).unwrap().pending_ops(), 1);
            assert!(d.submit_idle().unwrap(), "still held behind the event");
            assert_eq!(d.queue(id).unwrap().pending_ops(), 1);
            ev.set().unwrap();
            while !d.queue(id).unwrap().idle().unwrap() {
                std::hint::spin_loop();
            }
            assert!(!d.submit_idle().unwrap());
            assert_eq!(d.queue(id).unwrap().pending_ops(), 0);
            assert_eq!(d.queue(id).unwrap().submitted_value(), 3);
            // Once the held work ran, the next operation goes out at once
            // (after the gap that keeps a stream of launches batched).
            d.wait_queue(id).unwrap();
            std::thread::sleep(IDLE_SUBMIT_GAP);
            d.queue(id).unwrap().fill(&buf, 0, 64, 5).unwrap();
            d.settle(id).unwrap();
            assert_eq!(d.queue(id).unwrap().submitted_value(), 4);
            d.wait_queue(id).unwrap();
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }

    #[test]
    fn a_host_wait_submits_what_other_queues_hold_back() {
        let r = vk_runtime::testing::with_validation("accl submission", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            let (held, other) = (QueueId::Async(1), QueueId::Async(2));
            let buf = Buffer::new(&d.device, 64, "b").unwrap();
            let ev = HostEvent::new(&d.device).unwrap();
            // Queue 1 runs work that waits for the event; its next
            // operation is held back behind it.
            let q = d.queue(held).unwrap();
            q.wait_host_event(&ev).unwrap();
            q.fill(&buf, 0, 64, 1).unwrap();
            d.settle(held).unwrap();
            d.queue(held).unwrap().fill(&buf, 0, 64, 2).unwrap();
            d.settle(held).unwrap();
            assert_eq!(d.queue(held).unwrap().pending_ops(), 1);
            // (The event is set before the host waits: on a device with one
            // Vulkan queue, queue 2's work runs behind queue 1's.)
            ev.set().unwrap();
            // The host waits for queue 2: queue 1's held work goes out
            // first, without the interpreter's periodic check.
            d.queue(other).unwrap().fill(&buf, 0, 64, 3).unwrap();
            d.wait_queue(other).unwrap();
            assert_eq!(d.queue(held).unwrap().pending_ops(), 0);
            assert_eq!(d.queue(held).unwrap().submitted_value(), 2);
            d.wait_queue(held).unwrap();
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }
}

mod lazy_sync {
    //! Synchronous kernels complete lazily: the construct returns with the
    //! kernel submitted and not waited for, later synchronous waits and
    //! `complete_sync` cover it, and a host that runs ahead waits within
    //! the input's limits. The "kernel" is a fill held back by a host-set
    //! event, so "not done yet" does not depend on the device's speed.
    use super::super::*;
    use crate::interp::WaitStop;
    use std::time::{Duration, Instant};
    use vk_runtime::HostEvent;

    #[test]
    fn a_synchronous_kernel_returns_unwaited_and_completes_at_the_next_wait() {
        let r = vk_runtime::testing::with_validation("accl lazy sync", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            d.lazy_sync = true;
            let id = QueueId::Sync;
            let buf = Buffer::new(&d.device, 64, "b").unwrap();
            let ev = HostEvent::new(&d.device).unwrap();
            let q = d.queue(id).unwrap();
            q.wait_host_event(&ev).unwrap();
            q.fill(&buf, 0, 64, 1).unwrap();
            // Returns although the work cannot finish yet.
            d.settle_sync_kernel().unwrap();
            assert!(d.sync_open());
            assert_eq!(d.queue(id).unwrap().submitted_value(), 1);
            // Running ahead: the next batch goes out, and the one after
            // that waits for all but the newest, within the limits.
            d.queue(id).unwrap().fill(&buf, 0, 64, 2).unwrap();
            d.submit(id).unwrap();
            d.queue(id).unwrap().fill(&buf, 0, 64, 3).unwrap();
            let limit = Duration::from_millis(20);
            d.limits.deadline = Some((Instant::now() + limit, limit));
            let r = d.settle_sync_kernel();
            assert!(
                matches!(r, Err(Fault::Stopped(WaitStop::TimeLimit(_)))),
                "{r:?}"
            );
            d.limits = WaitLimits::default();
            ev.set().unwrap();
            d.complete_sync().unwrap();
            assert!(!d.sync_open());
            let q = d.queue(id).unwrap();
            assert_eq!(q.pending_ops(), 0);
            assert_eq!(q.completed_value().unwrap(), q.submitted_value());
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }

    #[test]
    fn with_lazy_completion_off_a_synchronous_kernel_waits() {
        let r = vk_runtime::testing::with_validation("accl eager sync", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            d.lazy_sync = false;
            let buf = Buffer::new(&d.device, 64, "b").unwrap();
            d.queue(QueueId::Sync)
                .unwrap()
                .fill(&buf, 0, 64, 1)
                .unwrap();
            d.settle_sync_kernel().unwrap();
            assert!(!d.sync_open());
            let q = d.queue(QueueId::Sync).unwrap();
            assert_eq!(q.completed_value().unwrap(), 1);
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }
}

mod async_pieces {
    //! Async copies larger than one staging buffer go in pieces, each with
    //! a buffer of its own (1 GiB on a real device; 4 KiB here, so several
    //! pieces are cheap): contiguous and strided, up and down.
    use super::super::*;

    const SIDE: usize = 100;

    fn grid(f: impl Fn(usize) -> f32) -> Array {
        Array::from_vec((0..SIDE * SIDE).map(f).collect(), vec![SIDE, SIDE]).unwrap()
    }

    fn values(a: &Array) -> Vec<f64> {
        let d = a.data();
        (0..SIDE * SIDE)
            .map(|i| d.get(i).unwrap().as_f64().unwrap())
            .collect()
    }

    #[test]
    fn async_copies_larger_than_one_staging_buffer_go_in_pieces() {
        let r = vk_runtime::testing::with_validation("accl async pieces", |instance| {
            let mut d = DevState::open(instance, 0).expect("device 0");
            d.async_chunk = 4096;
            d.direct = false;
            let id = QueueId::Async(1);
            let bytes = SIDE * SIDE * 4;
            let a = grid(|i| i as f32 + 0.5);
            let whole = Buffer::new(&d.device, bytes as u64, "whole").unwrap();
            d.upload(id, &whole, 0, &a, 0, bytes).unwrap();
            let b = grid(|_| 0.0);
            d.download_into(id, &whole, 0, &b, 0, bytes).unwrap();
            assert_eq!(d.completions.len(), bytes.div_ceil(4096), "one per piece");
            d.wait_queue(id).unwrap();
            assert!(d.completions.is_empty());
            assert_eq!(values(&b), values(&a));

            // Columns 10..30 of every row: 100 runs of 80 bytes, cut across
            // pieces.
            let runs: Vec<strided::Run> = (0..SIDE).map(|r| (r * SIDE * 4 + 40, 80)).collect();
            let inside = |i: usize| (10..30).contains(&(i % SIDE));
            let cols = Buffer::new(&d.device, bytes as u64, "columns").unwrap();
            d.zero(id, &cols).unwrap();
            d.upload_runs(id, &cols, 0, &a, &runs).unwrap();
            let c = grid(|_| 0.0);
            d.download_into(id, &cols, 0, &c, 0, bytes).unwrap();
            let e = grid(|_| -1.0);
            d.download_runs(id, &whole, 0, &e, &runs).unwrap();
            assert_eq!(d.completions.len(), bytes.div_ceil(4096) + 2);
            d.wait_queue(id).unwrap();
            let (va, vc, ve) = (values(&a), values(&c), values(&e));
            for i in 0..SIDE * SIDE {
                let (want_c, want_e) = if inside(i) {
                    (va[i], va[i])
                } else {
                    (0.0, -1.0)
                };
                assert_eq!((vc[i], ve[i]), (want_c, want_e), "element {i}");
            }
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }
}
