//! Automatic vector loops: in a `parallel loop` whose levels are left to
//! the compiler, an inner `for` loop at the top of the iteration body
//! that is provably parallel becomes `loop vector` (with the reductions
//! it carries), so each iteration of the construct is a gang whose lanes
//! share the inner loop: the shape of Gram-Schmidt's column updates and
//! of CSR SpMV's row sums, where one lane per outer iteration leaves the
//! device idle or reads memory in strides.
//!
//! The proof is syntactic and conservative; every loop it leaves alone
//! gets the reason, for `--explain`:
//! * the construct has no `gang`/`worker`/`vector`/`seq` and no
//!   `collapse(n)` (explicit levels are obeyed), and no inner `loop`;
//! * the loop has no `break`, `return`, nested construct or atomic, and
//!   calls only functions of scalars and pure builtins;
//! * every local it assigns is declared inside it, or is a reduction: a
//!   variable of the iteration only ever updated as `s op= e`, `s = s op e`
//!   or `s = max(s, e)` (`min`) with one operator, and read nowhere else in
//!   the loop;
//! * every array it writes is accessed (read and written) only at
//!   elements whose index has the loop variable itself at one position,
//!   the same for every access: distinct iterations touch distinct
//!   elements;
//! * it is worth it: the loop walks an array's last (contiguous)
//!   dimension while the outer loop variables do not (so lanes read
//!   neighbouring elements where one lane per outer iteration would read
//!   far apart ones), and its trip count is not a constant below 16.

use crate::kir::reduction_legal;
pub use crate::kir::LoopNote;
use lang::hir::{self, BinOp, Block, Expr, ExprH, LocalH, Place, ReductionOp, StmtKind};
use lang::{Builtins, Effect, Span, Type};

/// The vector length of a mapped loop without `vector_length`: a 32-lane
/// subgroup on NVIDIA GPUs (a team, see `spirv::teams`), a workgroup of
/// 32 elsewhere.
pub const DEFAULT_VECTOR: u32 = 32;

/// Are the iterations of every level of the nest `loops` (around
/// `block`) independent? `Err` says why not (for `parallel loop auto`).
pub fn independent_nest(
    program: &hir::Program,
    body: &hir::Body,
    loops: &[hir::LoopHeader],
    block: &Block,
    builtins: &Builtins,
) -> Result<(), String> {
    independent_nest_private(program, body, loops, block, builtins, &[])
}

/// [`independent_nest`] where the scalars `private` are each iteration's
/// own (a `private` clause): assigning them carries nothing between
/// iterations.
pub fn independent_nest_private(
    program: &hir::Program,
    body: &hir::Body,
    loops: &[hir::LoopHeader],
    block: &Block,
    builtins: &Builtins,
    private: &[LocalH],
) -> Result<(), String> {
    let cx = Cx {
        program,
        body,
        builtins,
    };
    for d in 0..loops.len() {
        // Level d with the levels inside it as plain loops.
        let mut inner = block.clone();
        for h in loops[d + 1..].iter().rev() {
            inner = vec![hir::Stmt {
                kind: StmtKind::For(hir::ForLoop {
                    header: h.clone(),
                    body: inner,
                }),
                span: h.span,
            }];
        }
        let f = hir::ForLoop {
            header: loops[d].clone(),
            body: inner,
        };
        cx.proof_with(&f, private)
            .map_err(|why| format!("`{}`: {why}", body.locals[loops[d].var].name))?;
    }
    Ok(())
}

/// The iteration body with the parallel inner loops of a flat `parallel
/// loop` made `loop vector` (`None`: none is), and a note per inner loop
/// at the top of the body (none when the construct's levels are not the
/// compiler's to choose).
pub fn vectorise(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    loops: &[hir::LoopHeader],
    block: &Block,
    builtins: &Builtins,
) -> (Option<Block>, Vec<LoopNote>) {
    let c = &construct.clauses;
    if c.seq || c.gang || c.worker || c.vector || c.collapse > 1 {
        let notes = block
            .iter()
            .filter(|s| matches!(s.kind, StmtKind::For(_)))
            .map(|s| LoopNote {
                span: s.span,
                vector: None,
                reason: "the construct sets the levels (`gang`/`worker`/`vector`/`seq`/`collapse`)"
                    .into(),
            })
            .collect();
        return (None, notes);
    }
    let cx = Cx {
        program,
        body,
        builtins,
    };
    let outer: Vec<LocalH> = loops.iter().map(|l| l.var).collect();
    let mut notes = Vec::new();
    let mut out = Vec::with_capacity(block.len());
    let mut any = false;
    for s in block {
        let StmtKind::For(f) = &s.kind else {
            out.push(s.clone());
            continue;
        };
        match cx.parallel(f, &outer) {
            Ok(reductions) => {
                any = true;
                notes.push(LoopNote {
                    span: s.span,
                    vector: Some(
                        reductions
                            .iter()
                            .map(|r| (r.op, body.locals[r.var].name.clone()))
                            .collect(),
                    ),
                    reason: String::new(),
                });
                out.push(hir::Stmt {
                    kind: StmtKind::Construct(Box::new(hir::Construct {
                        kind: hir::DirectiveKind::Loop,
                        id: construct.id,
                        span: s.span,
                        kind_span: s.span,
                        clauses: hir::Clauses {
                            vector: true,
                            collapse: 1,
                            reductions,
                            ..hir::Clauses::default()
                        },
                        body: hir::ConstructBody::Loops {
                            loops: vec![f.header.clone()],
                            body: f.body.clone(),
                        },
                        captures: hir::Captures::default(),
                    })),
                    span: s.span,
                });
            }
            Err(reason) => {
                notes.push(LoopNote {
                    span: s.span,
                    vector: None,
                    reason,
                });
                out.push(s.clone());
            }
        }
    }
    (any.then_some(out), notes)
}

/// The walk of `f`'s body when all it does but its array accesses is an
/// iteration's own (scalars private or reductions, no call that writes
/// memory), for the launch-time test of [`crate::depend`]; `None` else.
pub(crate) fn scalar_walk(
    program: &hir::Program,
    body: &hir::Body,
    builtins: &Builtins,
    f: &hir::ForLoop,
    private: &[LocalH],
) -> Option<Walk> {
    let cx = Cx {
        program,
        body,
        builtins,
    };
    cx.scalar_proof(f, private).ok().map(|(_, w)| w)
}

/// What the `let` `l` of a walked body holds in every iteration of loop
/// `i`, when nothing it reads changes within one ([`Walk::let_init`]).
pub(crate) fn let_value(
    program: &hir::Program,
    body: &hir::Body,
    builtins: &Builtins,
    l: LocalH,
    i: LocalH,
    w: &Walk,
) -> Option<ExprH> {
    let cx = Cx {
        program,
        body,
        builtins,
    };
    cx.let_value(l, i, w)
}

struct Cx<'a> {
    program: &'a hir::Program,
    body: &'a hir::Body,
    builtins: &'a Builtins,
}

/// What a loop body does, gathered in one walk (also the automatic
/// collapse's, `crate::collapse`).
#[derive(Default)]
pub(crate) struct Walk {
    /// Locals declared inside (private to an iteration).
    pub declared: Vec<LocalH>,
    /// Array accesses: (array, index list, is a write).
    pub accesses: Vec<(LocalH, Vec<ExprH>, bool)>,
    /// Reduction updates of locals declared outside: (variable,
    /// operator, span).
    pub updates: Vec<(LocalH, ReductionOp, Span)>,
    /// Locals read (outside the left side of their own update).
    pub reads: Vec<LocalH>,
    /// Locals assigned otherwise than by a reduction update.
    pub assigned: Vec<(LocalH, Span)>,
    /// Inner `for` loops: (variable, lower bound, upper bound, `..=`).
    pub ranges: Vec<(LocalH, ExprH, ExprH, bool)>,
    /// Locals declared inside with `let`, and their initial values.
    pub lets: Vec<(LocalH, ExprH)>,
    /// A `continue` of the walked loop itself.
    pub continues: bool,
    /// Why the loop cannot be parallel.
    pub refused: Option<String>,
}

/// The walk of `block`, a loop body whose own locals are `declared`.
pub(crate) fn walk(
    program: &hir::Program,
    body: &hir::Body,
    builtins: &Builtins,
    block: &Block,
    declared: Vec<LocalH>,
) -> Walk {
    let cx = Cx {
        program,
        body,
        builtins,
    };
    let mut w = Walk {
        declared,
        ..Walk::default()
    };
    cx.block(block, 0, &mut w);
    w
}

impl Walk {
    /// The initial value of `l` when it is a `let` of the walked body that
    /// nothing assigns afterwards: every later use in an iteration reads
    /// that value, if what the value reads does not change either (the
    /// caller's to check).
    pub(crate) fn let_init(&self, l: LocalH) -> Option<ExprH> {
        let &(_, init) = self.lets.iter().find(|(x, _)| *x == l)?;
        (!self.assigned.iter().any(|a| a.0 == l)).then_some(init)
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.refused.is_none() {
            self.refused = Some(why.into());
        }
    }
}

impl Cx<'_> {
    fn name(&self, l: LocalH) -> &str {
        &self.body.locals[l].name
    }

    /// The reductions of `f` when its iterations are parallel and making
    /// it a vector loop pays, else why not.
    fn parallel(&self, f: &hir::ForLoop, outer: &[LocalH]) -> Result<Vec<hir::Reduction>, String> {
        let i = f.header.var;
        let trip = match (&self.body.exprs[f.header.lo], &self.body.exprs[f.header.hi]) {
            (Expr::Const(a), Expr::Const(b)) => a
                .as_i128()
                .zip(b.as_i128())
                .map(|(a, b)| b - a + i128::from(f.header.inclusive)),
            _ => None,
        };
        if trip.is_some_and(|t| t < 16) {
            return Err("a constant trip count below 16: not worth a vector loop".into());
        }
        let (reductions, w) = self.proof(f)?;
        // Worth it: the loop variable indexes some array's last dimension,
        // and no outer loop variable does.
        let last_uses = |vars: &[LocalH]| {
            w.accesses
                .iter()
                .any(|(_, idx, _)| idx.last().is_some_and(|&e| self.mentions(e, vars)))
        };
        if !last_uses(&[i]) {
            return Err("it does not walk an array's contiguous dimension".into());
        }
        if last_uses(outer) {
            return Err(
                "the outer loop walks an array's contiguous dimension: one lane per outer iteration reads neighbouring elements"
                    .into(),
            );
        }
        Ok(reductions)
    }

    /// The reductions of `f` when its iterations are independent (and the
    /// walk of its body), else why not.
    fn proof(&self, f: &hir::ForLoop) -> Result<(Vec<hir::Reduction>, Walk), String> {
        self.proof_with(f, &[])
    }

    /// [`Self::proof`] with the scalars `private` private to an iteration.
    fn proof_with(
        &self,
        f: &hir::ForLoop,
        private: &[LocalH],
    ) -> Result<(Vec<hir::Reduction>, Walk), String> {
        let (reductions, w) = self.scalar_proof(f, private)?;
        let i = f.header.var;
        // Arrays: each written one touched at `[.., i, ..]` only, at one place.
        let written: Vec<LocalH> = w.accesses.iter().filter(|a| a.2).map(|a| a.0).collect();
        for &a in &written {
            let lists: Vec<&Vec<ExprH>> = w
                .accesses
                .iter()
                .filter(|x| x.0 == a)
                .map(|x| &x.1)
                .collect();
            let rank = lists[0].len();
            let separated = (0..rank).any(|d| {
                lists.iter().all(|l| l.len() == rank)
                    && self.apart(i, &w, lists.iter().map(|l| l[d]))
            });
            if !separated {
                return Err(format!(
                    "`{}` is written at elements another iteration may touch",
                    self.name(a)
                ));
            }
        }
        Ok((reductions, w))
    }

    /// Everything [`Self::proof_with`] proves but the arrays: what the
    /// loop does is an iteration's own, its scalars private or reductions.
    fn scalar_proof(
        &self,
        f: &hir::ForLoop,
        private: &[LocalH],
    ) -> Result<(Vec<hir::Reduction>, Walk), String> {
        let i = f.header.var;
        let mut w = Walk::default();
        w.declared.push(i);
        w.declared.extend_from_slice(private);
        self.block(&f.body, 0, &mut w);
        if let Some(r) = w.refused {
            return Err(r);
        }
        // Scalars: private, or reductions read nowhere else.
        if let Some((l, _)) = w.assigned.iter().find(|(l, _)| !w.declared.contains(l)) {
            return Err(format!(
                "`{}` is assigned in one iteration and used in the next",
                self.name(*l)
            ));
        }
        let mut reductions: Vec<hir::Reduction> = Vec::new();
        for &(v, op, span) in &w.updates {
            if w.declared.contains(&v) {
                continue;
            }
            if w.reads.contains(&v) {
                return Err(format!(
                    "`{}` is updated and also read in the loop",
                    self.name(v)
                ));
            }
            match reductions.iter().find(|r| r.var == v) {
                Some(r) if r.op != op => {
                    return Err(format!(
                        "`{}` is combined with both `{}` and `{}`",
                        self.name(v),
                        r.op.symbol(),
                        op.symbol()
                    ))
                }
                Some(_) => {}
                None => {
                    let Type::Scalar(t) = self.body.locals[v].ty else {
                        return Err(format!("`{}` is not a scalar", self.name(v)));
                    };
                    if !reduction_legal(op, t) {
                        return Err(format!(
                            "`{}` cannot reduce with `{}`",
                            self.name(v),
                            op.symbol()
                        ));
                    }
                    reductions.push(hir::Reduction { op, var: v, span });
                }
            }
        }
        Ok((reductions, w))
    }

    /// Do distinct iterations of loop `i` index one axis at distinct
    /// elements with `indices` (one per access)? Yes when every index is
    /// `i` plus one same offset that does not change in the loop (`i`,
    /// `i + k`: a shifted row), or `i` times one same invariant `K` plus a
    /// part in `0..K` (`i * cols + j` with `for j in 0..cols`: the
    /// flattened 2-D index C programs write, each `i` a block of its own).
    fn apart(&self, i: LocalH, w: &Walk, indices: impl Iterator<Item = ExprH>) -> bool {
        let invariant = |e: ExprH| {
            let mut varying = w.declared.clone();
            varying.extend(w.assigned.iter().map(|a| a.0));
            varying.extend(w.updates.iter().map(|u| u.0));
            !self.mentions(e, &varying)
        };
        let mut shape: Option<(bool, Option<ExprH>)> = None;
        for e in indices {
            let this = match self.split_index(i, e, w) {
                Some(s) => s,
                None => return false,
            };
            if let Some(k) = this.1 {
                if !invariant(k) {
                    return false;
                }
            }
            match &shape {
                None => shape = Some(this),
                Some(prev) => {
                    let same = prev.0 == this.0
                        && match (prev.1, this.1) {
                            (None, None) => true,
                            (Some(a), Some(b)) => self.same(a, b),
                            _ => false,
                        };
                    if !same {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// `e` as `i + offset` (`(false, offset)`, no offset for `i` alone) or
    /// `i * K + r` with `r` in `0..K` (`(true, Some(K))`).
    fn split_index(&self, i: LocalH, e: ExprH, w: &Walk) -> Option<(bool, Option<ExprH>)> {
        let is_i = |e: ExprH| matches!(self.body.exprs[e], Expr::Local(l) if l == i);
        if is_i(e) {
            return Some((false, None));
        }
        // `let k = i * cols + j; a[k] = ..`: the index is what `k` holds.
        if let Expr::Local(l) = self.body.exprs[e] {
            return self.split_index(i, self.let_value(l, i, w)?, w);
        }
        let Expr::Binary(op, a, b) = self.body.exprs[e] else {
            return None;
        };
        // `i * K`, `K * i`: K.
        let times_i = |e: ExprH| match self.body.exprs[e] {
            Expr::Binary(BinOp::Mul, x, k) if is_i(x) && !self.mentions(k, &[i]) => Some(k),
            Expr::Binary(BinOp::Mul, k, x) if is_i(x) && !self.mentions(k, &[i]) => Some(k),
            _ => None,
        };
        match op {
            BinOp::Add => {
                for (x, y) in [(a, b), (b, a)] {
                    if is_i(x) && !self.mentions(y, &[i]) {
                        return Some((false, Some(y)));
                    }
                    if let Some(k) = times_i(x) {
                        if self.below(y, k, w) {
                            return Some((true, Some(k)));
                        }
                    }
                }
                None
            }
            BinOp::Mul => times_i(e).map(|k| (true, Some(k))),
            _ => None,
        }
    }

    /// The initial value of `l` when `l` is a `let` of the loop body that
    /// nothing assigns afterwards and whose value reads only `i`, inner
    /// loops' variables and what no iteration changes: then every use of
    /// `l` in an iteration has that value (the C habit
    /// `int k = i * cols + j;`).
    fn let_value(&self, l: LocalH, i: LocalH, w: &Walk) -> Option<ExprH> {
        let init = w.let_init(l)?;
        let ranged: Vec<LocalH> = w.ranges.iter().map(|r| r.0).collect();
        let mut varying: Vec<LocalH> = w
            .declared
            .iter()
            .copied()
            .filter(|d| *d != i && !ranged.contains(d))
            .collect();
        varying.extend(w.assigned.iter().map(|a| a.0));
        varying.extend(w.updates.iter().map(|u| u.0));
        (!self.mentions(init, &varying)).then_some(init)
    }

    /// Is `r` always in `0..k`? An inner loop's variable over `0..k`, or a
    /// constant below a constant `k`.
    fn below(&self, r: ExprH, k: ExprH, w: &Walk) -> bool {
        match (&self.body.exprs[r], &self.body.exprs[k]) {
            (Expr::Const(c), Expr::Const(n)) => {
                matches!((c.as_i128(), n.as_i128()), (Some(c), Some(n)) if 0 <= c && c < n)
            }
            (Expr::Local(j), _) => w.ranges.iter().any(|&(v, lo, hi, inclusive)| {
                v == *j
                    && !inclusive
                    && matches!(&self.body.exprs[lo], Expr::Const(c) if c.as_i128() == Some(0))
                    && self.same(hi, k)
                    && !w.assigned.iter().any(|a| a.0 == *j)
            }),
            _ => false,
        }
    }

    /// Are `a` and `b` the same expression (constants by value)?
    fn same(&self, a: ExprH, b: ExprH) -> bool {
        match (&self.body.exprs[a], &self.body.exprs[b]) {
            (Expr::Const(x), Expr::Const(y)) => x.as_i128().is_some() && x.as_i128() == y.as_i128(),
            (Expr::Local(x), Expr::Local(y)) | (Expr::Global(x), Expr::Global(y)) => x == y,
            (Expr::Binary(o1, a1, b1), Expr::Binary(o2, a2, b2)) => {
                o1 == o2 && self.same(*a1, *a2) && self.same(*b1, *b2)
            }
            (Expr::Cast(x, t1), Expr::Cast(y, t2)) => t1 == t2 && self.same(*x, *y),
            _ => false,
        }
    }

    /// Does `e` read one of `vars`?
    fn mentions(&self, e: ExprH, vars: &[LocalH]) -> bool {
        match &self.body.exprs[e] {
            Expr::Local(l) => vars.contains(l),
            Expr::Global(_) => false,
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.mentions(*a, vars),
            Expr::Binary(_, a, b) => self.mentions(*a, vars) || self.mentions(*b, vars),
            Expr::Index(a, idx) => {
                self.mentions(*a, vars) || idx.iter().any(|&x| self.mentions(x, vars))
            }
            Expr::Call(_, args)
            | Expr::Builtin(_, args)
            | Expr::Array(_, args)
            | Expr::Tuple(args) => args.iter().any(|&x| self.mentions(x, vars)),
            Expr::Const(_) | Expr::Str(_) | Expr::TypeArg(_) => false,
        }
    }

    /// `s op= e`, `s = s op e` or `s = max(s, e)`: the operator and `e`.
    fn update(&self, s: LocalH, op: Option<BinOp>, value: ExprH) -> Option<(ReductionOp, ExprH)> {
        let of = |b: BinOp| match b {
            BinOp::Add | BinOp::Sub => Some(ReductionOp::Add),
            BinOp::Mul => Some(ReductionOp::Mul),
            BinOp::BitAnd => Some(ReductionOp::BitAnd),
            BinOp::BitOr => Some(ReductionOp::BitOr),
            BinOp::BitXor => Some(ReductionOp::BitXor),
            BinOp::And => Some(ReductionOp::And),
            BinOp::Or => Some(ReductionOp::Or),
            _ => None,
        };
        let is_s = |e: ExprH| matches!(self.body.exprs[e], Expr::Local(l) if l == s);
        match (op, &self.body.exprs[value]) {
            (Some(b), _) => of(b).map(|o| (o, value)),
            // `s - e` reduces as `+`; `e - s` does not.
            (None, Expr::Binary(b, l, r)) if is_s(*l) => of(*b).map(|o| (o, *r)),
            (None, Expr::Binary(b, l, r))
                if is_s(*r) && !matches!(b, BinOp::Sub | BinOp::And | BinOp::Or) =>
            {
                of(*b).map(|o| (o, *l))
            }
            (None, Expr::Builtin(id, args)) if args.len() == 2 => {
                let op = match self.builtins.get(*id).name.as_str() {
                    "max" => ReductionOp::Max,
                    "min" => ReductionOp::Min,
                    _ => return None,
                };
                if is_s(args[0]) {
                    Some((op, args[1]))
                } else if is_s(args[1]) {
                    Some((op, args[0]))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn block(&self, b: &Block, depth: u32, w: &mut Walk) {
        for s in b {
            if w.refused.is_some() {
                return;
            }
            match &s.kind {
                StmtKind::Let { local, init } => {
                    self.expr(*init, w);
                    w.declared.push(*local);
                    w.lets.push((*local, *init));
                }
                StmtKind::LetTuple { locals, init } => {
                    self.expr(*init, w);
                    w.declared.extend(locals.iter().flatten());
                }
                StmtKind::Assign { place, op, value } => match place {
                    // Never in device code (the checker refuses it).
                    Place::Global(_) => self.expr(*value, w),
                    Place::Local(l) => match self.update(*l, *op, *value) {
                        Some((rop, e)) if !w.declared.contains(l) => {
                            self.expr(e, w);
                            w.updates.push((*l, rop, s.span));
                        }
                        _ => {
                            self.expr(*value, w);
                            if op.is_some() {
                                w.reads.push(*l);
                            }
                            w.assigned.push((*l, s.span));
                        }
                    },
                    Place::Element { array, indices } => {
                        self.expr(*value, w);
                        for &i in indices {
                            self.expr(i, w);
                        }
                        match &self.body.exprs[*array] {
                            Expr::Local(a) => w.accesses.push((*a, indices.clone(), true)),
                            _ => w.refuse("a write through an array expression"),
                        }
                    }
                },
                StmtKind::Expr(e) => self.expr(*e, w),
                StmtKind::If { cond, then, els } => {
                    self.expr(*cond, w);
                    self.block(then, depth, w);
                    self.block(els, depth, w);
                }
                StmtKind::While { cond, body } => {
                    self.expr(*cond, w);
                    self.block(body, depth + 1, w);
                }
                StmtKind::For(f) => {
                    self.expr(f.header.lo, w);
                    self.expr(f.header.hi, w);
                    w.declared.push(f.header.var);
                    w.ranges
                        .push((f.header.var, f.header.lo, f.header.hi, f.header.inclusive));
                    self.block(&f.body, depth + 1, w);
                }
                StmtKind::Block(b) => self.block(b, depth, w),
                // `continue` ends an iteration, of a vector loop too.
                StmtKind::Continue => w.continues |= depth == 0,
                StmtKind::Break if depth > 0 => {}
                StmtKind::Break => w.refuse("it has a `break`"),
                StmtKind::Return(_) => w.refuse("it has a `return`"),
                StmtKind::Construct(_) => w.refuse("it holds a construct"),
                StmtKind::Atomic { .. } => w.refuse("it has an atomic update"),
                StmtKind::Cache { lo, .. } => self.expr(*lo, w),
            }
        }
    }

    fn expr(&self, e: ExprH, w: &mut Walk) {
        if w.refused.is_some() {
            return;
        }
        match &self.body.exprs[e] {
            Expr::Const(_) | Expr::Global(_) => {}
            Expr::Local(l) => w.reads.push(*l),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.expr(*a, w),
            Expr::Binary(_, a, b) => {
                self.expr(*a, w);
                self.expr(*b, w);
            }
            Expr::Index(a, idx) => {
                for &i in idx {
                    self.expr(i, w);
                }
                match &self.body.exprs[*a] {
                    Expr::Local(l) => w.accesses.push((*l, idx.clone(), false)),
                    _ => w.refuse("a read through an array expression"),
                }
            }
            Expr::Call(f, args) => {
                let callee = &self.program.functions[*f];
                let scalars = callee
                    .params
                    .iter()
                    .all(|p| !matches!(callee.body.locals[*p].ty, Type::Array(..)));
                if !scalars {
                    w.refuse("it calls a function that takes arrays");
                    return;
                }
                for &a in args {
                    self.expr(a, w);
                }
            }
            Expr::Builtin(id, args) => {
                if self.builtins.get(*id).effect != Effect::Pure {
                    w.refuse(format!("it calls `{}`", self.builtins.get(*id).name));
                    return;
                }
                for &a in args {
                    self.expr(a, w);
                }
            }
            Expr::Str(_) | Expr::TypeArg(_) => w.refuse("it uses a string"),
            // The checker keeps array literals out of device code.
            Expr::Array(..) => w.refuse("it builds an array"),
            Expr::Tuple(args) => {
                for &a in args {
                    self.expr(a, w);
                }
            }
        }
    }
}
