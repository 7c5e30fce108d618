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
//!   `f64::min`); `clamp` is the host's `min(max(x, lo), hi)` built from them
//!   (a NaN `x` gives `min(lo, hi)`, and `lo > hi` gives `hi`); `round` rounds half away from zero (GLSL's `Round` does not say
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
//! * NaN payloads are not kept; signed zeros, infinities and NaNs are kept
//!   where the device offers the `SignedZeroInfNanPreserve` execution mode
//!   ([`crate::Spec::preserve_float`], asked for in `entry`), and a driver
//!   may ignore it (lavapipe does); subnormals are kept where it offers
//!   `DenormPreserve` ([`crate::Spec::preserve_denorms`]) and may be
//!   flushed to zero elsewhere (NVIDIA's driver flushes f32 ones).
//!
//! Float `%` is exact, the host's remainder bit for bit (not `OpFRem`, whose
//! precision is the driver's: llvmpipe's is `x - y*trunc(x/y)`): a function
//! per float type ([`frem`]), a bounded loop of exact subtractions.
//!
//! f32 `/` and `sqrt` are correctly rounded where [`crate::Spec::exact_f32`]
//! asks: in f64, or by the driver's approximation refined with `fma` and an
//! exact rounding test ([`exact32`]).
//!
//! The writer's parts (private modules but [`types`]): this file holds
//! [`write()`], the writer's state, the module scope (buffers, the argument
//! block, the work-group size), device functions and small helpers
//! (variables, built-ins, barriers, selections); `entry` writes the entry
//! point and its loop, `block` statements and expressions, `scalar` the
//! scalar operations above, `atomics` the atomics, `reduce` the workgroup
//! fold of reductions, `vector` `loop vector`, [`types`] types and
//! constants, and `checks` bounds-check mode and the watchdog. The mappings
//! onto the device have a module each: `teams`, `coarsen`, `jam`, `tiles`,
//! `private` (privatised atomics) and `cache`; `f64math` holds the f64
//! transcendentals, `frem` float `%` and `exact32` the exact f32 `/` and
//! `sqrt` (`fnbody`: what their function bodies share).

mod address;
mod atomics;
mod block;
mod cache;
mod checks;
mod coarsen;
mod copies;
mod entry;
mod exact32;
mod f64math;
mod fnbody;
mod frem;
mod jam;
mod private;
mod reduce;
mod resume;
mod scalar;
mod teams;
mod texels;
mod tiles;
mod tuples;
pub mod types;
mod vector;
mod writer;

use crate::abi::{ArgLocation, FieldKind, FieldTy, IndexWidth};
use crate::kir::*;
use crate::plan::Plan;
pub use crate::plan::{coarsening, privatises_atomics, teams, Teams};
use crate::validate::Validated;
use crate::Spec;
use atomics::storage_views;
pub(crate) use frem::back_edges as rem_back_edges;
use lang::{Diag, Scalar, Value};
use reduce::partial_ty;
use rspirv::binary::Assemble;
use rspirv::dr::Operand;
use rspirv::spirv::{
    BuiltIn, Decoration, FunctionControl, MemoryModel, SelectionControl, StorageClass, Word,
};
use types::Ty;
use writer::{ice, spv, Writer};

/// Write a validated kernel as a SPIR-V module, as `plan` maps it.
pub fn write(kernel: Validated<'_>, plan: &Plan) -> Result<Vec<u32>, Diag> {
    let k = kernel.kernel();
    let spec = &plan.spec;
    let mut needs = k.features;
    if spec.index_width == IndexWidth::U64 {
        needs.int64 = true;
    }
    if (0..k.arrays.len()).any(|a| Spec::addressed(spec.by_address, a)) {
        // Addresses are 64-bit integers.
        needs.buffer_device_address = true;
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
    let mut w = Writer::new(k, plan);
    w.views = views;
    w.module_scope();
    w.functions()?;
    w.entry()?;
    w.f64_functions();
    w.rem_functions();
    w.exact32_functions();
    w.m.finish_header();
    Ok(w.m.b.module().assemble())
}

fn help_for(missing: &[&str]) -> String {
    let mut h = Vec::new();
    for m in missing {
        h.push(match *m {
            "shaderFloat64" => "use `f32` instead of `f64` in this kernel, or run it on the host with `if(false)`",
            "shaderInt64" => "use `i32` instead of `i64` in this kernel (arrays under 2^31 elements index in 32 bits)",
            "shaderBufferInt64Atomics" => "use 32-bit elements for atomics on this device (i64 atomics and f64 atomics without a native add need 64-bit integer atomics)",
            "bufferDeviceAddress" => "keep a smaller section of the array on the device at a time (`copyin(a[lo:n])`): without buffer addresses a kernel sees at most maxStorageBufferRange bytes of an array",
            _ => "store `u32` instead of `u8`/`bool` arrays, or run it on the host with `if(false)`",
        });
    }
    h.join("; ")
}

impl Writer<'_> {
    /// Which arrays the kernel writes (element stores, atomics), by index.
    fn written_arrays(&self) -> Vec<bool> {
        crate::facts::array_access(self.k).1
    }

    /// Memory model, built-ins, buffers, the argument block, the work-group size.
    fn module_scope(&mut self) {
        let addressing = self.addressing_model();
        let m = &mut self.m;
        m.b.memory_model(addressing, MemoryModel::GLSL450);
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
        let coherent = if self.spec.coherent_writes {
            crate::facts::coherent(self.k)
        } else {
            vec![false; self.k.arrays.len()]
        };
        for (i, (_, a)) in self.k.arrays.iter().enumerate() {
            if self.spec.texel(i) {
                let v = self.declare_texels(i, self.views[i], &a.name);
                self.buffers.push(None);
                self.texels.push(Some(v));
                continue;
            }
            self.texels.push(None);
            if self.addressed(i) {
                self.buffers.push(None);
                continue;
            }
            let st = self.m.buffer_struct(self.views[i]);
            let v =
                self.m
                    .bound_variable(StorageClass::StorageBuffer, st, i as u32, a.name.clone());
            if !written[i] {
                self.m.b.decorate(v, Decoration::NonWritable, []);
            } else if coherent[i] {
                self.m.b.decorate(v, Decoration::Coherent, []);
            }
            self.buffers.push(Some(v));
        }
        let a_count = self.k.arrays.len() as u32;
        for (r, red) in self.k.reductions.iter().enumerate() {
            let st = self.m.buffer_struct(partial_ty(red.ty));
            let v = self.m.bound_variable(
                StorageClass::StorageBuffer,
                st,
                a_count + r as u32,
                format!("{}_partials", red.name),
            );
            self.partials.push(v);
        }
        self.declare_fault_buffer();
        self.declare_resume();

        // The argument block.
        let member_tys: Vec<Word> = self
            .layout
            .fields
            .clone()
            .iter()
            .map(|f| match f.ty {
                FieldTy::Index => self.m.ty(self.idx),
                FieldTy::Scalar(s) => self.m.ty(arg_ty(s)),
                FieldTy::Address => self.m.ty(Ty::U64),
            })
            .collect();
        // Its own id: a tuple's struct of the same members is another type.
        let id = self.m.b.id();
        let st = self.m.b.type_struct_id(Some(id), member_tys);
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
            FieldKind::First => "first".into(),
            FieldKind::Count(l) => format!("count{l}"),
            FieldKind::Lo(l) => format!("lo{l}"),
            FieldKind::Base(a) => {
                format!("{}_base", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Dim(a, d) => {
                format!("{}_dim{d}", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Addr(a) => {
                format!("{}_addr", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Len(a) => {
                format!("{}_len", self.k.arrays[lang::arena::Handle::new(a)].name)
            }
            FieldKind::Param(p) => self.k.params[p].name.clone(),
        }
    }

    // ---- functions -----------------------------------------------------------

    fn functions(&mut self) -> Result<(), Diag> {
        self.func_ids = (0..self.k.functions.len()).map(|_| self.m.b.id()).collect();
        for (h, f) in self.k.functions.iter() {
            let ret = self.return_type(f);
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
                    None if !f.ret_tuple.is_empty() => self.return_zero_tuple(f),
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
            FieldTy::Address => Ty::U64,
        };
        let tw = self.m.ty(t);
        let p = self.m.ptr(self.args_class, tw);
        let ci = self.m.u32c(i);
        let ptr = spv(self.m.b.access_chain(p, None, self.args_var, [ci]));
        Ok(spv(self.m.b.load(tw, None, ptr, None, [])))
    }

    // ---- workgroup helpers ----------------------------------------------------

    /// A Function-class variable in the first block of the current function.
    fn fvar(&mut self, t: Ty, name: &str) -> Word {
        let tw = self.m.ty(t);
        self.fvar_of(tw, name)
    }

    /// [`Self::fvar`] of the type `tw`.
    fn fvar_of(&mut self, tw: Word, name: &str) -> Word {
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

    fn label(&mut self, id: Word) {
        self.cur_label = spv(self.m.b.begin_block(Some(id)));
        self.terminated = false;
    }
}

/// How a scalar travels in the argument block (u8/bool as u32).
fn arg_ty(s: Scalar) -> Ty {
    match s {
        Scalar::Bool | Scalar::U8 => Ty::U32,
        s => Ty::reg(s),
    }
}
