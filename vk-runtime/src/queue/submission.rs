//! Submitting a queue's open batch: on the caller's thread, or through the
//! device's submission thread (`crate::submit`), at once or held until
//! its waits are met.

use super::{work_stages, writes, Batch, Queue, Spare, MAX_IN_FLIGHT};
use crate::error::{Result, VkError};
use ash::vk;

/// How a batch is submitted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Via {
    /// On the caller's thread (or through the submission thread, waited
    /// for, when that holds batches).
    Here,
    /// Handed to the submission thread, where the device has one.
    Thread,
    /// Handed to it, submitted once its waits are met.
    Held,
}

impl Queue {
    /// Submits the open batch if anything was recorded, and returns the
    /// last submitted value. Unlike [`Queue::submit`], waits registered
    /// with [`Queue::wait_on`] alone submit nothing: they stay for the next
    /// batch with work (an empty batch costs a device round trip).
    pub fn submit_work(&mut self) -> Result<u64> {
        if self.open.is_none() {
            return Ok(self.submitted);
        }
        self.submit()
    }

    /// Submits the open batch, signalling the next timeline value, and
    /// returns that value. With nothing recorded and nothing to wait for,
    /// submits nothing and returns the last submitted value.
    pub fn submit(&mut self) -> Result<u64> {
        self.submit_via(Via::Here)
    }

    /// Like [`Queue::submit`], but on a device with a submission thread
    /// (`crate::submit`) the batch is handed to that thread and this
    /// returns at once: for work the caller does not wait for next. (If the
    /// thread sleeps with nothing to submit, the batch is submitted here:
    /// sooner than the thread would wake.)
    pub fn hand_off(&mut self) -> Result<u64> {
        self.submit_via(Via::Thread)
    }

    /// Like [`Queue::hand_off`], but the thread submits the batch only
    /// once the host sees the values it waits for ([`Queue::wait_on`])
    /// reached: for a copy behind another queue's kernel, whose device-side
    /// wait slowed that kernel's queue on NVIDIA (`crate::submit`). Without
    /// a submission thread, the same as [`Queue::submit`].
    pub fn hand_off_when_ready(&mut self) -> Result<u64> {
        self.submit_via(Via::Held)
    }

    fn submit_via(&mut self, via: Via) -> Result<u64> {
        if self.open.is_none() && self.pending_waits.is_empty() {
            return Ok(self.submitted);
        }
        if let Some(e) = self.device.shared.submit_failure() {
            return Err(e);
        }
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            let oldest = self.in_flight.front().map_or(0, |b| b.value);
            self.wait_value(oldest, u64::MAX)?;
            self.poll()?;
        }
        // The shared state, not the `ash::Device`: its function tables are about
        // 1.5 KB to copy.
        let shared = self.device.shared.clone();
        let d = &shared.raw;
        let mut batch = match self.open.take() {
            Some(b) => b,
            None => Batch::new(vk::CommandBuffer::null(), Spare::default()),
        };
        if batch.cmd != vk::CommandBuffer::null() {
            let to_host = vk::MemoryBarrier::default()
                .src_access_mask(writes(self.hw.role))
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            unsafe {
                d.cmd_pipeline_barrier(
                    batch.cmd,
                    work_stages(self.hw.role),
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[to_host],
                    &[],
                    &[],
                );
            }
            if let Err(e) = unsafe { d.end_command_buffer(batch.cmd) } {
                self.recycle(batch);
                return Err(VkError::from_vk("vkEndCommandBuffer", e));
            }
        }
        let value = self.submitted + 1;
        batch.value = value;
        batch.waits = std::mem::take(&mut self.pending_waits);
        if let Some(thread) = self.device.shared.submitter.as_ref() {
            // On the caller's thread only when the thread holds nothing
            // (it would otherwise have to come after what it holds); a
            // batch handed over also when the thread sleeps, which it takes
            // longer to wake from than the submission takes
            // (`crate::submit`).
            let asleep = via == Via::Thread && thread.asleep();
            if (via != Via::Here && !asleep) || !thread.idle() {
                let (done, submitted) = match via {
                    Via::Here => {
                        let (tx, rx) = std::sync::mpsc::sync_channel(1);
                        (Some(tx), Some(rx))
                    }
                    _ => (None, None),
                };
                thread.hand_off(self.job(&batch, value, via, done));
                self.submitted = value;
                self.stats.submissions += 1;
                self.in_flight.push_back(batch);
                if let Some(rx) = submitted {
                    let _ = rx.recv();
                    if let Some(e) = self.device.shared.submit_failure() {
                        return Err(e);
                    }
                }
                return Ok(value);
            }
        }
        let job = self.job(&batch, value, Via::Here, None);
        let hw = &self.device.shared.queues[self.hw.slot];
        // SAFETY: the batch (with its command buffer and the timelines it
        // waits on) stays in `in_flight` until its value is reached.
        let result = unsafe {
            crate::submit::queue_submit(d, hw.raw, &hw.submit_lock, &job, vk::Fence::null())
        };
        if let Err(e) = result {
            // Nothing was submitted: the waits stay pending for next time.
            self.pending_waits = std::mem::take(&mut batch.waits);
            self.recycle(batch);
            return Err(VkError::from_vk("vkQueueSubmit", e));
        }
        self.submitted = value;
        self.stats.submissions += 1;
        self.in_flight.push_back(batch);
        Ok(value)
    }

    /// What the submission of `batch` (signalling `value`) needs.
    fn job(
        &self,
        batch: &Batch,
        value: u64,
        via: Via,
        done: Option<std::sync::mpsc::SyncSender<()>>,
    ) -> crate::submit::Job {
        crate::submit::Job {
            slot: self.hw.slot,
            cmd: batch.cmd,
            waits: batch.waits.iter().map(|(t, v)| (t.raw, *v)).collect(),
            signal: (self.timeline.raw, value),
            held: via == Via::Held,
            done,
        }
    }
}
