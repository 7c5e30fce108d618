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

#[cfg(test)]
mod tests {
    use crate::kir::CopySlots;
    use crate::private_copies::local_sizes;

    // `crate::private_copies::local_sizes` on lowered kernels (here, since
    // that module sits below the lowering).

    use crate::lower::first_kernel as kernel_of;

    #[test]
    fn a_lanes_small_section_is_local() {
        let k = kernel_of(
            "let t = zeros(f32, 16); let o = zeros(f32, 64);
             parallel loop gang vector private(t) for i in 0..64 { t[i % 16] = 1.0f32; o[i] = t[3]; }",
        );
        let hidden = k.private_copies[0].array.index();
        static D16: [u64; 2] = [64, 16];
        static D64: [u64; 2] = [64, 64];
        static D65: [u64; 2] = [64, 65];
        let dims = |d: &'static [u64; 2]| move |a: usize| (a == hidden).then_some(&d[..]);
        // 16 and 64 elements fit; 65 does not; check mode keeps the hidden array.
        assert_eq!(local_sizes(&k, false, dims(&D16)), [16, 0, 0, 0]);
        assert_eq!(local_sizes(&k, false, dims(&D64)), [64, 0, 0, 0]);
        assert_eq!(local_sizes(&k, false, dims(&D65)), [0; 4]);
        assert_eq!(local_sizes(&k, true, dims(&D16)), [0; 4]);
    }

    #[test]
    fn a_gangs_copy_is_not_local() {
        // The gang's lanes share its copy: it cannot be one lane's array.
        let k = kernel_of(
            "let t = zeros(f32, 8); let o = zeros(f32, 4, 8);
             parallel loop gang private(t) for i in 0..4 {
                 loop vector for j in 0..8 { t[j] = j as f32; }
                 loop vector for j in 0..8 { o[i, j] = t[7 - j]; }
             }",
        );
        assert_eq!(k.private_copies[0].place, Ok(CopySlots::Gang));
        let hidden = k.private_copies[0].array.index();
        let d = [4u64, 8];
        assert_eq!(
            local_sizes(&k, false, |a| (a == hidden).then_some(&d[..])),
            [0; 4]
        );
    }
}
