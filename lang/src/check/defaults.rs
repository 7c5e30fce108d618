//! Writes to scalars declared outside a device construct: the OpenACC 3.3
//! default data attributes (firstprivate on `parallel`/`serial`, `copy` in
//! `kernels` and for scalars in `copy`/`copyout` clauses), reductions of an
//! enclosing construct that cover a loop, and the races that remain.

use super::Checker;
use crate::diag::Diag;
use crate::hir::LocalH;
use crate::span::Span;

impl Checker<'_> {
    /// Whether `l` belongs to each gang of a `parallel` region (the region
    /// makes it `private`/`firstprivate`, or its gang-redundant code
    /// declares it) and is assigned only under `loop gang`s (and `loop
    /// seq`s): each gang has its own copy and runs its iterations one after
    /// another, so the assignment is no race (OpenACC 3.3, 2.5.13/2.5.14:
    /// a copy for each gang).
    fn gang_owns(&self, l: LocalH, scope: usize) -> bool {
        let Some(region) = self.dev.first() else {
            return false;
        };
        if region.kind != crate::ast::DirectiveKind::Parallel {
            return false;
        }
        let declared_in_region =
            scope >= region.scope_base && self.dev[1..].iter().all(|f| scope < f.scope_base);
        if !(declared_in_region || region.private.contains(&l)) {
            return false;
        }
        self.dev[1..]
            .iter()
            .all(|f| f.seq || (f.level == Some(crate::hir::Level::Gang) && !f.private.contains(&l)))
    }

    /// A write to scalar `l` inside device code must be to a variable of the
    /// iteration, or to a reduction/private variable of the frame.
    pub(super) fn note_scalar_write(&mut self, l: LocalH, name: &str, span: Span) -> Option<()> {
        let ty = self.body.locals[l].ty;
        if ty.is_array() {
            return Some(());
        }
        // A `loop seq` runs its iterations in order: writing a variable of
        // the code around it races only across the frames outside it.
        let scope = self.body.local_scope[l.index()];
        let Some(fi) = (0..self.dev.len())
            .rev()
            .find(|&i| scope < self.dev[i].scope_base && !self.dev[i].seq)
        else {
            return Some(());
        };
        // Declared outside frame `fi`: allowed only if that frame (or a frame
        // inside it) lists it as reduction/private.
        if self.dev[fi..].iter().any(|f| f.writable.contains(&l)) {
            return Some(());
        }
        if self.gang_owns(l, scope) {
            return Some(());
        }
        // A reduction on an enclosing construct or loop applies to the
        // loops inside it that update the variable (OpenACC 3.3, 2.5.15):
        // each such loop reduces into it too.
        let reducer = (0..fi).rev().find_map(|i| {
            self.dev[i]
                .reductions
                .iter()
                .find(|r| r.0 == l)
                .map(|r| (i, r.1))
        });
        if let Some((i, op)) = reducer {
            for f in &mut self.dev[i + 1..] {
                if !f.in_order {
                    f.implied.push((l, op));
                }
                f.writable.push(l);
            }
            return Some(());
        }
        // OpenACC 3.3 (2.5.1, 2.6.2): a scalar with no clause is
        // firstprivate on `parallel` and `serial` (each gang writes its own
        // copy) and `copy` in `kernels`. Taken where the region itself or
        // a `loop seq` in it assigns it: the iterations of a construct's own
        // loop each start from a fresh copy on the device, and a `loop`
        // without `seq` runs its iterations in parallel, even in `serial`.
        use crate::ast::DirectiveKind as DK;
        let declared_outside = self.body.local_scope[l.index()] < self.dev[0].scope_base;
        if declared_outside
            && self
                .dev
                .iter()
                .all(|f| f.kind == DK::Parallel || (f.kind == DK::Loop && f.in_order))
        {
            let copy = self.dev[0].kernels || self.copy_back.contains(&l);
            let f = &mut self.dev[0];
            if !f.implicit.iter().any(|&(x, _)| x == l) {
                f.writable.push(l);
                f.implicit.push((l, copy));
            }
            return Some(());
        }
        let f = &self.dev[fi];
        let decl = self.body.locals.span(l);
        let (ks, kn) = (f.kind_span, f.kind.name());
        self.err(
            Diag::error(
                "accl::device::race",
                format!("`{name}` is declared outside this `{kn}` and assigned inside it"),
                span,
                "every iteration writes this one variable: a data race",
            )
            .with_label(ks, format!("iterations of this `{kn}` run in parallel"))
            .with_label(decl, "declared here")
            .with_help(format!(
                "if this accumulates a result, add `reduction(+: {name})` (or another operator) to the construct; otherwise declare `{name}` inside the loop body"
            )),
        );
        None
    }
}
