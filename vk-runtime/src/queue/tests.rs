//! Tests of the queue: submission, waits, pools and dispatch state.
use super::*;
use crate::{ComputePipeline, Instance, InstanceOptions};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_are_send_and_sync_and_queues_send() {
    assert_send_sync::<Instance>();
    assert_send_sync::<Device>();
    assert_send_sync::<Buffer>();
    assert_send_sync::<crate::StagingBuffer>();
    assert_send_sync::<ComputePipeline>();
    // Recording takes `&mut self`; share a queue as `Mutex<Queue>`.
    fn assert_send<T: Send>() {}
    assert_send::<Queue>();
}

/// On lavapipe both accl queues share the one in-order `VkQueue`, so a
/// dropped join would not change any result there; this checks the
/// join itself: B's next submission carries A's semaphore and value,
/// and what B recorded before the join is submitted without it.
#[test]
fn join_is_carried_by_the_next_submission() {
    let instance = Instance::new(&InstanceOptions {
        validation: true,
        app_name: "unit".into(),
    })
    .unwrap();
    let sink = instance.validation_sink();
    {
        let dev = Device::new(&instance, 0).unwrap();
        let buf = Buffer::new(&dev, 64, "buf").unwrap();
        let mut a = Queue::new(&dev, 0).unwrap();
        let mut b = Queue::new(&dev, 1).unwrap();
        a.zero(&buf, 0, 64).unwrap();
        let va = a.submit().unwrap();
        b.fill(&buf, 0, 4, 7).unwrap();
        b.wait_on(&a, va).unwrap();
        // The fill recorded before the join went out on its own.
        assert_eq!(b.submitted_value(), 1);
        assert!(b.in_flight.back().is_none_or(|x| x.waits.is_empty()));
        assert_eq!(b.pending_ops(), 0);
        b.fill(&buf, 4, 4, 9).unwrap();
        let vb = b.submit().unwrap();
        assert_eq!(vb, 2);
        let last = b
            .in_flight
            .back()
            .expect("just submitted (MAX_IN_FLIGHT > 2)");
        assert_eq!(last.value, 2);
        assert_eq!(last.waits.len(), 1);
        assert!(Arc::ptr_eq(&last.waits[0].0, &a.timeline));
        assert_eq!(last.waits[0].1, va);
        assert!(b.pending_waits.is_empty());
        assert!(b.host_wait(vb, Duration::from_secs(60)).unwrap());
        assert!(a.completed_value().unwrap() >= va);
    }
    drop(instance);
    let msgs = sink.lock().unwrap().clone();
    assert!(msgs.is_empty(), "{msgs:?}");
}
