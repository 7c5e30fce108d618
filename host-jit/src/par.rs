//! Plain host loops on several threads: a compiled `for` loop of host code
//! (not a compute construct) whose iterations are independent runs its
//! range in chunks on the machine's threads, with the results of running
//! it in order, as C compilers' auto-parallelisers do for loops they prove
//! independent (`-parallel`, `-Mconcur`).
//!
//! Part of the proof is static ([`ParTest::of`]): the body
//! - leaves the loop only by finishing a turn (no `break` of this loop, no
//!   `return`),
//! - assigns no top-level variable and calls no function that does
//!   (transitively), so what callees read cannot change meanwhile,
//! - assigns no scalar declared outside it except integer reductions
//!   (`s += e`, `s -= e`, `s *= e`, `s = s + e`, `s = min(s, e)`, `&`, `|`,
//!   `^`), whose variable it reads nowhere else: integer arithmetic wraps,
//!   so partial results combined in any order give the same bits (float
//!   sums would not, and stay in order),
//! - and indexes every array it writes, at every access of that array,
//!   with integer expressions affine in the loop counters: sums,
//!   differences and products (one factor free of counters) of counters,
//!   constants, scalars the loop does not change, integer casts, and
//!   `let`s of the body.
//!
//! The rest is decided when the loop starts ([`ParTest::plan`]), from the
//! values of those scalars, the loops' bounds (the counters of inner loops
//! need bounds the loop does not change) and the written arrays' shapes.
//! Every index node is evaluated at the corners of the counters' box, so
//! no intermediate value leaves its type (an affine value is largest and
//! smallest at corners) and each access's flat element index is known as
//! `c0 + C * p + sum(c_j * v_j)` for the parallel counter `p` and inner
//! counters `v_j`. Distinct iterations of `p` then touch distinct elements
//! of an array when every access of it has the same `C` and the other
//! terms split into multiples of some `G = K' * C` (`K'` at least the
//! number of iterations) and a rest whose values, over all accesses, lie
//! in one window of fewer than `|C|` elements: the "digit" `floor((index -
//! low) / C) mod K'` of an element is then `p mod K'`, different for every
//! iteration. That is how row-major initialisation loops index
//! (`a[k * nx + i]` over `i < nx`, `state[v * nz * nx + k * nx + i]`).
//! Two names of one array, or anything the test cannot decide, run the
//! loop in order.

use crate::plan::{Planner, Why};
use lang::hir::ReductionOp;
use lang::hir::{self, BinOp, Body, Expr, ExprH, ForLoop, LocalH, Place, Stmt, StmtKind, UnOp};
use lang::{Scalar, Span, Type};
use std::collections::{HashMap, HashSet};

/// A node of an index or bound expression, as the test evaluates it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// Loop counter `k` ([`ParTest::loops`]).
    Var(usize),
    /// A scalar of the loop's frame (by slot) that the loop does not change.
    Slot(usize),
    /// A top-level variable (by slot of the top-level frame).
    Global(usize),
    Const(i128),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Neg(u32),
    Cast(u32),
}

/// Where a scalar the test reads lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf {
    /// A slot of the frame running the loop.
    Slot(usize),
    /// A slot of the top-level frame.
    Global(usize),
}

/// How to decide, when a loop starts, whether its iterations may run on
/// several threads.
#[derive(Debug, Clone, PartialEq)]
pub struct ParTest {
    /// Nodes and each one's type (`None`: an integer literal, checked as
    /// `i64`).
    nodes: Vec<(Node, Option<Scalar>)>,
    /// Each counter's first bound, second bound and whether the range
    /// includes the second; the parallel loop's first.
    loops: Vec<(u32, u32, bool)>,
    /// Per array the loop writes (its frame slot): each access's index
    /// list (root nodes).
    written: Vec<(usize, Vec<Vec<u32>>)>,
    /// Every array the loop touches, by frame slot.
    pub arrays: Vec<usize>,
    /// The integer reductions: operator, frame slot and type.
    pub reductions: Vec<(ReductionOp, usize, Scalar)>,
}

/// What the test decided: the parallel counter's first and last values
/// and about how many turns of the innermost loops the loop runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub lo: i64,
    pub end: i64,
    pub work: u128,
}

/// The most counters one index may use (the corners evaluated are 2^n).
const MAX_VARS: usize = 6;

impl ParTest {
    /// The test for compiled loop statement `fl` of `body` (`top`: the
    /// program's top level, whose locals are the top-level variables);
    /// why not when its iterations cannot be independent whatever the
    /// values.
    pub fn of(p: &Planner, body: &Body, fl: &ForLoop, top: bool) -> Result<ParTest, Why> {
        let mut assigned = HashSet::new();
        assigned_in(&fl.body, &mut assigned);
        if assigned.contains(&fl.header.var) {
            return refused(fl.header.span, "it assigns its own counter");
        }
        let writers = global_writers(p.prog);
        let mut declared_in = HashSet::new();
        declared_in_(&fl.body, &mut declared_in);
        let shared = assigned
            .iter()
            .copied()
            .filter(|l| !declared_in.contains(l))
            .collect();
        let mut b = Build {
            body,
            builtins: p.builtins,
            shared,
            assigned,
            nodes: Vec::new(),
            vars: vec![fl.header.var],
            loops: Vec::new(),
            env: HashMap::new(),
            declared: HashSet::new(),
            accesses: Vec::new(),
            reductions: Vec::new(),
            calls: Vec::new(),
            depth: 0,
            refused: None,
        };
        let (lo, hi) = (b.node(fl.header.lo), b.node(fl.header.hi));
        let (Some(lo), Some(hi)) = (lo.filter(|&n| !b.has_var(n)), hi.filter(|&n| !b.has_var(n)))
        else {
            return refused(
                fl.header.span,
                "its bounds are not integer sums and products of values it does not change",
            );
        };
        b.loops.push((lo, hi, fl.header.inclusive));
        b.declared.insert(fl.header.var);
        b.block(&fl.body);
        if let Some(w) = b.refused {
            return Err(w);
        }
        for &(f, span) in &b.calls {
            let callee = &p.prog.functions[f];
            if writers.contains(&f.index()) {
                return refused(
                    span,
                    format!(
                        "it calls `{}`, which assigns top-level variables",
                        callee.name
                    ),
                );
            }
            if top {
                if let Some(&(_, s, _)) = b
                    .reductions
                    .iter()
                    .find(|(_, s, _)| callee.globals.iter().any(|g| g.index() == *s))
                {
                    return refused(
                        span,
                        format!(
                            "it calls `{}`, which reads `{}`, a reduction of the loop",
                            callee.name,
                            body.locals[LocalH::new(s)].name
                        ),
                    );
                }
            }
        }
        let mut arrays: Vec<usize> = Vec::new();
        let mut written: Vec<(usize, Vec<Vec<u32>>)> = Vec::new();
        for (a, _, write, _) in &b.accesses {
            if !arrays.contains(a) {
                arrays.push(*a);
            }
            if *write && !written.iter().any(|(x, _)| x == a) {
                written.push((*a, Vec::new()));
            }
        }
        for (a, ix, _, span) in &b.accesses {
            let Some(w) = written.iter_mut().find(|(x, _)| x == a) else {
                continue;
            };
            match ix {
                Some(ix) if ix.iter().all(|&n| vars_count(&b.nodes, n) <= MAX_VARS) => {
                    w.1.push(ix.clone())
                }
                _ => {
                    return refused(
                        *span,
                        format!(
                            "it writes `{}`, and indexes it with values not affine in the loops' counters",
                            body.locals[LocalH::new(*a)].name
                        ),
                    )
                }
            }
        }
        Ok(ParTest {
            nodes: b.nodes,
            loops: b.loops,
            written,
            arrays,
            reductions: b.reductions,
        })
    }

    /// Whether the iterations are independent at these values: `read`
    /// gives a scalar's value (as its type), `shape` a written array's
    /// extents (by frame slot). None: run the loop in order (including
    /// when it has no turns).
    pub fn plan(
        &self,
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
        shape: &dyn Fn(usize) -> Option<Vec<usize>>,
    ) -> Option<Plan> {
        let mut ranges = Vec::with_capacity(self.loops.len());
        for &(lo, hi, inclusive) in &self.loops {
            let lo = self.eval(lo, &[], read)?;
            let hi = self.eval(hi, &[], read)?;
            let end = if inclusive { hi } else { hi - 1 };
            if end < lo {
                return None;
            }
            ranges.push((lo, end));
        }
        let (plo, pend) = ranges[0];
        let count = pend - plo + 1;
        if count < 2 {
            return None;
        }
        let work = ranges
            .iter()
            .map(|&(l, e)| (e - l + 1) as u128)
            .try_fold(1u128, |a, n| a.checked_mul(n))
            .unwrap_or(u128::MAX);
        for (a, accesses) in &self.written {
            let dims = shape(*a)?;
            let mut forms = Vec::with_capacity(accesses.len());
            for ix in accesses {
                if ix.len() != dims.len() {
                    return None;
                }
                // Row-major strides: the flat index is affine too.
                let mut flat = Affine::zero(ranges.len());
                let mut stride: i128 = 1;
                for (k, &n) in ix.iter().enumerate().rev() {
                    let f = self.affine(n, &ranges, read)?;
                    flat.add_scaled(&f, stride);
                    stride = stride.checked_mul(dims[k] as i128)?;
                }
                forms.push(flat);
            }
            if !disjoint(&forms, &ranges) {
                return None;
            }
        }
        Some(Plan {
            lo: i64::try_from(plo).ok()?,
            end: i64::try_from(pend).ok()?,
            work,
        })
    }

    /// Whether the loop writes the array in frame slot `slot`.
    pub fn writes(&self, slot: usize) -> bool {
        self.written.iter().any(|(s, _)| *s == slot)
    }

    /// Node `n`'s value with the counters at `point` (a counter not in
    /// `point` has no value); None when a node's value leaves its type.
    fn eval(
        &self,
        n: u32,
        point: &[i128],
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
    ) -> Option<i128> {
        let (node, ty) = self.nodes[n as usize];
        let v = match node {
            Node::Var(k) => *point.get(k)?,
            Node::Slot(s) => read(Leaf::Slot(s), ty?)?,
            Node::Global(s) => read(Leaf::Global(s), ty?)?,
            Node::Const(c) => c,
            Node::Add(a, b) => self.eval(a, point, read)? + self.eval(b, point, read)?,
            Node::Sub(a, b) => self.eval(a, point, read)? - self.eval(b, point, read)?,
            Node::Mul(a, b) => self
                .eval(a, point, read)?
                .checked_mul(self.eval(b, point, read)?)?,
            Node::Neg(a) => -self.eval(a, point, read)?,
            Node::Cast(a) => self.eval(a, point, read)?,
        };
        fits(v, ty).then_some(v)
    }

    /// Node `n` as an affine function of the counters over `ranges`, each
    /// node checked within its type at every corner of the counters it
    /// uses.
    fn affine(
        &self,
        n: u32,
        ranges: &[(i128, i128)],
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
    ) -> Option<Affine> {
        let used = self.vars_of(n);
        let lows: Vec<i128> = ranges.iter().map(|r| r.0).collect();
        for corner in 0u32..1 << used.len() {
            let mut point = lows.clone();
            for (bit, &k) in used.iter().enumerate() {
                if corner & (1 << bit) != 0 {
                    point[k] = ranges[k].1;
                }
            }
            self.eval(n, &point, read)?;
        }
        let c0 = self.eval(n, &lows, read)?;
        let mut f = Affine::zero(ranges.len());
        for &k in &used {
            if ranges[k].1 > ranges[k].0 {
                let mut point = lows.clone();
                point[k] += 1;
                f.coef[k] = self.eval(n, &point, read)? - c0;
            }
        }
        // The base at counter value 0, so `c0 + sum(coef * v)` holds.
        f.c0 = c0;
        for &k in &used {
            f.c0 = f.c0.checked_sub(f.coef[k].checked_mul(ranges[k].0)?)?;
        }
        Some(f)
    }

    /// The counters node `n` uses, sorted.
    fn vars_of(&self, n: u32) -> Vec<usize> {
        let mut out = Vec::new();
        vars(&self.nodes, n, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Why not, as an error.
pub fn refused<T>(span: Span, what: impl Into<String>) -> Result<T, Why> {
    Err(Why {
        span,
        what: what.into(),
    })
}

fn vars_count(nodes: &[(Node, Option<Scalar>)], n: u32) -> usize {
    let mut out = Vec::new();
    vars(nodes, n, &mut out);
    out.sort_unstable();
    out.dedup();
    out.len()
}

fn vars(nodes: &[(Node, Option<Scalar>)], n: u32, out: &mut Vec<usize>) {
    match nodes[n as usize].0 {
        Node::Var(k) => out.push(k),
        Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => {
            vars(nodes, a, out);
            vars(nodes, b, out);
        }
        Node::Neg(a) | Node::Cast(a) => vars(nodes, a, out),
        Node::Slot(_) | Node::Global(_) | Node::Const(_) => {}
    }
}

/// Whether `v` is a value of type `t` (`None`: an integer literal, `i64`).
fn fits(v: i128, t: Option<Scalar>) -> bool {
    t.unwrap_or(Scalar::I64)
        .int_range()
        .is_some_and(|(lo, hi)| (lo..=hi).contains(&v))
}

/// `c0 + sum(coef[k] * v_k)`.
#[derive(Debug, Clone, PartialEq)]
struct Affine {
    c0: i128,
    coef: Vec<i128>,
}

impl Affine {
    fn zero(n: usize) -> Affine {
        Affine {
            c0: 0,
            coef: vec![0; n],
        }
    }

    fn add_scaled(&mut self, f: &Affine, s: i128) {
        self.c0 += f.c0 * s;
        for (a, b) in self.coef.iter_mut().zip(&f.coef) {
            *a += b * s;
        }
    }
}

/// Whether distinct values of counter 0 give every access of `forms`
/// distinct elements (the digit test of the module's comment).
fn disjoint(forms: &[Affine], ranges: &[(i128, i128)]) -> bool {
    let count = ranges[0].1 - ranges[0].0 + 1;
    let c = forms[0].coef[0];
    if c == 0 || forms.iter().any(|f| f.coef[0] != c) {
        return false;
    }
    let c = c.abs();
    // G: the gcd of every other coefficient too large to be in the rest.
    let limit = count.saturating_mul(c);
    let mut g: i128 = 0;
    for f in forms {
        for &x in &f.coef[1..] {
            if x.abs() >= limit {
                g = gcd(g, x.abs());
            }
        }
    }
    // The rest's coefficients; their terms' window, and the bases, which
    // may differ between accesses by multiples of G.
    if g != 0 && (g % c != 0 || g / c < count) {
        return false;
    }
    let base0 = forms[0].c0;
    let (mut low, mut high) = (i128::MAX, i128::MIN);
    for f in forms {
        let mut d = f.c0 - base0;
        if g != 0 {
            d = d.rem_euclid(g);
            if d > g / 2 {
                d -= g;
            }
        }
        let (mut lo, mut hi) = (d, d);
        for (k, &x) in f.coef.iter().enumerate().skip(1) {
            if g != 0 && x.abs() >= limit {
                continue;
            }
            let (a, b) = (x * ranges[k].0, x * ranges[k].1);
            lo += a.min(b);
            hi += a.max(b);
        }
        low = low.min(lo);
        high = high.max(hi);
    }
    high - low < c
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The functions that assign a top-level variable, themselves or through
/// their calls (by handle index).
fn global_writers(prog: &hir::Program) -> HashSet<usize> {
    let mut direct: Vec<bool> = Vec::with_capacity(prog.functions.len());
    let mut calls: Vec<Vec<usize>> = Vec::with_capacity(prog.functions.len());
    for (_, f) in prog.functions.iter() {
        let mut w = false;
        let mut c = Vec::new();
        scan_fn(&f.body, &f.body.block, &mut w, &mut c);
        direct.push(w);
        calls.push(c);
    }
    let mut out: HashSet<usize> = (0..direct.len()).filter(|&i| direct[i]).collect();
    loop {
        let before = out.len();
        for (i, c) in calls.iter().enumerate() {
            if c.iter().any(|f| out.contains(f)) {
                out.insert(i);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Whether `b` assigns a top-level variable, and what it calls.
fn scan_fn(body: &Body, b: &[Stmt], writes: &mut bool, calls: &mut Vec<usize>) {
    for s in b {
        let mut exprs: Vec<ExprH> = Vec::new();
        match &s.kind {
            StmtKind::Let { init, .. } | StmtKind::LetTuple { init, .. } => exprs.push(*init),
            StmtKind::Assign { place, value, .. } | StmtKind::Atomic { place, value, .. } => {
                exprs.push(*value);
                match place {
                    Place::Global(_) => *writes = true,
                    Place::Element { array, indices } => {
                        if matches!(body.exprs[*array], Expr::Global(_)) {
                            *writes = true;
                        }
                        exprs.extend(indices.iter().copied());
                    }
                    Place::Local(_) => {}
                }
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => exprs.push(*e),
            StmtKind::If { cond, then, els } => {
                exprs.push(*cond);
                scan_fn(body, then, writes, calls);
                scan_fn(body, els, writes, calls);
            }
            StmtKind::While { cond, body: w } => {
                exprs.push(*cond);
                scan_fn(body, w, writes, calls);
            }
            StmtKind::For(fl) => {
                exprs.extend([fl.header.lo, fl.header.hi]);
                scan_fn(body, &fl.body, writes, calls);
            }
            StmtKind::Block(inner) => scan_fn(body, inner, writes, calls),
            // Host code with a construct is never compiled; count it as
            // writing.
            StmtKind::Construct(_) => *writes = true,
            _ => {}
        }
        for e in exprs {
            calls_in(body, e, calls);
        }
    }
}

fn calls_in(body: &Body, e: ExprH, out: &mut Vec<usize>) {
    match &body.exprs[e] {
        Expr::Call(f, args) => {
            out.push(f.index());
            args.iter().for_each(|&a| calls_in(body, a, out));
        }
        Expr::Unary(_, a) | Expr::Cast(a, _) => calls_in(body, *a, out),
        Expr::Binary(_, a, b) => {
            calls_in(body, *a, out);
            calls_in(body, *b, out);
        }
        Expr::Index(a, ix) => {
            calls_in(body, *a, out);
            ix.iter().for_each(|&i| calls_in(body, i, out));
        }
        Expr::Builtin(_, args) | Expr::Tuple(args) | Expr::Array(_, args) => {
            args.iter().for_each(|&a| calls_in(body, a, out))
        }
        _ => {}
    }
}

/// The locals `b` assigns or declares, at any depth.
fn assigned_in(b: &[Stmt], out: &mut HashSet<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, .. } => {
                out.insert(*local);
            }
            StmtKind::LetTuple { locals, .. } => out.extend(locals.iter().flatten().copied()),
            StmtKind::Assign {
                place: Place::Local(l),
                ..
            } => {
                out.insert(*l);
            }
            StmtKind::If { then, els, .. } => {
                assigned_in(then, out);
                assigned_in(els, out);
            }
            StmtKind::While { body, .. } => assigned_in(body, out),
            StmtKind::For(fl) => {
                out.insert(fl.header.var);
                assigned_in(&fl.body, out);
            }
            StmtKind::Block(inner) => assigned_in(inner, out),
            _ => {}
        }
    }
}

/// The locals `b` declares (`let`s and counters), at any depth.
fn declared_in_(b: &[Stmt], out: &mut HashSet<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, .. } => {
                out.insert(*local);
            }
            StmtKind::LetTuple { locals, .. } => out.extend(locals.iter().flatten().copied()),
            StmtKind::If { then, els, .. } => {
                declared_in_(then, out);
                declared_in_(els, out);
            }
            StmtKind::While { body, .. } => declared_in_(body, out),
            StmtKind::For(fl) => {
                out.insert(fl.header.var);
                declared_in_(&fl.body, out);
            }
            StmtKind::Block(inner) => declared_in_(inner, out),
            _ => {}
        }
    }
}

/// The walk of a loop body that builds a [`ParTest`].
struct Build<'a> {
    body: &'a Body,
    builtins: &'a lang::Builtins,
    /// The scalars declared outside the loop that it assigns: reductions,
    /// read nowhere but in their updates.
    shared: HashSet<LocalH>,
    /// Every local the body assigns or declares.
    assigned: HashSet<LocalH>,
    nodes: Vec<(Node, Option<Scalar>)>,
    /// The counters with a known range, by counter number.
    vars: Vec<LocalH>,
    loops: Vec<(u32, u32, bool)>,
    /// What each local of the body holds now (None: not known).
    env: HashMap<LocalH, Option<u32>>,
    declared: HashSet<LocalH>,
    /// Each element access: array slot, index nodes, whether it writes.
    accesses: Vec<(usize, Option<Vec<u32>>, bool, Span)>,
    reductions: Vec<(ReductionOp, usize, Scalar)>,
    calls: Vec<(hir::FnH, Span)>,
    /// How many loops inside the parallel one the walk is in.
    depth: usize,
    refused: Option<Why>,
}

impl Build<'_> {
    fn refuse(&mut self, span: Span, what: impl Into<String>) {
        if self.refused.is_none() {
            self.refused = Some(Why {
                span,
                what: what.into(),
            });
        }
    }

    fn push(&mut self, n: Node, t: Option<Scalar>) -> u32 {
        self.nodes.push((n, t));
        (self.nodes.len() - 1) as u32
    }

    fn has_var(&self, n: u32) -> bool {
        let mut v = Vec::new();
        vars(&self.nodes, n, &mut v);
        !v.is_empty()
    }

    fn int_ty(&self, e: ExprH) -> Option<Option<Scalar>> {
        match self.body.ty(e) {
            Type::IntLit => Some(None),
            t => Some(Some(t.scalar().filter(|s| s.is_int())?)),
        }
    }

    /// Expression `e` as a node, when it is affine in the counters.
    fn node(&mut self, e: ExprH) -> Option<u32> {
        let t = self.int_ty(e)?;
        let n = match &self.body.exprs[e] {
            Expr::Const(v) => Node::Const(v.as_i128()?),
            Expr::Local(l) => {
                if let Some(k) = self.vars.iter().position(|v| v == l) {
                    Node::Var(k)
                } else if self.declared.contains(l) {
                    return self.env.get(l).copied().flatten();
                } else if self.assigned.contains(l) {
                    return None;
                } else {
                    Node::Slot(l.index())
                }
            }
            Expr::Global(l) => Node::Global(l.index()),
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (op, a, b) = (*op, *a, *b);
                let (a, b) = (self.node(a)?, self.node(b)?);
                match op {
                    BinOp::Add => Node::Add(a, b),
                    BinOp::Sub => Node::Sub(a, b),
                    _ if self.has_var(a) && self.has_var(b) => return None,
                    _ => Node::Mul(a, b),
                }
            }
            Expr::Unary(UnOp::Neg, a) => Node::Neg(self.node(*a)?),
            Expr::Cast(a, _) => {
                let a = *a;
                self.int_ty(a)?;
                Node::Cast(self.node(a)?)
            }
            _ => return None,
        };
        Some(self.push(n, t))
    }

    /// Forget what the locals `b` assigns hold.
    fn forget(&mut self, b: &[Stmt]) {
        let mut set = HashSet::new();
        assigned_in(b, &mut set);
        for l in set {
            self.env.insert(l, None);
        }
    }

    fn block(&mut self, b: &[Stmt]) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { local, init } => {
                self.expr(*init);
                self.declared.insert(*local);
                let n = self.node(*init);
                self.env.insert(*local, n);
            }
            StmtKind::LetTuple { locals, init } => {
                self.expr(*init);
                for &l in locals.iter().flatten() {
                    self.declared.insert(l);
                    self.env.insert(l, None);
                }
            }
            StmtKind::Assign { place, op, value } => match place {
                Place::Local(l) if self.declared.contains(l) => {
                    self.expr(*value);
                    let n = if op.is_none() {
                        self.node(*value)
                    } else {
                        None
                    };
                    self.env.insert(*l, n);
                }
                Place::Local(l) => self.reduction(*l, *op, *value, s.span),
                Place::Global(_) => self.refuse(s.span, "it assigns a top-level variable"),
                Place::Element { array, indices } => {
                    for &i in indices {
                        self.expr(i);
                    }
                    self.expr(*value);
                    self.access(*array, indices, true, s.span);
                }
            },
            StmtKind::Expr(e) => self.expr(*e),
            StmtKind::If { cond, then, els } => {
                self.expr(*cond);
                let saved = self.env.clone();
                self.block(then);
                self.env = saved.clone();
                self.block(els);
                self.env = saved;
                self.forget(then);
                self.forget(els);
            }
            StmtKind::While { cond, body } => {
                self.forget(body);
                self.expr(*cond);
                self.depth += 1;
                self.block(body);
                self.depth -= 1;
                self.forget(body);
            }
            StmtKind::For(fl) => {
                let h = &fl.header;
                self.expr(h.lo);
                self.expr(h.hi);
                self.forget(&fl.body);
                let lo = self.node(h.lo).filter(|&n| !self.has_var(n));
                let hi = self.node(h.hi).filter(|&n| !self.has_var(n));
                self.declared.insert(h.var);
                let mut inner = HashSet::new();
                assigned_in(&fl.body, &mut inner);
                match (lo, hi) {
                    (Some(lo), Some(hi)) if !inner.contains(&h.var) => {
                        self.vars.push(h.var);
                        self.loops.push((lo, hi, h.inclusive));
                    }
                    _ => {
                        self.env.insert(h.var, None);
                    }
                }
                self.depth += 1;
                self.block(&fl.body);
                self.depth -= 1;
                self.forget(&fl.body);
            }
            StmtKind::Break if self.depth == 0 => self.refuse(s.span, "a `break` leaves the loop"),
            StmtKind::Return(_) => self.refuse(s.span, "a `return` leaves the loop"),
            StmtKind::Block(b) => self.block(b),
            StmtKind::Construct(_) | StmtKind::Atomic { .. } => {
                self.refuse(s.span, "a construct or an atomic statement")
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Cache { .. } => {}
        }
    }

    /// `s op= value` (or `s = s op value`, `s = min(s, value)`) on scalar
    /// `s` declared outside the loop: an integer reduction, or a refusal.
    fn reduction(&mut self, s: LocalH, op: Option<BinOp>, value: ExprH, span: Span) {
        let name = &self.body.locals[s].name;
        let why =
            format!("it assigns `{name}`, declared outside the loop, which the iterations share");
        let Type::Scalar(t @ (Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U8)) =
            self.body.locals[s].ty
        else {
            return self.refuse(span, why);
        };
        let is_s = |e: ExprH| matches!(self.body.exprs[e], Expr::Local(l) if l == s);
        let (rop, operand) = match op {
            Some(BinOp::Add | BinOp::Sub) => (ReductionOp::Add, value),
            Some(BinOp::Mul) => (ReductionOp::Mul, value),
            Some(BinOp::BitAnd) => (ReductionOp::BitAnd, value),
            Some(BinOp::BitOr) => (ReductionOp::BitOr, value),
            Some(BinOp::BitXor) => (ReductionOp::BitXor, value),
            Some(_) => return self.refuse(span, why),
            None => match &self.body.exprs[value] {
                Expr::Binary(BinOp::Sub, a, b) if is_s(*a) => (ReductionOp::Add, *b),
                Expr::Binary(op, a, b) if is_s(*a) || is_s(*b) => {
                    let rop = match op {
                        BinOp::Add => ReductionOp::Add,
                        BinOp::Mul => ReductionOp::Mul,
                        BinOp::BitAnd => ReductionOp::BitAnd,
                        BinOp::BitOr => ReductionOp::BitOr,
                        BinOp::BitXor => ReductionOp::BitXor,
                        _ => return self.refuse(span, why),
                    };
                    (rop, if is_s(*a) { *b } else { *a })
                }
                Expr::Builtin(id, args) if args.len() == 2 => {
                    let rop = match self.builtins.get(*id).name.as_str() {
                        "min" => ReductionOp::Min,
                        "max" => ReductionOp::Max,
                        _ => return self.refuse(span, why),
                    };
                    match (is_s(args[0]), is_s(args[1])) {
                        (true, false) => (rop, args[1]),
                        (false, true) => (rop, args[0]),
                        _ => return self.refuse(span, why),
                    }
                }
                _ => return self.refuse(span, why),
            },
        };
        match self.reductions.iter().find(|r| r.1 == s.index()) {
            Some(r) if r.0 != rop => return self.refuse(span, why),
            Some(_) => {}
            None => self.reductions.push((rop, s.index(), t)),
        }
        self.expr(operand);
    }

    fn access(&mut self, array: ExprH, indices: &[ExprH], write: bool, span: Span) {
        let Expr::Local(a) = self.body.exprs[array] else {
            return self.refuse(span, "an element of an array that is not a local variable");
        };
        let ix: Option<Vec<u32>> = indices.iter().map(|&i| self.node(i)).collect();
        self.accesses.push((a.index(), ix, write, span));
    }

    /// What expression `e` reads: elements, calls, and no reduction
    /// variable.
    fn expr(&mut self, e: ExprH) {
        match &self.body.exprs[e] {
            Expr::Local(l) if self.shared.contains(l) => {
                let name = self.body.locals[*l].name.clone();
                self.refuse(
                    self.body.span(e),
                    format!("it reads `{name}`, a reduction of the loop, in a turn"),
                );
            }
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.expr(*a),
            Expr::Binary(_, a, b) => {
                let (a, b) = (*a, *b);
                self.expr(a);
                self.expr(b);
            }
            Expr::Index(a, ix) => {
                let (a, ix) = (*a, ix.clone());
                ix.iter().for_each(|&i| self.expr(i));
                self.access(a, &ix, false, self.body.span(e));
            }
            Expr::Call(f, args) => {
                self.calls.push((*f, self.body.span(e)));
                for a in args.clone() {
                    self.expr(a);
                }
            }
            Expr::Builtin(_, args) | Expr::Tuple(args) | Expr::Array(_, args) => {
                for a in args.clone() {
                    self.expr(a);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::Builtins;

    /// Function `f` of `src` (checked with no builtins) and the test of its
    /// first `for` loop.
    fn test_of(src: &str) -> (hir::Program, Result<ParTest, String>) {
        let prog = lang::check_source(src, &Builtins::new())
            .unwrap_or_else(|d| panic!("{src}: {:?}", d[0].message))
            .program;
        let builtins = Builtins::new();
        let planner = Planner::new(&prog, &builtins);
        let (_, f) = prog
            .functions
            .iter()
            .find(|(_, f)| f.name == "f")
            .expect("a function `f`");
        let fl = f
            .body
            .block
            .iter()
            .find_map(|s| match &s.kind {
                StmtKind::For(fl) => Some(fl),
                _ => None,
            })
            .expect("a loop");
        let t = ParTest::of(&planner, &f.body, fl, false).map_err(|w| w.what);
        (prog, t)
    }

    /// The plan of `f`'s first loop with scalars `vals` and array shapes
    /// `shapes`, by name.
    fn plan(src: &str, vals: &[(&str, i128)], shapes: &[(&str, &[usize])]) -> Option<Plan> {
        let (prog, t) = test_of(src);
        let t = t.unwrap_or_else(|w| panic!("{src}: refused: {w}"));
        let (_, f) = prog.functions.iter().find(|(_, f)| f.name == "f").unwrap();
        let name = |slot: usize| f.body.locals[LocalH::new(slot)].name.clone();
        let read = |leaf: Leaf, _: Scalar| match leaf {
            Leaf::Slot(s) => vals.iter().find(|v| v.0 == name(s)).map(|v| v.1),
            Leaf::Global(_) => None,
        };
        let shape = |slot: usize| {
            shapes
                .iter()
                .find(|v| v.0 == name(slot))
                .map(|v| v.1.to_vec())
        };
        t.plan(&read, &shape)
    }

    fn why(src: &str) -> String {
        match test_of(src).1 {
            Ok(t) => panic!("{src}: not refused: {t:?}"),
            Err(w) => w,
        }
    }

    const ROWS: &str = "fn f(a: i32[], m: i32, n: i32, w: i32) {
    for i in 0..n {
        for j in 0..w {
            a[i * m + j] = i + j;
        }
    }
}";

    #[test]
    fn rows_of_a_flat_array_are_apart_when_each_fits_its_stride() {
        let p = plan(
            ROWS,
            &[("m", 100), ("n", 50), ("w", 100)],
            &[("a", &[5000])],
        );
        assert_eq!(
            p,
            Some(Plan {
                lo: 0,
                end: 49,
                work: 5000
            })
        );
        // A row one element wider than the stride overlaps the next row.
        assert_eq!(
            plan(
                ROWS,
                &[("m", 100), ("n", 50), ("w", 101)],
                &[("a", &[5100])]
            ),
            None
        );
        // One turn, or none: nothing to spread.
        assert_eq!(
            plan(ROWS, &[("m", 100), ("n", 1), ("w", 100)], &[("a", &[100])]),
            None
        );
    }

    #[test]
    fn planes_of_fields_split_into_a_digit_per_iteration() {
        // miniWeather's initial state: field `v` of 4, row `k`, column `i`.
        let src = "fn f(s: f64[], t: f64[], nx: i32, nz: i32) {
    for k in 0..nz {
        for i in 0..nx {
            for v in 0..4 {
                let ind = v * nz * nx + k * nx + i;
                s[ind] = 0.0;
                s[ind] = s[ind] + 1.0;
                t[ind] = s[ind];
            }
            let top = 3 * nz * nx + k * nx + i;
            t[top] = t[top] * 2.0;
        }
    }
}";
        let n = [("nx", 30), ("nz", 20)];
        assert!(plan(src, &n, &[("s", &[2400]), ("t", &[2400])]).is_some());
    }

    #[test]
    fn a_read_of_the_row_before_is_a_dependence() {
        let src = "fn f(a: f64[], m: i32, n: i32) {
    for i in 1..n {
        for j in 0..m {
            a[i * m + j] = a[(i - 1) * m + j] + 1.0;
        }
    }
}";
        assert_eq!(plan(src, &[("m", 8), ("n", 8)], &[("a", &[64])]), None);
    }

    #[test]
    fn a_column_of_a_matrix_is_an_iteration_of_its_own() {
        let src = "fn f(a: f64[,], n: i32) {
    for j in 0..n {
        for i in 0..n {
            a[i, j] = 1.0;
        }
    }
}";
        assert!(plan(src, &[("n", 16)], &[("a", &[16, 16])]).is_some());
        // A wider matrix: columns stay apart (their stride is a multiple).
        assert!(plan(src, &[("n", 16)], &[("a", &[16, 32])]).is_some());
    }

    #[test]
    fn index_values_outside_their_type_run_in_order() {
        let src = "fn f(a: f64[], m: i32, n: i32) {
    for i in 0..n {
        a[i * m] = 1.0;
    }
}";
        assert!(plan(src, &[("m", 1 << 21), ("n", 2000)], &[("a", &[1 << 32])]).is_none());
        assert!(plan(src, &[("m", 1 << 10), ("n", 2000)], &[("a", &[1 << 21])]).is_some());
    }

    #[test]
    fn integer_accumulations_are_reductions() {
        let (_, t) = test_of(
            "fn f(a: i32[], n: i32) -> i64 {
    let s: i64 = 0;
    let x: u32 = 0;
    for i in 0..n {
        s += a[i] as i64;
        s -= 1;
        x = x ^ (a[i] as u32);
    }
    return s;
}",
        );
        let t = t.unwrap();
        let ops: Vec<ReductionOp> = t.reductions.iter().map(|r| r.0).collect();
        assert_eq!(ops, [ReductionOp::Add, ReductionOp::BitXor]);
    }

    #[test]
    fn what_iterations_share_keeps_them_in_order() {
        assert!(why("fn f(a: f64[], n: i32) -> f64 {
    let s = 0.0;
    for i in 0..n { s += a[i]; }
    return s;
}")
        .contains("declared outside the loop"));
        assert!(why("fn f(a: i32[], n: i32) -> i32 {
    let s = 0;
    for i in 0..n { s += a[i]; a[i] = s; }
    return s;
}")
        .contains("a reduction of the loop"));
        assert!(why("fn f(a: i32[], n: i32) {
    for i in 0..n { if a[i] < 0 { break; } a[i] = 1; }
}")
        .contains("`break`"));
        assert!(why("let seed: u32 = 1;
fn next() -> u32 { seed = seed * 1103515245 + 12345; return seed; }
fn f(a: u32[], n: i32) {
    for i in 0..n { a[i] = next(); }
}")
        .contains("assigns top-level variables"));
        assert!(why("fn f(a: f64[], n: i32) {
    for i in 0..n { a[i * i] = 1.0; }
}")
        .contains("not affine"));
        assert!(why("fn f(a: f64[], b: i32[], n: i32) {
    for i in 0..n { a[b[i]] = 1.0; }
}")
        .contains("not affine"));
    }
}
