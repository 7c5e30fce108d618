//! The interpreter of host code.
//!
//! A checked [`hir::Program`] is compiled once into a tree of closures
//! specialised by type ([`value::Ex`]: `Fn(&mut Frame, &mut Ctx) -> R<T>` for
//! each Rust scalar type `T`), then run. Locals are slots of a flat frame
//! (scalars as 64-bit patterns, arrays as shared handles), so the closures
//! neither look up names nor match on dynamic values; see [`expr`] for the
//! specialisations that make the hot loops fast. Closures were chosen over a
//! register bytecode because they let rustc inline each operator into its
//! node and keep the interpreter one small pass over the HIR.
//!
//! Modules, one per concept, bottom up: [`region`] (the boxes of a
//! section), [`queue`] (which queue work goes to), [`wait`] (what stops a
//! device wait), [`race`] (host accesses against pending device work) and
//! [`present`] (the present table), which import nothing above them;
//! then [`value`] (frames, the scalar trait), [`error`], [`data`] (data
//! clauses), [`deferred`] (async results), [`expr`], [`stmt`], [`builtin`]
//! (and [`mpi`], the `mpi_*` builtins) and [`construct`] (device
//! constructs and the [`Backend`] trait). The second group still shares
//! one circle through [`Ctx`], which holds the compiled closures that take
//! it (see `scripts/imports.py`).

pub mod builtin;
pub mod construct;
pub mod data;
pub mod deferred;
pub mod error;
pub mod expr;
pub mod mpi;
pub mod present;
pub mod queue;
pub mod race;
pub mod region;
pub mod stmt;
pub mod value;
pub mod wait;

pub use construct::{Backend, HostBackend, PresentRow};
pub use value::{Flow, Frame, RtVal, R};
pub use wait::{Progress, WaitLimits, WaitStop};

use lang::{hir, Builtins, Diag, Span, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};
use value::{CExpr, St};

/// A Rust function registered by the embedder.
pub type HostFn = Rc<dyn Fn(&[Value]) -> Result<Value, String>>;
/// An embedder's function on any values (arrays included).
pub type HostValFn = Rc<dyn Fn(&[RtVal]) -> Result<RtVal, String>>;

/// Compiles the bodies of one program.
pub struct Compiler<'a> {
    pub prog: &'a hir::Program,
    pub body: &'a hir::Body,
    pub builtins: &'a Builtins,
    /// The device code of every compute construct compiled so far.
    pub kernels: &'a RefCell<Vec<Rc<construct::DeviceCode>>>,
    /// Locals that a `parallel` construct of this body reduces into: host
    /// reads and writes of them first look for a pending result
    /// ([`deferred::deferred_access`]); other locals cost nothing.
    pub watched: std::collections::HashSet<usize>,
}

impl<'a> Compiler<'a> {
    fn new(
        prog: &'a hir::Program,
        body: &'a hir::Body,
        builtins: &'a Builtins,
        kernels: &'a RefCell<Vec<Rc<construct::DeviceCode>>>,
    ) -> Compiler<'a> {
        let mut watched = std::collections::HashSet::new();
        reduction_slots(&body.block, &mut watched);
        Compiler {
            prog,
            body,
            builtins,
            kernels,
            watched,
        }
    }
}

/// The locals `async` compute constructs of host code `b` reduce into.
fn reduction_slots(b: &hir::Block, out: &mut std::collections::HashSet<usize>) {
    use hir::{DirectiveKind as DK, StmtKind as S};
    for s in b {
        match &s.kind {
            S::If { then, els, .. } => {
                reduction_slots(then, out);
                reduction_slots(els, out);
            }
            S::While { body, .. } => reduction_slots(body, out),
            S::For(f) => reduction_slots(&f.body, out),
            S::Block(b) => reduction_slots(b, out),
            S::Construct(c) => match c.kind {
                DK::Parallel | DK::ParallelLoop => {
                    out.extend(c.clauses.reductions.iter().map(|r| r.var.index()));
                }
                _ => {
                    if let hir::ConstructBody::Block(b) = &c.body {
                        reduction_slots(b, out);
                    }
                }
            },
            _ => {}
        }
    }
}

/// A compiled user function.
pub struct CFn {
    pub name: String,
    pub body: Vec<St>,
}

/// A compiled program.
pub struct Compiled {
    pub main: Vec<St>,
    pub main_locals: usize,
    pub tail: Option<CExpr>,
    pub fns: Rc<Vec<CFn>>,
    /// The device code of its compute constructs, in source order (for
    /// [`construct::Backend::prefetch`]).
    pub kernels: Vec<Rc<construct::DeviceCode>>,
}

/// Compile a checked program.
pub fn compile(prog: &hir::Program, builtins: &Builtins) -> Compiled {
    let kernels = RefCell::new(Vec::new());
    let fns = prog
        .functions
        .iter()
        .map(|(_, f)| {
            let c = Compiler::new(prog, &f.body, builtins, &kernels);
            CFn {
                name: f.name.clone(),
                body: c.block(&f.body.block),
            }
        })
        .collect();
    let c = Compiler::new(prog, &prog.main, builtins, &kernels);
    let main = c.block(&prog.main.block);
    let tail = prog.tail.map(|t| c.expr(t));
    Compiled {
        main,
        main_locals: prog.main.locals.len(),
        tail,
        fns: Rc::new(fns),
        kernels: kernels.into_inner(),
    }
}

/// Where `print` output goes.
pub type Sink = Box<dyn FnMut(&str)>;

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
    /// File-system access: the directory relative paths resolve against, or
    /// None when access is off.
    pub fs: Option<PathBuf>,
    pub host_fns: HashMap<String, HostFn>,
    pub host_val_fns: HashMap<String, HostValFn>,
    pub backend: Rc<dyn Backend>,
    pub device: usize,
    pub present: present::PresentTable,
    pub clock0: Instant,
    /// Async device work may be pending: host array accesses ask the
    /// backend whether they race with it ([`Ctx::host_access`]).
    pub async_pending: bool,
    /// Results of `async` reductions not yet waited for: each lands in its
    /// variable when the host waits for its queue.
    pub deferred: Vec<deferred::Deferred>,
    /// Async work is held back behind running work: the limit check asks
    /// the backend to submit it once its queue is idle
    /// ([`construct::Backend::submit_idle`]).
    pub held: bool,
    /// The text being run and where its pieces came from (for source
    /// lines in traces).
    pub(crate) source: Option<Rc<crate::engine::sources::SourceMap>>,
    /// The script's parameters (`accl run FILE -- a b`, `arg(i)`).
    pub args: Vec<Rc<str>>,
    /// Whether `getenv` may read the process environment.
    pub env_access: bool,
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
            out: Box::new(|s| print!("{s}")),
            fs: None,
            host_fns: HashMap::new(),
            host_val_fns: HashMap::new(),
            backend: Rc::new(HostBackend),
            device: 0,
            present: present::PresentTable::default(),
            clock0: Instant::now(),
            async_pending: false,
            deferred: Vec::new(),
            held: false,
            source: None,
            args: Vec::new(),
            env_access: false,
        }
    }
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
        let b = self.backend.clone();
        self.async_pending = b.host_access(self, a, (lo, hi), write, span)?;
        Ok(())
    }

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
    fn check_limits(&mut self, span: Span) -> R<()> {
        if self.held {
            self.held = self.backend.clone().submit_idle();
        }
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

    /// A script path, resolved, if file access is on.
    pub fn path(&self, builtin: &str, p: &str, span: Span) -> R<PathBuf> {
        match &self.fs {
            None => Err(error::fs_disabled(span, builtin)),
            Some(base) => Ok(base.join(Path::new(p))),
        }
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

/// Run a compiled program's top level in `frame`; returns the tail value.
pub fn run(c: &Compiled, frame: &mut Frame, cx: &mut Ctx) -> Result<Option<RtVal>, Box<Diag>> {
    cx.fns = c.fns.clone();
    cx.depth = 0;
    cx.deadline = cx.time_limit.map(|t| Instant::now() + t);
    cx.reset_check();
    let backend = cx.backend.clone();
    backend.set_wait_limits(cx.wait_limits());
    cx.deferred.clear();
    let r = stmt::run_block(&c.main, frame, cx)
        .and_then(|_| deferred::land_at_end(frame, cx))
        .and_then(|_| match &c.tail {
            Some(t) => {
                let v = t.eval(frame, cx)?;
                // The tail may have launched kernels of its own.
                backend.complete_sync(cx, None, None)?;
                Ok(Some(v))
            }
            None => Ok(None),
        });
    if r.is_err() {
        // The synchronous kernels of a failed input complete before the
        // next input (or the embedder) looks; their own faults are moot.
        let _ = backend.complete_sync(cx, None, None);
    }
    cx.deferred.clear();
    // Waits outside a running input (the embedder reading an array, the
    // engine's drop) are not bounded by this input's limits.
    backend.set_wait_limits(WaitLimits::default());
    r
}
