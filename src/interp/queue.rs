//! Which queue of a device work goes to: the synchronous one or an async
//! queue number. Named by the present table's race tracking, the deferred
//! results and the constructs alike, so it sits below them all.

/// An accl queue of a device: the synchronous one, or an async queue
/// number (`async` alone is [`QueueId::DEFAULT_ASYNC`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum QueueId {
    #[default]
    Sync,
    Async(i64),
}

impl QueueId {
    /// The queue of `async` without a number (OpenACC's `acc_async_noval`).
    pub const DEFAULT_ASYNC: QueueId = QueueId::Async(-1);

    /// Its short name, as the clause reads (`async(1)`, `async`, `sync`):
    /// trace track names.
    pub fn track(&self) -> String {
        match self {
            QueueId::Sync => "sync".into(),
            QueueId::Async(-1) => "async".into(),
            QueueId::Async(n) => format!("async({n})"),
        }
    }
}

impl std::fmt::Display for QueueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueId::Sync => write!(f, "the synchronous queue"),
            QueueId::Async(-1) => write!(f, "the default async queue"),
            QueueId::Async(n) => write!(f, "async queue {n}"),
        }
    }
}
