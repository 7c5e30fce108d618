//! Host code at native speed: the checked HIR's scalar functions and loops
//! compiled with Cranelift.
//!
//! The interpreter stays the reference: this crate takes only code whose
//! every operation it compiles with the interpreter's exact semantics
//! ([`plan`]), and the interpreter calls what it compiled through two entry
//! shapes ([`runtime::FnEntry`], [`runtime::LoopEntry`]). Compiled code
//! shares one block with the interpreter ([`runtime::Rt`]): the operation
//! count (so operation, time and progress limits stop a run at the same
//! operation), the call depth, and what stopped a run (a trap with its
//! [`Site`], which the interpreter turns into the same located error it
//! would have raised).
//!
//! Modules: [`plan`] (what compiles), [`walk`] (locals a statement names),
//! [`runtime`] (the shared block and math routines), [`lower`] (statements,
//! control flow, traps), [`expr`] (expressions) and [`simd`] (innermost
//! loops in vector lanes); this module owns the machine code.

mod entry;
mod expr;
mod func;
pub mod gang;
mod lower;
pub mod par;
pub mod plan;
pub mod runtime;
pub mod simd;
mod walk;

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use lang::hir::{self, Body, FnH, Stmt, StmtKind};
use lang::{Builtins, Scalar, Span, Type};
use lower::{cl, Callees, Exit, Gen, PTR};
use plan::{scalar, Planner};
use runtime::*;
use std::collections::HashMap;

/// Where a trap or a limit check happened, for the interpreter's message.
#[derive(Debug, Clone)]
pub enum Site {
    /// A loop iteration (the loop's span, as the interpreter ticks it).
    Tick(Span),
    /// A call (its span).
    Call(Span),
    /// An element access: each index's span and the whole access's.
    Index { ix: Vec<Span>, span: Span },
    /// An integer division or remainder.
    Div(Span),
}

/// What a function returns: nothing, one scalar, or a tuple of scalars.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rets {
    pub types: Vec<Scalar>,
    pub tuple: bool,
}

impl Rets {
    pub fn of(t: Type) -> Rets {
        match t {
            Type::Scalar(s) => Rets {
                types: vec![s],
                tuple: false,
            },
            Type::Tuple(t) => Rets {
                types: t.elems().to_vec(),
                tuple: true,
            },
            _ => Rets::default(),
        }
    }

    /// Whether a compiled function returns these through memory: the
    /// caller passes a pointer to one 8-byte slot per element (slot bits)
    /// before the runtime block, and the function returns nothing
    /// natively. Every ABI returns two scalars in registers; more may not
    /// fit (x86-64 has two integer and two float return registers).
    pub fn in_memory(&self) -> bool {
        self.tuple && self.types.len() > 2
    }
}

/// A compiled function.
pub struct FnUnit {
    pub entry: FnEntry,
    pub params: Vec<Scalar>,
    pub rets: Rets,
    /// The top-level variables it uses, itself or through its calls.
    pub globals: Vec<usize>,
}

/// A compiled loop statement.
pub struct LoopUnit {
    pub entry: LoopEntry,
    /// The scalar locals it reads from and writes back to the frame.
    pub scalars: Vec<usize>,
    /// Its arrays, in descriptor order: the local, the element type and
    /// the rank it indexes with.
    pub arrays: Vec<(usize, Scalar, u8)>,
    /// What a `return` inside it returns (the enclosing function's result).
    pub rets: Rets,
    /// The top-level variables the functions it calls use.
    pub globals: Vec<usize>,
    /// The loop's span.
    pub span: Span,
    /// Its loops that run in SIMD ([`simd::describe`]).
    pub simd: Vec<(String, u8)>,
    /// Its range on several threads, or why its iterations cannot be
    /// independent ([`par`]).
    pub par: Result<ParUnit, plan::Why>,
}

/// A plain loop's entry over a range of its counter ([`gang::GangEntry`]
/// of one level) and the test that decides, as it starts, whether its
/// iterations may run on several threads.
pub struct ParUnit {
    pub entry: gang::GangEntry,
    pub test: par::ParTest,
}

/// A compute construct's loop nest, compiled ([`gang`]).
pub struct GangUnit {
    pub entry: gang::GangEntry,
    /// The construct's span.
    pub span: Span,
    /// The scalar locals it reads from and writes back to the frame.
    pub scalars: Vec<usize>,
    /// Its arrays, in descriptor order, as [`LoopUnit::arrays`].
    pub arrays: Vec<(usize, Scalar, u8)>,
    /// The top-level variables the functions it calls use.
    pub globals: Vec<usize>,
    /// Whether the gang loop's iterations may run on several threads, or
    /// why not ([`gang::parallel_why`]).
    pub threads: Result<(), plan::Why>,
    /// Where `threads` fails only at how the arrays written are indexed:
    /// the test that decides as the construct starts ([`gang::threads_test`]).
    pub test: Option<par::ParTest>,
    /// Its loops that run in SIMD ([`simd::describe`]).
    pub simd: Vec<(String, u8)>,
}

/// What code generation made of a loop or a construct: the entry, the
/// frame's scalars and arrays it takes, and its loops in SIMD.
type Built = (
    FuncId,
    Vec<usize>,
    Vec<(usize, Scalar, u8)>,
    Vec<(String, u8)>,
);

/// A function or loop that stays with the interpreter, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// `` function `f` `` or `loop`.
    pub unit: String,
    pub why: plan::Why,
}

/// The machine code of one program.
pub struct JitProgram {
    module: Option<JITModule>,
    fns: Vec<Option<FnUnit>>,
    loops: HashMap<usize, LoopUnit>,
    gangs: HashMap<usize, GangUnit>,
    /// Why each construct whose loop nest did not compile stays
    /// interpreted, by the construct's address.
    gang_refused: HashMap<usize, plan::Why>,
    pub sites: Vec<Site>,
    /// What stayed interpreted: each function not compiled and each
    /// outermost loop not compiled, in program order.
    pub refused: Vec<Refusal>,
}

impl Drop for JitProgram {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the entries are owned by this value alone, and the
            // interpreter's closures that call them hold it (through an
            // `Rc`) for as long as they live.
            unsafe { m.free_memory() };
        }
    }
}

impl JitProgram {
    pub fn function(&self, f: FnH) -> Option<&FnUnit> {
        self.fns.get(f.index())?.as_ref()
    }

    /// The compiled form of loop statement `s`, if it has one.
    pub fn loop_unit(&self, s: &Stmt) -> Option<&LoopUnit> {
        self.loops.get(&(s as *const Stmt as usize))
    }

    /// The range entry of the compiled loop at statement address `at`, or
    /// why its iterations run in order.
    pub fn loop_unit_par(&self, at: usize) -> Result<&ParUnit, Option<&plan::Why>> {
        match self.loops.get(&at).map(|u| &u.par) {
            Some(Ok(p)) => Ok(p),
            Some(Err(w)) => Err(Some(w)),
            None => Err(None),
        }
    }

    /// The compiled loop nest of construct `c`, if it has one.
    pub fn gang_unit(&self, c: &hir::Construct) -> Option<&GangUnit> {
        self.gangs.get(&(c as *const hir::Construct as usize))
    }

    /// Why construct `c`'s loop nest stays interpreted (None when it
    /// compiled or is not a loop construct).
    pub fn gang_refused(&self, c: &hir::Construct) -> Option<&plan::Why> {
        self.gang_refused
            .get(&(c as *const hir::Construct as usize))
    }

    /// The compiled loop nests, and why each construct's that did not
    /// compile stays interpreted.
    pub fn gangs(&self) -> (Vec<&GangUnit>, Vec<&plan::Why>) {
        let mut g: Vec<&GangUnit> = self.gangs.values().collect();
        g.sort_by_key(|u| u.span.start);
        let mut r: Vec<&plan::Why> = self.gang_refused.values().collect();
        r.sort_by_key(|w| w.span.start);
        (g, r)
    }

    /// The compiled loops with loops in SIMD, in source order: the span
    /// and what runs in SIMD ([`simd::describe`]).
    pub fn simd_loops(&self) -> Vec<(Span, String)> {
        let mut v: Vec<(Span, String)> = self
            .loops
            .values()
            .filter_map(|u| Some((u.span, simd::describe(&u.simd)?)))
            .collect();
        v.sort_by_key(|(s, _)| s.start);
        v
    }

    /// The compiled plain loops, in source order: the span, and whether
    /// their range may run on several threads (tested as each starts) or
    /// why it runs in order ([`par`]).
    pub fn par_loops(&self) -> Vec<(Span, Result<(), &plan::Why>)> {
        let mut v: Vec<(Span, Result<(), &plan::Why>)> = self
            .loops
            .values()
            .map(|u| (u.span, u.par.as_ref().map(|_| ())))
            .collect();
        v.sort_by_key(|(s, _)| s.start);
        v
    }

    /// How many functions and loops were compiled.
    pub fn counts(&self) -> (usize, usize) {
        (self.fns.iter().flatten().count(), self.loops.len())
    }

    pub fn is_empty(&self) -> bool {
        self.loops.is_empty() && self.gangs.is_empty() && self.fns.iter().all(Option::is_none)
    }
}

/// A unit code generation refused (the next attempt leaves it out), or a
/// failure of the whole module.
enum Failed {
    Function(usize, String),
    Loop(usize, String),
    Whole(String),
}

/// Compile what the JIT takes of `prog`. A function or loop that code
/// generation refuses is left to the interpreter with its reason (and the
/// functions that call it), and the rest compiled again without it: one
/// unit never turns compilation off for the others. `Err` only when this
/// machine has no Cranelift back end (the interpreter then runs
/// everything). With `constructs`, the loop nests of compute constructs
/// are compiled too (for the host backend, which runs them; a device runs
/// its own code).
pub fn compile(
    prog: &hir::Program,
    builtins: &Builtins,
    constructs: bool,
) -> Result<JitProgram, String> {
    let mut planner = Planner::new(prog, builtins);
    let mut dropped: HashMap<usize, plan::Why> = HashMap::new();
    loop {
        let mut loops = Vec::new();
        let mut refused = Vec::new();
        for (h, f) in prog.functions.iter() {
            if let Some(why) = &planner.why[h.index()] {
                refused.push(Refusal {
                    unit: format!("function `{}`", f.name),
                    why: why.clone(),
                });
            }
        }
        for (h, f) in prog.functions.iter() {
            if !planner.function(h) {
                let ret = Rets::of(f.ret);
                let mut found = Found {
                    planner: &planner,
                    dropped: &dropped,
                    body: &f.body,
                    ret,
                    loops: &mut loops,
                    refused: &mut refused,
                };
                found.scan(&f.body.block);
            }
        }
        Found {
            planner: &planner,
            dropped: &dropped,
            body: &prog.main,
            ret: Rets::default(),
            loops: &mut loops,
            refused: &mut refused,
        }
        .scan(&prog.main.block);
        let mut found = Vec::new();
        if constructs {
            for (h, f) in prog.functions.iter() {
                if !planner.function(h) {
                    gangs_of(&f.body, &mut found);
                }
            }
            gangs_of(&prog.main, &mut found);
        }
        let mut gangs = Vec::new();
        let mut gang_refused = HashMap::new();
        for (body, c) in found {
            let at = c as *const hir::Construct as usize;
            let why = match dropped.get(&at) {
                Some(w) => Err(w.clone()),
                None => gang::compile_why(&planner, body, c),
            };
            match why {
                Ok(()) => gangs.push((body, c)),
                Err(w) => {
                    gang_refused.insert(at, w);
                }
            }
        }
        let out = match attempt(prog, builtins, &planner, &loops, &gangs) {
            Ok(mut j) => {
                j.refused = refused;
                j.gang_refused = gang_refused;
                return Ok(j);
            }
            Err(f) => f,
        };
        match out {
            Failed::Function(i, e) => {
                let f = prog.functions.iter().find(|(h, _)| h.index() == i);
                let span = f.map(|(_, f)| f.span).unwrap_or_default();
                planner.refuse(
                    i,
                    plan::Why {
                        span,
                        what: format!("code generation failed ({e})"),
                    },
                );
            }
            Failed::Loop(at, e) => {
                let span = loops
                    .iter()
                    .find(|(_, s, _)| *s as *const Stmt as usize == at)
                    .map(|(_, s, _)| s.span)
                    .unwrap_or_default();
                dropped.insert(
                    at,
                    plan::Why {
                        span,
                        what: format!("code generation failed ({e})"),
                    },
                );
            }
            Failed::Whole(e) => return Err(e),
        }
    }
}

/// The constructs of `body` whose loop nest could compile, with the body.
fn gangs_of<'p>(body: &'p Body, out: &mut Vec<(&'p Body, &'p hir::Construct)>) {
    let mut cs = Vec::new();
    gang::find(&body.block, &mut cs);
    out.extend(cs.into_iter().map(|c| (body, c)));
}

/// One try at compiling the planned functions, `loops` and the loop nests
/// of `gangs` into a module.
#[allow(clippy::type_complexity)]
fn attempt(
    prog: &hir::Program,
    builtins: &Builtins,
    planner: &Planner,
    loops: &[(&Body, &Stmt, Rets)],
    gangs: &[(&Body, &hir::Construct)],
) -> Result<JitProgram, Failed> {
    if loops.is_empty() && gangs.is_empty() && !planner.fns.iter().any(|&c| c) {
        return Ok(JitProgram {
            module: None,
            fns: Vec::new(),
            loops: HashMap::new(),
            gangs: HashMap::new(),
            gang_refused: HashMap::new(),
            sites: Vec::new(),
            refused: Vec::new(),
        });
    }
    let whole = |e: String| Failed::Whole(e);
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| e.to_string());
    set(&mut flags, "opt_level", "speed").map_err(whole)?;
    set(&mut flags, "use_colocated_libcalls", "false").map_err(whole)?;
    set(&mut flags, "is_pic", "false").map_err(whole)?;
    let isa = cranelift_native::builder()
        .map_err(|e| whole(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| whole(e.to_string()))?;
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    let mut routines: Vec<(String, &'static str, *const u8, usize)> = Vec::new();
    for (arity, list) in [
        (1, runtime::unary()),
        (2, runtime::binary()),
        (3, runtime::ternary()),
    ] {
        for (name, s32, p32, s64, p64) in list {
            jb.symbol(s32, p32);
            jb.symbol(s64, p64);
            routines.push((format!("{name}/32"), s32, p32, arity));
            routines.push((format!("{name}/64"), s64, p64, arity));
        }
    }
    let mut module = JITModule::new(jb);
    let mut math = HashMap::new();
    for (key, sym, _, arity) in &routines {
        let t = if key.ends_with("/32") {
            types::F32
        } else {
            types::F64
        };
        let mut sig = module.make_signature();
        for _ in 0..*arity {
            sig.params.push(AbiParam::new(t));
        }
        sig.returns.push(AbiParam::new(t));
        let id = module
            .declare_function(sym, Linkage::Import, &sig)
            .map_err(|e| whole(e.to_string()))?;
        math.insert(key.clone(), id);
    }

    // Declare every function first: they call each other.
    let mut fn_ids: Vec<Option<FuncId>> = vec![None; prog.functions.len()];
    let mut fn_sigs = vec![None; prog.functions.len()];
    for (h, f) in prog.functions.iter() {
        if !planner.function(h) {
            continue;
        }
        let params: Vec<Scalar> = f
            .params
            .iter()
            .map(|&p| scalar(f.body.locals[p].ty).unwrap_or(Scalar::I64))
            .collect();
        let ret = Rets::of(f.ret);
        let mut sig = module.make_signature();
        for &p in &params {
            sig.params.push(AbiParam::new(cl(p)));
        }
        if ret.in_memory() {
            sig.params.push(AbiParam::new(PTR));
        } else {
            for &r in &ret.types {
                sig.returns.push(AbiParam::new(cl(r)));
            }
        }
        sig.params.push(AbiParam::new(PTR));
        let id = module
            .declare_function(&format!("fn{}", h.index()), Linkage::Local, &sig)
            .map_err(|e| Failed::Function(h.index(), e.to_string()))?;
        fn_ids[h.index()] = Some(id);
        fn_sigs[h.index()] = Some((params, ret));
    }
    let fn_globals: Vec<Vec<usize>> = prog
        .functions
        .iter()
        .map(|(_, f)| f.globals.iter().map(|g| g.index()).collect())
        .collect();

    let mut b = Builder {
        module,
        sites: Vec::new(),
        builtins,
        math,
        fn_ids,
        fn_sigs,
        fn_globals: &fn_globals,
        main: &prog.main,
        next_name: 0,
        simd: Vec::new(),
    };
    let pars: Vec<Result<par::ParTest, plan::Why>> = loops
        .iter()
        .map(|(body, s, _)| match &s.kind {
            StmtKind::For(fl) => {
                par::ParTest::of(planner, body, fl, std::ptr::eq(*body, &prog.main))
            }
            _ => par::refused(s.span, "it is a `while` loop"),
        })
        .collect();
    let r = b.units(prog, loops, &pars, gangs);
    let (entries, loop_ids, par_ids, gang_ids) = match r {
        Ok(v) => v,
        Err(e) => {
            // SAFETY: nothing of this module was handed out.
            unsafe { b.module.free_memory() };
            return Err(e);
        }
    };

    let mut fns: Vec<Option<FnUnit>> = (0..prog.functions.len()).map(|_| None).collect();
    for (i, id) in entries {
        let code = b.module.get_finalized_function(id);
        let (params, rets) = b.fn_sigs[i].clone().unwrap_or_default();
        fns[i] = Some(FnUnit {
            // SAFETY: built with the `FnEntry` signature by `fn_entry`.
            entry: unsafe { std::mem::transmute::<*const u8, FnEntry>(code) },
            params,
            rets,
            globals: fn_globals[i].clone(),
        });
    }
    let mut units = HashMap::new();
    let mut pars = pars.into_iter().zip(par_ids);
    for ((body, s, rets), (id, scalars, arrays, simd)) in loops.iter().zip(loop_ids) {
        let code = b.module.get_finalized_function(id);
        let par = match pars.next() {
            Some((Ok(test), Some(pid))) => Ok(ParUnit {
                // SAFETY: built with the `GangEntry` signature by `range_entry`.
                entry: unsafe {
                    std::mem::transmute::<*const u8, gang::GangEntry>(
                        b.module.get_finalized_function(pid),
                    )
                },
                test,
            }),
            Some((Err(w), _)) => Err(w),
            _ => par::refused(s.span, "its range entry was not built"),
        };
        let globals = callees_globals(body, std::slice::from_ref(*s), &fn_globals);
        units.insert(
            *s as *const Stmt as usize,
            LoopUnit {
                // SAFETY: built with the `LoopEntry` signature by `loop_unit`.
                entry: unsafe { std::mem::transmute::<*const u8, LoopEntry>(code) },
                scalars,
                arrays,
                rets: rets.clone(),
                globals,
                span: s.span,
                simd,
                par,
            },
        );
    }
    let mut gang_units = HashMap::new();
    for ((body, c), (id, scalars, arrays, simd)) in gangs.iter().zip(gang_ids) {
        let code = b.module.get_finalized_function(id);
        let threads = gang::parallel_why(planner, body, c);
        let inner: &[Stmt] = match &c.body {
            hir::ConstructBody::Loops { body: inner, .. } => inner,
            _ => &[],
        };
        let globals = callees_globals(body, inner, &fn_globals);
        gang_units.insert(
            *c as *const hir::Construct as usize,
            GangUnit {
                // SAFETY: built with the `GangEntry` signature by `gang_unit`.
                entry: unsafe { std::mem::transmute::<*const u8, gang::GangEntry>(code) },
                span: c.span,
                scalars,
                arrays,
                globals,
                test: threads
                    .is_err()
                    .then(|| gang::threads_test(planner, body, c))
                    .flatten(),
                threads,
                simd,
            },
        );
    }
    Ok(JitProgram {
        module: Some(b.module),
        fns,
        loops: units,
        gangs: gang_units,
        gang_refused: HashMap::new(),
        sites: b.sites,
        refused: Vec::new(),
    })
}

/// The outermost loops of a body that compile on their own, and the
/// outermost ones that do not, with why.
struct Found<'p, 'q> {
    planner: &'q Planner<'q>,
    dropped: &'q HashMap<usize, plan::Why>,
    body: &'p Body,
    ret: Rets,
    loops: &'q mut Vec<(&'p Body, &'p Stmt, Rets)>,
    refused: &'q mut Vec<Refusal>,
}

impl<'p> Found<'p, '_> {
    fn scan(&mut self, b: &'p [Stmt]) {
        for s in b {
            match &s.kind {
                StmtKind::For(_) | StmtKind::While { .. } => {
                    let why = match self.dropped.get(&(s as *const Stmt as usize)) {
                        Some(w) => Err(w.clone()),
                        None => self.planner.loop_why(self.body, s),
                    };
                    match why {
                        Ok(()) => self.loops.push((self.body, s, self.ret.clone())),
                        Err(why) => {
                            let mark = self.refused.len();
                            self.inner(s);
                            // Only the outermost loop that stays interpreted
                            // is listed (with the loops inside it that
                            // compile).
                            self.refused.truncate(mark);
                            self.refused.insert(
                                mark,
                                Refusal {
                                    unit: "loop".into(),
                                    why,
                                },
                            );
                        }
                    }
                }
                _ => self.inner(s),
            }
        }
    }

    fn inner(&mut self, s: &'p Stmt) {
        match &s.kind {
            StmtKind::For(fl) => self.scan(&fl.body),
            StmtKind::While { body: w, .. } => self.scan(w),
            StmtKind::If { then, els, .. } => {
                self.scan(then);
                self.scan(els);
            }
            StmtKind::Block(inner) => self.scan(inner),
            _ => {}
        }
    }
}

struct Builder<'a> {
    module: JITModule,
    sites: Vec<Site>,
    builtins: &'a Builtins,
    math: HashMap<String, FuncId>,
    fn_ids: Vec<Option<FuncId>>,
    fn_sigs: Vec<Option<(Vec<Scalar>, Rets)>>,
    /// Each function's top-level variables, by handle index.
    fn_globals: &'a [Vec<usize>],
    /// The top-level body (whose locals are the top-level variables).
    main: &'a Body,
    next_name: usize,
    /// The loops in SIMD of the unit being built.
    simd: Vec<(String, u8)>,
}

impl Builder<'_> {
    /// Every planned function and `loops`, defined and finalized: the
    /// functions' entries and the loops' ids with their scalars and arrays.
    #[allow(clippy::type_complexity)]
    fn units(
        &mut self,
        prog: &hir::Program,
        loops: &[(&Body, &Stmt, Rets)],
        pars: &[Result<par::ParTest, plan::Why>],
        gangs: &[(&Body, &hir::Construct)],
    ) -> Result<
        (
            Vec<(usize, FuncId)>,
            Vec<Built>,
            Vec<Option<FuncId>>,
            Vec<Built>,
        ),
        Failed,
    > {
        let mut entries = Vec::new();
        for (h, f) in prog.functions.iter() {
            if let Some(id) = self.fn_ids[h.index()] {
                let fail = |e| Failed::Function(h.index(), e);
                self.function(f, id).map_err(fail)?;
                entries.push((h.index(), self.fn_entry(h.index(), id).map_err(fail)?));
            }
        }
        let mut loop_ids = Vec::new();
        let mut par_ids = Vec::new();
        for ((body, s, ret), par) in loops.iter().zip(pars) {
            let at = *s as *const Stmt as usize;
            loop_ids.push(
                self.loop_unit(body, s, ret.clone())
                    .map_err(|e| Failed::Loop(at, e))?,
            );
            par_ids.push(match (&s.kind, par) {
                (StmtKind::For(fl), Ok(_)) => Some(
                    self.range_entry(body, s, std::slice::from_ref(&fl.header), fl)
                        .map_err(|e| Failed::Loop(at, e))?
                        .0,
                ),
                _ => None,
            });
        }
        let mut gang_ids = Vec::new();
        for (body, c) in gangs {
            let at = *c as *const hir::Construct as usize;
            gang_ids.push(self.gang_unit(body, c).map_err(|e| Failed::Loop(at, e))?);
        }
        self.module
            .finalize_definitions()
            .map_err(|e| Failed::Whole(e.to_string()))?;
        Ok((entries, loop_ids, par_ids, gang_ids))
    }

    fn name(&mut self, what: &str) -> String {
        self.next_name += 1;
        format!("{what}{}", self.next_name)
    }

    fn define(&mut self, id: FuncId, ctx: &mut cranelift_codegen::Context) -> Result<(), String> {
        let trace = std::env::var("ACCL_JIT_TRACE").is_ok_and(|v| v == "asm");
        ctx.set_disasm(trace);
        self.module
            .define_function(id, ctx)
            .map_err(|e| format!("{e:?}"))?;
        if let Some(code) = ctx
            .compiled_code()
            .and_then(|c| c.vcode.as_ref())
            .filter(|_| trace)
        {
            eprintln!("jit: {id}:\n{code}");
        }
        self.module.clear_context(ctx);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // the parts of one generator
    fn gen<'g, 'b>(
        &'g mut self,
        b: FunctionBuilder<'b>,
        body: &'g Body,
        rt: cranelift_codegen::ir::Value,
        ops: cranelift_frontend::Variable,
        next: cranelift_frontend::Variable,
        trap_exit: cranelift_codegen::ir::Block,
        ret_exit: cranelift_codegen::ir::Block,
        exit: Exit,
    ) -> Gen<'g, 'b> {
        Gen {
            b,
            body,
            rt,
            vars: HashMap::new(),
            arrays: HashMap::new(),
            ops,
            next,
            loops: Vec::new(),
            trap_exit,
            ret_exit,
            exit,
            sites: &mut self.sites,
            module: &mut self.module,
            callees: Callees {
                fns: &self.fn_ids,
                sigs: &self.fn_sigs,
                globals: self.fn_globals,
                math: &self.math,
            },
            globals: None,
            spills: Vec::new(),
            builtins: self.builtins,
            refs: HashMap::new(),
            checked: HashMap::new(),
            in_bounds: Vec::new(),
            simd: &mut self.simd,
        }
    }

    /// A new entry point taking `pointers` pointers and returning a status,
    /// and the context to build it in.
    fn declare_entry(
        &mut self,
        what: &str,
        pointers: usize,
    ) -> Result<(FuncId, cranelift_codegen::Context), String> {
        let sig = entry_sig(&self.module, pointers);
        let name = self.name(what);
        let id = self
            .module
            .declare_function(&name, Linkage::Local, &sig)
            .map_err(|e| e.to_string())?;
        let mut ctx = self.module.make_context();
        ctx.func.signature = sig;
        Ok((id, ctx))
    }

    /// One loop statement as a `LoopEntry`.
    fn loop_unit(&mut self, body: &Body, s: &Stmt, ret: Rets) -> Result<Built, String> {
        let (scalars, arrays) = frame_of(body, std::slice::from_ref(s));
        let fc = self.module.isa().frontend_config();
        let (id, mut ctx) = self.declare_entry("loop", 3)?;
        let top = std::ptr::eq(body, self.main);
        {
            let mut fbc = FunctionBuilderContext::new();
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let p = open(&mut fb);
            let (slots, descs, rt) = (p[0], p[1], p[2]);
            let (ops, next, trap_exit, ret_exit) = exits(&mut fb);
            let mut g = self.gen(
                fb,
                body,
                rt,
                ops,
                next,
                trap_exit,
                ret_exit,
                Exit::Loop { ret },
            );
            g.load_globals();
            if top {
                // The top level's own loop: its variables are the globals
                // that the functions it calls use, held in its variables
                // meanwhile, so they are written before and read after
                // each such call.
                g.spills = scalars.clone();
            }
            g.sync_in();
            entry::load(&mut g, body, slots, descs, &scalars, &arrays);
            g.block(std::slice::from_ref(s));
            entry::close(&mut g, body, slots, &scalars, [ret_exit, trap_exit]);
            g.b.seal_all_blocks();
            g.b.finalize(fc);
        }
        self.define(id, &mut ctx)?;
        Ok((id, scalars, arrays, std::mem::take(&mut self.simd)))
    }
}

/// For unit tests: `src` checked with no builtins, and its function `f`
/// with `f`'s first `for` loop.
#[cfg(test)]
pub(crate) fn with_loop_of_f<T>(
    src: &str,
    go: impl FnOnce(&hir::Program, &hir::Function, &hir::ForLoop) -> T,
) -> T {
    let prog = lang::check_source(src, &Builtins::new())
        .unwrap_or_else(|d| panic!("{src}: {:?}", d[0].message))
        .program;
    let (_, f) = prog
        .functions
        .iter()
        .find(|(_, f)| f.name == "f")
        .expect("a function `f`");
    let fl = f
        .body
        .block
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::For(fl) => Some(fl),
            _ => None,
        })
        .expect("a loop");
    go(&prog, f, fl)
}

static EMPTY: std::sync::LazyLock<Body> = std::sync::LazyLock::new(Body::default);

/// The entry block, current, with the function's parameters.
fn open(fb: &mut FunctionBuilder) -> Vec<cranelift_codegen::ir::Value> {
    let entry = fb.create_block();
    fb.append_block_params_for_function_params(entry);
    fb.switch_to_block(entry);
    fb.block_params(entry).to_vec()
}

/// The operation count's variables and the trap and return exits of a
/// unit being built.
fn exits(
    fb: &mut FunctionBuilder,
) -> (
    cranelift_frontend::Variable,
    cranelift_frontend::Variable,
    cranelift_codegen::ir::Block,
    cranelift_codegen::ir::Block,
) {
    let ops = fb.declare_var(types::I64);
    let next = fb.declare_var(types::I64);
    (ops, next, fb.create_block(), fb.create_block())
}

fn entry_sig(m: &JITModule, pointers: usize) -> Signature {
    let mut sig = m.make_signature();
    for _ in 0..pointers {
        sig.params.push(AbiParam::new(PTR));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

fn zero(g: &mut Gen, t: Scalar) -> cranelift_codegen::ir::Value {
    match t {
        Scalar::F32 => g.b.ins().f32const(0.0),
        Scalar::F64 => g.b.ins().f64const(0.0),
        _ => g.b.ins().iconst(cl(t), 0),
    }
}

/// The top-level variables the functions that `block` calls use, sorted.
fn callees_globals(body: &Body, block: &[Stmt], fn_globals: &[Vec<usize>]) -> Vec<usize> {
    let mut called = Vec::new();
    walk::callees(body, block, &mut called);
    let mut globals: Vec<usize> = called
        .iter()
        .flat_map(|&f| fn_globals[f].iter().copied())
        .collect();
    globals.sort_unstable();
    globals.dedup();
    globals
}

/// What a unit compiled from `block` takes from the interpreter's frame:
/// the scalar locals it touches and its arrays (local, element, rank).
pub(crate) fn frame_of(body: &Body, block: &[Stmt]) -> (Vec<usize>, Vec<(usize, Scalar, u8)>) {
    let scalars = Gen::touched(body, block);
    let arrays = Gen::array_locals(body, block)
        .into_iter()
        .filter_map(|a| match body.locals[hir::LocalH::new(a)].ty {
            Type::Array(elem, rank) => Some((a, elem, rank)),
            _ => None,
        })
        .collect();
    (scalars, arrays)
}
