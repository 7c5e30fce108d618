//! Device constructs: compiled once into a [`CConstruct`], executed by a
//! [`Backend`]. [`HostBackend`] is the reference: compute constructs run
//! sequentially on the host as one gang (`num_gangs(1)` semantics: the
//! statements of a `parallel` region run once, `loop`s run every
//! iteration), against the device copies of the present table
//! ([`super::present`]). Reductions start from the operator's identity and
//! are combined into the outer variable at the end (OpenACC 3.x 2.5.15);
//! `private`/`firstprivate` variables get their outer value back after the
//! construct. On the host reference everything runs in order at once, so
//! `async` and `wait` only evaluate their queue numbers; a device backend
//! queues the work ([`Backend::begin`], [`Backend::wait`]). `if(false)` runs a
//! compute construct on the host arrays themselves, with no data movement,
//! whatever the backend.

pub use super::data::CData;
use super::data::{enter_implicit, enter_structured, exit_structured, standalone};
use super::expr::Ix;
pub use super::present::PresentRow;
use super::present::{Env, PresentTable};
pub use super::queue::QueueId;
use super::stmt::{counter_bits, run_block};
use super::value::{bits_to_value, value_to_bits, CExpr, Ex, Flow, Frame, St, R};
use super::{Compiler, Ctx};
use lang::hir::{self, ConstructBody, DirectiveKind as DK};
use lang::value::{combine, identity};
use lang::{ast::ReductionOp, Scalar, Span};
use std::rc::Rc;
use stdlib::Array;

pub struct CLoop {
    pub var: usize,
    pub conv: fn(i64) -> u64,
    pub lo: Ix,
    pub hi: Ix,
    pub inclusive: bool,
    pub span: Span,
}

/// A construct ready to run.
pub struct CConstruct {
    pub kind: DK,
    pub id: u32,
    pub span: Span,
    pub if_: Option<Ex<bool>>,
    /// Clause expressions evaluated for their effects only on the host
    /// (`num_gangs`, ...).
    pub misc: Vec<CExpr>,
    /// `async` (`Some(None)`) or `async(e)`.
    pub async_: Option<Option<CExpr>>,
    /// `wait` (empty) or `wait(e..)`: the clause, or the `wait` statement.
    pub wait: Option<Vec<CExpr>>,
    pub device_num: Option<CExpr>,
    pub device_type: Option<&'static str>,
    pub data: Vec<CData>,
    /// Arrays a kernel uses that no data clause names: `(slot, name, span)`.
    pub implicit: Vec<(usize, String, Span)>,
    /// Array slots a kernel uses (rebound to the device copies).
    pub arrays: Vec<usize>,
    pub reductions: Vec<(ReductionOp, usize, Scalar)>,
    pub private: Vec<usize>,
    pub default_present: bool,
    pub finalize: bool,
    pub if_present: bool,
    /// `use_device(..)` of `host_data`: array slots and names.
    pub use_device: Vec<(usize, Rc<str>)>,
    pub loops: Vec<CLoop>,
    pub body: Vec<St>,
    /// The kernel of a `parallel`/`parallel loop`, lowered when the program
    /// was compiled (an error if the device compiler refuses it; the host
    /// backend never looks).
    pub device: Option<Rc<DeviceCode>>,
    /// Every variable the kernel reduces into is one whose host reads and
    /// writes look for pending results ([`super::deferred::deferred_access`]), so a
    /// synchronous launch may leave its results to land later.
    pub defer_reductions: bool,
}

/// What a device backend needs to launch a compute construct.
pub struct DeviceCode {
    /// The key of its compiled modules and pipelines: the kernel's
    /// fingerprint ([`compiler::Kernel::fingerprint`]), so the same
    /// construct compiled again finds them. Taken at the first launch (the
    /// host backend never needs it).
    pub fingerprint: std::cell::OnceCell<u64>,
    pub kernel: Result<compiler::Kernel, lang::Diag>,
    /// Per array of the kernel, the offsets of its leading index from the
    /// outer loop variable ([`compiler::footprint`]), for race detection.
    pub rows: Vec<Option<(i64, i64)>>,
    /// Host expressions the launch evaluates (`vector_length(e)`,
    /// `num_gangs(e)`), by their HIR handle.
    pub host_exprs: Vec<(hir::ExprH, CExpr)>,
    /// Bounds of the kernel's levels beyond the construct's own loops (inner
    /// loops collapsed automatically, [`compiler::collapse`]).
    pub extra_levels: Vec<(Ix, Ix)>,
    /// The iteration count when every level's bounds are constants, so a
    /// backend compiling ahead of the launch can pick the work-group size
    /// the launch will.
    pub total_hint: Option<u64>,
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

/// Where constructs run. The host implementation is the reference; a device
/// backend keeps its own present table and runs kernels elsewhere, but the
/// construct flow (data clauses, reference counts, errors) is shared
/// ([`run_construct`]), so both give the same results and the same errors.
pub trait Backend {
    fn name(&self) -> &'static str;
    /// A program's device code, before it runs: a backend may start
    /// compiling it for the current device ahead of the first launches.
    fn prefetch(&self, _kernels: &[Rc<DeviceCode>], _cx: &Ctx) {}
    fn num_devices(&self) -> usize;
    /// The present table of every device.
    fn env<'a>(&'a self, cx: &'a mut Ctx) -> EnvRef<'a>;
    /// Run the compute part of a `parallel`/`parallel loop` whose data
    /// clauses have been entered, on the current device.
    fn launch(&self, c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow>;
    /// The limits device waits honour from now on (set when an input
    /// starts running and at each construct; cleared when it ends).
    fn set_wait_limits(&self, limits: super::WaitLimits) {
        let _ = limits;
    }
    /// Cap the device memory accl's arrays may use, per device (None: the
    /// device's heap).
    fn set_device_memory_limit(&self, bytes: Option<u64>) {
        let _ = bytes;
    }
    /// Bounds-check mode for kernels compiled from now on.
    fn set_checks(&self, on: bool) {
        let _ = on;
    }
    /// The loop back-edges one kernel invocation may take (0: no watchdog).
    fn set_loop_budget(&self, n: u32) {
        let _ = n;
    }
    /// Treat the device feature `name` (Vulkan's spelling) as missing
    /// from now on: a testing aid for scripts meant for smaller devices.
    fn disable_feature(&self, name: &str) -> Result<(), String> {
        Err(format!(
            "the {} backend has no device features to turn off (`{name}`)",
            self.name()
        ))
    }
    /// One line per device: its number, name and kind.
    fn devices(&self) -> Vec<String> {
        vec!["0: host reference (a simulated discrete device)".into()]
    }
    /// What `acc_get_property` and `acc_get_device_type` report of device
    /// `dev` (None: no such device).
    fn device_props(&self, dev: usize) -> Option<DeviceProps> {
        (dev == 0).then(|| DeviceProps {
            name: "host reference".into(),
            vendor: "accl".into(),
            driver: format!("accl {}", env!("CARGO_PKG_VERSION")),
            kind: "host",
            memory: host_memory(),
        })
    }
    /// The Vulkan handles of device `dev` (opened if it is not yet), for
    /// a host program's own Vulkan code.
    fn vulkan_device(&self, dev: usize) -> Result<crate::interop::VulkanDevice, String> {
        let _ = dev;
        Err(format!("the {} backend has no Vulkan device", self.name()))
    }
    /// The device copy of `a` on device `dev` (None: not present), once
    /// every queue of the device is idle (so the host program's own work
    /// comes after accl's).
    fn device_buffer(
        &self,
        cx: &mut Ctx,
        dev: usize,
        a: &stdlib::Array,
    ) -> Result<Option<crate::interop::DeviceBuffer>, String> {
        let _ = (cx, dev, a);
        Err(format!("the {} backend has no device memory", self.name()))
    }
    /// Make all of `a` present on device `dev` in the embedder's `buffer`
    /// (`size` bytes), with a dynamic reference count of 1.
    ///
    /// # Safety
    /// As `vk_runtime::Buffer::from_external`.
    unsafe fn map_external(
        &self,
        dev: usize,
        a: &stdlib::Array,
        buffer: ash::vk::Buffer,
        size: u64,
    ) -> Result<(), String> {
        let _ = (dev, a, buffer, size);
        Err(format!("the {} backend has no device memory", self.name()))
    }
    /// Every present section of every device.
    fn present_rows(&self, cx: &Ctx) -> Vec<PresentRow> {
        cx.present.rows()
    }
    /// The SPIR-V disassembly of the last kernel compiled, if any.
    fn last_spirv(&self) -> Option<String> {
        None
    }
    /// Work queued and not finished, one line per queue.
    fn pending(&self) -> Vec<String> {
        Vec::new()
    }
    /// Time spent generating SPIR-V and creating pipelines since the last call.
    fn take_jit_time(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Turn device timestamps of every operation on or off.
    fn set_profiling(&self, on: bool) -> Result<(), String> {
        let _ = on;
        Err(format!(
            "the {} backend has no device timestamps",
            self.name()
        ))
    }
    /// Device times of finished operations since the last call:
    /// `(label, nanoseconds)`; kernels are labelled `kernel_<n>`.
    fn take_timings(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// Messages of the Vulkan validation layer since the last call (empty
    /// unless validation is on).
    fn validation_messages(&self) -> Vec<String> {
        Vec::new()
    }
    /// Per open device: bytes of device memory allocated now, and bytes of
    /// the memory blocks held (empty on the host backend).
    fn device_memory_in_use(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }
    /// Free device copies no variable can reach any more
    /// ([`super::present::Table::release_unreachable`]); the host backend's
    /// table is the context's. Returns how many stay because pending work
    /// may use them.
    fn release_unreachable(&self, cx: &mut Ctx) -> usize {
        cx.present.release_unreachable()
    }
    /// The data operations and launch that follow, up to the next call,
    /// go on `queue` of the current device; `span` is their construct;
    /// `names` names the arrays of its clauses (array id, variable) when
    /// async work is involved (for race diagnostics).
    fn begin(&self, cx: &mut Ctx, queue: QueueId, span: Span, names: &[(u64, Rc<str>)]) -> R<()> {
        let _ = (cx, queue, span, names);
        Ok(())
    }
    /// Has every operation of `queues` (None: every queue of the current
    /// device) finished? If so, the same as `wait(queues)` (results land
    /// in host arrays) and `true`; otherwise `false`, without waiting.
    fn async_test(&self, cx: &mut Ctx, queues: Option<&[i64]>, span: Span) -> R<bool> {
        self.wait(cx, queues, None, span)?;
        Ok(true)
    }
    /// `wait(queues)` (None: every queue of the current device). With
    /// `join` (`wait(..) async(q)`), queue `join` waits on the device
    /// instead of the host.
    fn wait(
        &self,
        cx: &mut Ctx,
        queues: Option<&[i64]>,
        join: Option<QueueId>,
        span: Span,
    ) -> R<()> {
        let _ = (cx, queues, join, span);
        Ok(())
    }
    /// Wait for the synchronous kernels that complete lazily, on device
    /// `dev` (None: every device): the host is about to see their effects
    /// (`clock()`, a reduction's value, the end of an input). `span`: where
    /// (None: the last such kernel's construct).
    fn complete_sync(&self, cx: &mut Ctx, dev: Option<usize>, span: Option<Span>) -> R<()> {
        let _ = (cx, dev, span);
        Ok(())
    }
    /// The host is about to read (or write) rows `lo..hi` of `a` at `span`:
    /// an error if pending async work races with it. `Ok(false)` when no
    /// async work is pending any more (the interpreter stops asking).
    fn host_access(
        &self,
        cx: &mut Ctx,
        a: &Array,
        (lo, hi): (usize, usize),
        write: bool,
        span: Span,
    ) -> R<bool> {
        let _ = (cx, a, lo, hi, write, span);
        Ok(false)
    }
    /// Is any async work not yet observed complete?
    fn has_pending(&self, cx: &Ctx) -> bool {
        let _ = cx;
        false
    }
    /// Submit async work held back behind running work on queues that are
    /// now idle; whether some is still held back. The interpreter asks
    /// every few thousand operations while it is.
    fn submit_idle(&self) -> bool {
        false
    }
    /// Whether async work is recorded and not submitted (cheap: no driver
    /// call).
    fn holds_async_work(&self) -> bool {
        false
    }
    /// Start recording a timeline trace.
    fn start_trace(&self) -> Result<(), String> {
        Err(format!(
            "the {} backend has no device timeline to trace",
            self.name()
        ))
    }
    /// Stop recording and return the trace (Chrome trace-event JSON).
    fn stop_trace(&self) -> Result<String, String> {
        Err("no trace is being recorded".into())
    }
    /// Stop recording without waiting: the trace of the work finished so
    /// far (device work started before the trace is left out).
    fn take_trace(&self) -> Result<String, String> {
        self.stop_trace()
    }
}

/// A borrowed present table.
pub enum EnvRef<'a> {
    Host(&'a mut PresentTable),
    Shared(std::cell::RefMut<'a, dyn Env + 'static>),
}

impl std::ops::Deref for EnvRef<'_> {
    type Target = dyn Env + 'static;
    fn deref(&self) -> &(dyn Env + 'static) {
        match self {
            EnvRef::Host(t) => &**t,
            EnvRef::Shared(t) => &**t,
        }
    }
}

impl std::ops::DerefMut for EnvRef<'_> {
    fn deref_mut(&mut self) -> &mut (dyn Env + 'static) {
        match self {
            EnvRef::Host(t) => &mut **t,
            EnvRef::Shared(t) => &mut **t,
        }
    }
}

/// A device as `acc_get_property` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProps {
    pub name: String,
    pub vendor: String,
    pub driver: String,
    /// `acc_get_device_type()`: `"gpu"`, `"cpu"` (a CPU Vulkan driver such
    /// as lavapipe), `"host"` (the host reference) or `"other"`.
    pub kind: &'static str,
    /// Bytes of device memory (device-local heaps; the host's RAM for the
    /// host reference, 0 when unknown).
    pub memory: u64,
}

/// Total RAM from `/proc/meminfo` (0 where there is none).
fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}

/// Runs everything on the host, with one simulated device.
pub struct HostBackend;

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
fn kernel_accesses(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Vec<super::race::Access>> {
    use super::race::{kernel_rows, Access, Mode};
    let dev = cx.device;
    let level = match c.loops.first() {
        Some(l) => Some((l.lo.get(fr, cx)? as i128, l.hi.get(fr, cx)? as i128)),
        None => None,
    };
    let inclusive = c.loops.first().is_some_and(|l| l.inclusive);
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
                let rows = kernel_rows(
                    code.rows.get(i).copied().flatten(),
                    level,
                    inclusive,
                    bounds(a),
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
fn compute(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
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
        nest(c, &bounds, 0, fr, cx)
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

fn nest(
    c: &CConstruct,
    b: &[(i64, Option<i64>)],
    level: usize,
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Flow> {
    let l = &c.loops[level];
    let (lo, Some(end)) = b[level] else {
        return Ok(Flow::Next);
    };
    if lo > end {
        return Ok(Flow::Next);
    }
    let mut i = lo;
    loop {
        fr.s[l.var] = (l.conv)(i);
        if level + 1 == c.loops.len() {
            cx.tick(l.span)?;
            if run_block(&c.body, fr, cx)? == Flow::Break {
                break;
            }
        } else {
            nest(c, b, level + 1, fr, cx)?;
        }
        if i == end {
            break;
        }
        i += 1;
    }
    Ok(Flow::Next)
}

/// Run a construct: the flow every backend shares.
pub fn run_construct(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let cond = match &c.if_ {
        Some(f) => f(fr, cx)?,
        None => true,
    };
    for e in &c.misc {
        e.eval(fr, cx)?;
    }
    let queue = match &c.async_ {
        None => QueueId::Sync,
        Some(None) => QueueId::DEFAULT_ASYNC,
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
                None => return Err(super::error::bad_device(c.span, n, devs)),
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
            super::deferred::land(fr, cx, which);
        }
        cx.device = here;
        r?;
    } else if cond && (waits.is_some() || c.kind == DK::Wait) {
        let qs = waits.unwrap_or_default();
        let join = (queue != QueueId::Sync).then_some(queue);
        let which = (!qs.is_empty()).then_some(&qs[..]);
        b.wait(cx, which, join, c.span)?;
        if join.is_none() {
            super::deferred::land(fr, cx, which);
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
            let a = fr.a[*slot].clone().ok_or_else(super::error::uninit)?;
            let dev = cx.device;
            let r = b.device_buffer(cx, dev, &a).and_then(|d| match d {
                Some(d) => Ok(Some(d)),
                None if c.if_present => Ok(None),
                None => Err(format!("it is not present on device {dev}")),
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
        -1 => Ok(QueueId::DEFAULT_ASYNC),
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
    let names: Vec<(u64, Rc<str>)> = if queue != QueueId::Sync || cx.async_pending {
        c.data
            .iter()
            .map(|d| (d.slot, &d.name))
            .chain(c.implicit.iter().map(|(s, n, _)| (*s, n)))
            .filter_map(|(s, n)| {
                fr.a.get(s)?
                    .as_ref()
                    .map(|a| (a.id(), Rc::from(n.as_str())))
            })
            .collect()
    } else {
        Vec::new()
    };
    match c.kind {
        DK::Parallel | DK::ParallelLoop | DK::EnterData | DK::ExitData | DK::Update if cond => {
            b.begin(cx, queue, c.span, &names)?
        }
        DK::Data if cond => b.begin(cx, QueueId::Sync, c.span, &names)?,
        _ => {}
    }
    match c.kind {
        DK::Loop => compute(c, fr, cx),
        DK::Parallel | DK::ParallelLoop if !cond => compute(c, fr, cx),
        DK::Parallel | DK::ParallelLoop => kernel(c, fr, cx),
        DK::Data | DK::HostData if !cond => run_block(&c.body, fr, cx),
        DK::HostData => host_data(c, fr, cx),
        DK::Data => {
            let mut undo = Vec::new();
            let r = enter_structured(c, fr, cx, &mut undo).and_then(|_| run_block(&c.body, fr, cx));
            // Constructs inside chose their own queues.
            let e = b
                .begin(cx, QueueId::Sync, c.span, &names)
                .and_then(|_| exit_structured(cx, undo, r.is_ok(), c.span));
            let f = r?;
            e?;
            Ok(f)
        }
        _ if !cond => Ok(Flow::Next),
        DK::EnterData | DK::ExitData | DK::Update => standalone(c, fr, cx),
        DK::Wait => Ok(Flow::Next),
        DK::Set => {
            let num = match &c.device_num {
                Some(d) => Some(d.eval_int(fr, cx)?),
                None => None,
            };
            match c.device_type {
                // `device_num` counts among the devices of that type.
                Some(t) => {
                    let b = cx.backend.clone();
                    let of_type: Vec<usize> = (0..b.num_devices())
                        .filter(|&d| t == "any" || b.device_props(d).is_some_and(|p| p.kind == t))
                        .collect();
                    let k = num.unwrap_or(0);
                    match usize::try_from(k).ok().and_then(|k| of_type.get(k)) {
                        Some(&d) => cx.set_device(d as i128, c.span)?,
                        None => {
                            return Err(super::error::no_device_of_type(c.span, t, k, &b.devices()))
                        }
                    }
                }
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

/// A compute construct whose `if` held: data clauses, implicit copies, then
/// the backend's launch.
fn kernel(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let b = cx.backend.clone();
    let mut undo = Vec::new();
    let r =
        enter_structured(c, fr, cx, &mut undo).and_then(|_| enter_implicit(c, fr, cx, &mut undo));
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
        let name = |l: hir::LocalH| self.body.locals[l].name.clone();
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
                .map(|u| (u.var.index(), name(u.var), u.span))
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
                    .map(compiler::footprint::leading_offsets)
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
        };
        Box::new(move |fr, cx| run_construct(&cc, fr, cx))
    }
}
