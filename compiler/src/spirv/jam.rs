//! Several gang iterations at once per team ("unroll and jam").
//!
//! A team of a whole subgroup working on one gang iteration at a time (CSR
//! SpMV with `vector_length(32)`: one row per subgroup) waits for each
//! row's chain of dependent loads (bounds, then elements, then the gathered
//! values) before it starts the next: the GPU is latency-bound with memory
//! mostly idle. Teams of such kernels take `j` gang iterations per trip
//! (`it, it + G, ..`, `G` = teams in the dispatch) and run them side by
//! side: each top-level statement for every iteration in turn, and each
//! `loop vector` as one loop over the longest of the `j` ranges whose body
//! runs every iteration still in range. `j` iterations' loads are then in
//! flight together.
//!
//! This reorders statements of different gang iterations, which is allowed
//! because they are independent and, required here, the gang shares no
//! array through memory (no array is both read and written, so no barrier
//! either); each iteration gets its own copy of every local (the
//! construct's reduction copies excepted: updates of those stay in order
//! within the thread). A `break`/`continue`/`return` outside a nested
//! sequential loop would leave the other iterations' work, so such bodies
//! are not jammed. The last trip (some iterations past the end) runs its
//! iterations one after the other.

use super::{spv, Writer};
use crate::kir::{Function, StmtKind, VectorLoop};
use lang::Diag;
use rspirv::spirv::{SelectionControl, Word};

use super::types::Ty;

impl Writer<'_> {
    /// One trip of a jammed gang loop at gang iteration `cur` (index
    /// type); `stride` is the teams in the dispatch, `los`/`counts` the
    /// levels' lower bounds and trip counts.
    pub(super) fn jam_trip(
        &mut self,
        j: u32,
        cur: Word,
        stride: Word,
        total: Word,
        los: &[Word],
        counts: &[Word],
    ) -> Result<(), Diag> {
        let k = self.k;
        let f = &k.entry;
        let bool_t = self.m.ty(Ty::Bool);
        let its = self.trip_iterations(j, cur, stride);
        let vars: Vec<_> = k.levels.iter().map(|l| (l.var, l.ty)).collect();
        let full = spv(self
            .m
            .b
            .u_less_than(bool_t, None, its[its.len() - 1], total));
        let full_l = self.m.b.id();
        let tail_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(full, full_l, tail_l, []));

        // Every iteration in range: side by side, each with its locals.
        self.label(full_l);
        let base = self.locals.clone();
        let mut sets = vec![base.clone()];
        for _ in 1..j {
            let set: Vec<Word> = f
                .locals
                .iter()
                .map(|(h, l)| {
                    if k.reduction_locals.contains(&h) {
                        base[h.index()]
                    } else {
                        self.fvar(Ty::reg(l.ty), &l.name)
                    }
                })
                .collect();
            sets.push(set);
        }
        for (c, &it) in its.iter().enumerate() {
            self.locals = sets[c].clone();
            self.split_index(it, &vars, los, counts);
        }
        for s in &f.body {
            match &s.kind {
                StmtKind::VectorLoop(v) => self.jammed_vector_loop(f, v, &sets)?,
                _ => {
                    for set in &sets {
                        self.locals = set.clone();
                        self.stmt(f, s)?;
                    }
                }
            }
        }
        self.locals = base;
        spv(self.m.b.branch(merge));

        // The last trip: one iteration after the other.
        self.label(tail_l);
        for &it in &its {
            let inside = spv(self.m.b.u_less_than(bool_t, None, it, total));
            let m = self.begin_if(inside);
            self.split_index(it, &vars, los, counts);
            self.block(f, &f.body)?;
            self.end_if(m);
        }
        spv(self.m.b.branch(merge));
        self.label(merge);
        Ok(())
    }

    /// One `loop vector` for every local set in `sets`: over the longest
    /// range, each set's body behind its own range test.
    fn jammed_vector_loop(
        &mut self,
        f: &Function,
        v: &VectorLoop,
        sets: &[Vec<Word>],
    ) -> Result<(), Diag> {
        let Some(t) = self.teams else {
            return Err(super::ice(self.k.span, "a jammed loop without teams"));
        };
        let idx_w = self.m.ty(self.idx);
        let bool_t = self.m.ty(Ty::Bool);
        let mut bounds = Vec::new();
        let mut range: Option<(Word, Word)> = None;
        for set in sets {
            self.locals = set.clone();
            let (los, counts, total) = self.vector_bounds(f, v)?;
            range = Some(match range {
                None => (total, total),
                Some((short, long)) => {
                    let bm = &mut self.m.b;
                    let more = spv(bm.u_greater_than(bool_t, None, total, long));
                    let less = spv(bm.u_less_than(bool_t, None, total, short));
                    (
                        spv(bm.select(idx_w, None, less, total, short)),
                        spv(bm.select(idx_w, None, more, total, long)),
                    )
                }
            });
            bounds.push((los, counts, total));
        }
        let Some((shortest, longest)) = range else {
            return Err(super::ice(self.k.span, "a jammed loop of nothing"));
        };
        let lane = self.team_lane(t);
        let lane = self.int_cast(lane, Ty::U32, self.idx);
        let lanes = self.int_const(self.idx, t.lanes as i64);
        let vars: Vec<_> = v.levels.iter().map(|l| (l.var, l.ty)).collect();
        self.counted_loop(self.idx, (lane, longest, lanes), true, |w, rest| {
            // Inside every range (rows of equal length: always), the
            // bodies follow each other unguarded, so the driver can issue
            // their loads together; past the shortest, each behind its
            // own test.
            let all = spv(w.m.b.u_less_than(bool_t, None, rest, shortest));
            let all_l = w.m.b.id();
            let some_l = w.m.b.id();
            let joined = w.m.b.id();
            spv(w.m.b.selection_merge(joined, SelectionControl::NONE));
            spv(w.m.b.branch_conditional(all, all_l, some_l, []));
            w.label(all_l);
            for (set, (los, counts, _)) in sets.iter().zip(&bounds) {
                w.locals = set.clone();
                w.split_index(rest, &vars, los, counts);
                w.block(f, &v.body)?;
            }
            spv(w.m.b.branch(joined));
            w.label(some_l);
            for (set, (los, counts, total)) in sets.iter().zip(&bounds) {
                w.locals = set.clone();
                let inside = spv(w.m.b.u_less_than(bool_t, None, rest, *total));
                let m = w.begin_if(inside);
                w.split_index(rest, &vars, los, counts);
                w.block(f, &v.body)?;
                w.end_if(m);
            }
            spv(w.m.b.branch(joined));
            w.label(joined);
            Ok(())
        })?;
        for set in sets {
            self.locals = set.clone();
            self.vector_fold(f, v);
        }
        Ok(())
    }
}
