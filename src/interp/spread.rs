//! Compiled code over chunks of a range on several threads: a compute
//! construct's gang loop on the host backend ([`super::gang`]) or a plain
//! host loop ([`super::par`]). The chunks depend on the bounds alone, never
//! on how many threads run; each chunk runs with its own copy of the frame's
//! scalars (reductions started at their identity, generator states at
//! their own first values), and the partial results are combined in chunk
//! order after.

use super::error;
use super::machine::Ctx;
use super::native::trap_error;
use super::scalar::{bits_to_value, value_to_bits};
use super::value::{Frame, R};
use host_jit::runtime::{self, ArrDesc, Rt, Trap};
use lang::value::{combine, identity};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Iterations of the collapsed nest a chunk holds at least: fewer than
/// this many in all and the nest is one chunk (as it ran before chunks).
const CHUNK_WORK: u128 = 4096;
/// The most chunks a gang loop is cut into.
const MAX_CHUNKS: u128 = 256;

/// The chunks of range `lo..=end` (not empty) of an outer loop whose
/// every turn runs about `inner` turns of the loops inside.
pub fn chunks(lo: i64, end: i64, inner: u128) -> Vec<(i64, i64)> {
    let outer = (end as i128 - lo as i128 + 1) as u128;
    let rows = outer
        .div_ceil(MAX_CHUNKS)
        .max(CHUNK_WORK.div_ceil(inner.max(1)))
        .max(1);
    (0..)
        .map(|k: u128| lo as i128 + (k * rows) as i128)
        .take_while(|&s| s <= end as i128)
        .map(|s| (s as i64, (s + rows as i128 - 1).min(end as i128) as i64))
        .collect()
}

/// Combine one chunk's partial reductions (`partial(slot)`) into `acc`
/// (empty: the first chunk's are taken as they are).
pub fn fold(reds: &[Reduction], acc: &mut Vec<u64>, partial: impl Fn(usize) -> u64) {
    if acc.is_empty() {
        acc.extend(reds.iter().map(|&(_, s, _)| partial(s)));
        return;
    }
    for (a, &(op, s, t)) in acc.iter_mut().zip(reds) {
        let v = combine(op, bits_to_value(t, *a), bits_to_value(t, partial(s)));
        *a = value_to_bits(v, t);
    }
}

/// A reduction: operator, frame slot, type.
pub type Reduction = (lang::hir::ReductionOp, usize, lang::Scalar);

/// What the top-level variables are to compiled code run on threads.
pub enum Globals<'a> {
    /// It uses none.
    None,
    /// The frame's own slots (a loop of the top level): each thread's copy.
    Own,
    /// These slots, a copy for each thread (they are only read).
    Copy(&'a [u64]),
}

/// Compiled code over chunks of a range, on several threads.
pub struct Spread<'a> {
    pub span: lang::Span,
    pub entry: host_jit::gang::GangEntry,
    /// The frame's scalar slots the code reads and writes.
    pub scalars: &'a [usize],
    pub reductions: &'a [Reduction],
    pub sites: &'a [host_jit::Site],
    pub globals: Globals<'a>,
    /// Top-level variables each chunk starts at a value of its own (a
    /// generator's state jumped ahead): the slot and each chunk's bits.
    pub starts: &'a [(usize, Vec<u64>)],
}

/// The arrays' descriptors, shared by the threads of one run.
struct Shared(*const ArrDesc);
// SAFETY: the threads write disjoint elements (`host_jit::gang::parallel_why`
// for a construct, `host_jit::par`'s test for a plain loop) and the arrays
// stay borrowed until every thread is joined.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

/// What one chunk left: its status, trap, operation count, slots and
/// copy of the top-level slots (empty unless [`Globals::Copy`]).
struct Done {
    status: u32,
    trap: Trap,
    ops: u64,
    slots: Vec<u64>,
    top: Vec<u64>,
}

/// The limit check of a chunk run on a thread of its own: never due (the
/// run starts only when no limit can fall due), so reaching it is a bug.
unsafe extern "C" fn never(_rt: *mut Rt, _site: u32) -> u32 {
    1
}

/// The chunks on `n` threads (`std::thread::scope`), each claiming the next
/// chunk in order; the first error in chunk order is the error, and after
/// one no later chunk starts.
pub fn threaded(
    sp: &Spread,
    flat: &[i64],
    chunks: &[(i64, i64)],
    n: usize,
    descs: &[ArrDesc],
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let shared = Shared(descs.as_ptr());
    let (depth, max_depth) = (cx.depth as u64, cx.max_depth as u64);
    let base = &fr.s;
    let entry = sp.entry;
    let reds = sp.reductions;
    let run = || {
        let shared = &shared;
        let mut out: Vec<(usize, Done)> = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= chunks.len() || k > failed.load(Ordering::Relaxed) {
                return out;
            }
            let mut slots = base.clone();
            for &(op, s, t) in reds {
                slots[s] = value_to_bits(identity(op, t), t);
            }
            let mut top: Vec<u64> = match sp.globals {
                Globals::Copy(g) => g.to_vec(),
                _ => Vec::new(),
            };
            for (slot, firsts) in sp.starts {
                match sp.globals {
                    Globals::Copy(_) => top[*slot] = firsts[k],
                    _ => slots[*slot] = firsts[k],
                }
            }
            let globals = match sp.globals {
                Globals::None => std::ptr::null_mut(),
                Globals::Own => slots.as_mut_ptr(),
                Globals::Copy(_) => top.as_mut_ptr(),
            };
            let mut bounds = flat.to_vec();
            bounds[0] = chunks[k].0;
            bounds[1] = chunks[k].1;
            let mut rt = Rt {
                ops: 0,
                next_check: u64::MAX,
                depth,
                max_depth,
                ret: 0,
                trap: Trap::default(),
                check: never,
                hook: std::ptr::null_mut::<c_void>(),
                rets: [0; lang::Tuple::MAX],
                globals,
            };
            // SAFETY: as the one-thread run, with the chunk's own copy of
            // the slots and of the top-level variables it reads (null when
            // it uses none); other threads write other elements.
            let status = unsafe { entry(slots.as_mut_ptr(), shared.0, &mut rt, bounds.as_ptr()) };
            if status == runtime::TRAP {
                failed.fetch_min(k, Ordering::Relaxed);
            }
            out.push((
                k,
                Done {
                    status,
                    trap: rt.trap,
                    ops: rt.ops,
                    slots,
                    top,
                },
            ));
        }
    };
    let mut done: Vec<(usize, Done)> = std::thread::scope(|s| {
        let hs: Vec<_> = (1..n).map(|_| s.spawn(run)).collect();
        let mut all = run();
        for h in hs {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(_) => return Err(error::internal(sp.span, "a host thread panicked")),
            }
        }
        Ok(all)
    })?;
    done.sort_by_key(|(k, _)| *k);
    let mut acc = Vec::new();
    for (_, d) in &done {
        cx.ops = cx.ops.saturating_add(d.ops);
        if d.status == runtime::TRAP {
            return Err(trap_error(d.trap, sp.sites, cx.max_depth, None));
        }
        if !reds.is_empty() {
            fold(reds, &mut acc, |s| d.slots[s]);
        }
    }
    // The frame as the last iteration left it, then the reductions.
    if let Some((_, last)) = done.last() {
        for &s in sp.scalars {
            fr.s[s] = last.slots[s];
        }
        for (s, _) in sp.starts {
            match (&sp.globals, cx.globals.as_mut()) {
                (Globals::Copy(_), Some(g)) => g.s[*s] = last.top[*s],
                _ => fr.s[*s] = last.slots[*s],
            }
        }
    }
    for (&(_, s, _), v) in reds.iter().zip(acc) {
        fr.s[s] = v;
    }
    Ok(())
}
