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

/// Most turns a loop may have to be unrolled whole ([`full`]).
const FULL_TURNS: i128 = 32;
/// Most statements (at its top level) its unrolled copies may add.
const FULL_STMTS: i128 = 512;

/// Unroll whole every loop of the kernel's entry with a constant trip
/// count of at most [`FULL_TURNS`] whose body indexes one of `arrays` (a
/// lane's private copies kept as a local array): each turn's index is
/// then a constant, and a driver that keeps a local array indexed at run
/// time in memory (llvmpipe spills it) keeps this one in registers. The
/// loop is the lowering of `for v in lo..hi` with constant `lo` and `hi`:
/// `v = lo; end = hi; Loop { if !(v < end) { break }; body; continuing:
/// v = v + 1 }`, and becomes `v = lo; end = hi; body; v = v + 1; body;
/// ..` (`hi - lo` copies), when the body has no `break` or `continue` of
/// its own, no barrier and no vector loop.
pub fn full(kernel: &mut Kernel, arrays: &[crate::kir::ArrayH]) {
    if arrays.is_empty() {
        return;
    }
    let Function { body, exprs, .. } = &mut kernel.entry;
    full_block(body, exprs, arrays);
}

fn full_block(b: &mut Block, exprs: &Arena<Expr>, arrays: &[crate::kir::ArrayH]) {
    let mut i = 0;
    while i < b.len() {
        if let StmtKind::If { then, els, .. } = &mut b[i].kind {
            full_block(then, exprs, arrays);
            full_block(els, exprs, arrays);
        }
        if let StmtKind::Loop { body, continuing } = &mut b[i].kind {
            full_block(body, exprs, arrays);
            full_block(continuing, exprs, arrays);
        }
        let turns = match (i.checked_sub(2).map(|k| &b[k..=i]), &b[i].kind) {
            (Some([init, end, _]), StmtKind::Loop { body, continuing }) => {
                counted(init, end, body, continuing, exprs)
            }
            _ => None,
        };
        let StmtKind::Loop { body, continuing } = &b[i].kind else {
            i += 1;
            continue;
        };
        let Some(turns) = turns else {
            i += 1;
            continue;
        };
        let rest = &body[1..];
        let size = (rest.len() + continuing.len()) as i128;
        if turns > FULL_TURNS
            || turns * size > FULL_STMTS
            || !own_exits_free(rest)
            || !indexes(rest, exprs, arrays)
        {
            i += 1;
            continue;
        }
        let mut copies = Vec::with_capacity(turns as usize * size as usize);
        for _ in 0..turns {
            copies.extend(rest.iter().cloned());
            copies.extend(continuing.iter().cloned());
        }
        let n = copies.len();
        b.splice(i..=i, copies);
        i += n;
    }
}

/// The trip count of `Loop { body, continuing }` after `init` and `end`,
/// when it is the lowering of `for v in lo..hi` with constant bounds.
fn counted(
    init: &crate::kir::Stmt,
    end: &crate::kir::Stmt,
    body: &Block,
    continuing: &Block,
    exprs: &Arena<Expr>,
) -> Option<i128> {
    use lang::hir::{BinOp, UnOp};
    let (
        StmtKind::Store {
            local: v,
            value: lo,
        },
        StmtKind::Store {
            local: e,
            value: hi,
        },
    ) = (&init.kind, &end.kind)
    else {
        return None;
    };
    let konst = |x: ExprH| match &exprs[x] {
        Expr::Const(c) => c.as_i128(),
        _ => None,
    };
    let local = |x: ExprH, l| matches!(exprs[x], Expr::Local(y) if y == l);
    let (lo, hi) = (konst(*lo)?, konst(*hi)?);
    // if !(v < end) { break }
    let StmtKind::If { cond, then, els } = &body.first()?.kind else {
        return None;
    };
    let Expr::Unary(UnOp::Not, c) = exprs[*cond] else {
        return None;
    };
    let Expr::Binary(BinOp::Lt, a, z) = exprs[c] else {
        return None;
    };
    if !local(a, *v)
        || !local(z, *e)
        || !els.is_empty()
        || !matches!(then.as_slice(), [s] if matches!(s.kind, StmtKind::Break))
    {
        return None;
    }
    // continuing: v = v + 1
    let [step] = continuing.as_slice() else {
        return None;
    };
    let StmtKind::Store { local: sv, value } = &step.kind else {
        return None;
    };
    let Expr::Binary(BinOp::Add, a, one) = exprs[*value] else {
        return None;
    };
    if sv != v || !local(a, *v) || konst(one) != Some(1) {
        return None;
    }
    // Nothing else may assign `v` or `end`.
    if assigns(&body[1..], *v) || assigns(&body[1..], *e) {
        return None;
    }
    Some((hi - lo).max(0))
}

/// Whether `b` stores to local `l` (at any depth).
fn assigns(b: &[crate::kir::Stmt], l: crate::kir::LocalH) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Store { local, .. } => *local == l,
        StmtKind::CallTuple { results, .. } => results.contains(&l),
        StmtKind::If { then, els, .. } => assigns(then, l) || assigns(els, l),
        StmtKind::Loop { body, continuing } => assigns(body, l) || assigns(continuing, l),
        StmtKind::VectorLoop(v) => assigns(&v.body, l),
        _ => false,
    })
}

/// No `break` or `continue` that would leave or restart the loop `b` is
/// the body of (those inside nested loops are theirs), no barrier, no
/// vector loop.
fn own_exits_free(b: &[crate::kir::Stmt]) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Barrier
        | StmtKind::VectorLoop(_)
        | StmtKind::Return(_)
        | StmtKind::ReturnTuple(_) => false,
        StmtKind::If { then, els, .. } => own_exits_free(then) && own_exits_free(els),
        StmtKind::Loop { body, continuing } => no_barrier(body) && no_barrier(continuing),
        _ => true,
    })
}

fn no_barrier(b: &[crate::kir::Stmt]) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Barrier | StmtKind::VectorLoop(_) => false,
        StmtKind::If { then, els, .. } => no_barrier(then) && no_barrier(els),
        StmtKind::Loop { body, continuing } => no_barrier(body) && no_barrier(continuing),
        _ => true,
    })
}

/// Whether `b` (at any depth) loads or stores an element of `arrays`.
fn indexes(b: &[crate::kir::Stmt], exprs: &Arena<Expr>, arrays: &[crate::kir::ArrayH]) -> bool {
    fn expr(e: ExprH, exprs: &Arena<Expr>, arrays: &[crate::kir::ArrayH]) -> bool {
        matches!(&exprs[e], Expr::Load { array, .. } if arrays.contains(array))
            || exprs[e]
                .operands()
                .into_iter()
                .any(|o| expr(o, exprs, arrays))
    }
    b.iter().any(|s| match &s.kind {
        StmtKind::StoreElem {
            array,
            index,
            value,
        } => {
            arrays.contains(array)
                || expr(*value, exprs, arrays)
                || index.iter().any(|&i| expr(i, exprs, arrays))
        }
        StmtKind::Store { value, .. } | StmtKind::Eval(value) => expr(*value, exprs, arrays),
        StmtKind::If { cond, then, els } => {
            expr(*cond, exprs, arrays)
                || indexes(then, exprs, arrays)
                || indexes(els, exprs, arrays)
        }
        StmtKind::Loop { body, continuing } => {
            indexes(body, exprs, arrays) || indexes(continuing, exprs, arrays)
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::lower::first_kernel as kernel_of;

    fn loops(b: &[crate::kir::Stmt]) -> usize {
        b.iter()
            .map(|s| match &s.kind {
                StmtKind::Loop { body, continuing } => 1 + loops(body) + loops(continuing),
                StmtKind::If { then, els, .. } => loops(then) + loops(els),
                _ => 0,
            })
            .sum()
    }

    /// The loops left in the entry after unrolling the loops over the
    /// kernel's private copies whole.
    fn left(src: &str) -> (usize, usize) {
        let mut k = kernel_of(src);
        let before = loops(&k.entry.body);
        let arrays: Vec<_> = k.private_copies.iter().map(|p| p.array).collect();
        full(&mut k, &arrays);
        crate::validate(&k).expect("still a valid kernel");
        (before, loops(&k.entry.body))
    }

    #[test]
    fn constant_loops_over_a_private_copy_are_unrolled_whole() {
        let (before, after) = left(
            "let out = zeros(f32, 64); let t = zeros(f32, 16);
             parallel loop gang vector private(t) for i in 0..64 {
                 for k in 0..16 { t[k] = (i + k) as f32; }
                 let s = 0.0f32;
                 for k in 0..16 { s += t[k] * t[15 - k]; }
                 for k in 0..16 { out[i] += 1.0; }
                 out[i] += s;
             }",
        );
        // The third loop does not touch the copy: it stays.
        assert_eq!((before, after), (3, 1));
    }

    #[test]
    fn other_loops_over_a_private_copy_stay() {
        let cases = [
            // Bounds the launch gives.
            "let n = 16; let out = zeros(f32, 64); let t = zeros(f32, 16);
             parallel loop gang vector private(t) for i in 0..64 { for k in 0..n { t[k] = 1.0; } out[i] = t[0]; }",
            // More turns than are unrolled whole.
            "let out = zeros(f32, 64); let t = zeros(f32, 64);
             parallel loop gang vector private(t) for i in 0..64 { for k in 0..64 { t[k] = 1.0; } out[i] = t[0]; }",
            // A break of its own.
            "let out = zeros(f32, 64); let t = zeros(f32, 16);
             parallel loop gang vector private(t) for i in 0..64 {
                 for k in 0..16 { if k == i { break; } t[k] = 1.0; }
                 out[i] = t[0];
             }",
        ];
        for src in cases {
            let (before, after) = left(src);
            assert_eq!(before, after, "{src}");
            assert!(before >= 1, "{src}");
        }
    }
}
