//! Privatisation candidates: the arrays of a flat kernel that may get a
//! copy per workgroup for their atomics (the histogram pattern; the copy
//! itself is written by `crate::spirv::private`, which describes it).
//! An array qualifies when it is `i32`, `u32` or `f32`, only ever updated
//! by atomics of one kind whose results are unused, and touched by no
//! device function; at most two arrays of a kernel are.

use crate::kir::{ArrayH, AtomicKind, Block, Expr, Kernel, Shape, StmtKind};
use lang::Scalar;

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
    pub(crate) fn of(op: AtomicKind) -> Option<Fold> {
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
            | AtomicKind::RevDiv
            | AtomicKind::RevShl
            | AtomicKind::RevShr => return None,
        })
    }

    /// The identity's bits for a 32-bit element of type `elem`.
    pub(crate) fn identity_of(self, elem: Scalar) -> u32 {
        match (elem, self) {
            (Scalar::F32, Fold::Max) => f32::NEG_INFINITY.to_bits(),
            (Scalar::F32, Fold::Min) => f32::INFINITY.to_bits(),
            (Scalar::F32, _) => 0,
            _ => self.identity(elem == Scalar::I32),
        }
    }

    /// The identity's bits for a 32-bit integer element.
    pub(crate) fn identity(self, signed: bool) -> u32 {
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

/// Whether some array of `k` qualifies for a workgroup copy of its atomics
/// (`private`), outside check mode. Lowering records it in the kernel.
pub fn private_atomics(k: &Kernel) -> bool {
    candidates(k, false).iter().any(Option::is_some)
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
        StmtKind::Return(_)
        | StmtKind::ReturnTuple(_)
        | StmtKind::Barrier
        | StmtKind::VectorLoop(_) => false,
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
