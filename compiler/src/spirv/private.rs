//! Privatised atomics: the histogram pattern. In a flat kernel, an `i32`,
//! `u32` or `f32` array that is only ever updated with atomics of one kind
//! (`+=`/`-=`, `max=`, `min=`, and for integers `&=`, `|=`, `^=`, their
//! results unused) gets a copy per workgroup in workgroup memory when it
//! is small enough: the workgroup starts it at the operator's identity, its
//! updates hit that copy (workgroup-scope atomics on chip; for `f32` a
//! compare-and-swap loop on the element's bits), and at the end every
//! element that changed is folded into the device array with one
//! device-scope atomic. (A float copy's sum depends on the order its
//! updates land in, as the device atomics' does.)
//! Thousands of invocations hammering a few hundred bins then contend on
//! chip instead of in the memory system.
//!
//! Whether the copy fits is decided at run time from the buffer's length
//! (`OpArrayLength`, the same for every invocation, so the branch is
//! uniform and the barriers stay in uniform control flow); a larger array
//! takes the plain device atomics. Check mode keeps the plain path (its
//! per-access reports need the device element). An update of an element
//! outside the bound section is dropped, as robust buffer access drops it
//! on the plain path.

use super::types::Ty;
use super::{spv, Writer};
use crate::kir::{ArrayH, AtomicKind, Block, Expr, Kernel, Shape, StmtKind};
use lang::Scalar;
use rspirv::spirv::{SelectionControl, StorageClass, Word};

/// Elements of one workgroup copy (16 KiB of `u32`/`i32`).
pub const CAP: u32 = 4096;
/// At most this many arrays of a kernel are privatised.
const MAX_ARRAYS: usize = 2;

/// How a privatised array's updates combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// `+=` and `-=` (the copy holds the net change; folded with add).
    Sum,
    Max,
    Min,
    And,
    Or,
    Xor,
}

impl Fold {
    fn of(op: AtomicKind) -> Option<Fold> {
        Some(match op {
            AtomicKind::Add | AtomicKind::Sub => Fold::Sum,
            AtomicKind::Max => Fold::Max,
            AtomicKind::Min => Fold::Min,
            AtomicKind::And => Fold::And,
            AtomicKind::Or => Fold::Or,
            AtomicKind::Xor => Fold::Xor,
            AtomicKind::Mul
            | AtomicKind::Xchg
            | AtomicKind::Read
            | AtomicKind::Write
            | AtomicKind::Div
            | AtomicKind::Shl
            | AtomicKind::Shr
            | AtomicKind::RevSub
            | AtomicKind::RevDiv => return None,
        })
    }

    /// The identity's bits for a 32-bit element of type `elem`.
    fn identity_of(self, elem: Scalar) -> u32 {
        match (elem, self) {
            (Scalar::F32, Fold::Max) => f32::NEG_INFINITY.to_bits(),
            (Scalar::F32, Fold::Min) => f32::INFINITY.to_bits(),
            (Scalar::F32, _) => 0,
            _ => self.identity(elem == Scalar::I32),
        }
    }

    /// The identity's bits for a 32-bit integer element.
    fn identity(self, signed: bool) -> u32 {
        match self {
            Fold::Sum | Fold::Or | Fold::Xor => 0,
            Fold::And => u32::MAX,
            Fold::Max if signed => i32::MIN as u32,
            Fold::Max => 0,
            Fold::Min if signed => i32::MAX as u32,
            Fold::Min => u32::MAX,
        }
    }
}

/// A privatised array, once the entry point has set it up.
#[derive(Debug, Clone, Copy)]
pub struct Private {
    pub fold: Fold,
    /// The workgroup copy (an array of [`CAP`] elements).
    pub var: Word,
    /// The bound section's length in elements (`u32`), and whether the
    /// copy is in use (`len <= CAP`; uniform).
    pub len: Word,
    pub on: Word,
}

/// Which arrays of `k` qualify (by array index): see the module docs.
/// `checks`: bounds-check mode, which keeps the plain path.
pub fn candidates(k: &Kernel, checks: bool) -> Vec<Option<Fold>> {
    let mut out = vec![None; k.arrays.len()];
    if k.shape != Shape::Flat || checks || !uniform_exit(&k.entry.body) {
        return out;
    }
    let mut picked = 0;
    for (ah, arr) in k.arrays.iter() {
        let a = ah.index();
        if picked == MAX_ARRAYS {
            break;
        }
        if !matches!(arr.elem, Scalar::I32 | Scalar::U32 | Scalar::F32) {
            continue;
        }
        // Device functions must not touch it (the copy lives in the entry
        // point's setup).
        let elsewhere = k.functions.iter().any(|(_, f)| {
            f.exprs.iter().any(|(_, e)| match e {
                Expr::Load { array, .. } | Expr::Atomic { array, .. } => *array == ah,
                _ => false,
            }) || stores_to(&f.body, ah)
        });
        if elsewhere || stores_to(&k.entry.body, ah) {
            continue;
        }
        let mut fold = None;
        let mut ok = true;
        let mut atomics = 0;
        for (_, e) in k.entry.exprs.iter() {
            match e {
                Expr::Load { array, .. } if *array == ah => ok = false,
                Expr::Atomic { array, op, .. } if *array == ah => {
                    atomics += 1;
                    match (Fold::of(*op), fold) {
                        (Some(f), None) => fold = Some(f),
                        (Some(f), Some(g)) if f == g => {}
                        _ => ok = false,
                    }
                }
                _ => {}
            }
        }
        // Float copies add, take maxima or minima (compare-and-swap).
        if arr.elem == Scalar::F32 && !matches!(fold, Some(Fold::Sum | Fold::Max | Fold::Min)) {
            ok = false;
        }
        // Every atomic must be an update whose old value is not used.
        if ok && atomics > 0 && evaluated_atomics(k, &k.entry.body, ah) == atomics {
            out[a] = fold;
            picked += 1;
        }
    }
    out
}

/// No `return` or barrier in the body: every invocation reaches the end of
/// the grid-stride loop, where the copies are folded after a barrier.
fn uniform_exit(b: &Block) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Return(_) | StmtKind::Barrier | StmtKind::VectorLoop(_) => false,
        StmtKind::If { then, els, .. } => uniform_exit(then) && uniform_exit(els),
        StmtKind::Loop { body, continuing } => uniform_exit(body) && uniform_exit(continuing),
        _ => true,
    })
}

fn stores_to(b: &Block, a: ArrayH) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::StoreElem { array, .. } => *array == a,
        StmtKind::If { then, els, .. } => stores_to(then, a) || stores_to(els, a),
        StmtKind::Loop { body, continuing } => stores_to(body, a) || stores_to(continuing, a),
        StmtKind::VectorLoop(v) => stores_to(&v.body, a),
        _ => false,
    })
}

/// Atomics on `a` that are statements of their own (`Eval`).
fn evaluated_atomics(k: &Kernel, b: &Block, a: ArrayH) -> usize {
    b.iter()
        .map(|s| match &s.kind {
            StmtKind::Eval(h) => match &k.entry.exprs[*h] {
                Expr::Atomic { array, .. } if *array == a => 1,
                _ => 0,
            },
            StmtKind::If { then, els, .. } => {
                evaluated_atomics(k, then, a) + evaluated_atomics(k, els, a)
            }
            StmtKind::Loop { body, continuing } => {
                evaluated_atomics(k, body, a) + evaluated_atomics(k, continuing, a)
            }
            _ => 0,
        })
        .sum()
}

impl Writer<'_> {
    /// Before the grid-stride loop: each privatised array's copy, started
    /// at the identity by the workgroup, then a barrier.
    pub(super) fn private_begin(&mut self) {
        let folds = candidates(self.k, self.spec.checks);
        if folds.iter().all(Option::is_none) {
            return;
        }
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        for (a, fold) in folds.into_iter().enumerate() {
            let Some(fold) = fold else { continue };
            let view = self.copy_ty(a);
            let et = self.m.ty(view);
            let cap = self.m.u32c(CAP);
            let arr_t = self.m.b.type_array(et, cap);
            let var = self.gvar(arr_t, StorageClass::Workgroup, &format!("private_{a}"));
            // Compared in the index type (a buffer reached by address may
            // hold more than 2^32 elements); only a length under the cap is
            // used as a u32.
            let len = self.buffer_len(a);
            let cap_i = self.int_const(self.idx, CAP as i64);
            let on = spv(self.m.b.u_less_than_equal(bool_t, None, len, cap_i));
            let len = self.int_cast(len, self.idx, Ty::U32);
            let zero = self.m.u32c(0);
            let bound = spv(self.m.b.select(u32t, None, on, len, zero));
            let elem = self.k.arrays[ArrayH::new(a)].elem;
            let id = self.m.u32c(fold.identity_of(elem));
            let id = if view == Ty::U32 {
                id
            } else {
                spv(self.m.b.bitcast(et, None, id))
            };
            let pe = self.m.ptr(StorageClass::Workgroup, et);
            self.lanes(bound, |w, j| {
                let p = spv(w.m.b.access_chain(pe, None, var, [j]));
                spv(w.m.b.store(p, id, None, []));
            });
            self.private[a] = Some(Private { fold, var, len, on });
        }
        self.wg_barrier();
    }

    /// After the grid-stride loop: a barrier, then every element of a copy
    /// that differs from the identity folded into the device array.
    pub(super) fn private_end(&mut self) {
        if self.private.iter().all(Option::is_none) {
            return;
        }
        self.wg_barrier();
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let privs: Vec<(usize, Private)> = self
            .private
            .iter()
            .enumerate()
            .filter_map(|(a, p)| p.map(|p| (a, p)))
            .collect();
        for (a, p) in privs {
            let view = self.copy_ty(a);
            let et = self.m.ty(view);
            let zero = self.m.u32c(0);
            let bound = spv(self.m.b.select(u32t, None, p.on, p.len, zero));
            let elem = self.k.arrays[ArrayH::new(a)].elem;
            let signed = elem == Scalar::I32;
            let id_bits = self.m.u32c(p.fold.identity_of(elem));
            let pe = self.m.ptr(StorageClass::Workgroup, et);
            self.lanes(bound, |w, j| {
                let lp = spv(w.m.b.access_chain(pe, None, p.var, [j]));
                let v = spv(w.m.b.load(et, None, lp, None, []));
                let bits = if view == Ty::U32 {
                    v
                } else {
                    spv(w.m.b.bitcast(u32t, None, v))
                };
                let changed = spv(w.m.b.i_not_equal(bool_t, None, bits, id_bits));
                let m = w.begin_if(changed);
                if elem == Scalar::F32 {
                    // The device array's own float atomic (native or CAS).
                    let f32t = w.m.ty(Ty::F32);
                    let x = spv(w.m.b.bitcast(f32t, None, bits));
                    let ji = w.int_cast(j, Ty::U32, w.idx);
                    let gp = w.element_ptr(ArrayH::new(a), ji);
                    let kind = match p.fold {
                        Fold::Max => AtomicKind::Max,
                        Fold::Min => AtomicKind::Min,
                        _ => AtomicKind::Add,
                    };
                    // Only a float of this kind is privatised: no error.
                    let _ = w.atomic_at(gp, ArrayH::new(a), kind, x);
                } else {
                    let ji = w.int_cast(j, Ty::U32, w.idx);
                    let gp = w.element_ptr(ArrayH::new(a), ji);
                    w.atomic_op(gp, et, p.fold, signed, v, 1);
                }
                w.end_if(m);
            });
        }
    }

    /// A privatised update of element `lin` (index type) with `x`: on the
    /// workgroup copy when it is in use (dropped outside the section), else
    /// `global` (the device atomic at the element's pointer).
    pub(super) fn private_update(
        &mut self,
        p: Private,
        a: ArrayH,
        op: AtomicKind,
        lin: Word,
        x: Word,
        global: impl FnOnce(&mut Self) -> Result<Word, lang::Diag>,
    ) -> Result<Word, lang::Diag> {
        let view = self.copy_ty(a.index());
        let et = self.m.ty(view);
        let bool_t = self.m.ty(Ty::Bool);
        let elem = self.k.arrays[a].elem;
        let signed = elem == Scalar::I32;
        let then_l = self.m.b.id();
        let else_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(p.on, then_l, else_l, []));
        self.label(then_l);
        let len = self.int_cast(p.len, Ty::U32, self.idx);
        let inside = spv(self.m.b.u_less_than(bool_t, None, lin, len));
        let m = self.begin_if(inside);
        let j = self.int_cast(lin, self.idx, Ty::U32);
        let pe = self.m.ptr(StorageClass::Workgroup, et);
        let lp = spv(self.m.b.access_chain(pe, None, p.var, [j]));
        if elem == Scalar::F32 {
            let f32t = self.m.ty(Ty::F32);
            let x = if op == AtomicKind::Sub {
                spv(self.m.b.f_negate(f32t, None, x))
            } else {
                x
            };
            let fold = p.fold;
            self.cas_loop_in(lp, Ty::U32, Ty::F32, 2, |w, old| {
                let bool_t = w.m.ty(Ty::Bool);
                let bm = &mut w.m.b;
                match fold {
                    Fold::Max | Fold::Min => {
                        // The host's rule: x wins when greater (less) or
                        // the old value is NaN.
                        let better = if fold == Fold::Max {
                            spv(bm.f_ord_greater_than(bool_t, None, x, old))
                        } else {
                            spv(bm.f_ord_less_than(bool_t, None, x, old))
                        };
                        let nan = spv(bm.is_nan(bool_t, None, old));
                        let take = spv(bm.logical_or(bool_t, None, better, nan));
                        spv(bm.select(f32t, None, take, x, old))
                    }
                    _ => spv(bm.f_add(f32t, None, old, x)),
                }
            });
        } else {
            let x = if op == AtomicKind::Sub {
                spv(self.m.b.s_negate(et, None, x))
            } else {
                x
            };
            self.atomic_op(lp, et, p.fold, signed, x, 2);
        }
        self.end_if(m);
        spv(self.m.b.branch(merge));
        self.label(else_l);
        global(self)?;
        spv(self.m.b.branch(merge));
        self.label(merge);
        // The old value of an update statement is not used.
        Ok(if elem == Scalar::F32 {
            self.float_const(Ty::F32, 0.0)
        } else {
            self.int_const(Ty::reg(elem), 0)
        })
    }

    /// The element type of array `a`'s workgroup copy: its buffer view,
    /// or the bits of an `f32` (updated by compare-and-swap).
    fn copy_ty(&self, a: usize) -> Ty {
        if self.k.arrays[ArrayH::new(a)].elem == Scalar::F32 {
            Ty::U32
        } else {
            self.views[a]
        }
    }

    /// One integer atomic of `fold` at `ptr` (`scope`: 1 device, 2
    /// workgroup; relaxed).
    fn atomic_op(&mut self, ptr: Word, et: Word, fold: Fold, signed: bool, x: Word, scope: u32) {
        let scope = self.m.u32c(scope);
        let sem = self.m.u32c(0);
        let b = &mut self.m.b;
        spv(match fold {
            Fold::Sum => b.atomic_i_add(et, None, ptr, scope, sem, x),
            Fold::Max if signed => b.atomic_s_max(et, None, ptr, scope, sem, x),
            Fold::Max => b.atomic_u_max(et, None, ptr, scope, sem, x),
            Fold::Min if signed => b.atomic_s_min(et, None, ptr, scope, sem, x),
            Fold::Min => b.atomic_u_min(et, None, ptr, scope, sem, x),
            Fold::And => b.atomic_and(et, None, ptr, scope, sem, x),
            Fold::Or => b.atomic_or(et, None, ptr, scope, sem, x),
            Fold::Xor => b.atomic_xor(et, None, ptr, scope, sem, x),
        });
    }

    /// `for j = local id; j < bound; j += wg_size { body(j) }` (`u32`).
    fn lanes(&mut self, bound: Word, body: impl FnOnce(&mut Self, Word)) {
        let lid = self.local_id();
        let step = self.wg_size;
        // The body cannot fail: it only emits instructions.
        let _ = self.counted_loop(Ty::U32, (lid, bound, step), false, |w, j| {
            body(w, j);
            Ok(())
        });
    }
}
