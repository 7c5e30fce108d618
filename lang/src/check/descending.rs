//! `for i in rev(lo..hi) { .. }` (and `rev(lo..=hi)`): the range counted
//! down, from `hi - 1` (`hi`) to `lo`. Written as the counted loop it is, so
//! that nothing after the checker sees a new kind of loop: the bounds are
//! read once into hidden locals, a hidden counter runs up over the same
//! range, and the variable is `hi - 1 - (k - lo)` (integers wrap, so this is
//! exact even where `k - lo` overflows). A construct's own loop is
//! partitioned, not counted, so a descending one there is an error
//! (`refuse_descending`).

use super::Checker;
use crate::ast::{self, BinOp};
use crate::diag::Diag;
use crate::hir;
use crate::value::Value;

impl Checker<'_> {
    pub(super) fn descending(&mut self, f: &ast::ForLoop) -> hir::StmtKind {
        let span = f.span;
        // The bounds and their type, as an ascending loop checks them; the
        // header declares the hidden counter in a scope left open.
        let up = ast::ForLoop {
            var: ast::Ident {
                name: "$counter".into(),
                span: f.var.span,
            },
            lo: f.lo.clone(),
            hi: f.hi.clone(),
            inclusive: f.inclusive,
            rev: false,
            body: ast::Block {
                stmts: Vec::new(),
                span: f.body.span,
            },
            span,
        };
        let mut header = self.loop_header(&up);
        let ty = self.body.locals[header.var].ty;
        let mut pre = Vec::new();
        let mut hidden = |ck: &mut Self, h, what: &str| {
            let sp = ck.body.exprs.span(h);
            let local = ck.new_local(what, ty, false, sp);
            pre.push(hir::Stmt {
                kind: hir::StmtKind::Let { local, init: h },
                span: sp,
            });
            local
        };
        let lo = hidden(self, header.lo, "$lo");
        let hi = hidden(self, header.hi, "$hi");
        header.lo = self.push(hir::Expr::Local(lo), ty, f.lo.span).0;
        header.hi = self.push(hir::Expr::Local(hi), ty, f.hi.span).0;
        let var = self.new_local(&f.var.name, ty, false, f.var.span);
        let init = match ty.scalar() {
            Some(s) => {
                let vs = f.var.span;
                let local = |ck: &mut Self, l| ck.push(hir::Expr::Local(l), ty, vs).0;
                let (k, lo_e, hi_e) = (local(self, header.var), local(self, lo), local(self, hi));
                let steps = self.push(hir::Expr::Binary(BinOp::Sub, k, lo_e), ty, vs).0;
                let top = if f.inclusive {
                    hi_e
                } else {
                    let one = Value::IntLit(1).concretize(s).unwrap_or(Value::I32(1));
                    let one = self.constant(one, vs).0;
                    self.push(hir::Expr::Binary(BinOp::Sub, hi_e, one), ty, vs)
                        .0
                };
                self.push(hir::Expr::Binary(BinOp::Sub, top, steps), ty, vs)
                    .0
            }
            None => self.error_expr(f.var.span).0,
        };
        let mut body = vec![hir::Stmt {
            kind: hir::StmtKind::Let { local: var, init },
            span: f.var.span,
        }];
        self.loop_stack.push(self.scopes.len());
        body.extend(self.block_in_scope(&f.body));
        self.loop_stack.pop();
        self.pop_scope();
        pre.push(hir::Stmt {
            kind: hir::StmtKind::For(hir::ForLoop { header, body }),
            span,
        });
        hir::StmtKind::Block(pre)
    }
}

impl Checker<'_> {
    /// A construct's own loop (or one it collapses or tiles) written `rev(..)`.
    pub(super) fn refuse_descending(&mut self, f: &ast::ForLoop) {
        self.err(descending_construct_loop(f));
    }
}

fn descending_construct_loop(f: &ast::ForLoop) -> Diag {
    Diag::error(
        "accl::device::descending_loop",
        "a loop that a construct partitions cannot count down",
        f.lo.span.to(f.hi.span),
        "`rev(..)` here",
    )
    .with_help(format!(
        "its iterations run in no order: write the ascending range and index from the top \
         (`for {v} in lo..hi {{ let j = hi - 1 - ({v} - lo); .. }}`), or put the loop in a \
         `serial {{ .. }}` region, where it runs in order",
        v = f.var.name
    ))
}
