//! The host reference backend: compute constructs run sequentially on the
//! host as one gang (`num_gangs(1)` semantics: the statements of a
//! `parallel` region run once, `loop`s run every iteration), against the
//! device copies of the present table ([`super::present`]). Reductions
//! start from the operator's identity and are combined into the outer
//! variable at the end (OpenACC 3.x 2.5.15); `private`/`firstprivate`
//! variables get their outer value back after the construct. Everything
//! runs in order at once, so `async` and `wait` only record what a device
//! would still be doing, for race checks. [`compute`] is also how any
//! backend runs a construct on the host (`if(false)`, a `loop` inside a
//! region).

use super::machine::{run_block, Backend, CConstruct, Ctx, HostBackend};
use super::present::EnvRef;
use super::queue::QueueId;
use super::race::{kernel_rows, Access, Mode};
use super::scalar::{bits_to_value, value_to_bits};
use super::value::{Flow, Frame, R};
use lang::value::{combine, identity};
use lang::Span;
use std::rc::Rc;
use stdlib::Array;

impl Backend for HostBackend {
    fn name(&self) -> &'static str {
        "host"
    }
    fn num_devices(&self) -> usize {
        1
    }
    fn env<'a>(&'a self, cx: &'a mut Ctx) -> EnvRef<'a> {
        EnvRef::Host(&mut cx.present)
    }
    fn begin(&self, cx: &mut Ctx, queue: QueueId, span: Span, names: &[(u64, Rc<str>)]) -> R<()> {
        let r = &mut cx.present.store.races;
        r.queue = queue;
        r.span = span;
        for (id, n) in names {
            r.names.insert(*id, n.clone());
        }
        if r.tracker.is_empty() && r.names.len() > 4096 {
            r.names.clear();
        }
        Ok(())
    }
    fn wait(
        &self,
        cx: &mut Ctx,
        queues: Option<&[i64]>,
        join: Option<QueueId>,
        _span: Span,
    ) -> R<()> {
        let dev = cx.device;
        cx.present.store.races.wait(dev, queues, join);
        Ok(())
    }
    fn host_access(
        &self,
        cx: &mut Ctx,
        a: &Array,
        (lo, hi): (usize, usize),
        write: bool,
        span: Span,
    ) -> R<bool> {
        let t = &cx.present.store.races.tracker;
        t.host_check(a.id(), lo, hi, write, span)?;
        Ok(!t.is_empty())
    }
    fn has_pending(&self, cx: &Ctx) -> bool {
        !cx.present.store.races.tracker.is_empty()
    }
    fn pending_on(&self, cx: &Ctx, a: &Array) -> bool {
        cx.present.store.races.tracker.pending_on(a.id())
    }
    fn launch(&self, c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
        let dev = cx.device;
        // The rows the kernel touches, checked against pending async work
        // and kept pending when it runs on an async queue, as a device does.
        let races = &cx.present.store.races;
        let touched = if races.queue != QueueId::Sync || !races.tracker.is_empty() {
            kernel_accesses(c, fr, cx)?
        } else {
            Vec::new()
        };
        cx.present.store.races.guard(dev, &touched, "kernel")?;
        // Rebind the kernel's arrays to their device copies.
        let mut saved = Vec::with_capacity(c.arrays.len());
        for &s in &c.arrays {
            if let Some(Some(a)) = fr.a.get(s) {
                if let Some(d) = cx.present.device_copy(dev, a) {
                    saved.push((s, fr.a[s].replace(d)));
                }
            }
        }
        let r = compute(c, fr, cx);
        for (s, a) in saved.into_iter().rev() {
            fr.a[s] = a;
        }
        if r.is_ok() {
            cx.present.store.races.record(dev, touched, "kernel");
        }
        r
    }
}

/// What a kernel on the host backend does to its arrays' device copies:
/// the same rows the Vulkan backend tracks (from the device code's leading
/// index offsets), or every row of every array it uses when the device
/// compiler refused the kernel.
fn kernel_accesses(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Vec<Access>> {
    let dev = cx.device;
    // The kernel's outer level: the construct's own loop, else (a region
    // run as a loop) the compiler's, as the Vulkan launch reads it.
    let level = match (c.loops.first(), c.device.as_deref()) {
        (Some(l), _) => Some((l.lo.get(fr, cx)? as i128, l.hi.get(fr, cx)? as i128)),
        (None, Some(code)) => match code.extra_levels.first() {
            Some((lo, hi)) => Some((lo.get(fr, cx)? as i128, hi.get(fr, cx)? as i128)),
            None => None,
        },
        (None, None) => None,
    };
    // Rows the construct's own data clauses name: its kernel touches no
    // other rows of those arrays (OpenACC: only what is present).
    let mut named = Vec::new();
    for d in &c.data {
        if !d.section.is_empty() {
            let a = super::data::array_of(fr, d.slot)?;
            let r = super::data::region(d, &a, fr, cx)?;
            named.push((d.slot, r.axis(0, a.shape())));
        }
    }
    let races = &cx.present.store.races;
    let access = |a: &Array, (lo, hi): (usize, usize), written: bool| Access {
        array: a.id(),
        name: races.name(a.id()),
        lo,
        hi,
        host: Mode::None,
        device: if written { Mode::Write } else { Mode::Read },
    };
    let bounds = |a: &Array| -> (usize, usize) {
        match cx.present.sections(dev, a).as_slice() {
            [one] => (one.bx.lo, one.bx.hi),
            _ => (0, a.shape().first().copied().unwrap_or(0)),
        }
    };
    let mut out = Vec::new();
    match c.device.as_deref().map(|d| (d, d.kernel.as_ref())) {
        Some((code, Ok(kernel))) => {
            for (i, (_, ap)) in kernel.arrays.iter().enumerate() {
                let Some(Some(a)) = fr.a.get(ap.host.index()) else {
                    continue;
                };
                let param = |p: u32| {
                    let sp = kernel.params.get(p as usize)?;
                    bits_to_value(sp.ty, *fr.s.get(sp.host.index())?).as_i128()
                };
                let mut section = bounds(a);
                if let Some(&(_, (lo, hi))) = named.iter().find(|(s, _)| *s == ap.host.index()) {
                    section = (section.0.max(lo), section.1.min(hi).max(section.0.max(lo)));
                }
                let rows = kernel_rows(
                    kernel,
                    code.rows.get(i).and_then(|o| o.as_deref()),
                    level,
                    kernel.levels.first().is_some_and(|l| l.inclusive),
                    &param,
                    section,
                );
                out.push(access(a, rows, ap.written));
            }
        }
        _ => {
            for &s in &c.arrays {
                if let Some(Some(a)) = fr.a.get(s) {
                    out.push(access(a, bounds(a), true));
                }
            }
        }
    }
    Ok(out)
}

/// Run the compute part (loops or region) with reductions and privates.
pub fn compute(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let outer: Vec<u64> = c.reductions.iter().map(|&(_, s, _)| fr.s[s]).collect();
    for &(op, s, t) in &c.reductions {
        fr.s[s] = value_to_bits(identity(op, t), t);
    }
    let saved: Vec<(usize, u64, Option<Array>)> = c
        .private
        .iter()
        .map(|&s| (s, fr.s[s], fr.a[s].clone()))
        .collect();
    let r = if c.loops.is_empty() {
        run_block(&c.body, fr, cx).map(|_| Flow::Next)
    } else {
        let mut bounds = Vec::with_capacity(c.loops.len());
        for l in &c.loops {
            let lo = l.lo.get(fr, cx)?;
            let hi = l.hi.get(fr, cx)?;
            let end = if l.inclusive {
                Some(hi)
            } else {
                hi.checked_sub(1)
            };
            bounds.push((lo, end));
        }
        super::gang::run_nest(c, &bounds, fr, cx)
    };
    for (s, b, a) in saved {
        fr.s[s] = b;
        fr.a[s] = a;
    }
    r?;
    for (&(op, s, t), o) in c.reductions.iter().zip(outer) {
        let v = combine(op, bits_to_value(t, o), bits_to_value(t, fr.s[s]));
        fr.s[s] = value_to_bits(v, t);
    }
    Ok(Flow::Next)
}
