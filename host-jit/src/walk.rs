//! The locals a piece of HIR names.

use lang::hir::{Body, Expr, ExprH, Place, Stmt, StmtKind};

/// Push every local that statements `b` name (read, written or declared).
pub fn locals(body: &Body, b: &[Stmt], out: &mut Vec<usize>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, init } => {
                out.push(local.index());
                expr(body, *init, out);
            }
            StmtKind::Assign { place, value, .. } => {
                match place {
                    Place::Local(l) => out.push(l.index()),
                    Place::Global(_) => {}
                    Place::Element { array, indices } => {
                        expr(body, *array, out);
                        for &i in indices {
                            expr(body, i, out);
                        }
                    }
                }
                expr(body, *value, out);
            }
            StmtKind::Expr(e) => expr(body, *e, out),
            StmtKind::If { cond, then, els } => {
                expr(body, *cond, out);
                locals(body, then, out);
                locals(body, els, out);
            }
            StmtKind::While { cond, body: b } => {
                expr(body, *cond, out);
                locals(body, b, out);
            }
            StmtKind::For(fl) => {
                out.push(fl.header.var.index());
                expr(body, fl.header.lo, out);
                expr(body, fl.header.hi, out);
                locals(body, &fl.body, out);
            }
            StmtKind::Return(Some(e)) => expr(body, *e, out),
            StmtKind::LetTuple { locals: ls, init } => {
                out.extend(ls.iter().flatten().map(|l| l.index()));
                expr(body, *init, out);
            }
            StmtKind::Block(b) => locals(body, b, out),
            _ => {}
        }
    }
}

fn expr(body: &Body, e: ExprH, out: &mut Vec<usize>) {
    match &body.exprs[e] {
        Expr::Local(l) => out.push(l.index()),
        Expr::Unary(_, a) | Expr::Cast(a, _) => expr(body, *a, out),
        Expr::Binary(_, a, b) => {
            expr(body, *a, out);
            expr(body, *b, out);
        }
        Expr::Index(a, ix) => {
            expr(body, *a, out);
            for &i in ix {
                expr(body, i, out);
            }
        }
        Expr::Call(_, args) | Expr::Builtin(_, args) | Expr::Array(_, args) | Expr::Tuple(args) => {
            for &a in args {
                expr(body, a, out);
            }
        }
        _ => {}
    }
}

/// Whether statements `b` count operations of their own (a loop turn or a
/// call), which a compiled loop around them must check one by one.
pub fn ticks(body: &Body, b: &[Stmt]) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::For(_) | StmtKind::While { .. } => true,
        StmtKind::If { cond, then, els } => {
            calls(body, *cond) || ticks(body, then) || ticks(body, els)
        }
        StmtKind::Block(b) => ticks(body, b),
        StmtKind::Let { init: e, .. }
        | StmtKind::LetTuple { init: e, .. }
        | StmtKind::Expr(e)
        | StmtKind::Return(Some(e)) => calls(body, *e),
        StmtKind::Assign { place, value, .. } => {
            calls(body, *value)
                || match place {
                    Place::Element { array, indices } => {
                        calls(body, *array) || indices.iter().any(|&i| calls(body, i))
                    }
                    _ => false,
                }
        }
        _ => false,
    })
}

fn calls(body: &Body, e: ExprH) -> bool {
    match &body.exprs[e] {
        Expr::Call(..) => true,
        Expr::Unary(_, a) | Expr::Cast(a, _) => calls(body, *a),
        Expr::Binary(_, a, b) => calls(body, *a) || calls(body, *b),
        Expr::Index(a, ix) => calls(body, *a) || ix.iter().any(|&i| calls(body, i)),
        Expr::Builtin(_, args) | Expr::Array(_, args) | Expr::Tuple(args) => {
            args.iter().any(|&a| calls(body, a))
        }
        _ => false,
    }
}

/// Whether statements `b` assign local `var` (or declare it anew).
pub fn assigns(b: &[Stmt], var: usize) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Let { local, .. } => local.index() == var,
        StmtKind::LetTuple { locals: ls, .. } => ls.iter().flatten().any(|l| l.index() == var),
        StmtKind::Assign {
            place: Place::Local(l),
            ..
        } => l.index() == var,
        StmtKind::For(fl) => fl.header.var.index() == var || assigns(&fl.body, var),
        StmtKind::While { body: w, .. } => assigns(w, var),
        StmtKind::If { then, els, .. } => assigns(then, var) || assigns(els, var),
        StmtKind::Block(b) => assigns(b, var),
        _ => false,
    })
}

/// The largest constant offset `i + c` a bounds proof takes (so that
/// `lo + c` and `end + c` cannot wrap for bounds of either sign).
pub const MAX_OFFSET: i64 = 1 << 20;

/// `Some(c)` when index expression `e` is local `var` plus the integer
/// constant `c` (`var`, `var + c`, `c + var`, `var - c`).
pub fn offset_of(body: &Body, e: ExprH, var: usize) -> Option<i64> {
    use lang::ast::BinOp;
    let is_var = |e: ExprH| matches!(body.exprs[e], Expr::Local(l) if l.index() == var);
    let int = |e: ExprH| match body.exprs[e] {
        Expr::Const(lang::Value::I32(c)) => Some(c as i64),
        Expr::Const(lang::Value::I64(c)) => Some(c),
        Expr::Const(lang::Value::IntLit(c)) => i64::try_from(c).ok(),
        _ => None,
    };
    let c = match &body.exprs[e] {
        Expr::Local(l) if l.index() == var => 0,
        Expr::Binary(BinOp::Add, a, b) if is_var(*a) => int(*b)?,
        Expr::Binary(BinOp::Add, a, b) if is_var(*b) => int(*a)?,
        Expr::Binary(BinOp::Sub, a, b) if is_var(*a) => int(*b)?.checked_neg()?,
        _ => return None,
    };
    (c.abs() <= MAX_OFFSET).then_some(c)
}

/// Push (array local, axis, c) for every element access in `b` whose index
/// on that axis is local `var` plus a constant `c` ([`offset_of`]).
pub fn indexed_by(body: &Body, b: &[Stmt], var: usize, out: &mut Vec<(usize, usize, i64)>) {
    let mut es = Vec::new();
    exprs_of(b, &mut es);
    for s in b {
        if let StmtKind::Assign {
            place: Place::Element { array, indices },
            ..
        } = &s.kind
        {
            access(body, *array, indices, var, out);
        }
    }
    for e in es {
        index_uses(body, e, var, out);
    }
}

fn access(
    body: &Body,
    array: ExprH,
    indices: &[ExprH],
    var: usize,
    out: &mut Vec<(usize, usize, i64)>,
) {
    if let Expr::Local(a) = body.exprs[array] {
        for (axis, &i) in indices.iter().enumerate() {
            if let Some(c) = offset_of(body, i, var) {
                out.push((a.index(), axis, c));
            }
        }
    }
}

fn index_uses(body: &Body, e: ExprH, var: usize, out: &mut Vec<(usize, usize, i64)>) {
    match &body.exprs[e] {
        Expr::Index(a, ix) => {
            access(body, *a, ix, var, out);
            for &i in ix {
                index_uses(body, i, var, out);
            }
        }
        Expr::Unary(_, a) | Expr::Cast(a, _) => index_uses(body, *a, var, out),
        Expr::Binary(_, a, b) => {
            index_uses(body, *a, var, out);
            index_uses(body, *b, var, out);
        }
        Expr::Call(_, args) | Expr::Builtin(_, args) | Expr::Array(_, args) | Expr::Tuple(args) => {
            for &a in args {
                index_uses(body, a, var, out);
            }
        }
        _ => {}
    }
}

/// The expressions statements `b` evaluate directly (nested statements'
/// included; element places' indices are added by the caller).
fn exprs_of(b: &[Stmt], out: &mut Vec<ExprH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { init: e, .. }
            | StmtKind::LetTuple { init: e, .. }
            | StmtKind::Expr(e)
            | StmtKind::Return(Some(e)) => out.push(*e),
            StmtKind::Assign { place, value, .. } => {
                out.push(*value);
                if let Place::Element { indices, .. } = place {
                    out.extend(indices.iter().copied());
                }
            }
            StmtKind::If { cond, then, els } => {
                out.push(*cond);
                exprs_of(then, out);
                exprs_of(els, out);
            }
            StmtKind::While { cond, body: w } => {
                out.push(*cond);
                exprs_of(w, out);
            }
            StmtKind::For(fl) => {
                out.push(fl.header.lo);
                out.push(fl.header.hi);
                exprs_of(&fl.body, out);
            }
            StmtKind::Block(b) => exprs_of(b, out),
            _ => {}
        }
    }
}

/// Push the index of every function that statements `b` call directly.
pub fn callees(body: &Body, b: &[Stmt], out: &mut Vec<usize>) {
    let mut es = Vec::new();
    exprs_of(b, &mut es);
    for e in es {
        calls_in(body, e, out);
    }
}

fn calls_in(body: &Body, e: ExprH, out: &mut Vec<usize>) {
    match &body.exprs[e] {
        Expr::Call(f, args) => {
            out.push(f.index());
            args.iter().for_each(|&a| calls_in(body, a, out));
        }
        Expr::Unary(_, a) | Expr::Cast(a, _) => calls_in(body, *a, out),
        Expr::Binary(_, a, b) => {
            calls_in(body, *a, out);
            calls_in(body, *b, out);
        }
        Expr::Index(a, ix) => {
            calls_in(body, *a, out);
            ix.iter().for_each(|&i| calls_in(body, i, out));
        }
        Expr::Builtin(_, args) | Expr::Array(_, args) | Expr::Tuple(args) => {
            args.iter().for_each(|&a| calls_in(body, a, out));
        }
        _ => {}
    }
}
