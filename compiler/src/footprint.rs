//! Which rows of each array a kernel may touch, for the runtime's race
//! detection between async queues: a kernel of a flat `parallel loop` that
//! indexes an array's leading axis only with the outermost loop variable
//! plus a constant touches rows `lo + min .. hi + max` of the loop's range,
//! not the whole array. So blocks of rows computed on different queues (the
//! pipelined Mandelbrot) are not reported as racing. Anything else (another
//! index form, an access inside a device function, a reassigned loop
//! variable) is the whole array.

use crate::kir::{Block, Expr, ExprH, Function, Kernel, LocalH, Shape, StmtKind};
use lang::ast::BinOp;
use lang::Value;

/// Per array parameter (binding order): `Some((min, max))` when every
/// access's leading index is `levels[0].var + c` with `min <= c <= max`.
pub fn leading_offsets(k: &Kernel) -> Vec<Option<(i64, i64)>> {
    let n = k.arrays.len();
    let mut out: Vec<Option<(i64, i64)>> = vec![None; n];
    let mut whole = vec![k.shape != Shape::Flat || k.levels.is_empty(); n];
    for f in k.functions.iter().map(|(_, f)| f) {
        mark_all(f, &f.body, &mut whole);
    }
    if let Some(level) = k.levels.first() {
        let var = level.var;
        let mut accesses = Vec::new();
        let mut reassigned = false;
        for (h, _) in k.entry.exprs.iter() {
            if let Expr::Load { array, index } | Expr::Atomic { array, index, .. } =
                &k.entry.exprs[h]
            {
                accesses.push((array.index(), index.first().copied()));
            }
        }
        walk(&k.entry.body, var, &mut accesses, &mut reassigned);
        for (a, ix) in accesses {
            match ix.and_then(|e| offset_of(&k.entry, e, var)) {
                Some(c) if !reassigned => {
                    let r = out[a].get_or_insert((c, c));
                    *r = (r.0.min(c), r.1.max(c));
                }
                _ => whole[a] = true,
            }
        }
    }
    for (o, w) in out.iter_mut().zip(whole) {
        if w {
            *o = None;
        }
    }
    out
}

/// `var + c`, `var - c`, `c + var` or `var` (through casts).
fn offset_of(f: &Function, e: ExprH, var: LocalH) -> Option<i64> {
    match &f.exprs[e] {
        Expr::Local(l) if *l == var => Some(0),
        Expr::Cast(x, _) => offset_of(f, *x, var),
        Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let c = |h: ExprH| match &f.exprs[h] {
                Expr::Const(v) => const_int(v),
                _ => None,
            };
            match (offset_of(f, *a, var), c(*b), c(*a), offset_of(f, *b, var)) {
                (Some(x), Some(k), _, _) if *op == BinOp::Add => x.checked_add(k),
                (Some(x), Some(k), _, _) => x.checked_sub(k),
                (_, _, Some(k), Some(x)) if *op == BinOp::Add => x.checked_add(k),
                _ => None,
            }
        }
        _ => None,
    }
}

fn const_int(v: &Value) -> Option<i64> {
    match *v {
        Value::I32(x) => Some(x as i64),
        Value::I64(x) => Some(x),
        Value::U32(x) => Some(x as i64),
        Value::U8(x) => Some(x as i64),
        _ => None,
    }
}

/// Stores to array elements, and whether the loop variable is assigned.
fn walk(b: &Block, var: LocalH, out: &mut Vec<(usize, Option<ExprH>)>, reassigned: &mut bool) {
    for s in b {
        match &s.kind {
            StmtKind::StoreElem { array, index, .. } => {
                out.push((array.index(), index.first().copied()))
            }
            StmtKind::Store { local, .. } if *local == var => *reassigned = true,
            StmtKind::If { then, els, .. } => {
                walk(then, var, out, reassigned);
                walk(els, var, out, reassigned);
            }
            StmtKind::Loop { body, continuing } => {
                walk(body, var, out, reassigned);
                walk(continuing, var, out, reassigned);
            }
            StmtKind::VectorLoop(v) => walk(&v.body, var, out, reassigned),
            _ => {}
        }
    }
}

/// Arrays a device function touches: the whole array.
fn mark_all(f: &Function, b: &Block, whole: &mut [bool]) {
    for (h, _) in f.exprs.iter() {
        if let Expr::Load { array, .. } | Expr::Atomic { array, .. } = &f.exprs[h] {
            whole[array.index()] = true;
        }
    }
    for s in b {
        match &s.kind {
            StmtKind::StoreElem { array, .. } => whole[array.index()] = true,
            StmtKind::If { then, els, .. } => {
                mark_all(f, then, whole);
                mark_all(f, els, whole);
            }
            StmtKind::Loop { body, continuing } => {
                mark_all(f, body, whole);
                mark_all(f, continuing, whole);
            }
            StmtKind::VectorLoop(v) => mark_all(f, &v.body, whole),
            _ => {}
        }
    }
}
