//! `tile(a, b)` on a flat two-level nest: each workgroup of `a * b` lanes
//! takes one `b x a` tile of the iteration space at a time (tiles in
//! row-major order, grid-stride over the workgroups), lane `l` the
//! iteration `(l / a, l % a)` of the tile; iterations past the nest's
//! edge do nothing. Neighbouring iterations of both loops then run in one
//! workgroup, so a stencil's rows above and below hit the same cache
//! lines while the workgroup runs.

use super::{spv, Writer};
use crate::abi::FieldKind;
use crate::kir::{LocalH, Shape};
use lang::{Diag, Scalar};
use rspirv::spirv::Word;

use super::types::Ty;

impl Writer<'_> {
    /// The tile loop's first tile, stride and tile count (index type),
    /// with `it` set to the first.
    pub(super) fn tiles_begin(&mut self, it: Word) -> Result<(Word, Word, Word), Diag> {
        let Some((a, b)) = self.k.tile else {
            return Err(super::ice(self.k.span, "tiles without a tile clause"));
        };
        debug_assert_eq!(self.k.shape, Shape::Flat);
        let idx_w = self.m.ty(self.idx);
        let u32t = self.m.ty(Ty::U32);
        let uvec3 = self.m.ty(Ty::UVec3);
        let total = self.load_arg(FieldKind::Total)?;
        let c1 = self.load_arg(FieldKind::Count(1))?;
        let zero = self.int_const(self.idx, 0);
        let one = self.int_const(self.idx, 1);
        let bool_t = self.m.ty(Ty::Bool);
        // c0 = total / c1 (c1 is 0 only when total is).
        let nz = spv(self.m.b.i_not_equal(bool_t, None, c1, zero));
        let c1s = spv(self.m.b.select(idx_w, None, nz, c1, one));
        let c0 = spv(self.m.b.u_div(idx_w, None, total, c1s));
        let ac = self.int_const(self.idx, a as i64);
        let bc = self.int_const(self.idx, b as i64);
        let tiles_1 = self.ceil_div(c1, ac);
        let tiles_0 = self.ceil_div(c0, bc);
        let tiles = spv(self.m.b.i_mul(idx_w, None, tiles_0, tiles_1));
        let g = self.group_id();
        let start = self.int_cast(g, Ty::U32, self.idx);
        let n = spv(self.m.b.load(uvec3, None, self.nwg, None, []));
        let nx = spv(self.m.b.composite_extract(u32t, None, n, [0]));
        let stride = self.int_cast(nx, Ty::U32, self.idx);
        spv(self.m.b.store(it, start, None, []));
        self.tile_dims = Some((tiles_1, c0));
        Ok((start, stride, tiles))
    }

    fn ceil_div(&mut self, x: Word, d: Word) -> Word {
        let idx_w = self.m.ty(self.idx);
        let one = self.int_const(self.idx, 1);
        let dm1 = spv(self.m.b.i_sub(idx_w, None, d, one));
        let s = spv(self.m.b.i_add(idx_w, None, x, dm1));
        spv(self.m.b.u_div(idx_w, None, s, d))
    }

    /// One tile `tile` (index type): this lane's iteration of it, when
    /// inside the nest.
    pub(super) fn tile_iteration(
        &mut self,
        (a, b): (u32, u32),
        tile: Word,
        vars: &[(LocalH, Scalar)],
        los: &[Word],
        counts: &[Word],
    ) -> Result<(), Diag> {
        let Some((tiles_1, c0)) = self.tile_dims else {
            return Err(super::ice(self.k.span, "a tile before the tile loop"));
        };
        let _ = b;
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let c1 = counts[1];
        let lid = self.local_id();
        let lid = self.int_cast(lid, Ty::U32, self.idx);
        let ac = self.int_const(self.idx, a as i64);
        let bc = self.int_const(self.idx, b as i64);
        let bm = &mut self.m.b;
        let t0 = spv(bm.u_div(idx_w, None, tile, tiles_1));
        let t1 = spv(bm.u_mod(idx_w, None, tile, tiles_1));
        let l0 = spv(bm.u_div(idx_w, None, lid, ac));
        let l1 = spv(bm.u_mod(idx_w, None, lid, ac));
        let base0 = spv(bm.i_mul(idx_w, None, t0, bc));
        let base1 = spv(bm.i_mul(idx_w, None, t1, ac));
        let i0 = spv(bm.i_add(idx_w, None, base0, l0));
        let i1 = spv(bm.i_add(idx_w, None, base1, l1));
        // Lanes past `a * b` (a larger workgroup) have no iteration.
        let in0 = spv(bm.u_less_than(bool_t, None, i0, c0));
        let in0 = {
            let lb = spv(bm.u_less_than(bool_t, None, l0, bc));
            spv(bm.logical_and(bool_t, None, in0, lb))
        };
        let in1 = spv(bm.u_less_than(bool_t, None, i1, c1));
        let inside = spv(bm.logical_and(bool_t, None, in0, in1));
        let row = spv(bm.i_mul(idx_w, None, i0, c1));
        let flat = spv(bm.i_add(idx_w, None, row, i1));
        let m = self.begin_if(inside);
        self.split_index(flat, vars, los, counts);
        let k = self.k;
        self.block(&k.entry, &k.entry.body)?;
        if !self.terminated {
            spv(self.m.b.branch(m));
        }
        self.label(m);
        Ok(())
    }
}
