//! Launching one compute construct on a device: evaluate the launch values
//! on the host, specialise and compile (memoised), bind each array's present
//! section, check the arrays' rows against pending async work, dispatch on
//! the construct's queue (and wait, unless it is async).

use super::device::spec::{binding_kinds, work_group_size};
use super::device::{DevState, Prepared};
use super::storage::VkStorage;
use crate::interp::error;
use crate::interp::machine::CConstruct;
use crate::interp::present::{Env, Fault, Region, Table};
use crate::interp::queue::QueueId;
use crate::interp::race::{Access, Mode};
use crate::interp::scalar::{bits_to_value, value_to_bits};
use crate::interp::value::{Flow, Frame, R};
use crate::interp::Ctx;
use compiler::{ArgLocation, ArrayArgs, IndexWidth, LaunchArgs};
use lang::value::combine;
use lang::{Diag, Span, Value};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::sync::Arc;
use stdlib::Array;
use vk_runtime::{Buffer, BufferBinding, StagingBuffer, StagingKind};

/// A device fault while launching: its own diagnostic, or a launch error.
fn launch_fault(span: Span, f: Fault) -> Box<Diag> {
    crate::interp::error::fault(span, "the kernel", &f, |m| launch_error(span, m))
}

fn launch_error(span: Span, msg: impl Into<String>) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::device::launch",
            msg.into(),
            span,
            "launching this kernel",
        )
        .with_help("run with `--host` to use the host reference backend"),
    )
}

/// An array a kernel uses that is not present (`no_create` of absent data):
/// it is copied in for the launch and back after, as if the kernel used the
/// host memory.
struct Temp {
    array: Array,
    rows: usize,
    written: bool,
}

/// Run `c` on device `dev` of `table` (its data clauses already entered).
pub fn launch(
    cell: &RefCell<Table<VkStorage>>,
    c: &CConstruct,
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<Flow> {
    let dev = cx.device;
    let Some(code) = &c.device else {
        return Err(error::internal(c.span, "a kernel without device code"));
    };
    let kernel = code.kernel.as_ref().map_err(|d| Box::new(d.clone()))?;

    // Host-side launch values: loop bounds, scalars, clause expressions.
    let mut levels = Vec::with_capacity(c.loops.len());
    for l in &c.loops {
        levels.push((l.lo.get(fr, cx)? as i128, l.hi.get(fr, cx)? as i128));
    }
    for (lo, hi) in &code.extra_levels {
        levels.push((lo.get(fr, cx)? as i128, hi.get(fr, cx)? as i128));
    }
    if !cx.deferred.is_empty() {
        // The scalars the kernel reads wait for pending results into them;
        // so do the variables it reduces into, unless their results land
        // later in launch order.
        use crate::interp::deferred::{deferred_access, Touch};
        for p in &kernel.params {
            deferred_access(fr, cx, p.host.index(), Touch::Read, c.span)?;
        }
        for r in &kernel.reductions {
            deferred_access(fr, cx, r.host.index(), Touch::Combine, c.span)?;
        }
    }
    // An `auto` loop's parallel kernel when this launch's values keep its
    // iterations apart.
    let (kernel, fingerprint, offsets, parallel) = match &code.variant {
        Some(v) if variant_applies(v, c, &levels, fr, cx)? => {
            (&v.kernel, &v.fingerprint, &v.rows, " (auto: in parallel)")
        }
        _ => (kernel, &code.fingerprint, &code.rows, ""),
    };
    let params: Vec<Value> = kernel
        .params
        .iter()
        .map(|p| bits_to_value(p.ty, fr.s[p.host.index()]))
        .collect();
    let mut num_gangs = None;
    if let Some(e) = kernel.num_gangs_expr {
        if let Some((_, x)) = code.host_exprs.iter().find(|(h, _)| *h == e) {
            // A run-time value below 1 is the default, as NVHPC and GCC
            // take it (the host reference runs the program too); a
            // constant one is refused by the checker on every backend.
            let n = x.eval_int(fr, cx)?;
            num_gangs = (n >= 1).then(|| n.min(u64::MAX as i128) as u64);
        }
    }
    let mut vector_length = kernel.vector_length;
    if let Some(e) = kernel.vector_length_expr {
        if let Some((_, x)) = code.host_exprs.iter().find(|(h, _)| *h == e) {
            // A hint (OpenACC lets the implementation choose another): a
            // run-time value past the workgroup limit runs with the limit,
            // one below 1 with the default, as on the host reference.
            let n = x.eval_int(fr, cx)?;
            if n >= 1 {
                vector_length = Some(n.min(lang::check::MAX_LANES) as u32);
            }
        }
    }

    // Sections the data clauses name (evaluated before the table is
    // borrowed: a host expression may itself ask the table).
    let mut named = Vec::new();
    for d in &c.data {
        if !d.section.is_empty() {
            let a = crate::interp::data::array_of(fr, d.slot)?;
            named.push((d.slot, crate::interp::data::region(d, &a, fr, cx)?));
        }
    }
    let mut table = cell.borrow_mut();
    let table = &mut *table;

    // Arrays: the present section each binding uses.
    let mut temps: Vec<Temp> = Vec::new();
    let mut bound: SmallVec<[(Buffer, ArrayArgs, u64); 4]> = SmallVec::new();
    let track = table.store.queue != QueueId::Sync || !table.store.tracker.is_empty();
    let mut touched: SmallVec<[Access; 4]> = SmallVec::new();
    let mut unzeroed: SmallVec<[super::copies::Unzeroed; 2]> = SmallVec::new();
    let mut placeholders: SmallVec<[usize; 2]> = SmallVec::new();
    for (i, (_, ap)) in kernel.arrays.iter().enumerate() {
        let a = fr.a[ap.host.index()].clone().ok_or_else(error::uninit)?;
        let rows = a.shape()[0];
        if !table.has_any(dev, &a) {
            table
                .attach(dev, &a, &Region::whole(a.shape()), true, true)
                .map_err(|e| launch_error(c.span, format!("`{}`: {e:?}", ap.name)))?;
            temps.push(Temp {
                array: a.clone(),
                rows,
                written: ap.written,
            });
        }
        let m = table.mapping(dev, &a).expect("attached above");
        let (s, sec) = match m.sections.as_slice() {
            [one] => one,
            many => {
                // Several sections: the one a data clause of this construct
                // names, else the one the nearest enclosing `data` region
                // or `declare` names.
                let inside = |r: &Region| many.iter().find(|(s, _)| s.bx.contains(r, a.shape()));
                let pick = match named.iter().find(|(slot, _)| *slot == ap.host.index()) {
                    Some((_, r)) => inside(r),
                    None => cx
                        .visible
                        .iter()
                        .rev()
                        .filter(|(d, id, _)| *d == dev && *id == a.id())
                        .find_map(|(_, _, r)| inside(r)),
                };
                match pick {
                    Some(p) => p,
                    None => {
                        return Err(launch_error(
                            c.span,
                            format!(
                                "`{}` is present on device {dev} as {} separate sections; a kernel binds one",
                                ap.name,
                                many.len()
                            ),
                        ))
                    }
                }
            }
        };
        let (s_lo, s_hi) = (s.bx.lo, s.bx.hi);
        let base = (s_lo * a.row_len()) as u64;
        if track {
            // The rows the kernel may touch, from its leading indices,
            // else the whole bound section.
            let param = |p: u32| {
                let sp = kernel.params.get(p as usize)?;
                bits_to_value(sp.ty, *fr.s.get(sp.host.index())?).as_i128()
            };
            // Within the rows the construct's own clauses name, if any.
            let mut section = (s_lo, s_hi);
            if let Some((_, r)) = named.iter().find(|(slot, _)| *slot == ap.host.index()) {
                let (lo, hi) = r.axis(0, a.shape());
                section = (s_lo.max(lo), s_hi.min(hi).max(s_lo.max(lo)));
            }
            let (lo, hi) = crate::interp::race::kernel_rows(
                kernel,
                offsets.get(i).and_then(|o| o.as_deref()),
                levels.first().copied(),
                kernel.levels.first().is_some_and(|l| l.inclusive),
                &param,
                section,
            );
            // The construct's own copy of the name, shared, if it has one.
            let slot = ap.host.index();
            let name = c
                .data
                .iter()
                .map(|d| (d.slot, &d.name))
                .chain(c.implicit.iter().map(|i| (i.slot, &i.name)))
                .find(|(s, _)| *s == slot)
                .map_or_else(|| ap.name.as_str().into(), |(_, n)| n.clone());
            touched.push(Access {
                array: a.id(),
                name,
                lo,
                hi,
                host: Mode::None,
                device: if ap.written { Mode::Write } else { Mode::Read },
            });
        }
        let dims = a.shape().iter().map(|&d| d as u64).collect();
        let args = ArrayArgs {
            base,
            dims,
            ..ArrayArgs::default()
        };
        if sec.unzeroed.get() {
            unzeroed.push((i, sec.unzeroed.clone()));
        }
        if sec.placeholder {
            placeholders.push(i);
        }
        bound.push((sec.buffer.clone(), args, a.len() as u64));
    }

    let g = table
        .store
        .guard(dev, &touched, "kernel")
        .map_err(|e| match e {
            crate::interp::present::EnvError::Race(d) => d,
            e => launch_error(c.span, e.message()),
        });
    let label: std::borrow::Cow<str> = if table.store.trace.is_some() {
        format!("{} {}{parallel}", kernel.name, cx.line_of(c.span)).into()
    } else {
        kernel.name.as_str().into()
    };
    let t0 = table.store.trace.is_some().then(std::time::Instant::now);
    let value = g.as_ref().ok().copied().flatten();
    let key = *fingerprint.get_or_init(|| kernel.fingerprint());
    let r = g.and_then(|_| {
        dispatch(
            table,
            &label,
            c,
            kernel,
            key,
            dev,
            &mut bound,
            (&unzeroed, &placeholders),
            params,
            levels,
            (vector_length, num_gangs),
        )
    });
    if r.is_ok() {
        for acc in touched {
            table.store.record(dev, value, acc, "kernel");
        }
    }
    let queue = table.store.queue;
    if queue == QueueId::Sync {
        // Where a fault found by a later wait is shown, if the kernel
        // completes lazily.
        table.store.lazy_span = c.span;
    }
    if let (Some(t), Some(t0)) = (&mut table.store.trace, t0) {
        t.host(
            format!("launch {label} on device {dev} {}", queue.track()),
            "launch",
            t0,
        );
    }
    // Temporary copies go back whatever happened to the launch, so the
    // present table stays balanced; the data only when it ran.
    for t in temps {
        let _ = table.detach(
            dev,
            &t.array,
            &Region::rows(0, t.rows),
            t.written && r.is_ok(),
            true,
            false,
        );
    }
    // Reductions: fold the partials in group order, then into the outer
    // value (OpenACC: the reduction variable's original value takes part);
    // an async one when the host waits for its queue.
    match r? {
        Reduced::Now(values) => {
            for (rp, v) in kernel.reductions.iter().zip(values) {
                let slot = rp.host.index();
                let outer = bits_to_value(rp.ty, fr.s[slot]);
                let v = if rp.copy { v } else { combine(rp.op, outer, v) };
                fr.s[slot] = value_to_bits(v, rp.ty);
            }
        }
        Reduced::Later(readers) => {
            for (rp, value) in kernel.reductions.iter().zip(readers) {
                cx.deferred.push(crate::interp::machine::Deferred {
                    dev,
                    queue,
                    depth: cx.depth,
                    slot: rp.host.index(),
                    op: rp.op,
                    copy: rp.copy,
                    ty: rp.ty,
                    name: rp.name.as_str().into(),
                    span: c.span,
                    value,
                });
            }
        }
    }
    Ok(Flow::Next)
}

#[allow(clippy::too_many_arguments)]
fn dispatch(
    table: &mut Table<VkStorage>,
    label: &str,
    c: &CConstruct,
    kernel: &compiler::Kernel,
    key: u64,
    dev: usize,
    bound: &mut [(Buffer, ArrayArgs, u64)],
    copies: (&[super::copies::Unzeroed], &[usize]),
    params: Vec<Value>,
    levels: Vec<(i128, i128)>,
    (vector_length, num_gangs): (Option<u32>, Option<u64>),
) -> R<Reduced> {
    let queue = table.store.queue;
    let (d, kernels) = table
        .store
        .dev_and_kernels(dev)
        .map_err(|f| launch_fault(c.span, f))?;
    let mut spec = d.spec(kernels);
    let limits = d.device.info().limits.clone();
    spec.by_address = by_address(d, c.span, kernel, bound, &spec)?;
    let args = LaunchArgs {
        params,
        // Taken, not cloned: the launch needs only the buffers after this.
        arrays: bound
            .iter_mut()
            .enumerate()
            .map(|(i, (buffer, a, _))| {
                let a = std::mem::take(a);
                match buffer.device_address() {
                    Some(address) if compiler::Spec::addressed(spec.by_address, i) => ArrayArgs {
                        address,
                        len: buffer.size() / element_size(kernel, i),
                        ..a
                    },
                    _ => a,
                }
            })
            .collect(),
        levels,
        num_gangs,
        range: None,
    };
    // The iteration count decides the index width before compiling (an
    // overflow saturates here and is reported by `encode` below).
    let total = kernel
        .levels
        .iter()
        .zip(&args.levels)
        .map(|(l, &(lo, hi))| compiler::abi::trip_count(l, lo, hi))
        .fold(1u64, u64::saturating_mul);
    spec.index_width = IndexWidth::for_sizes(bound.iter().map(|b| b.2), total);
    if d.traits.texel_reads {
        let candidates = *d
            .texel_candidates
            .entry(key)
            .or_insert_with(|| compiler::Spec::texel_candidates(kernel));
        spec.texels = texels(candidates, bound, &limits);
    }
    if super::copies::local_copies_on() {
        spec.local_copies = compiler::private_copies::local_sizes(kernel, spec.checks, |a| {
            args.arrays.get(a).map(|x| &x.dims[..])
        });
    }
    super::copies::before_launch(d, queue, c, kernel, spec.local_copies, bound, copies)?;
    if spec.index_width == IndexWidth::U64 && !spec.features.int64 {
        return Err(launch_error(
            c.span,
            "this kernel needs 64-bit indexing, and the device lacks shaderInt64",
        ));
    }
    let wg = work_group_size(kernel, &spec, vector_length, total);
    if wg > limits.max_compute_work_group_invocations || wg > limits.max_compute_work_group_size[0]
    {
        return Err(launch_error(
            c.span,
            format!(
                "a work group of {wg} invocations is more than the device allows ({})",
                limits.max_compute_work_group_invocations
            ),
        ));
    }
    let pkey = (key, spec, wg);
    let ready = d.prepared(&pkey);
    let (words, plan) = match &ready {
        Some(p) => (p.words.clone(), p.plan.clone()),
        None => (
            d.module(key, kernel, &spec).map_err(Box::new)?,
            d.plan(key, kernel, &spec),
        ),
    };
    if !d
        .last_module
        .as_ref()
        .is_some_and(|m| Arc::ptr_eq(m, &words))
    {
        d.last_module = Some(words.clone());
    }
    let layout = &plan.layout;
    let cpu = d.device.info().device_type == vk_runtime::DeviceType::Cpu;
    let groups = max_groups(
        kernel,
        &spec,
        &plan,
        limits.max_compute_work_group_count[0],
        cpu,
    );
    let encode = |args: &LaunchArgs| {
        layout
            .encode(kernel, args, wg, groups, plan.per_invocation())
            .map_err(Box::new)
    };
    let launch = encode(&args)?;
    if launch.groups[0] == 0 {
        return Ok(Reduced::Now(
            kernel
                .reductions
                .iter()
                .map(|r| compiler::reduce_partials(r.op, r.ty, &[]))
                .collect(),
        ));
    }
    let pipeline = match ready {
        Some(p) => p.pipeline,
        None => {
            let pipeline = d
                .pipeline(
                    pkey,
                    &words,
                    || {
                        binding_kinds(
                            kernel,
                            &spec,
                            layout.num_bindings(kernel)
                                + u32::from(spec.uses_fault_buffer())
                                + u32::from(plan.resume),
                        )
                    },
                    layout.push_constant_bytes(),
                )
                .map_err(|f| launch_fault(c.span, f))?;
            d.keep_prepared(
                pkey,
                Prepared {
                    words: words.clone(),
                    plan: plan.clone(),
                    pipeline: pipeline.clone(),
                },
            );
            pipeline
        }
    };
    let fail = |e: vk_runtime::VkError| launch_error(c.span, e.to_string());
    // The argument block in a buffer when it does not fit push constants.
    let arg_buffer = match layout.location {
        ArgLocation::PushConstants => None,
        ArgLocation::Buffer { .. } => {
            let size = launch.bytes.len() as u64;
            let buf = Buffer::new(&d.device, size, "accl kernel arguments").map_err(fail)?;
            let mut st = StagingBuffer::new(&d.device, size, StagingKind::Upload, "accl arguments")
                .map_err(fail)?;
            st.as_mut_slice().copy_from_slice(&launch.bytes);
            d.queue(queue)
                .map_err(|f| launch_fault(c.span, f))?
                .copy_buffer(&st, 0, &buf, 0, size)
                .map_err(fail)?;
            Some(buf)
        }
    };
    // On llvmpipe a kernel too long for its loop cap runs its iterations
    // in turn over several dispatches, each well below it: a one-lane
    // kernel's, or a flat kernel's grid-stride turns per invocation.
    let invocations = launch.groups[0] as u64 * wg as u64;
    let chunk = match layout.location {
        // A kernel that resumes goes past the cap in one dispatch's state.
        _ if plan.resume => None,
        ArgLocation::PushConstants if layout.member(compiler::abi::FieldKind::First).is_some() => {
            plan.one_lane_chunk(kernel, total, invocations)
                .or_else(|| plan.flat_chunk(kernel, total, invocations))
        }
        _ => None,
    };
    let num_parts = chunk.map_or(1, |c| total.div_ceil(c));
    // One partial per work group, reduction and part, each reduction's in
    // its own aligned range of a pooled host-visible buffer (a part's
    // groups after the previous part's), read in place once the queue is
    // waited for (no allocation and no copy on the launch path).
    let align = limits.min_storage_buffer_offset_alignment.max(4);
    let mut ranges = Vec::with_capacity(kernel.reductions.len());
    let mut end = 0u64;
    for r in &kernel.reductions {
        let size = launch.groups[0] as u64 * compiler::abi::partial_size(r.ty) as u64;
        let mut part_ranges = Vec::with_capacity(num_parts as usize);
        for _ in 0..num_parts {
            part_ranges.push((end, size.max(4)));
            end = (end + size.max(4)).div_ceil(align) * align;
        }
        ranges.push(part_ranges);
    }
    let partials = if ranges.is_empty() {
        None
    } else {
        Some(d.partials(end).map_err(|f| launch_fault(c.span, f))?)
    };
    // An array reached by address keeps its binding number with the
    // buffer's first bytes bound there: the batch then holds the buffer
    // and orders it like any other (the module declares no variable).
    let fault_buf = if spec.uses_fault_buffer() {
        Some(d.fault_buffer().map_err(|f| launch_fault(c.span, f))?)
    } else {
        None
    };
    // Each invocation's slot, zero (not run yet) to start with.
    let resume_buf = if plan.resume {
        let bytes = compiler::resume::buffer_bytes(kernel, invocations);
        let b = Buffer::new_mapped(&d.device, bytes, "accl resume").map_err(fail)?;
        b.write_mapped(&vec![0u8; bytes as usize]);
        Some(b)
    } else {
        None
    };
    // On the stack for the usual few (a launch allocates little).
    let bindings_of = |part: usize| {
        let mut bindings: SmallVec<[BufferBinding; 8]> = bound
            .iter()
            .enumerate()
            .map(|(i, b)| BufferBinding {
                buffer: &b.0,
                offset: 0,
                // A texel view shows whole 32-bit texels.
                range: if spec.texel(i) {
                    b.0.size() / 4 * 4
                } else {
                    b.0.size().min(limits.max_storage_buffer_range)
                },
            })
            .collect();
        if let Some(p) = &partials {
            bindings.extend(ranges.iter().map(|r| BufferBinding {
                buffer: p,
                offset: r[part].0,
                range: r[part].1,
            }));
        }
        if let Some(b) = &arg_buffer {
            bindings.push(BufferBinding::whole(b));
        }
        if let Some(b) = &fault_buf {
            bindings.push(BufferBinding::whole(b));
        }
        if let Some(b) = &resume_buf {
            bindings.push(BufferBinding::whole(b));
        }
        bindings
    };
    let push: &[u8] = match layout.location {
        ArgLocation::PushConstants => &launch.bytes,
        ArgLocation::Buffer { .. } => &[],
    };
    let mut parts = Vec::new();
    if let Some(chunk) = chunk {
        let mut args = args;
        let mut first = 0;
        while first < total {
            args.range = Some((first, first.saturating_add(chunk)));
            parts.push(encode(&args)?.bytes);
            first = first.saturating_add(chunk);
        }
    }
    let q = d.queue(queue).map_err(|f| launch_fault(c.span, f))?;
    q.set_label(label);
    if parts.is_empty() {
        q.dispatch(&pipeline, &bindings_of(0), push, launch.groups)
            .map_err(fail)?;
    }
    for (i, part) in parts.iter().enumerate() {
        q.dispatch(&pipeline, &bindings_of(i), part, launch.groups)
            .map_err(fail)?;
    }
    // Invocations that stopped before the loop cap set word 0: dispatch
    // again (each waits for the last, to read the word) until none did.
    if let Some(b) = &resume_buf {
        loop {
            d.wait_queue(queue).map_err(|f| launch_fault(c.span, f))?;
            let mut stopped = [0u8; 4];
            b.read_mapped_at(0, &mut stopped);
            if stopped == [0; 4] {
                break;
            }
            b.write_mapped(&[0; 4]);
            // Each wait ends quickly, so the embedder's limits (time,
            // progress callback) are checked here.
            d.limits
                .check()
                .map_err(|f| launch_fault(c.span, Fault::Stopped(f)))?;
            let q = d.queue(queue).map_err(|f| launch_fault(c.span, f))?;
            q.dispatch(&pipeline, &bindings_of(0), push, launch.groups)
                .map_err(fail)?;
        }
    }
    // An async kernel returns at once (its reductions land when the host
    // waits for the queue), unless check mode must report its faults at
    // the construct. So does a synchronous one (it completes lazily:
    // `device/completion.rs`), its reductions landing when the host reads
    // their variables, unless a reduction's variable is one the host does
    // not check (those of a `kernels` region) or check mode is on.
    let sync_lazy = queue == QueueId::Sync && !spec.checks && d.lazy_sync && c.defer_reductions;
    let later = (queue != QueueId::Sync && !spec.checks) || sync_lazy;
    if sync_lazy {
        d.settle_sync_kernel()
    } else if later {
        d.settle(queue)
    } else {
        d.wait_queue(queue)
    }
    .map_err(|f| launch_fault(c.span, f))?;
    let Some(buf) = partials else {
        return Ok(Reduced::Now(Vec::new()));
    };
    let groups = launch.groups[0] as usize;
    let slot = std::rc::Rc::new(Pooled {
        buf,
        pool: d.partials_pool(),
        read: std::cell::Cell::new(false),
    });
    let readers = kernel
        .reductions
        .iter()
        .zip(ranges)
        .map(|(r, parts)| {
            let (op, ty, slot) = (r.op, r.ty, slot.clone());
            Box::new(move || {
                // Every part's partials, part after part, in group order.
                let size = groups * compiler::abi::partial_size(ty);
                let mut bytes = vec![0u8; size * parts.len()];
                for (i, &(offset, _)) in parts.iter().enumerate() {
                    slot.buf
                        .read_mapped_at(offset, &mut bytes[i * size..(i + 1) * size]);
                }
                slot.read.set(true);
                compiler::reduce_partials(op, ty, &bytes)
            }) as Box<dyn FnOnce() -> Value>
        })
        .collect::<Vec<_>>();
    Ok(if later {
        Reduced::Later(readers)
    } else {
        Reduced::Now(readers.into_iter().map(|read| read()).collect())
    })
}

/// The partials buffer of a reduction: back to the device's pool once its
/// readers are done, if they read it (the host waited for the kernel). One
/// never read (an async result dropped with its variable, a wait stopped by
/// a limit) may still be written by its kernel: it is let go (the queue
/// keeps it alive until the kernel is done), not reused.
struct Pooled {
    buf: Buffer,
    pool: std::rc::Rc<std::cell::RefCell<Vec<Buffer>>>,
    read: std::cell::Cell<bool>,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if self.read.get() {
            if let Ok(mut p) = self.pool.try_borrow_mut() {
                p.push(self.buf.clone());
            }
        }
    }
}

/// A launch's reduction results: folded now, or read when the host waits
/// for the queue of an async launch.
enum Reduced {
    Now(Vec<Value>),
    Later(Vec<Box<dyn FnOnce() -> Value>>),
}

/// Work groups of any other kernel at most: past this, each invocation
/// takes several iterations of the grid-stride loop. Measured on an H200
/// (2^26 f32 elements) against one group per 256 elements: the copy kernel
/// 2287 -> 3000 GB/s, saxpy 3273 -> 3599 GB/s, Jacobi and Mandelbrot
/// unchanged (fewer groups, 1024 to 16384, slowed the Mandelbrot, whose
/// rows differ in cost, by 5% to 86%).
const FLAT_GROUPS: u32 = 65536;

/// Work groups of a kernel with reductions: enough to fill a large GPU,
/// few enough that each invocation folds many elements before the
/// per-group tree and that the partials stay small. A constant of the
/// device, so the same input reduces in the same order every run.
const REDUCTION_GROUPS: u32 = 1024;

/// [`FLAT_GROUPS`] on a CPU driver, where each work group costs a call
/// with its own set-up: on lavapipe (2 cores), 1M-element kernels against
/// one group per 256 elements (4096 groups): saxpy 14.5 -> 9.6-11.6 ms,
/// Mandelbrot 1024^2 24.5-25.9 -> 19.5-20.1 ms, a Jacobi sweep 23.4-30.6
/// -> 23.6-24.2 ms; 128 to 1024 groups measured alike. Enough groups
/// remain to spread rows of unequal cost over the driver's threads.
const CPU_FLAT_GROUPS: u32 = 256;

fn max_groups(
    kernel: &compiler::Kernel,
    spec: &compiler::Spec,
    plan: &compiler::Plan,
    max: u32,
    cpu: bool,
) -> u32 {
    // A kernel with workgroup copies of atomically updated arrays: as few
    // groups as for a reduction, so each folds its copy after many
    // iterations (one iteration per invocation made the fold cost as much
    // as the atomics it saved).
    if kernel.reductions.is_empty() && !compiler::plan::privatises_atomics(kernel, spec) {
        if cpu {
            max.min(CPU_FLAT_GROUPS)
        } else if kernel.shape == compiler::Shape::Flat && plan.coarsening > 1 {
            // A coarsened flat kernel already keeps several loads in flight
            // per invocation: one trip each, as many groups as that takes.
            // (A gang kernel's `coarsening` is its teams' unroll and jam;
            // those keep the cap.)
            // On an H200 (2^28 f32, coarsening 8), against the cap: saxpy
            // 3947 -> 4122 GB/s, copy 3798 -> 3921; 2^31: 3805 -> 4077.
            max
        } else {
            max.min(FLAT_GROUPS)
        }
    } else {
        max.min(REDUCTION_GROUPS)
    }
}

/// The arrays of a launch reached through their device addresses
/// (`compiler::Spec::by_address`): those whose buffer is larger than one
/// binding shows a kernel, or all of them under `ACCL_BY_ADDRESS=all`.
fn by_address(
    d: &DevState,
    span: Span,
    kernel: &compiler::Kernel,
    bound: &[(Buffer, ArrayArgs, u64)],
    spec: &compiler::Spec,
) -> R<u64> {
    let max = d.device.info().limits.max_storage_buffer_range;
    let mut mask = 0u64;
    for (i, (buffer, _, _)) in bound.iter().enumerate() {
        let large = buffer.size() > max;
        if !(large || d.by_address_all) {
            continue;
        }
        let usable = spec.features.buffer_device_address && buffer.device_address().is_some();
        if i >= 64 || !usable {
            if !large {
                continue; // the testing switch asks only where it can
            }
            return Err(launch_error(
                span,
                format!(
                    "`{}` needs {} bytes on the device, more than one binding shows a kernel \
                     ({max} bytes, maxStorageBufferRange), and {}",
                    kernel.arrays[lang::arena::Handle::new(i)].name,
                    buffer.size(),
                    if i >= 64 {
                        "only a kernel's first 64 arrays can be reached by address"
                    } else {
                        "this device has no buffer device addresses"
                    }
                ),
            ));
        }
        mask |= 1 << i;
    }
    Ok(mask)
}

/// The arrays of a launch read through texel buffers
/// (`compiler::Spec::texels`): of the kernel's `candidates`
/// (`compiler::Spec::texel_candidates`), those whose buffer takes texel
/// views and fits one.
fn texels(
    candidates: u64,
    bound: &[(Buffer, ArrayArgs, u64)],
    limits: &vk_runtime::AdapterLimits,
) -> u64 {
    let mut mask = candidates;
    let max = u64::from(limits.max_texel_buffer_elements) * 4;
    for (i, (buffer, _, _)) in bound.iter().enumerate().take(64) {
        let size = buffer.size() / 4 * 4;
        if !buffer.takes_texel_views() || size == 0 || size > max {
            mask &= !(1 << i);
        }
    }
    mask
}

/// Does this launch run `v`, the parallel kernel of an `auto` loop? Its
/// test reads the frame's scalars (after their pending results land) and
/// tells two names of one array apart.
fn variant_applies(
    v: &crate::interp::machine::Variant,
    c: &CConstruct,
    levels: &[(i128, i128)],
    fr: &mut Frame,
    cx: &mut Ctx,
) -> R<bool> {
    let Some(&(lo, hi)) = levels.first() else {
        return Ok(false);
    };
    if !cx.deferred.is_empty() {
        use crate::interp::deferred::{deferred_access, Touch};
        for p in &v.kernel.params {
            deferred_access(fr, cx, p.host.index(), Touch::Read, c.span)?;
        }
    }
    let frame = &*fr;
    let scalar = |slot: usize, t: lang::Scalar| {
        frame
            .s
            .get(slot)
            .and_then(|&b| bits_to_value(t, b).as_i128())
    };
    let same = |a: usize, b: usize| match (frame.a.get(a), frame.a.get(b)) {
        (Some(Some(x)), Some(Some(y))) => x.id() == y.id(),
        // An array the launch cannot see: take it to be the same.
        _ => true,
    };
    Ok(v.test.independent(lo, hi, &scalar, &same))
}

/// Bytes per element of array `i`'s buffer.
fn element_size(kernel: &compiler::Kernel, i: usize) -> u64 {
    kernel.arrays[lang::arena::Handle::new(i)].elem.size() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk_runtime::{Binding, TexelFormat};

    /// Kernel `i` of `src` and its plan under a GPU's specialisation.
    fn kernel(src: &str, i: usize) -> (compiler::Kernel, compiler::Spec, compiler::Plan) {
        let builtins = stdlib::builtins();
        let prog = lang::check_source(src, &builtins).unwrap().program;
        let (body, c) = crate::explain::kernel_constructs(&prog)[i];
        let k = compiler::lower(&prog, body, c, &builtins).unwrap();
        let spec = compiler::Spec {
            subgroup_size: 32,
            coarsen: 4,
            coarsen_reduction: 8,
            ..compiler::Spec::default()
        };
        let plan = compiler::Plan::of(&k, &spec);
        (k, spec, plan)
    }

    #[test]
    fn only_a_coarsened_flat_loop_launches_past_the_cap() {
        let src =
            "let n = 1000; let x = zeros(f32, n); let y = zeros(f32, n); let p = zeros(i32, n + 1);
            parallel loop for i in 0..n { y[i] = 2.0 * x[i] + y[i]; }
            parallel loop for r in 0..n {
                let s = 0.0f32;
                for k in p[r]..p[r + 1] { s += x[k]; }
                y[r] = s;
            }
            parallel loop for i in 1..n { if x[i] > 0.0 { y[i] = x[i - 1]; } }";
        let max = u32::MAX >> 1;
        let (saxpy, spec, plan) = kernel(src, 0);
        assert_eq!(plan.coarsening, 4);
        assert_eq!(max_groups(&saxpy, &spec, &plan, max, false), max);
        assert_eq!(max_groups(&saxpy, &spec, &plan, max, true), CPU_FLAT_GROUPS);
        // Gangs as teams run several rows at a time (unroll and jam): the
        // cap stays.
        let (rows, spec, plan) = kernel(src, 1);
        assert!(
            plan.teams.is_some() && plan.coarsening > 1,
            "{:?}",
            plan.coarsening
        );
        assert_eq!(max_groups(&rows, &spec, &plan, max, false), FLAT_GROUPS);
        // A sum takes the reduction's factor and keeps the reduction cap.
        let (sum, spec, plan) = kernel(
            "let n = 1000; let x = zeros(f32, n); let s = 0.0f32;
             parallel loop reduction(+: s) for i in 0..n { s += x[i]; }",
            0,
        );
        assert_eq!(plan.coarsening, 8);
        assert_eq!(max_groups(&sum, &spec, &plan, max, false), REDUCTION_GROUPS);
        // A body with an `if` is not coarsened: the cap stays.
        let (branchy, spec, plan) = kernel(src, 2);
        assert_eq!(plan.coarsening, 1);
        assert_eq!(max_groups(&branchy, &spec, &plan, max, false), FLAT_GROUPS);
    }

    #[test]
    fn arrays_only_read_with_32_bit_elements_are_read_through_texels() {
        let src = "let n = 64; let x = zeros(f32, n); let k = zeros(i32, n); let c = zeros(u32, n);
            let d = zeros(f64, n); let y = zeros(f32, n); let big = zeros(f32, 32);
            parallel loop for i in 0..n {
                y[i] = x[i] + k[i] as f32 + c[i] as f32 + d[i] as f32 + big[i % 32] + y[i];
            }";
        let (kernel, mut spec, _) = kernel(src, 0);
        let names: Vec<&str> = kernel.arrays.iter().map(|(_, a)| a.name.as_str()).collect();
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        let r = vk_runtime::testing::with_validation("accl texel launch", |instance| {
            let dev = vk_runtime::Device::new(instance, 0).unwrap();
            let mut limits = dev.info().limits.clone();
            let bound: Vec<(Buffer, ArrayArgs, u64)> = kernel
                .arrays
                .iter()
                .map(|(_, a)| {
                    let size = if a.name == "big" { 1024 } else { 64 * 8 };
                    let b = Buffer::new(&dev, size, &a.name).unwrap();
                    (b, ArrayArgs::default(), 64)
                })
                .collect();
            // `big` past the most texels a view shows: a storage buffer.
            limits.max_texel_buffer_elements = 128;
            spec.texels = texels(compiler::Spec::texel_candidates(&kernel), &bound, &limits);
            let n = bound.len() as u32;
            let kinds = binding_kinds(&kernel, &spec, n + 1);
            assert_eq!(kinds[at("x")], Binding::Texels(TexelFormat::F32));
            assert_eq!(kinds[at("k")], Binding::Texels(TexelFormat::I32));
            assert_eq!(kinds[at("c")], Binding::Texels(TexelFormat::U32));
            // f64 elements, an array written, one too large, and what
            // follows the arrays: storage buffers.
            for name in ["d", "y", "big"] {
                assert_eq!(kinds[at(name)], Binding::Storage, "{name}");
            }
            assert_eq!(kinds[n as usize], Binding::Storage);
            // Bounds-check mode and 64-bit indexing read none through texels.
            for s in [
                compiler::Spec {
                    checks: true,
                    ..spec
                },
                compiler::Spec {
                    index_width: IndexWidth::U64,
                    ..spec
                },
            ] {
                let kinds = binding_kinds(&kernel, &s, n);
                assert!(kinds.iter().all(|k| *k == Binding::Storage), "{kinds:?}");
            }
        });
        if let Err(m) = r {
            panic!("validation messages:\n{}", m.join("\n"));
        }
    }
}
