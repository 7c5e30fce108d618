//! Device constructs: compiled once into a [`CConstruct`], run by the flow
//! every backend shares ([`run_construct`]: `if`, `async` and `wait`
//! clauses, data clauses, then the [`Backend`]'s launch), so the host
//! reference and a device give the same results and the same errors. On
//! the host reference everything runs in order at once, so `async` and
//! `wait` only evaluate their queue numbers; a device backend queues the
//! work ([`Backend::begin`], [`Backend::wait`]). `if(false)` runs a compute
//! construct on the host arrays themselves, with no data movement,
//! whatever the backend.

use super::data::{enter_implicit, enter_structured, exit_structured, standalone};
use super::deferred;
use super::error;
use super::host::compute;
use super::machine::{run_block, CConstruct, CData, CExpr, CLoop, Ctx, DeviceCode, Implicit, St};
use super::queue::QueueId;
use super::scalar::counter_bits;
use super::value::{Flow, Frame, R};
use super::Compiler;
use lang::hir::{self, ConstructBody, DirectiveKind as DK};
use lang::{Scalar, Span};
use std::rc::Rc;

/// Run a construct: the flow every backend shares.
pub fn run_construct(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let cond = match &c.if_ {
        Some(f) => f(fr, cx)?,
        None => true,
    };
    // With the host the current device, constructs run as `if(false)` does.
    let hostless = matches!(c.kind, DK::Wait | DK::Set | DK::Init | DK::Shutdown);
    let cond = cond && (hostless || !cx.on_host);
    for e in &c.misc {
        e.eval(fr, cx)?;
    }
    let queue = match &c.async_ {
        None => QueueId::Sync,
        Some(None) => QueueId::Async(cx.default_async),
        Some(Some(e)) => queue_number(e, fr, cx, c.span)?,
    };
    let waits = match &c.wait {
        None => None,
        Some(es) => {
            let mut v = Vec::with_capacity(es.len());
            for e in es {
                match queue_number(e, fr, cx, c.span)? {
                    QueueId::Async(n) => v.push(n),
                    QueueId::Sync => {}
                }
            }
            Some(v)
        }
    };
    let b = cx.backend.clone();
    // The `wait` statement, or a `wait` clause: on the host, or with
    // `async(q)` a device-side join into q.
    let other = match (&c.device_num, c.kind) {
        (Some(d), DK::Wait) if cond => {
            let n = d.eval_int(fr, cx)?;
            let devs = b.num_devices();
            match usize::try_from(n).ok().filter(|&d| d < devs) {
                Some(d) => (d != cx.device).then_some(d),
                None => return Err(error::bad_device(c.span, n, devs)),
            }
        }
        _ => None,
    };
    if let Some(d) = other {
        // `wait(devnum: d, q..)`, `async(p)` or not: two devices share no
        // timeline, so the host bridges them: it waits for those queues of
        // device d (their results land), and what the current device does
        // next, on any queue, comes after them.
        let qs = waits.unwrap_or_default();
        let which = (!qs.is_empty()).then_some(&qs[..]);
        let here = cx.device;
        cx.device = d;
        let r = b.wait(cx, which, None, c.span);
        if r.is_ok() {
            deferred::land(fr, cx, which);
        }
        cx.device = here;
        r?;
    } else if cond && (waits.is_some() || c.kind == DK::Wait) {
        let qs = waits.unwrap_or_default();
        let join = (queue != QueueId::Sync).then_some(queue);
        let which = (!qs.is_empty()).then_some(&qs[..]);
        b.wait(cx, which, join, c.span)?;
        if join.is_none() {
            deferred::land(fr, cx, which);
        }
    }
    let r = construct_on(c, cond, queue, fr, cx);
    // Later data operations (a whole-array `sum` of present data) are
    // synchronous. A `loop` runs here only inside a compute region on the
    // host, as part of it: the region's queue stays (for its data's exit).
    if c.kind != DK::Loop {
        b.begin(cx, QueueId::Sync, c.span, &[])?;
    }
    cx.async_pending = b.has_pending(cx);
    cx.set_held(b.holds_async_work());
    r
}

/// `host_data use_device(a, ..) { .. }`: the body runs with the device
/// copies of the arrays handed to the embedder's functions that take a
/// `DeviceBuffer`, the device idle (so their work comes after accl's). On
/// the host backend there are none, and such a call is an error.
fn host_data(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let b = cx.backend.clone();
    let mut bufs = Vec::with_capacity(c.use_device.len());
    if b.num_devices() > 0 && b.name() != "host" {
        for (slot, name) in &c.use_device {
            let a = fr.a[*slot].clone().ok_or_else(error::uninit)?;
            let dev = cx.device;
            let r = b.device_buffers(cx, dev, &a).and_then(|d| match d[..] {
                [d] => Ok(Some(d)),
                [] if c.if_present => Ok(None),
                [] => Err(format!("it is not present on device {dev}")),
                _ => Err(crate::interop::sections_error(dev, d.len())),
            });
            match r {
                Ok(Some(d)) => bufs.push((a.id(), d)),
                Ok(None) => {}
                Err(m) => {
                    return Err(Box::new(
                        lang::Diag::error(
                            "accl::device::host_data",
                            format!("`host_data` cannot hand over `{name}`: {m}"),
                            c.span,
                            "here",
                        )
                        .with_help(format!(
                            "make `{name}` present as one section first (`enter data copyin({name});` or an enclosing `data` region), or add `if_present`"
                        )),
                    ))
                }
            }
        }
    }
    crate::interop::with_use_device(bufs, || run_block(&c.body, fr, cx))
}

/// The value of `async(e)` or of a queue in `wait(e..)`.
fn queue_number(e: &CExpr, fr: &mut Frame, cx: &mut Ctx, span: Span) -> R<QueueId> {
    let n = e.eval_int(fr, cx)?;
    match n {
        -1 | -3 => Ok(QueueId::Async(cx.default_async)),
        -2 => Ok(QueueId::Sync),
        n if (0..=i64::MAX as i128).contains(&n) => Ok(QueueId::Async(n as i64)),
        n => Err(Box::new(
            lang::Diag::error(
                "accl::device::queue",
                format!("{n} is not an async queue number"),
                span,
                "in this construct",
            )
            .with_help("queues are numbered 0 and up (-1 is the queue of `async` alone)"),
        )),
    }
}

fn construct_on(
    c: &CConstruct,
    cond: bool,
    queue: QueueId,
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Flow> {
    let b = cx.backend.clone();
    let names: smallvec::SmallVec<[(u64, Rc<str>); 4]> =
        if queue != QueueId::Sync || cx.async_pending {
            c.data
                .iter()
                .map(|d| (d.slot, &d.name))
                .chain(c.implicit.iter().map(|i| (i.slot, &i.name)))
                .filter_map(|(s, n)| fr.a.get(s)?.as_ref().map(|a| (a.id(), n.clone())))
                .collect()
        } else {
            smallvec::SmallVec::new()
        };
    match c.kind {
        DK::Parallel | DK::ParallelLoop | DK::EnterData | DK::ExitData | DK::Update if cond => {
            b.begin(cx, queue, c.span, &names)?
        }
        // `data async(q)`: the entry comes after q's earlier work (the host
        // waits for it: an entry done at once is one allowed order of an
        // async one), so the kernels inside, on any queue, see its copies;
        // the exit goes on q.
        DK::Data | DK::Declare if cond => {
            if let QueueId::Async(q) = queue {
                b.wait(cx, Some(&[q]), None, c.span)?;
                deferred::land(fr, cx, Some(&[q]));
            }
            b.begin(cx, QueueId::Sync, c.span, &names)?
        }
        _ => {}
    }
    match c.kind {
        DK::Loop => compute(c, fr, cx),
        DK::Parallel | DK::ParallelLoop if !cond => compute(c, fr, cx),
        DK::Parallel | DK::ParallelLoop => kernel(c, fr, cx),
        DK::Data | DK::Declare | DK::HostData if !cond => run_block(&c.body, fr, cx),
        DK::HostData => host_data(c, fr, cx),
        // A `declare` is the `data` construct over the rest of its block.
        DK::Data | DK::Declare => {
            let mut undo = Vec::new();
            let r = enter_structured(c, fr, cx, &mut undo).and_then(|_| {
                let n = super::data::push_visible(cx, &undo);
                let r = run_block(&c.body, fr, cx);
                super::data::pop_visible(cx, n);
                r
            });
            // Constructs inside chose their own queues; the exit goes on
            // the region's (as `exit data async(q)` would).
            let e = b
                .begin(cx, queue, c.span, &names)
                .and_then(|_| exit_structured(cx, undo, r.is_ok(), c.span));
            let f = r?;
            e?;
            Ok(f)
        }
        _ if !cond => Ok(Flow::Next),
        DK::EnterData | DK::ExitData | DK::Update => standalone(c, fr, cx),
        DK::Wait => Ok(Flow::Next),
        // Devices open on first use and stay open (so `init` has nothing
        // left to do, whatever type it names); `shutdown` finishes the
        // current device's work when it is the device named, and leaves
        // its data present (OpenACC leaves data after it undefined).
        DK::Init => {
            if let Some(d) = &c.device_num {
                d.eval_int(fr, cx)?;
            }
            Ok(Flow::Next)
        }
        DK::Shutdown => {
            let num = match &c.device_num {
                Some(d) => Some(d.eval_int(fr, cx)?),
                None => None,
            };
            let b = cx.backend.clone();
            let of_type = |d: usize| match c.device_type {
                None | Some("any") => true,
                Some(t) => b.device_props(d).is_some_and(|p| p.kind == t),
            };
            let current = cx.device;
            let named = match num {
                // `device_num` counts among the devices of the type.
                Some(k) => {
                    (0..b.num_devices())
                        .filter(|&d| of_type(d))
                        .nth(usize::try_from(k).unwrap_or(usize::MAX))
                        == Some(current)
                }
                None => of_type(current),
            };
            if named {
                b.wait(cx, None, None, c.span)?;
                b.complete_sync(cx, None, Some(c.span))?;
            }
            Ok(Flow::Next)
        }
        DK::Set => {
            if let Some(q) = &c.default_async {
                let q = q.eval_int(fr, cx)?;
                cx.set_default_async(q, c.span)?;
            }
            let num = match &c.device_num {
                Some(d) => Some(d.eval_int(fr, cx)?),
                None => None,
            };
            match c.device_type {
                // `device_num` counts among the devices of that type.
                Some(t) => set_device_type(cx, t, num.unwrap_or(0), c.span)?,
                None => {
                    if let Some(v) = num {
                        cx.set_device(v, c.span)?;
                    }
                }
            }
            Ok(Flow::Next)
        }
    }
}

/// `set device_type(t) device_num(k)` and `acc_set_device_type(t)`: the
/// `k`-th device of type `t` becomes current. The host is always there:
/// the one device of its type where the backend's devices are others.
pub fn set_device_type(cx: &mut Ctx, t: &str, k: i128, span: Span) -> R<()> {
    let b = cx.backend.clone();
    let of_type: Vec<usize> = (0..b.num_devices())
        .filter(|&d| t == "any" || b.device_props(d).is_some_and(|p| p.kind == t))
        .collect();
    match usize::try_from(k).ok().and_then(|k| of_type.get(k)) {
        Some(&d) => {
            cx.set_device(d as i128, span)?;
            cx.on_host = false;
        }
        None if t == "host" && k == 0 => cx.on_host = true,
        None => return Err(error::no_device_of_type(span, t, k, &b.devices())),
    }
    Ok(())
}

/// A compute construct whose `if` held: data clauses, implicit copies, then
/// the backend's launch.
fn kernel(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let b = cx.backend.clone();
    let mut undo = Vec::new();
    b.copies_ahead(Some((c, fr)));
    let r =
        enter_structured(c, fr, cx, &mut undo).and_then(|_| enter_implicit(c, fr, cx, &mut undo));
    b.copies_ahead(None);
    if let Err(e) = r {
        let _ = exit_structured(cx, undo, false, c.span);
        return Err(e);
    }
    let r = b.launch(c, fr, cx);
    let e = exit_structured(cx, undo, r.is_ok(), c.span);
    let f = r?;
    e?;
    Ok(f)
}

impl Compiler<'_> {
    pub fn construct(&self, c: &hir::Construct) -> St {
        let cl = &c.clauses;
        let mut misc = Vec::new();
        for e in [cl.num_gangs, cl.num_workers, cl.vector_length]
            .into_iter()
            .flatten()
        {
            misc.push(self.expr(e));
        }
        let async_ = cl.async_.map(|a| match a {
            hir::AsyncQueue::Default => None,
            hir::AsyncQueue::Queue(q) => Some(self.expr(q)),
        });
        let wait = cl
            .wait
            .as_ref()
            .map(|qs| qs.iter().map(|&q| self.expr(q)).collect());
        let name = |l: hir::LocalH| Rc::<str>::from(self.body.locals[l].name.as_str());
        let data: Vec<CData> = cl
            .data
            .iter()
            .map(|d| CData {
                kind: d.kind,
                slot: d.var.index(),
                name: name(d.var),
                section: d
                    .section
                    .iter()
                    .map(|a| a.map(|(lo, n)| (self.ix(lo), self.ix(n))))
                    .collect(),
                span: d.span,
            })
            .collect();
        let kernel = matches!(c.kind, DK::Parallel | DK::ParallelLoop);
        let implicit = if kernel {
            c.captures
                .arrays
                .iter()
                .filter(|u| !cl.data.iter().any(|d| d.var == u.var))
                .map(|u| Implicit {
                    slot: u.var.index(),
                    name: name(u.var),
                    span: u.span,
                    // A constant array is never written: `copyin` suffices.
                    copyout: !self.body.locals[u.var].constant,
                    written: u.written,
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut arrays: Vec<usize> = c.captures.arrays.iter().map(|u| u.var.index()).collect();
        arrays.extend(data.iter().map(|d| d.slot));
        arrays.sort_unstable();
        arrays.dedup();
        let reductions = cl
            .reductions
            .iter()
            .map(|r| {
                (
                    r.op,
                    r.var.index(),
                    self.body.locals[r.var].ty.scalar().unwrap_or(Scalar::I32),
                )
            })
            .collect();
        let private = cl
            .private
            .iter()
            .chain(&cl.firstprivate)
            .map(|l| l.index())
            .collect();
        let (loops, body) = match &c.body {
            ConstructBody::None => (Vec::new(), Vec::new()),
            ConstructBody::Block(b) => (Vec::new(), self.block(b)),
            ConstructBody::Loops { loops, body } => (
                loops
                    .iter()
                    .map(|h| CLoop {
                        var: h.var.index(),
                        conv: counter_bits(
                            self.body.locals[h.var].ty.scalar().unwrap_or(Scalar::I32),
                        ),
                        lo: self.ix(h.lo),
                        hi: self.ix(h.hi),
                        inclusive: h.inclusive,
                        span: h.span,
                    })
                    .collect(),
                self.block(body),
            ),
        };
        let device = kernel.then(|| {
            let kernel = compiler::lower(self.prog, self.body, c, self.builtins);
            DeviceCode {
                fingerprint: std::cell::OnceCell::new(),
                rows: kernel
                    .as_ref()
                    .map(compiler::footprint::leading_rows)
                    .unwrap_or_default(),
                host_exprs: [cl.vector_length, cl.num_gangs]
                    .into_iter()
                    .flatten()
                    .map(|e| (e, self.expr(e)))
                    .collect(),
                total_hint: kernel.as_ref().ok().and_then(|k| {
                    k.levels.iter().try_fold(1u64, |n, l| {
                        let c = |e: hir::ExprH| match &self.body.exprs[e] {
                            hir::Expr::Const(v) => v.as_i128(),
                            _ => None,
                        };
                        let t = compiler::abi::trip_count(l, c(l.lo)?, c(l.hi)?);
                        Some(n.saturating_mul(t))
                    })
                }),
                // A region may run as a gang loop (`compiler::lower`): all
                // of its levels are the compiler's.
                extra_levels: match (&kernel, &c.body) {
                    (Ok(k), ConstructBody::Loops { loops, .. }) => k
                        .levels
                        .iter()
                        .skip(loops.len())
                        .map(|l| (self.ix(l.lo), self.ix(l.hi)))
                        .collect(),
                    (Ok(k), ConstructBody::Block(_)) => k
                        .levels
                        .iter()
                        .map(|l| (self.ix(l.lo), self.ix(l.hi)))
                        .collect(),
                    _ => Vec::new(),
                },
                variant: kernel
                    .as_ref()
                    .ok()
                    .and_then(|_| compiler::lower_variant(self.prog, self.body, c, self.builtins))
                    .map(|(k, test)| crate::interp::machine::Variant {
                        test,
                        rows: compiler::footprint::leading_rows(&k),
                        kernel: k,
                        fingerprint: std::cell::OnceCell::new(),
                    }),
                kernel,
            }
        });
        let device = device.map(Rc::new);
        let defer_reductions = device
            .as_ref()
            .and_then(|d| d.kernel.as_ref().ok())
            .is_none_or(|k| {
                k.reductions
                    .iter()
                    .all(|r| self.watched.contains(&r.host.index()))
            });
        if let Some(d) = &device {
            self.kernels.borrow_mut().push(d.clone());
        }
        let cc = CConstruct {
            kind: c.kind,
            id: c.id,
            span: c.span,
            if_: cl.if_.map(|e| self.ex::<bool>(e)),
            misc,
            async_,
            wait,
            device_num: cl.device_num.map(|e| self.expr(e)),
            device_type: cl.device_type,
            default_async: cl.default_async.map(|e| self.expr(e)),
            data,
            implicit,
            arrays: if kernel { arrays } else { Vec::new() },
            reductions,
            private,
            default_present: cl.default_present,
            finalize: cl.finalize,
            if_present: cl.if_present,
            use_device: cl
                .use_device
                .iter()
                .map(|l| (l.index(), Rc::from(self.body.locals[*l].name.as_str())))
                .collect(),
            loops,
            body,
            device,
            defer_reductions,
            gang: self.gang_code(c),
        };
        Box::new(move |fr, cx| run_construct(&cc, fr, cx))
    }
}
