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
//! Modules, one per concept: [`value`] (frames, the scalar trait),
//! [`expr`], [`stmt`], [`builtin`], [`construct`] (device constructs and the
//! [`Backend`] trait), [`present`] (the present table), [`error`].

pub mod builtin;
pub mod construct;
pub mod error;
pub mod expr;
pub mod present;
pub mod stmt;
pub mod value;

pub use construct::{Backend, HostBackend, PresentRow};
pub use value::{Flow, Frame, RtVal, R};

use lang::{hir, Builtins, Diag, Span, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;
use value::{CExpr, St};

/// A Rust function registered by the embedder.
pub type HostFn = Rc<dyn Fn(&[Value]) -> Result<Value, String>>;

/// Compiles the bodies of one program.
pub struct Compiler<'a> {
    pub prog: &'a hir::Program,
    pub body: &'a hir::Body,
    pub builtins: &'a Builtins,
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
}

/// Compile a checked program.
pub fn compile(prog: &hir::Program, builtins: &Builtins) -> Compiled {
    let fns = prog
        .functions
        .iter()
        .map(|(_, f)| {
            let c = Compiler {
                prog,
                body: &f.body,
                builtins,
            };
            CFn {
                name: f.name.clone(),
                body: c.block(&f.body.block),
            }
        })
        .collect();
    let c = Compiler {
        prog,
        body: &prog.main,
        builtins,
    };
    Compiled {
        main: c.block(&prog.main.block),
        main_locals: prog.main.locals.len(),
        tail: prog.tail.map(|t| c.expr(t)),
        fns: Rc::new(fns),
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
    pub progress: Option<Box<dyn FnMut(u64) -> bool>>,
    pub progress_every: u64,
    pub depth: usize,
    pub max_depth: usize,
    pub out: Sink,
    /// File-system access: the directory relative paths resolve against, or
    /// None when access is off.
    pub fs: Option<PathBuf>,
    pub host_fns: HashMap<String, HostFn>,
    pub backend: Rc<dyn Backend>,
    pub device: usize,
    pub present: present::PresentTable,
    pub clock0: Instant,
    /// Async device work may be pending: host array accesses ask the
    /// backend whether they race with it ([`Ctx::host_access`]).
    pub async_pending: bool,
    /// The text being run (for source lines in traces).
    pub source: Option<Rc<str>>,
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
            out: Box::new(|s| print!("{s}")),
            fs: None,
            host_fns: HashMap::new(),
            backend: Rc::new(HostBackend),
            device: 0,
            present: present::PresentTable::default(),
            clock0: Instant::now(),
            async_pending: false,
            source: None,
        }
    }
}

impl Ctx {
    /// The 1-based line of `span` in the text being run (0 when unknown).
    pub fn line_of(&self, span: Span) -> usize {
        match &self.source {
            Some(s) => {
                let end = (span.start as usize).min(s.len());
                s.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
            }
            None => 0,
        }
    }

    /// The host reads (`write` false) or writes element `off` of `a` at
    /// `span`; with `off` None, the whole array. An error when pending
    /// async work races with it (DESIGN.md 1.4).
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
        self.async_pending = b.host_access(a, lo, hi, write, span)?;
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

    #[cold]
    fn check_limits(&mut self, span: Span) -> R<()> {
        if self.max_ops != 0 && self.ops > self.max_ops {
            return Err(error::op_limit(span, self.max_ops));
        }
        if let Some(p) = &mut self.progress {
            if !p(self.ops) {
                return Err(error::aborted(span));
            }
        }
        self.reset_check();
        Ok(())
    }

    /// Recompute when the next limit check is due.
    pub fn reset_check(&mut self) {
        let mut next = u64::MAX;
        if self.max_ops != 0 {
            next = next.min(self.max_ops + 1);
        }
        if self.progress.is_some() {
            next = next.min(self.ops + self.progress_every.max(1));
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
    cx.reset_check();
    stmt::run_block(&c.main, frame, cx)?;
    match &c.tail {
        Some(t) => Ok(Some(t.eval(frame, cx)?)),
        None => Ok(None),
    }
}
