//! How long the device idles between two operations where the second
//! starts behind the first, by how they are submitted (not run in CI):
//!
//!     cargo run --release -p vk-runtime --example batch_gaps [MiB] [-- reps]
//!
//! Each operation fills a buffer of the given size (256 MiB by default,
//! and 4 KiB for the small case). Both operations are recorded and
//! submitted at once, so the second is always queued before the first
//! ends; the figure is the median of the device timestamps' gap from the
//! first's end to the second's start. A join of two queues is the second
//! queue's batch waiting on the first's timeline semaphore.

use vk_runtime::{Buffer, Device, Instance, InstanceOptions, OpTiming, Queue, VkQueueInfo};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The device's gap between the first operation's end and the second's
/// start, in microseconds.
fn gap(first: &OpTiming, second: &OpTiming) -> f64 {
    (second.start_ns as f64 - first.end_ns as f64) / 1e3
}

enum Shape {
    OneBatch,
    TwoBatches,
    TwoQueues(VkQueueInfo, VkQueueInfo),
}

fn measure(dev: &Device, shape: &Shape, a: &Buffer, b: &Buffer, size: u64, reps: usize) -> f64 {
    let mut gaps = Vec::new();
    let (h1, h2) = match shape {
        Shape::TwoQueues(h1, h2) => (*h1, *h2),
        _ => (dev.compute_queue_for(0), dev.compute_queue_for(0)),
    };
    let mut q1 = Queue::on_vk_queue(dev, h1).unwrap();
    let mut q2 = Queue::on_vk_queue(dev, h2).unwrap();
    q1.enable_timestamps(true).unwrap();
    q2.enable_timestamps(true).unwrap();
    for _ in 0..reps {
        match shape {
            Shape::OneBatch => {
                q1.fill(a, 0, size, 1).unwrap();
                q1.fill(b, 0, size, 2).unwrap();
                q1.submit().unwrap();
                q1.finish().unwrap();
                let t = q1.take_timings();
                gaps.push(gap(&t[0], &t[1]));
            }
            Shape::TwoBatches => {
                q1.fill(a, 0, size, 1).unwrap();
                q1.submit().unwrap();
                q1.fill(b, 0, size, 2).unwrap();
                q1.submit().unwrap();
                q1.finish().unwrap();
                let t = q1.take_timings();
                gaps.push(gap(&t[0], &t[1]));
            }
            Shape::TwoQueues(..) => {
                q1.fill(a, 0, size, 1).unwrap();
                let v = q1.submit().unwrap();
                q2.wait_on(&q1, v).unwrap();
                q2.fill(b, 0, size, 2).unwrap();
                q2.submit().unwrap();
                q2.finish().unwrap();
                q1.finish().unwrap();
                let (t1, t2) = (q1.take_timings(), q2.take_timings());
                gaps.push(gap(&t1[0], &t2[0]));
            }
        }
    }
    median(gaps[1..].to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (sizes, reps) = match args.iter().position(|a| a == "--") {
        Some(p) => (&args[..p], args[p + 1].parse().unwrap()),
        None => (&args[..], 21usize),
    };
    let mib: u64 = sizes.first().map_or(256, |s| s.parse().unwrap());
    let inst = Instance::new(&InstanceOptions::default()).unwrap();
    let dev = Device::new(&inst, 0).unwrap();
    let compute = dev.compute_queues();
    println!("device: {}", dev.info().name);
    let first = compute[0];
    let same_family = compute
        .iter()
        .copied()
        .find(|q| q.family == first.family && q.index != first.index);
    let other_family = compute.iter().copied().find(|q| q.family != first.family);
    for size in [mib << 20, 4096] {
        let a = Buffer::new(&dev, size, "gap a").unwrap();
        let b = Buffer::new(&dev, size, "gap b").unwrap();
        let mut shapes = vec![
            ("one batch", Shape::OneBatch),
            ("two batches of one queue", Shape::TwoBatches),
            (
                "two queues on one Vulkan queue",
                Shape::TwoQueues(first, first),
            ),
        ];
        if let Some(s) = same_family {
            shapes.push((
                "two Vulkan queues of one family",
                Shape::TwoQueues(first, s),
            ));
        }
        if let Some(o) = other_family {
            shapes.push((
                "two Vulkan queues of two families",
                Shape::TwoQueues(first, o),
            ));
            shapes.push(("the same, the other way", Shape::TwoQueues(o, first)));
        }
        for (name, shape) in &shapes {
            let g = measure(&dev, shape, &a, &b, size, reps);
            println!("{:>10} bytes, {name:<34}: gap {g:7.2} us", size);
        }
    }
}
