//! Calling into compiled host code (the `host-jit` crate): whether it is
//! on, compiling a program, the limit check compiled code calls back, the
//! descriptors of a loop's arrays, and traps turned into the interpreter's
//! located errors. [`super::jit`] builds the closures that use it.

use super::error;
use super::machine::Ctx;
use super::value::R;
use host_jit::runtime::{self, ArrDesc, Rt, Trap};
use host_jit::{JitProgram, Site};
use lang::{Diag, Scalar, Span};
use std::ffi::c_void;
use std::rc::Rc;
use stdlib::array::Data;
/// Whether host code is compiled: on unless `ACCL_JIT=0`.
pub fn enabled() -> bool {
    std::env::var("ACCL_JIT").map_or(true, |v| v != "0")
}

/// `ACCL_JIT_TRACE` set: say on stderr what was compiled (and with `asm`,
/// the machine code of each unit).
fn tracing() -> bool {
    std::env::var_os("ACCL_JIT_TRACE").is_some()
}

/// Compile what the JIT takes of `prog` (nothing when it is off or this
/// machine has no back end: the interpreter runs everything); with
/// `constructs`, compute constructs' loop nests too (on the host backend).
pub fn compile(
    prog: &lang::hir::Program,
    builtins: &lang::Builtins,
    constructs: bool,
) -> Option<Rc<JitProgram>> {
    if !enabled() {
        return None;
    }
    let j = host_jit::compile(prog, builtins, constructs)
        .map_err(|e| {
            if tracing() {
                errln!("jit: not compiled: {e}");
            }
        })
        .ok()?;
    if tracing() {
        let (f, l) = j.counts();
        errln!("jit: {f} function(s) and {l} loop(s) compiled");
        for r in &j.refused {
            errln!("jit: {} stays interpreted: {}", r.unit, r.why.what);
        }
        for (span, par) in j.par_loops() {
            match par {
                Ok(()) => errln!(
                    "jit: loop at bytes {}..{}: on up to {} thread(s) when its test passes as it starts",
                    span.start,
                    span.end,
                    threads()
                ),
                Err(w) => errln!(
                    "jit: loop at bytes {}..{}: in order: {}",
                    span.start,
                    span.end,
                    w.what
                ),
            }
        }
        for (span, simd) in j.simd_loops() {
            errln!("jit: loop at bytes {}..{}: {simd}", span.start, span.end);
        }
        let (gangs, refused) = j.gangs();
        for g in gangs {
            let simd = host_jit::simd::describe(&g.simd)
                .map(|v| format!("; {v}"))
                .unwrap_or_default();
            match &g.threads {
                Ok(()) => errln!(
                    "jit: construct at bytes {}..{} compiled, on up to {} thread(s){simd}",
                    g.span.start,
                    g.span.end,
                    threads()
                ),
                Err(w) if g.test.is_some() => errln!(
                    "jit: construct at bytes {}..{} compiled, on up to {} thread(s) when its test passes as it starts ({}){simd}",
                    g.span.start,
                    g.span.end,
                    threads(),
                    w.what
                ),
                Err(w) => errln!(
                    "jit: construct at bytes {}..{} compiled, on one thread: {}{simd}",
                    g.span.start,
                    g.span.end,
                    w.what
                ),
            }
        }
        for w in refused {
            errln!(
                "jit: construct loop nest stays interpreted: {} (bytes {}..{})",
                w.what,
                w.span.start,
                w.span.end
            );
        }
    }
    (!j.is_empty()).then(|| Rc::new(j))
}

/// The descriptors of a loop's arrays, with their data borrowed; None
/// when one is not of the planned element type and rank, or is borrowed.
#[allow(clippy::type_complexity)]
pub fn describe<'a>(
    arrays: &[(usize, Scalar, u8)],
    handles: &'a [stdlib::Array],
) -> Option<(
    Vec<ArrDesc>,
    Vec<(u64, Option<std::cell::RefMut<'a, Data>>)>,
)> {
    let mut descs: Vec<ArrDesc> = Vec::with_capacity(arrays.len());
    let mut held: Vec<(u64, Option<std::cell::RefMut<'a, Data>>)> =
        Vec::with_capacity(arrays.len());
    for (&(_, elem, rank), a) in arrays.iter().zip(handles) {
        let shape = a.shape();
        if shape.len() != rank as usize {
            return None;
        }
        let mut dims = [1u64; 3];
        for (d, &n) in dims.iter_mut().zip(shape) {
            *d = n as u64;
        }
        // The same array under two names: one borrow, one pointer.
        if let Some(k) = held.iter().position(|(id, _)| *id == a.id()) {
            descs.push(descs[k]);
            held.push((a.id(), None));
            continue;
        }
        let mut d = a.try_data_mut()?;
        let ptr = match (&mut *d, elem) {
            (Data::Bool(v), Scalar::Bool) => v.as_mut_ptr() as *mut u8,
            (Data::I32(v), Scalar::I32) => v.as_mut_ptr() as *mut u8,
            (Data::I64(v), Scalar::I64) => v.as_mut_ptr() as *mut u8,
            (Data::U32(v), Scalar::U32) => v.as_mut_ptr() as *mut u8,
            (Data::U8(v), Scalar::U8) => v.as_mut_ptr(),
            (Data::F32(v), Scalar::F32) => v.as_mut_ptr() as *mut u8,
            (Data::F64(v), Scalar::F64) => v.as_mut_ptr() as *mut u8,
            _ => return None,
        };
        descs.push(ArrDesc { ptr, dims });
        held.push((a.id(), Some(d)));
    }
    Some((descs, held))
}

/// What the limit check needs while compiled code runs.
struct Hook<'a> {
    cx: *mut Ctx,
    sites: &'a [Site],
    err: Option<Box<Diag>>,
}

/// The limit check compiled code calls when its operation count reaches
/// the next check: the interpreter's own, at the same operation.
unsafe extern "C" fn check(rt: *mut Rt, site: u32) -> u32 {
    // SAFETY: `rt` is the block `enter` passed in, whose hook is a live
    // `Hook` whose context is not otherwise used while compiled code runs.
    let rt = unsafe { &mut *rt };
    let hook = unsafe { &mut *(rt.hook as *mut Hook) };
    let cx = unsafe { &mut *hook.cx };
    let span = match hook.sites.get(site as usize) {
        Some(Site::Tick(s) | Site::Call(s)) => *s,
        _ => Span::default(),
    };
    cx.ops = rt.ops;
    // A panic must not unwind into compiled code.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cx.check_limits(span)));
    rt.ops = cx.ops;
    rt.next_check = cx.next_check;
    match r {
        Ok(Ok(())) => 0,
        Ok(Err(d)) => {
            hook.err = Some(d);
            1
        }
        Err(_) => {
            hook.err = Some(error::internal(span, "the limit check panicked"));
            1
        }
    }
}

/// A compiled run's status, scalar result and tuple elements.
pub type Ran = (u32, u64, [u64; lang::Tuple::MAX]);

/// Run compiled code `f` with the context's count, depth and limits, and
/// put them back after; a trap becomes the interpreter's error. `globals`
/// is the top-level frame's scalar slots (null when the code uses none).
pub fn enter(
    cx: &mut Ctx,
    sites: &[Site],
    globals: *mut u64,
    f: impl FnOnce(*mut Rt) -> u32,
) -> R<Ran> {
    let mut hook = Hook {
        cx: cx as *mut Ctx,
        sites,
        err: None,
    };
    let mut rt = Rt {
        ops: cx.ops,
        next_check: cx.next_check,
        depth: cx.depth as u64,
        max_depth: cx.max_depth as u64,
        ret: 0,
        trap: Trap::default(),
        check,
        hook: &mut hook as *mut Hook as *mut c_void,
        rets: [0; lang::Tuple::MAX],
        globals,
    };
    let t0 = super::phases::clock();
    let status = f(&mut rt);
    super::phases::native(t0);
    cx.ops = rt.ops;
    cx.next_check = rt.next_check;
    cx.depth = rt.depth as usize;
    if status != runtime::TRAP {
        return Ok((status, rt.ret, rt.rets));
    }
    Err(trap_error(rt.trap, sites, cx.max_depth, hook.err.take()))
}

/// The interpreter's error for trap `t` of compiled code (`err`: what the
/// limit check raised, for a limit trap).
pub fn trap_error(t: Trap, sites: &[Site], max_depth: usize, err: Option<Box<Diag>>) -> Box<Diag> {
    match (t.kind, sites.get(t.site as usize)) {
        (runtime::TRAP_LIMIT, _) => {
            err.unwrap_or_else(|| error::internal(Span::default(), "a limit stopped compiled code"))
        }
        (runtime::TRAP_BOUNDS, Some(Site::Index { ix, span })) => error::out_of_bounds(
            ix.get(t.axis as usize).copied().unwrap_or(*span),
            *span,
            t.axis as usize,
            t.index,
            t.extent as usize,
        ),
        (runtime::TRAP_DIV_ZERO, Some(Site::Div(span))) => error::div_by_zero(*span),
        (runtime::TRAP_DEPTH, Some(Site::Call(span))) => error::recursion(*span, max_depth),
        _ => error::internal(
            Span::default(),
            "compiled code stopped with an unknown trap",
        ),
    }
}

/// How many threads a construct may use: `ACCL_HOST_THREADS`, else the
/// machine's available parallelism (or what [`set_threads`] chose).
pub fn threads() -> usize {
    // Read once: `available_parallelism` reads the cgroup's CPU quota
    // files (tens of microseconds), and every compiled loop asks as it
    // starts.
    static MACHINE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) {
        0 => *MACHINE.get_or_init(|| {
            std::env::var("ACCL_HOST_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        }),
        n => n,
    }
}

static OVERRIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Set the thread count for the rest of the process (0: back to
/// `ACCL_HOST_THREADS` or the machine's): for benchmarks.
pub fn set_threads(n: usize) {
    OVERRIDE.store(n, std::sync::atomic::Ordering::Relaxed);
}
