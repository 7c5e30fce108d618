//! Independence tested when a loop launches: a `parallel loop auto` (a
//! `kernels` loop) whose iterations the compiler cannot prove independent
//! from the program's text alone, because its array indices depend on
//! values only the launch knows. Needleman-Wunsch's anti-diagonals write
//! `(idx + 1) * M + (i + 1 - idx)` and read that minus 1, `M` and `M + 1`:
//! distinct iterations touch distinct elements unless `M - 1` divides one
//! of those distances within the trip count, that is unless `M` is 2 or 3.
//!
//! The compiler keeps both kernels: the loop in order on one lane and the
//! loop in parallel. A [`LaunchTest`] is made when everything the loop does
//! except its array accesses is an iteration's own (as the static proof
//! requires) and every index of every array it writes is affine in the
//! loop variable: sums, differences and products of the loop variable
//! (at most to the first power), integer constants and scalars that do not
//! change in the loop, through `let`s of the body and integer casts. At
//! each launch it evaluates every index at the loop's first, second and
//! last values, so it knows each one as `base + step * k` over the whole
//! range (no intermediate value outside its type: an affine value is
//! largest and smallest at the ends), and for each pair of accesses of
//! one array, one of them a write, solves `step * (k1 - k2) = base2 -
//! base1` for two distinct iterations. Anything it cannot decide (steps
//! that differ between the two accesses, a value outside its type, two
//! names of one array) runs the loop in order, as without the test.

use lang::hir::{self, BinOp, Expr, ExprH, LocalH, UnOp};
use lang::{Builtins, Scalar, Type};
use smallvec::SmallVec;

/// A node of an index expression, as the test evaluates it. Nodes come
/// after their operands and each distinct one is made once (the `let`s an
/// index goes through are shared by every access that reads them), so a
/// launch evaluates them all in one pass in order.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// The loop variable.
    Var,
    /// A scalar of the frame (by slot) that the loop does not change.
    Local(usize),
    Const(i128),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Neg(u32),
    Cast(u32),
}

/// One access of an array: its index list (root nodes) and whether it
/// writes.
type Access = (Vec<u32>, bool);

/// An access's indices at a launch, each as (value at the first
/// iteration, step).
type Line = SmallVec<[(i128, i128); 2]>;

/// How to decide at launch whether a loop's iterations are independent.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchTest {
    /// Index expressions' nodes and each one's type (`None`: an integer
    /// literal, checked as `i64`).
    nodes: Vec<(Node, Option<Scalar>)>,
    /// Per array the loop writes (its frame slot): each access's index
    /// list (root nodes) and whether it writes.
    written: Vec<(usize, Vec<Access>)>,
    /// Every array the loop touches, by frame slot.
    arrays: Vec<usize>,
    inclusive: bool,
}

/// How deep the test follows `let`s and nested operations.
const DEPTH: usize = 32;

impl LaunchTest {
    /// The test for `construct`, a one-level `parallel loop auto`; `None`
    /// when its iterations are not independent for a reason the launch's
    /// values cannot change (or when they need no test).
    pub fn of(
        program: &hir::Program,
        body: &hir::Body,
        construct: &hir::Construct,
        builtins: &Builtins,
    ) -> Option<LaunchTest> {
        let hir::ConstructBody::Loops { loops, body: block } = &construct.body else {
            return None;
        };
        if loops.len() != 1 || !construct.clauses.auto {
            return None;
        }
        let f = hir::ForLoop {
            header: loops[0].clone(),
            body: block.clone(),
        };
        let private = &construct.clauses.private;
        let w = crate::autovec::scalar_walk(program, body, builtins, &f, private)?;
        let b = Builder {
            program,
            body,
            builtins,
            var: f.header.var,
            walk: &w,
        };
        let mut t = LaunchTest {
            nodes: Vec::new(),
            written: Vec::new(),
            arrays: Vec::new(),
            inclusive: f.header.inclusive,
        };
        for (a, _, _) in &w.accesses {
            if !t.arrays.contains(&a.index()) {
                t.arrays.push(a.index());
            }
        }
        let written: Vec<LocalH> = w.accesses.iter().filter(|x| x.2).map(|x| x.0).collect();
        for &a in &written {
            if t.written.iter().any(|(s, _)| *s == a.index()) {
                continue;
            }
            let mut accesses = Vec::new();
            for (x, index, writes) in &w.accesses {
                if *x != a {
                    continue;
                }
                let mut roots = Vec::with_capacity(index.len());
                for &e in index {
                    roots.push(b.node(e, &mut t.nodes, 0)?.0);
                }
                accesses.push((roots, *writes));
            }
            let rank = accesses[0].0.len();
            if accesses.iter().any(|(r, _)| r.len() != rank) {
                return None;
            }
            t.written.push((a.index(), accesses));
        }
        (!t.written.is_empty()).then_some(t)
    }

    /// Are the iterations independent for the loop's bounds `lo`, `hi`
    /// (as written: `hi` included when the loop is `..=`), the frame's
    /// scalars (`scalar(slot, type)`, `None` when not an integer) and
    /// arrays (`same(slot, slot)`: one array under two names)? `false`
    /// whenever it cannot tell.
    pub fn independent(
        &self,
        lo: i128,
        hi: i128,
        scalar: &dyn Fn(usize, Scalar) -> Option<i128>,
        same: &dyn Fn(usize, usize) -> bool,
    ) -> bool {
        let end = if self.inclusive {
            hi.saturating_add(1)
        } else {
            hi
        };
        let trips = end.saturating_sub(lo);
        if trips <= 1 {
            return true;
        }
        for (w, _) in &self.written {
            if self.arrays.iter().any(|&o| o != *w && same(*w, o)) {
                return false;
            }
        }
        let last = end - 1;
        let Some(second) = lo.checked_add(1) else {
            return false;
        };
        // Every node at the first, second and last iteration.
        let n = self.nodes.len();
        let mut values: SmallVec<[Option<i128>; 96]> = smallvec::smallvec![None; 3 * n];
        let (first, rest) = values.split_at_mut(n);
        let (next, end_values) = rest.split_at_mut(n);
        self.eval(lo, scalar, first);
        self.eval(second, scalar, next);
        self.eval(last, scalar, end_values);
        for (_, accesses) in &self.written {
            // Each index as (value at `lo`, step).
            let mut lines: SmallVec<[(Line, bool); 8]> = SmallVec::new();
            for (roots, writes) in accesses {
                let mut line = SmallVec::new();
                for &r in roots {
                    let r = r as usize;
                    let (Some(v0), Some(v1), Some(vn)) = (first[r], next[r], end_values[r]) else {
                        return false;
                    };
                    let step = v1 - v0;
                    // Affine by construction; checked all the same.
                    if step.checked_mul(trips - 1).and_then(|s| s.checked_add(v0)) != Some(vn) {
                        return false;
                    }
                    line.push((v0, step));
                }
                lines.push((line, *writes));
            }
            for p in 0..lines.len() {
                for q in p..lines.len() {
                    if (lines[p].1 || lines[q].1) && !apart(&lines[p].0, &lines[q].0, trips) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Every node at loop value `k`, into `out` (`None`: a value outside
    /// its type, or made from one).
    fn eval(
        &self,
        k: i128,
        scalar: &dyn Fn(usize, Scalar) -> Option<i128>,
        out: &mut [Option<i128>],
    ) {
        for (i, &(node, ty)) in self.nodes.iter().enumerate() {
            let two = |a: u32, b: u32| out[a as usize].zip(out[b as usize]);
            let v = match node {
                Node::Var => Some(k),
                Node::Local(slot) => ty.and_then(|t| scalar(slot, t)),
                Node::Const(c) => Some(c),
                Node::Add(a, b) => two(a, b).and_then(|(x, y)| x.checked_add(y)),
                Node::Sub(a, b) => two(a, b).and_then(|(x, y)| x.checked_sub(y)),
                Node::Mul(a, b) => two(a, b).and_then(|(x, y)| x.checked_mul(y)),
                Node::Neg(a) => out[a as usize].and_then(i128::checked_neg),
                Node::Cast(a) => out[a as usize],
            };
            let range = ty.unwrap_or(Scalar::I64).int_range();
            out[i] = v.filter(|v| range.is_some_and(|(min, max)| (min..=max).contains(v)));
        }
    }
}

/// Do accesses `p` and `q` (each index as value at the first iteration and
/// step) of one array touch distinct elements in any two distinct
/// iterations of a loop of `trips` iterations? Both at one element in
/// iterations `k1`, `k2` means, at every axis, `step * (k1 - k2) = q0 -
/// p0` (with one step for both: else `false`, undecided).
fn apart(p: &[(i128, i128)], q: &[(i128, i128)], trips: i128) -> bool {
    let mut gap: Option<i128> = None;
    for (&(p0, ps), &(q0, qs)) in p.iter().zip(q) {
        if ps != qs {
            return false;
        }
        let Some(d) = q0.checked_sub(p0) else {
            return false;
        };
        if ps == 0 {
            if d != 0 {
                return true; // a fixed, different element on this axis
            }
            continue;
        }
        if d % ps != 0 {
            return true;
        }
        let g = d / ps;
        match gap {
            Some(prev) if prev != g => return true,
            _ => gap = Some(g),
        }
    }
    match gap {
        // One element for every iteration.
        None => false,
        Some(g) => g == 0 || g.unsigned_abs() >= trips.unsigned_abs(),
    }
}

/// Builds a test's nodes from the HIR.
struct Builder<'a> {
    program: &'a hir::Program,
    body: &'a hir::Body,
    builtins: &'a Builtins,
    var: LocalH,
    walk: &'a crate::autovec::Walk,
}

impl Builder<'_> {
    /// `e` as nodes (root, degree in the loop variable); `None` when it is
    /// not an integer expression affine in the loop variable.
    fn node(
        &self,
        e: ExprH,
        nodes: &mut Vec<(Node, Option<Scalar>)>,
        depth: usize,
    ) -> Option<(u32, u8)> {
        if depth > DEPTH {
            return None;
        }
        let ty = match self.body.ty(e) {
            Type::IntLit => None,
            t => Some(t.scalar().filter(|s| s.is_int())?),
        };
        let push = |n: Node, nodes: &mut Vec<(Node, Option<Scalar>)>| {
            let i = nodes.iter().position(|x| *x == (n, ty)).unwrap_or_else(|| {
                nodes.push((n, ty));
                nodes.len() - 1
            });
            i as u32
        };
        let d = depth + 1;
        Some(match &self.body.exprs[e] {
            Expr::Local(l) if *l == self.var => (push(Node::Var, nodes), 1),
            Expr::Local(l) => {
                let w = self.walk;
                let changes = w.declared.contains(l)
                    || w.assigned.iter().any(|a| a.0 == *l)
                    || w.updates.iter().any(|u| u.0 == *l);
                if !changes {
                    (push(Node::Local(l.index()), nodes), 0)
                } else {
                    let v = crate::autovec::let_value(
                        self.program,
                        self.body,
                        self.builtins,
                        *l,
                        self.var,
                        w,
                    )?;
                    self.node(v, nodes, d)?
                }
            }
            Expr::Const(v) => (push(Node::Const(v.as_i128()?), nodes), 0),
            Expr::Unary(UnOp::Neg, a) => {
                let (a, da) = self.node(*a, nodes, d)?;
                (push(Node::Neg(a), nodes), da)
            }
            Expr::Cast(a, _) => {
                let (a, da) = self.node(*a, nodes, d)?;
                (push(Node::Cast(a), nodes), da)
            }
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, da) = self.node(*a, nodes, d)?;
                let (b, db) = self.node(*b, nodes, d)?;
                match op {
                    BinOp::Add => (push(Node::Add(a, b), nodes), da.max(db)),
                    BinOp::Sub => (push(Node::Sub(a, b), nodes), da.max(db)),
                    _ if da + db > 1 => return None,
                    _ => (push(Node::Mul(a, b), nodes), da + db),
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::hir::{Stmt, StmtKind};

    /// The program `src` and the test of its first `auto` loop.
    fn test_of(src: &str) -> (hir::Program, Option<LaunchTest>) {
        let builtins = stdlib::builtins();
        let prog = lang::check_source(src, &builtins).unwrap().program;
        let c = find_auto(&prog.main.block).expect("an auto loop").clone();
        let t = LaunchTest::of(&prog, &prog.main, &c, &builtins);
        (prog, t)
    }

    fn find_auto(b: &[Stmt]) -> Option<&hir::Construct> {
        b.iter().find_map(|s| match &s.kind {
            StmtKind::Construct(c) if c.clauses.auto => Some(&**c),
            StmtKind::Construct(c) => match &c.body {
                hir::ConstructBody::Block(inner) => find_auto(inner),
                _ => None,
            },
            StmtKind::Block(inner) => find_auto(inner),
            StmtKind::For(f) => find_auto(&f.body),
            _ => None,
        })
    }

    /// The frame's integer scalars: `values` by name, the rest unknown.
    fn frame(
        prog: &hir::Program,
        values: &[(&str, i128)],
    ) -> impl Fn(usize, Scalar) -> Option<i128> {
        let by_slot: Vec<(usize, i128)> = values
            .iter()
            .map(|(n, v)| {
                let (h, _) = prog
                    .main
                    .locals
                    .iter()
                    .find(|(_, l)| l.name == *n)
                    .expect("a local");
                (h.index(), *v)
            })
            .collect();
        move |slot, _| by_slot.iter().find(|(s, _)| *s == slot).map(|x| x.1)
    }

    const NONE: &dyn Fn(usize, usize) -> bool = &|_, _| false;

    const NW: &str = "let m = 8; let a = zeros(i32, m * m); let r = zeros(i32, m * m);
        let i = 3;
        kernels copy(a) copyin(r) {
            for idx in 0..=i {
                let index = (idx + 1) * m + (i + 1 - idx);
                a[index] = max(a[index - 1 - m] + r[index], max(a[index - 1] - 1, a[index - m] - 1));
            }
        }";

    #[test]
    fn needleman_wunsch_anti_diagonals_are_apart_unless_m_is_2_or_3() {
        let (p, t) = test_of(NW);
        let t = t.expect("a launch test");
        // m - 1 must not divide 1, m or m + 1 within the trip count.
        for m in [4, 5, 8, 100, 16385] {
            let f = frame(&p, &[("m", m), ("i", 3)]);
            assert!(t.independent(0, 3, &f, NONE), "m = {m}");
        }
        // m = 3: the write at k and the read `- 1 - m` at k + 2 meet.
        assert!(!t.independent(0, 3, &frame(&p, &[("m", 3), ("i", 3)]), NONE));
        // ... but not in two iterations (a gap of 2 is past the range).
        assert!(t.independent(0, 1, &frame(&p, &[("m", 3), ("i", 1)]), NONE));
        // One array under two names: in order.
        let f = frame(&p, &[("m", 8), ("i", 3)]);
        assert!(!t.independent(0, 3, &f, &|_, _| true));
        // A scalar the launch does not know: in order.
        assert!(!t.independent(0, 3, &frame(&p, &[("m", 8)]), NONE));
    }

    #[test]
    fn nodes_are_made_once_after_their_operands() {
        // One pass in order evaluates them all: every operand is earlier,
        // and the `let index` the five accesses share is made once.
        let t = test_of(NW).1.unwrap();
        for (i, n) in t.nodes.iter().enumerate() {
            assert!(!t.nodes[..i].contains(n), "node {i} ({n:?}) repeats");
            let operands = match n.0 {
                Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => vec![a, b],
                Node::Neg(a) | Node::Cast(a) => vec![a],
                _ => vec![],
            };
            assert!(operands.iter().all(|&o| (o as usize) < i), "{:?}", t.nodes);
        }
        let muls = t
            .nodes
            .iter()
            .filter(|n| matches!(n.0, Node::Mul(..)))
            .count();
        assert_eq!(muls, 1, "`(idx + 1) * m` once: {:?}", t.nodes);
    }

    #[test]
    fn a_value_outside_its_type_is_undecided() {
        let (p, t) = test_of(NW);
        // (idx + 1) * m overflows i32.
        let f = frame(&p, &[("m", 1 << 30), ("i", 3)]);
        assert!(!t.unwrap().independent(0, 3, &f, NONE));
    }

    #[test]
    fn what_no_launch_value_can_change_gets_no_test() {
        // A scalar carried from one iteration to the next.
        let carried = "let n = 8; let a = zeros(i32, n); let s = 0;
            kernels copy(a) { for j in 0..n { a[j] = s; s = s * 2 + 1; } }";
        // (The `kernels` split makes this loop a serial part: no auto loop.)
        let builtins = stdlib::builtins();
        let prog = lang::check_source(carried, &builtins).unwrap().program;
        assert!(find_auto(&prog.main.block).is_none());
        // An index that is not affine in the loop variable.
        let square = "let n = 8; let a = zeros(i32, n * n + 1);
            kernels copy(a) { for j in 0..n { a[j * j] = a[j * j + 1] + 1; } }";
        assert!(test_of(square).1.is_none());
        // A division.
        let halves = "let n = 8; let a = zeros(i32, n);
            kernels copy(a) { for j in 0..n { a[j / 2] = a[j] + 1; } }";
        assert!(test_of(halves).1.is_none());
    }

    #[test]
    fn a_shifted_write_depends_on_its_distance() {
        let src = "let n = 8; let s = 1; let a = zeros(i32, 3 * n);
            kernels copy(a) { for j in 0..n { a[j + s] = a[j] + 1; } }";
        let (p, t) = test_of(src);
        let t = t.expect("a launch test");
        let at = |s: i128| frame(&p, &[("s", s)]);
        // Reading what the previous iteration wrote: in order.
        assert!(!t.independent(0, 8, &at(1), NONE));
        assert!(!t.independent(0, 8, &at(7), NONE));
        // A distance of the trip count or more: never met.
        assert!(t.independent(0, 8, &at(8), NONE));
        // Zero: each iteration its own element.
        assert!(t.independent(0, 8, &at(0), NONE));
    }

    #[test]
    fn every_iteration_writing_one_element_depends() {
        let src = "let n = 8; let a = zeros(i32, n); let k = 2;
            kernels copy(a) { for j in 0..n { a[k] = a[k] + j; } }";
        let (p, t) = test_of(src);
        let t = t.expect("a launch test");
        let f = frame(&p, &[("k", 2)]);
        assert!(!t.independent(0, 8, &f, NONE));
        assert!(t.independent(0, 1, &f, NONE));
    }

    #[test]
    fn axes_together_separate_accesses() {
        // a[j, c] written and a[j + 1, c + 1] read: apart on the second axis.
        let src = "let n = 8; let c = 1; let a = zeros(f32, n + 1, n + 1);
            kernels copy(a) { for j in 0..n { a[j, c] = a[j + 1, c + 1] * 2.0; } }";
        let (p, t) = test_of(src);
        let f = frame(&p, &[("c", 1)]);
        assert!(t.expect("a launch test").independent(0, 8, &f, NONE));
        // a[j, c] written and a[j + 1, c] read: the next iteration's element.
        let src = "let n = 8; let c = 1; let a = zeros(f32, n + 1, n + 1);
            kernels copy(a) { for j in 0..n { a[j, c] = a[j + 1, c] * 2.0; } }";
        let (p, t) = test_of(src);
        let f = frame(&p, &[("c", 1)]);
        assert!(!t.expect("a launch test").independent(0, 8, &f, NONE));
    }
}
