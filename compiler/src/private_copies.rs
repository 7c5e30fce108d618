//! Where the copies of a private array live. The checker rewrites
//! `private(c)`/`firstprivate(c[..])` into a hidden array of copies, one
//! per iteration of the loops that own them (`lang::check::private_arrays`),
//! and names the owner; the host reference and the scratch path index that
//! array. On the device, a copy that a workgroup can hold goes to
//! workgroup memory instead: one per lane where the owner's iteration runs
//! on one lane (a flat `parallel loop`, a `loop vector`, a `loop gang` of a
//! region spread over lanes), one per gang where it is a gang's (a gang
//! loop, a region of one gang). The iteration starts its copy
//! ([`crate::kir::StmtKind::PrivateInit`]) as the host's fresh copy starts:
//! zero, or for `firstprivate` the section's values, read from the hidden
//! array's copy 0. Whether the copies fit is decided at run time from the
//! hidden array's shape and the workgroup size (uniform, like the
//! privatised atomics' `OpArrayLength` test), so sections sized at run time
//! get the workgroup path too; the writer is `crate::spirv::copies`.
//!
//! A lane's copy of a small section lives in the lane itself: a
//! Function-storage array (registers, or the lane's stack where it is
//! indexed by a run-time value) of exactly the section's elements, with no
//! test on any access. Its size must be a constant of the module, so the
//! launch, which knows the hidden array's shape, names the sections that
//! qualify in [`crate::Spec::local_copies`] ([`local_sizes`]) and the
//! kernel is specialised for them: the next launch with other sizes gets
//! another module.

use crate::kir::{CopySlots, Expr, Kernel, Shape};
use lang::Scalar;

/// Bytes of workgroup memory the private copies of one kernel may use
/// together: a quarter of the 32 KiB every Vulkan device gives, leaving
/// room for reductions, `cache` and privatised atomics.
pub const COPY_BYTES: u32 = 8 * 1024;

/// Elements of a section that a lane may hold as a local array (256 bytes
/// of 32-bit elements): past that the lane's registers spill anyway, and
/// the workgroup copy or the scratch buffer serves as well.
pub const LOCAL_ELEMS: u64 = 64;
/// Private arrays of one kernel that may be local (the first ones; the
/// length of [`crate::Spec::local_copies`], spelt out there since a path
/// constant as an array length there made rustc 1.95 fail with an internal error).
pub const LOCAL_ARRAYS: usize = 4;

/// For [`crate::Spec::local_copies`]: per private array of `k` (in
/// `k.private_copies` order, the first [`LOCAL_ARRAYS`]), the elements of
/// its section when a lane may hold its copy as a local array, else 0.
/// `dims(a)`: the extents of array `a` at this launch (copies first).
pub fn local_sizes<'d>(
    k: &Kernel,
    checks: bool,
    dims: impl Fn(usize) -> Option<&'d [u64]>,
) -> [u8; LOCAL_ARRAYS] {
    let mut out = [0; LOCAL_ARRAYS];
    if checks {
        // Check mode's reports need the device elements.
        return out;
    }
    for (i, p) in k.private_copies.iter().take(LOCAL_ARRAYS).enumerate() {
        let elem = k.arrays[p.array].elem;
        if p.place != Ok(CopySlots::Lane) || elem.size() < 4 {
            continue;
        }
        let Some(d) = dims(p.array.index()) else {
            continue;
        };
        let n = d.iter().skip(1).product::<u64>();
        if d.len() > 1 && (1..=LOCAL_ELEMS).contains(&n) {
            out[i] = n as u8;
        }
    }
    out
}

/// Elements of the workgroup array that holds private array `a`'s copies
/// (the budget shared evenly by the kernel's arrays that may use it).
pub fn cap(k: &Kernel, a: usize) -> u32 {
    let n = k
        .private_copies
        .iter()
        .filter(|p| p.place.is_ok())
        .count()
        .max(1) as u32;
    let elem = k.arrays[crate::kir::ArrayH::new(a)].elem.size().max(1) as u32;
    COPY_BYTES / n / elem
}

/// The owner's slots for copies it starts in a kernel of `shape`.
pub(crate) fn slots(shape: Shape) -> CopySlots {
    match shape {
        Shape::Flat | Shape::Seq => CopySlots::Lane,
        Shape::Gang | Shape::Region => CopySlots::Gang,
    }
}

/// After lowering: the copies the writer cannot place in workgroup
/// memory keep the hidden array, with the reason.
pub(crate) fn settle(k: &mut Kernel) {
    let atomics = atomic_arrays(k);
    for p in &mut k.private_copies {
        let a = p.array.index();
        let elem = k.arrays[p.array].elem;
        let why = if k.private_atomics {
            Some("the kernel's atomics use workgroup memory for their own copies")
        } else if k.shape == Shape::Seq || k.vector_length == Some(1) {
            // Starting a copy per iteration would only add work (and loop
            // turns, which llvmpipe caps) to a lane that runs many of them.
            Some("a gang of one lane")
        } else if k.tile.is_some() {
            Some("a tiled loop's lanes are laid out in tiles")
        } else if matches!(elem, Scalar::U8 | Scalar::Bool) {
            Some("8-bit elements")
        } else if atomics[a] {
            Some("an atomic updates it")
        } else {
            None
        };
        if let Some(why) = why {
            p.place = Err(why.into());
        }
    }
    // Gang loops of a region that share a hidden array pass values from
    // one loop's iteration to the next loop's same iteration (as the host
    // does), which may run on another lane or gang.
    let arrays: Vec<usize> = k.private_copies.iter().map(|p| p.array.index()).collect();
    for p in &mut k.private_copies {
        if arrays.iter().filter(|&&a| a == p.array.index()).count() > 1 {
            p.place = Err("several gang loops share its copies, iteration by iteration".into());
        }
    }
}

/// Arrays some atomic updates, by index.
fn atomic_arrays(k: &Kernel) -> Vec<bool> {
    let mut out = vec![false; k.arrays.len()];
    for f in std::iter::once(&k.entry).chain(k.functions.iter().map(|(_, f)| f)) {
        for (_, e) in f.exprs.iter() {
            if let Expr::Atomic { array, .. } = e {
                out[array.index()] = true;
            }
        }
    }
    out
}
