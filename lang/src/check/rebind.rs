//! A `data` region whose body assigns a whole new array to a variable the
//! region maps: the region's device copy (and its copy back at the end)
//! belongs to the old array, so what kernels wrote there never reaches the
//! new one. Refused at check time. Giving the variable another variable's
//! array (swapping two buffers between sweeps) is fine: each array keeps
//! its own device copy.

use super::Checker;
use crate::ast::{self, DirectiveKind as DK};
use crate::diag::Diag;
use crate::hir::{self, LocalH, Place, StmtKind};

impl Checker<'_> {
    /// Refuse every whole-array assignment in `body` to a variable that
    /// `clauses` of the `data` construct `d` maps.
    pub(super) fn warn_rebound_in_data(
        &mut self,
        d: &ast::Directive,
        clauses: &hir::Clauses,
        body: &hir::ConstructBody,
    ) {
        if d.kind != DK::Data || clauses.data.is_empty() {
            return;
        }
        let hir::ConstructBody::Block(b) = body else {
            return;
        };
        let mapped: Vec<(LocalH, crate::Span)> =
            clauses.data.iter().map(|c| (c.var, c.span)).collect();
        let mut found = Vec::new();
        let mut todo: Vec<&hir::Block> = vec![b];
        while let Some(b) = todo.pop() {
            for s in b {
                match &s.kind {
                    StmtKind::Assign {
                        place: Place::Local(l),
                        op: None,
                        value,
                    } => {
                        // Another variable's array (the ping-pong swap
                        // `let t = a; a = b; b = t;`) keeps its device
                        // copy: kernels find it present, and the region
                        // copies back the arrays it mapped at its start.
                        let alias = matches!(self.body.exprs[*value], hir::Expr::Local(_));
                        if alias {
                            continue;
                        }
                        if let Some(&(_, clause)) = mapped.iter().find(|(m, _)| m == l) {
                            found.push((*l, s.span, clause));
                        }
                    }
                    StmtKind::If { then, els, .. } => {
                        todo.push(then);
                        todo.push(els);
                    }
                    StmtKind::While { body, .. } => todo.push(body),
                    StmtKind::For(f) => todo.push(&f.body),
                    StmtKind::Block(b) => todo.push(b),
                    StmtKind::Construct(c) => match &c.body {
                        hir::ConstructBody::Block(b)
                        | hir::ConstructBody::Loops { body: b, .. } => todo.push(b),
                        hir::ConstructBody::None => {}
                    },
                    _ => {}
                }
            }
        }
        for (l, at, clause) in found {
            let name = self.body.locals[l].name.clone();
            self.err(
                Diag::error(
                    "accl::device::rebound_in_data_region",
                    format!("`{name}` is given a new array inside the `data` region that maps it"),
                    at,
                    "the new array has no device copy here",
                )
                .with_label(clause, "the region maps the old array")
                .with_help(format!(
                    "the region's device copy (and its copy back at the end) belongs to the old array, \
                     so kernels' results are lost: write into `{name}` element by element \
                     (`{name}[i] = ...`), or assign it after the region"
                )),
            );
        }
    }
}
