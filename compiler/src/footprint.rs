//! Which rows of each array a kernel may touch, for the runtime's race
//! detection between async queues: a kernel of a flat `parallel loop` that
//! indexes an array's leading axis only with the outermost loop variable
//! plus a constant touches rows `lo + min .. hi + max` of the loop's range,
//! not the whole array. So blocks of rows computed on different queues (the
//! pipelined Mandelbrot) are not reported as racing. The constant may also
//! carry a captured scalar times a constant (`c[x * n + i]`, `x` the
//! host's), and an index of that scalar alone (`errors[x]`) touches its
//! own rows: both are evaluated at launch. Anything else (another index
//! form, an access inside a device function, a reassigned loop variable)
//! is the whole array.

use crate::kir::{Block, Expr, ExprH, Function, Kernel, LocalH, Shape, StmtKind};
use lang::ast::BinOp;
use lang::Value;

/// The leading indices of every access of one array: `base + c` with
/// `min <= c <= max`, `base` the sum of the outer loop variable (when
/// `var`) and `param * mult` (when `param` is `Some((i, mult))`, `i` a
/// captured scalar of [`Kernel::params`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lead {
    pub min: i64,
    pub max: i64,
    pub var: bool,
    pub param: Option<(u32, i64)>,
}

/// Per array parameter (binding order): the [`Lead`] of its accesses when
/// every one has the same base (the loop variable or a captured scalar).
pub fn leading_offsets(k: &Kernel) -> Vec<Option<Lead>> {
    let n = k.arrays.len();
    let mut out: Vec<Option<Lead>> = vec![None; n];
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
            match ix.and_then(|e| term(&k.entry, e, var)) {
                Some(t) if !reassigned && (t.var || t.param.is_some()) => {
                    let r = out[a].get_or_insert(Lead {
                        min: t.k,
                        max: t.k,
                        var: t.var,
                        param: t.param,
                    });
                    if r.var != t.var || r.param != t.param {
                        whole[a] = true;
                    }
                    r.min = r.min.min(t.k);
                    r.max = r.max.max(t.k);
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

/// An index as `k (+ var) (+ param * mult)`.
#[derive(Clone, Copy)]
struct Term {
    k: i64,
    var: bool,
    param: Option<(u32, i64)>,
}

/// `e` as a [`Term`] (through casts), if it is one.
fn term(f: &Function, e: ExprH, var: LocalH) -> Option<Term> {
    let konst = |k| Term {
        k,
        var: false,
        param: None,
    };
    match &f.exprs[e] {
        Expr::Local(l) if *l == var => Some(Term {
            k: 0,
            var: true,
            param: None,
        }),
        Expr::Const(v) => const_int(v).map(konst),
        Expr::Param(i) => Some(Term {
            k: 0,
            var: false,
            param: Some((*i, 1)),
        }),
        Expr::Cast(x, _) => term(f, *x, var),
        Expr::Binary(BinOp::Add, a, b) => {
            let (a, b) = (term(f, *a, var)?, term(f, *b, var)?);
            if (a.var && b.var) || (a.param.is_some() && b.param.is_some()) {
                return None;
            }
            Some(Term {
                k: a.k.checked_add(b.k)?,
                var: a.var || b.var,
                param: a.param.or(b.param),
            })
        }
        Expr::Binary(BinOp::Sub, a, b) => {
            let (a, b) = (term(f, *a, var)?, term(f, *b, var)?);
            if b.var || b.param.is_some() {
                return None;
            }
            Some(Term {
                k: a.k.checked_sub(b.k)?,
                ..a
            })
        }
        Expr::Binary(BinOp::Mul, a, b) => {
            let (a, b) = (term(f, *a, var)?, term(f, *b, var)?);
            let (t, c) = match (a.var || a.param.is_some(), b.var || b.param.is_some()) {
                (false, _) => (b, a.k),
                (_, false) => (a, b.k),
                _ => return None,
            };
            if t.var {
                return None;
            }
            Some(Term {
                k: t.k.checked_mul(c)?,
                var: false,
                param: match t.param {
                    Some((i, m)) => Some((i, m.checked_mul(c)?)),
                    None => None,
                },
            })
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
