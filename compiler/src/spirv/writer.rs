//! The writer's state: one module being written for one kernel and its
//! plan. Every part of the writer (one file each) adds methods to
//! [`Writer`]; what they keep between calls is declared here, so no part
//! needs another's types.

use super::types::{Module, Ty};
use super::{exact32, f64math, frem};
use crate::abi::{ArgLayout, IndexWidth};
use crate::kir::{ArrayH, Kernel, Shape, Stmt};
use crate::plan::{Plan, Teams};
use crate::privatise::Fold;
use crate::Spec;
use lang::{Diag, Span};
use rspirv::spirv::{BuiltIn, StorageClass, Word};
use std::collections::HashMap;

pub(super) fn ice(span: Span, what: &str) -> Diag {
    Diag::error(
        "accl::compile::internal",
        format!("internal compiler error in the SPIR-V writer: {what}"),
        span,
        "while compiling this",
    )
}

/// Branch targets of the innermost loop: (merge, continue).
/// A loop's merge and continue targets, and (watchdog on) its `exited` flag.
pub(super) type LoopTargets = (Word, Word, Option<Word>);

pub(super) struct Writer<'k> {
    pub(super) k: &'k Kernel,
    pub(super) plan: &'k Plan,
    pub(super) spec: &'k Spec,
    pub(super) layout: ArgLayout,
    pub(super) m: Module,
    pub(super) idx: Ty,
    /// Each array's buffer variable; `None` for one reached by address
    /// ([`address`]).
    pub(super) buffers: Vec<Option<Word>>,
    /// Pointers to elements reached by address, and their alignment.
    pub(super) aligned: HashMap<Word, u32>,
    /// Each array's texel buffer variable, for one read through texels
    /// ([`texels`]).
    pub(super) texels: Vec<Option<Word>>,
    /// The ids standing for texel arrays' elements: array, element index.
    pub(super) texel_elems: HashMap<Word, (usize, Word)>,
    /// Texel image types made: element view, image, fetch result.
    pub(super) texel_types: Vec<(Ty, Word, Word)>,
    pub(super) args_var: Word,
    pub(super) args_class: StorageClass,
    pub(super) gid: Word,
    pub(super) nwg: Word,
    pub(super) wg_size: Word,
    pub(super) func_ids: Vec<Word>,
    /// Element type of each array's buffer ([`storage_views`]).
    pub(super) views: Vec<Ty>,
    /// Partials buffers, per `kernel.reductions`.
    pub(super) partials: Vec<Word>,
    /// Built-in inputs made on first use: LocalInvocationId, WorkgroupId.
    pub(super) lid_var: Option<Word>,
    pub(super) wgid_var: Option<Word>,
    /// Workgroup scratch arrays (`wg_size` elements) by element type.
    pub(super) scratch: Vec<(Ty, Word)>,
    /// Scalar built-in inputs made on first use ([`teams`]).
    pub(super) scalar_builtins: Vec<(BuiltIn, Word)>,
    /// A gang's lanes in one subgroup ([`teams`]).
    pub(super) teams: Option<Teams>,
    /// Element stores held back until every copy of a coarsened trip has
    /// loaded ([`coarsening`]): pointer and value.
    pub(super) deferred: Option<Vec<(Word, Word)>>,
    /// Whether gang-redundant stores and `loop vector` need barriers.
    pub(super) gang_barriers: bool,
    /// A tiled loop's tiles along the inner level and the outer level's
    /// trip count ([`tiles`]).
    pub(super) tile_dims: Option<(Word, Word)>,
    /// The `cache` statements honoured, the sections in workgroup memory
    /// for this gang iteration, and their variables ([`cache`]).
    pub(super) top_caches: Vec<*const Stmt>,
    pub(super) cached: Vec<Cached>,
    pub(super) cache_vars: Vec<(ArrayH, u32, Word)>,
    /// Globals made after the module scope (for the interface list).
    pub(super) late_globals: Vec<(Word, StorageClass)>,
    /// The gang number (index type) inside a gang loop.
    pub(super) gang_index: Option<Word>,
    /// The fault buffer and the loop counter ([`checks`]), when bound.
    pub(super) fault_var: Option<Word>,
    pub(super) count_var: Option<Word>,
    /// The next loop emitted has a small constant trip bound
    /// ([`crate::bounded`]): the watchdog does not count it.
    pub(super) bounded_next: bool,
    pub(super) cut_vars: Option<(Word, Word)>,
    /// The kernel's outermost loops are guarded against llvmpipe's hidden
    /// loop cap ([`checks`]).
    pub(super) cut_guard: bool,
    /// Arrays whose atomics go to a workgroup copy ([`private`]), by index.
    pub(super) private: Vec<Option<Private>>,
    /// Private arrays' copies in workgroup memory ([`copies`]), by index.
    pub(super) copies: Vec<Option<WgCopy>>,
    /// The f64 transcendental functions called ([`f64math`]).
    pub(super) f64fns: f64math::Fns,
    /// The float remainder functions called ([`frem`]).
    pub(super) rem_fns: frem::Fns,
    /// The exact f32 division and root functions called ([`exact32`]).
    pub(super) exact32: exact32::Fns,
    // Per function being written.
    /// Stopping before the driver's loop cap and resuming
    /// ([`super::resume`]), for a plan that resumes.
    pub(super) resume: Option<Resume>,
    /// Writing a loop's `continuing` block (no resume point skips it).
    pub(super) in_continuing: bool,
    pub(super) locals: Vec<Word>,
    pub(super) loops: Vec<LoopTargets>,
    pub(super) cur_label: Word,
    pub(super) terminated: bool,
}

pub(super) fn spv<T>(r: Result<T, rspirv::dr::Error>) -> T {
    r.expect(
        "rspirv builder misuse (a writer bug): a block is always open where instructions are added",
    )
}

impl WgCopy {
    /// Where the copy's array lives.
    pub(super) fn class(&self) -> rspirv::spirv::StorageClass {
        if self.local {
            rspirv::spirv::StorageClass::Function
        } else {
            rspirv::spirv::StorageClass::Workgroup
        }
    }
}

impl<'k> Writer<'k> {
    pub(super) fn new(k: &'k Kernel, plan: &'k Plan) -> Writer<'k> {
        let spec = &plan.spec;
        let idx = match spec.index_width {
            IndexWidth::U32 => Ty::U32,
            IndexWidth::U64 => Ty::U64,
        };
        Writer {
            k,
            plan,
            spec,
            layout: plan.layout.clone(),
            m: Module::new(spec.spirv_version),
            idx,
            buffers: Vec::new(),
            aligned: HashMap::new(),
            texels: Vec::new(),
            texel_elems: HashMap::new(),
            texel_types: Vec::new(),
            args_var: 0,
            args_class: StorageClass::PushConstant,
            gid: 0,
            nwg: 0,
            wg_size: 0,
            func_ids: Vec::new(),
            views: Vec::new(),
            partials: Vec::new(),
            lid_var: None,
            wgid_var: None,
            scratch: Vec::new(),
            scalar_builtins: Vec::new(),
            teams: plan.teams,
            deferred: None,
            gang_barriers: k.shape != Shape::Gang || k.facts.shares_memory,
            tile_dims: None,
            top_caches: plan
                .cached
                .iter()
                .map(|&i| &k.entry.body[i] as *const Stmt)
                .collect(),
            cached: Vec::new(),
            cache_vars: Vec::new(),
            late_globals: Vec::new(),
            gang_index: None,
            fault_var: None,
            count_var: None,
            bounded_next: false,
            cut_vars: None,
            cut_guard: false,
            private: vec![None; k.arrays.len()],
            copies: vec![None; k.arrays.len()],
            f64fns: f64math::Fns::default(),
            rem_fns: frem::Fns::default(),
            exact32: exact32::Fns::default(),
            resume: None,
            in_continuing: false,
            locals: Vec::new(),
            loops: Vec::new(),
            cur_label: 0,
            terminated: false,
        }
    }
}

/// The writer's resume state ([`super::resume`]): the buffer, this
/// invocation's point to resume at (0: none; private), its turns at points
/// in this dispatch, its slot's first word, and the next point to number as
/// loops are written.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume {
    pub buf: Word,
    pub point: Word,
    pub turns: Word,
    pub slot: Word,
    /// The kernel loop's counter (a function variable of the entry).
    pub it: Word,
    pub next: u32,
}

/// A section in workgroup memory for the current gang iteration.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cached {
    pub array: ArrayH,
    pub var: Word,
    /// The section's first element, as a buffer index (index type).
    pub lo: Word,
    pub count: u32,
}

/// A privatised array, once the entry point has set it up.
#[derive(Debug, Clone, Copy)]
pub(super) struct Private {
    pub fold: Fold,
    /// The workgroup copy (an array of [`crate::privatise::CAP`] elements).
    pub var: Word,
    /// The bound section's length in elements (`u32`), and whether the
    /// copy is in use (`len <= CAP`; uniform).
    pub len: Word,
    pub on: Word,
}

/// A private array's copies in workgroup memory ([`copies`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct WgCopy {
    /// The workgroup array (`cap` elements of the buffer's view type).
    pub var: Word,
    /// The workgroup's copies fit (`bool`, uniform): else the hidden array.
    pub on: Word,
    /// Elements of one copy, and this lane's first (index type).
    pub size: Word,
    pub base: Word,
    pub cap: u32,
    pub slots: crate::kir::CopySlots,
    pub first: bool,
    /// A lane's own Function-storage array of exactly `cap` elements (the
    /// section's, [`crate::Spec::local_copies`]): `on` is true and every
    /// access goes to it, untested.
    pub local: bool,
}
