//! Unrolling innermost loops: a KIR → KIR pass for drivers with a loop
//! budget.
//!
//! llvmpipe (lavapipe) runs each group of SIMD lanes with one loop counter
//! shared by every loop of the shader and silently leaves all loops after
//! 65,535 iterations (Mesa's `LP_MAX_TGSI_LOOP_ITERATIONS`). A kernel whose
//! single iteration loops longer than that (a Mandelbrot row of 1024 pixels
//! of up to 255 iterations each) would give wrong results without an error.
//! Unrolling every innermost loop `factor` times divides the iterations the
//! driver counts by about `factor`, which is what the runtime does on that
//! driver; on other drivers kernels are left as they are.
//!
//! `Loop { body, continuing }` becomes `Loop { body; continuing; body; ..;
//! body, continuing }` (`factor` copies of `body`). This keeps the meaning
//! exactly: each copy starts with the loop's own exit test (for and while
//! loops are lowered with an explicit `if !cond { break }` first), and a
//! `break` in any copy leaves the whole loop. Loops with a `continue` of
//! their own, a barrier or a vector loop are left alone, and so are loops
//! that write memory where the driver does not cap loops (see
//! [`crate::compile`]). Expressions are
//! evaluated where statements use them, so copies may share handles.

use crate::kir::{Block, Expr, ExprH, Function, Kernel, StmtKind};
use lang::arena::Arena;

/// Unroll every innermost loop of the kernel and its functions; the loops
/// that write memory (store to an array, update one atomically, or call a
/// function) only where `writers` says so.
pub fn unroll(kernel: &mut Kernel, factor: usize, writers: bool) {
    if factor < 2 {
        return;
    }
    unroll_fn(&mut kernel.entry, factor, writers);
    let handles: Vec<_> = kernel.functions.iter().map(|(h, _)| h).collect();
    for h in handles {
        unroll_fn(&mut kernel.functions[h], factor, writers);
    }
}

fn unroll_fn(f: &mut Function, factor: usize, writers: bool) {
    let Function { body, exprs, .. } = f;
    block(body, factor, &|b: &Block| writers || !writes(b, exprs));
}

/// Whether the statements of `b` (at any depth) write memory.
fn writes(b: &Block, exprs: &Arena<Expr>) -> bool {
    fn expr(e: ExprH, exprs: &Arena<Expr>) -> bool {
        matches!(exprs[e], Expr::Atomic { .. } | Expr::Call(..))
            || exprs[e].operands().into_iter().any(|o| expr(o, exprs))
    }
    b.iter().any(|s| match &s.kind {
        StmtKind::StoreElem { .. }
        | StmtKind::CallTuple { .. }
        | StmtKind::PrivateInit(_)
        | StmtKind::Eval(_) => true,
        StmtKind::Store { value, .. } => expr(*value, exprs),
        StmtKind::If { cond, then, els } => {
            expr(*cond, exprs) || writes(then, exprs) || writes(els, exprs)
        }
        StmtKind::Loop { body, continuing } => writes(body, exprs) || writes(continuing, exprs),
        StmtKind::VectorLoop(v) => writes(&v.body, exprs),
        _ => false,
    })
}

/// Returns whether `b` contains a loop (at any depth).
fn block(b: &mut Block, factor: usize, may: &dyn Fn(&Block) -> bool) -> bool {
    let mut has_loop = false;
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::If { then, els, .. } => {
                let a = block(then, factor, may);
                let e = block(els, factor, may);
                has_loop |= a || e;
            }
            StmtKind::Loop { body, continuing } => {
                has_loop = true;
                let inner = block(body, factor, may) | block(continuing, factor, may);
                if !inner
                    && unrollable(body)
                    && unrollable(continuing)
                    && may(body)
                    && may(continuing)
                {
                    let one = body.clone();
                    let cont = continuing.clone();
                    for _ in 1..factor {
                        body.extend(cont.iter().cloned());
                        body.extend(one.iter().cloned());
                    }
                }
            }
            StmtKind::VectorLoop(v) => {
                has_loop = true;
                block(&mut v.body, factor, may);
            }
            _ => {}
        }
    }
    has_loop
}

/// No `continue` of this loop, no barrier, no vector loop.
fn unrollable(b: &Block) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Continue | StmtKind::Barrier | StmtKind::VectorLoop(_) => false,
        StmtKind::If { then, els, .. } => unrollable(then) && unrollable(els),
        _ => true,
    })
}
