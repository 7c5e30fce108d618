//! The plan: how one kernel maps onto a device described by a [`Spec`],
//! decided in one place and read by everyone after it: the SPIR-V writer
//! ([`crate::spirv::write`] takes a plan), the launch path (work-group
//! size, dispatch size, argument bytes) and `--explain`.
//!
//! A [`Plan`] holds the team shape of a gang kernel ([`Teams`]: a gang's
//! vector lanes in one subgroup), the iterations each invocation runs per
//! trip ([`coarsening`]: grid-stride coarsening of a flat loop, unroll and
//! jam of a gang loop), the arrays whose atomics get a workgroup copy
//! ([`crate::privatise`]), the `cache` sections kept in workgroup memory,
//! the arrays reached by address ([`Spec::by_address`]) and the launch ABI
//! derived from all of them ([`ArgLayout`], [`PerInvocation`]). The loop
//! levels and the [`Shape`] are the kernel's own (lowering decides them).
//! What it reads of the body was found once when the kernel was lowered
//! ([`crate::kir::BodyFacts`]), so a plan is cheap enough to make at every
//! launch.

use crate::abi::{ArgLayout, PerInvocation};
use crate::kir::{Kernel, Shape, StmtKind};
use crate::privatise::{candidates, Fold};
use crate::spec::Spec;

/// How one kernel runs on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What it was made for.
    pub spec: Spec,
    /// A gang kernel's teams, or `None` where each gang is one workgroup.
    pub teams: Option<Teams>,
    /// Iterations per trip of the grid-stride loop (flat) or gang
    /// iterations per trip of a team (gang); 1: none.
    pub coarsening: u32,
    /// Per array: the fold of its workgroup copy, `None` for plain atomics.
    pub private: Vec<Option<Fold>>,
    /// The honoured `cache` statements, as places in the entry body.
    pub cached: Vec<usize>,
    /// The argument block and the bindings.
    pub layout: ArgLayout,
    /// Invocations stop before the driver's loop cap and resume in the
    /// next dispatch ([`crate::resume`]); the resume buffer is bound after
    /// the fault buffer.
    pub resume: bool,
    /// The kernel's loop back-edges, counted once here rather than at
    /// every launch.
    edges: Edges,
}

/// What [`Plan::one_lane_chunk`] and [`Plan::flat_chunk`] need of a
/// kernel's loops.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Edges {
    /// [`back_edges`] of the entry body.
    entry: Option<i128>,
    /// Every device function the kernel calls is free of loops.
    functions_straight: bool,
}

impl Edges {
    fn of(k: &Kernel) -> Edges {
        Edges {
            entry: back_edges(&k.entry, &k.entry.body),
            functions_straight: k
                .functions
                .iter()
                .all(|(_, f)| back_edges(f, &f.body) == Some(0)),
        }
    }
}

impl Plan {
    /// The plan of `k` on a device described by `spec`.
    pub fn of(k: &Kernel, spec: &Spec) -> Plan {
        let teams = teams(k, spec);
        let coarsening = coarsening(k, spec);
        let edges = Edges::of(k);
        Plan {
            spec: *spec,
            teams,
            coarsening,
            private: candidates(k, spec.checks),
            cached: honoured(k),
            layout: ArgLayout::of(k, spec),
            resume: spec.loop_cap
                && spec.uses_fault_buffer()
                && coarsening == 1
                && may_reach_loop_cap(k)
                && !runs_in_parts(k, edges)
                && crate::resume::resumable(k),
            edges,
        }
    }

    /// Iterations per dispatch of a kernel one invocation runs (`serial
    /// loop`, a `kernels` loop kept in order) on a driver with llvmpipe's
    /// loop cap, when one dispatch of all `total` of them could reach it
    /// and every loop in the body has a constant trip bound: the runtime
    /// then runs the iterations in turn over several dispatches, each far
    /// below the cap (construct reductions write one set of partials per
    /// dispatch). `invocations`: how many the dispatch has. `None`: one
    /// dispatch (short enough, run by several invocations, or a bound not
    /// known).
    pub fn one_lane_chunk(&self, k: &Kernel, total: u64, invocations: u64) -> Option<u64> {
        let one_lane = k.shape == Shape::Seq || (k.shape == Shape::Flat && invocations == 1);
        if !one_lane || !self.edges.functions_straight {
            return None;
        }
        // Each iteration's own loops, and the turn of the kernel's loop.
        let per = self.edges.entry?.checked_add(1)?;
        let chunk = (PER_DISPATCH / per).max(1) as u64;
        (chunk < total).then_some(chunk)
    }

    /// Iterations per dispatch of a flat kernel (`invocations` of them,
    /// each taking every `invocations`-th iteration) on a driver with
    /// llvmpipe's loop cap, when one dispatch of all `total` could give an
    /// invocation enough turns of its grid-stride loop to reach the cap:
    /// with 65,536 invocations (lavapipe's), 2^32 iterations and more did,
    /// and the driver silently skipped the last turns. Each part gives an
    /// invocation at most [`PER_DISPATCH`] back-edges counting the body's
    /// bounded loops; loops without a bound count for nothing here (the
    /// cut guard watches them, [`may_reach_loop_cap`]). `None`: one
    /// dispatch.
    pub fn flat_chunk(&self, k: &Kernel, total: u64, invocations: u64) -> Option<u64> {
        if k.shape != Shape::Flat || k.tile.is_some() || invocations == 0 {
            return None;
        }
        let per = self.edges.entry.unwrap_or(0).saturating_add(1);
        let turns = (PER_DISPATCH / per).max(1) as u64;
        let chunk = invocations.saturating_mul(turns);
        (chunk < total).then_some(chunk)
    }

    /// How the dispatch size follows from the iterations.
    pub fn per_invocation(&self) -> PerInvocation {
        PerInvocation {
            teams_per_gang: self.teams.map_or(1, |t| t.per_gang),
            teams_per_group: self.teams.map_or(1, |t| t.per_group),
            coarsening: self.coarsening,
        }
    }

    /// Is array `i` reached through its device address?
    pub fn addressed(&self, i: usize) -> bool {
        Spec::addressed(self.spec.by_address, i)
    }
}

impl PerInvocation {
    /// What the module of `kernel` for `spec` does (the plan's, without
    /// the rest of the plan).
    pub fn of(kernel: &Kernel, spec: &Spec) -> PerInvocation {
        let teams = teams(kernel, spec);
        PerInvocation {
            teams_per_gang: teams.map_or(1, |t| t.per_gang),
            teams_per_group: teams.map_or(1, |t| t.per_group),
            coarsening: coarsening(kernel, spec),
        }
    }
}

/// How a gang kernel's teams sit in its workgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Teams {
    /// Vector lanes of one team (a power of two, at most the subgroup size).
    pub lanes: u32,
    /// Teams per gang (`num_workers`, else 1).
    pub per_gang: u32,
    /// Teams per workgroup (a multiple of the teams per subgroup).
    pub per_group: u32,
}

impl Teams {
    /// Invocations of one workgroup.
    pub fn workgroup_size(&self) -> u32 {
        self.lanes * self.per_group
    }
}

/// The teams of `k` on a device described by `spec`, or `None` where each
/// gang is one workgroup.
pub fn teams(k: &Kernel, spec: &Spec) -> Option<Teams> {
    let s = spec.subgroup_size;
    if k.shape != Shape::Gang
        || s == 0
        || !s.is_power_of_two()
        || spec.spirv_version < (1, 3)
        || k.vector_length_expr.is_some()
        || k.facts.caches
    {
        return None;
    }
    let lanes = match (k.vector_length, k.num_workers) {
        (Some(v), _) => v,
        // Workers without a vector length: a subgroup each.
        (None, Some(_)) => s,
        (None, None) => return None,
    };
    if lanes > s || !lanes.is_power_of_two() {
        return None;
    }
    let per_subgroup = s / lanes;
    // Whole subgroups, about the default workgroup size.
    let subgroups = (spec.workgroup_size / s)
        .max(1)
        .min(spec.max_workgroup_size / s);
    if subgroups == 0 {
        return None;
    }
    Some(Teams {
        lanes,
        per_gang: k.num_workers.unwrap_or(1),
        per_group: subgroups * per_subgroup,
    })
}

/// Iterations per trip of `k`'s grid-stride loop under `spec` (1: none);
/// for a gang loop, gang iterations per trip of a team (`crate::spirv::jam`).
pub fn coarsening(k: &Kernel, spec: &Spec) -> u32 {
    if k.shape == Shape::Gang {
        return jam(k, spec);
    }
    let u = match k.reductions.is_empty() {
        true => spec.coarsen,
        false => spec.coarsen_reduction,
    };
    if u <= 1
        || k.shape != Shape::Flat
        || k.levels.len() != 1
        || spec.checks
        || k.private_atomics
        || !k.facts.straight_line
    {
        return 1;
    }
    u as u32
}

/// Gang iterations per trip of a team of `k` under `spec` (1: none).
fn jam(k: &Kernel, spec: &Spec) -> u32 {
    let Some(t) = teams(k, spec) else {
        return 1;
    };
    // Four rows in flight per subgroup, counting the subgroup's teams.
    // (On an H200's SpMV, 2 and 8 were slower than 4.)
    let j = (4 * t.lanes / spec.subgroup_size).max(1);
    if j == 1 || spec.checks || k.facts.shares_memory || !k.facts.no_early_exit {
        return 1;
    }
    j
}

/// The `cache` statements of `k` that are honoured: at the top level of a
/// gang loop's iteration body (as places in the entry body).
fn honoured(k: &Kernel) -> Vec<usize> {
    if k.shape != Shape::Gang {
        return Vec::new();
    }
    k.entry
        .body
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.kind, StmtKind::Cache { .. }))
        .map(|(i, _)| i)
        .collect()
}

/// Whether the module of `k` under `spec` keeps workgroup copies of arrays
/// updated by atomics: its launch should then give each workgroup many
/// iterations, so the copy's setup and fold are paid rarely. (No walk of the
/// kernel: this is on the launch path.)
pub fn privatises_atomics(k: &Kernel, spec: &Spec) -> bool {
    k.private_atomics && !spec.checks
}

/// Whether one invocation of `k` may take 65,535 loop back-edges, the
/// hidden cap of llvmpipe ([`Spec::loop_cap`]). A flat kernel is launched
/// in parts that give each invocation a bounded number of turns
/// ([`Plan::flat_chunk`]), so it cannot get there when its loops have small
/// constant trip bounds ([`crate::bounded`]: Mandelbrot's escape loop) and
/// it calls no function that loops. Everything else may: a gang kernel, one
/// whose gangs or lanes its clauses count (`serial` is one of each, walking
/// every iteration itself), one with reductions (fewer, longer-lived
/// invocations), or loops without a bound.
pub fn may_reach_loop_cap(k: &Kernel) -> bool {
    /// Per iteration of the kernel, invocations may take at most this many
    /// back-edges and still stay far below the cap.
    const SMALL: i128 = 1024;
    if k.shape != Shape::Flat
        || k.num_gangs_expr.is_some()
        || k.vector_length.is_some()
        || k.vector_length_expr.is_some()
        || k.functions
            .iter()
            .any(|(_, f)| back_edges(f, &f.body) != Some(0))
    {
        return true;
    }
    match back_edges(&k.entry, &k.entry.body) {
        Some(0) => false,
        Some(n) => !k.reductions.is_empty() || k.private_atomics || n > SMALL,
        None => true,
    }
}

/// Back-edges one dispatch of an invocation may take on a driver with
/// llvmpipe's loop cap: the cap (65,535) less a margin.
const PER_DISPATCH: i128 = 60_000;

/// Whether a `seq` kernel runs in parts when long
/// ([`Plan::one_lane_chunk`]): its loops all have constant bounds. Then it
/// need not resume: its parts are recorded at once, with no wait between
/// them.
fn runs_in_parts(k: &Kernel, edges: Edges) -> bool {
    k.shape == Shape::Seq && edges.functions_straight && edges.entry.is_some()
}

/// The most loop back-edges one run of block `b` of `f` can take, where
/// every loop in it has a constant trip bound ([`crate::bounded`]).
fn back_edges(f: &crate::kir::Function, b: &crate::kir::Block) -> Option<i128> {
    let mut total: i128 = 0;
    for (i, s) in b.iter().enumerate() {
        let n = match &s.kind {
            StmtKind::Loop { body, continuing } => {
                let trips = crate::bounded::trip_bound(f, &b[..i], body, continuing)?;
                let inner = back_edges(f, body)?.checked_add(back_edges(f, continuing)?)?;
                (trips + 1).checked_mul(inner + 1)?
            }
            StmtKind::VectorLoop(_) => return None,
            StmtKind::If { then, els, .. } => {
                back_edges(f, then)?.checked_add(back_edges(f, els)?)?
            }
            _ => 0,
        };
        total = total.checked_add(n)?.checked_add(float_rems(f, &s.kind))?;
    }
    Some(total)
}

/// The back-edges of the float `%`s in statement `s`'s own expressions
/// (not in its blocks): each is a loop on the device
/// ([`crate::spirv::rem_back_edges`]), bounded but long in the worst case.
fn float_rems(f: &crate::kir::Function, s: &StmtKind) -> i128 {
    use crate::kir::{Expr, ExprH};
    fn tree(f: &crate::kir::Function, e: ExprH) -> i128 {
        let here = match &f.exprs[e] {
            Expr::Binary(lang::hir::BinOp::Rem, a, _) => crate::spirv::rem_back_edges(f.ty(*a)),
            _ => 0,
        };
        f.exprs[e]
            .operands()
            .into_iter()
            .fold(here, |n, k| n.saturating_add(tree(f, k)))
    }
    let roots: Vec<ExprH> = match s {
        StmtKind::Store { value, .. } | StmtKind::Eval(value) => vec![*value],
        StmtKind::StoreElem { index, value, .. } => index.iter().chain([value]).copied().collect(),
        StmtKind::If { cond, .. } => vec![*cond],
        StmtKind::Return(v) => v.iter().copied().collect(),
        StmtKind::ReturnTuple(v) | StmtKind::CallTuple { args: v, .. } => v.clone(),
        StmtKind::Cache { lo, .. } => vec![*lo],
        _ => Vec::new(),
    };
    roots
        .into_iter()
        .map(|e| tree(f, e))
        .fold(0, i128::saturating_add)
}
