//! Reduction results not yet read. An `async` reduction's result lands in
//! its variable when the host waits for the construct's queue (OpenACC:
//! the variable is defined after the wait), and touching the variable
//! before that races with the device. A synchronous reduction whose kernel
//! completes lazily lands when the host first reads the variable. Only the
//! locals a `parallel` construct reduces into are checked
//! ([`super::Compiler::watched`]), so other locals cost nothing.

use super::machine::{Ctx, Deferred};
use super::queue::QueueId;
use super::scalar::{bits_to_value, value_to_bits};
use super::value::{Frame, R};
use lang::value::combine;
use lang::Span;

/// How the host touches a variable that may wait for a reduction.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    Read,
    /// A write whose value does not depend on the variable: a pending
    /// synchronous result is dropped unread.
    Overwrite,
    /// A write that reads the variable first (`s += x`, `s = s * 2`).
    Update,
    /// A reduction's result combined with the variable at once: earlier
    /// synchronous results land first; async ones keep their launch order.
    Combine,
}

/// Before the host touches the variable in `slot` of the running frame:
/// a pending synchronous reduction into it lands (or is dropped, when the
/// write replaces it); a pending `async` one is a race (reading or writing
/// it before the wait races with the device).
pub fn deferred_access(fr: &mut Frame, cx: &mut Ctx, slot: usize, how: Touch, span: Span) -> R<()> {
    let depth = cx.depth;
    let mine = |d: &Deferred| d.slot == slot && d.depth == depth;
    if how != Touch::Combine {
        if let Some(d) = cx
            .deferred
            .iter()
            .find(|d| mine(d) && d.queue != QueueId::Sync)
        {
            return Err(async_race(d, how != Touch::Read, span));
        }
    }
    let mine = |d: &Deferred| mine(d) && d.queue == QueueId::Sync;
    if !cx.deferred.iter().any(mine) {
        return Ok(());
    }
    if how == Touch::Overwrite {
        cx.deferred.retain(|d| !mine(d));
        return Ok(());
    }
    let devs: Vec<usize> = cx
        .deferred
        .iter()
        .filter(|d| mine(d))
        .map(|d| d.dev)
        .collect();
    let b = cx.backend.clone();
    for dev in devs {
        b.complete_sync(cx, Some(dev), Some(span))?;
    }
    let (now, later): (Vec<Deferred>, Vec<Deferred>) =
        std::mem::take(&mut cx.deferred).into_iter().partition(mine);
    cx.deferred = later;
    fold(fr, now);
    Ok(())
}

fn async_race(d: &Deferred, write: bool, span: Span) -> Box<lang::Diag> {
    let verb = if write { "writes" } else { "reads" };
    let wait = match d.queue {
        QueueId::Async(-1) | QueueId::Sync => "wait;".to_string(),
        QueueId::Async(n) => format!("wait({n});"),
    };
    let queue = d.queue;
    Box::new(
        lang::Diag::error(
            "accl::race::host",
            format!(
                "the host {verb} `{}` while the async reduction on {queue} of device {} that computes it is pending",
                d.name, d.dev
            ),
            span,
            format!("host {}", if write { "write" } else { "read" }),
        )
        .with_label(d.span, format!("reduction into `{}` on {queue}", d.name))
        .with_help(format!(
            "its value lands when the host waits for the queue: add `{wait}` (or `wait;`) before this access"
        )),
    )
}

/// Fold landed results into their variables, in launch order.
fn fold(fr: &mut Frame, now: Vec<Deferred>) {
    for d in now {
        let outer = bits_to_value(d.ty, fr.s[d.slot]);
        let v = (d.value)();
        let v = if d.copy { v } else { combine(d.op, outer, v) };
        fr.s[d.slot] = value_to_bits(v, d.ty);
    }
}

/// After the host waited for `queues` of the current device (None: all of
/// its async queues): the pending reductions of those queues land in their
/// variables, in the order they were launched.
pub fn land(fr: &mut Frame, cx: &mut Ctx, queues: Option<&[i64]>) {
    if cx.deferred.is_empty() {
        return;
    }
    let (dev, depth) = (cx.device, cx.depth);
    let (now, later): (Vec<Deferred>, Vec<Deferred>) =
        std::mem::take(&mut cx.deferred).into_iter().partition(|d| {
            d.dev == dev
                && d.depth == depth
                && match d.queue {
                    QueueId::Sync => false,
                    QueueId::Async(q) => queues.is_none_or(|qs| qs.contains(&q)),
                }
        });
    cx.deferred = later;
    fold(fr, now);
}

/// At the end of an input: the host waits for the synchronous kernels not
/// yet waited for, and for the queues of reductions still pending, and
/// they land.
pub fn land_at_end(fr: &mut Frame, cx: &mut Ctx) -> R<()> {
    let b = cx.backend.clone();
    b.complete_sync(cx, None, None)?;
    while let Some(d) = cx.deferred.first() {
        let (dev, queue, span) = (d.dev, d.queue, d.span);
        let here = cx.device;
        cx.device = dev;
        let r = match queue {
            QueueId::Sync => Ok(()),
            QueueId::Async(q) => b.wait(cx, Some(&[q]), None, span),
        };
        if r.is_ok() {
            let depth = cx.depth;
            let (now, later): (Vec<Deferred>, Vec<Deferred>) = std::mem::take(&mut cx.deferred)
                .into_iter()
                .partition(|d| d.dev == dev && d.queue == queue && d.depth == depth);
            cx.deferred = later;
            fold(fr, now);
        }
        cx.device = here;
        cx.deferred.retain(|d| !(d.dev == dev && d.queue == queue));
        r?;
    }
    Ok(())
}
