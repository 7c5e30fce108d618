//! Private arrays' copies in workgroup memory (`crate::private_copies`
//! says which and why). At the top of the entry point each candidate gets
//! a workgroup array of [`crate::private_copies::cap`] elements and a
//! uniform test: does the workgroup's share (one section per lane, or one
//! per gang) fit? The section's size is the hidden array's shape past its
//! first axis, read from the argument block, so the answer is the same for
//! every invocation and the branches on it stay uniform. Every access of
//! the hidden array then branches on it: the lane's or gang's copy, or the
//! hidden array as before. An owner's iteration starts its copy with
//! [`crate::kir::StmtKind::PrivateInit`] (between workgroup barriers when
//! the gang's lanes share it). Check mode keeps the hidden array (its
//! reports need device elements), and so do gangs laid out as teams (a
//! workgroup runs several gangs at different iterations).

use super::types::Ty;
use super::writer::WgCopy;
use super::{spv, Writer};
use crate::abi::FieldKind;
use crate::kir::{ArrayH, CopySlots, ExprH, Function};
use lang::Diag;
use rspirv::spirv::{SelectionControl, StorageClass, Word};

impl Writer<'_> {
    /// Before the iteration loop: each placeable copy's workgroup array,
    /// base and uniform test.
    pub(super) fn copies_begin(&mut self) -> Result<(), Diag> {
        if self.spec.checks {
            return Ok(());
        }
        for (i, p) in self.k.private_copies.clone().into_iter().enumerate() {
            let Ok(slots) = p.place else { continue };
            let a = p.array.index();
            let view = self.views[a];
            if self.copies[a].is_some()
                || (slots == CopySlots::Gang && self.teams.is_some())
                || view.size() < 4
            {
                continue;
            }
            let local = self.spec.local_copies.get(i).copied().unwrap_or(0);
            if local > 0 && slots == CopySlots::Lane {
                self.local_copy(a, local as u32, p.first);
                continue;
            }
            let cap = crate::private_copies::cap(self.k, a);
            if cap == 0 {
                continue;
            }
            let idx_w = self.m.ty(self.idx);
            let bool_t = self.m.ty(Ty::Bool);
            let rank = self.k.arrays[p.array].rank as usize;
            let mut size = self.int_const(self.idx, 1);
            for d in 1..rank {
                let dim = self.load_arg(FieldKind::Dim(a, d))?;
                size = spv(self.m.b.i_mul(idx_w, None, size, dim));
            }
            let cap_i = self.int_const(self.idx, cap as i64);
            let (per, base) = match slots {
                CopySlots::Lane => {
                    let lanes = self.int_cast(self.wg_size, Ty::U32, self.idx);
                    let lid = self.local_id();
                    let lid = self.int_cast(lid, Ty::U32, self.idx);
                    (
                        spv(self.m.b.u_div(idx_w, None, cap_i, lanes)),
                        spv(self.m.b.i_mul(idx_w, None, lid, size)),
                    )
                }
                CopySlots::Gang => (cap_i, self.int_const(self.idx, 0)),
            };
            let on = spv(self.m.b.u_less_than_equal(bool_t, None, size, per));
            let et = self.m.ty(view);
            let n = self.m.u32c(cap);
            let arr_t = self.m.b.type_array(et, n);
            let var = self.gvar(arr_t, StorageClass::Workgroup, &format!("copies_{a}"));
            self.copies[a] = Some(WgCopy {
                var,
                on,
                size,
                base,
                cap,
                slots,
                first: p.first,
                local: false,
            });
        }
        Ok(())
    }

    /// A lane's copy of array `a` as a Function-storage array of `n`
    /// elements (the section's).
    fn local_copy(&mut self, a: usize, n: u32, first: bool) {
        let et = self.m.ty(self.views[a]);
        let len = self.m.u32c(n);
        let arr_t = self.m.b.type_array(et, len);
        let var = self.fvar_of(arr_t, &format!("local_copy_{a}"));
        let bool_t = self.m.ty(Ty::Bool);
        self.copies[a] = Some(WgCopy {
            var,
            on: self.m.b.constant_true(bool_t),
            size: self.int_const(self.idx, n as i64),
            base: self.int_const(self.idx, 0),
            cap: n,
            slots: CopySlots::Lane,
            first,
            local: true,
        });
    }

    /// The copy of array `a` in workgroup memory, if it has one.
    pub(super) fn copy_of(&self, a: ArrayH) -> Option<WgCopy> {
        self.copies.get(a.index()).copied().flatten()
    }

    /// The indices of an access, in the index type.
    pub(super) fn index_words(&mut self, f: &Function, index: &[ExprH]) -> Result<Vec<Word>, Diag> {
        let mut out = Vec::new();
        for &i in index {
            let v = self.expr(f, i)?;
            out.push(self.int_cast(v, Ty::reg(f.ty(i)), self.idx));
        }
        Ok(out)
    }

    /// Row-major over `ix` (index type), axes from `from` on.
    pub(super) fn row_major(&mut self, a: usize, ix: &[Word], from: usize) -> Result<Word, Diag> {
        let idx_w = self.m.ty(self.idx);
        let mut lin = None;
        for (d, &v) in ix.iter().enumerate().skip(from) {
            lin = Some(match lin {
                None => v,
                Some(acc) => {
                    let dim = self.load_arg(FieldKind::Dim(a, d))?;
                    let m = spv(self.m.b.i_mul(idx_w, None, acc, dim));
                    spv(self.m.b.i_add(idx_w, None, m, v))
                }
            });
        }
        Ok(match lin {
            Some(l) => l,
            None => self.int_const(self.idx, 0),
        })
    }

    /// A pointer into the workgroup copy: the lane's base plus the section
    /// offset of `ix[1..]`, kept inside the array (an index outside the
    /// section is an error on the host; here it must not leave the array).
    fn copy_ptr(&mut self, c: WgCopy, a: usize, ix: &[Word]) -> Result<Word, Diag> {
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let off = self.row_major(a, ix, 1)?;
        let at = spv(self.m.b.i_add(idx_w, None, c.base, off));
        let cap = self.int_const(self.idx, c.cap as i64);
        let last = self.int_const(self.idx, c.cap as i64 - 1);
        let inside = spv(self.m.b.u_less_than(bool_t, None, at, cap));
        let at = spv(self.m.b.select(idx_w, None, inside, at, last));
        let at = self.int_cast(at, self.idx, Ty::U32);
        let et = self.m.ty(self.views[a]);
        let pe = self.m.ptr(c.class(), et);
        Ok(spv(self.m.b.access_chain(pe, None, c.var, [at])))
    }

    /// The element's pointer in the hidden array (buffer index less base).
    fn hidden_ptr(&mut self, a: ArrayH, ix: &[Word]) -> Result<Word, Diag> {
        let idx_w = self.m.ty(self.idx);
        let lin = self.row_major(a.index(), ix, 0)?;
        let base = self.load_arg(FieldKind::Base(a.index()))?;
        let lin = spv(self.m.b.i_sub(idx_w, None, lin, base));
        Ok(self.element_ptr(a, lin))
    }

    /// The raw (view-typed) value of an element of a private array.
    pub(super) fn copy_load(&mut self, c: WgCopy, a: ArrayH, ix: &[Word]) -> Result<Word, Diag> {
        let et = self.m.ty(self.views[a.index()]);
        if c.local {
            let p = self.copy_ptr(c, a.index(), ix)?;
            return Ok(spv(self.m.b.load(et, None, p, None, [])));
        }
        let (then_l, else_l, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(c.on, then_l, else_l, []));
        self.label(then_l);
        let p = self.copy_ptr(c, a.index(), ix)?;
        let x = spv(self.m.b.load(et, None, p, None, []));
        let then_end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(else_l);
        let p = self.hidden_ptr(a, ix)?;
        let y = self.load_elem(et, p);
        let else_end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(merge);
        Ok(spv(self.m.b.phi(et, None, [(x, then_end), (y, else_end)])))
    }

    /// Store the raw value `v` to an element of a private array.
    pub(super) fn copy_store(
        &mut self,
        c: WgCopy,
        a: ArrayH,
        ix: &[Word],
        v: Word,
    ) -> Result<(), Diag> {
        if c.local {
            let p = self.copy_ptr(c, a.index(), ix)?;
            spv(self.m.b.store(p, v, None, []));
            return Ok(());
        }
        let (then_l, else_l, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(c.on, then_l, else_l, []));
        self.label(then_l);
        let p = self.copy_ptr(c, a.index(), ix)?;
        spv(self.m.b.store(p, v, None, []));
        spv(self.m.b.branch(merge));
        self.label(else_l);
        let p = self.hidden_ptr(a, ix)?;
        self.store_elem(p, v);
        spv(self.m.b.branch(merge));
        self.label(merge);
        Ok(())
    }

    /// `PrivateInit`: the copy starts as the host's fresh one does (zero,
    /// or the section's values from the hidden array's copy 0).
    pub(super) fn copy_init(&mut self, a: ArrayH) -> Result<(), Diag> {
        let Some(c) = self.copy_of(a) else {
            return Ok(());
        };
        if c.local && !c.first {
            // One store of a zero array (the driver's memset).
            let et = self.m.ty(self.views[a.index()]);
            let len = self.m.u32c(c.cap);
            let arr_t = self.m.b.type_array(et, len);
            let zero = self.m.b.constant_null(arr_t);
            spv(self.m.b.store(c.var, zero, None, []));
            return Ok(());
        }
        let gang = c.slots == CopySlots::Gang;
        if gang {
            // The previous iteration's lanes are done with the copy.
            self.wg_barrier();
        }
        let m = self.begin_if(c.on);
        let view = self.views[a.index()];
        let et = self.m.ty(view);
        let idx_w = self.m.ty(self.idx);
        let bound = self.int_cast(c.size, self.idx, Ty::U32);
        let (start, step) = if gang {
            (self.local_id(), self.wg_size)
        } else {
            (self.m.u32c(0), self.m.u32c(1))
        };
        self.counted_loop(Ty::U32, (start, bound, step), false, |w, e| {
            let e = w.int_cast(e, Ty::U32, w.idx);
            let v = if c.first {
                let base = w.load_arg(FieldKind::Base(a.index()))?;
                let lin = spv(w.m.b.i_sub(idx_w, None, e, base));
                let p = w.element_ptr(a, lin);
                w.load_elem(et, p)
            } else {
                w.m.konst(view, 0)
            };
            let at = spv(w.m.b.i_add(idx_w, None, c.base, e));
            let at = w.int_cast(at, w.idx, Ty::U32);
            let pe = w.m.ptr(c.class(), et);
            let p = spv(w.m.b.access_chain(pe, None, c.var, [at]));
            spv(w.m.b.store(p, v, None, []));
            Ok(())
        })?;
        self.end_if(m);
        if gang {
            self.wg_barrier();
        }
        Ok(())
    }
}
