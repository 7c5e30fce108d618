//! `cache(a[lo:n])`: at the top of the iteration body of a gang loop whose
//! gangs are whole workgroups, the workgroup copies elements `lo..lo + n`
//! of a read-only 1-D array into workgroup memory (between two barriers),
//! and every load of `a` in the rest of that iteration reads an element
//! of the section from there (others from the device array). Anywhere
//! else, on an array the kernel writes, in check mode, or for a section
//! of more than 16 KiB, the hint is ignored: results are the same either
//! way.

use super::writer::Cached;
use super::{spv, Writer};
use crate::kir::{ArrayH, ExprH, Function, Stmt};
use lang::Diag;
use rspirv::spirv::{SelectionControl, StorageClass, Word};

use super::types::Ty;

/// Bytes of workgroup memory one cached section may use.
const CACHE_BYTES: u32 = 16 * 1024;

impl Writer<'_> {
    pub(super) fn cache_stmt(
        &mut self,
        f: &Function,
        s: &Stmt,
        array: ArrayH,
        lo: ExprH,
        count: u32,
    ) -> Result<(), Diag> {
        let a = array.index();
        let view = self.views[a];
        let honour = self.teams.is_none()
            && !self.spec.checks
            && self.top_caches.contains(&(s as *const Stmt))
            && !self.k.arrays[array].written
            && count * view.size().max(1) <= CACHE_BYTES;
        if !honour {
            return Ok(());
        }
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let et = self.m.ty(view);
        // The previous iteration's readers are done with the copy.
        self.wg_barrier();
        let lo_v = self.expr(f, lo)?;
        let lo_v = self.int_cast(lo_v, Ty::reg(f.ty(lo)), self.idx);
        let base = self.load_arg(crate::abi::FieldKind::Base(a))?;
        let lo_b = spv(self.m.b.i_sub(idx_w, None, lo_v, base));
        let var = match self
            .cache_vars
            .iter()
            .find(|(x, n, _)| *x == array && *n == count)
        {
            Some(&(_, _, v)) => v,
            None => {
                let n = self.m.u32c(count);
                let arr_t = self.m.b.type_array(et, n);
                let v = self.gvar(arr_t, StorageClass::Workgroup, &format!("cache_{a}"));
                self.cache_vars.push((array, count, v));
                v
            }
        };
        // for l = lid; l < count; l += wg: copy[l] = a[lo + l] (in range).
        let len = self.buffer_len(a);
        let lid = self.local_id();
        let n = self.m.u32c(count);
        let step = self.wg_size;
        self.counted_loop(Ty::U32, (lid, n, step), false, |w, l| {
            let li = w.int_cast(l, Ty::U32, w.idx);
            let at = spv(w.m.b.i_add(idx_w, None, lo_b, li));
            let ok = spv(w.m.b.u_less_than(bool_t, None, at, len));
            let m = w.begin_if(ok);
            let gp = w.element_ptr(array, at);
            let v = w.load_elem(et, gp);
            let pe = w.m.ptr(StorageClass::Workgroup, et);
            let sp = spv(w.m.b.access_chain(pe, None, var, [l]));
            spv(w.m.b.store(sp, v, None, []));
            w.end_if(m);
            Ok(())
        })?;
        self.wg_barrier();
        self.cached.retain(|c| c.array != array);
        self.cached.push(Cached {
            array,
            var,
            lo: lo_b,
            count,
        });
        Ok(())
    }

    /// The raw (view-typed) value of element `lin` (buffer index) of a
    /// cached array: from the copy inside the section, else the device.
    pub(super) fn cached_load(&mut self, c: Cached, lin: Word) -> Word {
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let et = self.m.ty(self.views[c.array.index()]);
        let rel = spv(self.m.b.i_sub(idx_w, None, lin, c.lo));
        let n = self.int_const(self.idx, c.count as i64);
        let inside = spv(self.m.b.u_less_than(bool_t, None, rel, n));
        let then_l = self.m.b.id();
        let else_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(inside, then_l, else_l, []));
        self.label(then_l);
        let r = self.int_cast(rel, self.idx, Ty::U32);
        let pe = self.m.ptr(StorageClass::Workgroup, et);
        let sp = spv(self.m.b.access_chain(pe, None, c.var, [r]));
        let a = spv(self.m.b.load(et, None, sp, None, []));
        let then_end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(else_l);
        let gp = self.element_ptr(c.array, lin);
        let b = self.load_elem(et, gp);
        let else_end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(merge);
        spv(self.m.b.phi(et, None, [(a, then_end), (b, else_end)]))
    }
}
