//! MPI for the `mpi_*` builtins: rsmpi on Open MPI (the `mpi` feature).
//!
//! MPI is used only when the process was started by an MPI launcher
//! (`mpirun`, `mpiexec`, `srun`: [`launched`] reads the variables they set);
//! it is initialised at the first MPI builtin (or by the CLI before the run,
//! [`init`]) and finalised by [`finalize`]. Outside a launcher, and in a
//! build without the `mpi` feature, there is no MPI at all: the builtins
//! act as rank 0 of 1, so ordinary runs and the tests pay no MPI start-up.
//!
//! One process-wide state behind a mutex: MPI has one world per process,
//! whichever engine or thread calls (MPI is initialised with
//! `MPI_THREAD_SERIALIZED`, and the mutex serialises the calls). Every call
//! goes through the C API with the world's error handler set to
//! `MPI_ERRORS_RETURN`, so a failing call is an error string here (which the
//! interpreter turns into a diagnostic at the builtin's span), not an abort
//! inside Open MPI. Transfers are bytes: the interpreter packs a section's
//! elements into a buffer and unpacks what arrives ([`crate::interp`]'s
//! `mpi` module).

use lang::{Scalar, Value};
use stdlib::mpi::ReduceOp;

/// The variables an MPI launcher sets for each process it starts: Open
/// MPI's `mpirun`, the PMI of MPICH's Hydra and Slurm, PMIx.
const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// Was this process started by an MPI launcher (and is MPI built in)?
pub fn launched() -> bool {
    cfg!(feature = "mpi") && LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some())
}

/// This process's rank among the ranks of its host, as the launcher says
/// (the world rank where it gives no local one), without initialising MPI:
/// it picks the default device of a rank ([`default_device`]).
#[doc(hidden)]
pub fn local_rank() -> Option<usize> {
    if !launched() {
        return None;
    }
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// The device a rank starts on when none is chosen: its local rank modulo
/// the number of devices (device 0 outside a launcher).
#[doc(hidden)]
pub fn default_device(num_devices: usize) -> usize {
    match local_rank() {
        Some(r) if num_devices > 0 => r % num_devices,
        _ => 0,
    }
}

/// `rank r: ` under a launcher (the world rank, from the launcher's
/// variables when MPI is not initialised yet), else empty: what the CLI puts
/// before each line of a failing rank's diagnostic.
#[doc(hidden)]
pub fn rank_prefix() -> String {
    if !launched() {
        return String::new();
    }
    let rank = imp::initialized_world()
        .map(|(r, _)| r as usize)
        .or_else(|| {
            ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
                .iter()
                .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
        });
    match rank {
        Some(r) => format!("rank {r}: "),
        None => String::new(),
    }
}

/// Initialise MPI now if the process was started by a launcher (the CLI
/// calls this before a run, so that a failing rank can always end the job
/// with `MPI_Abort`). True when MPI is running.
pub fn init() -> Result<bool, String> {
    if !launched() {
        return Ok(false);
    }
    imp::world().map(|_| true)
}

/// `(rank, size)` of this process: `(0, 1)` without a launcher.
#[doc(hidden)]
pub fn world() -> Result<(i32, i32), String> {
    if !launched() {
        return Ok((0, 1));
    }
    imp::world()
}

/// `MPI_Barrier` over every rank.
#[doc(hidden)]
pub fn barrier() -> Result<(), String> {
    if !launched() {
        return Ok(());
    }
    imp::barrier()
}

/// `x` combined over every rank with `op` (`MPI_Allreduce`).
#[doc(hidden)]
pub fn allreduce(x: Value, op: ReduceOp) -> Result<Value, String> {
    if !launched() {
        return Ok(x);
    }
    imp::allreduce(x, op)
}

/// Combine `buf`, elements of type `elem`, with `op` element by element
/// over every rank, in place (`MPI_Allreduce`).
#[doc(hidden)]
pub fn allreduce_elems(buf: &mut [u8], elem: Scalar, op: ReduceOp) -> Result<(), String> {
    if !launched() {
        return Ok(());
    }
    imp::allreduce_elems(buf, elem, op)
}

/// Overwrite `buf` on every rank with `root`'s (`MPI_Bcast`).
#[doc(hidden)]
pub fn bcast(buf: &mut [u8], root: i32) -> Result<(), String> {
    if !launched() {
        return Ok(());
    }
    imp::bcast(buf, root)
}

/// What one side of an exchange holds: the element type and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct Shape {
    pub elem: Scalar,
    pub count: usize,
}

impl Shape {
    /// The 16 bytes that announce it to another rank.
    pub fn header(self) -> [u8; 16] {
        let mut h = [0u8; 16];
        h[..8].copy_from_slice(&elem_code(self.elem).to_ne_bytes());
        h[8..].copy_from_slice(&(self.count as i64).to_ne_bytes());
        h
    }

    pub fn from_header(h: &[u8; 16]) -> Option<Shape> {
        let code = i64::from_ne_bytes(h[..8].try_into().ok()?);
        let count = i64::from_ne_bytes(h[8..].try_into().ok()?);
        Shape::from_codes([count, code])
    }

    /// The element count and the element type's code.
    pub fn codes(self) -> [i64; 2] {
        [self.count as i64, elem_code(self.elem)]
    }

    pub fn from_codes([count, code]: [i64; 2]) -> Option<Shape> {
        Some(Shape {
            elem: elem_of(code)?,
            count: usize::try_from(count).ok()?,
        })
    }
}

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum ExchangeError {
    /// `source` sends other elements than the receive section holds.
    Mismatch { source: i32, sent: Option<Shape> },
    /// An MPI call failed.
    Mpi(String),
}

/// Send `send` (elements `send_shape`) to `dest` while receiving `recv`
/// from `source` (`MPI_Sendrecv`; `-1` is `MPI_PROC_NULL`, no partner).
/// A small header goes first, so a receive section that does not match
/// what its source sends is an error here rather than a truncated or
/// short message. Callers have checked the ranks; without a launcher the
/// only partners are `-1` and `0` (this process: a copy).
#[doc(hidden)]
pub fn sendrecv(
    send: &[u8],
    send_shape: Shape,
    dest: i32,
    recv: &mut [u8],
    recv_shape: Shape,
    source: i32,
) -> Result<(), ExchangeError> {
    if !launched() {
        if dest == 0 && source == 0 {
            if send_shape != recv_shape {
                return Err(ExchangeError::Mismatch {
                    source,
                    sent: Some(send_shape),
                });
            }
            recv.copy_from_slice(send);
        }
        return Ok(());
    }
    imp::sendrecv(send, send_shape, dest, recv, recv_shape, source)
}

/// A non-blocking send or receive in flight (`MPI_Isend`, `MPI_Irecv`): the
/// bytes MPI reads or fills live here until [`wait`] (their heap blocks
/// do not move with the value). Dropped before that, the requests are
/// freed and the buffers leaked to MPI, so nothing it still touches is
/// freed.
#[doc(hidden)]
pub struct Pending {
    header: Box<[u8; 16]>,
    data: Vec<u8>,
    /// The shape a receive expects (`None`: a send).
    expect: Option<Shape>,
    peer: i32,
    tag: i32,
    inner: imp::Requests,
}

/// The largest tag a script may give a non-blocking message.
pub const MAX_TAG: i32 = 9999;

/// Start sending `data` (`shape`'s elements) to rank `dest` with `tag`
/// (`dest < 0`: no partner, nothing is sent). Without a launcher nothing
/// is sent either: the interpreter keeps a message to itself.
#[doc(hidden)]
pub fn isend(data: Vec<u8>, shape: Shape, dest: i32, tag: i32) -> Result<Pending, String> {
    let mut p = Pending::new(Box::new(shape.header()), data, None, dest, tag);
    if dest >= 0 && launched() {
        imp::isend(&mut p)?;
    }
    Ok(p)
}

/// Start receiving `shape`'s elements from rank `source` with `tag`
/// (`source < 0`: no partner, nothing arrives).
#[doc(hidden)]
pub fn irecv(shape: Shape, source: i32, tag: i32) -> Result<Pending, String> {
    let bytes = shape.count * shape.elem.size();
    let mut data = Vec::new();
    data.try_reserve_exact(bytes)
        .map_err(|_| format!("no memory for a {bytes} byte receive buffer"))?;
    data.resize(bytes, 0);
    let mut p = Pending::new(Box::new([0; 16]), data, Some(shape), source, tag);
    if source >= 0 && launched() {
        imp::irecv(&mut p)?;
    }
    Ok(p)
}

/// Wait for `p`; a receive's bytes (`None` when it had no partner, or
/// without a launcher: the interpreter matches messages to itself).
#[doc(hidden)]
pub fn wait(mut p: Pending) -> Result<Option<Vec<u8>>, ExchangeError> {
    let Some(expect) = p.expect else {
        if launched() {
            imp::wait(&mut p).map_err(ExchangeError::Mpi)?;
        }
        return Ok(None);
    };
    if p.peer < 0 || !launched() {
        return Ok(None);
    }
    imp::wait(&mut p).map_err(ExchangeError::Mpi)?;
    if *p.header != expect.header() {
        return Err(ExchangeError::Mismatch {
            source: p.peer,
            sent: Shape::from_header(&p.header),
        });
    }
    Ok(Some(std::mem::take(&mut p.data)))
}

impl Pending {
    fn new(
        header: Box<[u8; 16]>,
        data: Vec<u8>,
        expect: Option<Shape>,
        peer: i32,
        tag: i32,
    ) -> Self {
        Pending {
            header,
            data,
            expect,
            peer,
            tag,
            inner: imp::Requests::default(),
        }
    }

    /// What a receive expects.
    pub fn expected(&self) -> Option<Shape> {
        self.expect
    }

    /// The partner rank and the tag.
    pub fn peer_and_tag(&self) -> (i32, i32) {
        (self.peer, self.tag)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if imp::abandon(&mut self.inner) {
            std::mem::forget(std::mem::take(&mut self.data));
            std::mem::forget(std::mem::replace(&mut self.header, Box::new([0; 16])));
        }
    }
}

/// End the whole job: `MPI_Abort` when MPI is running, else exit.
#[doc(hidden)]
pub fn abort(code: i32) -> ! {
    if launched() {
        // The launcher forwards this rank's stderr through its own
        // daemon; MPI_Abort tears the job down at once, and on a loaded
        // machine it cut off the diagnostic just printed. A moment first.
        use std::io::Write;
        let _ = std::io::stderr().flush();
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    imp::abort(code);
    std::process::exit(code)
}

/// Finalise MPI if it was initialised (the CLI calls this at the end of a
/// run; an embedder that used the MPI builtins calls it before exiting).
/// Later MPI builtins are errors.
pub fn finalize() {
    imp::finalize();
}

/// The element code a header carries for `s`.
fn elem_code(s: Scalar) -> i64 {
    match s {
        Scalar::Bool => 0,
        Scalar::I32 => 1,
        Scalar::I64 => 2,
        Scalar::U32 => 3,
        Scalar::U8 => 4,
        Scalar::F32 => 5,
        Scalar::F64 => 6,
    }
}

fn elem_of(code: i64) -> Option<Scalar> {
    [
        Scalar::Bool,
        Scalar::I32,
        Scalar::I64,
        Scalar::U32,
        Scalar::U8,
        Scalar::F32,
        Scalar::F64,
    ]
    .into_iter()
    .find(|&s| elem_code(s) == code)
}

#[cfg(feature = "mpi")]
mod imp {
    use super::{ExchangeError, ReduceOp, Shape};
    use lang::Value;
    use mpi::ffi;
    use std::os::raw::{c_int, c_void};
    use std::sync::Mutex;

    enum State {
        Off,
        Running { rank: i32, size: i32 },
        Finalized,
    }

    /// The universe (its drop is `MPI_Finalize`) and what is known of the world.
    static STATE: Mutex<(State, Option<mpi::environment::Universe>)> =
        Mutex::new((State::Off, None));

    /// Messages travel in chunks of at most this many bytes (MPI counts are
    /// `int`s).
    const CHUNK: usize = 1 << 30;
    const TAG_HEADER: c_int = 7001;
    const TAG_DATA: c_int = 7002;

    fn lock() -> std::sync::MutexGuard<'static, (State, Option<mpi::environment::Universe>)> {
        STATE.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn comm() -> ffi::MPI_Comm {
        // SAFETY: a constant of the MPI library, read after MPI_Init.
        unsafe { ffi::RSMPI_COMM_WORLD }
    }

    /// The error string of an MPI return code.
    fn check(what: &str, rc: c_int) -> Result<(), String> {
        if rc == 0 {
            return Ok(());
        }
        let mut buf = vec![0 as std::os::raw::c_char; ffi::MPI_MAX_ERROR_STRING as usize + 1];
        let mut len: c_int = 0;
        // SAFETY: the buffer holds MPI_MAX_ERROR_STRING characters.
        unsafe { ffi::MPI_Error_string(rc, buf.as_mut_ptr(), &mut len) };
        let text: String = buf[..len.max(0) as usize]
            .iter()
            .map(|&c| c as u8 as char)
            .collect();
        Err(format!("{what} failed: {text} (MPI error {rc})"))
    }

    /// Run `f` with MPI initialised (initialising it on first use).
    fn with_world<T>(f: impl FnOnce(i32, i32) -> Result<T, String>) -> Result<T, String> {
        let mut st = lock();
        match st.0 {
            State::Running { rank, size } => f(rank, size),
            State::Finalized => Err("MPI was already finalised".into()),
            State::Off => {
                let Some((universe, _)) =
                    mpi::initialize_with_threading(mpi::Threading::Serialized)
                else {
                    return Err("MPI was initialised by someone else".into());
                };
                let (mut rank, mut size) = (0, 1);
                // SAFETY: MPI is initialised; the out-pointers are valid.
                unsafe {
                    check(
                        "MPI_Comm_set_errhandler",
                        ffi::MPI_Comm_set_errhandler(comm(), ffi::RSMPI_ERRORS_RETURN),
                    )?;
                    check("MPI_Comm_rank", ffi::MPI_Comm_rank(comm(), &mut rank))?;
                    check("MPI_Comm_size", ffi::MPI_Comm_size(comm(), &mut size))?;
                }
                *st = (State::Running { rank, size }, Some(universe));
                f(rank, size)
            }
        }
    }

    pub fn initialized_world() -> Option<(i32, i32)> {
        match lock().0 {
            State::Running { rank, size } => Some((rank, size)),
            _ => None,
        }
    }

    pub fn world() -> Result<(i32, i32), String> {
        with_world(|r, s| Ok((r, s)))
    }

    pub fn barrier() -> Result<(), String> {
        // SAFETY: MPI is initialised.
        with_world(|_, _| check("MPI_Barrier", unsafe { ffi::MPI_Barrier(comm()) }))
    }

    pub fn allreduce(x: Value, op: ReduceOp) -> Result<Value, String> {
        with_world(|_, _| {
            // SAFETY: constants of the MPI library.
            let (mop, bool_op) = unsafe {
                match op {
                    ReduceOp::Sum => (ffi::RSMPI_SUM, ffi::RSMPI_SUM),
                    ReduceOp::Prod => (ffi::RSMPI_PROD, ffi::RSMPI_PROD),
                    ReduceOp::Max => (ffi::RSMPI_MAX, ffi::RSMPI_LOR),
                    ReduceOp::Min => (ffi::RSMPI_MIN, ffi::RSMPI_LAND),
                }
            };
            fn all<T: Copy>(x: T, ty: ffi::MPI_Datatype, op: ffi::MPI_Op) -> Result<T, String> {
                let mut out = x;
                // SAFETY: one element of type `ty` in and out.
                let rc = unsafe {
                    ffi::MPI_Allreduce(
                        &x as *const T as *const c_void,
                        &mut out as *mut T as *mut c_void,
                        1,
                        ty,
                        op,
                        comm(),
                    )
                };
                check("MPI_Allreduce", rc).map(|_| out)
            }
            // SAFETY: constants of the MPI library.
            unsafe {
                Ok(match x {
                    Value::Bool(b) => Value::Bool(all(b as u8, ffi::RSMPI_UINT8_T, bool_op)? != 0),
                    Value::I32(v) => Value::I32(all(v, ffi::RSMPI_INT32_T, mop)?),
                    Value::I64(v) => Value::I64(all(v, ffi::RSMPI_INT64_T, mop)?),
                    Value::U32(v) => Value::U32(all(v, ffi::RSMPI_UINT32_T, mop)?),
                    Value::U8(v) => Value::U8(all(v, ffi::RSMPI_UINT8_T, mop)?),
                    Value::F32(v) => Value::F32(all(v, ffi::RSMPI_FLOAT, mop)?),
                    Value::F64(v) | Value::FloatLit(v) => {
                        Value::F64(all(v, ffi::RSMPI_DOUBLE, mop)?)
                    }
                    Value::IntLit(v) => Value::I64(all(v as i64, ffi::RSMPI_INT64_T, mop)?),
                })
            }
        })
    }

    pub fn allreduce_elems(buf: &mut [u8], elem: lang::Scalar, op: ReduceOp) -> Result<(), String> {
        use lang::Scalar as S;
        with_world(|_, _| {
            // SAFETY: constants of the MPI library.
            let (ty, mop) = unsafe {
                let ty = match elem {
                    S::Bool | S::U8 => ffi::RSMPI_UINT8_T,
                    S::I32 => ffi::RSMPI_INT32_T,
                    S::I64 => ffi::RSMPI_INT64_T,
                    S::U32 => ffi::RSMPI_UINT32_T,
                    S::F32 => ffi::RSMPI_FLOAT,
                    S::F64 => ffi::RSMPI_DOUBLE,
                };
                let mop = match (op, elem == S::Bool) {
                    (ReduceOp::Sum, _) => ffi::RSMPI_SUM,
                    (ReduceOp::Prod, _) => ffi::RSMPI_PROD,
                    (ReduceOp::Max, false) => ffi::RSMPI_MAX,
                    (ReduceOp::Min, false) => ffi::RSMPI_MIN,
                    (ReduceOp::Max, true) => ffi::RSMPI_LOR,
                    (ReduceOp::Min, true) => ffi::RSMPI_LAND,
                };
                (ty, mop)
            };
            let size = elem.size();
            // Whole elements per message, under MPI's `int` count.
            let per = (CHUNK / size) * size;
            let mut send = Vec::new();
            for chunk in buf.chunks_mut(per) {
                send.clear();
                send.try_reserve(chunk.len())
                    .map_err(|_| format!("no memory for a {} byte send buffer", chunk.len()))?;
                send.extend_from_slice(chunk);
                // SAFETY: `chunk.len() / size` elements of type `ty` in
                // `send` and out into `chunk`, which do not overlap.
                let rc = unsafe {
                    ffi::MPI_Allreduce(
                        send.as_ptr() as *const c_void,
                        chunk.as_mut_ptr() as *mut c_void,
                        (chunk.len() / size) as c_int,
                        ty,
                        mop,
                        comm(),
                    )
                };
                check("MPI_Allreduce", rc)?;
            }
            Ok(())
        })
    }

    pub fn bcast(buf: &mut [u8], root: i32) -> Result<(), String> {
        with_world(|_, _| {
            for chunk in buf.chunks_mut(CHUNK) {
                // SAFETY: `chunk.len()` bytes at its pointer.
                let rc = unsafe {
                    ffi::MPI_Bcast(
                        chunk.as_mut_ptr() as *mut c_void,
                        chunk.len() as c_int,
                        ffi::RSMPI_UINT8_T,
                        root,
                        comm(),
                    )
                };
                check("MPI_Bcast", rc)?;
            }
            Ok(())
        })
    }

    /// The requests of one non-blocking message: its header's, then one per
    /// chunk of its data.
    #[derive(Default)]
    pub struct Requests(Vec<ffi::MPI_Request>);

    /// Tags of non-blocking messages: the header's, then the data's, apart
    /// from those of `mpi_sendrecv`.
    fn nb_tags(tag: i32) -> (c_int, c_int) {
        (10_000 + 2 * tag, 10_001 + 2 * tag)
    }

    /// Post one non-blocking send (or, `recv`, receive) of `len` bytes.
    ///
    /// # Safety
    /// `buf` holds `len` bytes that stay where they are, and alive, until
    /// the request completes or is freed.
    unsafe fn post(
        buf: *mut c_void,
        len: usize,
        peer: i32,
        tag: c_int,
        recv: bool,
    ) -> Result<ffi::MPI_Request, String> {
        // SAFETY: the caller keeps the buffer; MPI writes the request.
        unsafe {
            let mut r = std::mem::zeroed::<ffi::MPI_Request>();
            let (what, rc) = if recv {
                let rc = ffi::MPI_Irecv(
                    buf,
                    len as c_int,
                    ffi::RSMPI_UINT8_T,
                    peer,
                    tag,
                    comm(),
                    &mut r,
                );
                ("MPI_Irecv", rc)
            } else {
                let rc = ffi::MPI_Isend(
                    buf,
                    len as c_int,
                    ffi::RSMPI_UINT8_T,
                    peer,
                    tag,
                    comm(),
                    &mut r,
                );
                ("MPI_Isend", rc)
            };
            check(what, rc).map(|_| r)
        }
    }

    /// Post the header, then the data in chunks, of a send or a receive.
    fn start(p: &mut super::Pending, recv: bool) -> Result<(), String> {
        with_world(|_, _| {
            let (th, td) = nb_tags(p.tag);
            // SAFETY: the header and the data stay where they are until the
            // requests complete or are freed ([`super::Pending`]).
            unsafe {
                let r = post(p.header.as_mut_ptr() as *mut c_void, 16, p.peer, th, recv)?;
                p.inner.0.push(r);
                for chunk in p.data.chunks_mut(CHUNK) {
                    let r = post(
                        chunk.as_mut_ptr() as *mut c_void,
                        chunk.len(),
                        p.peer,
                        td,
                        recv,
                    )?;
                    p.inner.0.push(r);
                }
            }
            Ok(())
        })
    }

    pub fn isend(p: &mut super::Pending) -> Result<(), String> {
        start(p, false)
    }

    pub fn irecv(p: &mut super::Pending) -> Result<(), String> {
        start(p, true)
    }

    pub fn wait(p: &mut super::Pending) -> Result<(), String> {
        let mut reqs = std::mem::take(&mut p.inner.0);
        with_world(|_, _| {
            for r in &mut reqs {
                // SAFETY: a request MPI made; MPI_Wait sets it to null.
                let rc = unsafe { ffi::MPI_Wait(r, ffi::RSMPI_STATUS_IGNORE) };
                check("MPI_Wait", rc)?;
            }
            Ok(())
        })
    }

    /// Let go of requests never waited for; whether any was still active
    /// (its buffers must then stay alive).
    pub fn abandon(r: &mut Requests) -> bool {
        let active = !r.0.is_empty();
        let st = lock();
        if !matches!(st.0, State::Running { .. }) {
            return active;
        }
        for req in &mut r.0 {
            // SAFETY: a request MPI made and nobody waits for any more.
            unsafe { ffi::MPI_Request_free(req) };
        }
        r.0.clear();
        active
    }

    /// One `MPI_Sendrecv` of bytes (`-1`: no partner).
    fn exchange(
        send: &[u8],
        dest: i32,
        recv: &mut [u8],
        source: i32,
        tag: c_int,
    ) -> Result<(), String> {
        // SAFETY: constants of the MPI library; the buffers hold the counts
        // given; the status is written by MPI.
        unsafe {
            let null = ffi::RSMPI_PROC_NULL;
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            let rc = ffi::MPI_Sendrecv(
                send.as_ptr() as *const c_void,
                send.len() as c_int,
                ffi::RSMPI_UINT8_T,
                if dest < 0 { null } else { dest },
                tag,
                recv.as_mut_ptr() as *mut c_void,
                recv.len() as c_int,
                ffi::RSMPI_UINT8_T,
                if source < 0 { null } else { source },
                tag,
                comm(),
                status.as_mut_ptr(),
            );
            check("MPI_Sendrecv", rc)
        }
    }

    pub fn sendrecv(
        send: &[u8],
        send_shape: Shape,
        dest: i32,
        recv: &mut [u8],
        recv_shape: Shape,
        source: i32,
    ) -> Result<(), ExchangeError> {
        let mpi = ExchangeError::Mpi;
        with_world(|_, _| Ok(())).map_err(mpi)?;
        let mut got = [0u8; 16];
        with_world(|_, _| exchange(&send_shape.header(), dest, &mut got, source, TAG_HEADER))
            .map_err(mpi)?;
        if source >= 0 && got != recv_shape.header() {
            return Err(ExchangeError::Mismatch {
                source,
                sent: Shape::from_header(&got),
            });
        }
        // The data, in chunks: step k sends chunk k of `send` and receives
        // chunk k of `recv` (the header made the counts agree).
        let steps = send.len().div_ceil(CHUNK).max(recv.len().div_ceil(CHUNK));
        for k in 0..steps {
            let s = send.chunks(CHUNK).nth(k);
            let r = recv.chunks_mut(CHUNK).nth(k);
            let (sd, s) = match s {
                Some(s) if dest >= 0 => (dest, s),
                _ => (-1, &[][..]),
            };
            let mut empty = [];
            let (sr, r) = match r {
                Some(r) if source >= 0 => (source, r),
                _ => (-1, &mut empty[..]),
            };
            with_world(|_, _| exchange(s, sd, r, sr, TAG_DATA)).map_err(mpi)?;
        }
        Ok(())
    }

    pub fn abort(code: i32) {
        let st = lock();
        if let State::Running { .. } = st.0 {
            // SAFETY: MPI is initialised; MPI_Abort does not return.
            unsafe { ffi::MPI_Abort(comm(), code) };
        }
    }

    pub fn finalize() {
        let mut st = lock();
        if let State::Running { .. } = st.0 {
            st.0 = State::Finalized;
            // The universe's drop is MPI_Finalize.
            drop(st.1.take());
        }
    }
}

#[cfg(not(feature = "mpi"))]
mod imp {
    //! Without the `mpi` feature [`super::launched`] is false, so none of
    //! these is reached.
    use super::{ExchangeError, ReduceOp, Shape};
    use lang::Value;

    pub fn initialized_world() -> Option<(i32, i32)> {
        None
    }
    pub fn world() -> Result<(i32, i32), String> {
        Ok((0, 1))
    }
    pub fn barrier() -> Result<(), String> {
        Ok(())
    }
    pub fn allreduce(x: Value, _: ReduceOp) -> Result<Value, String> {
        Ok(x)
    }
    pub fn allreduce_elems(_: &mut [u8], _: lang::Scalar, _: ReduceOp) -> Result<(), String> {
        Ok(())
    }
    #[derive(Default)]
    pub struct Requests(());
    pub fn isend(_: &mut super::Pending) -> Result<(), String> {
        Ok(())
    }
    pub fn irecv(_: &mut super::Pending) -> Result<(), String> {
        Ok(())
    }
    pub fn wait(_: &mut super::Pending) -> Result<(), String> {
        Ok(())
    }
    pub fn abandon(_: &mut Requests) -> bool {
        false
    }
    pub fn bcast(_: &mut [u8], _: i32) -> Result<(), String> {
        Ok(())
    }
    pub fn sendrecv(
        _: &[u8],
        _: Shape,
        _: i32,
        _: &mut [u8],
        _: Shape,
        _: i32,
    ) -> Result<(), ExchangeError> {
        Ok(())
    }
    pub fn abort(_: i32) {}
    pub fn finalize() {}
}
