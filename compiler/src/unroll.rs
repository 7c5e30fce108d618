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
//! their own, a barrier or a vector loop are left alone. Expressions are
//! evaluated where statements use them, so copies may share handles.

use crate::kir::{Block, Function, Kernel, StmtKind};

/// Unroll every innermost loop of the kernel, and of its functions where
/// `functions` says so.
pub fn unroll(kernel: &mut Kernel, factor: usize, functions: bool) {
    if factor < 2 {
        return;
    }
    unroll_fn(&mut kernel.entry, factor);
    if !functions {
        return;
    }
    let handles: Vec<_> = kernel.functions.iter().map(|(h, _)| h).collect();
    for h in handles {
        unroll_fn(&mut kernel.functions[h], factor);
    }
}

fn unroll_fn(f: &mut Function, factor: usize) {
    block(&mut f.body, factor);
}

/// Returns whether `b` contains a loop (at any depth).
fn block(b: &mut Block, factor: usize) -> bool {
    let mut has_loop = false;
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::If { then, els, .. } => {
                let a = block(then, factor);
                let e = block(els, factor);
                has_loop |= a || e;
            }
            StmtKind::Loop { body, continuing } => {
                has_loop = true;
                let inner = block(body, factor) | block(continuing, factor);
                if !inner && unrollable(body) && unrollable(continuing) {
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
                block(&mut v.body, factor);
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
