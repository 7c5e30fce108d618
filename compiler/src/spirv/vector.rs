//! `loop vector`: a collapsed nest's flat index split over its levels, and
//! the block-stride loop of a [`VectorLoop`] over a gang's invocations (or
//! a team's lanes) between two barriers, its reductions folded after it.

use super::types::Ty;
use super::{ice, spv, Writer};
use crate::abi::FieldKind;
use crate::kir::{Function, LocalH, VectorLoop};
use lang::{Diag, Scalar};
use rspirv::spirv::{LoopControl, Word};

impl Writer<'_> {
    /// Split flat index `rest` row-major over the levels of a collapsed nest
    /// (innermost fastest) and store `lo_l + i_l` in each level's variable.
    /// `counts[l]` is level `l`'s trip count (unused for level 0).
    pub(super) fn split_index(
        &mut self,
        mut rest: Word,
        vars: &[(LocalH, Scalar)],
        los: &[Word],
        counts: &[Word],
    ) {
        let idx_w = self.m.ty(self.idx);
        for (l, &(var, ty)) in vars.iter().enumerate().rev() {
            let i = if l == 0 {
                rest
            } else if self.spec.split_by_reciprocal
                && !self.m.is_const(counts[l])
                && self.spec.features.float64
                && self.idx == Ty::U32
            {
                let (q, r) = self.div_mod_by_reciprocal(rest, counts[l]);
                rest = q;
                r
            } else {
                let i = spv(self.m.b.u_mod(idx_w, None, rest, counts[l]));
                rest = spv(self.m.b.u_div(idx_w, None, rest, counts[l]));
                i
            };
            let rt = Ty::reg(ty);
            let off = self.int_cast(i, self.idx, rt);
            let rtw = self.m.ty(rt);
            let x = spv(self.m.b.i_add(rtw, None, los[l], off));
            let x = self.wrap_u8(x, ty);
            spv(self.m.b.store(self.locals[var.index()], x, None, []));
        }
    }

    /// `(n / d, n % d)` of `u32` values, `n < 2^31` (the largest 32-bit
    /// index) and `d > 0`, without an integer division: the quotient from
    /// `f64(n) * (1 / f64(d))` is off by at most one (its error is below
    /// 2^31 * 2^-52), which the remainder's sign and size correct.
    fn div_mod_by_reciprocal(&mut self, n: Word, d: Word) -> (Word, Word) {
        let (u, i, f, b) = (
            self.m.ty(Ty::U32),
            self.m.ty(Ty::I32),
            self.m.ty(Ty::F64),
            self.m.ty(Ty::Bool),
        );
        let one_f = self.float_const(Ty::F64, 1.0);
        let (one, zero) = (self.m.u32c(1), self.int_const(Ty::I32, 0));
        let bm = &mut self.m.b;
        let nf = spv(bm.convert_u_to_f(f, None, n));
        let df = spv(bm.convert_u_to_f(f, None, d));
        let rcp = spv(bm.f_div(f, None, one_f, df));
        let qf = spv(bm.f_mul(f, None, nf, rcp));
        let q0 = spv(bm.convert_f_to_u(u, None, qf));
        let qd = spv(bm.i_mul(u, None, q0, d));
        let r0 = spv(bm.i_sub(u, None, n, qd));
        // One too many: the remainder wrapped below zero.
        let r0s = spv(bm.bitcast(i, None, r0));
        let over = spv(bm.s_less_than(b, None, r0s, zero));
        let q0m = spv(bm.i_sub(u, None, q0, one));
        let r0p = spv(bm.i_add(u, None, r0, d));
        let q1 = spv(bm.select(u, None, over, q0m, q0));
        let r1 = spv(bm.select(u, None, over, r0p, r0));
        // One too few: the remainder reached the divisor.
        let under = spv(bm.u_greater_than_equal(b, None, r1, d));
        let q1p = spv(bm.i_add(u, None, q1, one));
        let r1m = spv(bm.i_sub(u, None, r1, d));
        let q = spv(bm.select(u, None, under, q1p, q1));
        let r = spv(bm.select(u, None, under, r1m, r1));
        (q, r)
    }

    /// A `loop vector` (see [`VectorLoop`]): a barrier, the bounds, a
    /// block-stride loop over the invocations, the reductions folded in a
    /// tree, a barrier.
    pub(super) fn vector_loop(&mut self, f: &Function, v: &VectorLoop) -> Result<(), Diag> {
        self.barrier();
        let idx_w = self.m.ty(self.idx);
        let (los, counts, total) = self.vector_bounds(f, v)?;
        let lid = match self.teams {
            Some(t) => self.team_lane(t),
            None => self.local_id(),
        };
        let lid = self.int_cast(lid, Ty::U32, self.idx);
        let wg = match self.teams {
            Some(t) => self.m.u32c(t.lanes),
            None => self.wg_size,
        };
        let wg = self.int_cast(wg, Ty::U32, self.idx);
        let (start, stride) = if v.gangs {
            let Some(g) = self.gang_index else {
                return Err(ice(self.k.span, "a gang loop outside the gang loop"));
            };
            let n = self.load_arg(FieldKind::Total)?;
            let bm = &mut self.m.b;
            let base = spv(bm.i_mul(idx_w, None, g, wg));
            (
                spv(bm.i_add(idx_w, None, base, lid)),
                spv(bm.i_mul(idx_w, None, n, wg)),
            )
        } else {
            (lid, wg)
        };
        let vars: Vec<_> = v.levels.iter().map(|l| (l.var, l.ty)).collect();
        self.counted_loop(self.idx, (start, total, stride), true, |w, rest| {
            w.split_index(rest, &vars, &los, &counts);
            w.block(f, &v.body)
        })?;
        self.vector_fold(f, v);
        self.barrier();
        Ok(())
    }

    /// A `loop vector`'s bounds (evaluated by every lane alike): each
    /// level's lower bound and trip count, and the total; its reduction
    /// copies set to the identity.
    pub(super) fn vector_bounds(
        &mut self,
        f: &Function,
        v: &VectorLoop,
    ) -> Result<(Vec<Word>, Vec<Word>, Word), Diag> {
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let mut los = Vec::new();
        let mut counts = Vec::new();
        let mut total = None;
        for l in &v.levels {
            let rt = Ty::reg(l.ty);
            let lo = self.expr(f, l.lo)?;
            let hi = self.expr(f, l.hi)?;
            let bm = &mut self.m.b;
            let nonempty = match (l.inclusive, l.ty.is_signed_int()) {
                (false, true) => spv(bm.s_less_than(bool_t, None, lo, hi)),
                (false, false) => spv(bm.u_less_than(bool_t, None, lo, hi)),
                (true, true) => spv(bm.s_less_than_equal(bool_t, None, lo, hi)),
                (true, false) => spv(bm.u_less_than_equal(bool_t, None, lo, hi)),
            };
            let lo_i = self.int_cast(lo, rt, self.idx);
            let hi_i = self.int_cast(hi, rt, self.idx);
            let mut diff = spv(self.m.b.i_sub(idx_w, None, hi_i, lo_i));
            if l.inclusive {
                let one = self.int_const(self.idx, 1);
                diff = spv(self.m.b.i_add(idx_w, None, diff, one));
            }
            let zero = self.int_const(self.idx, 0);
            let count = spv(self.m.b.select(idx_w, None, nonempty, diff, zero));
            total = Some(match total {
                None => count,
                Some(t) => spv(self.m.b.i_mul(idx_w, None, t, count)),
            });
            los.push(lo);
            counts.push(count);
        }
        let Some(total) = total else {
            return Err(ice(self.k.span, "a vector loop without levels"));
        };
        for r in &v.reductions {
            let ty = f.locals[r.private].ty;
            let id = self.constant(lang::value::identity(r.op, ty));
            spv(self.m.b.store(self.locals[r.private.index()], id, None, []));
        }
        Ok((los, counts, total))
    }

    /// After a `loop vector`: fold each reduction's lane copies into its
    /// gang variable.
    pub(super) fn vector_fold(&mut self, f: &Function, v: &VectorLoop) {
        for r in &v.reductions {
            let ty = f.locals[r.private].ty;
            let tw = self.m.ty(Ty::reg(ty));
            let p = spv(self
                .m
                .b
                .load(tw, None, self.locals[r.private.index()], None, []));
            let folded = match self.teams {
                Some(t) => self.team_reduce(t, p, r.op, ty),
                None => self.wg_reduce(p, r.op, ty),
            };
            let t = spv(self
                .m
                .b
                .load(tw, None, self.locals[r.target.index()], None, []));
            let c = self.combine(r.op, ty, t, folded);
            spv(self.m.b.store(self.locals[r.target.index()], c, None, []));
        }
    }
}

impl Writer<'_> {
    /// `for (v = start; v < bound; v += step) body(v)` as one structured
    /// loop over a fresh Function variable of integer type `t` (unsigned
    /// compare). With `frame`, the body's KIR `break`/`continue` leave
    /// or continue this loop.
    pub(super) fn counted_loop(
        &mut self,
        t: Ty,
        (start, bound, step): (Word, Word, Word),
        frame: bool,
        body: impl FnOnce(&mut Self, Word) -> Result<(), Diag>,
    ) -> Result<(), Diag> {
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let var = self.fvar(t, "i");
        spv(self.m.b.store(var, start, None, []));
        let header = self.m.b.id();
        let body_l = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let cur = spv(self.m.b.load(tw, None, var, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, cur, bound));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch_conditional(more, body_l, merge, []));
        self.label(body_l);
        let v = spv(self.m.b.load(tw, None, var, None, []));
        if frame {
            self.loops.push((merge, cont, None));
        }
        let r = body(self, v);
        if frame {
            self.loops.pop();
        }
        r?;
        if !self.terminated {
            spv(self.m.b.branch(cont));
        }
        self.label(cont);
        let cur = spv(self.m.b.load(tw, None, var, None, []));
        let next = spv(self.m.b.i_add(tw, None, cur, step));
        spv(self.m.b.store(var, next, None, []));
        spv(self.m.b.branch(header));
        self.label(merge);
        Ok(())
    }
}
