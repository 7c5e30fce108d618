//! Loops whose trip count has a small constant bound, which the loop
//! watchdog need not count: `let k = 0; while k < 255 && .. { ..; k += 1; }`
//! (Mandelbrot's escape loop) cannot run away, and counting its back-edges
//! cost a fifth of that kernel's time on lavapipe.
//!
//! The proof is syntactic and conservative: the loop's first statement
//! leaves it unless `v < C` (or `v <= C`) holds, among conditions joined by
//! `&&`; `v` is an integer local set to a constant by the statement that
//! sets it last before the loop, with nothing in between that may set it;
//! inside the loop `v` is only ever set by top-level `v = v + s` (`s` a
//! positive constant), one of them on every path round the loop; `C` is a
//! constant, or a local set to one before the loop and never inside it.
//! Unrolled loops keep that shape (each copy of the body repeats the exit
//! test and the step), so the proof holds after unrolling too.

use crate::kir::{Block, Expr, ExprH, Function, LocalH, Stmt, StmtKind};
use lang::hir::{BinOp, UnOp};
use lang::Value;

/// Back-edges a loop may take and still be exempt from the watchdog.
pub const BOUNDED_MAX: i128 = 1 << 16;

/// Whether the loop `body`/`continuing`, preceded in its block by `before`,
/// takes at most [`BOUNDED_MAX`] back-edges by the rules above.
pub fn bounded(f: &Function, before: &[Stmt], body: &Block, continuing: &Block) -> bool {
    trip_bound(f, before, body, continuing).is_some_and(|n| n <= BOUNDED_MAX)
}

/// The most back-edges the loop can take, when the rules above prove one.
pub fn trip_bound(f: &Function, before: &[Stmt], body: &Block, continuing: &Block) -> Option<i128> {
    let Some(Stmt {
        kind: StmtKind::If { cond, then, els },
        ..
    }) = body.first()
    else {
        return None;
    };
    if !els.is_empty()
        || !matches!(
            then.as_slice(),
            [Stmt {
                kind: StmtKind::Break,
                ..
            }]
        )
    {
        return None;
    }
    let Expr::Unary(UnOp::Not, stay) = f.exprs[*cond] else {
        return None;
    };
    let mut conjuncts = Vec::new();
    split_and(f, stay, &mut conjuncts);
    conjuncts.into_iter().find_map(|c| {
        let Expr::Binary(op @ (BinOp::Lt | BinOp::Le), a, b) = f.exprs[c] else {
            return None;
        };
        let Expr::Local(v) = f.exprs[a] else {
            return None;
        };
        if !f.locals[v].ty.is_int() {
            return None;
        }
        let limit = match f.exprs[b] {
            Expr::Const(c) => int(c)?,
            Expr::Local(e) if e != v && !sets(body, e) && !sets(continuing, e) => {
                int(initial(f, before, e)?)?
            }
            _ => None?,
        };
        let start = int(initial(f, before, v)?)?;
        let step = steps(f, v, body, continuing)?;
        let end = if op == BinOp::Le { limit + 1 } else { limit };
        Some(((end - start).max(0) + step - 1) / step)
    })
}

fn split_and(f: &Function, e: ExprH, out: &mut Vec<ExprH>) {
    match f.exprs[e] {
        Expr::Binary(BinOp::And, a, b) => {
            split_and(f, a, out);
            split_and(f, b, out);
        }
        _ => out.push(e),
    }
}

fn int(v: Value) -> Option<i128> {
    match v {
        Value::I32(x) => Some(x.into()),
        Value::I64(x) => Some(x.into()),
        Value::U32(x) => Some(x.into()),
        Value::U8(x) => Some(x.into()),
        _ => None,
    }
}

/// The constant `v` holds on entry to the loop: the last statement before
/// it that may set `v` must set it, at the top level, to a constant.
fn initial(f: &Function, before: &[Stmt], v: LocalH) -> Option<Value> {
    for s in before.iter().rev() {
        match &s.kind {
            StmtKind::Store { local, value } if *local == v => {
                return match f.exprs[*value] {
                    Expr::Const(c) => Some(c),
                    _ => None,
                };
            }
            _ if sets(std::slice::from_ref(s), v) => return None,
            _ => {}
        }
    }
    None
}

/// The smallest step by which `v` grows per back-edge: every store to `v`
/// in the loop is a top-level `v = v + s`, and some such store is on every
/// path round the loop (in `continuing`, or in the body when nothing in it
/// can jump to `continuing` first).
fn steps(f: &Function, v: LocalH, body: &Block, continuing: &Block) -> Option<i128> {
    let step_of = |s: &Stmt| -> Option<Option<i128>> {
        match &s.kind {
            StmtKind::Store { local, value } if *local == v => {
                let Expr::Binary(BinOp::Add, a, b) = f.exprs[*value] else {
                    return None;
                };
                let k = match (&f.exprs[a], &f.exprs[b]) {
                    (Expr::Local(x), Expr::Const(c)) | (Expr::Const(c), Expr::Local(x))
                        if *x == v =>
                    {
                        int(*c)?
                    }
                    _ => None?,
                };
                (k >= 1).then_some(Some(k))
            }
            _ if sets(std::slice::from_ref(s), v) => None,
            _ => Some(None),
        }
    };
    let mut in_body = Vec::new();
    for s in body {
        in_body.extend(step_of(s)?);
    }
    let mut in_cont = Vec::new();
    for s in continuing {
        in_cont.extend(step_of(s)?);
    }
    let every_path = !in_cont.is_empty() || (!in_body.is_empty() && !continues(body));
    let smallest = in_body.iter().chain(&in_cont).min().copied()?;
    every_path.then_some(smallest)
}

/// Whether a statement of `b`, at any depth, may set local `v`.
fn sets(b: &[Stmt], v: LocalH) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Store { local, .. } => *local == v,
        StmtKind::CallTuple { results, .. } => results.contains(&v),
        StmtKind::If { then, els, .. } => sets(then, v) || sets(els, v),
        StmtKind::Loop { body, continuing } => sets(body, v) || sets(continuing, v),
        StmtKind::VectorLoop(l) => sets(&l.body, v),
        _ => false,
    })
}

/// Whether `b` holds a `continue` of the loop it is the body of (not one of
/// a loop nested in it).
fn continues(b: &[Stmt]) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Continue => true,
        StmtKind::If { then, els, .. } => continues(then) || continues(els),
        _ => false,
    })
}
