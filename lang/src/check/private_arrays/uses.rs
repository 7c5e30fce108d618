//! The rewrite of a private array's uses: each element `c[i, j]` becomes
//! the hidden array's `c'private<n>[k, i - lo0, j - lo1]`.

use super::{bin, cast, e, is_zero, var, Walk};
use crate::ast::{
    BinOp, ClauseArgs, DirectiveBody, Expr, ExprKind, ForLoop, SectionAxis, Stmt, StmtKind,
};
use crate::diag::Diag;
use crate::types::Scalar;

impl Walk<'_, '_> {
    /// Rewrite the uses of `name` in `stmts` (until a declaration shadows
    /// it); was there one?
    pub(super) fn rewrite_stmts(
        &mut self,
        stmts: &mut [Stmt],
        name: &str,
        hidden: &str,
        k: &Expr,
        los: &[Option<Expr>],
    ) -> bool {
        let mut used = false;
        for s in stmts {
            match &mut s.kind {
                StmtKind::Let { name: n, init, .. } | StmtKind::Const { name: n, init, .. } => {
                    used |= self.rewrite_expr(init, name, hidden, k, los);
                    if n.name == name {
                        return used;
                    }
                }
                StmtKind::LetTuple { pats, init } => {
                    used |= self.rewrite_expr(init, name, hidden, k, los);
                    if pats.iter().any(|p| p.name.name == name) {
                        return used;
                    }
                }
                StmtKind::Assign { target, value, .. } | StmtKind::Atomic { target, value, .. } => {
                    used |= self.rewrite_expr(target, name, hidden, k, los);
                    used |= self.rewrite_expr(value, name, hidden, k, los);
                }
                StmtKind::Expr(x) | StmtKind::Return(Some(x)) => {
                    used |= self.rewrite_expr(x, name, hidden, k, los)
                }
                StmtKind::If { cond, then, els } => {
                    used |= self.rewrite_expr(cond, name, hidden, k, los);
                    used |= self.rewrite_stmts(&mut then.stmts, name, hidden, k, los);
                    if let Some(b) = els {
                        used |= self.rewrite_stmts(&mut b.stmts, name, hidden, k, los);
                    }
                }
                StmtKind::While { cond, body } => {
                    used |= self.rewrite_expr(cond, name, hidden, k, los);
                    used |= self.rewrite_stmts(&mut body.stmts, name, hidden, k, los);
                }
                StmtKind::Block(body) => {
                    used |= self.rewrite_stmts(&mut body.stmts, name, hidden, k, los)
                }
                StmtKind::For(f) => used |= self.rewrite_for(f, name, hidden, k, los),
                StmtKind::AtomicForm { stmts, .. } => {
                    used |= self.rewrite_stmts(stmts, name, hidden, k, los)
                }
                StmtKind::Cache(xs) => {
                    for x in xs {
                        used |= self.rewrite_expr(x, name, hidden, k, los);
                    }
                }
                StmtKind::Directive(d) => {
                    for c in &mut d.clauses {
                        if let ClauseArgs::List(l) = &mut c.args {
                            for x in l {
                                used |= self.rewrite_expr(x, name, hidden, k, los);
                            }
                        }
                    }
                    match &mut d.body {
                        DirectiveBody::Block(b) => {
                            used |= self.rewrite_stmts(&mut b.stmts, name, hidden, k, los)
                        }
                        DirectiveBody::For(f) => used |= self.rewrite_for(f, name, hidden, k, los),
                        DirectiveBody::None => {}
                    }
                }
                _ => {}
            }
        }
        used
    }

    fn rewrite_for(
        &mut self,
        f: &mut ForLoop,
        name: &str,
        hidden: &str,
        k: &Expr,
        los: &[Option<Expr>],
    ) -> bool {
        let mut used = self.rewrite_expr(&mut f.lo, name, hidden, k, los);
        used |= self.rewrite_expr(&mut f.hi, name, hidden, k, los);
        if f.var.name != name {
            used |= self.rewrite_stmts(&mut f.body.stmts, name, hidden, k, los);
        }
        used
    }

    fn rewrite_expr(
        &mut self,
        x: &mut Expr,
        name: &str,
        hidden: &str,
        k: &Expr,
        los: &[Option<Expr>],
    ) -> bool {
        let mut used = false;
        let span = x.span;
        match &mut x.kind {
            ExprKind::Index(a, ix) if matches!(&a.kind, ExprKind::Var(n) if n == name) => {
                for i in ix.iter_mut() {
                    self.rewrite_expr(i, name, hidden, k, los);
                }
                let mut new_ix = vec![k.clone()];
                for (i, ix) in ix.drain(..).enumerate() {
                    new_ix.push(match los.get(i).cloned().flatten() {
                        Some(lo) if !is_zero(&lo) => {
                            bin(BinOp::Sub, cast(ix, Scalar::I64), cast(lo, Scalar::I64))
                        }
                        _ => ix,
                    });
                }
                let a_span = a.span;
                *x = e(ExprKind::Index(Box::new(var(hidden, a_span)), new_ix), span);
                return true;
            }
            ExprKind::Var(n) if n == name => {
                self.err(
                    Diag::error(
                        "accl::device::private_array_use",
                        format!("`{name}` is private here: only its elements can be used"),
                        span,
                        "the whole array",
                    )
                    .with_help(format!(
                        "index it (`{name}[i]`); a private copy cannot be passed to a function, sectioned or measured"
                    )),
                );
                return true;
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => {
                used |= self.rewrite_expr(a, name, hidden, k, los)
            }
            ExprKind::Binary(_, a, b) => {
                used |= self.rewrite_expr(a, name, hidden, k, los);
                used |= self.rewrite_expr(b, name, hidden, k, los);
            }
            ExprKind::Index(a, ix) => {
                used |= self.rewrite_expr(a, name, hidden, k, los);
                for i in ix {
                    used |= self.rewrite_expr(i, name, hidden, k, los);
                }
            }
            ExprKind::Section(a, axes) => {
                used |= self.rewrite_expr(a, name, hidden, k, los);
                for ax in axes {
                    match ax {
                        SectionAxis::Range(p, q) => {
                            used |= self.rewrite_expr(p, name, hidden, k, los);
                            used |= self.rewrite_expr(q, name, hidden, k, los);
                        }
                        SectionAxis::Index(p) => used |= self.rewrite_expr(p, name, hidden, k, los),
                        SectionAxis::All(_) => {}
                    }
                }
            }
            ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
                for a in args {
                    used |= self.rewrite_expr(a, name, hidden, k, los);
                }
            }
            _ => {}
        }
        if used {
            // Children changed: recompute the node's depth.
            *x = Expr::new(std::mem::replace(&mut x.kind, ExprKind::Error), span);
        }
        used
    }
}
