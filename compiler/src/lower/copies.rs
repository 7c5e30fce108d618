//! The owners of private arrays' copies (`hir::Clauses::private_copies`):
//! each owned hidden array becomes a [`PrivateCopies`] of the kernel, and
//! an owner that can start its copies in workgroup memory starts them at
//! the top of each iteration ([`StmtKind::PrivateInit`]).

use super::{internal, Binding, Fx, Lowerer};
use crate::kir::*;
use lang::{hir, Diag, Span};

impl Lowerer<'_> {
    /// The copies `owned` of an owner whose iteration starts with `out`
    /// (`place`: their slots, or why they stay in the hidden array).
    pub(super) fn own_copies(
        &mut self,
        fx: &Fx,
        owned: &[(hir::LocalH, bool)],
        place: Result<CopySlots, String>,
        span: Span,
        out: &mut Block,
    ) -> Result<(), Diag> {
        for &(v, first) in owned {
            let Some(Binding::Array(array)) = fx.map.get(&v).copied() else {
                return Err(internal(span, "a private array's copies are not an array"));
            };
            if place.is_ok() {
                out.push(Fx::stmt(StmtKind::PrivateInit(array), span));
            }
            let hidden = &fx.src.locals[v].name;
            let name = hidden.split('\'').next().unwrap_or(hidden).to_string();
            self.private_copies.push(PrivateCopies {
                array,
                name,
                first,
                place: place.clone(),
                span,
            });
        }
        Ok(())
    }
}
