//! Stopping before llvmpipe's loop cap and resuming in the next dispatch
//! ([`crate::resume`] has the scheme and the slot layout): the resume
//! buffer, the state saved and loaded, the resume points at the tops of
//! loop bodies, and entry blocks that skip down to the point an invocation
//! stopped at.

use super::types::Ty;
use super::writer::Resume;
use super::{spv, Writer};
use crate::kir::{Block, Function, StmtKind};
use crate::resume::{local_words, points_in, DONE, HEAD_WORDS, TURNS};
use lang::{Diag, Scalar};
use rspirv::spirv::{StorageClass, Word};

impl Writer<'_> {
    /// Module scope: the resume buffer (after the fault buffer) and the
    /// invocation's private words, for a kernel whose plan resumes.
    pub(super) fn declare_resume(&mut self) {
        if !self.plan.resume {
            return;
        }
        let st = self.m.buffer_struct(Ty::U32);
        let binding = self.layout.num_bindings(self.k) + 1;
        let buf = self
            .m
            .bound_variable(StorageClass::StorageBuffer, st, binding, "accl_resume");
        self.late_globals.push((buf, StorageClass::StorageBuffer));
        let point = self.private_u32("accl_resume_point");
        let turns = self.private_u32("accl_turns");
        let slot = self.private_u32("accl_slot");
        self.resume = Some(Resume {
            buf,
            point,
            turns,
            slot,
            it: 0,
            next: 2,
        });
    }

    /// Word `i` (a `u32` value) of the resume buffer.
    fn resume_ptr(&mut self, i: Word) -> Word {
        let r = self.resume.expect("resume declared");
        let u32t = self.m.ty(Ty::U32);
        let p = self.m.ptr(StorageClass::StorageBuffer, u32t);
        let zero = self.m.u32c(0);
        spv(self.m.b.access_chain(p, None, r.buf, [zero, i]))
    }

    /// Word `k` of this invocation's slot.
    fn slot_ptr(&mut self, k: u32) -> Word {
        let r = self.resume.expect("resume declared");
        let u32t = self.m.ty(Ty::U32);
        let base = spv(self.m.b.load(u32t, None, r.slot, None, []));
        let kw = self.m.u32c(k);
        let i = spv(self.m.b.i_add(u32t, None, base, kw));
        self.resume_ptr(i)
    }

    /// At the entry's start, once `it` holds the invocation's first
    /// iteration: a finished invocation returns, a stopped one loads its
    /// state back and will skip down to its point, a fresh one goes on.
    pub(super) fn resume_begin(&mut self, it: Word) {
        let Some(r) = &mut self.resume else {
            return;
        };
        r.it = it;
        let r = *r;
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let uvec3 = self.m.ty(Ty::UVec3);
        let g = spv(self.m.b.load(uvec3, None, self.gid, None, []));
        let gx = spv(self.m.b.composite_extract(u32t, None, g, [0]));
        let stride = self.m.u32c(crate::resume::slot_words(self.k));
        let one = self.m.u32c(1);
        let at = spv(self.m.b.i_mul(u32t, None, gx, stride));
        let base = spv(self.m.b.i_add(u32t, None, at, one));
        spv(self.m.b.store(r.slot, base, None, []));
        let p = self.slot_ptr(0);
        let w0 = spv(self.m.b.load(u32t, None, p, None, []));
        let done = self.m.u32c(DONE);
        let finished = spv(self.m.b.i_equal(bool_t, None, w0, done));
        let m = self.begin_if(finished);
        spv(self.m.b.ret());
        self.label(m);
        // Stopped at the kernel loop's own point: it goes on from the
        // loop's top, skipping nothing.
        spv(self.m.b.store(r.point, w0, None, []));
        self.clear_point_if(r.point, 1);
        let zero = self.m.u32c(0);
        let stopped = spv(self.m.b.i_not_equal(bool_t, None, w0, zero));
        let m = self.begin_if(stopped);
        self.load_state(it);
        self.end_if(m);
    }

    /// At the entry's end: the invocation finished.
    pub(super) fn resume_end(&mut self) {
        if self.resume.is_none() {
            return;
        }
        let p = self.slot_ptr(0);
        let done = self.m.u32c(DONE);
        spv(self.m.b.store(p, done, None, []));
    }

    /// The kernel loop's counter, the watchdog's count and the entry's
    /// locals, from the slot.
    fn load_state(&mut self, it: Word) {
        let u32t = self.m.ty(Ty::U32);
        let lo_p = self.slot_ptr(1);
        let lo = spv(self.m.b.load(u32t, None, lo_p, None, []));
        let hi_p = self.slot_ptr(2);
        let hi = spv(self.m.b.load(u32t, None, hi_p, None, []));
        let v = self.join_words(lo, hi, self.idx);
        spv(self.m.b.store(it, v, None, []));
        if let Some(c) = self.count_var {
            let p = self.slot_ptr(3);
            let n = spv(self.m.b.load(u32t, None, p, None, []));
            spv(self.m.b.store(c, n, None, []));
        }
        let mut at = HEAD_WORDS;
        for (i, (_, l)) in self.k.entry.locals.iter().enumerate() {
            let t = Ty::reg(l.ty);
            let lo_p = self.slot_ptr(at);
            let lo = spv(self.m.b.load(u32t, None, lo_p, None, []));
            let v = if local_words(l.ty) == 2 {
                let hi_p = self.slot_ptr(at + 1);
                let hi = spv(self.m.b.load(u32t, None, hi_p, None, []));
                self.join_words(lo, hi, t)
            } else {
                self.value_of_word(lo, l.ty)
            };
            spv(self.m.b.store(self.locals[i], v, None, []));
            at += local_words(l.ty);
        }
    }

    /// Save the state in the slot, mark the slot stopped at `point` and the
    /// buffer's word 0, and return.
    fn save_and_stop(&mut self, point: u32) {
        let it = self.resume.expect("resume declared").it;
        let u32t = self.m.ty(Ty::U32);
        let idx_w = self.m.ty(self.idx);
        let cur = spv(self.m.b.load(idx_w, None, it, None, []));
        let (lo, hi) = self.split_words(cur, self.idx);
        let p = self.slot_ptr(1);
        spv(self.m.b.store(p, lo, None, []));
        let p = self.slot_ptr(2);
        spv(self.m.b.store(p, hi, None, []));
        if let Some(c) = self.count_var {
            let n = spv(self.m.b.load(u32t, None, c, None, []));
            let p = self.slot_ptr(3);
            spv(self.m.b.store(p, n, None, []));
        }
        let mut at = HEAD_WORDS;
        for (i, (_, l)) in self.k.entry.locals.iter().enumerate() {
            let t = self.m.ty(Ty::reg(l.ty));
            let v = spv(self.m.b.load(t, None, self.locals[i], None, []));
            if local_words(l.ty) == 2 {
                let (lo, hi) = self.split_words(v, Ty::reg(l.ty));
                let p = self.slot_ptr(at);
                spv(self.m.b.store(p, lo, None, []));
                let p = self.slot_ptr(at + 1);
                spv(self.m.b.store(p, hi, None, []));
            } else {
                let w = self.word_of(v, l.ty);
                let p = self.slot_ptr(at);
                spv(self.m.b.store(p, w, None, []));
            }
            at += local_words(l.ty);
        }
        let p = self.slot_ptr(0);
        let pw = self.m.u32c(point);
        spv(self.m.b.store(p, pw, None, []));
        let zero = self.m.u32c(0);
        let flag = self.resume_ptr(zero);
        let one = self.m.u32c(1);
        spv(self.m.b.store(flag, one, None, []));
        spv(self.m.b.ret());
    }

    /// A one-word local as its word.
    fn word_of(&mut self, v: Word, s: Scalar) -> Word {
        let u32t = self.m.ty(Ty::U32);
        match s {
            Scalar::Bool => {
                let one = self.m.u32c(1);
                let zero = self.m.u32c(0);
                spv(self.m.b.select(u32t, None, v, one, zero))
            }
            Scalar::I32 | Scalar::F32 => spv(self.m.b.bitcast(u32t, None, v)),
            _ => v,
        }
    }

    fn value_of_word(&mut self, w: Word, s: Scalar) -> Word {
        match s {
            Scalar::Bool => {
                let bool_t = self.m.ty(Ty::Bool);
                let zero = self.m.u32c(0);
                spv(self.m.b.i_not_equal(bool_t, None, w, zero))
            }
            Scalar::I32 | Scalar::F32 => {
                let t = self.m.ty(Ty::reg(s));
                spv(self.m.b.bitcast(t, None, w))
            }
            _ => w,
        }
    }

    /// A 32- or 64-bit value (`I64`, `U64`, `F64`, or the `U32` index) as
    /// its low and high words (0 for a 32-bit index).
    fn split_words(&mut self, v: Word, t: Ty) -> (Word, Word) {
        let u32t = self.m.ty(Ty::U32);
        if t == Ty::U32 {
            return (v, self.m.u32c(0));
        }
        let u64t = self.m.ty(Ty::U64);
        let u = if t == Ty::U64 {
            v
        } else {
            spv(self.m.b.bitcast(u64t, None, v))
        };
        let lo = spv(self.m.b.u_convert(u32t, None, u));
        let s32 = self.int_const(Ty::U64, 32);
        let h = spv(self.m.b.shift_right_logical(u64t, None, u, s32));
        let hi = spv(self.m.b.u_convert(u32t, None, h));
        (lo, hi)
    }

    /// The inverse of [`Self::split_words`].
    fn join_words(&mut self, lo: Word, hi: Word, t: Ty) -> Word {
        if t == Ty::U32 {
            return lo;
        }
        let u64t = self.m.ty(Ty::U64);
        let l = spv(self.m.b.u_convert(u64t, None, lo));
        let h = spv(self.m.b.u_convert(u64t, None, hi));
        let s32 = self.int_const(Ty::U64, 32);
        let h = spv(self.m.b.shift_left_logical(u64t, None, h, s32));
        let u = spv(self.m.b.bitwise_or(u64t, None, l, h));
        if t == Ty::U64 {
            u
        } else {
            let tw = self.m.ty(t);
            spv(self.m.b.bitcast(tw, None, u))
        }
    }

    /// At the top of the kernel loop's body (resume point 1): the turn
    /// counts, and at [`TURNS`] turns the invocation saves its state and
    /// returns. (Resuming at this point clears it before the loop, so the
    /// body runs as usual.)
    pub(super) fn resume_count(&mut self, point: u32) {
        let Some(r) = self.resume else {
            return;
        };
        let bool_t = self.m.ty(Ty::Bool);
        let n1 = self.count_turn(r.turns);
        let limit = self.m.u32c(TURNS);
        let over = spv(self.m.b.u_greater_than_equal(bool_t, None, n1, limit));
        let m = self.begin_if(over);
        self.save_and_stop(point);
        self.label(m);
    }

    /// The back-edge of a loop of the entry: the turn counts, and the
    /// loop goes round again only below [`TURNS`] (and where `again`, the
    /// watchdog's test, holds). No branch: on llvmpipe even a rarely taken
    /// branch in a loop costs about as much as a small body.
    pub(super) fn resume_back_edge(&mut self, again: Option<Word>) -> Word {
        let r = self.resume.expect("resume declared");
        let bool_t = self.m.ty(Ty::Bool);
        let n1 = self.count_turn(r.turns);
        let limit = self.m.u32c(TURNS);
        let go = spv(self.m.b.u_less_than(bool_t, None, n1, limit));
        match again {
            Some(a) => spv(self.m.b.logical_and(bool_t, None, a, go)),
            None => go,
        }
    }

    /// After a loop left by [`Self::resume_back_edge`] at [`TURNS`]: save
    /// the state (as at the loop's top) and return.
    pub(super) fn resume_stop_after(&mut self, point: u32) {
        let r = self.resume.expect("resume declared");
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let n = spv(self.m.b.load(u32t, None, r.turns, None, []));
        let limit = self.m.u32c(TURNS);
        let over = spv(self.m.b.u_greater_than_equal(bool_t, None, n, limit));
        let m = self.begin_if(over);
        self.save_and_stop(point);
        self.label(m);
    }

    /// Before a loop of the entry is entered: its resume point (the next
    /// number), cleared where the invocation resumes at it, so that it
    /// goes on from the loop's top as usual.
    pub(super) fn resume_enter_loop(&mut self, f: &Function) -> Option<u32> {
        if !self.resumes_in_block(f) {
            return None;
        }
        let r = self.resume.as_mut().expect("resume declared");
        let point = r.next;
        r.next += 1;
        let var = r.point;
        self.clear_point_if(var, point);
        Some(point)
    }

    /// `point = point == at ? 0 : point` (no branch).
    fn clear_point_if(&mut self, var: Word, at: u32) {
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let p = spv(self.m.b.load(u32t, None, var, None, []));
        let aw = self.m.u32c(at);
        let here = spv(self.m.b.i_equal(bool_t, None, p, aw));
        let zero = self.m.u32c(0);
        let np = spv(self.m.b.select(u32t, None, here, zero, p));
        spv(self.m.b.store(var, np, None, []));
    }

    /// Whether this statement runs: the invocation is not resuming, or
    /// resumes at one of its points `lo..lo + n`.
    fn runs(&mut self, lo: u32, n: u32) -> Word {
        let r = self.resume.expect("resume declared");
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let p = spv(self.m.b.load(u32t, None, r.point, None, []));
        let zero = self.m.u32c(0);
        let fresh = spv(self.m.b.i_equal(bool_t, None, p, zero));
        if n == 0 {
            return fresh;
        }
        let inside = self.resumes_in(p, lo, n);
        spv(self.m.b.logical_or(bool_t, None, fresh, inside))
    }

    /// `lo <= p < lo + n` (one unsigned compare).
    fn resumes_in(&mut self, p: Word, lo: u32, n: u32) -> Word {
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let low = self.m.u32c(lo);
        let off = spv(self.m.b.i_sub(u32t, None, p, low));
        let nw = self.m.u32c(n);
        spv(self.m.b.u_less_than(bool_t, None, off, nw))
    }

    /// The condition of an `if` holding resume points: its own where the
    /// invocation is not resuming, else whether the point is in `then`
    /// (whose points are numbered first).
    pub(super) fn resume_cond(&mut self, c: Word, then: &Block) -> Word {
        let Some(r) = self.resume else {
            return c;
        };
        let u32t = self.m.ty(Ty::U32);
        let bool_t = self.m.ty(Ty::Bool);
        let p = spv(self.m.b.load(u32t, None, r.point, None, []));
        let zero = self.m.u32c(0);
        let fresh = spv(self.m.b.i_equal(bool_t, None, p, zero));
        let n: u32 = then.iter().map(points_in).sum();
        let inside = self.resumes_in(p, r.next, n);
        spv(self.m.b.select(bool_t, None, fresh, c, inside))
    }

    /// Is `f` the entry, whose blocks skip down to a resume point?
    pub(super) fn resumes_in_block(&self, f: &Function) -> bool {
        self.resume.is_some() && !self.in_continuing && std::ptr::eq(f, &self.k.entry)
    }

    /// Does block `b` of `f` skip down to a resume point when resuming? A
    /// block without one never runs while the invocation resumes (the
    /// statement around it runs only when it is not, or resumes inside
    /// the branch or loop that holds the point): an innermost loop's body
    /// is written as it would be without resuming.
    pub(super) fn skips_in_block(&self, f: &Function, b: &Block) -> bool {
        self.resumes_in_block(f) && crate::resume::has_loop(b)
    }

    /// An entry block of a kernel that resumes: each run of statements
    /// without a resume point runs only when the invocation is not
    /// resuming; each statement with points, also when it resumes at one
    /// of them (module doc of [`crate::resume`]).
    pub(super) fn resuming_block(&mut self, f: &Function, b: &Block) -> Result<(), Diag> {
        let mut i = 0;
        while i < b.len() {
            if self.terminated {
                break; // dead code after break/continue
            }
            let n = points_in(&b[i]);
            let lo = self.resume.expect("resume declared").next;
            let end = if n == 0 {
                (i..b.len())
                    .find(|&j| points_in(&b[j]) > 0)
                    .unwrap_or(b.len())
            } else {
                i + 1
            };
            let go = self.runs(lo, n);
            let m = self.begin_if(go);
            for j in i..end {
                if self.terminated {
                    break;
                }
                if let StmtKind::Loop { body, continuing } = &b[j].kind {
                    self.bounded_next = self.count_var.is_some()
                        && crate::bounded::bounded(f, &b[..j], body, continuing);
                }
                self.stmt(f, &b[j])?;
            }
            if !self.terminated {
                spv(self.m.b.branch(m));
            }
            self.label(m);
            // Points of dead code inside the statement keep their numbers.
            if let Some(r) = &mut self.resume {
                r.next = lo + n;
            }
            i = end;
        }
        Ok(())
    }

    /// One more turn in the invocation's count `turns`: the new count.
    fn count_turn(&mut self, turns: Word) -> Word {
        let u32t = self.m.ty(Ty::U32);
        let n = spv(self.m.b.load(u32t, None, turns, None, []));
        let one = self.m.u32c(1);
        let n1 = spv(self.m.b.i_add(u32t, None, n, one));
        spv(self.m.b.store(turns, n1, None, []));
        n1
    }

    /// A per-invocation `u32` variable starting at zero, declared with the
    /// entry's other late globals (the watchdog's and resume's counters).
    pub(super) fn private_u32(&mut self, name: &str) -> Word {
        let zero = self.m.u32c(0);
        let u32t = self.m.ty(Ty::U32);
        let p = self.m.ptr(StorageClass::Private, u32t);
        let c = self
            .m
            .b
            .variable(p, None, StorageClass::Private, Some(zero));
        self.m.b.name(c, name);
        self.late_globals.push((c, StorageClass::Private));
        c
    }
}
