//! Which rows of each array a kernel may touch, for the runtime's race
//! detection between async queues. A kernel of a flat `parallel loop` (or
//! of a gang loop, with its worker and vector loops inside) whose
//! leading indices are sums of the outermost loop variable and of terms
//! fixed for the launch (constants and captured scalars: `j + 1`, `rows`,
//! `x * n + i`) touches the rows those reach over the loop's range, not the
//! whole array, worked out when it launches. So blocks of rows computed on
//! different queues (the pipelined Mandelbrot, a halo row beside the
//! interior) are not reported as racing. An access under an `if` whose
//! condition is fixed for the launch (`if i == 0` with `i` captured) counts
//! only when the condition holds at launch, so kernels that pick their
//! array by a captured scalar are not taken to touch the others. Anything
//! else (another index form, an access inside a device function, a
//! reassigned loop variable) is the whole array.

use crate::kir::{Block, Expr, ExprH, Function, Kernel, LocalH, Shape, StmtKind};
use lang::ast::{BinOp, UnOp};
use lang::Value;
use std::collections::HashMap;

/// How one access's leading index is made: the sum of `terms` (negated
/// where marked), each fixed for a launch (made of the kernel's captured
/// scalars and constants), plus the outermost loop variable when `var`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    pub terms: Vec<(bool, ExprH)>,
    pub var: bool,
    /// Locals the terms and guards read, each set once in the body to a
    /// fixed value (`errors[x] += 1` reads `x` through one such copy).
    pub locals: Vec<(LocalH, ExprH)>,
    /// Conditions fixed for the launch the access sits under, with the
    /// value each must have (`false` in an `else`): when one is known to
    /// differ at launch, the access does not happen.
    pub guards: Vec<(ExprH, bool)>,
}

/// An access of array parameter `.0` with leading index `.1` (`None`: no
/// index), under the fixed conditions `.2`.
type Access = (usize, Option<ExprH>, Vec<(ExprH, bool)>);

/// Per array parameter (binding order): `Some(leads)` when every access's
/// leading index is a [`Lead`] (`None`: the whole array).
pub fn leading_rows(k: &Kernel) -> Vec<Option<Vec<Lead>>> {
    let n = k.arrays.len();
    let mut out: Vec<Option<Vec<Lead>>> = vec![Some(Vec::new()); n];
    // A gang loop's iteration body is the entry as a flat loop's is; the
    // loops inside it (worker, vector, sequential) are walked like any
    // other, and an index made from their variables is the whole array.
    let outer = matches!(k.shape, Shape::Flat | Shape::Gang);
    let mut whole = vec![!outer || k.levels.is_empty(); n];
    for f in k.functions.iter().map(|(_, f)| f) {
        mark_all(f, &f.body, &mut whole);
    }
    if let Some(level) = k.levels.first() {
        let var = level.var;
        let mut stores = HashMap::new();
        count_stores(&k.entry.body, &mut stores);
        let once: HashMap<LocalH, ExprH> = stores
            .into_iter()
            .filter_map(|(l, (n, v))| (n == 1 && l != var).then_some((l, v)))
            .collect();
        let cx = Cx {
            f: &k.entry,
            var,
            once: &once,
        };
        let mut w = Walk {
            cx: &cx,
            guards: Vec::new(),
            accesses: Vec::new(),
            seen: vec![false; k.entry.exprs.len()],
            visits: 0,
            reassigned: false,
        };
        w.block(&k.entry.body);
        if w.visits > VISITS {
            for a in &mut w.accesses {
                a.2.clear();
            }
        }
        // Loads the statements do not reach (a vector loop's bounds, say)
        // count without guards.
        for (h, _) in k.entry.exprs.iter() {
            if let Expr::Load { array, index } | Expr::Atomic { array, index, .. } =
                &k.entry.exprs[h]
            {
                if !w.seen[h.index()] {
                    w.accesses
                        .push((array.index(), index.first().copied(), Vec::new()));
                }
            }
        }
        let reassigned = w.reassigned;
        for (a, ix, guards) in w.accesses {
            match ix.and_then(|e| cx.lead_of(e, 0)) {
                Some(mut l) if !reassigned => {
                    for (c, want) in guards {
                        cx.fixed_cond(c, 0, &mut l.locals);
                        l.guards.push((c, want));
                    }
                    if let Some(v) = &mut out[a] {
                        if !v.contains(&l) {
                            v.push(l);
                        }
                    }
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

/// What [`Cx::lead_of`] reads: the kernel's entry, its outer loop
/// variable, and the locals set once in the body.
struct Cx<'a> {
    f: &'a Function,
    var: LocalH,
    once: &'a HashMap<LocalH, ExprH>,
}

/// How deep a chain of once-set locals [`Cx::fixed`] follows.
const DEPTH: usize = 8;

impl Cx<'_> {
    /// `e` as a [`Lead`]: sums and differences of the loop variable (at
    /// most once, added) and terms fixed for the launch, through casts.
    fn lead_of(&self, e: ExprH, depth: usize) -> Option<Lead> {
        let mut locals = Vec::new();
        if self.fixed(e, depth, &mut locals) {
            return Some(Lead {
                terms: vec![(false, e)],
                var: false,
                locals,
                guards: Vec::new(),
            });
        }
        match &self.f.exprs[e] {
            Expr::Local(l) if *l == self.var => Some(Lead {
                terms: Vec::new(),
                var: true,
                locals: Vec::new(),
                guards: Vec::new(),
            }),
            Expr::Cast(x, _) => self.lead_of(*x, depth),
            // A copy of an index set once (`a[k] *= 2.0` keeps `k` in one).
            Expr::Local(l) if depth < DEPTH => {
                let &v = self.once.get(l)?;
                self.lead_of(v, depth + 1)
            }
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let a = self.lead_of(*a, depth)?;
                let mut b = self.lead_of(*b, depth)?;
                if b.var && (a.var || *op == BinOp::Sub) {
                    return None;
                }
                if *op == BinOp::Sub {
                    for t in &mut b.terms {
                        t.0 = !t.0;
                    }
                }
                let mut terms = a.terms;
                terms.extend(b.terms);
                let mut locals = a.locals;
                locals.extend(b.locals);
                Some(Lead {
                    terms,
                    var: a.var || b.var,
                    locals,
                    guards: Vec::new(),
                })
            }
            _ => None,
        }
    }

    /// Made only of constants, captured scalars and locals set once to
    /// such values (fixed for a launch), with integer arithmetic
    /// [`eval_fixed`] knows; the locals it reads go to `locals`.
    fn fixed(&self, e: ExprH, depth: usize, locals: &mut Vec<(LocalH, ExprH)>) -> bool {
        match &self.f.exprs[e] {
            Expr::Const(v) => const_int(v).is_some(),
            Expr::Param(_) => true,
            Expr::Local(l) if depth < DEPTH => match self.once.get(l) {
                Some(&v) if self.fixed(v, depth + 1, locals) => {
                    if !locals.contains(&(*l, v)) {
                        locals.push((*l, v));
                    }
                    true
                }
                _ => false,
            },
            Expr::Cast(x, t) => t.is_int() && self.fixed(*x, depth, locals),
            Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
                self.fixed(*a, depth, locals) && self.fixed(*b, depth, locals)
            }
            _ => false,
        }
    }
}

impl Cx<'_> {
    /// A condition made of comparisons of [`Cx::fixed`] integers, `!`,
    /// `&&`, `||` and constants: fixed for a launch.
    fn fixed_cond(&self, e: ExprH, depth: usize, locals: &mut Vec<(LocalH, ExprH)>) -> bool {
        match &self.f.exprs[e] {
            Expr::Const(Value::Bool(_)) => true,
            Expr::Unary(UnOp::Not, x) => self.fixed_cond(*x, depth, locals),
            Expr::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.fixed_cond(*a, depth, locals) && self.fixed_cond(*b, depth, locals)
            }
            Expr::Binary(
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
                a,
                b,
            ) => {
                // Into a scratch list: a comparison half fixed adds nothing.
                let mut l = locals.clone();
                let ok = self.fixed(*a, depth, &mut l) && self.fixed(*b, depth, &mut l);
                if ok {
                    *locals = l;
                }
                ok
            }
            _ => false,
        }
    }
}

/// Collects the array accesses of a kernel's statements, each with the
/// fixed conditions it sits under, and whether the loop variable is set.
struct Walk<'a> {
    cx: &'a Cx<'a>,
    guards: Vec<(ExprH, bool)>,
    accesses: Vec<Access>,
    seen: Vec<bool>,
    visits: usize,
    reassigned: bool,
}

/// How many expression visits [`Walk`] makes before it stops using guards.
const VISITS: usize = 100_000;

impl Walk<'_> {
    fn block(&mut self, b: &Block) {
        for s in b {
            match &s.kind {
                StmtKind::Store { local, value } => {
                    if *local == self.cx.var {
                        self.reassigned = true;
                    }
                    self.expr(*value);
                }
                StmtKind::StoreElem {
                    array,
                    index,
                    value,
                } => {
                    let g = self.guards.clone();
                    self.accesses
                        .push((array.index(), index.first().copied(), g));
                    for &i in index {
                        self.expr(i);
                    }
                    self.expr(*value);
                }
                StmtKind::Eval(e) | StmtKind::Return(Some(e)) => self.expr(*e),
                StmtKind::CallTuple { args, results, .. } => {
                    self.reassigned |= results.contains(&self.cx.var);
                    for &a in args {
                        self.expr(a);
                    }
                }
                StmtKind::ReturnTuple(args) => {
                    for &a in args {
                        self.expr(a);
                    }
                }
                StmtKind::If { cond, then, els } => {
                    self.expr(*cond);
                    let fixed = self.cx.fixed_cond(*cond, 0, &mut Vec::new());
                    for (branch, want) in [(then, true), (els, false)] {
                        if fixed {
                            self.guards.push((*cond, want));
                        }
                        self.block(branch);
                        if fixed {
                            self.guards.pop();
                        }
                    }
                }
                StmtKind::Loop { body, continuing } => {
                    self.block(body);
                    self.block(continuing);
                }
                StmtKind::VectorLoop(v) => self.block(&v.body),
                _ => {}
            }
        }
    }

    fn expr(&mut self, e: ExprH) {
        // A shared expression is walked again under each use's guards; a
        // kernel big enough to make that costly drops the guards instead.
        self.seen[e.index()] = true;
        self.visits += 1;
        if self.visits > VISITS {
            return;
        }
        let f = self.cx.f;
        match &f.exprs[e] {
            Expr::Load { array, index } | Expr::Atomic { array, index, .. } => {
                let g = self.guards.clone();
                self.accesses
                    .push((array.index(), index.first().copied(), g));
                for &i in index {
                    self.expr(i);
                }
                if let Expr::Atomic { value, .. } = &f.exprs[e] {
                    self.expr(*value);
                }
            }
            Expr::Unary(_, x) | Expr::Cast(x, _) => self.expr(*x),
            Expr::Binary(_, a, b) | Expr::Reduce(_, a, b) => {
                self.expr(*a);
                self.expr(*b);
            }
            Expr::Math(_, args) | Expr::Call(_, args) => {
                for &a in args {
                    self.expr(a);
                }
            }
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::InvocationIndex => {}
        }
    }
}

/// How many times each local is set in `b`, and the last value set (a
/// `CallTuple` sets fresh locals only, never one a lead can use).
fn count_stores(b: &Block, out: &mut HashMap<LocalH, (usize, ExprH)>) {
    for s in b {
        match &s.kind {
            StmtKind::Store { local, value } => {
                let e = out.entry(*local).or_insert((0, *value));
                *e = (e.0 + 1, *value);
            }
            StmtKind::If { then, els, .. } => {
                count_stores(then, out);
                count_stores(els, out);
            }
            StmtKind::Loop { body, continuing } => {
                // Set in a loop: possibly many times.
                let mut inner = HashMap::new();
                count_stores(body, &mut inner);
                count_stores(continuing, &mut inner);
                for (l, (_, v)) in inner {
                    out.insert(l, (2, v));
                }
            }
            StmtKind::VectorLoop(v) => {
                let mut inner = HashMap::new();
                count_stores(&v.body, &mut inner);
                for (l, (_, x)) in inner {
                    out.insert(l, (2, x));
                }
            }
            _ => {}
        }
    }
}

/// The value of a [`Cx::fixed`] expression, given the launch's captured
/// scalars (`param(i)`, `None` for a non-integer); `None` when it does not
/// fit its type (the access is then taken to be anywhere).
pub fn eval_fixed(
    f: &Function,
    e: ExprH,
    locals: &[(LocalH, ExprH)],
    param: &dyn Fn(u32) -> Option<i128>,
) -> Option<i128> {
    let ty = f.ty(e);
    let v = match &f.exprs[e] {
        Expr::Const(v) => const_int(v)? as i128,
        Expr::Param(p) => param(*p)?,
        Expr::Local(l) => {
            let &(_, v) = locals.iter().find(|(x, _)| x == l)?;
            eval_fixed(f, v, locals, param)?
        }
        Expr::Cast(x, _) => eval_fixed(f, *x, locals, param)?,
        Expr::Binary(op, a, b) => {
            let (a, b) = (
                eval_fixed(f, *a, locals, param)?,
                eval_fixed(f, *b, locals, param)?,
            );
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    // Integer arithmetic wraps on the device: a value outside the type is
    // not the row the kernel computes.
    let (lo, hi) = ty.int_range()?;
    (lo..=hi).contains(&v).then_some(v)
}

/// The value of a [`Cx::fixed_cond`] condition at launch; `None` when
/// unknown (a value that does not fit its type).
fn eval_cond(
    f: &Function,
    e: ExprH,
    locals: &[(LocalH, ExprH)],
    param: &dyn Fn(u32) -> Option<i128>,
) -> Option<bool> {
    match &f.exprs[e] {
        Expr::Const(Value::Bool(b)) => Some(*b),
        Expr::Unary(UnOp::Not, x) => eval_cond(f, *x, locals, param).map(|v| !v),
        Expr::Binary(BinOp::And, a, b) => match eval_cond(f, *a, locals, param) {
            Some(false) => Some(false),
            a => match (a, eval_cond(f, *b, locals, param)?) {
                (_, false) => Some(false),
                (Some(true), true) => Some(true),
                _ => None,
            },
        },
        Expr::Binary(BinOp::Or, a, b) => match eval_cond(f, *a, locals, param) {
            Some(true) => Some(true),
            a => match (a, eval_cond(f, *b, locals, param)?) {
                (_, true) => Some(true),
                (Some(false), false) => Some(false),
                _ => None,
            },
        },
        Expr::Binary(op, a, b) => {
            let (a, b) = (
                eval_fixed(f, *a, locals, param)?,
                eval_fixed(f, *b, locals, param)?,
            );
            Some(match op {
                BinOp::Eq => a == b,
                BinOp::Ne => a != b,
                BinOp::Lt => a < b,
                BinOp::Le => a <= b,
                BinOp::Gt => a > b,
                BinOp::Ge => a >= b,
                _ => return None,
            })
        }
        _ => None,
    }
}

/// The rows `[lo, hi)` that accesses `leads` of function `f` (the kernel's
/// entry) reach, given the outer loop's values `[l0, end)` and the launch's
/// captured scalars; `None` when unknown (the whole array).
pub fn rows_of(
    f: &Function,
    leads: &[Lead],
    level: Option<(i128, i128)>,
    param: &dyn Fn(u32) -> Option<i128>,
) -> Option<(i128, i128)> {
    let mut out: Option<(i128, i128)> = None;
    for l in leads {
        let skipped = l
            .guards
            .iter()
            .any(|&(c, want)| eval_cond(f, c, &l.locals, param).is_some_and(|v| v != want));
        if skipped {
            continue;
        }
        let mut base: i128 = 0;
        for &(neg, t) in &l.terms {
            let v = eval_fixed(f, t, &l.locals, param)?;
            base = if neg {
                base.checked_sub(v)?
            } else {
                base.checked_add(v)?
            };
        }
        let (lo, hi) = if l.var {
            let (l0, end) = level?;
            if l0 >= end {
                continue;
            }
            (base.checked_add(l0)?, base.checked_add(end)?)
        } else {
            (base, base.checked_add(1)?)
        };
        out = Some(match out {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }
    // No access at all: nothing is touched.
    Some(out.unwrap_or((0, 0)))
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
