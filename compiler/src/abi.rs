//! The launch ABI: the contract between a compiled kernel and the runtime.
//!
//! # Bindings
//! Descriptor set 0. Binding `i` is the storage buffer of captured array
//! `kernel.arrays[i]` (capture order), a runtime array of its element type
//! with a stride of the element size: 4 bytes for `i32 u32 f32`, 8 for
//! `i64 f64`, and **1 byte for `u8` and `bool`** (bool stored as 0/1; the
//! kernel reads any non-zero byte as `true` and writes 0/1) through
//! `StorageBuffer8BitAccess`. A buffer holds the whole array or only a
//! section of it (rows `j0..j0+nj` of the leading axis); see `base` below.
//!
//! Then, at binding `A + r` (`A = arrays.len()`), one **partials buffer** per
//! construct-level reduction `kernel.reductions[r]`: `groups[0]` elements of
//! the reduction's type, 4 bytes for `i32 u32 f32` and for `u8`/`bool`
//! (widened to `u32`; bool as 0/1), 8 for `i64 f64`. Workgroup `g` writes
//! element `g`: its fold of its invocations' (or gangs') private copies, the
//! operator's identity if it ran no iteration. The kernel never reads it.
//! The runtime folds the partials on the host in group order with
//! [`reduce_partials`] and combines the result with the variable's value
//! before the construct (the host's `combine(op, outer, folded)`).
//!
//! When the argument block does not fit in push constants (see below), it is
//! one more storage buffer at binding `A + R` (`R = reductions.len()`).
//!
//! # Argument block
//! One std430-style block, in push constants when it fits in
//! `Spec::max_push_constants` bytes (128, the guaranteed minimum, by
//! default), else in a read-only storage buffer ([`ArgLocation::Buffer`])
//! with the same bytes. Every field is 4 or 8 bytes: `u8`/`bool` scalars
//! travel as `u32` (0/1 for bool); "idx" fields are `u32` or `u64` by
//! [`IndexWidth`]. Fields, laid out 8-byte ones first (so there is no
//! padding), each group in this order:
//!
//! * `total` (idx): the number of iterations of the collapsed nest;
//! * per collapsed level k (outermost first): `count_k` (idx, its trip
//!   count) and `lo_k` (the loop variable's type, its first value);
//! * per array: `base` (idx, the element offset, in the whole array, of the
//!   first element the buffer holds: `j0 * d1 * d2` for a section starting at
//!   row `j0`, 0 for a whole array) and `dim_0..dim_{r-1}` (idx, the whole
//!   array's extents; element `[i, j, k]` is at `((i*d1 + j)*d2 + k) - base`
//!   in the buffer);
//! * per array reached by address (bit `i` of [`crate::Spec::by_address`]):
//!   `addr_i` (u64, the buffer's device address, always 8 bytes) and
//!   `len_i` (idx, the elements the buffer holds; what `OpArrayLength`
//!   gives for a bound one);
//! * per captured scalar (`kernel.params` order): its value.
//!
//! # Arrays reached by address
//! A buffer larger than `maxStorageBufferRange` cannot be one binding. On a
//! device with buffer device addresses such an array's bit is set in
//! [`crate::Spec::by_address`]: the module declares no variable for it and
//! reaches element `e` through the `PhysicalStorageBuffer` pointer
//! `addr_i + e * size` (`Aligned` to the element size). Its binding number stays
//! reserved, so the numbering above does not change; the runtime binds the
//! buffer's first bytes there, which keeps the buffer alive and ordered
//! with the batch that uses it.
//!
//! # Iteration
//! The work-group size is specialisation constant 0 (`SpecId 0`, default
//! `Spec::workgroup_size`: 256, or `vector_length(n)`); the runtime may pass
//! `(0, n)` at pipeline creation. By [`Shape`]:
//!
//! * `Flat`: each invocation runs a grid-stride loop
//!   `for it = gid.x; it < total; it += num_workgroups.x * wg_size`, and
//!   splits `it` row-major over the levels (innermost fastest); groups =
//!   `ceil(total / wg_size)`. Coarsened ([`crate::plan::coarsening`] `u`),
//!   a trip runs `it, it + L, .., it + (u - 1) L` (`L` = lanes) and steps by
//!   `u L`; groups = `ceil(total / (wg_size u))`;
//! * `Seq` (`parallel loop seq`): invocation 0 of group 0 runs every
//!   iteration in order; groups = 1 (0 when `total` is 0);
//! * `Gang` (a `parallel loop` with a `loop vector` inside): each workgroup
//!   runs `for g = group; g < total; g += num_workgroups.x` and `g` is split
//!   over the levels; groups = `total`. With teams
//!   ([`crate::plan::teams`]: `T` teams of `vector_length` lanes in one
//!   workgroup, `w` per gang), team `t` of group `g` takes `g * T + t, +
//!   groups * T, ..` (`j` of those at once when jammed, see
//!   [`PerInvocation`]) and groups = `ceil(min(total, num_gangs * w) / (T
//!   j))`;
//! * `Region` (`parallel { .. }`): as `Gang` with no levels and
//!   `total = num_gangs` (1 without the clause); groups = `num_gangs`.
//!
//! Every count is capped by `num_gangs` when the construct has one
//! ([`LaunchArgs::num_gangs`], the evaluated [`Kernel::num_gangs_expr`]) and
//! by `maxComputeWorkGroupCount[0]` (65535 on lavapipe): the grid-stride
//! loops make any `total` work with fewer groups. [`ArgLayout::encode`]
//! returns the dispatch size to use; `groups[0] == 0` means nothing runs
//! (and every reduction folds to its identity: [`reduce_partials`] of no
//! bytes).

use crate::kir::{Kernel, LoopLevel, ReductionOp, Shape};
pub use crate::spec::IndexWidth;
use crate::spec::Spec;
use lang::{Diag, Scalar, Value};
use smallvec::SmallVec;

/// Where the argument block goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgLocation {
    PushConstants,
    /// A read-only storage buffer at this binding (after the arrays and
    /// the partials buffers).
    Buffer {
        binding: u32,
    },
}

/// What a field of the argument block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// One past the last iteration this dispatch runs (all of them,
    /// unless [`LaunchArgs::range`] names a part).
    Total,
    /// The first iteration a dispatch runs ([`ArgLayout::has_first`]).
    First,
    Count(usize),
    Lo(usize),
    Base(usize),
    Dim(usize, usize),
    /// The device address of array `i`'s buffer.
    Addr(usize),
    /// The elements array `i`'s buffer holds.
    Len(usize),
    Param(usize),
}

/// How a field is stored: an index, or a scalar (u8/bool widened to u32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldTy {
    Index,
    Scalar(Scalar),
    /// A 64-bit device address.
    Address,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub kind: FieldKind,
    pub ty: FieldTy,
    pub offset: u32,
    pub size: u32,
}

/// The argument block of one kernel at one index width.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgLayout {
    pub index_width: IndexWidth,
    pub location: ArgLocation,
    /// In member order (= offset order).
    pub fields: Vec<Field>,
    /// Bytes, a multiple of 8.
    pub size: u32,
}

/// Scalars travel as 4 or 8 bytes.
pub fn field_size(t: Scalar) -> u32 {
    match t {
        Scalar::I64 | Scalar::F64 => 8,
        _ => 4,
    }
}

impl ArgLayout {
    /// The layout of a module written for `spec`.
    pub fn of(kernel: &Kernel, spec: &Spec) -> ArgLayout {
        ArgLayout::build(
            kernel,
            spec.index_width,
            spec.by_address,
            spec.max_push_constants,
            spec.loop_cap,
        )
    }

    /// The layout with every array bound (none reached by address).
    pub fn new(kernel: &Kernel, index_width: IndexWidth, max_push_constants: u32) -> ArgLayout {
        ArgLayout::build(kernel, index_width, 0, max_push_constants, false)
    }

    /// Does a kernel's argument block carry [`FieldKind::First`]? A
    /// one-lane kernel's always; on a driver with llvmpipe's loop cap, a
    /// flat one's too (run by one invocation, it may be split).
    pub fn has_first(kernel: &Kernel, loop_cap: bool) -> bool {
        kernel.shape == Shape::Seq
            || (loop_cap && kernel.shape == Shape::Flat && kernel.tile.is_none())
    }

    fn build(
        kernel: &Kernel,
        index_width: IndexWidth,
        by_address: u64,
        max_push_constants: u32,
        loop_cap: bool,
    ) -> ArgLayout {
        let mut wanted: Vec<(FieldKind, FieldTy)> = vec![(FieldKind::Total, FieldTy::Index)];
        if ArgLayout::has_first(kernel, loop_cap) {
            wanted.push((FieldKind::First, FieldTy::Index));
        }
        for (k, l) in kernel.levels.iter().enumerate() {
            wanted.push((FieldKind::Count(k), FieldTy::Index));
            wanted.push((FieldKind::Lo(k), FieldTy::Scalar(l.ty)));
        }
        for (i, (_, a)) in kernel.arrays.iter().enumerate() {
            wanted.push((FieldKind::Base(i), FieldTy::Index));
            for d in 0..a.rank as usize {
                wanted.push((FieldKind::Dim(i, d), FieldTy::Index));
            }
            if Spec::addressed(by_address, i) {
                wanted.push((FieldKind::Addr(i), FieldTy::Address));
                wanted.push((FieldKind::Len(i), FieldTy::Index));
            }
        }
        for (i, p) in kernel.params.iter().enumerate() {
            wanted.push((FieldKind::Param(i), FieldTy::Scalar(p.ty)));
        }
        let size_of = |t: FieldTy| match t {
            FieldTy::Index => index_width.bytes(),
            FieldTy::Scalar(s) => field_size(s),
            FieldTy::Address => 8,
        };
        // 8-byte fields first: natural alignment without padding.
        wanted.sort_by_key(|&(_, t)| std::cmp::Reverse(size_of(t)));
        let mut offset = 0;
        let fields: Vec<Field> = wanted
            .into_iter()
            .map(|(kind, ty)| {
                let size = size_of(ty);
                let f = Field {
                    kind,
                    ty,
                    offset,
                    size,
                };
                offset += size;
                f
            })
            .collect();
        let size = offset.div_ceil(8) * 8;
        let location = if size <= max_push_constants {
            ArgLocation::PushConstants
        } else {
            ArgLocation::Buffer {
                binding: (kernel.arrays.len() + kernel.reductions.len()) as u32,
            }
        };
        ArgLayout {
            index_width,
            location,
            fields,
            size,
        }
    }

    /// The member number of a field.
    pub fn member(&self, kind: FieldKind) -> Option<u32> {
        self.fields
            .iter()
            .position(|f| f.kind == kind)
            .map(|i| i as u32)
    }

    /// Number of storage buffers the pipeline binds (arrays, partials
    /// buffers, plus the argument buffer when the block is not in push
    /// constants).
    pub fn num_bindings(&self, kernel: &Kernel) -> u32 {
        (kernel.arrays.len() + kernel.reductions.len()) as u32
            + u32::from(matches!(self.location, ArgLocation::Buffer { .. }))
    }

    /// Push-constant bytes of the pipeline layout (0 when in a buffer).
    pub fn push_constant_bytes(&self) -> u32 {
        match self.location {
            ArgLocation::PushConstants => self.size,
            ArgLocation::Buffer { .. } => 0,
        }
    }

    /// The argument bytes and the dispatch size for one launch.
    pub fn encode(
        &self,
        kernel: &Kernel,
        args: &LaunchArgs,
        workgroup_size: u32,
        max_groups_x: u32,
        per_invocation: PerInvocation,
    ) -> Result<Launch, Diag> {
        let err = |msg: String| {
            Diag::error(
                "accl::launch::arguments",
                msg,
                kernel.span,
                "launching this kernel",
            )
        };
        if args.levels.len() != kernel.levels.len()
            || args.arrays.len() != kernel.arrays.len()
            || args.params.len() != kernel.params.len()
        {
            return Err(err("launch arguments do not match the kernel".into()));
        }
        let counts: SmallVec<[u64; 4]> = kernel
            .levels
            .iter()
            .zip(&args.levels)
            .map(|(l, &(lo, hi))| trip_count(l, lo, hi))
            .collect();
        let total = counts.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
        let Some(mut total) = total else {
            return Err(err(
                "the iteration space has more than 2^64 iterations".into()
            ));
        };
        let num_gangs = match args.num_gangs {
            Some(n) if n == 0 || n > i64::MAX as u64 => {
                return Err(err(format!("`num_gangs({n})` must be positive")))
            }
            n => n,
        };
        if kernel.shape == Shape::Region {
            total = num_gangs.unwrap_or(1);
        }
        let idx_max = match self.index_width {
            IndexWidth::U32 => (1u64 << 31) - 1,
            IndexWidth::U64 => (1u64 << 62) - 1,
        };
        if total > idx_max {
            return Err(err(format!(
                "{total} iterations need {} indexing",
                if self.index_width == IndexWidth::U32 {
                    "64-bit"
                } else {
                    "smaller"
                }
            )));
        }
        let mut bytes: SmallVec<[u8; 128]> = smallvec::smallvec![0u8; self.size as usize];
        for f in &self.fields {
            let v: Value = match f.kind {
                FieldKind::Total => Value::IntLit(match args.range {
                    Some((_, end)) => end.min(total) as i128,
                    None => total as i128,
                }),
                FieldKind::First => Value::IntLit(args.range.map_or(0, |r| r.0) as i128),
                FieldKind::Count(k) => Value::IntLit(counts[k] as i128),
                FieldKind::Lo(k) => Value::IntLit(args.levels[k].0),
                FieldKind::Base(i) => Value::IntLit(args.arrays[i].base as i128),
                FieldKind::Dim(i, d) => match args.arrays[i].dims.get(d) {
                    Some(&n) => Value::IntLit(n as i128),
                    None => {
                        return Err(err(format!(
                            "array {i} needs {} dimensions",
                            kernel.arrays[lang::arena::Handle::new(i)].rank
                        )))
                    }
                },
                FieldKind::Len(i) => Value::IntLit(args.arrays[i].len as i128),
                FieldKind::Addr(i) => {
                    let at = &mut bytes[f.offset as usize..(f.offset + 8) as usize];
                    at.copy_from_slice(&args.arrays[i].address.to_le_bytes());
                    continue;
                }
                FieldKind::Param(i) => args.params[i],
            };
            let at = &mut bytes[f.offset as usize..(f.offset + f.size) as usize];
            let ty = match f.ty {
                FieldTy::Index => match self.index_width {
                    IndexWidth::U32 => Scalar::U32,
                    IndexWidth::U64 => Scalar::I64,
                },
                FieldTy::Scalar(s) => s,
                FieldTy::Address => Scalar::I64,
            };
            let word: u64 = match v.cast(ty) {
                Value::Bool(b) => b as u64,
                Value::I32(x) => x as u32 as u64,
                Value::I64(x) => x as u64,
                Value::U32(x) => x as u64,
                Value::U8(x) => x as u64,
                Value::F32(x) => x.to_bits() as u64,
                Value::F64(x) => x.to_bits(),
                Value::IntLit(_) | Value::FloatLit(_) => unreachable!("cast gives a typed value"),
            };
            at.copy_from_slice(&word.to_le_bytes()[..f.size as usize]);
        }
        let wg = workgroup_size.max(1) as u64;
        let per = per_invocation.teams_per_group.max(1) as u64;
        let trip = wg * per_invocation.coarsening.max(1) as u64;
        let gangs = num_gangs.unwrap_or(u64::MAX);
        let groups = match kernel.shape {
            Shape::Flat => total.div_ceil(trip).min(gangs),
            Shape::Seq => total.min(1).min(gangs),
            Shape::Gang | Shape::Region => total
                .min(gangs.saturating_mul(per_invocation.teams_per_gang.max(1) as u64))
                .div_ceil(per * per_invocation.coarsening.max(1) as u64),
        }
        .min(max_groups_x.max(1) as u64) as u32;
        Ok(Launch {
            bytes,
            groups: [groups, 1, 1],
            total,
        })
    }
}

/// How a launch's work-group count follows from its iterations, besides
/// the work-group size: teams of a gang kernel per workgroup
/// ([`crate::plan::teams`]), iterations of a flat kernel per trip of its
/// grid-stride loop ([`crate::plan::coarsening`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerInvocation {
    /// Teams per gang: `num_gangs(g)` allows `g` times this many.
    pub teams_per_gang: u32,
    pub teams_per_group: u32,
    pub coarsening: u32,
}

impl PerInvocation {
    /// One gang per workgroup, one iteration per trip.
    pub const ONE: PerInvocation = PerInvocation {
        teams_per_gang: 1,
        teams_per_group: 1,
        coarsening: 1,
    };
}

/// Trip count of `lo..hi` (or `lo..=hi`), 0 when empty.
pub fn trip_count(level: &LoopLevel, lo: i128, hi: i128) -> u64 {
    let n = if level.inclusive {
        hi - lo + 1
    } else {
        hi - lo
    };
    n.clamp(0, u64::MAX as i128) as u64
}

/// Per-array launch values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArrayArgs {
    /// Element offset (in the whole array) of the first element the buffer holds.
    pub base: u64,
    /// Extents of the whole array.
    pub dims: SmallVec<[u64; 4]>,
    /// The buffer's device address, for an array reached by address
    /// ([`crate::Spec::by_address`]); unused otherwise.
    pub address: u64,
    /// The elements the buffer holds, for an array reached by address.
    pub len: u64,
}

/// What the runtime fills in at each launch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchArgs {
    /// Values of `kernel.params`, typed.
    pub params: Vec<Value>,
    /// Per `kernel.arrays`.
    pub arrays: Vec<ArrayArgs>,
    /// Per `kernel.levels`: the evaluated `(lo, hi)` bounds as written
    /// (`hi` exclusive unless the level is inclusive).
    pub levels: Vec<(i128, i128)>,
    /// The evaluated `num_gangs(e)` ([`Kernel::num_gangs_expr`]), if any.
    pub num_gangs: Option<u64>,
    /// A dispatch that runs only iterations `[first, end)` (in the
    /// collapsed order), one of several that run them all in turn
    /// ([`crate::plan::Plan::one_lane_chunk`]); `None`: all.
    pub range: Option<(u64, u64)>,
}

/// Bytes per element of a reduction's partials buffer (u8/bool widened).
pub fn partial_size(t: Scalar) -> usize {
    match t {
        Scalar::I64 | Scalar::F64 => 8,
        _ => 4,
    }
}

/// Fold a partials buffer (`groups[0]` elements, see the module doc) in
/// group order from the operator's identity, with the host's `combine`.
/// Pure and deterministic; trailing bytes short of an element are ignored.
pub fn reduce_partials(op: ReductionOp, ty: Scalar, bytes: &[u8]) -> Value {
    let size = partial_size(ty);
    let mut acc = lang::value::identity(op, ty);
    for chunk in bytes.chunks_exact(size) {
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(chunk);
        let bits = u64::from_le_bytes(w);
        let v = match ty {
            Scalar::Bool => Value::Bool(bits as u32 != 0),
            Scalar::U8 => Value::U8(bits as u8),
            Scalar::I32 => Value::I32(bits as u32 as i32),
            Scalar::U32 => Value::U32(bits as u32),
            Scalar::I64 => Value::I64(bits as i64),
            Scalar::F32 => Value::F32(f32::from_bits(bits as u32)),
            Scalar::F64 => Value::F64(f64::from_bits(bits)),
        };
        acc = lang::value::combine(op, acc, v);
    }
    acc
}

/// One launch: argument bytes (push constants or the argument buffer) and
/// the dispatch size. `groups[0] == 0` means there is nothing to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// On the stack up to the push-constant size devices guarantee: a
    /// launch allocates little (one per launch was 2.5% of a stream of tiny
    /// launches' host time on an H100's host).
    pub bytes: SmallVec<[u8; 128]>,
    pub groups: [u32; 3],
    pub total: u64,
}

/// The fault buffer of a module whose [`crate::Spec::uses_fault_buffer`]:
/// a storage buffer of [`fault::WORDS`] `u32`s, zero when nothing happened.
/// The first invocation to fault claims word 0 with a compare-and-swap and
/// fills the rest; later faults leave the record alone.
pub mod fault {
    /// Words in the record (the buffer is `4 * WORDS` bytes).
    pub const WORDS: usize = 12;
    /// Word 0: what happened.
    pub const BOUNDS: u32 = 1;
    /// The leading index lies outside the rows the device holds (a section).
    pub const SECTION: u32 = 2;
    pub const DIV_ZERO: u32 = 3;
    pub const LOOP_BUDGET: u32 = 4;
    /// A loop ended without taking its exit: the driver cut it short.
    pub const LOOP_CUT: u32 = 5;
    /// Word 1: the axis (bounds), or 0.
    pub const AXIS: usize = 1;
    /// Words 2-3: the index value (`i64`, low word first).
    pub const INDEX: usize = 2;
    /// Words 4-5: the extent (bounds), the first present row (section), or
    /// the budget (loops); `u64`, low word first.
    pub const A: usize = 4;
    /// Words 6-7: the present rows (section); `u64`.
    pub const B: usize = 6;
    /// Words 8-9: start and end of the span of the index, divisor or loop.
    pub const SPAN: usize = 8;
    /// Words 10-11: start and end of the span of the whole access.
    pub const WHOLE: usize = 10;

    /// A record read back from the buffer, decoded.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Record {
        pub code: u32,
        pub axis: u32,
        pub index: i64,
        pub a: u64,
        pub b: u64,
        pub span: lang::Span,
        pub whole: lang::Span,
    }

    impl Record {
        /// Decode the buffer's words; `None` when nothing was recorded.
        pub fn decode(w: &[u32; WORDS]) -> Option<Record> {
            if w[0] == 0 {
                return None;
            }
            let pair = |i: usize| u64::from(w[i]) | (u64::from(w[i + 1]) << 32);
            let span = |i: usize| lang::Span::new(w[i] as usize, w[i + 1] as usize);
            Some(Record {
                code: w[0],
                axis: w[AXIS],
                index: pair(INDEX) as i64,
                a: pair(A),
                b: pair(B),
                span: span(SPAN),
                whole: span(WHOLE),
            })
        }
    }
}
