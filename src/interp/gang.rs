//! The loop nest of a compute construct on the host: run by the
//! interpreter or, where the JIT compiled it (`host_jit::gang`), by native
//! code, on one thread or on several. Either way the gang loop's range is
//! cut into the same fixed chunks (they depend on the bounds alone, never
//! on how many threads run), each reduction starts every chunk at its
//! operator's identity, and the chunks' partial results are combined in
//! chunk order: the bits of a result are the same whatever runs the turns.
//! Several threads run a construct only where the JIT proved its gang
//! iterations independent and no limit can fall due while it runs (so an
//! operation, time or progress limit still stops it at the exact
//! operation, on one thread).

use super::error;
use super::machine::run_block;
use super::machine::{CConstruct, Ctx, GangCode};
use super::native::{describe, enter, threads, trap_error};
use super::scalar::{bits_to_value, value_to_bits};
use super::value::{Flow, Frame, R};
use super::Compiler;
use host_jit::runtime::{self, ArrDesc, Rt, Trap};
use lang::hir;
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

impl Compiler<'_> {
    /// The compiled loop nest of construct `c`, when the JIT took it (it
    /// runs only while nothing it uses has a reduction result pending,
    /// [`Ctx::deferred_on`]).
    pub fn gang_code(&self, c: &hir::Construct) -> Option<GangCode> {
        let jit = self.jit.as_ref()?;
        let u = jit.gang_unit(c)?;
        Some(GangCode {
            jit: jit.clone(),
            entry: u.entry,
            arrays: u.arrays.clone(),
            scalars: u.scalars.clone(),
            globals: u.globals.clone(),
            threads: u.threads.is_ok(),
            test: u.test.clone(),
        })
    }
}

/// Run the loop nest of `c` over `bounds` (each level's first and, when
/// not empty, last counter value), reductions started at their identity.
pub fn run_nest(
    c: &CConstruct,
    bounds: &[(i64, Option<i64>)],
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Flow> {
    let mut b = Vec::with_capacity(bounds.len());
    for &(lo, end) in bounds {
        match end {
            Some(end) if lo <= end => b.push((lo, end)),
            // Nothing runs (and nothing is counted) when a level is empty.
            _ => return Ok(Flow::Next),
        }
    }
    let trips = |&(lo, end): &(i64, i64)| (end as i128 - lo as i128 + 1) as u128;
    let inner: u128 = b[1..].iter().map(trips).product();
    let chunks = chunks(b[0].0, b[0].1, inner);
    if let Some(g) = &c.gang {
        if let Some(r) = compiled(c, g, &b, &chunks, fr, cx) {
            return r;
        }
    }
    let mut whole: Vec<(i64, Option<i64>)> = b.iter().map(|&(l, e)| (l, Some(e))).collect();
    per_chunk(c, &chunks, fr, |k, fr| {
        whole[0] = (chunks[k].0, Some(chunks[k].1));
        nest(c, &whole, 0, fr, cx).map(|_| ())
    })?;
    Ok(Flow::Next)
}

/// Run `chunk` for each chunk in order on the frame: with reductions, each
/// starts from the identity and its partials are combined in order after.
fn per_chunk(
    c: &CConstruct,
    chunks: &[(i64, i64)],
    fr: &mut Frame,
    mut chunk: impl FnMut(usize, &mut Frame) -> R<()>,
) -> R<()> {
    if c.reductions.is_empty() || chunks.len() == 1 {
        for k in 0..chunks.len() {
            chunk(k, fr)?;
        }
        return Ok(());
    }
    let mut acc: Vec<u64> = Vec::with_capacity(c.reductions.len());
    for k in 0..chunks.len() {
        for &(op, s, t) in &c.reductions {
            fr.s[s] = value_to_bits(identity(op, t), t);
        }
        chunk(k, fr)?;
        fold(&c.reductions, &mut acc, |s| fr.s[s]);
    }
    for (&(_, s, _), v) in c.reductions.iter().zip(acc) {
        fr.s[s] = v;
    }
    Ok(())
}

/// Combine one chunk's partial reductions (`partial(slot)`) into `acc`
/// (empty: the first chunk's are taken as they are).
fn fold(reds: &[Reduction], acc: &mut Vec<u64>, partial: impl Fn(usize) -> u64) {
    if acc.is_empty() {
        acc.extend(reds.iter().map(|&(_, s, _)| partial(s)));
        return;
    }
    for (a, &(op, s, t)) in acc.iter_mut().zip(reds) {
        let v = combine(op, bits_to_value(t, *a), bits_to_value(t, partial(s)));
        *a = value_to_bits(v, t);
    }
}

/// The compiled nest over `chunks`; None when it cannot run (an array not
/// set, of another element type or rank, or borrowed): the interpreter
/// runs it.
fn compiled(
    c: &CConstruct,
    g: &GangCode,
    b: &[(i64, i64)],
    chunks: &[(i64, i64)],
    fr: &mut Frame,
    cx: &mut Ctx,
) -> Option<R<Flow>> {
    let mut handles = Vec::with_capacity(g.arrays.len());
    for &(slot, _, _) in &g.arrays {
        handles.push(fr.a.get(slot)?.clone()?);
    }
    if !cx.unraced(&handles) || cx.deferred_on(&g.scalars, &g.globals) {
        return None;
    }
    let (descs, held) = describe(&g.arrays, &handles)?;
    let mut flat: Vec<i64> = b.iter().flat_map(|&(l, e)| [l, e]).collect();
    let n = threads().min(chunks.len());
    // Several threads only where no limit can fall due meanwhile, and
    // the iterations are apart (proved, or found so at these values).
    let apart = || match &g.test {
        Some(t) => {
            super::par::apart(t, &g.arrays, &handles, &super::par::reader(fr, None)).is_some()
        }
        None => false,
    };
    let r = if n > 1 && cx.unlimited() && (g.threads || apart()) {
        // Async work held back behind running work waits for the check
        // after the construct (the threads make no checks): submit what
        // the queues can take now.
        if cx.held {
            cx.held = cx.backend.clone().submit_idle();
        }
        let spread = Spread {
            span: c.span,
            entry: g.entry,
            scalars: &g.scalars,
            reductions: &c.reductions,
            sites: &g.jit.sites,
            globals: Globals::None,
            starts: &[],
        };
        let t0 = super::phases::clock();
        let r = threaded(&spread, &flat, chunks, n, &descs, fr, cx);
        super::phases::native(t0);
        super::phases::spread(t0);
        cx.reset_check();
        r
    } else {
        let sites = &g.jit.sites;
        per_chunk(c, chunks, fr, |k, fr| {
            flat[0] = chunks[k].0;
            flat[1] = chunks[k].1;
            let slots = fr.s.as_mut_ptr();
            let globals = match cx.globals.as_mut() {
                Some(t) => t.s.as_mut_ptr(),
                None => slots,
            };
            let (p, d) = (flat.as_ptr(), descs.as_ptr());
            enter(cx, sites, globals, |rt| {
                // SAFETY: the entry was compiled for this construct: it
                // reads and writes only the slots of locals it names (all
                // within this frame) and elements of the arrays described,
                // within their bounds; the arrays stay borrowed meanwhile;
                // `p` holds two bounds per level.
                unsafe { (g.entry)(slots, d, rt, p) }
            })
            .map(|_| ())
        })
    };
    drop(held);
    Some(r.map(|_| Flow::Next))
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

/// The interpreter's run of level `level` of the nest and those inside
/// it: one operation counted per turn of the innermost level, `break`
/// leaving the innermost level.
pub fn nest(
    c: &CConstruct,
    b: &[(i64, Option<i64>)],
    level: usize,
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Flow> {
    let l = &c.loops[level];
    let (lo, Some(end)) = b[level] else {
        return Ok(Flow::Next);
    };
    if lo > end {
        return Ok(Flow::Next);
    }
    let mut i = lo;
    loop {
        fr.s[l.var] = (l.conv)(i);
        if level + 1 == c.loops.len() {
            cx.tick(l.span)?;
            if run_block(&c.body, fr, cx)? == Flow::Break {
                break;
            }
        } else {
            nest(c, b, level + 1, fr, cx)?;
        }
        if i == end {
            break;
        }
        i += 1;
    }
    Ok(Flow::Next)
}
