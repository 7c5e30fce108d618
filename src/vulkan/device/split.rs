//! Synchronous direct copies over two copy engines, and host waits that
//! sleep through most of such a copy.
//!
//! A synchronous `update` of a large array is one copy the host waits for.
//! Measured on an H200 (256 MiB, host memory imported): one copy engine
//! moved 48.0 GB/s to the device and 49.0 GB/s back, two engines sharing
//! the copy 49.7 and 50.7 GB/s; at 1 GiB 49.1/50.1 against 50.7/50.9. So a
//! large synchronous copy is split in two halves, one on the synchronous
//! queue's companion and one on a second companion bound to another queue
//! of the same copy-engine family, and the host waits for both.
//!
//! The wait: a driver's blocking wait wakes the thread some 0.15 ms after
//! the copy ends, about 3% of a 256 MiB copy, and spinning through all of
//! it holds a core for milliseconds. So the host sleeps through the part
//! of the copy that cannot be over yet (at the fastest rate seen so far),
//! then polls as for any other wait.
//!
//! The second companion sits in `copies` after the synchronous queue's own
//! (so that `copy_queue` keeps finding that one) and serves no other
//! queue: nothing is left outstanding on it, as the host has waited for
//! every copy it ran before the operation returns.

use super::*;

/// Copies of at least this many bytes are split over two copy engines.
const SPLIT_MIN: u64 = 32 << 20;

/// Where the two halves of a split copy meet: a multiple of this.
const SPLIT_ALIGN: u64 = 64 << 10;

impl DevState {
    /// The second companion of the synchronous queue, for a copy of `len`
    /// bytes whose first half goes to `main` (an index in `copies`): made
    /// on first use; none for a small copy, or where the copy-engine family
    /// has one queue.
    pub(super) fn split_companion(
        &mut self,
        main: usize,
        len: u64,
    ) -> Result<Option<usize>, Fault> {
        if len < SPLIT_MIN || !self.split_copies {
            return Ok(None);
        }
        if let Some(i) = self.split_copy {
            return Ok(Some(i));
        }
        let mut q = match self.copy_engines {
            CopyEngines::Transfer => {
                let mut t = self.device.transfer_queues();
                let first = t[0].family;
                t.retain(|q| q.family == first);
                if t.len() < 2 {
                    return Ok(None);
                }
                // `copy_queue` gave companion `main` the queue `t[main % t.len()]`.
                Queue::on_vk_queue(&self.device, t[(main + 1) % t.len()])
            }
            // The testing aid: companions on the compute queues, so the
            // split runs on lavapipe too.
            CopyEngines::Forced => Queue::new(&self.device, self.queues.len() + self.copies.len()),
            CopyEngines::Off => return Ok(None),
        }
        .map_err(Fault::from)?;
        if self.profiling {
            q.enable_timestamps(true).map_err(Fault::from)?;
        }
        self.copies.push((QueueId::Sync, q));
        self.split_copy = Some(self.copies.len() - 1);
        Ok(self.split_copy)
    }

    /// Block until both halves of a synchronous copy of `bytes` started at
    /// `start` are done: the first on companion `main` at `value`, the
    /// second (if any) on companion `second` at its value. Sleeps through
    /// the part that cannot be over yet, then polls; remembers the rate.
    pub(super) fn wait_copy(
        &mut self,
        start: std::time::Instant,
        bytes: u64,
        main: (usize, u64),
        second: Option<(usize, u64)>,
    ) -> Result<(), Fault> {
        if self.copy_rate > 0.0 {
            // Never longer than the copy can take at the fastest rate seen,
            // in slices so a time limit still stops the wait.
            let floor = std::time::Duration::from_secs_f64(0.9 * bytes as f64 / self.copy_rate);
            loop {
                let left = floor.saturating_sub(start.elapsed());
                if left < std::time::Duration::from_micros(200) {
                    break;
                }
                std::thread::sleep(left.min(WAIT_SLICE));
                if self.limits.is_set() {
                    self.limits.check().map_err(Fault::Stopped)?;
                }
            }
        }
        self.block_on_at(true, main.0, main.1)?;
        if let Some((i, v)) = second {
            self.block_on_at(true, i, v)?;
        }
        // The time to the end seen by polling: at most the copy's own, so
        // the rate is at most the true one and the sleep never overshoots.
        let rate = bytes as f64 / start.elapsed().as_secs_f64().max(1e-9);
        if bytes >= SPLIT_MIN {
            self.copy_rate = self.copy_rate.max(rate);
        }
        Ok(())
    }
}

/// One copy of a direct transfer: `len` bytes at `at` in the imported
/// buffer `hb`, `delta` bytes from the transfer's start.
#[derive(Clone)]
pub(super) struct DirectRun {
    pub(super) hb: HostBuffer,
    pub(super) at: u64,
    pub(super) delta: u64,
    pub(super) len: u64,
}

/// `runs` (together `len` bytes of one copy, in order) cut at about half
/// way: the runs before the cut and those after it.
pub(super) fn halves(runs: &[DirectRun], len: u64) -> (Vec<DirectRun>, Vec<DirectRun>) {
    let spans: Vec<_> = runs.iter().map(|r| (r.at, r.delta, r.len)).collect();
    let (a, b) = cut_spans(&spans, len);
    let make = |v: Vec<Span>| {
        v.into_iter()
            .map(|(i, at, delta, len)| DirectRun {
                hb: runs[i].hb.clone(),
                at,
                delta,
                len,
            })
            .collect()
    };
    (make(a), make(b))
}

/// A piece of run `.0`: where it starts in its import, where in the
/// copy, how long.
type Span = (usize, u64, u64, u64);

/// [`halves`] on the runs' `(at, delta, len)`.
fn cut_spans(spans: &[(u64, u64, u64)], len: u64) -> (Vec<Span>, Vec<Span>) {
    let cut = (len / 2).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, &(at, delta, n)) in spans.iter().enumerate() {
        if delta + n <= cut {
            a.push((i, at, delta, n));
        } else if delta >= cut {
            b.push((i, at, delta, n));
        } else {
            let head = cut - delta;
            a.push((i, at, delta, head));
            b.push((i, at + head, cut, n - head));
        }
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_cover_every_byte_once_in_order() {
        let k = SPLIT_ALIGN;
        // One whole import, cut inside it.
        let (a, b) = cut_spans(&[(16, 0, 3 * k + 100)], 3 * k + 100);
        assert_eq!(a, vec![(0, 16, 0, 2 * k)]);
        assert_eq!(b, vec![(0, 16 + 2 * k, 2 * k, k + 100)]);
        // Two pieces, the cut at their border: none is cut.
        let (a, b) = cut_spans(&[(16, 0, 2 * k), (0, 2 * k, 2 * k)], 4 * k);
        assert_eq!(a, vec![(0, 16, 0, 2 * k)]);
        assert_eq!(b, vec![(1, 0, 2 * k, 2 * k)]);
        // Three pieces, the middle one cut.
        let spans = [(8, 0, k), (0, k, 3 * k), (0, 4 * k, k)];
        let (a, b) = cut_spans(&spans, 5 * k);
        assert_eq!(a, vec![(0, 8, 0, k), (1, 0, k, 2 * k)]);
        assert_eq!(b, vec![(1, 2 * k, 3 * k, k), (2, 0, 4 * k, k)]);
        let total: u64 = a.iter().chain(&b).map(|s| s.3).sum();
        assert_eq!(total, 5 * k);
    }
}
