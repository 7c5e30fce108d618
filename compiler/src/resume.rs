//! Kernels that stop and resume: on a driver with llvmpipe's loop cap
//! ([`crate::Spec::loop_cap`]: 65,535 back-edges per invocation and
//! dispatch, then every loop is left without a word), an invocation about
//! to go past it saves where it is and returns, and the runtime dispatches
//! the kernel again until no invocation did. More lanes cannot help a loop
//! that one lane must run in order (a `serial` count to 10^8), and nesting
//! it differently does not either (the cap counts every loop of the
//! invocation): only resuming does.
//!
//! Where: every loop of the entry function and the kernel's own loop is a
//! *resume point*, numbered in pre-order (the kernel's loop is 1, the
//! entry's loops from 2), so the points inside one statement are a
//! contiguous range. An invocation counts the turns of those loops; at
//! [`TURNS`] a loop's back-edge leaves it (the test joins the loop's own,
//! with no branch), and after it the invocation stores its state in its
//! slot of the resume buffer (binding after the fault buffer) and returns;
//! it resumes at the loop's top (the kernel's loop tests at the top of its
//! body instead).
//!
//! The resume buffer: word 0 is set when some invocation stopped (the
//! runtime clears it before each dispatch); then one slot per invocation
//! (by its global index), [`slot_words`] words: the point it stopped at
//! (0: it has not run, [`DONE`]: it finished), the kernel loop's counter
//! (two words), the watchdog's count, and every local of the entry function
//! (two words for 64-bit types, bools as 0/1). On resuming, an invocation
//! loads them back and skips every statement that holds no point up to the
//! one it stopped at: a statement without one runs only when not resuming,
//! an `if` holding it takes the branch that does, a loop holding it is
//! entered and its body skipped down to it.
//!
//! Which kernels ([`resumable`]): flat, `seq` and region kernels without
//! reductions (their partials fold across the workgroup once, at the end),
//! barriers (but those of a region of one-lane gangs, `serial`'s, which
//! wait for no one), `loop vector`, cached sections, private copies or
//! privatised atomics (workgroup memory does not outlive a dispatch), whose
//! `if` conditions around loops have no effect (they are evaluated again
//! on resuming). Loops of called functions cannot stop midway: they count
//! toward the cap as before, and the cut guard reports a cut.

use crate::kir::{Block, Expr, ExprH, Function, Kernel, Shape, Stmt, StmtKind};
use lang::Scalar;

/// Turns one invocation makes at resume points in one dispatch before it
/// stops: half the cap, leaving room for loops not counted (a called
/// function's, float `%`).
pub const TURNS: u32 = 32_768;

/// A slot's first word once its invocation has finished.
pub const DONE: u32 = u32::MAX;

/// Words before the locals in a slot: the point, the kernel loop's
/// counter (two words whatever the index width) and the watchdog's count.
pub const HEAD_WORDS: u32 = 4;

/// Can `k` stop and resume (module doc)? Only asked where the driver has
/// the loop cap and the kernel may reach it.
pub fn resumable(k: &Kernel) -> bool {
    let shape_ok = match k.shape {
        Shape::Flat => k.tile.is_none(),
        Shape::Seq | Shape::Region => true,
        Shape::Gang => false,
    };
    shape_ok
        && k.reductions.is_empty()
        && k.private_copies.is_empty()
        && !k.private_atomics
        && !k.facts.caches
        && block_ok(&k.entry, &k.entry.body, lone(k))
}

/// A region whose gangs are one lane each (`serial`): its barriers (the
/// gang-redundant code's) hold no other invocation up.
fn lone(k: &Kernel) -> bool {
    k.shape == Shape::Region && k.vector_length == Some(1) && k.num_workers.unwrap_or(1) == 1
}

fn block_ok(f: &Function, b: &Block, lone: bool) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Barrier => lone,
        StmtKind::VectorLoop(_)
        | StmtKind::Cache { .. }
        | StmtKind::PrivateInit(_)
        | StmtKind::Return(_)
        | StmtKind::ReturnTuple(_) => false,
        StmtKind::If { cond, then, els } => {
            (!has_loop(then) && !has_loop(els) || !has_effect(f, *cond))
                && block_ok(f, then, lone)
                && block_ok(f, els, lone)
        }
        StmtKind::Loop { body, continuing } => {
            block_ok(f, body, lone) && block_ok(f, continuing, lone)
        }
        _ => true,
    })
}

/// Does evaluating `e` do something besides giving a value?
fn has_effect(f: &Function, e: ExprH) -> bool {
    matches!(f.exprs[e], Expr::Atomic { .. } | Expr::Call(..))
        || f.exprs[e].operands().into_iter().any(|o| has_effect(f, o))
}

/// Does block `b` hold a loop?
pub fn has_loop(b: &Block) -> bool {
    b.iter().any(|s| points_in(s) > 0)
}

/// The resume points in statement `s` (its own and those nested in it).
pub fn points_in(s: &Stmt) -> u32 {
    let inner = |b: &Block| b.iter().map(points_in).sum::<u32>();
    match &s.kind {
        StmtKind::Loop { body, continuing } => 1 + inner(body) + inner(continuing),
        StmtKind::If { then, els, .. } => inner(then) + inner(els),
        _ => 0,
    }
}

/// Words of one invocation's slot in the resume buffer.
pub fn slot_words(k: &Kernel) -> u32 {
    HEAD_WORDS
        + k.entry
            .locals
            .iter()
            .map(|(_, l)| local_words(l.ty))
            .sum::<u32>()
}

/// Words a local of type `t` takes in a slot.
pub fn local_words(t: Scalar) -> u32 {
    match t {
        Scalar::I64 | Scalar::F64 => 2,
        _ => 1,
    }
}

/// Bytes of the resume buffer for `invocations` of `k` (the layout is the
/// same at either index width: the counter always has two words).
pub fn buffer_bytes(k: &Kernel, invocations: u64) -> u64 {
    4 * (1 + invocations * slot_words(k) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel of the first construct of `src`.
    fn kernel_of(src: &str) -> Kernel {
        let b = stdlib::builtins();
        let program = lang::check_source(src, &b).unwrap().program;
        let c = program
            .main
            .block
            .iter()
            .find_map(|s| match &s.kind {
                lang::hir::StmtKind::Construct(c) => Some(c),
                _ => None,
            })
            .unwrap();
        crate::lower(&program, &program.main, c, &b).unwrap()
    }

    #[test]
    fn which_kernels_resume() {
        let yes = [
            "let a = zeros(f32, 4); let n = 9; serial { let k = 0; for i in 0..n { k += 1; } a[0] = k as f32; }",
            "let a = zeros(f32, 4); let n = 9; parallel loop for i in 0..4 { let k = 0; while k < n { k += 1; } a[i] = k as f32; }",
            "let a = zeros(f32, 4); let n = 9; parallel loop seq for i in 0..4 { for j in 0..n { a[i] += 1.0; } }",
        ];
        for src in yes {
            assert!(resumable(&kernel_of(src)), "{src}");
        }
        let no = [
            // A reduction folds across the workgroup at the end.
            "let s = 0; let n = 9; parallel loop reduction(+: s) for i in 0..4 { for j in 0..n { s += 1; } }",
            // The condition around a loop updates an array.
            "let a = zeros(i32, 4); let b = zeros(i32, 4); let n = 9; parallel loop for i in 0..4 { if atomic_add(a[0], 1) > 0 { for j in 0..n { b[i] += 1; } } }",
        ];
        for src in no {
            assert!(!resumable(&kernel_of(src)), "{src}");
        }
    }

    #[test]
    fn points_are_counted_in_each_statement() {
        let k = kernel_of(
            "let a = zeros(f32, 4); let n = 9; serial {
                 for i in 0..n { for j in 0..n { a[0] += 1.0; } }
                 if n > 3 { for i in 0..n { a[1] += 1.0; } } else { a[2] = 1.0; }
             }",
        );
        let points: Vec<u32> = k.entry.body.iter().map(points_in).collect();
        assert!(points.contains(&2) && points.contains(&1), "{points:?}");
        assert_eq!(points.iter().sum::<u32>(), 3);
    }
}
