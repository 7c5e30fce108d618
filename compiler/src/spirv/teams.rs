//! Teams: a gang whose vector lanes fit in one subgroup.
//!
//! A gang loop (`Shape::Gang`) with `vector_length(v)` at most the device's
//! subgroup size runs each gang iteration on a *team* of `v` lanes of one
//! subgroup. A gang is `num_workers(w)` teams (the OpenACC workers; one
//! without the clause), so `num_gangs(g)` allows `g * w` teams. Each team
//! takes gang iterations of its own (`team, team + T, ..` over the
//! dispatch), so teams never wait for each other, and they share no
//! workgroup memory while they run: accl packs them into workgroups of the
//! default size (256 lanes) whatever `w` is. (On an H200, CSR SpMV with 32
//! workers of 32 lanes ran 1.2x slower in 1024-lane workgroups than in
//! 256-lane ones: fewer of the big ones fit on a multiprocessor.)
//!
//! * the lanes of a team are numbered by their place in the subgroup
//!   (`SubgroupId * S + SubgroupLocalInvocationId`), which puts a team
//!   inside one subgroup whatever the driver's mapping of local ids;
//! * the barriers of gang-redundant code and of `loop vector` are subgroup
//!   barriers, never workgroup barriers (teams of one workgroup are at
//!   different iterations);
//! * a `loop vector` reduction folds the team's lanes with
//!   `OpGroupNonUniformShuffleXor` at strides 1, 2, 4, .. (lane `i` combines
//!   with lane `i ^ s`): the same tree as the workgroup-memory fold, with
//!   no barrier, and every lane holds the same bits afterwards (IEEE
//!   addition and multiplication are commutative);
//! * the construct's reductions fold the teams' copies in team order
//!   through workgroup memory, once, after the gang loop.
//!
//! Otherwise (a larger `vector_length`, a run-time one, no subgroup
//! shuffles) the gang is one workgroup and `num_workers` is ignored.

use super::{spv, Writer};
use crate::kir::ReductionOp;
use crate::plan::Teams;
use lang::Scalar;
use rspirv::dr::Operand;
use rspirv::spirv::{BuiltIn, Capability, Decoration, StorageClass, Word};

use super::types::Ty;

const SCOPE_SUBGROUP: u32 = 3;
/// AcquireRelease | UniformMemory | WorkgroupMemory.
const BARRIER_SEMANTICS: u32 = 0x8 | 0x40 | 0x100;

impl Writer<'_> {
    /// A scalar `u32` built-in input (made on first use).
    pub(super) fn builtin_u32(&mut self, which: BuiltIn, name: &str) -> Word {
        let var = match self.scalar_builtins.iter().find(|(b, _)| *b == which) {
            Some(&(_, v)) => v,
            None => {
                let u32t = self.m.ty(Ty::U32);
                let v = self.gvar(u32t, StorageClass::Input, name);
                self.m
                    .b
                    .decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(which)]);
                self.scalar_builtins.push((which, v));
                v
            }
        };
        let u32t = self.m.ty(Ty::U32);
        spv(self.m.b.load(u32t, None, var, None, []))
    }

    /// This invocation's place in the workgroup, subgroup by subgroup.
    fn subgroup_place(&mut self) -> Word {
        self.m.add_cap(Capability::GroupNonUniform);
        let sg = self.builtin_u32(BuiltIn::SubgroupId, "gl_SubgroupID");
        let inv = self.builtin_u32(
            BuiltIn::SubgroupLocalInvocationId,
            "gl_SubgroupInvocationID",
        );
        let s = self.m.u32c(self.spec.subgroup_size);
        let u32t = self.m.ty(Ty::U32);
        let base = spv(self.m.b.i_mul(u32t, None, sg, s));
        spv(self.m.b.i_add(u32t, None, base, inv))
    }

    /// The lane of this invocation in its team (u32).
    pub(super) fn team_lane(&mut self, t: Teams) -> Word {
        let p = self.subgroup_place();
        let mask = self.m.u32c(t.lanes - 1);
        let u32t = self.m.ty(Ty::U32);
        spv(self.m.b.bitwise_and(u32t, None, p, mask))
    }

    /// This invocation's team in its workgroup (u32).
    pub(super) fn team_index(&mut self, t: Teams) -> Word {
        let p = self.subgroup_place();
        let shift = self.m.u32c(t.lanes.trailing_zeros());
        let u32t = self.m.ty(Ty::U32);
        spv(self.m.b.shift_right_logical(u32t, None, p, shift))
    }

    /// A barrier among the lanes of one subgroup (so of one team).
    pub(super) fn subgroup_barrier(&mut self) {
        let sg = self.m.u32c(SCOPE_SUBGROUP);
        let sem = self.m.u32c(BARRIER_SEMANTICS);
        spv(self.m.b.control_barrier(sg, sg, sem));
    }

    /// Fold `v` over the lanes of a team (strides 1, 2, .., lanes / 2);
    /// every lane gets the result.
    pub(super) fn team_reduce(&mut self, t: Teams, v: Word, op: ReductionOp, s: Scalar) -> Word {
        self.m.add_cap(Capability::GroupNonUniformShuffle);
        let tw = self.m.ty(Ty::reg(s));
        let scope = self.m.u32c(SCOPE_SUBGROUP);
        let mut acc = v;
        let mut stride = 1;
        while stride < t.lanes {
            let mask = self.m.u32c(stride);
            let other = if Ty::reg(s).size() == 8 {
                self.shuffle_xor_64(Ty::reg(s), acc, mask)
            } else {
                spv(self
                    .m
                    .b
                    .group_non_uniform_shuffle_xor(tw, None, scope, acc, mask))
            };
            // Lane i keeps combine(own, i ^ s): for the lower lane of a
            // pair the tree order of the workgroup fold; the upper lane's
            // swapped operands give the same bits.
            acc = self.combine(op, s, acc, other);
            stride *= 2;
        }
        acc
    }

    /// `OpGroupNonUniformShuffleXor` of a 64-bit value as two 32-bit
    /// halves (shuffling 64-bit types needs `shaderSubgroupExtendedTypes`).
    fn shuffle_xor_64(&mut self, t: Ty, v: Word, mask: Word) -> Word {
        let u64t = self.m.ty(Ty::U64);
        let u32t = self.m.ty(Ty::U32);
        let tw = self.m.ty(t);
        let scope = self.m.u32c(SCOPE_SUBGROUP);
        let thirty_two = self.m.u32c(32);
        let bm = &mut self.m.b;
        let bits = spv(bm.bitcast(u64t, None, v));
        let lo = spv(bm.u_convert(u32t, None, bits));
        let hi64 = spv(bm.shift_right_logical(u64t, None, bits, thirty_two));
        let hi = spv(bm.u_convert(u32t, None, hi64));
        let lo = spv(bm.group_non_uniform_shuffle_xor(u32t, None, scope, lo, mask));
        let hi = spv(bm.group_non_uniform_shuffle_xor(u32t, None, scope, hi, mask));
        let lo = spv(bm.u_convert(u64t, None, lo));
        let hi = spv(bm.u_convert(u64t, None, hi));
        let hi = spv(bm.shift_left_logical(u64t, None, hi, thirty_two));
        let bits = spv(bm.bitwise_or(u64t, None, hi, lo));
        spv(bm.bitcast(tw, None, bits))
    }

    /// The construct's reduction values of a team kernel: lane 0 of each
    /// team leaves its team's copy in workgroup memory, and invocation 0
    /// folds them in team order. Reached by every invocation (after the
    /// gang loop), in uniform control flow; the result is only meaningful
    /// in invocation 0.
    pub(super) fn teams_fold(&mut self, t: Teams, v: Word, op: ReductionOp, s: Scalar) -> Word {
        let st = super::partial_ty(s);
        let stw = self.m.ty(st);
        let arr = self.scratch(st);
        let pst = self.m.ptr(StorageClass::Workgroup, stw);
        let bool_t = self.m.ty(Ty::Bool);
        let zero = self.m.u32c(0);
        let lane = self.team_lane(t);
        let first = spv(self.m.b.i_equal(bool_t, None, lane, zero));
        let m = self.begin_if(first);
        let team = self.team_index(t);
        let slot = spv(self.m.b.access_chain(pst, None, arr, [team]));
        let enc = self.encode_partial(v, s);
        spv(self.m.b.store(slot, enc, None, []));
        self.end_if(m);
        self.wg_barrier();
        let p0 = spv(self.m.b.access_chain(pst, None, arr, [zero]));
        let first = spv(self.m.b.load(stw, None, p0, None, []));
        let mut acc = self.decode_partial(first, s);
        // Teams per workgroup are few (at most 1024 / lanes) and a
        // constant: a straight line of loads.
        for i in 1..t.per_group {
            let c = self.m.u32c(i);
            let p = spv(self.m.b.access_chain(pst, None, arr, [c]));
            let x = spv(self.m.b.load(stw, None, p, None, []));
            let x = self.decode_partial(x, s);
            acc = self.combine(op, s, acc, x);
        }
        // The next reduction's teams write the same slots: not before
        // invocation 0 has read these. (Without this barrier, on an H100, a
        // u8 `max` folded after a u8 `+` in one construct read the `+`'s
        // partial sums: 252 or 208 where the host gives 0.)
        self.wg_barrier();
        acc
    }
}

impl Writer<'_> {
    /// The workgroup size when a workgroup fold can go through subgroups:
    /// known when the module is written, made of whole subgroups, and at
    /// most a subgroup of subgroups (so the second level is one shuffle
    /// fold too).
    pub(super) fn subgroup_foldable_wg(&self) -> Option<u32> {
        let s = self.spec.subgroup_size;
        if s == 0 || self.k.vector_length_expr.is_some() || self.spec.spirv_version < (1, 3) {
            return None;
        }
        // Flat kernels with reductions and gangs launch at this size
        // (`work_group_size` of the runtime).
        let wg = self.k.vector_length.unwrap_or(self.spec.workgroup_size);
        (wg.is_multiple_of(s) && wg / s <= s && (wg / s).is_power_of_two()).then_some(wg)
    }

    /// [`Writer::wg_reduce`] through subgroups: each subgroup folds its
    /// lanes by shuffles, subgroup `i` leaves its value in slot `i`, and
    /// every subgroup folds the slots by shuffles again. Lane `i` combines
    /// with lane `i ^ s` at both levels, which is the workgroup tree's
    /// order (slot `i` takes slot `i + s`) when subgroups are consecutive
    /// runs of local ids; two barriers instead of one per tree level.
    /// Every invocation gets the result; reached in uniform control flow.
    pub(super) fn subgroup_wg_reduce(
        &mut self,
        wg: u32,
        v: Word,
        op: ReductionOp,
        s: Scalar,
    ) -> Word {
        let sub = self.spec.subgroup_size;
        let all = Teams {
            lanes: sub,
            per_gang: 1,
            per_group: wg / sub,
        };
        let mine = self.team_reduce(all, v, op, s);
        let st = super::partial_ty(s);
        let stw = self.m.ty(st);
        let arr = self.scratch(st);
        let pst = self.m.ptr(StorageClass::Workgroup, stw);
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        self.m.add_cap(Capability::GroupNonUniform);
        let sg = self.builtin_u32(BuiltIn::SubgroupId, "gl_SubgroupID");
        let inv = self.builtin_u32(
            BuiltIn::SubgroupLocalInvocationId,
            "gl_SubgroupInvocationID",
        );
        let zero = self.m.u32c(0);
        let first = spv(self.m.b.i_equal(bool_t, None, inv, zero));
        let m = self.begin_if(first);
        let slot = spv(self.m.b.access_chain(pst, None, arr, [sg]));
        let enc = self.encode_partial(mine, s);
        spv(self.m.b.store(slot, enc, None, []));
        self.end_if(m);
        self.wg_barrier();
        // Each run of `n` lanes holds the `n` slots in order, so every run
        // folds the same tree and every lane gets the result.
        let mask = self.m.u32c(wg / sub - 1);
        let at = spv(self.m.b.bitwise_and(u32t, None, inv, mask));
        let p = spv(self.m.b.access_chain(pst, None, arr, [at]));
        let x = spv(self.m.b.load(stw, None, p, None, []));
        let x = self.decode_partial(x, s);
        let slots = Teams {
            lanes: wg / sub,
            per_gang: 1,
            per_group: 1,
        };
        let r = self.team_reduce(slots, x, op, s);
        // Nobody may overwrite the slots before every subgroup has read them.
        self.wg_barrier();
        r
    }
}
