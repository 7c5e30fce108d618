//! The limits a running program is held to: operations, call depth, time,
//! the progress callback and memory. [`Ctx::tick`] is the one check on the
//! hot path; it compares a counter with the next operation at which any
//! limit could be due, so the rest of the checks run only every few
//! thousand operations. They are methods of the context kept out of
//! `machine.rs`, which holds only what has to be defined together.

use super::error;
use super::machine::Ctx;
use super::value::R;
use super::wait::WaitLimits;
use lang::Span;
use std::time::Instant;

impl Ctx {
    /// Count one operation (a loop iteration or a call): the one hot-path
    /// limit check.
    #[inline(always)]
    pub fn tick(&mut self, span: Span) -> R<()> {
        self.ops += 1;
        if self.ops >= self.next_check {
            return self.check_limits(span);
        }
        Ok(())
    }

    /// Note whether async work is held back (see [`Ctx::held`]).
    pub fn set_held(&mut self, held: bool) {
        if held != self.held {
            self.held = held;
            self.reset_check();
        }
    }

    #[cold]
    pub(crate) fn check_limits(&mut self, span: Span) -> R<()> {
        self.submit_held();
        if self.max_ops != 0 && self.ops > self.max_ops {
            return Err(error::op_limit(span, self.max_ops));
        }
        if let Some(p) = &self.progress {
            if !(p.borrow_mut())(self.ops) {
                return Err(error::aborted(span));
            }
        }
        if let (Some(d), Some(t)) = (self.deadline, self.time_limit) {
            if Instant::now() >= d {
                return Err(error::time_limit(span, t));
            }
        }
        self.reset_check();
        Ok(())
    }

    /// The limits a device wait honours, for the backend to poll while it
    /// blocks: the deadline and the progress callback.
    pub fn wait_limits(&self) -> WaitLimits {
        WaitLimits {
            deadline: self.deadline.zip(self.time_limit),
            progress: self.progress.clone(),
            ops: self.ops,
        }
    }

    pub fn check_array_bytes(&self, bytes: i128, span: Span) -> R<()> {
        if self.max_array_bytes != 0 && bytes > self.max_array_bytes as i128 {
            return Err(error::array_limit(span, bytes, self.max_array_bytes));
        }
        Ok(())
    }

    /// The memory limit for one value: the embedder's, or the host's own
    /// guard (`stdlib::array::MAX_BYTES`).
    pub fn memory_limit(&self) -> usize {
        match self.max_array_bytes {
            0 => stdlib::array::MAX_BYTES,
            n => n,
        }
    }

    /// An empty string with room for `bytes`, or a located error: over the
    /// memory limit (`accl::run::memory_limit`) or refused by the system
    /// (`accl::run::out_of_memory`), never an abort.
    pub fn new_string(&self, bytes: usize, span: Span) -> R<String> {
        let limit = self.memory_limit();
        if bytes > limit {
            return Err(error::memory_limit(span, "string", bytes, limit));
        }
        let mut s = String::new();
        s.try_reserve_exact(bytes)
            .map_err(|_| error::out_of_memory(span, "string", bytes))?;
        Ok(s)
    }

    /// Check a string already built (bounded by the inputs that made it)
    /// against the memory limit.
    pub fn check_string(&self, s: &str, span: Span) -> R<()> {
        let limit = self.memory_limit();
        if s.len() > limit {
            return Err(error::memory_limit(span, "string", s.len(), limit));
        }
        Ok(())
    }

    /// Whether a reduction result is pending into one of the running
    /// frame's `slots` or the top-level variables `top` (by slot number,
    /// whatever frame: a cautious answer).
    pub fn deferred_on(&self, slots: &[usize], top: &[usize]) -> bool {
        self.deferred
            .iter()
            .any(|d| slots.contains(&d.slot) || top.contains(&d.slot))
    }

    /// Whether no operation, time or progress limit is set: the only
    /// check that can fall due is the submission of held-back async work.
    pub fn unlimited(&self) -> bool {
        self.max_ops == 0 && self.progress.is_none() && self.deadline.is_none()
    }

    /// Before compiled code runs on threads (which make no limit checks):
    /// submit the async work held back behind running work that the
    /// queues can take now; the rest waits for the check after.
    pub fn submit_held(&mut self) {
        if self.held {
            self.held = self.backend.clone().submit_idle();
        }
    }

    /// Recompute when the next limit check is due.
    pub fn reset_check(&mut self) {
        let mut next = u64::MAX;
        if self.held {
            // A driver query every few thousand operations (tens of us).
            next = next.min(self.ops + 4096);
        }
        if self.max_ops != 0 {
            next = next.min(self.max_ops + 1);
        }
        if self.progress.is_some() {
            next = next.min(self.ops + self.progress_every.max(1));
        }
        if self.deadline.is_some() {
            // Reading the clock every 4096 operations costs nothing measurable.
            next = next.min(self.ops + 4096);
        }
        self.next_check = next;
    }

    pub fn enter_call(&mut self, span: Span) -> R<()> {
        if self.depth >= self.max_depth {
            return Err(error::recursion(span, self.max_depth));
        }
        self.depth += 1;
        self.tick(span)
    }
}
