//! What stops a device wait early (the deadline, the embedder's progress
//! callback) and why it stopped: read by the running program's context,
//! the present table's waits and the errors they turn into.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The embedder's progress callback (operations so far → go on?), shared
/// by the interpreter and the backend's waits.
pub type Progress = Rc<RefCell<dyn FnMut(u64) -> bool>>;

/// What stops a device wait early: the deadline (with the limit it came
/// from, for the message) and the embedder's progress callback.
#[derive(Clone, Default)]
pub struct WaitLimits {
    pub deadline: Option<(Instant, Duration)>,
    pub progress: Option<Progress>,
    pub ops: u64,
}

/// Why a device wait stopped before the device finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitStop {
    TimeLimit(Duration),
    Aborted,
}

impl WaitLimits {
    /// The same deadline and callback as `other` (the operation count
    /// aside, which moves at every construct).
    pub fn same_stops(&self, other: &WaitLimits) -> bool {
        let progress = match (&self.progress, &other.progress) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        };
        progress && self.deadline == other.deadline
    }

    /// Whether waiting may go on; called between short slices of a wait.
    pub fn check(&self) -> Result<(), WaitStop> {
        if let Some((d, t)) = self.deadline {
            if Instant::now() >= d {
                return Err(WaitStop::TimeLimit(t));
            }
        }
        if let Some(p) = &self.progress {
            // A callback already running (a wait inside it) is not re-entered.
            if let Ok(mut f) = p.try_borrow_mut() {
                if !f(self.ops) {
                    return Err(WaitStop::Aborted);
                }
            }
        }
        Ok(())
    }

    /// Whether any limit applies (a wait without one blocks in one call).
    pub fn is_set(&self) -> bool {
        self.deadline.is_some() || self.progress.is_some()
    }
}
