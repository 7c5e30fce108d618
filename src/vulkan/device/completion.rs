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
