//! Host code the JIT compiled, in place of the interpreter's closures. A
//! compiled loop runs only when nothing could tell it from the
//! interpreter: no async device work pending on its arrays and no
//! reduction result pending into its variables (whose race checks and
//! landings happen per access), and its arrays set, of the planned element
//! type and rank; otherwise the interpreter's own closure runs it.

use super::deferred::{deferred_access, Touch};
use super::machine::{CExpr, Ctx, St};
use super::native::{describe, enter};
use super::par::ParRun;
use super::scalar::Sc;
use super::value::{Flow, Frame, R};
use super::Compiler;
use crate::per_scalar;
use host_jit::runtime;
use lang::hir::{ExprH, FnH, Stmt};
use lang::{Span, Type};

impl Compiler<'_> {
    /// Loop statement `s`, compiled when the JIT took it; `interp` is the
    /// interpreter's closure for it, which runs when the compiled loop
    /// cannot.
    pub fn jitted_loop(&self, s: &Stmt, interp: St) -> St {
        let Some(jit) = &self.jit else {
            return interp;
        };
        let Some(u) = jit.loop_unit(s) else {
            return interp;
        };
        let jit = jit.clone();
        let entry = u.entry;
        let arrays = u.arrays.clone();
        let tuple = u.rets.tuple.then_some(u.rets.types.len());
        let (at, span, scalars) = (s as *const Stmt as usize, u.span, u.scalars.clone());
        let globals = u.globals.clone();
        Box::new(move |fr, cx| {
            let mut handles = Vec::with_capacity(arrays.len());
            for &(slot, _, _) in &arrays {
                match fr.a.get(slot) {
                    Some(Some(a)) => handles.push(a.clone()),
                    _ => return interp(fr, cx),
                }
            }
            // A reduction result pending into a variable it uses (or a
            // function it calls uses) lands or races per access, in the
            // interpreter.
            if !cx.unraced(&handles) || cx.deferred_on(&scalars, &globals) {
                return interp(fr, cx);
            }
            let Some((descs, held)) = describe(&arrays, &handles) else {
                return interp(fr, cx);
            };
            if let Ok(unit) = &jit.loop_unit_par(at) {
                let run = ParRun {
                    unit,
                    span,
                    scalars: &scalars,
                    arrays: &arrays,
                    sites: &jit.sites,
                };
                if let Some(r) = run.run(&handles, &descs, fr, cx) {
                    drop(held);
                    return r.map(|_| Flow::Next);
                }
            }
            let slots = fr.s.as_mut_ptr();
            let globals = top_slots(cx, slots);
            let (status, ret, rets) = enter(cx, &jit.sites, globals, |rt| {
                // SAFETY: the entry was compiled for this loop: it reads and
                // writes only the slots of locals it names (all within the
                // frame of this body) and elements of the arrays described,
                // within their bounds; the arrays stay borrowed meanwhile.
                unsafe { entry(slots, descs.as_ptr(), rt) }
            })?;
            drop(held);
            Ok(match status {
                runtime::RETURN => {
                    match tuple {
                        Some(n) => fr.ret_tuple = rets[..n].to_vec(),
                        None => fr.ret_s = ret,
                    }
                    Flow::Return
                }
                _ => Flow::Next,
            })
        })
    }

    /// A call of function `f`, compiled when the JIT took the function.
    pub fn jitted_call(&self, f: FnH, args: &[ExprH], span: Span, ty: Type) -> Option<CExpr> {
        let jit = self.jit.as_ref()?;
        let u = jit.function(f)?;
        let entry = u.entry;
        let jit = jit.clone();
        let args: Vec<CExpr> = args.iter().map(|&a| self.expr(a)).collect();
        let n_rets = u.rets.types.len();
        let globals: Vec<usize> = u.globals.clone();
        let run = move |fr: &mut Frame, cx: &mut Ctx| -> R<(u64, [u64; lang::Tuple::MAX])> {
            let mut bits = [0u64; 8];
            let mut more = Vec::new();
            let argv: &mut [u64] = if args.len() <= bits.len() {
                &mut bits[..args.len()]
            } else {
                more.resize(args.len(), 0);
                &mut more
            };
            for (b, a) in argv.iter_mut().zip(&args) {
                *b = a.eval_bits(fr, cx)?;
            }
            // As the interpreter's call: a function using top-level
            // variables called from the top level first lands the
            // reductions pending into them.
            if !globals.is_empty() && cx.globals.is_none() && !cx.deferred.is_empty() {
                for &g in &globals {
                    deferred_access(fr, cx, g, Touch::Read, span)?;
                }
            }
            cx.enter_call(span)?;
            let p = argv.as_ptr();
            let top = top_slots(cx, fr.s.as_mut_ptr());
            let r = enter(cx, &jit.sites, top, |rt| {
                // SAFETY: the entry reads one slot per parameter from `p`.
                unsafe { entry(p, rt) }
            });
            cx.depth -= 1;
            let (_, ret, rets) = r?;
            Ok((ret, rets))
        };
        Some(match ty {
            Type::Scalar(s) => {
                per_scalar!(s, T => T::wrap(Box::new(move |fr, cx| Ok(T::from_slot(run(fr, cx)?.0)))))
            }
            Type::Tuple(_) => {
                CExpr::Tuple(Box::new(
                    move |fr, cx| Ok(run(fr, cx)?.1[..n_rets].to_vec()),
                ))
            }
            _ => CExpr::Unit(Box::new(move |fr, cx| run(fr, cx).map(|_| ()))),
        })
    }
}

/// The top-level frame's scalar slots: lent to the context while a function
/// that uses them runs, else the frame running now (only the top level
/// runs with them not lent, as the interpreter's call assumes).
fn top_slots(cx: &mut Ctx, here: *mut u64) -> *mut u64 {
    match cx.globals.as_mut() {
        Some(g) => g.s.as_mut_ptr(),
        None => here,
    }
}
