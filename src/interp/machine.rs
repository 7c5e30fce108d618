//! The interpreter's machine: the context compiled code runs against
//! ([`Ctx`]), the compiled forms that take it (expression and statement
//! closures, functions, constructs) and the [`Backend`] trait that runs
//! constructs. They name each other (a context holds the compiled functions
//! and the backend; closures and backends take the context; a backend takes
//! compiled constructs), and Rust has no forward declarations, so their
//! types share this module. What they do lives in the layers above:
//! limits in `limits.rs`, the host backend in `host.rs`, the construct flow
//! in `construct.rs`.

use super::device::{host_memory, DeviceProps};
use super::error;
use super::present::{Env, EnvRef, PresentRow, PresentTable};
use super::queue::QueueId;
use super::value::{Flow, Frame, RtVal, Text, R};
use super::wait::{Progress, WaitLimits};
use lang::hir::{self, DataKind, DirectiveKind as DK};
use lang::{ast::ReductionOp, Scalar, Span, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};
use stdlib::Array;

/// A compiled expression producing a `T`.
pub type Ex<T> = Box<dyn Fn(&mut Frame, &mut Ctx) -> R<T>>;
/// A compiled statement.
pub type St = Box<dyn Fn(&mut Frame, &mut Ctx) -> R<Flow>>;

/// An array a kernel uses that no data clause names: copied in for the
/// launch if not present, and back out after it unless it is constant.
pub struct Implicit {
    pub slot: usize,
    pub name: Rc<str>,
    pub span: Span,
    pub copyout: bool,
    /// The kernel writes it (or passes it to a function): an array that
    /// no name of the kernel writes needs no copy back.
    pub written: bool,
}

/// A compiled expression, by result type.
pub enum CExpr {
    Bool(Ex<bool>),
    I32(Ex<i32>),
    I64(Ex<i64>),
    U32(Ex<u32>),
    U8(Ex<u8>),
    F32(Ex<f32>),
    F64(Ex<f64>),
    Arr(Ex<Array>),
    Unit(Ex<()>),
    Str(Ex<Text>),
    Type(Scalar),
    /// The bits of a tuple's elements (see tuple.rs).
    Tuple(Ex<Vec<u64>>),
}

impl CExpr {
    pub fn eval(&self, fr: &mut Frame, cx: &mut Ctx) -> R<RtVal> {
        Ok(match self {
            CExpr::Bool(f) => RtVal::Scalar(Value::Bool(f(fr, cx)?)),
            CExpr::I32(f) => RtVal::Scalar(Value::I32(f(fr, cx)?)),
            CExpr::I64(f) => RtVal::Scalar(Value::I64(f(fr, cx)?)),
            CExpr::U32(f) => RtVal::Scalar(Value::U32(f(fr, cx)?)),
            CExpr::U8(f) => RtVal::Scalar(Value::U8(f(fr, cx)?)),
            CExpr::F32(f) => RtVal::Scalar(Value::F32(f(fr, cx)?)),
            CExpr::F64(f) => RtVal::Scalar(Value::F64(f(fr, cx)?)),
            CExpr::Arr(f) => RtVal::Array(f(fr, cx)?),
            CExpr::Unit(f) => {
                f(fr, cx)?;
                RtVal::Unit
            }
            CExpr::Str(f) => RtVal::Str(f(fr, cx)?),
            CExpr::Type(t) => RtVal::Type(*t),
            // The checker lets a tuple only be returned or destructured.
            CExpr::Tuple(_) => {
                return Err(super::error::internal(
                    lang::Span::new(0, 0),
                    "a tuple used as one value",
                ))
            }
        })
    }
    /// Evaluate an integer expression as i128 (None: not an integer expression).
    pub fn eval_int(&self, fr: &mut Frame, cx: &mut Ctx) -> R<i128> {
        match self.eval(fr, cx)? {
            RtVal::Scalar(v) => Ok(v.as_i128().unwrap_or(0)),
            _ => Ok(0),
        }
    }
}

/// Run statements in order until one leaves the block.
#[inline]
pub fn run_block(b: &[St], fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    for s in b {
        let f = s(fr, cx)?;
        if f != Flow::Next {
            return Ok(f);
        }
    }
    Ok(Flow::Next)
}

/// Where an index comes from: a local integer (read inline) or any expression.
pub enum Ix {
    Local(usize, Scalar),
    Dyn(Ex<i64>),
}

impl Ix {
    #[inline(always)]
    pub fn get(&self, fr: &mut Frame, cx: &mut Ctx) -> R<i64> {
        match self {
            Ix::Local(s, t) => {
                let b = fr.s[*s];
                Ok(match t {
                    Scalar::I32 => b as u32 as i32 as i64,
                    Scalar::U32 => b as u32 as i64,
                    Scalar::U8 => b as u8 as i64,
                    _ => b as i64,
                })
            }
            Ix::Dyn(f) => f(fr, cx),
        }
    }
}

/// A data clause, compiled.
pub struct CData {
    pub kind: DataKind,
    pub slot: usize,
    /// Shared: every launch of the construct names it (race tracking).
    pub name: Rc<str>,
    /// Per written axis, `lo:count` or `:` (None); empty for the whole
    /// array ([`lang::hir::DataClause::section`]).
    pub section: Vec<Option<(Ix, Ix)>>,
    pub span: Span,
}

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
    pub default_async: Option<CExpr>,
    pub data: Vec<CData>,
    /// Arrays a kernel uses that no data clause names.
    pub implicit: Vec<Implicit>,
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
    /// The loop nest compiled for the host ([`super::gang`]), when the JIT
    /// took it.
    pub gang: Option<GangCode>,
}

/// A construct's loop nest compiled by the host JIT (`host_jit::gang`).
pub struct GangCode {
    /// Holds the machine code alive.
    pub jit: Rc<host_jit::JitProgram>,
    pub entry: host_jit::gang::GangEntry,
    /// As `host_jit::GangUnit::arrays`.
    pub arrays: Vec<(usize, Scalar, u8)>,
    /// The scalar slots it reads and writes.
    pub scalars: Vec<usize>,
    /// The top-level variables the functions it calls use.
    pub globals: Vec<usize>,
    /// Whether the gang loop's iterations may run on several threads.
    pub threads: bool,
    /// Else, the test that may find them apart as the construct starts.
    pub test: Option<host_jit::par::ParTest>,
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
    pub rows: Vec<Option<Vec<compiler::footprint::Lead>>>,
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
    /// The kernel run in parallel when a launch's values show the
    /// iterations of an `auto` loop independent ([`compiler::depend`]);
    /// `kernel` runs them in order otherwise.
    pub variant: Option<Variant>,
}

/// A `parallel loop auto`'s parallel kernel and the test that picks it.
pub struct Variant {
    pub test: compiler::depend::LaunchTest,
    pub kernel: compiler::Kernel,
    pub fingerprint: std::cell::OnceCell<u64>,
    pub rows: Vec<Option<Vec<compiler::footprint::Lead>>>,
}

/// A compiled user function.
pub struct CFn {
    pub name: String,
    pub body: Vec<St>,
}

/// A Rust function registered by the embedder.
pub type HostFn = Rc<dyn Fn(&[Value]) -> Result<Value, String>>;
/// An embedder's function on any values (arrays included).
pub type HostValFn = Rc<dyn Fn(&[RtVal]) -> Result<RtVal, String>>;

/// Where `print` output goes.
pub type Sink = Box<dyn FnMut(&str)>;

/// A non-blocking MPI message not waited for yet (`mpi_isend`,
/// `mpi_irecv`).
pub struct MpiRequest {
    pub pending: crate::mpi::Pending,
    /// The call that started it.
    pub span: Span,
    /// A receive: writes the bytes that arrived into its section.
    pub land: Option<Land>,
}

/// How a receive's bytes reach its section.
pub type Land = Box<dyn FnOnce(&mut Ctx, &[u8]) -> R<()>>;

/// The state a running program sees: limits, I/O, devices, the present table.
pub struct Ctx {
    pub fns: Rc<Vec<CFn>>,
    pub ops: u64,
    /// 0: unlimited.
    pub max_ops: u64,
    pub next_check: u64,
    /// Shared with the backend, which also calls it while it waits for
    /// the device ([`Ctx::wait_limits`]).
    pub progress: Option<Progress>,
    pub progress_every: u64,
    pub depth: usize,
    pub max_depth: usize,
    /// 0: only the host's own guard (`stdlib::array::MAX_BYTES`).
    pub max_array_bytes: usize,
    pub time_limit: Option<Duration>,
    /// When the running input must stop (from `time_limit`).
    pub deadline: Option<Instant>,
    pub out: Sink,
    /// Where `eprint`/`eprintln` go.
    pub err: Sink,
    /// File-system access: the directory relative paths resolve against, or
    /// None when access is off.
    pub fs: Option<PathBuf>,
    pub host_fns: HashMap<String, HostFn>,
    pub host_val_fns: HashMap<String, HostValFn>,
    pub backend: Rc<dyn Backend>,
    pub device: usize,
    /// `set device_type(host)` on a backend of devices: the host is the
    /// current device, and every construct runs as with `if(false)` (on
    /// the host arrays, moving nothing) until another type is set.
    pub on_host: bool,
    /// The queue `async` alone (and `async(-1)`, `wait(-1)`) names:
    /// `acc_set_default_async(q)` sets it, -1 is the initial one.
    pub default_async: i64,
    pub present: PresentTable,
    pub clock0: Instant,
    /// Async device work may be pending: host array accesses ask the
    /// backend whether they race with it ([`Ctx::host_access`]).
    pub async_pending: bool,
    /// Results of `async` reductions not yet waited for: each lands in its
    /// variable when the host waits for its queue.
    pub deferred: Vec<Deferred>,
    /// The top level's locals while a function that uses top-level
    /// variables runs (moved out of the top-level frame for the call).
    pub globals: Option<Frame>,
    /// Non-blocking MPI messages not waited for yet, by request number.
    pub mpi_requests: std::collections::BTreeMap<i32, MpiRequest>,
    pub next_request: i32,
    /// Without a launcher: messages this rank sent itself, not received
    /// yet (tag, shape, bytes), in order.
    pub mpi_self: std::collections::VecDeque<(i32, crate::mpi::Shape, Vec<u8>)>,
    /// Async work is held back behind running work: the limit check asks
    /// the backend to submit it once its queue is idle
    /// ([`Backend::submit_idle`]).
    pub held: bool,
    /// The text being run and where its pieces came from (for source
    /// lines in traces).
    pub(crate) source: Option<Rc<crate::engine::sources::SourceMap>>,
    /// The script's parameters (`accl run FILE -- a b`, `arg(i)`).
    pub args: Vec<Rc<str>>,
    /// Whether `getenv` may read the process environment.
    pub env_access: bool,
    /// The boxes the `data` regions and `declare`s being run made present
    /// (device, array id, box), innermost last: a kernel whose array is
    /// present as several sections binds the one the nearest of them names,
    /// as OpenACC's enclosing data region makes that data visible to it.
    pub visible: Vec<(usize, u64, super::region::Region)>,
}

/// Writes `s` to stdout. A reader that went away (`accl run x | head -1`,
/// `accl spirv x | head -1`) is not the program's fault: what is printed
/// then has nowhere to go, so the error is dropped rather than a panic.
pub fn write_stdout(s: &str) {
    use std::io::Write;
    let _ = std::io::stdout().write_all(s.as_bytes());
}

/// Writes `s` to stderr, dropping a write error as [`write_stdout`] does
/// (`accl check bad.accl 2>&1 | head -1`): a diagnostic that cannot be
/// shown is no reason to panic.
pub fn write_stderr(s: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(s.as_bytes());
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx {
            fns: Rc::new(Vec::new()),
            ops: 0,
            max_ops: 0,
            next_check: u64::MAX,
            progress: None,
            progress_every: 1 << 20,
            depth: 0,
            max_depth: 128,
            max_array_bytes: 0,
            time_limit: None,
            deadline: None,
            out: Box::new(write_stdout),
            err: Box::new(write_stderr),
            fs: None,
            host_fns: HashMap::new(),
            host_val_fns: HashMap::new(),
            backend: Rc::new(HostBackend),
            device: 0,
            on_host: false,
            present: PresentTable::default(),
            clock0: Instant::now(),
            async_pending: false,
            default_async: -1,
            deferred: Vec::new(),
            globals: None,
            mpi_requests: std::collections::BTreeMap::new(),
            next_request: 0,
            mpi_self: std::collections::VecDeque::new(),
            held: false,
            source: None,
            args: Vec::new(),
            env_access: false,
            visible: Vec::new(),
        }
    }
}

/// The result of a reduction not yet read: an `async` one, pending until
/// the host waits for its queue (OpenACC: the reduction variable is
/// defined after the wait), or a synchronous one whose kernel completes
/// lazily, read when the host first reads the variable.
pub struct Deferred {
    pub dev: usize,
    /// The queue of the construct.
    pub queue: QueueId,
    /// Call depth of the frame that owns the variable.
    pub depth: usize,
    pub slot: usize,
    pub op: ReductionOp,
    /// The value replaces the variable's (a `kernels` scalar's copy-back).
    pub copy: bool,
    pub ty: Scalar,
    pub name: Rc<str>,
    /// The construct.
    pub span: Span,
    /// Reads the reduced value once the queue's work is done.
    pub value: Box<dyn FnOnce() -> lang::Value>,
}

impl Ctx {
    /// Where `span` is, for a trace: `line 3` of the input being run
    /// (`line 2 of <input 1>` in a declaration of an earlier input).
    pub fn line_of(&self, span: Span) -> String {
        match &self.source {
            Some(s) => s.line(span),
            None => "line ?".to_string(),
        }
    }

    /// May compiled code, which checks no access, run on `arrays` now?
    /// Yes when no async work is pending, or when none that is pending
    /// touches them and no scalar waits for a pending result.
    pub fn unraced(&self, arrays: &[stdlib::Array]) -> bool {
        !self.async_pending
            || (self.deferred.is_empty()
                && !arrays.iter().any(|a| self.backend.pending_on(self, a)))
    }

    /// The host reads (`write` false) or writes element `off` of `a` at
    /// `span`; with `off` None, the whole array. An error when pending
    /// async work races with it.
    #[inline]
    pub fn host_access(
        &mut self,
        a: &stdlib::Array,
        off: Option<usize>,
        write: bool,
        span: Span,
    ) -> R<()> {
        if !self.async_pending {
            return Ok(());
        }
        let (lo, hi) = match off {
            Some(o) => {
                let r = o / a.row_len().max(1);
                (r, r + 1)
            }
            None => (0, a.shape().first().copied().unwrap_or(0)),
        };
        self.host_access_rows(a, (lo, hi), write, span)
    }

    /// [`Self::host_access`] of the rows `[lo, hi)` of `a`.
    pub fn host_access_rows(
        &mut self,
        a: &stdlib::Array,
        rows: (usize, usize),
        write: bool,
        span: Span,
    ) -> R<()> {
        if !self.async_pending {
            return Ok(());
        }
        let b = self.backend.clone();
        self.async_pending = b.host_access(self, a, rows, write, span)?;
        Ok(())
    }

    /// A script path, resolved, if file access is on.
    pub fn path(&self, builtin: &str, p: &str, span: Span) -> R<PathBuf> {
        match &self.fs {
            None => Err(error::fs_disabled(span, builtin)),
            Some(base) => Ok(base.join(Path::new(p))),
        }
    }

    /// `acc_set_default_async(q)`, `set default_async(q)`: the queue of
    /// `async` alone from now on (-1: its own queue again).
    pub fn set_default_async(&mut self, q: i128, span: Span) -> R<()> {
        // `acc_async_default` (-3) names the default queue: back to -1.
        let q = if q == -3 { -1 } else { q };
        if !(-1..=i64::MAX as i128).contains(&q) {
            return Err(Box::new(
                lang::Diag::error(
                    "accl::device::queue",
                    format!("{q} is not an async queue number"),
                    span,
                    "the new default queue",
                )
                .with_help(
                    "queues are numbered 0 and up; -1 makes `async` alone name its own queue again",
                ),
            ));
        }
        self.default_async = q as i64;
        Ok(())
    }

    pub fn set_device(&mut self, d: i128, span: Span) -> R<()> {
        let n = self.backend.num_devices();
        if d < 0 || d >= n as i128 {
            return Err(error::bad_device(span, d, n));
        }
        self.device = d as usize;
        Ok(())
    }
}

/// Where constructs run. The host implementation is the reference; a device
/// backend keeps its own present table and runs kernels elsewhere, but the
/// construct flow (data clauses, reference counts, errors) is shared
/// ([`super::construct::run_construct`]), so both give the same results and
/// the same errors.
pub trait Backend {
    fn name(&self) -> &'static str;
    /// A program's device code, before it runs: a backend may start
    /// compiling it for the current device ahead of the first launches.
    fn prefetch(&self, _kernels: &[Rc<DeviceCode>], _cx: &Ctx) {}
    /// A program with constructs or device builtins for the current device
    /// is about to be compiled: a backend may start opening that device.
    /// `one_queue`: the program is all the device will run, and it uses no
    /// async queue.
    fn will_use(&self, _cx: &Ctx, _one_queue: bool) {}
    fn num_devices(&self) -> usize;
    /// The present table of every device.
    fn env<'a>(&'a self, cx: &'a mut Ctx) -> EnvRef<'a>;
    /// Run the compute part of a `parallel`/`parallel loop` whose data
    /// clauses have been entered, on the current device.
    fn launch(&self, c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow>;
    /// The limits device waits honour from now on (set when an input
    /// starts running and at each construct; cleared when it ends).
    fn set_wait_limits(&self, limits: WaitLimits) {
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
            free_memory: super::device::host_available(),
        })
    }
    /// The Vulkan handles of device `dev` (opened if it is not yet), for
    /// a host program's own Vulkan code.
    fn vulkan_device(&self, dev: usize) -> Result<crate::interop::VulkanDevice, String> {
        let _ = dev;
        Err(format!("the {} backend has no Vulkan device", self.name()))
    }
    /// The device copies of `a` on device `dev`, one per present section
    /// in row order (none: not present), once every queue of the device is
    /// idle (so the host program's own work comes after accl's).
    fn device_buffers(
        &self,
        cx: &mut Ctx,
        dev: usize,
        a: &stdlib::Array,
    ) -> Result<Vec<crate::interop::DeviceBuffer>, String> {
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
    /// Wait for every queue of every device: the work an input stopped by
    /// a limit left running ([`crate::Engine::finish_device_work`]). A
    /// fault of that work is the error.
    fn finish_all(&self, cx: &mut Ctx) -> R<()> {
        let _ = cx;
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
    /// Compute construct `c` is about to enter its data clauses (`Some`),
    /// or has (`None`): the `create`s of its hidden arrays of private
    /// copies may leave their storage uncleared until a launch reads it,
    /// or make no storage at all where every lane keeps its copy.
    fn copies_ahead(&self, c: Option<(&CConstruct, &Frame)>) {
        let _ = c;
    }
    /// Could pending async work race with a host access of any row of
    /// `a`? Compiled code checks no access, so it runs while work is
    /// pending only on arrays no pending work touches; `true` when the
    /// backend cannot tell at once.
    fn pending_on(&self, cx: &Ctx, a: &Array) -> bool {
        let _ = a;
        self.has_pending(cx)
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

/// Runs everything on the host, with one simulated device. Declared here
/// because a new context starts on it; its [`Backend`] impl (`host.rs`)
/// runs constructs, which sit above this module.
pub struct HostBackend;
