//! `acc_memcpy_to_device(dst, src)` and `acc_memcpy_from_device(dst, src)`
//! (and their `_async(.., q)` forms): accl has no device pointers, so the
//! device side is the device copy of an array or section, which must be
//! present; the host side is an array or section's host data. The two
//! hold the same element count (their shapes may differ: elements pair in
//! row-major order). `acc_memcpy_device(dst, src)` pairs two device sides
//! the same way, and `acc_memcpy_d2d(dst, src, dst_dev, src_dev)` two on
//! two devices, through host memory.

use super::error;
use super::machine::Ctx;
use super::present::{EnvError, Find};
use super::queue::QueueId;
use super::section_arg::{section, Section};
use super::value::{RtVal, R};
use lang::Span;
use stdlib::Array;

/// The source text of a section argument (for diagnostics and race names).
fn arg_text(cx: &Ctx, s: &Section) -> String {
    super::section_arg::text(cx, s.span)
}

/// Start a synchronous copy between two device sides, naming both arrays
/// for the race checks.
fn begin_copy(
    cx: &mut Ctx,
    b: &std::rc::Rc<dyn super::machine::Backend>,
    span: Span,
    [dst, src]: [&Section; 2],
    texts: &[String; 2],
) -> R<()> {
    let names = [
        (dst.array.id(), texts[0].as_str().into()),
        (src.array.id(), texts[1].as_str().into()),
    ];
    b.begin(cx, QueueId::Sync, span, &names)
}

/// The diagnostic of a device copy that failed, naming its source side.
fn copy_failed(e: EnvError, span: Span, src_text: &str) -> Box<lang::Diag> {
    match e {
        EnvError::Race(d) => d,
        EnvError::Device(f) => error::device(span, src_text, &f),
        e => error::device(span, src_text, &e.message().into()),
    }
}

/// An error unless the two sides hold the same element count.
fn same_count(dst: &Section, src: &Section, span: Span, cx: &Ctx, what: &str) -> R<()> {
    let (dn, sn) = (
        dst.region.len(dst.array.shape()),
        src.region.len(src.array.shape()),
    );
    if dn != sn {
        return Err(error::count_mismatch(
            span,
            &format!(
                "`{}` has {dn} elements and `{}` {sn}: {what} needs the same count",
                arg_text(cx, dst),
                arg_text(cx, src)
            ),
        ));
    }
    Ok(())
}

/// `acc_memcpy_device(dst, src)`: each side an array or section that lies
/// inside one present section on the current device (the kernels' rule:
/// storage is per section, and the copy is one device command between two
/// of them).
pub fn device(args: &[RtVal], spans: &[Span], span: Span, cx: &mut Ctx) -> R<RtVal> {
    let mut i = 0;
    let dst = section(args, spans, &mut i, cx)?;
    let src = section(args, spans, &mut i, cx)?;
    same_count(&dst, &src, span, cx, "a device copy")?;
    if dst.array.id() == src.array.id() && dst.region == src.region {
        return Ok(RtVal::Unit);
    }
    let texts = [arg_text(cx, &dst), arg_text(cx, &src)];
    let (b, dev) = (cx.backend.clone(), cx.device);
    begin_copy(cx, &b, span, [&dst, &src], &texts)?;
    let copied = b
        .env(cx)
        .copy_device(dev, (&dst.array, &dst.region), (&src.array, &src.region))
        .map_err(|e| copy_failed(e, span, &texts[1]))?;
    if copied {
        return Ok(RtVal::Unit);
    }
    let env = b.env(cx);
    let find = |s: &Section| env.find(dev, &s.array, &s.region);
    let (k, side, found) = match find(&dst) {
        Find::Inside(_) => (1, &src, find(&src)),
        f => (0, &dst, f),
    };
    drop(env);
    let which = ["the destination", "the source"][k];
    let why = match found {
        Find::Partial(have) => format!(
            "{which}: it overlaps the present elements {} without lying inside them (a device copy reads or writes inside one present section)",
            have.range_text(side.array.shape())
        ),
        _ => which.to_string(),
    };
    Err(error::not_present(side.span, &texts[k], "", dev, &why))
}

/// `acc_memcpy_d2d(dst, src, dst_dev, src_dev)`: the device copy of array
/// or section `src` on `src_dev` into that of `dst` on `dst_dev`, each side
/// inside one present section there. Two Vulkan devices share no memory,
/// so the copy goes through host memory.
pub fn d2d(args: &[RtVal], spans: &[Span], span: Span, cx: &mut Ctx) -> R<RtVal> {
    let mut i = 0;
    let dst = section(args, spans, &mut i, cx)?;
    let src = section(args, spans, &mut i, cx)?;
    same_count(&dst, &src, span, cx, "a device copy")?;
    let texts = [arg_text(cx, &dst), arg_text(cx, &src)];
    let b = cx.backend.clone();
    let n = b.num_devices();
    let dev_arg = |k: usize| -> R<usize> {
        let sp = spans.get(k).copied().unwrap_or(span);
        let d = match &args[k] {
            RtVal::Scalar(v) => v.as_i128().unwrap_or(-1),
            _ => -1,
        };
        usize::try_from(d)
            .ok()
            .filter(|&d| d < n)
            .ok_or_else(|| error::bad_device(sp, d, n))
    };
    let (dd, sd) = (dev_arg(i)?, dev_arg(i + 1)?);
    // Two devices share no memory: the copy goes through the host, after
    // the work pending on both (async queues, which the race checks of the
    // arguments leave only if they do not write the arrays, and
    // synchronous kernels), so it copies what the program has computed and
    // nothing reads what it overwrites.
    let here = cx.device;
    for d in [sd, dd] {
        cx.device = d;
        let r = b
            .wait(cx, None, None, span)
            .and_then(|_| b.complete_sync(cx, Some(d), Some(span)));
        cx.device = here;
        r?;
    }
    begin_copy(cx, &b, span, [&dst, &src], &texts)?;
    let copied = b
        .env(cx)
        .copy_between((&dst.array, &dst.region, dd), (&src.array, &src.region, sd))
        .map_err(|e| copy_failed(e, span, &texts[1]))?;
    if copied {
        return Ok(RtVal::Unit);
    }
    let env = b.env(cx);
    let (k, side, dev) = match env.find(dd, &dst.array, &dst.region) {
        Find::Inside(_) => (1, &src, sd),
        _ => (0, &dst, dd),
    };
    let found = env.find(dev, &side.array, &side.region);
    drop(env);
    let why = match found {
        Find::Partial(have) => format!(
            "it overlaps the present elements {} without lying inside them (a copy between devices reads or writes inside one present section)",
            have.range_text(side.array.shape())
        ),
        _ => "a copy between devices needs it inside one present section".to_string(),
    };
    Err(error::not_present(side.span, &texts[k], "", dev, &why))
}

pub fn call(name: &str, args: &[RtVal], spans: &[Span], span: Span, cx: &mut Ctx) -> R<RtVal> {
    let mut i = 0;
    let dst = section(args, spans, &mut i, cx)?;
    let src = section(args, spans, &mut i, cx)?;
    let to_device = name.starts_with("acc_memcpy_to_device");
    let source = cx.source.clone();
    let text = |s: &Section| -> String {
        source
            .as_deref()
            .and_then(|t| t.text.get(s.span.range()))
            .unwrap_or("the array")
            .to_string()
    };
    same_count(&dst, &src, span, cx, "a copy")?;
    let b = cx.backend.clone();
    // `_async(.., q)`: after q's earlier work, at once (one allowed order
    // of an async copy: what follows on q comes after it too).
    if let Some(q) = args.get(i) {
        let n = match q {
            RtVal::Scalar(v) => v.as_i128().unwrap_or(0),
            _ => 0,
        };
        let q = match n {
            -1 | -3 => Some(cx.default_async),
            -2 => None,
            n if (0..=i64::MAX as i128).contains(&n) => Some(n as i64),
            n => {
                return Err(Box::new(
                    lang::Diag::error(
                        "accl::device::queue",
                        format!("{n} is not an async queue number"),
                        spans.get(i).copied().unwrap_or(span),
                        "in this call",
                    )
                    .with_help("queues are numbered 0 and up (-1 is the queue of `async` alone)"),
                ))
            }
        };
        if let Some(q) = q {
            b.wait(cx, Some(&[q]), None, span)?;
        }
    }
    let (dev_side, host_side) = if to_device {
        (&dst, &src)
    } else {
        (&src, &dst)
    };
    let dev = cx.device;
    let names = [
        (dev_side.array.id(), text(dev_side).into()),
        (host_side.array.id(), text(host_side).into()),
    ];
    b.begin(cx, QueueId::Sync, span, &names)?;
    let access =
        |a: &Array, write: bool, at: Span, cx: &mut Ctx| cx.host_access(a, None, write, at);
    access(&host_side.array, !to_device, host_side.span, cx)?;
    // A host array of the device side's shape carries the elements, in
    // the same box.
    let shape = dev_side.array.shape().to_vec();
    let carrier = Array::zeros(dev_side.array.scalar(), shape.clone())
        .map_err(|_| error::out_of_memory(span, "a copy's carrier", dev_side.array.len() * 8))?;
    let carried = Section {
        array: carrier.clone(),
        region: dev_side.region.clone(),
        span,
    };
    if to_device {
        carried.unpack(&host_side.pack()?);
    }
    let present = b
        .env(cx)
        .transfer_via(dev, &dev_side.array, &dev_side.region, &carrier, to_device)
        .map_err(|e| match e {
            EnvError::Race(d) => d,
            EnvError::Device(f) => error::device(dev_side.span, &text(dev_side), &f),
            EnvError::Partial(have) => error::partially_present(
                dev_side.span,
                &text(dev_side),
                &dev_side.region,
                &have,
                &shape,
                dev,
            ),
        })?;
    if !present {
        return Err(error::not_present(
            dev_side.span,
            &text(dev_side),
            "",
            dev,
            if to_device {
                "the destination is a device copy"
            } else {
                "the source is a device copy"
            },
        ));
    }
    if !to_device {
        b.complete_sync(cx, Some(dev), Some(span))?;
        host_side.unpack(&carried.pack()?);
    }
    Ok(RtVal::Unit)
}
