//! Race detection: the rows of arrays that pending async operations read
//! or write, checked against every host access of an array, every
//! operation recorded on another queue, and the release of device memory.
//! The rules as users see them are in `docs/language.md`, "Async queues".
//! Both backends use it: the Vulkan backend with its queues' timeline
//! values, the host backend ([`HostRaces`]) with a count per queue, since
//! its async work runs at once but stays pending in program order until
//! the program waits for it, so `--host` reports the races a device run
//! would.
//!
//! An operation touches two memories: the host array and the device copy
//! of one device. Two accesses conflict when they touch the same memory,
//! overlapping rows of the same array, and at least one writes. A pending
//! operation stops counting once the host has observed its queue's
//! timeline value; another queue is ordered after it once that queue has
//! joined it (`wait(p) async(q)`, directly or through a chain of joins).
//! Same-queue operations are in order and never conflict.

use super::queue::QueueId;
use lang::{Diag, Span};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// How an operation uses one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    None,
    Read,
    Write,
}

fn conflict(a: Mode, b: Mode) -> bool {
    a != Mode::None && b != Mode::None && (a == Mode::Write || b == Mode::Write)
}

/// What an operation does to rows `lo..hi` of one array.
#[derive(Debug, Clone)]
pub struct Access {
    pub array: u64,
    pub name: Rc<str>,
    pub lo: usize,
    pub hi: usize,
    pub host: Mode,
    pub device: Mode,
}

/// The data operations both backends track, as accesses of rows `lo..hi`
/// of an array (`array`, named `name`), with what diagnostics call them:
/// one definition, so the host reference reports the races a device does.
impl Access {
    fn rows(
        array: u64,
        name: Rc<str>,
        (lo, hi): (usize, usize),
        host: Mode,
        device: Mode,
    ) -> Access {
        Access {
            array,
            name,
            lo,
            hi,
            host,
            device,
        }
    }

    /// Making rows present: copied in from the host, or only allocated.
    pub fn allocation(
        array: u64,
        name: Rc<str>,
        rows: (usize, usize),
        copyin: bool,
    ) -> (Access, &'static str) {
        if copyin {
            (
                Access::rows(array, name, rows, Mode::Read, Mode::Write),
                "copy to the device",
            )
        } else {
            (
                Access::rows(array, name, rows, Mode::None, Mode::Write),
                "allocation",
            )
        }
    }

    /// A copy between the host array and the device copy.
    pub fn copy(
        array: u64,
        name: Rc<str>,
        rows: (usize, usize),
        to_host: bool,
    ) -> (Access, &'static str) {
        if to_host {
            (
                Access::rows(array, name, rows, Mode::Write, Mode::Read),
                "copy to the host",
            )
        } else {
            (
                Access::rows(array, name, rows, Mode::Read, Mode::Write),
                "copy to the device",
            )
        }
    }

    /// Freeing rows of the device copy (after a copy back when `copyout`).
    pub fn release(array: u64, name: Rc<str>, rows: (usize, usize), copyout: bool) -> Access {
        let host = if copyout { Mode::Write } else { Mode::None };
        Access::rows(array, name, rows, host, Mode::Write)
    }

    /// A device-to-device copy of rows of `src` (id, name, rows `lo..hi`)
    /// into rows of `dst`.
    pub fn device_copy(
        src: (u64, Rc<str>, (usize, usize)),
        dst: (u64, Rc<str>, (usize, usize)),
    ) -> [Access; 2] {
        [
            Access::rows(src.0, src.1, src.2, Mode::None, Mode::Read),
            Access::rows(dst.0, dst.1, dst.2, Mode::None, Mode::Write),
        ]
    }
}

/// One pending operation (or several identical ones of one queue, merged:
/// `value` is the latest).
#[derive(Debug, Clone)]
struct Pending {
    dev: usize,
    queue: QueueId,
    value: u64,
    acc: Access,
    span: Span,
    what: &'static str,
}

/// The pending accesses of every device of a backend.
#[derive(Default)]
pub struct Tracker {
    /// By array id: a program that launches async kernels on fresh arrays
    /// (private-array copies) and never waits keeps one entry per launch,
    /// and every host access looks at its own array's entries only.
    ops: FxHashMap<u64, Vec<Pending>>,
    /// Per (device, queue): the value of each other queue of the device
    /// it is known to have waited for on the device.
    joins: FxHashMap<(usize, QueueId), FxHashMap<QueueId, u64>>,
}

fn verb(m: Mode) -> &'static str {
    match m {
        Mode::Write => "write",
        _ => "read",
    }
}

impl Tracker {
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Does a pending operation touch `array` (any row, either memory)?
    pub fn pending_on(&self, array: u64) -> bool {
        self.ops
            .get(&array)
            .is_some_and(|v| v.iter().any(|p| p.acc.array == array))
    }

    /// Queues with pending operations on device `dev`.
    pub fn queues(&self, dev: usize) -> Vec<QueueId> {
        let mut v: Vec<QueueId> = self
            .ops
            .values()
            .flatten()
            .filter(|p| p.dev == dev)
            .map(|p| p.queue)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The host waited for queue `queue` of `dev` up to `value`: its
    /// operations up to there can no longer race with anything.
    /// Queues joined into it (`wait(p) async(queue)`, transitively) are
    /// waited for up to their join values too.
    pub fn waited(&mut self, dev: usize, queue: QueueId, value: u64) {
        let mut upto: Vec<(QueueId, u64)> = vec![(queue, value)];
        if let Some(m) = self.joins.get(&(dev, queue)) {
            upto.extend(m.iter().map(|(&q, &v)| (q, v)));
        }
        self.ops.retain(|_, ps| {
            ps.retain(|p| {
                !(p.dev == dev && upto.iter().any(|&(q, v)| p.queue == q && p.value <= v))
            });
            !ps.is_empty()
        });
    }

    /// Queue `into` of `dev` waits on the device for `from` to reach `value`.
    pub fn join(&mut self, dev: usize, into: QueueId, from: QueueId, value: u64) {
        let inherited: Vec<(QueueId, u64)> = self
            .joins
            .get(&(dev, from))
            .map(|m| m.iter().map(|(&q, &v)| (q, v)).collect())
            .unwrap_or_default();
        let m = self.joins.entry((dev, into)).or_default();
        for (q, v) in inherited.into_iter().chain([(from, value)]) {
            if q != into {
                let e = m.entry(q).or_insert(0);
                *e = (*e).max(v);
            }
        }
    }

    fn ordered(&self, dev: usize, queue: QueueId, p: &Pending) -> bool {
        if p.dev == dev && p.queue == queue {
            return true;
        }
        p.dev == dev
            && self
                .joins
                .get(&(dev, queue))
                .and_then(|m| m.get(&p.queue))
                .is_some_and(|&v| v >= p.value)
    }

    /// An operation on `queue` of `dev` is about to do `acc`; `what` says
    /// what it is (`"kernel"`, `"copy to the host"`, ...). An error when an
    /// unordered pending operation conflicts with it.
    pub fn check(
        &self,
        dev: usize,
        queue: QueueId,
        acc: &Access,
        span: Span,
        what: &str,
    ) -> Result<(), Box<Diag>> {
        for p in self.ops.get(&acc.array).into_iter().flatten() {
            // Disjoint rows, or none (a kernel that touches nothing of it).
            if p.acc.array != acc.array
                || p.acc.hi <= acc.lo
                || acc.hi <= p.acc.lo
                || acc.lo >= acc.hi
                || p.acc.lo >= p.acc.hi
            {
                continue;
            }
            let host = conflict(p.acc.host, acc.host);
            let device = p.dev == dev && conflict(p.acc.device, acc.device);
            if !(host || device) || self.ordered(dev, queue, p) {
                continue;
            }
            let (mine, theirs) = if host {
                (acc.host, p.acc.host)
            } else {
                (acc.device, p.acc.device)
            };
            let memory = if host {
                "the host array".to_string()
            } else {
                format!("its copy on device {dev}")
            };
            let rows = format!("rows {}..{}", acc.lo.max(p.acc.lo), acc.hi.min(p.acc.hi));
            let help = match (queue, p.queue) {
                (QueueId::Async(q), QueueId::Async(pq)) if p.dev == dev => format!(
                    "order them: `wait({pq}) async({q})` before this construct makes its queue wait on the device, or `wait({pq});` waits on the host"
                ),
                (_, QueueId::Async(pq)) => format!(
                    "add `wait({pq});` before this construct{}",
                    if p.dev != dev {
                        format!(" (with `set device_num({})` first: queues are per device)", p.dev)
                    } else {
                        String::new()
                    }
                ),
                (_, QueueId::Sync) => "add a `wait` before this construct".into(),
            };
            let message = if what.starts_with("release") {
                format!(
                    "this construct frees {rows} of `{}` on device {dev} while a {} still pending on {} may {} them",
                    acc.name,
                    p.what,
                    p.queue,
                    verb(theirs),
                )
            } else {
                format!(
                    "this {what} on {queue} would {} {} of `{}` ({memory}) while a {} still pending on {} of device {} may {} them",
                    verb(mine),
                    rows,
                    acc.name,
                    p.what,
                    p.queue,
                    p.dev,
                    verb(theirs),
                )
            };
            return Err(Box::new(
                Diag::error(
                    "accl::race::queues",
                    message,
                    span,
                    format!("{what} on {queue}"),
                )
                .with_label(p.span, format!("pending {} on {}", p.what, p.queue))
                .with_help(help),
            ));
        }
        Ok(())
    }

    /// [`Tracker::check`] of each of an operation's `accesses`.
    pub fn check_all(
        &self,
        dev: usize,
        queue: QueueId,
        accesses: &[Access],
        span: Span,
        what: &str,
    ) -> Result<(), Box<Diag>> {
        accesses
            .iter()
            .try_for_each(|acc| self.check(dev, queue, acc, span, what))
    }

    /// Record a pending operation (merged with an identical one of the same
    /// queue, so a long chain of kernels keeps one entry per array).
    pub fn record(
        &mut self,
        dev: usize,
        queue: QueueId,
        value: u64,
        acc: Access,
        span: Span,
        what: &'static str,
    ) {
        let ps = self.ops.entry(acc.array).or_default();
        if let Some(p) = ps.iter_mut().find(|p| {
            p.dev == dev
                && p.queue == queue
                && p.acc.array == acc.array
                && p.acc.lo == acc.lo
                && p.acc.hi == acc.hi
                && p.acc.host == acc.host
                && p.acc.device == acc.device
        }) {
            p.value = p.value.max(value);
            p.span = span;
            p.what = what;
            return;
        }
        ps.push(Pending {
            dev,
            queue,
            value,
            acc,
            span,
            what,
        });
    }

    /// The host reads (or writes) rows `lo..hi` of array `array` at `span`.
    pub fn host_check(
        &self,
        array: u64,
        lo: usize,
        hi: usize,
        write: bool,
        span: Span,
    ) -> Result<(), Box<Diag>> {
        let host = if write { Mode::Write } else { Mode::Read };
        for p in self.ops.get(&array).into_iter().flatten() {
            if p.acc.array != array
                || p.acc.hi <= lo
                || hi <= p.acc.lo
                || lo >= hi
                || p.acc.lo >= p.acc.hi
            {
                continue;
            }
            // The host array is shared with copies; a kernel's device copy is
            // not, but reading the host array while a kernel still writes the
            // device copy (or writing it while one reads) is the missing
            // `wait` this check exists for.
            let theirs = p.acc.host.max(p.acc.device);
            if !conflict(host, theirs) {
                continue;
            }
            let q = match p.queue {
                QueueId::Async(-1) => String::new(),
                QueueId::Async(n) => n.to_string(),
                QueueId::Sync => String::new(),
            };
            let mut help = if q.is_empty() {
                "add `wait;` before this access".to_string()
            } else {
                format!("add `wait({q});` (or `wait;`) before this access")
            };
            if p.dev != 0 {
                help.push_str(&format!(
                    " with device {} current (`set device_num({})`)",
                    p.dev, p.dev
                ));
            }
            return Err(Box::new(
                Diag::error(
                    "accl::race::host",
                    format!(
                        "the host {}s `{}` (row {}) while a {} on {} of device {} may still {} it",
                        verb(host),
                        p.acc.name,
                        lo.max(p.acc.lo),
                        p.what,
                        p.queue,
                        p.dev,
                        verb(theirs),
                    ),
                    span,
                    format!("host {}", verb(host)),
                )
                .with_label(p.span, format!("pending {} on {}", p.what, p.queue))
                .with_help(help),
            ));
        }
        Ok(())
    }
}

/// The rows `[lo, hi)` a kernel may touch of an array bound as the rows
/// `[s_lo, s_hi)` of its present section: what its accesses `leads` reach
/// ([`compiler::footprint::rows_of`]) over the outer loop's values
/// (`level`: its bounds as written, `inclusive` or not), with the values
/// `param` gives the captured scalars, inside the section (empty when it
/// touches none of it: every access sits under a condition false at
/// launch); else the whole section.
pub fn kernel_rows(
    kernel: &compiler::Kernel,
    leads: Option<&[compiler::footprint::Lead]>,
    level: Option<(i128, i128)>,
    inclusive: bool,
    param: &dyn Fn(u32) -> Option<i128>,
    (s_lo, s_hi): (usize, usize),
) -> (usize, usize) {
    let level = level.map(|(l0, h0)| (l0, if inclusive { h0 + 1 } else { h0 }));
    let rows = leads.and_then(|l| compiler::footprint::rows_of(&kernel.entry, l, level, param));
    match rows {
        Some((a_lo, a_hi)) if a_lo < a_hi => (
            a_lo.clamp(s_lo as i128, s_hi as i128) as usize,
            a_hi.clamp(s_lo as i128, s_hi as i128) as usize,
        ),
        Some(_) => (s_lo, s_lo),
        None => (s_lo, s_hi),
    }
}

/// Race tracking on the host backend: what the Vulkan backend tracks, with
/// each queue's operations numbered in program order in place of timeline
/// values.
#[derive(Default)]
pub struct HostRaces {
    pub tracker: Tracker,
    /// The queue and construct of the operations that follow
    /// ([`crate::interp::machine::Backend::begin`]).
    pub queue: QueueId,
    pub span: Span,
    pub names: FxHashMap<u64, Rc<str>>,
    /// The number of the last operation of each (device, queue).
    values: FxHashMap<(usize, QueueId), u64>,
}

impl HostRaces {
    pub fn name(&self, array: u64) -> Rc<str> {
        self.names
            .get(&array)
            .cloned()
            .unwrap_or_else(|| Rc::from("an array"))
    }

    /// Before an operation of the current construct that does `accesses`:
    /// an error if one races with pending work.
    pub fn guard(&self, dev: usize, accesses: &[Access], what: &str) -> Result<(), Box<Diag>> {
        self.tracker
            .check_all(dev, self.queue, accesses, self.span, what)
    }

    /// After an operation ran: on an async queue it stays pending until
    /// the program waits for that queue.
    pub fn record(&mut self, dev: usize, accesses: Vec<Access>, what: &'static str) {
        if self.queue == QueueId::Sync || accesses.is_empty() {
            return;
        }
        let v = self.values.entry((dev, self.queue)).or_insert(0);
        *v += 1;
        let v = *v;
        for acc in accesses {
            self.tracker
                .record(dev, self.queue, v, acc, self.span, what);
        }
    }

    fn targets(&self, dev: usize, queues: Option<&[i64]>) -> Vec<(QueueId, u64)> {
        let value = |q: QueueId| self.values.get(&(dev, q)).copied().unwrap_or(0);
        match queues {
            Some(qs) => qs
                .iter()
                .map(|&n| (QueueId::Async(n), value(QueueId::Async(n))))
                .collect(),
            None => self
                .values
                .iter()
                .filter(|((d, _), _)| *d == dev)
                .map(|((_, q), &v)| (*q, v))
                .collect(),
        }
    }

    /// `wait(queues)` on the host (None: every queue of `dev`), or with
    /// `join`, `wait(queues) async(join)`.
    pub fn wait(&mut self, dev: usize, queues: Option<&[i64]>, join: Option<QueueId>) {
        for (q, v) in self.targets(dev, queues) {
            match join {
                None => self.tracker.waited(dev, q, v),
                Some(into) => self.tracker.join(dev, into, q, v),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(lo: usize, hi: usize, host: Mode, device: Mode) -> Access {
        Access {
            array: 7,
            name: "a".into(),
            lo,
            hi,
            host,
            device,
        }
    }

    /// Would a kernel on `q` of `dev` writing rows `lo..hi` be refused?
    fn writes_refused(t: &Tracker, dev: usize, q: QueueId, lo: usize, hi: usize) -> bool {
        let w = acc(lo, hi, Mode::None, Mode::Write);
        t.check(dev, q, &w, Span::default(), "kernel").is_err()
    }

    #[test]
    fn disjoint_rows_and_reads_do_not_conflict() {
        let mut t = Tracker::default();
        let (q1, q2) = (QueueId::Async(1), QueueId::Async(2));
        let w = acc(0, 10, Mode::None, Mode::Write);
        t.record(0, q1, 1, w, Span::default(), "kernel");
        assert!(!writes_refused(&t, 0, q2, 10, 20));
        assert!(writes_refused(&t, 0, q2, 5, 20));
        // Another device's copy is other memory.
        assert!(!writes_refused(&t, 1, q2, 0, 10));
        // Same queue: in order.
        assert!(!writes_refused(&t, 0, q1, 0, 10));
        assert!(t.host_check(7, 10, 11, true, Span::default()).is_ok());
        assert!(t.host_check(7, 3, 4, false, Span::default()).is_err());
    }

    #[test]
    fn joins_order_queues_transitively_and_host_waits_forget() {
        let mut t = Tracker::default();
        let (q1, q2, q3) = (QueueId::Async(1), QueueId::Async(2), QueueId::Async(3));
        let written = acc(0, 10, Mode::None, Mode::Write);
        t.record(0, q1, 4, written.clone(), Span::default(), "kernel");
        let w = acc(0, 10, Mode::None, Mode::Read);
        t.join(0, q2, q1, 3);
        assert!(
            t.check(0, q2, &w, Span::default(), "kernel").is_err(),
            "joined too early"
        );
        t.join(0, q2, q1, 4);
        assert!(t.check(0, q2, &w, Span::default(), "kernel").is_ok());
        t.join(0, q3, q2, 1);
        assert!(
            t.check(0, q3, &w, Span::default(), "kernel").is_ok(),
            "through q2"
        );
        // Waiting for q3 waits for q1 through the joins.
        t.waited(0, q3, 1);
        assert!(t.is_empty());
        t.record(0, q1, 5, written, Span::default(), "kernel");
        t.waited(0, q2, 9);
        assert!(!t.is_empty(), "q1's later work was not joined into q2");
        t.waited(0, q1, 5);
        assert!(t.is_empty());
    }
}
