//! The loop nest of a compute construct on the host: run by the
//! interpreter or, where the JIT compiled it (`host_jit::gang`), by native
//! code, on one thread or on several. Either way the gang loop's range is
//! cut into the same fixed chunks (they depend on the bounds alone, never
//! on how many threads run), each reduction starts every chunk at its
//! operator's identity, and the chunks' partial results are combined in
//! chunk order: the bits of a result are the same whatever runs the turns.
//! Several threads run a construct ([`super::spread`]) only where its gang
//! iterations are independent (the JIT proved it, or its test found the
//! elements they write apart as it starts) and no limit can fall due while
//! it runs (so an operation, time or progress limit still stops it at the
//! exact operation, on one thread).

use super::machine::run_block;
use super::machine::{CConstruct, Ctx, GangCode};
use super::native::{describe, enter, threads};
use super::scalar::value_to_bits;
use super::spread::{chunks, fold, threaded, Globals, Spread};
use super::value::{Flow, Frame, R};
use super::Compiler;
use lang::hir;
use lang::value::identity;

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
        cx.submit_held();
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
