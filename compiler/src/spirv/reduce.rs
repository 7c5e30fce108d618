//! Reductions within a workgroup: partials as they travel (bools as `u32`),
//! the scratch arrays in workgroup memory, the host's `combine`, and the
//! fixed-order tree fold over a workgroup's invocations.

use super::types::Ty;
use super::{spv, Writer};
use crate::kir::ReductionOp;
use lang::Scalar;
use rspirv::spirv::{LoopControl, StorageClass, Word};

/// How a reduction's partial travels (u8/bool widened to u32).
pub(super) fn partial_ty(s: Scalar) -> Ty {
    match s {
        Scalar::Bool | Scalar::U8 => Ty::U32,
        s => Ty::reg(s),
    }
}

impl Writer<'_> {
    pub(super) fn encode_partial(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let one = self.m.u32c(1);
            let zero = self.m.u32c(0);
            let u32t = self.m.ty(Ty::U32);
            spv(self.m.b.select(u32t, None, v, one, zero))
        } else {
            v
        }
    }

    pub(super) fn decode_partial(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let b = self.m.ty(Ty::Bool);
            let z = self.m.u32c(0);
            spv(self.m.b.i_not_equal(b, None, v, z))
        } else {
            v
        }
    }

    /// The workgroup scratch array (`wg_size` elements of `t`).
    pub(super) fn scratch(&mut self, t: Ty) -> Word {
        if let Some(&(_, v)) = self.scratch.iter().find(|(x, _)| *x == t) {
            return v;
        }
        let et = self.m.ty(t);
        let arr = self.m.b.type_array(et, self.wg_size);
        let v = self.gvar(arr, StorageClass::Workgroup, &format!("scratch_{t:?}"));
        self.scratch.push((t, v));
        v
    }

    /// `combine(op, a, b)` of register values (the host's semantics: float
    /// `max`/`min` take `b` when `a` is NaN or `b` is greater/less).
    pub(super) fn combine(&mut self, op: ReductionOp, s: Scalar, a: Word, b: Word) -> Word {
        use ReductionOp as O;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let bm = &mut self.m.b;
        let r = match op {
            O::Add if s.is_float() => spv(bm.f_add(tw, None, a, b)),
            O::Add => spv(bm.i_add(tw, None, a, b)),
            O::Mul if s.is_float() => spv(bm.f_mul(tw, None, a, b)),
            O::Mul => spv(bm.i_mul(tw, None, a, b)),
            O::And | O::BitAnd | O::Min if s == Scalar::Bool => {
                spv(bm.logical_and(bool_t, None, a, b))
            }
            O::Or | O::BitOr | O::Max if s == Scalar::Bool => {
                spv(bm.logical_or(bool_t, None, a, b))
            }
            O::BitXor if s == Scalar::Bool => spv(bm.logical_not_equal(bool_t, None, a, b)),
            O::BitAnd => spv(bm.bitwise_and(tw, None, a, b)),
            O::BitOr => spv(bm.bitwise_or(tw, None, a, b)),
            O::BitXor => spv(bm.bitwise_xor(tw, None, a, b)),
            O::And => spv(bm.logical_and(bool_t, None, a, b)),
            O::Or => spv(bm.logical_or(bool_t, None, a, b)),
            O::Max | O::Min => {
                let better = match (op == O::Max, s.is_float(), s.is_signed_int()) {
                    (true, true, _) => spv(bm.f_ord_greater_than(bool_t, None, b, a)),
                    (false, true, _) => spv(bm.f_ord_less_than(bool_t, None, b, a)),
                    (true, false, true) => spv(bm.s_greater_than(bool_t, None, b, a)),
                    (false, false, true) => spv(bm.s_less_than(bool_t, None, b, a)),
                    (true, false, false) => spv(bm.u_greater_than(bool_t, None, b, a)),
                    (false, false, false) => spv(bm.u_less_than(bool_t, None, b, a)),
                };
                let take = if s.is_float() {
                    let nan = spv(bm.is_nan(bool_t, None, a));
                    spv(bm.logical_or(bool_t, None, nan, better))
                } else {
                    better
                };
                spv(bm.select(tw, None, take, b, a))
            }
        };
        match op {
            O::Add | O::Mul => self.wrap_u8(r, s),
            _ => r,
        }
    }

    /// Fold `v` over the workgroup's invocations in a fixed tree order
    /// (stride 1, 2, 4, ..: slot `i` takes `combine(slot i, slot i + s)` when
    /// `i % 2s == 0`), so the result depends only on the values and the
    /// work-group size. Every invocation gets the result. Must be reached in
    /// uniform control flow.
    pub(super) fn wg_reduce(&mut self, v: Word, op: ReductionOp, s: Scalar) -> Word {
        if let Some(wg) = self.subgroup_foldable_wg() {
            return self.subgroup_wg_reduce(wg, v, op, s);
        }
        let st = partial_ty(s);
        let stw = self.m.ty(st);
        let arr = self.scratch(st);
        let pst = self.m.ptr(StorageClass::Workgroup, stw);
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let lid = self.local_id();
        let enc = self.encode_partial(v, s);
        let mine = spv(self.m.b.access_chain(pst, None, arr, [lid]));
        spv(self.m.b.store(mine, enc, None, []));
        self.wg_barrier();
        let sv = self.fvar(Ty::U32, "stride");
        let one = self.m.u32c(1);
        spv(self.m.b.store(sv, one, None, []));
        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        // Guarded as the kernel's outermost loop is: it may run after it.
        let exited = self.exit_flag();
        spv(self.m.b.branch(header));
        self.label(header);
        let sc = spv(self.m.b.load(u32t, None, sv, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, sc, self.wg_size));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        self.header_branch(more, body, merge, exited);
        self.label(body);
        let bm = &mut self.m.b;
        let two_s = spv(bm.shift_left_logical(u32t, None, sc, one));
        let mask = spv(bm.i_sub(u32t, None, two_s, one));
        let low = spv(bm.bitwise_and(u32t, None, lid, mask));
        let zero = self.m.u32c(0);
        let bm = &mut self.m.b;
        let aligned = spv(bm.i_equal(bool_t, None, low, zero));
        let other = spv(bm.i_add(u32t, None, lid, sc));
        let inside = spv(bm.u_less_than(bool_t, None, other, self.wg_size));
        let take = spv(bm.logical_and(bool_t, None, aligned, inside));
        let m = self.begin_if(take);
        let pa = spv(self.m.b.access_chain(pst, None, arr, [lid]));
        let pb = spv(self.m.b.access_chain(pst, None, arr, [other]));
        let a = spv(self.m.b.load(stw, None, pa, None, []));
        let b = spv(self.m.b.load(stw, None, pb, None, []));
        let (a, b) = (self.decode_partial(a, s), self.decode_partial(b, s));
        let c = self.combine(op, s, a, b);
        let c = self.encode_partial(c, s);
        spv(self.m.b.store(pa, c, None, []));
        self.end_if(m);
        self.wg_barrier();
        spv(self.m.b.branch(cont));
        self.label(cont);
        let sc = spv(self.m.b.load(u32t, None, sv, None, []));
        let next = spv(self.m.b.shift_left_logical(u32t, None, sc, one));
        spv(self.m.b.store(sv, next, None, []));
        self.guarded_back_edge(header, merge);
        self.label(merge);
        if let Some(e) = exited {
            self.loop_exit_check(e, self.k.span);
        }
        let zero = self.m.u32c(0);
        let p0 = spv(self.m.b.access_chain(pst, None, arr, [zero]));
        let r = spv(self.m.b.load(stw, None, p0, None, []));
        // Nobody may overwrite the scratch before everyone has read slot 0.
        self.wg_barrier();
        self.decode_partial(r, s)
    }
}
