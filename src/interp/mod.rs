//! The interpreter of host code.
//!
//! A checked [`hir::Program`] is compiled once into a tree of closures
//! specialised by type ([`machine::Ex`]: `Fn(&mut Frame, &mut Ctx) -> R<T>`
//! for each Rust scalar type `T`), then run. Locals are slots of a flat frame
//! (scalars as 64-bit patterns, arrays as shared handles), so the closures
//! neither look up names nor match on dynamic values; see [`expr`] for the
//! specialisations that make the hot loops fast. Closures were chosen over a
//! register bytecode because they let rustc inline each operator into its
//! node and keep the interpreter one small pass over the HIR.
//!
//! Modules, one per concept, in layers: each imports only the layers below
//! it (`scripts/imports.py` checks).
//!
//! 1. [`region`] (the boxes of a section), [`queue`] (which queue work goes
//!    to), [`wait`] (what stops a device wait), [`race`] (host accesses
//!    against pending device work), [`present`] (the present table),
//!    [`device`] (what a device reports), [`value`] (frames and run-time
//!    values) and [`error`] (run-time diagnostics).
//! 2. [`machine`]: the context ([`Ctx`]), the closure types and compiled
//!    constructs that take it, and the [`Backend`] trait. They name each
//!    other, so they share one module; their behaviour is above.
//! 3. [`scalar`] (the scalar trait, slot encodings) and [`limits`] (the
//!    context's limit checks).
//! 4. [`deferred`] (reduction results not yet read), [`data`] (data
//!    clauses) and [`host`] (the host reference backend): the present
//!    table and race tracking as the constructs use them; [`native`]
//!    (calling into host code compiled by the `host-jit` crate).
//! 5. This module's [`Compiler`], which its children extend with `impl`
//!    blocks: [`expr`], [`stmt`], [`builtin`] (with [`mpi`], the `mpi_*`
//!    builtins), [`construct`] (the construct flow every backend
//!    shares) and [`jit`] (compiled functions and loops in place of
//!    closures). Mutually recursive compilation goes through `Compiler`'s
//!    methods, so no child imports another that imports it back; at run
//!    time they meet only through the closures they build.

pub mod builtin;
pub mod construct;
pub mod data;
pub mod deferred;
pub mod device;
pub mod error;
pub mod expr;
pub mod gang;
pub mod host;
pub mod jit;
pub mod limits;
pub mod machine;
pub mod memcpy;
pub mod mpi;
pub mod native;
pub mod par;
pub mod phases;
pub mod present;
pub mod queue;
pub mod race;
pub mod region;
pub mod scalar;
pub mod section_arg;
pub mod spread;
pub mod stmt;
pub mod text;
pub mod tuple;
pub mod value;
pub mod wait;

pub use machine::{Backend, Ctx, HostBackend, HostFn, HostValFn, Sink};
pub use present::PresentRow;
pub use value::{Flow, Frame, RtVal, R};
pub use wait::{Progress, WaitLimits, WaitStop};

use lang::{hir, Builtins, Diag};
use machine::{run_block, CExpr, CFn, DeviceCode, St};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

/// Compiles the bodies of one program.
pub struct Compiler<'a> {
    pub prog: &'a hir::Program,
    pub body: &'a hir::Body,
    pub builtins: &'a Builtins,
    /// The device code of every compute construct compiled so far.
    pub kernels: &'a RefCell<Vec<Rc<DeviceCode>>>,
    /// Locals that a `parallel` construct of this body reduces into: host
    /// reads and writes of them first look for a pending result
    /// ([`deferred::deferred_access`]); other locals cost nothing.
    pub watched: std::collections::HashSet<usize>,
    /// The program's compiled host code, if any ([`jit`]).
    pub jit: Option<Rc<host_jit::JitProgram>>,
}

impl<'a> Compiler<'a> {
    fn new(
        prog: &'a hir::Program,
        body: &'a hir::Body,
        builtins: &'a Builtins,
        kernels: &'a RefCell<Vec<Rc<DeviceCode>>>,
        jit: Option<Rc<host_jit::JitProgram>>,
    ) -> Compiler<'a> {
        let mut watched = std::collections::HashSet::new();
        reduction_slots(&body.block, &mut watched);
        Compiler {
            prog,
            body,
            builtins,
            kernels,
            watched,
            jit,
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

/// A compiled program.
pub struct Compiled {
    pub main: Vec<St>,
    pub main_locals: usize,
    pub tail: Option<CExpr>,
    pub fns: Rc<Vec<CFn>>,
    /// The device code of its compute constructs, in source order (for
    /// [`Backend::prefetch`]).
    pub kernels: Vec<Rc<DeviceCode>>,
}

/// Compile a checked program; `on_host`: its compute constructs run on the
/// host backend (their loop nests are compiled to native code too).
pub fn compile(prog: &hir::Program, builtins: &Builtins, on_host: bool) -> Compiled {
    let kernels = RefCell::new(Vec::new());
    let jit = native::compile(prog, builtins, on_host);
    let fns = prog
        .functions
        .iter()
        .map(|(_, f)| {
            let c = Compiler::new(prog, &f.body, builtins, &kernels, jit.clone());
            CFn {
                name: f.name.clone(),
                body: c.block(&f.body.block),
            }
        })
        .collect();
    let c = Compiler::new(prog, &prog.main, builtins, &kernels, jit);
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

/// Run a compiled program's top level in `frame`; returns the tail value.
pub fn run(c: &Compiled, frame: &mut Frame, cx: &mut Ctx) -> Result<Option<RtVal>, Box<Diag>> {
    cx.fns = c.fns.clone();
    cx.depth = 0;
    cx.deadline = cx.time_limit.map(|t| Instant::now() + t);
    cx.reset_check();
    let backend = cx.backend.clone();
    backend.set_wait_limits(cx.wait_limits());
    cx.deferred.clear();
    let r = run_block(&c.main, frame, cx)
        .and_then(|_| deferred::land_at_end(frame, cx))
        .and_then(|_| mpi::not_waited(cx))
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
        // Messages of a failed input are let go ([`crate::mpi::Pending`]).
        cx.mpi_requests.clear();
        cx.mpi_self.clear();
    }
    cx.deferred.clear();
    // Waits outside a running input (the embedder reading an array, the
    // engine's drop) are not bounded by this input's limits.
    backend.set_wait_limits(WaitLimits::default());
    r
}
