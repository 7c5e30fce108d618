//! The OpenACC spellings of `atomic` other than `atomic x op= e;`:
//! `atomic [update] x = x op e;`, `x = e op x;`, `x /= e;` (also `<<=`,
//! `>>=`), and `atomic capture` with one or two assignments. Each is
//! desugared to what the backends already run: the update statement
//! (`hir::StmtKind::Atomic`) or a call of a capture builtin
//! (`atomic_add(x, e)` and the others of [`AtomicOp::builtin`], which return
//! the old value; `atomic_xchg` for a write).

use super::Checker;
use crate::ast::{self, AtomicOp, BinOp, Expr, ExprKind, Ident, Stmt, StmtKind};
use crate::diag::Diag;
use crate::hir;
use crate::span::Span;

/// What an assignment inside `atomic` does to its target.
enum Update<'a> {
    /// `x op= e` in any spelling.
    Op(AtomicOp, &'a Expr),
    /// `x = e` (`e` does not read `x`).
    Write(&'a Expr),
}

const HELP: &str = "write `x op= e;`, `x = x op e;` or `x = e op x;` with op one of \
                    `+ - * / & | ^ << >>`, or `x = max(x, e);` / `min`";

type Assign<'a> = (&'a Expr, Option<BinOp>, Span, &'a Expr);

fn assign(st: &Stmt) -> Option<Assign<'_>> {
    match &st.kind {
        StmtKind::Assign {
            target,
            op,
            op_span,
            value,
        } => Some((target, *op, *op_span, value)),
        _ => None,
    }
}

impl Checker<'_> {
    fn text(&self, e: &Expr) -> String {
        self.src[e.span.start as usize..e.span.end as usize]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }

    /// The update an assignment `target op= value` / `target = value` makes,
    /// or `None` when it is none of the atomic forms. `write` accepts
    /// `x = e` with `e` not reading `x`.
    fn atomic_update<'a>(
        &self,
        target: &Expr,
        op: Option<BinOp>,
        value: &'a Expr,
        write: bool,
    ) -> Option<Update<'a>> {
        let of = |b: BinOp| match b {
            BinOp::Add => Some(AtomicOp::Add),
            BinOp::Sub => Some(AtomicOp::Sub),
            BinOp::Mul => Some(AtomicOp::Mul),
            BinOp::Div => Some(AtomicOp::Div),
            BinOp::BitAnd => Some(AtomicOp::And),
            BinOp::BitOr => Some(AtomicOp::Or),
            BinOp::BitXor => Some(AtomicOp::Xor),
            BinOp::Shl => Some(AtomicOp::Shl),
            BinOp::Shr => Some(AtomicOp::Shr),
            _ => None,
        };
        if let Some(b) = op {
            return of(b).map(|o| Update::Op(o, value));
        }
        let x = self.text(target);
        match &value.kind {
            ExprKind::Binary(b, l, r) if self.text(l) == x => of(*b).map(|o| Update::Op(o, r)),
            ExprKind::Binary(b, l, r) if self.text(r) == x => {
                let o = match b {
                    BinOp::Sub => Some(AtomicOp::RevSub),
                    BinOp::Div => Some(AtomicOp::RevDiv),
                    BinOp::Shl => Some(AtomicOp::RevShl),
                    BinOp::Shr => Some(AtomicOp::RevShr),
                    b => of(*b),
                };
                o.map(|o| Update::Op(o, l))
            }
            ExprKind::Call(f, args)
                if args.len() == 2 && matches!(f.name.as_str(), "max" | "min") =>
            {
                let o = if f.name == "max" {
                    AtomicOp::Max
                } else {
                    AtomicOp::Min
                };
                if self.text(&args[0]) == x {
                    Some(Update::Op(o, &args[1]))
                } else if self.text(&args[1]) == x {
                    Some(Update::Op(o, &args[0]))
                } else {
                    None
                }
            }
            _ if write
                && !self.src[value.span.start as usize..value.span.end as usize]
                    .contains(&self.src[target.span.start as usize..target.span.end as usize]) =>
            {
                Some(Update::Write(value))
            }
            _ => None,
        }
    }

    fn bad_atomic(&mut self, span: Span, message: &str, label: &str) -> Option<hir::Stmt> {
        self.err(
            Diag::error(
                "accl::device::atomic_form",
                message.to_string(),
                span,
                label.to_string(),
            )
            .with_help(HELP),
        );
        None
    }

    /// `atomic [update] ..` (`capture` false, one assignment) or
    /// `atomic capture ..` (two assignments).
    pub(super) fn atomic_form(
        &mut self,
        s: &Stmt,
        capture: bool,
        stmts: &[Stmt],
    ) -> Option<hir::Stmt> {
        if !capture {
            let Some((target, op, op_span, value)) = stmts.first().and_then(assign) else {
                return self.bad_atomic(s.span, "not an atomic update", "expected `x op= e;`");
            };
            let Some(Update::Op(o, e)) = self.atomic_update(target, op, value, false) else {
                return self.bad_atomic(
                    stmts[0].span,
                    "this assignment is not an atomic update of its target",
                    "not `x op= e`, `x = x op e` or `x = e op x`",
                );
            };
            return self.atomic(s, target, o, op_span, e, false);
        }
        let pair = match stmts {
            [a, b] => assign(a).zip(assign(b)),
            _ => None,
        };
        let Some((first, second)) = pair else {
            return self.bad_atomic(
                s.span,
                "`atomic capture` takes two assignments",
                "expected `{ v = x; x op= e; }` or `{ x op= e; v = x; }`",
            );
        };
        // `{ v = x; x .. }`: the old value; `{ x ..; v = x; }`: the new one.
        let is_read = |me: &Self, (_, op, _, value): Assign<'_>, x: &Expr| {
            op.is_none() && me.text(value) == me.text(x)
        };
        let (v, (x, op, op_span, value), old) = if is_read(self, first, second.0) {
            (first.0, second, true)
        } else if is_read(self, second, first.0) {
            (second.0, first, false)
        } else {
            return self.bad_atomic(
                s.span,
                "`atomic capture` needs a read `v = x;` of the updated element",
                "no `v = x` of the element the other assignment updates",
            );
        };
        let Some(update) = self.atomic_update(x, op, value, true) else {
            return self.bad_atomic(
                if old { stmts[1].span } else { stmts[0].span },
                "this assignment is not an atomic update of its target",
                "not `x op= e`, `x = x op e`, `x = e op x` or `x = e`",
            );
        };
        let call = |name: &str, e: Expr| {
            let f = Ident {
                name: name.to_string(),
                span: s.span,
            };
            Expr::new(ExprKind::Call(f, vec![x.clone(), e]), s.span)
        };
        let assign_v = |value: Expr| Stmt {
            kind: StmtKind::Assign {
                target: v.clone(),
                op: None,
                op_span,
                value,
            },
            span: s.span,
        };
        let (name, e) = match update {
            Update::Op(o, e) => (o.builtin(), e),
            Update::Write(e) => ("atomic_xchg", e),
        };
        if old {
            return self.stmt(&assign_v(call(name, e.clone())));
        }
        // The new value from the old one: `{ let t = e; v = atomic_op(x, t) op t; }`,
        // `t` of the element's type (found without reporting anything twice).
        let n = self.diags.len();
        let (_, xt) = self.expr(x, None);
        self.diags.truncate(n);
        let Some(elem) = xt.scalar() else {
            return self.stmt(&assign_v(call(name, e.clone())));
        };
        let t_name = "atomic value";
        let t = || Expr::new(ExprKind::Var(t_name.into()), e.span);
        let old_v = call(name, t());
        let bin = |b: BinOp, l: Expr, r: Expr| {
            Expr::new(ExprKind::Binary(b, Box::new(l), Box::new(r)), s.span)
        };
        let new = match update {
            Update::Write(_) => {
                // `{ x = e; v = x; }`: v is what was written.
                let w = Stmt {
                    kind: StmtKind::Expr(old_v),
                    span: s.span,
                };
                return self.block_of(s, e, elem, t_name, vec![w, assign_v(t())]);
            }
            Update::Op(o, _) => match o {
                AtomicOp::Add => bin(BinOp::Add, old_v, t()),
                AtomicOp::Sub => bin(BinOp::Sub, old_v, t()),
                AtomicOp::Mul => bin(BinOp::Mul, old_v, t()),
                AtomicOp::Div => bin(BinOp::Div, old_v, t()),
                AtomicOp::And => bin(BinOp::BitAnd, old_v, t()),
                AtomicOp::Or => bin(BinOp::BitOr, old_v, t()),
                AtomicOp::Xor => bin(BinOp::BitXor, old_v, t()),
                AtomicOp::Shl => bin(BinOp::Shl, old_v, t()),
                AtomicOp::Shr => bin(BinOp::Shr, old_v, t()),
                AtomicOp::RevSub => bin(BinOp::Sub, t(), old_v),
                AtomicOp::RevDiv => bin(BinOp::Div, t(), old_v),
                AtomicOp::RevShl => bin(BinOp::Shl, t(), old_v),
                AtomicOp::RevShr => bin(BinOp::Shr, t(), old_v),
                AtomicOp::Max | AtomicOp::Min => {
                    let f = Ident {
                        name: if o == AtomicOp::Max { "max" } else { "min" }.into(),
                        span: s.span,
                    };
                    Expr::new(ExprKind::Call(f, vec![old_v, t()]), s.span)
                }
            },
        };
        self.block_of(s, e, elem, t_name, vec![assign_v(new)])
    }

    /// `{ let t: elem = e; stmts }`.
    fn block_of(
        &mut self,
        s: &Stmt,
        e: &Expr,
        elem: crate::types::Scalar,
        t_name: &str,
        mut stmts: Vec<Stmt>,
    ) -> Option<hir::Stmt> {
        let ty = ast::TypeExpr {
            elem,
            rank: 0,
            string: false,
            tuple: None,
            span: e.span,
        };
        let mut all = vec![Stmt {
            kind: StmtKind::Let {
                name: Ident {
                    name: t_name.into(),
                    span: e.span,
                },
                ty: Some(ty),
                init: e.clone(),
            },
            span: e.span,
        }];
        all.append(&mut stmts);
        self.stmt(&Stmt {
            kind: StmtKind::Block(ast::Block {
                stmts: all,
                span: s.span,
            }),
            span: s.span,
        })
    }
}
