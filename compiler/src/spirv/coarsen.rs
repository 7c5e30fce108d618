//! Several iterations per trip of a flat kernel's grid-stride loop.
//!
//! A memory-bound element-wise kernel (copy, saxpy, a sum) has one load in
//! flight per invocation when each trip of the grid-stride loop runs one
//! iteration: the next load waits for the previous iteration's store, and
//! a GPU then cannot keep enough bytes in flight to reach its memory
//! bandwidth. With coarsening `u`, a trip runs iterations
//! `it, it + L, .., it + (u - 1) L` (`L` = lanes in the dispatch, so each
//! copy of the body is as coalesced as before), and when all `u` are in
//! range their array stores are issued after every copy's loads: the
//! driver sees `u` independent loads per array and schedules them
//! together. Iterations of a `parallel loop` are independent, so running
//! copy 2's loads before copy 1's stores is allowed; it is only done for
//! a body where that is also true *within* an iteration:
//!
//! * one loop level (no index splitting per copy);
//! * straight-line statements: local and element stores only (no `if`,
//!   loops, calls, atomics or barriers);
//! * no element load of an array after a store to that array.
//!
//! The last trip (some copies past the end) runs the copies one by one
//! behind a bounds test, stores in place.

use super::{spv, Writer};
use rspirv::spirv::{SelectionControl, Word};

use super::types::Ty;

impl Writer<'_> {
    /// The `n` iterations of one trip that starts at `cur` (index type):
    /// `cur, cur + stride, .., cur + (n - 1) stride`.
    pub(super) fn trip_iterations(&mut self, n: u32, cur: Word, stride: Word) -> Vec<Word> {
        let idx_w = self.m.ty(self.idx);
        (0..n)
            .map(|c| {
                if c == 0 {
                    cur
                } else {
                    let k = self.int_const(self.idx, c as i64);
                    let off = spv(self.m.b.i_mul(idx_w, None, stride, k));
                    spv(self.m.b.i_add(idx_w, None, cur, off))
                }
            })
            .collect()
    }

    /// The body of one trip of a coarsened flat loop at iteration `cur`
    /// (index type), `lanes` the dispatch's lanes (index type), `total`
    /// the iteration count, `lo` level 0's lower bound.
    pub(super) fn coarse_trip(
        &mut self,
        u: u32,
        cur: Word,
        lanes: Word,
        total: Word,
        lo: Word,
    ) -> Result<(), lang::Diag> {
        let k = self.k;
        let bool_t = self.m.ty(Ty::Bool);
        let copies = self.trip_iterations(u, cur, lanes);
        let var = (k.levels[0].var, k.levels[0].ty);
        let last = copies[copies.len() - 1];
        let full = spv(self.m.b.u_less_than(bool_t, None, last, total));
        let full_l = self.m.b.id();
        let tail_l = self.m.b.id();
        let merge = self.m.b.id();
        spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
        spv(self.m.b.branch_conditional(full, full_l, tail_l, []));

        // Every copy in range: loads first, stores after.
        self.label(full_l);
        self.deferred = Some(Vec::new());
        for &j in &copies {
            self.split_index(j, &[var], &[lo], &[0]);
            self.block(&k.entry, &k.entry.body)?;
        }
        for (ptr, v) in self.deferred.take().unwrap_or_default() {
            self.store_elem(ptr, v);
        }
        spv(self.m.b.branch(merge));

        // The last trip: each copy behind its bounds test.
        self.label(tail_l);
        for &j in &copies {
            let inside = spv(self.m.b.u_less_than(bool_t, None, j, total));
            let m = self.begin_if(inside);
            self.split_index(j, &[var], &[lo], &[0]);
            self.block(&k.entry, &k.entry.body)?;
            self.end_if(m);
        }
        spv(self.m.b.branch(merge));
        self.label(merge);
        Ok(())
    }
}
