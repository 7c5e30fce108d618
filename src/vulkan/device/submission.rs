//! When recorded work is submitted, and when the host waits for it.
//! Async work goes out at once on an idle queue, else in batches.
//!
//! Synchronous kernels complete lazily. A synchronous construct's effects
//! are only visible to the host through a copy to the host, a reduction's
//! value, the clock or the end of the input, so a synchronous kernel is
//! recorded and submitted like async work, and the host waits for the
//! synchronous queue only where it would see the difference: every other
//! synchronous operation (copies, allocations' fills, data-clause
//! transfers) waits for the queue, which is in order, so it finds the
//! kernels before it done; `clock()` and the end of an input wait too
//! ([`DevState::complete_sync`]); and an async construct starts only once
//! the synchronous work before it is done (OpenACC orders it after them).
//! A fault of such a kernel is reported by the wait that finds it.

use super::*;

/// Batches of synchronous kernels in flight before the host waits for all
/// but the newest: the host runs at most about a batch ahead of the
/// device, and the wait honours the input's limits (the queue's own cap
/// would block without them).
const LAZY_IN_FLIGHT: usize = 2;

impl DevState {
    /// After recording on `id`: a synchronous queue waits for the work; an
    /// async one submits its batch at once when none of its work is running
    /// (the device would sit idle: host work after an `async` construct
    /// overlaps it) and it was not looked at in the last `IDLE_SUBMIT_GAP`,
    /// else once the batch is large. A stream of tiny kernels thus goes out
    /// in batches (a submission per kernel cost 7 us of host time per
    /// kernel on an H200, against 2.4 us batched).
    pub fn settle(&mut self, id: QueueId) -> Result<(), Fault> {
        match id {
            QueueId::Sync => self.wait_queue(id),
            QueueId::Async(_) => self.submit_soon(id),
        }
    }

    /// Submit what `id` recorded now if none of its work runs and it was
    /// not looked at in the last `IDLE_SUBMIT_GAP`, or once the batch is
    /// large; else leave it for the interpreter's periodic check.
    pub(super) fn submit_soon(&mut self, id: QueueId) -> Result<(), Fault> {
        let now = std::time::Instant::now();
        let recent = self
            .idle_submits
            .iter()
            .any(|(q, t)| *q == id && now.duration_since(*t) < IDLE_SUBMIT_GAP);
        let q = self.queue(id)?;
        if q.pending_ops() >= BATCH_OPS {
            self.hand_off(id)?;
        } else if !recent {
            // Looked at most once per gap: asking the driver for the
            // queue's progress on every launch of a stream costs more
            // than batching saves.
            self.idle_submits.retain(|(q, _)| *q != id);
            self.idle_submits.push((id, now));
            self.submit_if_idle(id)?;
        }
        Ok(())
    }

    /// Whether a queue has recorded work not yet submitted (async work, or
    /// synchronous kernels not waited for).
    pub fn holds_async_work(&self) -> bool {
        self.queues.iter().any(|(_, q)| q.pending_ops() > 0)
    }

    /// Submit the recorded work of every async queue that has none running
    /// (held back while earlier work ran: [`DevState::settle`]); whether
    /// work is still held back behind running work.
    pub fn submit_idle(&mut self) -> Result<bool, Fault> {
        let mut held = false;
        let ids: Vec<QueueId> = self
            .queues
            .iter()
            .filter(|(_, q)| q.pending_ops() > 0)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            held |= !self.submit_if_idle(id)?;
        }
        Ok(held)
    }

    /// Submit the work every async queue holds back for batching: called
    /// before the host blocks, when held work would otherwise sit
    /// unsubmitted while the device idles (a copy queued behind running
    /// work on one queue while the host waits for another started only
    /// at the host's next launch: 40 us of idle device per Jacobi
    /// iteration on an H200).
    pub fn submit_held(&mut self) -> Result<(), Fault> {
        let ids: Vec<QueueId> = self
            .queues
            .iter()
            .filter(|(id, q)| matches!(id, QueueId::Async(_)) && q.pending_ops() > 0)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.submit(id)?;
        }
        Ok(())
    }

    /// Submit what `id` has recorded if none of its work is running;
    /// whether it was idle.
    pub(super) fn submit_if_idle(&mut self, id: QueueId) -> Result<bool, Fault> {
        let idle = self.queue(id)?.idle().map_err(|e| self.fault(e))?;
        if idle {
            self.hand_off(id)?;
        }
        Ok(idle)
    }

    /// Submit what `id` recorded, for work the host does not wait for
    /// next: an async queue's batch goes to the device's submission thread
    /// where it has one (`vk_runtime::Queue::hand_off`), so the host goes
    /// on to its next construct at once; the synchronous queue's is
    /// submitted here, since the host waits for it soon.
    pub(super) fn hand_off(&mut self, id: QueueId) -> Result<u64, Fault> {
        match id {
            QueueId::Async(_) => self.submit_with(id, Queue::hand_off),
            QueueId::Sync => self.submit(id),
        }
    }

    /// Submit the open batch of `id`, and device-side waits registered on
    /// it even with nothing recorded; the value it signals (the last one
    /// when nothing was submitted).
    pub fn submit(&mut self, id: QueueId) -> Result<u64, Fault> {
        self.submit_with(id, Queue::submit)
    }

    /// Submit what `id` has recorded, if anything; the last value
    /// submitted. (A wait on a companion copy alone is not submitted: a
    /// host wait covers the copy through `outstanding`, and the next batch
    /// with work carries the device-side wait.)
    /// Has the device finished everything queue `id` holds (submitting
    /// what is recorded first)? Does not wait.
    pub fn queue_finished(&mut self, id: QueueId) -> Result<bool, Fault> {
        let v = self.flush(id)?;
        let done = self.queue(id)?.completed_value();
        match done {
            Ok(c) => Ok(c >= v),
            Err(e) => Err(self.fault(e)),
        }
    }

    pub(super) fn flush(&mut self, id: QueueId) -> Result<u64, Fault> {
        self.submit_with(id, Queue::submit_work)
    }

    pub(super) fn submit_with(
        &mut self,
        id: QueueId,
        how: fn(&mut Queue) -> vk_runtime::Result<u64>,
    ) -> Result<u64, Fault> {
        let tracing = self.tracing;
        let q = self.queue(id)?;
        let before = q.submitted_value();
        let v = how(q).map_err(|e| self.fault(e))?;
        if tracing && v != before {
            self.submits.push((id, v, std::time::Instant::now()));
        }
        Ok(v)
    }

    /// After recording a synchronous kernel that reports no faults of its
    /// own (no checks, no loop budget): submit it as async work is
    /// submitted, without waiting, unless lazy completion is off.
    pub fn settle_sync_kernel(&mut self) -> Result<(), Fault> {
        if !self.lazy_sync {
            return self.wait_queue(QueueId::Sync);
        }
        self.sync_open = true;
        self.submit_soon(QueueId::Sync)?;
        let q = self.queue(QueueId::Sync)?;
        if q.stats().in_flight >= LAZY_IN_FLIGHT {
            q.poll().map_err(Fault::from)?;
            if q.stats().in_flight >= LAZY_IN_FLIGHT {
                let v = q.submitted_value() - 1;
                self.block_on(QueueId::Sync, v)?;
            }
        }
        Ok(())
    }

    /// Whether the synchronous queue holds kernels the host has not waited
    /// for.
    pub fn sync_open(&self) -> bool {
        self.sync_open
    }

    /// Wait for the synchronous kernels not yet waited for, if any.
    pub fn complete_sync(&mut self) -> Result<(), Fault> {
        if self.sync_open {
            self.wait_queue(QueueId::Sync)?;
        }
        Ok(())
    }
}
