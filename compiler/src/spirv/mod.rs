//! The SPIR-V writer: a [`Validated`] kernel and a [`Spec`] to words.
//!
//! Shape of a module: one GLCompute entry point `main` running the grid-stride
//! loop of [`crate::abi`], one SPIR-V function per KIR device function (called
//! with `OpFunctionCall`, never inlined: a function used by several kernels of
//! a module, or several times, is emitted once), every KIR local an
//! `OpVariable` of class Function declared in its function's first block (the
//! driver's mem2reg makes them registers), expressions evaluated as trees at
//! the statement that uses them (short-circuit `&&`/`||` with a selection and
//! an `OpPhi`), and structured control flow throughout (`OpSelectionMerge`,
//! `OpLoopMerge` with the KIR loop's `continuing` as the continue target).
//!
//! Semantics matched to the host (`lang::value`), explicitly:
//! * integers wrap (`OpIAdd`/`OpISub`/`OpIMul` do; `u8` lives in 32 bits and
//!   is masked with `0xff` after every operation that can leave 0..=255);
//! * shift counts are masked to the bit width (`x << (n & 31)`);
//! * `i32::MIN / -1` is `i32::MIN` and `i32::MIN % -1` is 0 (SPIR-V leaves both
//!   undefined; the divisor is replaced and the result selected);
//! * **integer division or remainder by zero gives 0 on the device** (the host
//!   raises an error; a kernel cannot, until bounds-check mode reports it);
//! * float → int casts saturate and map NaN to 0 (Rust `as`), with explicit
//!   range tests before `OpConvertFToS/U` (whose out-of-range result is
//!   undefined); `OpIsNan` is used rather than `x != x` so a fast-math
//!   optimiser cannot fold it;
//! * `min`/`max` on floats are `NMin`/`NMax` (a NaN operand loses, as in Rust's
//!   `f64::min`); `clamp` is two ordered selects (a NaN `x` stays NaN, as in
//!   Rust); `round` rounds half away from zero (GLSL's `Round` does not say
//!   which way .5 goes), built from `Trunc`.
//!
//! Reductions, regions and atomics: the entry point runs one of the loops of
//! [`crate::abi`] by [`Shape`]; reductions fold per workgroup in a fixed
//! tree in a Workgroup-storage scratch array of `wg_size` elements (one per
//! register type; bools as `u32`), with `OpControlBarrier(Workgroup,
//! Workgroup, AcquireRelease | UniformMemory | WorkgroupMemory)` between the
//! steps, and invocation 0 stores the workgroup's partial; `loop vector` is a
//! block-stride loop between two such barriers. Atomics use `Device` scope
//! and relaxed semantics: `OpAtomicIAdd/ISub/SMax/UMax/SMin/UMin/And/Or/Xor/
//! Exchange` on integers, `OpAtomicFAddEXT` (`SPV_EXT_shader_atomic_float_add`)
//! for float add/sub where [`crate::Features`] has it, and otherwise an
//! `OpAtomicCompareExchange` loop on the element's bits; a float array with
//! such an atomic is declared as a `u32`/`u64` buffer and bitcast on plain
//! loads and stores.
//!
//! Where the device differs (documented, not hidden):
//! * transcendentals (`exp exp2 log log2 sin cos tan asin acos atan sinh
//!   cosh tanh pow atan2`): on `f32` they are GLSL.std.450's, whose precision
//!   is the Vulkan spec's (a few ULP, `pow` and `atan2` coarser; `pow(x, y)`
//!   is undefined for `x < 0`); GLSL.std.450 has no 64-bit forms, so on `f64`
//!   they are functions of the writer's own ([`f64math`]: fdlibm's
//!   algorithms with the host's special cases, `sin cos tan` reduced exactly
//!   up to `f64::MAX`), about 1 ulp from the exact result and within 2 ulp of
//!   the host's, provided the driver rounds f64 `+ - * / sqrt` correctly and
//!   keeps subnormals (lavapipe does);
//! * `fma` may or may not be fused (Vulkan lets `Fma` round twice);
//! * float `%` is `OpFRem` (precision is the driver's; exact on lavapipe for
//!   the tested values); denormals may be flushed and NaN payloads are not kept
//!   (no `SignedZeroInfNanPreserve` execution mode is requested).

mod cache;
mod checks;
mod coarsen;
mod f64math;
mod jam;
mod private;
mod teams;
mod tiles;
pub mod types;

use crate::abi::{ArgLayout, ArgLocation, FieldKind, FieldTy, IndexWidth};
use crate::kir::*;
use crate::validate::Validated;
use crate::Spec;
pub use coarsen::coarsening;
use lang::hir::{BinOp, UnOp};
use lang::{Diag, Scalar, Span, Value};
use rspirv::binary::Assemble;
use rspirv::dr::Operand;
use rspirv::spirv::{
    AddressingModel, BuiltIn, Decoration, ExecutionMode, ExecutionModel, FunctionControl,
    GlslStd450Op as GLOp, LoopControl, MemoryModel, SelectionControl, StorageClass, Word,
};
pub use teams::{teams, Teams};
use types::{Module, Ty};

/// Whether some array of `k` qualifies for a workgroup copy of its atomics
/// (`private`), outside check mode. Lowering records it in the kernel.
pub fn private_atomics(k: &Kernel) -> bool {
    private::candidates(k, false).iter().any(Option::is_some)
}

/// Whether the module of `k` under `spec` keeps workgroup copies of arrays
/// updated by atomics: its launch should then give each workgroup many
/// iterations, so the copy's setup and fold are paid rarely. (No walk of the
/// kernel: this is on the launch path.)
pub fn privatises_atomics(k: &Kernel, spec: &Spec) -> bool {
    k.private_atomics && !spec.checks
}

/// Write a validated kernel as a SPIR-V module for `spec`.
pub fn write(kernel: Validated<'_>, spec: &Spec) -> Result<Vec<u32>, Diag> {
    let k = kernel.kernel();
    let mut needs = k.features;
    if spec.index_width == IndexWidth::U64 {
        needs.int64 = true;
    }
    let views = storage_views(k, spec);
    if views
        .iter()
        .zip(k.arrays.iter())
        .any(|(v, (_, a))| *v == Ty::U64 && a.elem == Scalar::F64)
    {
        // f64 atomics by compare-and-swap on the bits.
        needs.int64_atomics = true;
    }
    let missing = needs.missing(spec.features);
    if !missing.is_empty() {
        return Err(Diag::error(
            "accl::compile::missing_feature",
            format!(
                "this kernel needs the device feature{} {}",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            ),
            k.span,
            "this kernel",
        )
        .with_help(help_for(&missing)));
    }
    let layout = ArgLayout::new(k, spec.index_width, spec.max_push_constants);
    let mut w = Writer::new(k, spec, layout);
    w.views = views;
    w.module_scope();
    w.functions()?;
    w.entry()?;
    w.f64_functions();
    w.m.finish_header();
    Ok(w.m.b.module().assemble())
}

/// Does the device do this float atomic natively (else: compare-and-swap)?
fn native_float_atomic(op: AtomicKind, elem: Scalar, spec: &Spec) -> bool {
    matches!(op, AtomicKind::Add | AtomicKind::Sub)
        && match elem {
            Scalar::F32 => spec.features.float32_atomic_add,
            Scalar::F64 => spec.features.float64_atomic_add,
            _ => false,
        }
}

/// The element type each array's buffer is declared with: its storage type,
/// except a float array with a compare-and-swap atomic, which is viewed as
/// `u32`/`u64` bits (compare-exchange is integer-only); its plain loads and
/// stores bitcast.
fn storage_views(k: &Kernel, spec: &Spec) -> Vec<Ty> {
    let mut views: Vec<Ty> = k.arrays.iter().map(|(_, a)| Ty::storage(a.elem)).collect();
    for f in std::iter::once(&k.entry).chain(k.functions.iter().map(|(_, f)| f)) {
        for (_, e) in f.exprs.iter() {
            if let Expr::Atomic { array, op, .. } = e {
                let elem = k.arrays[*array].elem;
                if elem.is_float() && !native_float_atomic(*op, elem, spec) {
                    views[array.index()] = if elem == Scalar::F64 {
                        Ty::U64
                    } else {
                        Ty::U32
                    };
                }
            }
        }
    }
    views
}

/// How a reduction's partial travels (u8/bool widened to u32).
fn partial_ty(s: Scalar) -> Ty {
    match s {
        Scalar::Bool | Scalar::U8 => Ty::U32,
        s => Ty::reg(s),
    }
}

fn help_for(missing: &[&str]) -> String {
    let mut h = Vec::new();
    for m in missing {
        h.push(match *m {
            "shaderFloat64" => "use `f32` instead of `f64` in this kernel, or run it on the host with `if(false)`",
            "shaderInt64" => "use `i32` instead of `i64` in this kernel (arrays under 2^31 elements index in 32 bits)",
            "shaderBufferInt64Atomics" => "use 32-bit elements for atomics on this device (i64 atomics and f64 atomics without a native add need 64-bit integer atomics)",
            _ => "store `u32` instead of `u8`/`bool` arrays, or run it on the host with `if(false)`",
        });
    }
    h.join("; ")
}

fn ice(span: Span, what: &str) -> Diag {
    Diag::error(
        "accl::compile::internal",
        format!("internal compiler error in the SPIR-V writer: {what}"),
        span,
        "while compiling this",
    )
}

/// Branch targets of the innermost loop: (merge, continue).
/// A loop's merge and continue targets, and (watchdog on) its `exited` flag.
type LoopTargets = (Word, Word, Option<Word>);

struct Writer<'k> {
    k: &'k Kernel,
    spec: &'k Spec,
    layout: ArgLayout,
    m: Module,
    idx: Ty,
    buffers: Vec<Word>,
    args_var: Word,
    args_class: StorageClass,
    gid: Word,
    nwg: Word,
    wg_size: Word,
    func_ids: Vec<Word>,
    /// Element type of each array's buffer ([`storage_views`]).
    views: Vec<Ty>,
    /// Partials buffers, per `kernel.reductions`.
    partials: Vec<Word>,
    /// Built-in inputs made on first use: LocalInvocationId, WorkgroupId.
    lid_var: Option<Word>,
    wgid_var: Option<Word>,
    /// Workgroup scratch arrays (`wg_size` elements) by element type.
    scratch: Vec<(Ty, Word)>,
    /// Scalar built-in inputs made on first use ([`teams`]).
    scalar_builtins: Vec<(BuiltIn, Word)>,
    /// A gang's lanes in one subgroup ([`teams`]).
    teams: Option<Teams>,
    /// Element stores held back until every copy of a coarsened trip has
    /// loaded ([`coarsening`]): pointer and value.
    deferred: Option<Vec<(Word, Word)>>,
    /// Whether gang-redundant stores and `loop vector` need barriers.
    gang_barriers: bool,
    /// A tiled loop's tiles along the inner level and the outer level's
    /// trip count ([`tiles`]).
    tile_dims: Option<(Word, Word)>,
    /// The `cache` statements honoured, the sections in workgroup memory
    /// for this gang iteration, and their variables ([`cache`]).
    top_caches: Vec<*const Stmt>,
    cached: Vec<cache::Cached>,
    cache_vars: Vec<(ArrayH, u32, Word)>,
    /// Globals made after the module scope (for the interface list).
    late_globals: Vec<(Word, StorageClass)>,
    /// The gang number (index type) inside a gang loop.
    gang_index: Option<Word>,
    /// The fault buffer and the loop counter ([`checks`]), when bound.
    fault_var: Option<Word>,
    count_var: Option<Word>,
    cut_vars: Option<(Word, Word)>,
    /// Arrays whose atomics go to a workgroup copy ([`private`]), by index.
    private: Vec<Option<private::Private>>,
    /// The f64 transcendental functions called ([`f64math`]).
    f64fns: f64math::Fns,
    // Per function being written.
    locals: Vec<Word>,
    loops: Vec<LoopTargets>,
    cur_label: Word,
    terminated: bool,
}

fn spv<T>(r: Result<T, rspirv::dr::Error>) -> T {
    r.expect(
        "rspirv builder misuse (a writer bug): a block is always open where instructions are added",
    )
}

impl<'k> Writer<'k> {
    fn new(k: &'k Kernel, spec: &'k Spec, layout: ArgLayout) -> Writer<'k> {
        let idx = match spec.index_width {
            IndexWidth::U32 => Ty::U32,
            IndexWidth::U64 => Ty::U64,
        };
        Writer {
            k,
            spec,
            layout,
            m: Module::new(spec.spirv_version),
            idx,
            buffers: Vec::new(),
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
            teams: teams(k, spec),
            deferred: None,
            gang_barriers: k.shape != Shape::Gang || teams::gang_shares_memory(k),
            tile_dims: None,
            top_caches: cache::honoured(k),
            cached: Vec::new(),
            cache_vars: Vec::new(),
            late_globals: Vec::new(),
            gang_index: None,
            fault_var: None,
            count_var: None,
            cut_vars: None,
            private: vec![None; k.arrays.len()],
            f64fns: f64math::Fns::default(),
            locals: Vec::new(),
            loops: Vec::new(),
            cur_label: 0,
            terminated: false,
        }
    }

    fn written_arrays(&self) -> Vec<bool> {
        fn walk(b: &Block, w: &mut [bool]) {
            for s in b {
                match &s.kind {
                    StmtKind::StoreElem { array, .. } => w[array.index()] = true,
                    StmtKind::If { then, els, .. } => {
                        walk(then, w);
                        walk(els, w);
                    }
                    StmtKind::Loop { body, continuing } => {
                        walk(body, w);
                        walk(continuing, w);
                    }
                    StmtKind::VectorLoop(v) => walk(&v.body, w),
                    _ => {}
                }
            }
        }
        let mut w = vec![false; self.k.arrays.len()];
        walk(&self.k.entry.body, &mut w);
        for f in std::iter::once(&self.k.entry).chain(self.k.functions.iter().map(|(_, f)| f)) {
            walk(&f.body, &mut w);
            for (_, e) in f.exprs.iter() {
                if let Expr::Atomic { array, .. } = e {
                    w[array.index()] = true;
                }
            }
        }
        w
    }

    /// Memory model, built-ins, buffers, the argument block, the work-group size.
    fn module_scope(&mut self) {
        let m = &mut self.m;
        m.b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let uvec3 = m.ty(Ty::UVec3);
        let pin = m.ptr(StorageClass::Input, uvec3);
        self.gid = m.b.variable(pin, None, StorageClass::Input, None);
        m.b.decorate(
            self.gid,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
        );
        m.b.name(self.gid, "gl_GlobalInvocationID");
        self.nwg = m.b.variable(pin, None, StorageClass::Input, None);
        m.b.decorate(
            self.nwg,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::NumWorkgroups)],
        );
        m.b.name(self.nwg, "gl_NumWorkGroups");

        let written = self.written_arrays();
        for (i, (_, a)) in self.k.arrays.iter().enumerate() {
            let st = self.m.buffer_struct(self.views[i]);
            let p = self.m.ptr(StorageClass::StorageBuffer, st);
            let v = self
                .m
                .b
                .variable(p, None, StorageClass::StorageBuffer, None);
            let b = &mut self.m.b;
            b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
            b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(i as u32)]);
            if !written[i] {
                b.decorate(v, Decoration::NonWritable, []);
            }
            b.name(v, a.name.clone());
            self.buffers.push(v);
        }
        let a_count = self.k.arrays.len() as u32;
        for (r, red) in self.k.reductions.iter().enumerate() {
            let st = self.m.buffer_struct(partial_ty(red.ty));
            let p = self.m.ptr(StorageClass::StorageBuffer, st);
            let v = self
                .m
                .b
                .variable(p, None, StorageClass::StorageBuffer, None);
            let b = &mut self.m.b;
            b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
            b.decorate(
                v,
                Decoration::Binding,
                [Operand::LiteralBit32(a_count + r as u32)],
            );
            b.name(v, format!("{}_partials", red.name));
            self.partials.push(v);
        }
        self.declare_fault_buffer();

        // The argument block.
        let member_tys: Vec<Word> = self
            .layout
            .fields
            .clone()
            .iter()
            .map(|f| match f.ty {
                FieldTy::Index => self.m.ty(self.idx),
                FieldTy::Scalar(s) => self.m.ty(arg_ty(s)),
            })
            .collect();
        let st = self.m.b.type_struct(member_tys);
        self.m.b.decorate(st, Decoration::Block, []);
        self.m.b.name(st, "Args");
        for (i, f) in self.layout.fields.iter().enumerate() {
            let name = self.field_name(f.kind);
            let b = &mut self.m.b;
            b.member_decorate(
                st,
                i as u32,
                Decoration::Offset,
                [Operand::LiteralBit32(f.offset)],
            );
            b.member_name(st, i as u32, name);
        }
        self.args_class = match self.layout.location {
            ArgLocation::PushConstants => StorageClass::PushConstant,
            ArgLocation::Buffer { .. } => StorageClass::StorageBuffer,
        };
        let p = self.m.ptr(self.args_class, st);
        self.args_var = self.m.b.variable(p, None, self.args_class, None);
        if let ArgLocation::Buffer { binding } = self.layout.location {
            let b = &mut self.m.b;
            b.decorate(
                self.args_var,
                Decoration::DescriptorSet,
                [Operand::LiteralBit32(0)],
            );
            b.decorate(
                self.args_var,
                Decoration::Binding,
                [Operand::LiteralBit32(binding)],
            );
            b.decorate(self.args_var, Decoration::NonWritable, []);
        }
        self.m.b.name(self.args_var, "args");

        // Work-group size: specialisation constant 0, the x of WorkgroupSize.
        let u32t = self.m.ty(Ty::U32);
        let default = match (self.teams, self.k.tile) {
            (Some(t), _) => t.workgroup_size(),
            (None, Some((a, b))) => a * b,
            (None, None) => self.k.vector_length.unwrap_or(self.spec.workgroup_size),
        }
        .max(1);
        self.wg_size = self.m.b.spec_constant_bit32(u32t, default);
        self.m
            .b
            .decorate(self.wg_size, Decoration::SpecId, [Operand::LiteralBit32(0)]);
        self.m.b.name(self.wg_size, "wg_size");
        let one = self.m.u32c(1);
        let uvec3 = self.m.ty(Ty::UVec3);
        let wg = self
            .m
            .b
            .spec_constant_composite(uvec3, [self.wg_size, one, one]);
        self.m.b.decorate(
            wg,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::WorkgroupSize)],
        );
    }

    fn field_name(&self, k: FieldKind) -> String {
        match k {
            FieldKind::Total => "total".into(),
            FieldKind::Count(l) => format!("count{l}"),
            FieldKind::Lo(l) => format!("lo{l}"),
            FieldKind::Base(a) => {
                format!("{}_base", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Dim(a, d) => {
                format!("{}_dim{d}", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Param(p) => self.k.params[p].name.clone(),
        }
    }

    // ---- functions -----------------------------------------------------------

    fn functions(&mut self) -> Result<(), Diag> {
        self.func_ids = (0..self.k.functions.len()).map(|_| self.m.b.id()).collect();
        for (h, f) in self.k.functions.iter() {
            let ret = self.m.ty(f.ret.map_or(Ty::Void, Ty::reg));
            let params: Vec<Word> = f
                .args
                .iter()
                .map(|&a| self.m.ty(Ty::reg(f.locals[a].ty)))
                .collect();
            let fnty = self.m.fn_type(ret, params.clone());
            let id = self.func_ids[h.index()];
            spv(self
                .m
                .b
                .begin_function(ret, Some(id), FunctionControl::NONE, fnty));
            self.m.b.name(id, f.name.clone());
            let param_ids: Vec<Word> = params
                .iter()
                .map(|&t| spv(self.m.b.function_parameter(t)))
                .collect();
            self.begin_body(f);
            for (&a, &p) in f.args.iter().zip(&param_ids) {
                spv(self.m.b.store(self.locals[a.index()], p, None, []));
            }
            self.block(f, &f.body)?;
            if !self.terminated {
                match f.ret {
                    None => spv(self.m.b.ret()),
                    Some(t) => {
                        // Falling off the end of a valued function (the checker
                        // rules it out): a defined zero rather than undef.
                        let z = self.constant(Value::zero(t));
                        spv(self.m.b.ret_value(z))
                    }
                }
            }
            spv(self.m.b.end_function());
        }
        Ok(())
    }

    /// Open the first block and declare every local of `f` in it.
    fn begin_body(&mut self, f: &Function) {
        self.cur_label = spv(self.m.b.begin_block(None));
        self.terminated = false;
        self.loops.clear();
        self.locals = f
            .locals
            .iter()
            .map(|(_, l)| {
                let t = self.m.ty(Ty::reg(l.ty));
                let p = self.m.ptr(StorageClass::Function, t);
                let v = self.m.b.variable(p, None, StorageClass::Function, None);
                self.m.b.name(v, l.name.clone());
                v
            })
            .collect();
    }

    fn load_arg(&mut self, kind: FieldKind) -> Result<Word, Diag> {
        let Some(i) = self.layout.member(kind) else {
            return Err(ice(self.k.span, "argument block field missing"));
        };
        let f = &self.layout.fields[i as usize];
        let t = match f.ty {
            FieldTy::Index => self.idx,
            FieldTy::Scalar(s) => arg_ty(s),
        };
        let tw = self.m.ty(t);
        let p = self.m.ptr(self.args_class, tw);
        let ci = self.m.u32c(i);
        let ptr = spv(self.m.b.access_chain(p, None, self.args_var, [ci]));
        Ok(spv(self.m.b.load(tw, None, ptr, None, [])))
    }

    fn entry(&mut self) -> Result<(), Diag> {
        let k = self.k;
        let void = self.m.ty(Ty::Void);
        let fnty = self.m.fn_type(void, vec![]);
        let main = spv(self
            .m
            .b
            .begin_function(void, None, FunctionControl::NONE, fnty));
        self.m.b.name(main, "main");
        self.begin_body(&k.entry);
        let idx_w = self.m.ty(self.idx);
        let pidx = self.m.ptr(StorageClass::Function, idx_w);
        let it = self.m.b.variable(pidx, None, StorageClass::Function, None);
        self.m.b.name(it, "it");
        let gangs = matches!(k.shape, Shape::Gang | Shape::Region);

        let uvec3 = self.m.ty(Ty::UVec3);
        let u32t = self.m.ty(Ty::U32);
        let (start, stride, total) = match k.shape {
            Shape::Flat if k.tile.is_some() => self.tiles_begin(it)?,
            Shape::Flat => {
                let g = spv(self.m.b.load(uvec3, None, self.gid, None, []));
                let gx = spv(self.m.b.composite_extract(u32t, None, g, [0]));
                let n = spv(self.m.b.load(uvec3, None, self.nwg, None, []));
                let nx = spv(self.m.b.composite_extract(u32t, None, n, [0]));
                let stride32 = spv(self.m.b.i_mul(u32t, None, nx, self.wg_size));
                let start = self.int_cast(gx, Ty::U32, self.idx);
                let stride = self.int_cast(stride32, Ty::U32, self.idx);
                spv(self.m.b.store(it, start, None, []));
                let total = self.load_arg(FieldKind::Total)?;
                (start, stride, total)
            }
            Shape::Seq => {
                // Invocation 0 of group 0 runs everything, in order.
                let total = self.load_arg(FieldKind::Total)?;
                let g = spv(self.m.b.load(uvec3, None, self.gid, None, []));
                let gx = spv(self.m.b.composite_extract(u32t, None, g, [0]));
                let z = self.m.u32c(0);
                let bool_t = self.m.ty(Ty::Bool);
                let first = spv(self.m.b.i_equal(bool_t, None, gx, z));
                let zi = self.int_const(self.idx, 0);
                let one = self.int_const(self.idx, 1);
                let start = spv(self.m.b.select(idx_w, None, first, zi, total));
                (start, one, total)
            }
            Shape::Gang | Shape::Region => {
                let total = self.load_arg(FieldKind::Total)?;
                let n = spv(self.m.b.load(uvec3, None, self.nwg, None, []));
                let nx = spv(self.m.b.composite_extract(u32t, None, n, [0]));
                let g = self.group_id();
                match self.teams {
                    // Team `t` of group `g` takes gang iterations
                    // `g * T + t, + groups * T, ..`.
                    Some(t) => {
                        let per = self.m.u32c(t.per_group);
                        let team = self.team_index(t);
                        let base = spv(self.m.b.i_mul(u32t, None, g, per));
                        let first = spv(self.m.b.i_add(u32t, None, base, team));
                        let stride = spv(self.m.b.i_mul(u32t, None, nx, per));
                        (
                            self.int_cast(first, Ty::U32, self.idx),
                            self.int_cast(stride, Ty::U32, self.idx),
                            total,
                        )
                    }
                    None => (
                        self.int_cast(g, Ty::U32, self.idx),
                        self.int_cast(nx, Ty::U32, self.idx),
                        total,
                    ),
                }
            }
        };
        if k.shape != Shape::Flat {
            spv(self.m.b.store(it, start, None, []));
        }
        self.private_begin();

        // Reduction copies start at the identity; a region folds each gang's
        // copy into `acc` (one per workgroup).
        let mut accs = Vec::new();
        for (r, red) in k.reductions.iter().enumerate() {
            let id = self.constant(lang::value::identity(red.op, red.ty));
            let l = self.locals[k.reduction_locals[r].index()];
            spv(self.m.b.store(l, id, None, []));
            if k.shape == Shape::Region {
                let acc = self.fvar(Ty::reg(red.ty), "acc");
                spv(self.m.b.store(acc, id, None, []));
                accs.push(acc);
            }
        }

        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let bool_t = self.m.ty(Ty::Bool);
        let cur = spv(self.m.b.load(idx_w, None, it, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, cur, total));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch_conditional(more, body, merge, []));

        self.label(body);
        // Split `it` over the levels, innermost fastest.
        let rest = spv(self.m.b.load(idx_w, None, it, None, []));
        if gangs {
            self.gang_index = Some(rest);
        }
        if k.shape == Shape::Region {
            for (r, red) in k.reductions.iter().enumerate() {
                let id = self.constant(lang::value::identity(red.op, red.ty));
                let l = self.locals[k.reduction_locals[r].index()];
                spv(self.m.b.store(l, id, None, []));
            }
        }
        let mut los = Vec::with_capacity(k.levels.len());
        let mut counts = Vec::with_capacity(k.levels.len());
        for (l, level) in k.levels.iter().enumerate() {
            let lo = self.load_arg(FieldKind::Lo(l))?;
            los.push(self.arg_value(lo, level.ty));
            counts.push(if l == 0 {
                0
            } else {
                self.load_arg(FieldKind::Count(l))?
            });
        }
        let vars: Vec<_> = k.levels.iter().map(|l| (l.var, l.ty)).collect();
        let coarse = coarsening(k, self.spec);
        self.loops.push((merge, cont, None));
        if let (Some(t), Shape::Flat) = (k.tile, k.shape) {
            self.tile_iteration(t, rest, &vars, &los, &counts)?;
        } else if coarse > 1 && k.shape == Shape::Flat {
            self.coarse_trip(coarse, rest, stride, total, los[0])?;
        } else if coarse > 1 {
            self.jam_trip(coarse, rest, stride, total, &los, &counts)?;
        } else {
            self.split_index(rest, &vars, &los, &counts);
            self.block(&k.entry, &k.entry.body)?;
        }
        self.loops.pop();
        // Sections cached by this iteration are not valid past it.
        self.cached.clear();
        if !self.terminated {
            spv(self.m.b.branch(cont));
        }
        self.label(cont);
        for (r, red) in k.reductions.iter().enumerate() {
            if let Some(&acc) = accs.get(r) {
                let t = self.m.ty(Ty::reg(red.ty));
                let a = spv(self.m.b.load(t, None, acc, None, []));
                let l = self.locals[k.reduction_locals[r].index()];
                let b = spv(self.m.b.load(t, None, l, None, []));
                let c = self.combine(red.op, red.ty, a, b);
                spv(self.m.b.store(acc, c, None, []));
            }
        }
        let cur = spv(self.m.b.load(idx_w, None, it, None, []));
        let step = if coarse > 1 {
            let u = self.int_const(self.idx, coarse as i64);
            spv(self.m.b.i_mul(idx_w, None, stride, u))
        } else {
            stride
        };
        let next = spv(self.m.b.i_add(idx_w, None, cur, step));
        spv(self.m.b.store(it, next, None, []));
        spv(self.m.b.branch(header));
        self.label(merge);
        self.gang_index = None;
        self.private_end();

        // One partial per workgroup and reduction.
        for (r, red) in k.reductions.iter().enumerate() {
            let t = self.m.ty(Ty::reg(red.ty));
            let src = accs
                .get(r)
                .copied()
                .unwrap_or(self.locals[k.reduction_locals[r].index()]);
            let v = spv(self.m.b.load(t, None, src, None, []));
            // Gang copies are uniform; teams fold in team order;
            // invocation copies fold in a tree.
            let v = match self.teams {
                Some(t) => self.teams_fold(t, v, red.op, red.ty),
                None if gangs => v,
                None => self.wg_reduce(v, red.op, red.ty),
            };
            let lid = self.local_id();
            let z = self.m.u32c(0);
            let is0 = spv(self.m.b.i_equal(bool_t, None, lid, z));
            let m = self.begin_if(is0);
            let v = self.encode_partial(v, red.ty);
            let pt = self.m.ty(partial_ty(red.ty));
            let p = self.m.ptr(StorageClass::StorageBuffer, pt);
            let g = self.group_id();
            let zero = self.m.u32c(0);
            let ptr = spv(self.m.b.access_chain(p, None, self.partials[r], [zero, g]));
            spv(self.m.b.store(ptr, v, None, []));
            self.end_if(m);
        }
        self.report_cut_loops();
        spv(self.m.b.ret());
        spv(self.m.b.end_function());

        let mut interface = vec![self.gid, self.nwg];
        for &(v, class) in &self.late_globals {
            if class == StorageClass::Input {
                interface.push(v);
            }
        }
        if self.spec.spirv_version >= (1, 4) {
            interface.extend(&self.buffers);
            interface.extend(&self.partials);
            interface.push(self.args_var);
            for &(v, class) in &self.late_globals {
                if class != StorageClass::Input {
                    interface.push(v);
                }
            }
        }
        self.m
            .b
            .entry_point(ExecutionModel::GLCompute, main, "main", interface);
        let default = match (self.teams, self.k.tile) {
            (Some(t), _) => t.workgroup_size(),
            (None, Some((a, b))) => a * b,
            (None, None) => self.k.vector_length.unwrap_or(self.spec.workgroup_size),
        }
        .max(1);
        self.m
            .b
            .execution_mode(main, ExecutionMode::LocalSize, [default, 1, 1]);
        Ok(())
    }

    // ---- workgroup helpers ----------------------------------------------------

    /// A Function-class variable in the first block of the current function.
    fn fvar(&mut self, t: Ty, name: &str) -> Word {
        let tw = self.m.ty(t);
        let p = self.m.ptr(StorageClass::Function, tw);
        let id = self.m.b.id();
        let inst = rspirv::dr::Instruction::new(
            rspirv::spirv::Op::Variable,
            Some(p),
            Some(id),
            vec![Operand::StorageClass(StorageClass::Function)],
        );
        let f = self
            .m
            .b
            .selected_function()
            .expect("fvar inside a function");
        self.m.b.module_mut().functions[f].blocks[0]
            .instructions
            .insert(0, inst);
        self.m.b.name(id, name);
        id
    }

    /// A module-scope variable made while a function is open.
    fn gvar(&mut self, pointee: Word, class: StorageClass, name: &str) -> Word {
        let p = self.m.ptr(class, pointee);
        let id = self.m.b.id();
        let inst = rspirv::dr::Instruction::new(
            rspirv::spirv::Op::Variable,
            Some(p),
            Some(id),
            vec![Operand::StorageClass(class)],
        );
        self.m.b.module_mut().types_global_values.push(inst);
        self.m.b.name(id, name);
        self.late_globals.push((id, class));
        id
    }

    fn builtin_x(&mut self, which: BuiltIn) -> Word {
        let slot = if which == BuiltIn::LocalInvocationId {
            self.lid_var
        } else {
            self.wgid_var
        };
        let var = match slot {
            Some(v) => v,
            None => {
                let uvec3 = self.m.ty(Ty::UVec3);
                let name = if which == BuiltIn::LocalInvocationId {
                    "gl_LocalInvocationID"
                } else {
                    "gl_WorkGroupID"
                };
                let v = self.gvar(uvec3, StorageClass::Input, name);
                self.m
                    .b
                    .decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(which)]);
                if which == BuiltIn::LocalInvocationId {
                    self.lid_var = Some(v);
                } else {
                    self.wgid_var = Some(v);
                }
                v
            }
        };
        let uvec3 = self.m.ty(Ty::UVec3);
        let u32t = self.m.ty(Ty::U32);
        let l = spv(self.m.b.load(uvec3, None, var, None, []));
        spv(self.m.b.composite_extract(u32t, None, l, [0]))
    }

    /// This invocation's index in its workgroup (u32).
    fn local_id(&mut self) -> Word {
        self.builtin_x(BuiltIn::LocalInvocationId)
    }

    /// This workgroup's index (u32).
    fn group_id(&mut self) -> Word {
        self.builtin_x(BuiltIn::WorkgroupId)
    }

    /// The barrier of gang-redundant code and `loop vector`: the team's
    /// subgroup ([`teams`]) or the workgroup; none in a gang loop whose
    /// lanes share no memory ([`teams::gang_shares_memory`]).
    fn barrier(&mut self) {
        if !self.gang_barriers {
            return;
        }
        match self.teams {
            Some(_) => self.subgroup_barrier(),
            None => self.wg_barrier(),
        }
    }

    /// `OpControlBarrier` Workgroup/Workgroup, AcquireRelease over workgroup
    /// and uniform (storage buffer) memory: every invocation of the group
    /// arrives, and their earlier writes are visible to the later reads.
    fn wg_barrier(&mut self) {
        let wg = self.m.u32c(2);
        let sem = self.m.u32c(0x8 | 0x40 | 0x100);
        spv(self.m.b.control_barrier(wg, wg, sem));
    }

    fn begin_if(&mut self, cond: Word) -> Word {
        let then_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(cond, then_l, merge, []));
        self.label(then_l);
        merge
    }

    fn end_if(&mut self, merge: Word) {
        spv(self.m.b.branch(merge));
        self.label(merge);
    }

    fn encode_partial(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let one = self.m.u32c(1);
            let zero = self.m.u32c(0);
            let u32t = self.m.ty(Ty::U32);
            spv(self.m.b.select(u32t, None, v, one, zero))
        } else {
            v
        }
    }

    fn decode_partial(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let b = self.m.ty(Ty::Bool);
            let z = self.m.u32c(0);
            spv(self.m.b.i_not_equal(b, None, v, z))
        } else {
            v
        }
    }

    /// The workgroup scratch array (`wg_size` elements of `t`).
    fn scratch(&mut self, t: Ty) -> Word {
        if let Some(&(_, v)) = self.scratch.iter().find(|(x, _)| *x == t) {
            return v;
        }
        let et = self.m.ty(t);
        let arr = self.m.b.type_array(et, self.wg_size);
        let v = self.gvar(arr, StorageClass::Workgroup, &format!("scratch_{t:?}"));
        self.scratch.push((t, v));
        v
    }

    /// `combine(op, a, b)` of register values (the host's semantics: float
    /// `max`/`min` take `b` when `a` is NaN or `b` is greater/less).
    fn combine(&mut self, op: ReductionOp, s: Scalar, a: Word, b: Word) -> Word {
        use ReductionOp as O;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let bm = &mut self.m.b;
        let r = match op {
            O::Add if s.is_float() => spv(bm.f_add(tw, None, a, b)),
            O::Add => spv(bm.i_add(tw, None, a, b)),
            O::Mul if s.is_float() => spv(bm.f_mul(tw, None, a, b)),
            O::Mul => spv(bm.i_mul(tw, None, a, b)),
            O::And | O::BitAnd | O::Min if s == Scalar::Bool => {
                spv(bm.logical_and(bool_t, None, a, b))
            }
            O::Or | O::BitOr | O::Max if s == Scalar::Bool => {
                spv(bm.logical_or(bool_t, None, a, b))
            }
            O::BitXor if s == Scalar::Bool => spv(bm.logical_not_equal(bool_t, None, a, b)),
            O::BitAnd => spv(bm.bitwise_and(tw, None, a, b)),
            O::BitOr => spv(bm.bitwise_or(tw, None, a, b)),
            O::BitXor => spv(bm.bitwise_xor(tw, None, a, b)),
            O::And => spv(bm.logical_and(bool_t, None, a, b)),
            O::Or => spv(bm.logical_or(bool_t, None, a, b)),
            O::Max | O::Min => {
                let better = match (op == O::Max, s.is_float(), s.is_signed_int()) {
                    (true, true, _) => spv(bm.f_ord_greater_than(bool_t, None, b, a)),
                    (false, true, _) => spv(bm.f_ord_less_than(bool_t, None, b, a)),
                    (true, false, true) => spv(bm.s_greater_than(bool_t, None, b, a)),
                    (false, false, true) => spv(bm.s_less_than(bool_t, None, b, a)),
                    (true, false, false) => spv(bm.u_greater_than(bool_t, None, b, a)),
                    (false, false, false) => spv(bm.u_less_than(bool_t, None, b, a)),
                };
                let take = if s.is_float() {
                    let nan = spv(bm.is_nan(bool_t, None, a));
                    spv(bm.logical_or(bool_t, None, nan, better))
                } else {
                    better
                };
                spv(bm.select(tw, None, take, b, a))
            }
        };
        match op {
            O::Add | O::Mul => self.wrap_u8(r, s),
            _ => r,
        }
    }

    /// Fold `v` over the workgroup's invocations in a fixed tree order
    /// (stride 1, 2, 4, ..: slot `i` takes `combine(slot i, slot i + s)` when
    /// `i % 2s == 0`), so the result depends only on the values and the
    /// work-group size. Every invocation gets the result. Must be reached in
    /// uniform control flow.
    fn wg_reduce(&mut self, v: Word, op: ReductionOp, s: Scalar) -> Word {
        if let Some(wg) = self.subgroup_foldable_wg() {
            return self.subgroup_wg_reduce(wg, v, op, s);
        }
        let st = partial_ty(s);
        let stw = self.m.ty(st);
        let arr = self.scratch(st);
        let pst = self.m.ptr(StorageClass::Workgroup, stw);
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let lid = self.local_id();
        let enc = self.encode_partial(v, s);
        let mine = spv(self.m.b.access_chain(pst, None, arr, [lid]));
        spv(self.m.b.store(mine, enc, None, []));
        self.wg_barrier();
        let sv = self.fvar(Ty::U32, "stride");
        let one = self.m.u32c(1);
        spv(self.m.b.store(sv, one, None, []));
        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let sc = spv(self.m.b.load(u32t, None, sv, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, sc, self.wg_size));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch_conditional(more, body, merge, []));
        self.label(body);
        let bm = &mut self.m.b;
        let two_s = spv(bm.shift_left_logical(u32t, None, sc, one));
        let mask = spv(bm.i_sub(u32t, None, two_s, one));
        let low = spv(bm.bitwise_and(u32t, None, lid, mask));
        let zero = self.m.u32c(0);
        let bm = &mut self.m.b;
        let aligned = spv(bm.i_equal(bool_t, None, low, zero));
        let other = spv(bm.i_add(u32t, None, lid, sc));
        let inside = spv(bm.u_less_than(bool_t, None, other, self.wg_size));
        let take = spv(bm.logical_and(bool_t, None, aligned, inside));
        let m = self.begin_if(take);
        let pa = spv(self.m.b.access_chain(pst, None, arr, [lid]));
        let pb = spv(self.m.b.access_chain(pst, None, arr, [other]));
        let a = spv(self.m.b.load(stw, None, pa, None, []));
        let b = spv(self.m.b.load(stw, None, pb, None, []));
        let (a, b) = (self.decode_partial(a, s), self.decode_partial(b, s));
        let c = self.combine(op, s, a, b);
        let c = self.encode_partial(c, s);
        spv(self.m.b.store(pa, c, None, []));
        self.end_if(m);
        self.wg_barrier();
        spv(self.m.b.branch(cont));
        self.label(cont);
        let sc = spv(self.m.b.load(u32t, None, sv, None, []));
        let next = spv(self.m.b.shift_left_logical(u32t, None, sc, one));
        spv(self.m.b.store(sv, next, None, []));
        spv(self.m.b.branch(header));
        self.label(merge);
        let zero = self.m.u32c(0);
        let p0 = spv(self.m.b.access_chain(pst, None, arr, [zero]));
        let r = spv(self.m.b.load(stw, None, p0, None, []));
        // Nobody may overwrite the scratch before everyone has read slot 0.
        self.wg_barrier();
        self.decode_partial(r, s)
    }

    /// Split flat index `rest` row-major over the levels of a collapsed nest
    /// (innermost fastest) and store `lo_l + i_l` in each level's variable.
    /// `counts[l]` is level `l`'s trip count (unused for level 0).
    fn split_index(
        &mut self,
        mut rest: Word,
        vars: &[(LocalH, Scalar)],
        los: &[Word],
        counts: &[Word],
    ) {
        let idx_w = self.m.ty(self.idx);
        for (l, &(var, ty)) in vars.iter().enumerate().rev() {
            let i = if l == 0 {
                rest
            } else {
                let i = spv(self.m.b.u_mod(idx_w, None, rest, counts[l]));
                rest = spv(self.m.b.u_div(idx_w, None, rest, counts[l]));
                i
            };
            let rt = Ty::reg(ty);
            let off = self.int_cast(i, self.idx, rt);
            let rtw = self.m.ty(rt);
            let x = spv(self.m.b.i_add(rtw, None, los[l], off));
            let x = self.wrap_u8(x, ty);
            spv(self.m.b.store(self.locals[var.index()], x, None, []));
        }
    }

    /// A `loop vector` (see [`VectorLoop`]): a barrier, the bounds, a
    /// block-stride loop over the invocations, the reductions folded in a
    /// tree, a barrier.
    fn vector_loop(&mut self, f: &Function, v: &VectorLoop) -> Result<(), Diag> {
        self.barrier();
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let (los, counts, total) = self.vector_bounds(f, v)?;
        let lid = match self.teams {
            Some(t) => self.team_lane(t),
            None => self.local_id(),
        };
        let lid = self.int_cast(lid, Ty::U32, self.idx);
        let wg = match self.teams {
            Some(t) => self.m.u32c(t.lanes),
            None => self.wg_size,
        };
        let wg = self.int_cast(wg, Ty::U32, self.idx);
        let (start, stride) = if v.gangs {
            let Some(g) = self.gang_index else {
                return Err(ice(self.k.span, "a gang loop outside the gang loop"));
            };
            let n = self.load_arg(FieldKind::Total)?;
            let bm = &mut self.m.b;
            let base = spv(bm.i_mul(idx_w, None, g, wg));
            (
                spv(bm.i_add(idx_w, None, base, lid)),
                spv(bm.i_mul(idx_w, None, n, wg)),
            )
        } else {
            (lid, wg)
        };
        let kv = self.fvar(self.idx, "k");
        spv(self.m.b.store(kv, start, None, []));
        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let cur = spv(self.m.b.load(idx_w, None, kv, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, cur, total));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch_conditional(more, body, merge, []));
        self.label(body);
        let rest = spv(self.m.b.load(idx_w, None, kv, None, []));
        let vars: Vec<_> = v.levels.iter().map(|l| (l.var, l.ty)).collect();
        self.split_index(rest, &vars, &los, &counts);
        self.loops.push((merge, cont, None));
        self.block(f, &v.body)?;
        self.loops.pop();
        if !self.terminated {
            spv(self.m.b.branch(cont));
        }
        self.label(cont);
        let cur = spv(self.m.b.load(idx_w, None, kv, None, []));
        let next = spv(self.m.b.i_add(idx_w, None, cur, stride));
        spv(self.m.b.store(kv, next, None, []));
        spv(self.m.b.branch(header));
        self.label(merge);
        self.vector_fold(f, v);
        self.barrier();
        Ok(())
    }

    /// A `loop vector`'s bounds (evaluated by every lane alike): each
    /// level's lower bound and trip count, and the total; its reduction
    /// copies set to the identity.
    fn vector_bounds(
        &mut self,
        f: &Function,
        v: &VectorLoop,
    ) -> Result<(Vec<Word>, Vec<Word>, Word), Diag> {
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let mut los = Vec::new();
        let mut counts = Vec::new();
        let mut total = None;
        for l in &v.levels {
            let rt = Ty::reg(l.ty);
            let lo = self.expr(f, l.lo)?;
            let hi = self.expr(f, l.hi)?;
            let bm = &mut self.m.b;
            let nonempty = match (l.inclusive, l.ty.is_signed_int()) {
                (false, true) => spv(bm.s_less_than(bool_t, None, lo, hi)),
                (false, false) => spv(bm.u_less_than(bool_t, None, lo, hi)),
                (true, true) => spv(bm.s_less_than_equal(bool_t, None, lo, hi)),
                (true, false) => spv(bm.u_less_than_equal(bool_t, None, lo, hi)),
            };
            let lo_i = self.int_cast(lo, rt, self.idx);
            let hi_i = self.int_cast(hi, rt, self.idx);
            let mut diff = spv(self.m.b.i_sub(idx_w, None, hi_i, lo_i));
            if l.inclusive {
                let one = self.int_const(self.idx, 1);
                diff = spv(self.m.b.i_add(idx_w, None, diff, one));
            }
            let zero = self.int_const(self.idx, 0);
            let count = spv(self.m.b.select(idx_w, None, nonempty, diff, zero));
            total = Some(match total {
                None => count,
                Some(t) => spv(self.m.b.i_mul(idx_w, None, t, count)),
            });
            los.push(lo);
            counts.push(count);
        }
        let Some(total) = total else {
            return Err(ice(self.k.span, "a vector loop without levels"));
        };
        for r in &v.reductions {
            let ty = f.locals[r.private].ty;
            let id = self.constant(lang::value::identity(r.op, ty));
            spv(self.m.b.store(self.locals[r.private.index()], id, None, []));
        }
        Ok((los, counts, total))
    }

    /// After a `loop vector`: fold each reduction's lane copies into its
    /// gang variable.
    fn vector_fold(&mut self, f: &Function, v: &VectorLoop) {
        for r in &v.reductions {
            let ty = f.locals[r.private].ty;
            let tw = self.m.ty(Ty::reg(ty));
            let p = spv(self
                .m
                .b
                .load(tw, None, self.locals[r.private.index()], None, []));
            let folded = match self.teams {
                Some(t) => self.team_reduce(t, p, r.op, ty),
                None => self.wg_reduce(p, r.op, ty),
            };
            let t = spv(self
                .m
                .b
                .load(tw, None, self.locals[r.target.index()], None, []));
            let c = self.combine(r.op, ty, t, folded);
            spv(self.m.b.store(self.locals[r.target.index()], c, None, []));
        }
    }

    /// An atomic read-modify-write; the value is the element's old value.
    fn atomic(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
        op: AtomicKind,
        value: ExprH,
        whole: lang::Span,
    ) -> Result<Word, Diag> {
        if let Some(p) = self.private[array.index()] {
            let lin = self.element_index(f, array, index)?;
            let x = self.expr(f, value)?;
            return self.private_update(p, array, op, lin, x, |w| {
                let ptr = w.element_ptr(array, lin);
                w.atomic_at(ptr, array, op, x)
            });
        }
        let (ptr, ok) = self.element_at(f, array, index, whole)?;
        let x = self.expr(f, value)?;
        let Some(ok) = ok else {
            return self.atomic_at(ptr, array, op, x);
        };
        // Check mode: only an element in bounds is updated; otherwise the
        // value is 0.
        let pre = self.cur_label;
        let then_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(ok, then_l, merge, []));
        self.label(then_l);
        let r = self.atomic_at(ptr, array, op, x)?;
        let end = self.cur_label;
        spv(self.m.b.branch(merge));
        self.label(merge);
        let t = Ty::reg(self.k.arrays[array].elem);
        let tw = self.m.ty(t);
        let zero = match t {
            Ty::F32 | Ty::F64 => self.float_const(t, 0.0),
            Ty::Bool => self.m.b.constant_false(tw),
            _ => self.int_const(t, 0),
        };
        Ok(spv(self.m.b.phi(tw, None, [(r, end), (zero, pre)])))
    }

    /// The atomic update of the element at `ptr` with value `x`.
    fn atomic_at(
        &mut self,
        ptr: Word,
        array: ArrayH,
        op: AtomicKind,
        x: Word,
    ) -> Result<Word, Diag> {
        let elem = self.k.arrays[array].elem;
        let t = Ty::reg(elem);
        let tw = self.m.ty(t);
        let view = self.views[array.index()];
        let scope = self.m.u32c(1); // Device
        let sem = self.m.u32c(0); // Relaxed
        if matches!(elem, Scalar::I64) || view == Ty::U64 {
            self.m.add_cap(rspirv::spirv::Capability::Int64Atomics);
        }
        let bool_t = self.m.ty(Ty::Bool);
        // `atomic read` / `atomic write`: on the element's bits (a float
        // array with atomics has an integer view, see storage_views).
        if matches!(op, AtomicKind::Read | AtomicKind::Write) {
            let vw = self.m.ty(view);
            if op == AtomicKind::Read {
                let bits = spv(self.m.b.atomic_load(vw, None, ptr, scope, sem));
                return Ok(if view == t {
                    bits
                } else {
                    spv(self.m.b.bitcast(tw, None, bits))
                });
            }
            let bits = if view == t {
                x
            } else {
                spv(self.m.b.bitcast(vw, None, x))
            };
            spv(self.m.b.atomic_store(ptr, scope, sem, bits));
            return Ok(x);
        }
        if elem.is_int() {
            let signed = elem.is_signed_int();
            let bm = &mut self.m.b;
            return Ok(match op {
                AtomicKind::Add => spv(bm.atomic_i_add(tw, None, ptr, scope, sem, x)),
                AtomicKind::Sub => spv(bm.atomic_i_sub(tw, None, ptr, scope, sem, x)),
                AtomicKind::Max if signed => spv(bm.atomic_s_max(tw, None, ptr, scope, sem, x)),
                AtomicKind::Max => spv(bm.atomic_u_max(tw, None, ptr, scope, sem, x)),
                AtomicKind::Min if signed => spv(bm.atomic_s_min(tw, None, ptr, scope, sem, x)),
                AtomicKind::Min => spv(bm.atomic_u_min(tw, None, ptr, scope, sem, x)),
                AtomicKind::And => spv(bm.atomic_and(tw, None, ptr, scope, sem, x)),
                AtomicKind::Or => spv(bm.atomic_or(tw, None, ptr, scope, sem, x)),
                AtomicKind::Xor => spv(bm.atomic_xor(tw, None, ptr, scope, sem, x)),
                AtomicKind::Xchg => spv(bm.atomic_exchange(tw, None, ptr, scope, sem, x)),
                AtomicKind::Read | AtomicKind::Write => unreachable!("handled above"),
                AtomicKind::Mul => {
                    return Ok(self.cas_loop(ptr, t, t, |w, old| spv(w.m.b.i_mul(tw, None, old, x))))
                }
            });
        }
        if view == Ty::storage(elem) {
            // Native float add (the device has the feature: see storage_views).
            let cap = if elem == Scalar::F64 {
                rspirv::spirv::Capability::AtomicFloat64AddEXT
            } else {
                rspirv::spirv::Capability::AtomicFloat32AddEXT
            };
            self.m.add_cap(cap);
            self.m.add_ext("SPV_EXT_shader_atomic_float_add");
            let x = if op == AtomicKind::Sub {
                spv(self.m.b.f_negate(tw, None, x))
            } else {
                x
            };
            return Ok(spv(self.m.b.atomic_f_add_ext(tw, None, ptr, scope, sem, x)));
        }
        if op == AtomicKind::Xchg {
            let vw = self.m.ty(view);
            let bits = spv(self.m.b.bitcast(vw, None, x));
            let old = spv(self.m.b.atomic_exchange(vw, None, ptr, scope, sem, bits));
            return Ok(spv(self.m.b.bitcast(tw, None, old)));
        }
        Ok(self.cas_loop(ptr, view, t, |w, old| {
            let bm = &mut w.m.b;
            match op {
                AtomicKind::Add => spv(bm.f_add(tw, None, old, x)),
                AtomicKind::Sub => spv(bm.f_sub(tw, None, old, x)),
                AtomicKind::Mul => spv(bm.f_mul(tw, None, old, x)),
                _ => {
                    // The host's: take x when x is greater (less), or old is NaN.
                    let better = if op == AtomicKind::Max {
                        spv(bm.f_ord_greater_than(bool_t, None, x, old))
                    } else {
                        spv(bm.f_ord_less_than(bool_t, None, x, old))
                    };
                    let nan = spv(bm.is_nan(bool_t, None, old));
                    let take = spv(bm.logical_or(bool_t, None, better, nan));
                    spv(bm.select(tw, None, take, x, old))
                }
            }
        }))
    }

    /// `loop { old = *ptr; new = f(old); if cas(ptr, old, new) == old break }`
    /// on the element's bits (`view`: the buffer's integer type), with the
    /// value computed in register type `t`. The value is the old element.
    fn cas_loop(
        &mut self,
        ptr: Word,
        view: Ty,
        t: Ty,
        f: impl FnOnce(&mut Self, Word) -> Word,
    ) -> Word {
        let vw = self.m.ty(view);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let scope = self.m.u32c(1);
        let sem = self.m.u32c(0);
        let first = spv(self.m.b.atomic_load(vw, None, ptr, scope, sem));
        let pre = self.cur_label;
        let header = self.m.b.id();
        let body = self.m.b.id();
        let cont = self.m.b.id();
        let merge = self.m.b.id();
        let res = self.m.b.id();
        spv(self.m.b.branch(header));
        self.label(header);
        let cur = spv(self.m.b.phi(vw, None, [(first, pre), (res, cont)]));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        spv(self.m.b.branch(body));
        self.label(body);
        let old = if view == t {
            cur
        } else {
            spv(self.m.b.bitcast(tw, None, cur))
        };
        let new = f(self, old);
        let new_bits = if view == t {
            new
        } else {
            spv(self.m.b.bitcast(vw, None, new))
        };
        spv(self
            .m
            .b
            .atomic_compare_exchange(vw, Some(res), ptr, scope, sem, sem, new_bits, cur));
        let done = spv(self.m.b.i_equal(bool_t, None, res, cur));
        spv(self.m.b.branch_conditional(done, merge, cont, []));
        self.label(cont);
        spv(self.m.b.branch(header));
        self.label(merge);
        old_after(self, view, t, cur)
    }

    fn label(&mut self, id: Word) {
        self.cur_label = spv(self.m.b.begin_block(Some(id)));
        self.terminated = false;
    }

    // ---- statements ----------------------------------------------------------

    fn block(&mut self, f: &Function, b: &Block) -> Result<(), Diag> {
        for s in b {
            if self.terminated {
                break; // dead code after break/continue/return
            }
            self.stmt(f, s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, f: &Function, s: &Stmt) -> Result<(), Diag> {
        match &s.kind {
            StmtKind::Store { local, value } => {
                let v = self.expr(f, *value)?;
                spv(self.m.b.store(self.locals[local.index()], v, None, []));
            }
            StmtKind::StoreElem {
                array,
                index,
                value,
            } => {
                let (ptr, ok) = self.element_at(f, *array, index, s.span)?;
                let v = self.expr(f, *value)?;
                let elem = self.k.arrays[*array].elem;
                let u8t = Ty::storage(elem);
                let view = self.views[array.index()];
                let v = match elem {
                    _ if view != u8t => {
                        let vw = self.m.ty(view);
                        spv(self.m.b.bitcast(vw, None, v))
                    }
                    Scalar::Bool => {
                        let one = self.m.u32c(1);
                        let zero = self.m.u32c(0);
                        let u32t = self.m.ty(Ty::U32);
                        let w = spv(self.m.b.select(u32t, None, v, one, zero));
                        let t = self.m.ty(u8t);
                        spv(self.m.b.u_convert(t, None, w))
                    }
                    Scalar::U8 => {
                        let t = self.m.ty(u8t);
                        spv(self.m.b.u_convert(t, None, v))
                    }
                    _ => v,
                };
                match (ok, &mut self.deferred) {
                    (Some(ok), _) => {
                        let m = self.begin_if(ok);
                        spv(self.m.b.store(ptr, v, None, []));
                        self.end_if(m);
                    }
                    (None, Some(later)) => later.push((ptr, v)),
                    (None, None) => spv(self.m.b.store(ptr, v, None, [])),
                }
            }
            StmtKind::Eval(e) => {
                self.expr(f, *e)?;
            }
            StmtKind::Barrier => self.barrier(),
            StmtKind::Cache { array, lo, count } => self.cache_stmt(f, s, *array, *lo, *count)?,
            StmtKind::VectorLoop(v) => self.vector_loop(f, v)?,
            StmtKind::If { cond, then, els } => {
                let c = self.expr(f, *cond)?;
                let then_l = self.m.b.id();
                let merge = self.m.b.id();
                let else_l = if els.is_empty() { merge } else { self.m.b.id() };
                spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
                spv(self.m.b.branch_conditional(c, then_l, else_l, []));
                self.label(then_l);
                self.block(f, then)?;
                let then_done = self.terminated;
                if !self.terminated {
                    spv(self.m.b.branch(merge));
                }
                let mut else_done = false;
                if !els.is_empty() {
                    self.label(else_l);
                    self.block(f, els)?;
                    else_done = self.terminated;
                    if !self.terminated {
                        spv(self.m.b.branch(merge));
                    }
                }
                self.label(merge);
                if then_done && else_done {
                    spv(self.m.b.unreachable());
                    self.terminated = true;
                }
            }
            StmtKind::Loop { body, continuing } => {
                let header = self.m.b.id();
                let body_l = self.m.b.id();
                let cont = self.m.b.id();
                let merge = self.m.b.id();
                // With the fault buffer: was the loop left through an exit?
                let exited = self.fault_var.map(|_| {
                    let v = self.fvar(Ty::Bool, "exited");
                    let bt = self.m.ty(Ty::Bool);
                    let fls = self.m.b.constant_false(bt);
                    spv(self.m.b.store(v, fls, None, []));
                    v
                });
                spv(self.m.b.branch(header));
                self.label(header);
                spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
                spv(self.m.b.branch(body_l));
                self.label(body_l);
                self.loops.push((merge, cont, exited));
                self.block(f, body)?;
                self.loops.pop();
                if !self.terminated {
                    spv(self.m.b.branch(cont));
                }
                self.label(cont);
                self.block(f, continuing)?;
                match self.loop_back_edge() {
                    Some(again) => spv(self.m.b.branch_conditional(again, header, merge, [])),
                    None => spv(self.m.b.branch(header)),
                }
                self.label(merge);
                if let Some(e) = exited {
                    self.loop_exit_check(e, s.span);
                }
            }
            StmtKind::Break => {
                let Some(&(merge, _, exited)) = self.loops.last() else {
                    return Err(ice(s.span, "break outside a loop"));
                };
                if let Some(e) = exited {
                    let bt = self.m.ty(Ty::Bool);
                    let t = self.m.b.constant_true(bt);
                    spv(self.m.b.store(e, t, None, []));
                }
                spv(self.m.b.branch(merge));
                self.terminated = true;
            }
            StmtKind::Continue => {
                let Some(&(_, cont, _)) = self.loops.last() else {
                    return Err(ice(s.span, "continue outside a loop"));
                };
                spv(self.m.b.branch(cont));
                self.terminated = true;
            }
            StmtKind::Return(v) => {
                match v {
                    Some(v) => {
                        let v = self.expr(f, *v)?;
                        spv(self.m.b.ret_value(v))
                    }
                    None => spv(self.m.b.ret()),
                }
                self.terminated = true;
            }
        }
        Ok(())
    }

    // ---- expressions ---------------------------------------------------------

    fn constant(&mut self, v: Value) -> Word {
        let (t, bits) = match v {
            Value::Bool(b) => (Ty::Bool, b as u64),
            Value::I32(x) => (Ty::I32, x as u32 as u64),
            Value::I64(x) => (Ty::I64, x as u64),
            Value::U32(x) => (Ty::U32, x as u64),
            Value::U8(x) => (Ty::U32, x as u64),
            Value::F32(x) => (Ty::F32, x.to_bits() as u64),
            Value::F64(x) | Value::FloatLit(x) => (Ty::F64, x.to_bits()),
            Value::IntLit(x) => (Ty::I32, x as i32 as u32 as u64),
        };
        self.m.konst(t, bits)
    }

    /// An integer constant of register type `t`.
    fn int_const(&mut self, t: Ty, v: i64) -> Word {
        let bits = match t {
            Ty::I64 | Ty::U64 => v as u64,
            _ => v as u32 as u64,
        };
        self.m.konst(t, bits)
    }

    fn float_const(&mut self, t: Ty, v: f64) -> Word {
        match t {
            Ty::F32 => self.m.konst(Ty::F32, (v as f32).to_bits() as u64),
            _ => self.m.konst(Ty::F64, v.to_bits()),
        }
    }

    /// Mask a `u8` held in a `u32` back to 0..=255.
    fn wrap_u8(&mut self, v: Word, s: Scalar) -> Word {
        if s != Scalar::U8 {
            return v;
        }
        let u32t = self.m.ty(Ty::U32);
        let ff = self.m.u32c(0xff);
        spv(self.m.b.bitwise_and(u32t, None, v, ff))
    }

    /// An argument-block value (u8/bool widened to u32) as a register value.
    fn arg_value(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let b = self.m.ty(Ty::Bool);
            let z = self.m.u32c(0);
            spv(self.m.b.i_not_equal(b, None, v, z))
        } else {
            v
        }
    }

    /// Wrapping conversion between integer register types.
    fn int_cast(&mut self, v: Word, from: Ty, to: Ty) -> Word {
        if from == to {
            return v;
        }
        let (fw, fs) = from.int_width().expect("integer type");
        let (tw, ts) = to.int_width().expect("integer type");
        let mut cur = v;
        let mut cur_signed = fs;
        if fw != tw {
            if fw < tw && fs {
                let t = self.m.ty(Ty::int(tw, true));
                cur = spv(self.m.b.s_convert(t, None, cur));
                cur_signed = true;
            } else {
                let t = self.m.ty(Ty::int(tw, false));
                cur = spv(self.m.b.u_convert(t, None, cur));
                cur_signed = false;
            }
        }
        if cur_signed != ts {
            let t = self.m.ty(to);
            cur = spv(self.m.b.bitcast(t, None, cur));
        }
        cur
    }

    /// Pointer to an element: row-major linear index minus the base offset.
    /// Pointer to an element, and (bounds-check mode) whether it is in
    /// bounds; `whole` is the span of the access.
    fn element_at(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
        whole: lang::Span,
    ) -> Result<(Word, Option<Word>), Diag> {
        if self.spec.checks {
            let (p, ok) = self.element_checked(f, array, index, whole)?;
            return Ok((p, Some(ok)));
        }
        Ok((self.element(f, array, index)?, None))
    }

    fn element(&mut self, f: &Function, array: ArrayH, index: &[ExprH]) -> Result<Word, Diag> {
        let lin = self.element_index(f, array, index)?;
        Ok(self.element_ptr(array, lin))
    }

    /// The pointer to element `lin` (from [`Writer::element_index`]).
    fn element_ptr(&mut self, array: ArrayH, lin: Word) -> Word {
        let a = array.index();
        let et = self.m.ty(self.views[a]);
        let p = self.m.ptr(StorageClass::StorageBuffer, et);
        let zero = self.m.u32c(0);
        spv(self.m.b.access_chain(p, None, self.buffers[a], [zero, lin]))
    }

    /// The element's index in the array's buffer (row-major, less the
    /// section's base), in the index type.
    fn element_index(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
    ) -> Result<Word, Diag> {
        let a = array.index();
        let idx_w = self.m.ty(self.idx);
        let mut lin = None;
        for (d, &i) in index.iter().enumerate() {
            let v = self.expr(f, i)?;
            let v = self.int_cast(v, Ty::reg(f.ty(i)), self.idx);
            lin = Some(match lin {
                None => v,
                Some(acc) => {
                    let dim = self.load_arg(FieldKind::Dim(a, d))?;
                    let m = spv(self.m.b.i_mul(idx_w, None, acc, dim));
                    spv(self.m.b.i_add(idx_w, None, m, v))
                }
            });
        }
        let Some(lin) = lin else {
            return Err(ice(self.k.span, "an element without indices"));
        };
        let base = self.load_arg(FieldKind::Base(a))?;
        Ok(spv(self.m.b.i_sub(idx_w, None, lin, base)))
    }

    fn expr(&mut self, f: &Function, h: ExprH) -> Result<Word, Diag> {
        let s = f.ty(h);
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        Ok(match &f.exprs[h] {
            Expr::Const(v) => self.constant(*v),
            Expr::Param(i) => {
                let v = self.load_arg(FieldKind::Param(*i as usize))?;
                self.arg_value(v, s)
            }
            Expr::Local(l) => spv(self.m.b.load(tw, None, self.locals[l.index()], None, [])),
            Expr::Load { array, index } => {
                let elem = self.k.arrays[*array].elem;
                let view = self.views[array.index()];
                let st = self.m.ty(view);
                let cached = self.cached.iter().find(|c| c.array == *array).copied();
                let v = match cached {
                    Some(c) if !self.spec.checks => {
                        let lin = self.element_index(f, *array, index)?;
                        self.cached_load(c, lin)
                    }
                    _ => {
                        // Out of bounds (check mode), the pointer is to element 0:
                        // the load is harmless and the kernel's results are dropped.
                        let (ptr, _) = self.element_at(f, *array, index, f.exprs.span(h))?;
                        spv(self.m.b.load(st, None, ptr, None, []))
                    }
                };
                match elem {
                    _ if view != Ty::storage(elem) => spv(self.m.b.bitcast(tw, None, v)),
                    Scalar::U8 | Scalar::Bool => {
                        let u32t = self.m.ty(Ty::U32);
                        let w = spv(self.m.b.u_convert(u32t, None, v));
                        if elem == Scalar::Bool {
                            let z = self.m.u32c(0);
                            spv(self.m.b.i_not_equal(tw, None, w, z))
                        } else {
                            w
                        }
                    }
                    _ => v,
                }
            }
            Expr::Unary(op, a) => {
                let av = self.expr(f, *a)?;
                match op {
                    UnOp::Neg if s.is_float() => spv(self.m.b.f_negate(tw, None, av)),
                    UnOp::Neg => {
                        let r = spv(self.m.b.s_negate(tw, None, av));
                        self.wrap_u8(r, s)
                    }
                    UnOp::Not if s == Scalar::Bool => spv(self.m.b.logical_not(tw, None, av)),
                    UnOp::Not => {
                        let r = spv(self.m.b.not(tw, None, av));
                        self.wrap_u8(r, s)
                    }
                }
            }
            Expr::Binary(op, a, b) => {
                let r = self.binary(f, *op, *a, *b, s, f.exprs.span(h));
                r?
            }
            Expr::Cast(a, to) => {
                let from = f.ty(*a);
                let v = self.expr(f, *a)?;
                self.cast(v, from, *to)
            }
            Expr::Math(m, args) => {
                let mut vs = Vec::new();
                for &a in args {
                    vs.push(self.expr(f, a)?);
                }
                self.math(*m, &vs, s)
            }
            Expr::Reduce(op, a, b) => {
                let av = self.expr(f, *a)?;
                let bv = self.expr(f, *b)?;
                self.combine(*op, s, av, bv)
            }
            Expr::InvocationIndex => match self.teams {
                Some(t) => self.team_lane(t),
                None => self.local_id(),
            },
            Expr::Atomic {
                array,
                index,
                op,
                value,
            } => self.atomic(f, *array, index, *op, *value, f.exprs.span(h))?,
            Expr::Call(callee, args) => {
                let mut vs = Vec::new();
                for &a in args {
                    vs.push(self.expr(f, a)?);
                }
                let g = &self.k.functions[*callee];
                let rt = self.m.ty(g.ret.map_or(Ty::Void, Ty::reg));
                spv(self
                    .m
                    .b
                    .function_call(rt, None, self.func_ids[callee.index()], vs))
            }
        })
    }

    fn binary(
        &mut self,
        f: &Function,
        op: BinOp,
        a: ExprH,
        b: ExprH,
        result: Scalar,
        span: lang::Span,
    ) -> Result<Word, Diag> {
        use BinOp::*;
        let s = f.ty(a);
        if matches!(op, And | Or) {
            // Short circuit: a selection and a phi.
            let av = self.expr(f, a)?;
            let from = self.cur_label;
            let rhs = self.m.b.id();
            let merge = self.m.b.id();
            spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
            if op == And {
                spv(self.m.b.branch_conditional(av, rhs, merge, []));
            } else {
                spv(self.m.b.branch_conditional(av, merge, rhs, []));
            }
            self.label(rhs);
            let bv = self.expr(f, b)?;
            let rhs_end = self.cur_label;
            spv(self.m.b.branch(merge));
            self.label(merge);
            let bt = self.m.ty(Ty::Bool);
            return Ok(spv(self.m.b.phi(bt, None, [(av, from), (bv, rhs_end)])));
        }
        let av = self.expr(f, a)?;
        let bv = self.expr(f, b)?;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let signed = s.is_signed_int();
        let bm = &mut self.m.b;
        let r = match op {
            Eq | Ne | Lt | Le | Gt | Ge => {
                debug_assert_eq!(result, Scalar::Bool);
                return Ok(if s == Scalar::Bool {
                    match op {
                        Eq => spv(bm.logical_equal(bool_t, None, av, bv)),
                        _ => spv(bm.logical_not_equal(bool_t, None, av, bv)),
                    }
                } else if s.is_float() {
                    match op {
                        Eq => spv(bm.f_ord_equal(bool_t, None, av, bv)),
                        Ne => spv(bm.f_unord_not_equal(bool_t, None, av, bv)),
                        Lt => spv(bm.f_ord_less_than(bool_t, None, av, bv)),
                        Le => spv(bm.f_ord_less_than_equal(bool_t, None, av, bv)),
                        Gt => spv(bm.f_ord_greater_than(bool_t, None, av, bv)),
                        _ => spv(bm.f_ord_greater_than_equal(bool_t, None, av, bv)),
                    }
                } else {
                    match (op, signed) {
                        (Eq, _) => spv(bm.i_equal(bool_t, None, av, bv)),
                        (Ne, _) => spv(bm.i_not_equal(bool_t, None, av, bv)),
                        (Lt, true) => spv(bm.s_less_than(bool_t, None, av, bv)),
                        (Le, true) => spv(bm.s_less_than_equal(bool_t, None, av, bv)),
                        (Gt, true) => spv(bm.s_greater_than(bool_t, None, av, bv)),
                        (Ge, true) => spv(bm.s_greater_than_equal(bool_t, None, av, bv)),
                        (Lt, false) => spv(bm.u_less_than(bool_t, None, av, bv)),
                        (Le, false) => spv(bm.u_less_than_equal(bool_t, None, av, bv)),
                        (Gt, false) => spv(bm.u_greater_than(bool_t, None, av, bv)),
                        _ => spv(bm.u_greater_than_equal(bool_t, None, av, bv)),
                    }
                });
            }
            BitAnd | BitOr | BitXor if s == Scalar::Bool => {
                return Ok(match op {
                    BitAnd => spv(bm.logical_and(bool_t, None, av, bv)),
                    BitOr => spv(bm.logical_or(bool_t, None, av, bv)),
                    _ => spv(bm.logical_not_equal(bool_t, None, av, bv)),
                })
            }
            BitAnd => spv(bm.bitwise_and(tw, None, av, bv)),
            BitOr => spv(bm.bitwise_or(tw, None, av, bv)),
            BitXor => spv(bm.bitwise_xor(tw, None, av, bv)),
            // NoContraction: a driver may otherwise fuse `a * b + c` into
            // one fma and round differently from the host (IEEE, one
            // rounding per operation), which changes chaotic results such
            // as a Mandelbrot boundary.
            Add | Sub | Mul | Div | Rem if s.is_float() => {
                let r = spv(match op {
                    Add => bm.f_add(tw, None, av, bv),
                    Sub => bm.f_sub(tw, None, av, bv),
                    Mul => bm.f_mul(tw, None, av, bv),
                    Div => bm.f_div(tw, None, av, bv),
                    _ => bm.f_rem(tw, None, av, bv),
                });
                bm.decorate(r, rspirv::spirv::Decoration::NoContraction, []);
                r
            }
            Add => spv(bm.i_add(tw, None, av, bv)),
            Sub => spv(bm.i_sub(tw, None, av, bv)),
            Mul => spv(bm.i_mul(tw, None, av, bv)),
            Shl | Shr => {
                let bits = match s {
                    Scalar::U8 => 8,
                    Scalar::I64 => 64,
                    _ => 32,
                };
                let mask = self.int_const(t, bits - 1);
                let bm = &mut self.m.b;
                let n = spv(bm.bitwise_and(tw, None, bv, mask));
                match (op, signed) {
                    (Shl, _) => spv(bm.shift_left_logical(tw, None, av, n)),
                    (_, true) => spv(bm.shift_right_arithmetic(tw, None, av, n)),
                    (_, false) => spv(bm.shift_right_logical(tw, None, av, n)),
                }
            }
            Div | Rem => {
                // Division by zero gives 0; MIN / -1 wraps; neither is undefined.
                if self.spec.checks {
                    self.check_divisor(bv, t, span);
                }
                let zero = self.int_const(t, 0);
                let one = self.int_const(t, 1);
                let bm = &mut self.m.b;
                let is0 = spv(bm.i_equal(bool_t, None, bv, zero));
                if signed {
                    let m1 = self.int_const(t, -1);
                    let bm = &mut self.m.b;
                    let ism1 = spv(bm.i_equal(bool_t, None, bv, m1));
                    let bad = spv(bm.logical_or(bool_t, None, is0, ism1));
                    let safe = spv(bm.select(tw, None, bad, one, bv));
                    if op == Div {
                        let q = spv(bm.s_div(tw, None, av, safe));
                        let neg = spv(bm.s_negate(tw, None, av));
                        let q = spv(bm.select(tw, None, ism1, neg, q));
                        spv(bm.select(tw, None, is0, zero, q))
                    } else {
                        let r = spv(bm.s_rem(tw, None, av, safe));
                        spv(bm.select(tw, None, bad, zero, r))
                    }
                } else {
                    let safe = spv(bm.select(tw, None, is0, one, bv));
                    let q = if op == Div {
                        spv(bm.u_div(tw, None, av, safe))
                    } else {
                        spv(bm.u_mod(tw, None, av, safe))
                    };
                    spv(bm.select(tw, None, is0, zero, q))
                }
            }
            And | Or => unreachable!("handled above"),
        };
        Ok(match op {
            Add | Sub | Mul | Shl => self.wrap_u8(r, s),
            _ => r,
        })
    }

    /// `v as to` with Rust semantics.
    fn cast(&mut self, v: Word, from: Scalar, to: Scalar) -> Word {
        if from == to {
            return v;
        }
        let ft = Ty::reg(from);
        let tt = Ty::reg(to);
        let tw = self.m.ty(tt);
        let bool_t = self.m.ty(Ty::Bool);
        if from == Scalar::Bool {
            let (one, zero) = if to.is_float() {
                (self.float_const(tt, 1.0), self.float_const(tt, 0.0))
            } else {
                (self.int_const(tt, 1), self.int_const(tt, 0))
            };
            return spv(self.m.b.select(tw, None, v, one, zero));
        }
        if to == Scalar::Bool {
            return if from.is_float() {
                let z = self.float_const(ft, 0.0);
                spv(self.m.b.f_unord_not_equal(bool_t, None, v, z))
            } else {
                let z = self.int_const(ft, 0);
                spv(self.m.b.i_not_equal(bool_t, None, v, z))
            };
        }
        match (from.is_float(), to.is_float()) {
            (false, false) => {
                let r = self.int_cast(v, ft, tt);
                self.wrap_u8(r, to)
            }
            (false, true) => {
                if from.is_signed_int() {
                    spv(self.m.b.convert_s_to_f(tw, None, v))
                } else {
                    spv(self.m.b.convert_u_to_f(tw, None, v))
                }
            }
            (true, true) => spv(self.m.b.f_convert(tw, None, v)),
            (true, false) => {
                // Saturating: [lo, hi1) converts; below → MIN, above → MAX, NaN → 0.
                let (lo, hi1, min, max): (f64, f64, i64, i64) = match to {
                    Scalar::I32 => (
                        -2147483648.0,
                        2147483648.0,
                        i32::MIN as i64,
                        i32::MAX as i64,
                    ),
                    Scalar::U32 => (0.0, 4294967296.0, 0, u32::MAX as i64),
                    Scalar::U8 => (0.0, 256.0, 0, 255),
                    _ => (
                        -9223372036854775808.0,
                        9223372036854775808.0,
                        i64::MIN,
                        i64::MAX,
                    ),
                };
                let lo_c = self.float_const(ft, lo);
                let hi_c = self.float_const(ft, hi1);
                let zero_f = self.float_const(ft, 0.0);
                let min_c = self.int_const(tt, min);
                let max_c = self.int_const(tt, max);
                let zero = self.int_const(tt, 0);
                let ftw = self.m.ty(ft);
                let bm = &mut self.m.b;
                let below = spv(bm.f_ord_less_than(bool_t, None, v, lo_c));
                let above = spv(bm.f_ord_greater_than_equal(bool_t, None, v, hi_c));
                let nan = spv(bm.is_nan(bool_t, None, v));
                let in_lo = spv(bm.f_ord_greater_than_equal(bool_t, None, v, lo_c));
                let in_hi = spv(bm.f_ord_less_than(bool_t, None, v, hi_c));
                let ok = spv(bm.logical_and(bool_t, None, in_lo, in_hi));
                let safe = spv(bm.select(ftw, None, ok, v, zero_f));
                let r = if to.is_signed_int() {
                    spv(bm.convert_f_to_s(tw, None, safe))
                } else {
                    spv(bm.convert_f_to_u(tw, None, safe))
                };
                let r = spv(bm.select(tw, None, below, min_c, r));
                let r = spv(bm.select(tw, None, above, max_c, r));
                spv(bm.select(tw, None, nan, zero, r))
            }
        }
    }

    fn glsl(&mut self, t: Ty, op: GLOp, args: &[Word]) -> Word {
        let set = self.m.glsl();
        let tw = self.m.ty(t);
        spv(self.m.b.ext_inst(
            tw,
            None,
            set,
            op as u32,
            args.iter().map(|&a| Operand::IdRef(a)),
        ))
    }

    fn math(&mut self, m: MathFn, a: &[Word], s: Scalar) -> Word {
        use MathFn::*;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        if s.is_int() {
            let signed = s.is_signed_int();
            return match m {
                Abs if signed => self.glsl(t, GLOp::SAbs, a),
                Abs => a[0],
                Min => self.glsl(t, if signed { GLOp::SMin } else { GLOp::UMin }, a),
                Max => self.glsl(t, if signed { GLOp::SMax } else { GLOp::UMax }, a),
                _ => {
                    // clamp: `if x < lo { lo } else if x > hi { hi } else { x }`
                    let bm = &mut self.m.b;
                    let (lt, gt) = if signed {
                        (
                            spv(bm.s_less_than(bool_t, None, a[0], a[1])),
                            spv(bm.s_greater_than(bool_t, None, a[0], a[2])),
                        )
                    } else {
                        (
                            spv(bm.u_less_than(bool_t, None, a[0], a[1])),
                            spv(bm.u_greater_than(bool_t, None, a[0], a[2])),
                        )
                    };
                    let r = spv(bm.select(tw, None, gt, a[2], a[0]));
                    spv(bm.select(tw, None, lt, a[1], r))
                }
            };
        }
        match m {
            Abs => self.glsl(t, GLOp::FAbs, a),
            Min => self.glsl(t, GLOp::NMin, a),
            Max => self.glsl(t, GLOp::NMax, a),
            Clamp => {
                let bm = &mut self.m.b;
                let lt = spv(bm.f_ord_less_than(bool_t, None, a[0], a[1]));
                let r = spv(bm.select(tw, None, lt, a[1], a[0]));
                let gt = spv(bm.f_ord_greater_than(bool_t, None, r, a[2]));
                spv(bm.select(tw, None, gt, a[2], r))
            }
            Sqrt => self.glsl(t, GLOp::Sqrt, a),
            Floor => self.glsl(t, GLOp::Floor, a),
            Ceil => self.glsl(t, GLOp::Ceil, a),
            Trunc => self.glsl(t, GLOp::Trunc, a),
            Fma => self.glsl(t, GLOp::Fma, a),
            Round => {
                // Half away from zero: trunc(x) + sign(x) when |x - trunc(x)| >= 0.5.
                let tr = self.glsl(t, GLOp::Trunc, a);
                let half = self.float_const(t, 0.5);
                let zero = self.float_const(t, 0.0);
                let one = self.float_const(t, 1.0);
                let m1 = self.float_const(t, -1.0);
                let bm = &mut self.m.b;
                let d = spv(bm.f_sub(tw, None, a[0], tr));
                let set = self.m.glsl();
                let ad =
                    spv(self
                        .m
                        .b
                        .ext_inst(tw, None, set, GLOp::FAbs as u32, [Operand::IdRef(d)]));
                let bm = &mut self.m.b;
                let far = spv(bm.f_ord_greater_than_equal(bool_t, None, ad, half));
                let neg = spv(bm.f_ord_less_than(bool_t, None, a[0], zero));
                let sign = spv(bm.select(tw, None, neg, m1, one));
                let up = spv(bm.f_add(tw, None, tr, sign));
                spv(bm.select(tw, None, far, up, tr))
            }
            _ => {
                let op = match m {
                    Exp => GLOp::Exp,
                    Exp2 => GLOp::Exp2,
                    Log => GLOp::Log,
                    Log2 => GLOp::Log2,
                    Sin => GLOp::Sin,
                    Cos => GLOp::Cos,
                    Tan => GLOp::Tan,
                    Asin => GLOp::Asin,
                    Acos => GLOp::Acos,
                    Atan => GLOp::Atan,
                    Sinh => GLOp::Sinh,
                    Cosh => GLOp::Cosh,
                    Tanh => GLOp::Tanh,
                    Pow => GLOp::Pow,
                    _ => GLOp::Atan2,
                };
                if t == Ty::F64 {
                    // 32-bit only in GLSL.std.450: a function of our own.
                    self.f64_transcendental(m, a)
                } else {
                    self.glsl(t, op, a)
                }
            }
        }
    }
}

/// The old value of a compare-and-swap loop, in register type `t`.
fn old_after(w: &mut Writer<'_>, view: Ty, t: Ty, cur: Word) -> Word {
    if view == t {
        cur
    } else {
        let tw = w.m.ty(t);
        spv(w.m.b.bitcast(tw, None, cur))
    }
}

/// How a scalar travels in the argument block (u8/bool as u32).
fn arg_ty(s: Scalar) -> Ty {
    match s {
        Scalar::Bool | Scalar::U8 => Ty::U32,
        s => Ty::reg(s),
    }
}
