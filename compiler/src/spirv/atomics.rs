//! Atomics: each array's storage view (a float array updated by
//! compare-and-swap is declared as integer bits), device-scope relaxed
//! read-modify-writes, native float add where the device has it, and a
//! compare-and-swap loop otherwise.

use super::types::Ty;
use super::{spv, Writer};
use crate::kir::{ArrayH, AtomicKind, Expr, ExprH, Function, Kernel};
use crate::Spec;
use lang::{Diag, Scalar};
use rspirv::spirv::{LoopControl, SelectionControl, Word};

/// Does the device do this float atomic natively (else: compare-and-swap)?
fn native_float_atomic(op: AtomicKind, elem: Scalar, spec: &Spec) -> bool {
    matches!(op, AtomicKind::Add | AtomicKind::Sub)
        && match elem {
            Scalar::F32 => spec.features.float32_atomic_add,
            Scalar::F64 => spec.features.float64_atomic_add,
            _ => false,
        }
}

/// The element type each array's buffer is declared with: its storage type,
/// except a float array with a compare-and-swap atomic, which is viewed as
/// `u32`/`u64` bits (compare-exchange is integer-only); its plain loads and
/// stores bitcast.
pub(super) fn storage_views(k: &Kernel, spec: &Spec) -> Vec<Ty> {
    let mut views: Vec<Ty> = k.arrays.iter().map(|(_, a)| Ty::storage(a.elem)).collect();
    for f in std::iter::once(&k.entry).chain(k.functions.iter().map(|(_, f)| f)) {
        for (_, e) in f.exprs.iter() {
            if let Expr::Atomic { array, op, .. } = e {
                let elem = k.arrays[*array].elem;
                if elem.is_float() && !native_float_atomic(*op, elem, spec) {
                    views[array.index()] = if elem == Scalar::F64 {
                        Ty::U64
                    } else {
                        Ty::U32
                    };
                }
            }
        }
    }
    views
}

impl Writer<'_> {
    /// An atomic read-modify-write; the value is the element's old value.
    pub(super) fn atomic(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
        op: AtomicKind,
        value: ExprH,
        whole: lang::Span,
    ) -> Result<Word, Diag> {
        if let Some(p) = self.private[array.index()] {
            let lin = self.element_index(f, array, index)?;
            let x = self.expr(f, value)?;
            return self.private_update(p, array, op, lin, x, |w| {
                let ptr = w.element_ptr(array, lin);
                w.atomic_at(ptr, array, op, x)
            });
        }
        let (ptr, ok) = self.element_at(f, array, index, whole)?;
        let x = self.expr(f, value)?;
        let Some(ok) = ok else {
            return self.atomic_at(ptr, array, op, x);
        };
        // Check mode: only an element in bounds is updated; otherwise the
        // value is 0.
        let pre = self.cur_label;
        let then_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(ok, then_l, merge, []));
        self.label(then_l);
        let r = self.atomic_at(ptr, array, op, x)?;
        let end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(merge);
        let t = Ty::reg(self.k.arrays[array].elem);
        let tw = self.m.ty(t);
        let zero = match t {
            Ty::F32 | Ty::F64 => self.float_const(t, 0.0),
            Ty::Bool => self.m.b.constant_false(tw),
            _ => self.int_const(t, 0),
        };
        Ok(spv(self.m.b.phi(tw, None, [(r, end), (zero, pre)])))
    }

    /// The atomic update of the element at `ptr` with value `x`.
    pub(super) fn atomic_at(
        &mut self,
        ptr: Word,
        array: ArrayH,
        op: AtomicKind,
        x: Word,
    ) -> Result<Word, Diag> {
        let elem = self.k.arrays[array].elem;
        let t = Ty::reg(elem);
        let tw = self.m.ty(t);
        let view = self.views[array.index()];
        let scope = self.m.u32c(1); // Device
        let sem = self.m.u32c(0); // Relaxed
        if matches!(elem, Scalar::I64) || view == Ty::U64 {
            self.m.add_cap(rspirv::spirv::Capability::Int64Atomics);
        }
        let bool_t = self.m.ty(Ty::Bool);
        // `atomic read` / `atomic write`: on the element's bits (a float
        // array with atomics has an integer view, see storage_views).
        if matches!(op, AtomicKind::Read | AtomicKind::Write) {
            let vw = self.m.ty(view);
            if op == AtomicKind::Read {
                let bits = spv(self.m.b.atomic_load(vw, None, ptr, scope, sem));
                return Ok(if view == t {
                    bits
                } else {
                    spv(self.m.b.bitcast(tw, None, bits))
                });
            }
            let bits = if view == t {
                x
            } else {
                spv(self.m.b.bitcast(vw, None, x))
            };
            spv(self.m.b.atomic_store(ptr, scope, sem, bits));
            return Ok(x);
        }
        if elem.is_int() {
            let signed = elem.is_signed_int();
            let bm = &mut self.m.b;
            return Ok(match op {
                AtomicKind::Add => spv(bm.atomic_i_add(tw, None, ptr, scope, sem, x)),
                AtomicKind::Sub => spv(bm.atomic_i_sub(tw, None, ptr, scope, sem, x)),
                AtomicKind::Max if signed => spv(bm.atomic_s_max(tw, None, ptr, scope, sem, x)),
                AtomicKind::Max => spv(bm.atomic_u_max(tw, None, ptr, scope, sem, x)),
                AtomicKind::Min if signed => spv(bm.atomic_s_min(tw, None, ptr, scope, sem, x)),
                AtomicKind::Min => spv(bm.atomic_u_min(tw, None, ptr, scope, sem, x)),
                AtomicKind::And => spv(bm.atomic_and(tw, None, ptr, scope, sem, x)),
                AtomicKind::Or => spv(bm.atomic_or(tw, None, ptr, scope, sem, x)),
                AtomicKind::Xor => spv(bm.atomic_xor(tw, None, ptr, scope, sem, x)),
                AtomicKind::Xchg => spv(bm.atomic_exchange(tw, None, ptr, scope, sem, x)),
                AtomicKind::Read | AtomicKind::Write => unreachable!("handled above"),
                AtomicKind::Mul
                | AtomicKind::Div
                | AtomicKind::Shl
                | AtomicKind::Shr
                | AtomicKind::RevSub
                | AtomicKind::RevDiv
                | AtomicKind::RevShl
                | AtomicKind::RevShr => {
                    // A shift count wraps at the bit width, as the host's
                    // (and the device's plain `<<`) does: SPIR-V leaves a
                    // count past the width undefined.
                    let mask = match elem {
                        Scalar::I64 => self.int_const(t, 63),
                        _ => self.int_const(t, 31),
                    };
                    return Ok(self.cas_loop(ptr, t, t, |w, old| {
                        let bm = &mut w.m.b;
                        // `x = e << x` shifts e by the element.
                        let (value, count) = match op {
                            AtomicKind::RevShl | AtomicKind::RevShr => (x, old),
                            _ => (old, x),
                        };
                        match op {
                            AtomicKind::Mul => spv(bm.i_mul(tw, None, old, x)),
                            AtomicKind::Div if signed => spv(bm.s_div(tw, None, old, x)),
                            AtomicKind::Div => spv(bm.u_div(tw, None, old, x)),
                            AtomicKind::RevDiv if signed => spv(bm.s_div(tw, None, x, old)),
                            AtomicKind::RevDiv => spv(bm.u_div(tw, None, x, old)),
                            AtomicKind::RevSub => spv(bm.i_sub(tw, None, x, old)),
                            AtomicKind::Shl | AtomicKind::RevShl => {
                                let n = spv(bm.bitwise_and(tw, None, count, mask));
                                spv(bm.shift_left_logical(tw, None, value, n))
                            }
                            _ if signed => {
                                let n = spv(bm.bitwise_and(tw, None, count, mask));
                                spv(bm.shift_right_arithmetic(tw, None, value, n))
                            }
                            _ => {
                                let n = spv(bm.bitwise_and(tw, None, count, mask));
                                spv(bm.shift_right_logical(tw, None, value, n))
                            }
                        }
                    }));
                }
            });
        }
        if view == Ty::storage(elem) {
            // Native float add (the device has the feature: see storage_views).
            let cap = if elem == Scalar::F64 {
                rspirv::spirv::Capability::AtomicFloat64AddEXT
            } else {
                rspirv::spirv::Capability::AtomicFloat32AddEXT
            };
            self.m.add_cap(cap);
            self.m.add_ext("SPV_EXT_shader_atomic_float_add");
            let x = if op == AtomicKind::Sub {
                spv(self.m.b.f_negate(tw, None, x))
            } else {
                x
            };
            return Ok(spv(self.m.b.atomic_f_add_ext(tw, None, ptr, scope, sem, x)));
        }
        if op == AtomicKind::Xchg {
            let vw = self.m.ty(view);
            let bits = spv(self.m.b.bitcast(vw, None, x));
            let old = spv(self.m.b.atomic_exchange(vw, None, ptr, scope, sem, bits));
            return Ok(spv(self.m.b.bitcast(tw, None, old)));
        }
        let exact = self.exact_f32().filter(|_| t == Ty::F32);
        Ok(self.cas_loop(ptr, view, t, |w, old| {
            match (op, exact) {
                (AtomicKind::Div, Some(r)) => return w.f32_div_exact(r, old, x),
                (AtomicKind::RevDiv, Some(r)) => return w.f32_div_exact(r, x, old),
                _ => {}
            }
            let bm = &mut w.m.b;
            match op {
                AtomicKind::Add => spv(bm.f_add(tw, None, old, x)),
                AtomicKind::Sub => spv(bm.f_sub(tw, None, old, x)),
                AtomicKind::Mul => spv(bm.f_mul(tw, None, old, x)),
                AtomicKind::Div => spv(bm.f_div(tw, None, old, x)),
                AtomicKind::RevSub => spv(bm.f_sub(tw, None, x, old)),
                AtomicKind::RevDiv => spv(bm.f_div(tw, None, x, old)),
                _ => {
                    // The host's: take x when x is greater (less), or old is NaN.
                    let better = if op == AtomicKind::Max {
                        spv(bm.f_ord_greater_than(bool_t, None, x, old))
                    } else {
                        spv(bm.f_ord_less_than(bool_t, None, x, old))
                    };
                    let nan = spv(bm.is_nan(bool_t, None, old));
                    let take = spv(bm.logical_or(bool_t, None, better, nan));
                    spv(bm.select(tw, None, take, x, old))
                }
            }
        }))
    }

    /// `loop { old = *ptr; new = f(old); if cas(ptr, old, new) == old break }`
    /// on the element's bits (`view`: the buffer's integer type), with the
    /// value computed in register type `t`. The value is the old element.
    fn cas_loop(
        &mut self,
        ptr: Word,
        view: Ty,
        t: Ty,
        f: impl FnOnce(&mut Self, Word) -> Word,
    ) -> Word {
        self.cas_loop_in(ptr, view, t, 1, f)
    }

    /// [`Writer::cas_loop`] at memory scope `scope` (1 device, 2 workgroup).
    pub(super) fn cas_loop_in(
        &mut self,
        ptr: Word,
        view: Ty,
        t: Ty,
        scope: u32,
        f: impl FnOnce(&mut Self, Word) -> Word,
    ) -> Word {
        let vw = self.m.ty(view);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let scope = self.m.u32c(scope);
        let sem = self.m.u32c(0);
        let first = spv(self.m.b.atomic_load(vw, None, ptr, scope, sem));
        let pre = self.cur_label;
        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        let res = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let cur = spv(self.m.b.phi(vw, None, [(first, pre), (res, cont)]));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch(body));
        self.label(body);
        let old = if view == t {
            cur
        } else {
            spv(self.m.b.bitcast(tw, None, cur))
        };
        let new = f(self, old);
        let new_bits = if view == t {
            new
        } else {
            spv(self.m.b.bitcast(vw, None, new))
        };
        spv(self
            .m
            .b
            .atomic_compare_exchange(vw, Some(res), ptr, scope, sem, sem, new_bits, cur));
        let done = spv(self.m.b.i_equal(bool_t, None, res, cur));
        spv(self.m.b.branch_conditional(done, merge, cont, []));
        self.label(cont);
        spv(self.m.b.branch(header));
        self.label(merge);
        old_after(self, view, t, cur)
    }
}

/// The old value of a compare-and-swap loop, in register type `t`.
fn old_after(w: &mut Writer<'_>, view: Ty, t: Ty, cur: Word) -> Word {
    if view == t {
        cur
    } else {
        let tw = w.m.ty(t);
        spv(w.m.b.bitcast(tw, None, cur))
    }
}
