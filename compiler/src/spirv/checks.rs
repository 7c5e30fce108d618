//! Bounds-check mode and the loop watchdog in the writer: the fault buffer
//! ([`crate::abi::fault`]), checked element pointers, checked integer
//! division, and the per-invocation loop budget.
//!
//! Everything here is emitted only when the [`crate::Spec`] asks for it, so
//! a kernel without checks is the same module as before. A check costs a
//! compare and a select on the hot path; the record is written in a cold
//! branch.

use super::types::Ty;
use super::{spv, Writer};
use crate::abi::{fault, FieldKind};
use crate::kir::{ArrayH, ExprH, Function};
use lang::{Diag, Span};
use rspirv::spirv::{BuiltIn, Capability, StorageClass, Word};

impl Writer<'_> {
    /// Module scope: the fault buffer and the loop counter.
    pub(super) fn declare_fault_buffer(&mut self) {
        if !self.spec.uses_fault_buffer() {
            return;
        }
        let st = self.m.buffer_struct(Ty::U32);
        let binding = self.layout.num_bindings(self.k);
        let v = self
            .m
            .bound_variable(StorageClass::StorageBuffer, st, binding, "accl_fault");
        self.late_globals.push((v, StorageClass::StorageBuffer));
        self.fault_var = Some(v);
        // Per invocation: the loop counter (with a budget), and the span of
        // the first loop left other than through its exits (start, end + 1;
        // 0 while none).
        if self.spec.loop_budget != 0 {
            self.count_var = Some(self.private_u32("accl_loop_count"));
        }
        let s = self.private_u32("accl_cut_start");
        let e = self.private_u32("accl_cut_end");
        self.cut_vars = Some((s, e));
        // A flat kernel without the first-iteration field cannot be run
        // in parts ([`crate::plan::Plan::flat_chunk`]): its grid-stride loop may
        // reach the cap too.
        let whole = self.k.shape == crate::kir::Shape::Flat
            && self.layout.member(FieldKind::First).is_none();
        if !(self.spec.loop_cap && (whole || crate::plan::may_reach_loop_cap(self.k))) {
            return;
        }
        self.cut_guard = true;
    }

    /// llvmpipe runs a workgroup narrower than its SIMD width with the
    /// lanes past it masked, yet they keep a data-dependent loop going
    /// (their loads read zeros), until its hidden cap ends every loop of
    /// the invocation: the workgroup's real lane then reports a cut it
    /// never had. Those lanes leave at once. (No real invocation has a
    /// local id past the workgroup size: nothing changes for them.)
    pub(super) fn leave_lanes_past_the_workgroup(&mut self) {
        if !self.cut_guard {
            return;
        }
        let bool_t = self.m.ty(Ty::Bool);
        let lid = self.local_id();
        let past = spv(self
            .m
            .b
            .u_greater_than_equal(bool_t, None, lid, self.wg_size));
        // In a workgroup of one, those lanes' local ids are 0 too; their
        // places in the subgroup are not.
        self.m.add_cap(Capability::GroupNonUniform);
        let lane = self.builtin_u32(
            BuiltIn::SubgroupLocalInvocationId,
            "gl_SubgroupInvocationID",
        );
        let past_lane = spv(self
            .m
            .b
            .u_greater_than_equal(bool_t, None, lane, self.wg_size));
        let past = spv(self.m.b.logical_or(bool_t, None, past, past_lane));
        let m = self.begin_if(past);
        spv(self.m.b.ret());
        self.label(m);
    }

    /// The `exited` flag of a loop [`Self::guarded_back_edge`] closes
    /// (with the guard), false until the loop is left through its exit.
    pub(super) fn exit_flag(&mut self) -> Option<Word> {
        if !self.cut_guard {
            return None;
        }
        let v = self.fvar(Ty::Bool, "exited");
        let bt = self.m.ty(Ty::Bool);
        let fls = self.m.b.constant_false(bt);
        spv(self.m.b.store(v, fls, None, []));
        Some(v)
    }

    /// The back-edge of the kernel's outermost loop: round again while the
    /// fault record's code is not `u32::MAX` (always, at run time: no fault
    /// has that code), read from its buffer at each turn, so no optimiser
    /// can know it. llvmpipe's hidden cap leaves a loop at its back-edge, a
    /// path the SPIR-V does not show; with an unconditional back-edge every
    /// path to the merge that the driver's optimiser sees sets `exited`, so
    /// it would fold the check after the loop away. Once the cap is reached
    /// every later back-edge leaves its loop, and this loop takes one after
    /// every iteration, so guarding it alone catches a cut anywhere in the
    /// kernel, nested loops and functions included, at the cost of one load
    /// and test per iteration of it. (The test is read afresh, not kept in
    /// a variable: llvmpipe splits a kernel with barriers into pieces, and
    /// a value kept from before a barrier read false after one.)
    pub(super) fn guarded_back_edge(&mut self, header: Word, merge: Word) {
        if !self.cut_guard {
            spv(self.m.b.branch(header));
            return;
        }
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let w = self.fault_word(0);
        let code = spv(self.m.b.load(u32t, None, w, None, []));
        let never = self.m.u32c(u32::MAX);
        let go = spv(self.m.b.i_not_equal(bool_t, None, code, never));
        spv(self.m.b.branch_conditional(go, header, merge, []));
    }

    /// The end of a loop header that goes on while `more` holds: to `body`,
    /// else to `merge` through a block that marks the loop exited.
    pub(super) fn header_branch(
        &mut self,
        more: Word,
        body: Word,
        merge: Word,
        exited: Option<Word>,
    ) {
        let Some(e) = exited else {
            spv(self.m.b.branch_conditional(more, body, merge, []));
            return;
        };
        let leave = self.m.b.id();
        spv(self.m.b.branch_conditional(more, body, leave, []));
        self.label(leave);
        let bool_t = self.m.ty(Ty::Bool);
        let t = self.m.b.constant_true(bool_t);
        spv(self.m.b.store(e, t, None, []));
        spv(self.m.b.branch(merge));
    }

    fn fault_word(&mut self, i: usize) -> Word {
        let u32t = self.m.ty(Ty::U32);
        let p = self.m.ptr(StorageClass::StorageBuffer, u32t);
        let zero = self.m.u32c(0);
        let iw = self.m.u32c(i as u32);
        let var = self.fault_var.expect("fault buffer declared");
        spv(self.m.b.access_chain(p, None, var, [zero, iw]))
    }

    /// Claim the record with `code` (a `u32` value) and, if this invocation
    /// was first, fill words 1.. with `rest` (`u32` values, in order).
    fn record(&mut self, code: Word, rest: &[Word]) {
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let p0 = self.fault_word(0);
        let scope = self.m.u32c(1); // Device
        let sem = self.m.u32c(0); // Relaxed
        let zero = self.m.u32c(0);
        let old = spv(self
            .m
            .b
            .atomic_compare_exchange(u32t, None, p0, scope, sem, sem, code, zero));
        let first = spv(self.m.b.i_equal(bool_t, None, old, zero));
        let m = self.begin_if(first);
        for (i, &w) in rest.iter().enumerate() {
            let p = self.fault_word(i + 1);
            spv(self.m.b.store(p, w, None, []));
        }
        self.end_if(m);
    }

    /// `v` (of type `t`) as two `u32` words of its 64-bit value (signed
    /// types sign-extended).
    fn split64(&mut self, v: Word, t: Ty) -> (Word, Word) {
        let u32t = self.m.ty(Ty::U32);
        match t {
            Ty::I64 | Ty::U64 => {
                let u64t = self.m.ty(Ty::U64);
                let u = if t == Ty::I64 {
                    spv(self.m.b.bitcast(u64t, None, v))
                } else {
                    v
                };
                let lo = spv(self.m.b.u_convert(u32t, None, u));
                let s32 = self.int_const(Ty::U64, 32);
                let h = spv(self.m.b.shift_right_logical(u64t, None, u, s32));
                let hi = spv(self.m.b.u_convert(u32t, None, h));
                (lo, hi)
            }
            Ty::I32 => {
                let lo = spv(self.m.b.bitcast(u32t, None, v));
                let i32t = self.m.ty(Ty::I32);
                let s31 = self.int_const(Ty::I32, 31);
                let sign = spv(self.m.b.shift_right_arithmetic(i32t, None, v, s31));
                let hi = spv(self.m.b.bitcast(u32t, None, sign));
                (lo, hi)
            }
            _ => (v, self.m.u32c(0)),
        }
    }

    fn span_words(&mut self, s: Span) -> [Word; 2] {
        [self.m.u32c(s.start), self.m.u32c(s.end)]
    }

    /// The checked form of [`Writer::element`]: each index against its
    /// axis, then the leading row against the rows the buffer holds. On a
    /// violation the record is written and the pointer goes to element 0;
    /// the second value says whether the access is in bounds.
    pub(super) fn element_checked(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
        whole: Span,
    ) -> Result<(Word, Word), Diag> {
        let a = array.index();
        let idx = self.idx;
        let idx_w = self.m.ty(idx);
        let bool_t = self.m.ty(Ty::Bool);
        let mut lin = None;
        let mut ok: Option<Word> = None;
        // Per axis: in bounds, index value and its type, extent, span.
        let mut axes: Vec<(Word, Word, Ty, Word, Span)> = Vec::new();
        for (d, &i) in index.iter().enumerate() {
            let t = Ty::reg(f.ty(i));
            let v = self.expr(f, i)?;
            let dim = self.load_arg(FieldKind::Dim(a, d))?;
            // Compared unsigned (a negative index is huge), at 64 bits when
            // either side has them.
            let wide = if t == Ty::I64 || t == Ty::U64 || idx == Ty::U64 {
                Ty::U64
            } else {
                Ty::U32
            };
            let vw = self.int_cast(v, t, wide);
            let dw = self.int_cast(dim, idx, wide);
            let wt = self.m.ty(Ty::Bool);
            let in_d = spv(self.m.b.u_less_than(wt, None, vw, dw));
            ok = Some(match ok {
                None => in_d,
                Some(o) => spv(self.m.b.logical_and(bool_t, None, o, in_d)),
            });
            axes.push((in_d, v, t, dim, f.exprs.span(i)));
            let vi = self.int_cast(v, t, idx);
            lin = Some(match lin {
                None => vi,
                Some(acc) => {
                    let m = spv(self.m.b.i_mul(idx_w, None, acc, dim));
                    spv(self.m.b.i_add(idx_w, None, m, vi))
                }
            });
        }
        let (Some(lin), Some(axes_ok)) = (lin, ok) else {
            return Err(super::ice(self.k.span, "an element without indices"));
        };
        let base = self.load_arg(FieldKind::Base(a))?;
        let rel = spv(self.m.b.i_sub(idx_w, None, lin, base));
        let u32t = self.m.ty(Ty::U32);
        let len = self.buffer_len(a);
        let in_buf = spv(self.m.b.u_less_than(bool_t, None, rel, len));
        let ok = spv(self.m.b.logical_and(bool_t, None, axes_ok, in_buf));
        let bad = spv(self.m.b.logical_not(bool_t, None, ok));
        let m = self.begin_if(bad);
        {
            // The first axis out of bounds, else the section.
            let mut code = self.m.u32c(fault::SECTION);
            let mut axis = self.m.u32c(0);
            let (i0, t0) = (axes[0].1, axes[0].2);
            let (mut klo, mut khi) = self.split64(i0, t0);
            // Section: the first present row and the number of rows.
            let mut row = self.int_const(idx, 1);
            for ax in &axes[1..] {
                row = spv(self.m.b.i_mul(idx_w, None, row, ax.3));
            }
            let first = spv(self.m.b.u_div(idx_w, None, base, row));
            let rows = spv(self.m.b.u_div(idx_w, None, len, row));
            let (mut alo, mut ahi) = self.split64(first, idx);
            let (mut blo, mut bhi) = self.split64(rows, idx);
            let [mut s0, mut s1] = self.span_words(axes[0].4);
            for d in (0..axes.len()).rev() {
                let (in_d, v, t, dim, sp) = axes[d];
                let out = spv(self.m.b.logical_not(bool_t, None, in_d));
                let (vlo, vhi) = self.split64(v, t);
                let (dlo, dhi) = self.split64(dim, idx);
                let [sp0, sp1] = self.span_words(sp);
                let bounds = self.m.u32c(fault::BOUNDS);
                let dw = self.m.u32c(d as u32);
                let zero = self.m.u32c(0);
                let sel = |w: &mut Self, a: Word, b: Word| spv(w.m.b.select(u32t, None, out, a, b));
                code = sel(self, bounds, code);
                axis = sel(self, dw, axis);
                klo = sel(self, vlo, klo);
                khi = sel(self, vhi, khi);
                alo = sel(self, dlo, alo);
                ahi = sel(self, dhi, ahi);
                blo = sel(self, zero, blo);
                bhi = sel(self, zero, bhi);
                s0 = sel(self, sp0, s0);
                s1 = sel(self, sp1, s1);
            }
            let [w0, w1] = self.span_words(whole);
            self.record(code, &[axis, klo, khi, alo, ahi, blo, bhi, s0, s1, w0, w1]);
        }
        self.end_if(m);
        let zero = self.int_const(idx, 0);
        let safe = spv(self.m.b.select(idx_w, None, ok, rel, zero));
        let ptr = self.element_ptr(array, safe);
        Ok((ptr, ok))
    }

    /// Bounds-check mode: record a zero divisor `bv` (of type `t`) of the
    /// division at `span`.
    pub(super) fn check_divisor(&mut self, bv: Word, t: Ty, span: Span) {
        let bool_t = self.m.ty(Ty::Bool);
        let zero = self.int_const(t, 0);
        let is0 = spv(self.m.b.i_equal(bool_t, None, bv, zero));
        let m = self.begin_if(is0);
        let code = self.m.u32c(fault::DIV_ZERO);
        let z = self.m.u32c(0);
        let [s0, s1] = self.span_words(span);
        self.record(code, &[z, z, z, z, z, z, z, s0, s1, s0, s1]);
        self.end_if(m);
    }

    /// The back-edge of a user loop: count it against the budget; returns
    /// whether to go round again (the caller branches to the header or the
    /// merge on it). No branch here: llvmpipe runs the body of any `if` in
    /// a loop for all its lanes, masked, so even a cold one costs.
    pub(super) fn loop_back_edge(&mut self) -> Option<Word> {
        let c = self.count_var?;
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let n = spv(self.m.b.load(u32t, None, c, None, []));
        let one = self.m.u32c(1);
        let n1 = spv(self.m.b.i_add(u32t, None, n, one));
        spv(self.m.b.store(c, n1, None, []));
        let budget = self.m.u32c(self.spec.loop_budget);
        Some(spv(self.m.b.u_less_than_equal(bool_t, None, n1, budget)))
    }

    /// After a user loop's merge: if it was left without taking one of its
    /// exits (`exited` false: over budget, or a driver cut it short), keep
    /// its span as the first such loop, without a branch.
    pub(super) fn loop_exit_check(&mut self, exited: Word, span: Span) {
        let Some((vs, ve)) = self.cut_vars else {
            return;
        };
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let e = spv(self.m.b.load(bool_t, None, exited, None, []));
        let cs = spv(self.m.b.load(u32t, None, vs, None, []));
        let ce = spv(self.m.b.load(u32t, None, ve, None, []));
        let zero = self.m.u32c(0);
        let none_yet = spv(self.m.b.i_equal(bool_t, None, ce, zero));
        let cut = spv(self.m.b.logical_not(bool_t, None, e));
        let first = spv(self.m.b.logical_and(bool_t, None, cut, none_yet));
        let [s0, s1] = self.span_words(span);
        let one = self.m.u32c(1);
        let s1 = spv(self.m.b.i_add(u32t, None, s1, one));
        let ns = spv(self.m.b.select(u32t, None, first, s0, cs));
        let ne = spv(self.m.b.select(u32t, None, first, s1, ce));
        spv(self.m.b.store(vs, ns, None, []));
        spv(self.m.b.store(ve, ne, None, []));
    }

    /// At the end of the entry point: record the first loop this
    /// invocation left abnormally: over the budget, or cut short.
    pub(super) fn report_cut_loops(&mut self) {
        let Some((vs, ve)) = self.cut_vars else {
            return;
        };
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let ce = spv(self.m.b.load(u32t, None, ve, None, []));
        let zero = self.m.u32c(0);
        let any = spv(self.m.b.i_not_equal(bool_t, None, ce, zero));
        let m = self.begin_if(any);
        let cs = spv(self.m.b.load(u32t, None, vs, None, []));
        let one = self.m.u32c(1);
        let ce1 = spv(self.m.b.i_sub(u32t, None, ce, one));
        let cut = self.m.u32c(fault::LOOP_CUT);
        let (code, budget) = match self.count_var {
            Some(c) => {
                let n = spv(self.m.b.load(u32t, None, c, None, []));
                let budget = self.m.u32c(self.spec.loop_budget);
                let over = spv(self.m.b.u_greater_than(bool_t, None, n, budget));
                let b = self.m.u32c(fault::LOOP_BUDGET);
                (spv(self.m.b.select(u32t, None, over, b, cut)), budget)
            }
            None => (cut, zero),
        };
        self.record(
            code,
            &[zero, zero, zero, budget, zero, zero, zero, cs, ce1, cs, ce1],
        );
        self.end_if(m);
    }
}
