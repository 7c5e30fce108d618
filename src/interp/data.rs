//! Data clauses at run time: evaluating a clause's section into a box
//! ([`Region`]), entering and leaving the structured clauses of a `data`
//! or compute construct, the implicit copies of a kernel's arrays, and the
//! standalone `enter data` / `exit data` / `update` directives. Every
//! backend shares this flow through its present table ([`super::present`]).

use super::error;
use super::machine::{CConstruct, CData, Ctx};
use super::present::{EnvError, Find, Region};
use super::value::{Flow, Frame, R};
use lang::hir::DataKind;
use lang::Span;
use stdlib::Array;

/// Evaluate a clause's box on array `a`: each written axis's `lo:count`
/// (which must lie inside the axis), whole axes elsewhere.
pub fn region(d: &CData, a: &Array, fr: &mut Frame, cx: &mut Ctx) -> R<Region> {
    let shape = a.shape();
    if d.section.is_empty() {
        return Ok(Region::whole(shape));
    }
    let mut axes = Vec::with_capacity(d.section.len());
    let mut written = Vec::with_capacity(d.section.len());
    let mut bad = None;
    for (k, axis) in d.section.iter().enumerate() {
        let dim = shape.get(k).copied().unwrap_or(0);
        match axis {
            None => {
                axes.push((0, dim));
                written.push(None);
            }
            Some((lo, n)) => {
                let l = lo.get(fr, cx)? as i128;
                let c = n.get(fr, cx)? as i128;
                written.push(Some((l, c)));
                if l < 0 || c < 0 || l + c > dim as i128 {
                    bad.get_or_insert(k);
                    axes.push((0, 0));
                } else {
                    axes.push((l as usize, (l + c) as usize));
                }
            }
        }
    }
    if let Some(k) = bad {
        return Err(error::bad_section(d.span, &d.name, &written, k, shape));
    }
    Ok(Region::new(shape, &axes))
}

/// The section as a diagnostic names it after the array: `""` for a clause
/// naming the whole array, else `[lo:count, ..]`.
pub fn section_text(d: &CData, r: &Region, shape: &[usize]) -> String {
    if d.section.is_empty() && *r == Region::whole(shape) {
        String::new()
    } else {
        r.clause_text(shape)
    }
}

/// One entry of the present table that a structured construct must undo.
pub struct Undo {
    array: Array,
    bx: Region,
    copyout: bool,
}

pub fn array_of(fr: &Frame, slot: usize) -> R<Array> {
    fr.a.get(slot)
        .and_then(|a| a.clone())
        .ok_or_else(error::uninit)
}

/// A present-table error of box `want` of array `a`, named `name` at `span`,
/// as a diagnostic.
fn env_error<'a>(
    span: Span,
    name: &'a str,
    a: &'a Array,
    want: &'a Region,
    dev: usize,
) -> impl Fn(EnvError) -> Box<lang::Diag> + 'a {
    move |e| match e {
        EnvError::Partial(have) => {
            error::partially_present(span, name, want, &have, a.shape(), dev)
        }
        EnvError::Device(m) => error::device(span, name, &m),
        EnvError::Race(d) => d,
    }
}

/// A data clause of a construct with its array, region, and whether it
/// copies in and out.
type ClauseBox<'a> = (&'a CData, Array, Region, bool, bool);

/// Enter the structured data clauses of a `data` or compute construct.
/// Clauses of one array naming the same box act as one: entered once,
/// copied in when one of them copies in, out when one copies out
/// (OpenACC's in-order entry with present counting makes
/// `copyin(a) copyout(a)` a `copy(a)`).
pub fn enter_structured(
    c: &CConstruct,
    fr: &mut Frame,
    cx: &mut Ctx,
    undo: &mut Vec<Undo>,
) -> R<()> {
    let dev = cx.device;
    let b = cx.backend.clone();
    // On the stack for a construct's usual few clauses.
    let mut boxes: smallvec::SmallVec<[ClauseBox<'_>; 4]> = smallvec::SmallVec::new();
    for d in &c.data {
        let a = array_of(fr, d.slot)?;
        let r = region(d, &a, fr, cx)?;
        let copyin = matches!(d.kind, DataKind::Copy | DataKind::CopyIn);
        let copyout = matches!(d.kind, DataKind::Copy | DataKind::CopyOut);
        let creates = copyin || copyout || d.kind == DataKind::Create;
        if let Some(m) = boxes.iter_mut().find(|m| m.1.id() == a.id() && m.2 == r) {
            // The checker let `present` meet only `present` here.
            if creates && m.0.kind == DataKind::NoCreate {
                m.0 = d;
            }
            m.3 |= copyin;
            m.4 |= copyout;
            continue;
        }
        boxes.push((d, a, r, copyin, copyout));
    }
    for (d, a, r, copyin, copyout) in boxes {
        let fail = env_error(d.span, &d.name, &a, &r, dev);
        match d.kind {
            DataKind::Copy | DataKind::CopyIn | DataKind::CopyOut | DataKind::Create => {
                b.env(cx).attach(dev, &a, &r, copyin, true).map_err(&fail)?;
                undo.push(Undo {
                    array: a.clone(),
                    bx: r.clone(),
                    copyout,
                });
            }
            DataKind::Present | DataKind::NoCreate => {
                let found = b.env(cx).find(dev, &a, &r);
                match found {
                    Find::Partial(p) => return Err(fail(EnvError::Partial(p))),
                    Find::Absent if d.kind == DataKind::Present => {
                        return Err(error::not_present(
                            d.span,
                            &d.name,
                            &section_text(d, &r, a.shape()),
                            dev,
                            "`present` needs it on the device",
                        ))
                    }
                    Find::Absent => {}
                    Find::Inside(_) => {
                        b.env(cx).attach(dev, &a, &r, false, true).map_err(&fail)?;
                        undo.push(Undo {
                            array: a.clone(),
                            bx: r.clone(),
                            copyout: false,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Make the boxes a `data` region or `declare` entered visible to the
/// kernels inside it ([`Ctx::visible`]); returns how many to take back.
pub fn push_visible(cx: &mut Ctx, undo: &[Undo]) -> usize {
    let dev = cx.device;
    cx.visible
        .extend(undo.iter().map(|u| (dev, u.array.id(), u.bx.clone())));
    undo.len()
}

/// Take back what [`push_visible`] pushed, at the end of the region.
pub fn pop_visible(cx: &mut Ctx, n: usize) {
    let keep = cx.visible.len().saturating_sub(n);
    cx.visible.truncate(keep);
}

/// Leave the structured data clauses (in reverse). When `ok`, copies back;
/// the first copy-back failure is returned after every entry is released.
pub fn exit_structured(cx: &mut Ctx, undo: Vec<Undo>, ok: bool, span: Span) -> R<()> {
    let dev = cx.device;
    let b = cx.backend.clone();
    let mut first = Ok(());
    for u in undo.into_iter().rev() {
        let r = b
            .env(cx)
            .detach(dev, &u.array, &u.bx, u.copyout && ok, true, false);
        match (r, first.is_ok()) {
            (Err(EnvError::Device(m)), true) => first = Err(error::device(span, "an array", &m)),
            (Err(EnvError::Race(d)), true) => first = Err(d),
            _ => {}
        }
    }
    first
}

/// The arrays a kernel uses that no data clause names: those not present
/// are copied in for the launch (and out after it, through `undo`, unless
/// the kernel writes them under no name), or with `default(present)`
/// refused.
pub fn enter_implicit(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx, undo: &mut Vec<Undo>) -> R<()> {
    let dev = cx.device;
    let b = cx.backend.clone();
    // Two names may hold one array (`let b = a;`), and only the first to
    // be entered makes its device copy: what any of them writes decides.
    let mut written = Vec::new();
    for imp in c.implicit.iter().filter(|i| i.written) {
        written.push(array_of(fr, imp.slot)?.id());
    }
    for imp in &c.implicit {
        let (name, span) = (&imp.name, &imp.span);
        let a = array_of(fr, imp.slot)?;
        if b.env(cx).has_any(dev, &a) {
            continue;
        }
        if c.default_present {
            return Err(error::not_present(
                *span,
                name,
                "",
                dev,
                "`default(present)` needs it on the device",
            ));
        }
        let r = Region::whole(a.shape());
        b.env(cx)
            .attach(dev, &a, &r, true, true)
            .map_err(env_error(*span, name, &a, &r, dev))?;
        undo.push(Undo {
            copyout: imp.copyout && written.contains(&a.id()),
            array: a,
            bx: r,
        });
    }
    Ok(())
}

/// `enter data`, `exit data` and `update` whose `if` held.
pub fn standalone(c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
    let dev = cx.device;
    let b = cx.backend.clone();
    for d in &c.data {
        let a = array_of(fr, d.slot)?;
        let r = region(d, &a, fr, cx)?;
        let fail = env_error(d.span, &d.name, &a, &r, dev);
        match d.kind {
            DataKind::CopyIn | DataKind::Create => b
                .env(cx)
                .attach(dev, &a, &r, d.kind == DataKind::CopyIn, false)
                .map_err(fail)?,
            DataKind::CopyOut | DataKind::Delete => b
                .env(cx)
                .detach(dev, &a, &r, d.kind == DataKind::CopyOut, false, c.finalize)
                .map_err(fail)?,
            DataKind::UpdateSelf | DataKind::UpdateDevice => {
                let present = b
                    .env(cx)
                    .update(dev, &a, &r, d.kind == DataKind::UpdateSelf)
                    .map_err(fail)?;
                if !present && !c.if_present {
                    let mut e = error::not_present(
                        d.span,
                        &d.name,
                        &section_text(d, &r, a.shape()),
                        dev,
                        "`update` needs it on the device",
                    );
                    e.help = Some("add `if_present` to skip absent data".to_string());
                    return Err(e);
                }
            }
            _ => {}
        }
    }
    Ok(Flow::Next)
}
