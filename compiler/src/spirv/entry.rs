//! The entry point `main`: the reduction copies, the loop of [`crate::abi`]
//! that the kernel's [`Shape`] asks for (grid-stride over iterations, gangs
//! or teams; tiled, coarsened or jammed where [`super::tiles`],
//! [`crate::plan::coarsening`] and [`super::jam`] apply), each workgroup's
//! reduction partials, and the entry point's interface and local size.

use super::reduce::partial_ty;
use super::types::Ty;
use super::{spv, Writer};
use crate::abi::FieldKind;
use crate::kir::Shape;
use lang::Diag;
use rspirv::spirv::{ExecutionMode, ExecutionModel, FunctionControl, LoopControl, StorageClass};

impl Writer<'_> {
    pub(super) fn entry(&mut self) -> Result<(), Diag> {
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
        self.leave_lanes_past_the_workgroup();

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
                let mut start = self.int_cast(gx, Ty::U32, self.idx);
                if self.layout.member(FieldKind::First).is_some() {
                    let from = self.load_arg(FieldKind::First)?;
                    start = spv(self.m.b.i_add(idx_w, None, from, start));
                }
                let stride = self.int_cast(stride32, Ty::U32, self.idx);
                spv(self.m.b.store(it, start, None, []));
                let total = self.load_arg(FieldKind::Total)?;
                (start, stride, total)
            }
            Shape::Seq => {
                // Invocation 0 of group 0 runs everything, in order: from
                // the dispatch's first iteration (a long run is split into
                // several dispatches on llvmpipe) up to its total.
                let total = self.load_arg(FieldKind::Total)?;
                let from = self.load_arg(FieldKind::First)?;
                let g = spv(self.m.b.load(uvec3, None, self.gid, None, []));
                let gx = spv(self.m.b.composite_extract(u32t, None, g, [0]));
                let z = self.m.u32c(0);
                let bool_t = self.m.ty(Ty::Bool);
                let first = spv(self.m.b.i_equal(bool_t, None, gx, z));
                let one = self.int_const(self.idx, 1);
                let start = spv(self.m.b.select(idx_w, None, first, from, total));
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
        self.resume_begin(it);
        self.private_begin();
        self.copies_begin()?;

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
        let exited = self.exit_flag();
        spv(self.m.b.branch(header));
        self.label(header);
        let bool_t = self.m.ty(Ty::Bool);
        let cur = spv(self.m.b.load(idx_w, None, it, None, []));
        let more = spv(self.m.b.u_less_than(bool_t, None, cur, total));
        spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
        self.header_branch(more, body, merge, exited);

        self.label(body);
        self.resume_count(1);
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
            counts.push(match (l, level.count) {
                (0, _) => 0,
                (_, Some(c)) => self.int_const(self.idx, c as i64),
                _ => self.load_arg(FieldKind::Count(l))?,
            });
        }
        let vars: Vec<_> = k.levels.iter().map(|l| (l.var, l.ty)).collect();
        let coarse = self.plan.coarsening;
        self.loops.push((merge, cont, exited));
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
        self.guarded_back_edge(header, merge);
        self.label(merge);
        if let Some(e) = exited {
            self.loop_exit_check(e, k.span);
        }
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
        self.resume_end();
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
            interface.extend(self.buffers.iter().flatten());
            interface.extend(self.texels.iter().flatten());
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
        // IEEE zeros, infinities and NaNs, as on the host: without the mode
        // Vulkan lets a driver assume there are none (fold `x * 0.0` to 0,
        // `0.0 - x` to `-x`; lavapipe does, and still does with it). And
        // subnormals: without that mode a driver may flush them to zero
        // (NVIDIA's does for f32, and does not offer the mode). Both core
        // in SPIR-V 1.4; before that they need an extension.
        if self.spec.spirv_version >= (1, 4) {
            use rspirv::spirv::Capability;
            let modes = [
                (
                    Capability::SignedZeroInfNanPreserve,
                    ExecutionMode::SignedZeroInfNanPreserve,
                    self.spec.preserve_float,
                ),
                (
                    Capability::DenormPreserve,
                    ExecutionMode::DenormPreserve,
                    self.spec.preserve_denorms,
                ),
            ];
            let f64 = self.spec.features.float64;
            for (cap, mode, [on32, on64]) in modes {
                for (width, on) in [(32, on32), (64, on64 && f64)] {
                    if on {
                        self.m.add_cap(cap);
                        self.m.b.execution_mode(main, mode, [width]);
                    }
                }
            }
        }
        Ok(())
    }
}
