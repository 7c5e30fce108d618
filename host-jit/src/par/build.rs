//! The static half of the proof: a walk of the loop's body that refuses
//! what no value can make independent, and otherwise builds the index and
//! bound nodes the test evaluates as the loop starts.

use super::{refused, vars, vars_count, Node, ParTest, Recurrence, MAX_VARS};
use crate::plan::{Planner, Why};
use lang::hir::ReductionOp;
use lang::hir::{self, BinOp, Body, Expr, ExprH, ForLoop, LocalH, Place, Stmt, StmtKind, UnOp};
use lang::{Scalar, Span, Type};
use std::collections::{HashMap, HashSet};

impl ParTest {
    /// The test for compiled loop statement `fl` of `body` (`top`: the
    /// program's top level, whose locals are the top-level variables);
    /// why not when its iterations cannot be independent whatever the
    /// values.
    pub fn of(p: &Planner, body: &Body, fl: &ForLoop, top: bool) -> Result<ParTest, Why> {
        Self::of_with(p, body, fl, top, &[])
    }

    /// The test for a compute construct's loop nest `fl` (one `for` per
    /// level), whose reduction and private scalars (`handled`) the
    /// construct's chunks keep apart themselves: only its array accesses
    /// are tested (and its levels' bounds must not change in it).
    pub fn of_nest(
        p: &Planner,
        body: &Body,
        fl: &ForLoop,
        handled: &[LocalH],
    ) -> Result<ParTest, Why> {
        Self::of_with(p, body, fl, false, handled)
    }

    fn of_with(
        p: &Planner,
        body: &Body,
        fl: &ForLoop,
        top: bool,
        handled: &[LocalH],
    ) -> Result<ParTest, Why> {
        let mut assigned = HashSet::new();
        assigned_in(&fl.body, &mut assigned);
        if assigned.contains(&fl.header.var) {
            return refused(fl.header.span, "it assigns its own counter");
        }
        let writers = global_writers(p.prog);
        let mut declared_in = HashSet::new();
        locals_in(&fl.body, false, &mut declared_in);
        let shared = assigned
            .iter()
            .copied()
            .filter(|l| !declared_in.contains(l) && !handled.contains(l))
            .collect();
        let mut b = Build {
            body,
            builtins: p.builtins,
            shared,
            handled: handled.iter().copied().collect(),
            assigned,
            nodes: Vec::new(),
            vars: vec![fl.header.var],
            loops: Vec::new(),
            env: HashMap::new(),
            declared: HashSet::new(),
            accesses: Vec::new(),
            reductions: Vec::new(),
            calls: Vec::new(),
            cond: 0,
            counted: Vec::new(),
            named: HashSet::new(),
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
        let mut recurrences: Vec<Recurrence> = Vec::new();
        for (f, span, times) in &b.calls {
            let (f, span) = (*f, *span);
            let callee = &p.prog.functions[f];
            if writers.contains(&f.index()) {
                let Some(r) = recurrence(p.prog, f, &writers) else {
                    return refused(
                        span,
                        format!(
                            "it calls `{}`, which assigns top-level variables",
                            callee.name
                        ),
                    );
                };
                let g = &p.prog.main.locals[LocalH::new(r.slot)].name;
                let Some(times) = times else {
                    return refused(
                        span,
                        format!(
                            "it calls `{}`, which steps `{g}`, on some turns only",
                            callee.name
                        ),
                    );
                };
                if b.named.contains(&r.slot) {
                    return refused(
                        span,
                        format!("it names `{g}`, which `{}` steps", callee.name),
                    );
                }
                match recurrences.iter_mut().find(|x| x.slot == r.slot) {
                    Some(x) if x.func == f.index() => x.sites.push(times.clone()),
                    Some(_) => return refused(span, format!("two functions it calls step `{g}`")),
                    None => recurrences.push(Recurrence {
                        sites: vec![times.clone()],
                        ..r
                    }),
                }
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
        let mut read_only: Vec<(usize, Option<Vec<Vec<u32>>>)> = Vec::new();
        for (a, _, write, _) in &b.accesses {
            if !arrays.contains(a) {
                arrays.push(*a);
            }
            if *write && !written.iter().any(|(x, _)| x == a) {
                written.push((*a, Vec::new()));
            }
        }
        for &a in &arrays {
            if !written.iter().any(|(x, _)| *x == a) {
                read_only.push((a, Some(Vec::new())));
            }
        }
        for (a, ix, _, span) in &b.accesses {
            let affine = ix
                .as_ref()
                .filter(|ix| ix.iter().all(|&n| vars_count(&b.nodes, n) <= MAX_VARS));
            if let Some(r) = read_only.iter_mut().find(|(x, _)| x == a) {
                r.1 = match (r.1.take(), affine) {
                    (Some(mut v), Some(ix)) => {
                        v.push(ix.clone());
                        Some(v)
                    }
                    _ => None,
                };
                continue;
            }
            let Some(w) = written.iter_mut().find(|(x, _)| x == a) else {
                continue;
            };
            match affine {
                Some(ix) => w.1.push(ix.clone()),
                None => {
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
            read_only,
            arrays,
            reductions: b.reductions,
            recurrences,
        })
    }
}

/// The functions that assign a top-level variable, themselves or through
/// their calls (by handle index).
fn global_writers(prog: &hir::Program) -> HashSet<usize> {
    let mut direct: Vec<bool> = Vec::with_capacity(prog.functions.len());
    let mut calls: Vec<Vec<usize>> = Vec::with_capacity(prog.functions.len());
    for (_, f) in prog.functions.iter() {
        let mut c = Vec::new();
        crate::walk::callees(&f.body, &f.body.block, &mut c);
        direct.push(writes_global(&f.body, &f.body.block));
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

/// Whether `b` assigns a top-level variable (or an element of one).
fn writes_global(body: &Body, b: &[Stmt]) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Assign { place, .. } | StmtKind::Atomic { place, .. } => match place {
            Place::Global(_) => true,
            Place::Element { array, .. } => matches!(body.exprs[*array], Expr::Global(_)),
            Place::Local(_) => false,
        },
        StmtKind::If { then, els, .. } => writes_global(body, then) || writes_global(body, els),
        StmtKind::While { body: w, .. } => writes_global(body, w),
        StmtKind::For(fl) => writes_global(body, &fl.body),
        StmtKind::Block(inner) => writes_global(body, inner),
        // Host code with a construct is never compiled; count it as
        // writing.
        StmtKind::Construct(_) => true,
        _ => false,
    })
}

/// The locals `b` declares (`let`s and counters) and, with `assigns`,
/// those it assigns, at any depth.
fn locals_in(b: &[Stmt], assigns: bool, out: &mut HashSet<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, .. } => {
                out.insert(*local);
            }
            StmtKind::LetTuple { locals, .. } => out.extend(locals.iter().flatten().copied()),
            StmtKind::Assign {
                place: Place::Local(l),
                ..
            } if assigns => {
                out.insert(*l);
            }
            StmtKind::If { then, els, .. } => {
                locals_in(then, assigns, out);
                locals_in(els, assigns, out);
            }
            StmtKind::While { body, .. } => locals_in(body, assigns, out),
            StmtKind::For(fl) => {
                out.insert(fl.header.var);
                locals_in(&fl.body, assigns, out);
            }
            StmtKind::Block(inner) => locals_in(inner, assigns, out),
            _ => {}
        }
    }
}

/// The locals `b` assigns or declares, at any depth.
fn assigned_in(b: &[Stmt], out: &mut HashSet<LocalH>) {
    locals_in(b, true, out)
}

/// The walk of a loop body that builds a [`ParTest`].
struct Build<'a> {
    body: &'a Body,
    builtins: &'a lang::Builtins,
    /// The scalars declared outside the loop that it assigns: reductions,
    /// read nowhere but in their updates.
    shared: HashSet<LocalH>,
    /// The scalars a construct keeps apart itself (its reductions and
    /// private variables).
    handled: HashSet<LocalH>,
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
    /// Each call: the function, where, and the counters of the counted
    /// loops around it (None: it runs on some turns only).
    calls: Vec<(hir::FnH, Span, Option<Vec<usize>>)>,
    /// How many conditional places (a branch, a `while`, the right side
    /// of `&&`/`||`, a loop with no counted range) the walk is in.
    cond: usize,
    /// The counted loops the walk is in, by counter number.
    counted: Vec<usize>,
    /// The frame and top-level slots the body names itself.
    named: HashSet<usize>,
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
            Expr::Builtin(id, args) if args.len() == 2 => {
                let name = self.builtins.get(*id).name.as_str();
                let (a, b) = (args[0], args[1]);
                let (a, b) = (self.node(a)?, self.node(b)?);
                if self.has_var(a) || self.has_var(b) {
                    return None;
                }
                match name {
                    "min" => Node::Min(a, b),
                    "max" => Node::Max(a, b),
                    _ => return None,
                }
            }
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
                Place::Local(l) if self.handled.contains(l) => self.expr(*value),
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
                self.cond += 1;
                self.block(then);
                self.env = saved.clone();
                self.block(els);
                self.cond -= 1;
                self.env = saved;
                self.forget(then);
                self.forget(els);
            }
            StmtKind::While { cond, body } => {
                self.forget(body);
                self.cond += 1;
                self.expr(*cond);
                self.depth += 1;
                self.block(body);
                self.depth -= 1;
                self.cond -= 1;
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
                let counted = match (lo, hi) {
                    (Some(lo), Some(hi)) if !inner.contains(&h.var) => {
                        self.vars.push(h.var);
                        self.loops.push((lo, hi, h.inclusive));
                        self.counted.push(self.vars.len() - 1);
                        true
                    }
                    _ => {
                        self.env.insert(h.var, None);
                        self.cond += 1;
                        false
                    }
                };
                self.depth += 1;
                self.block(&fl.body);
                self.depth -= 1;
                if counted {
                    self.counted.pop();
                } else {
                    self.cond -= 1;
                }
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
            Expr::Local(l) | Expr::Global(l) => {
                self.named.insert(l.index());
            }
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.expr(*a),
            Expr::Binary(op, a, b) => {
                let (short, a, b) = (matches!(op, BinOp::And | BinOp::Or), *a, *b);
                self.expr(a);
                self.cond += usize::from(short);
                self.expr(b);
                self.cond -= usize::from(short);
            }
            Expr::Index(a, ix) => {
                let (a, ix) = (*a, ix.clone());
                ix.iter().for_each(|&i| self.expr(i));
                self.access(a, &ix, false, self.body.span(e));
            }
            Expr::Call(f, args) => {
                let times = (self.cond == 0).then(|| self.counted.clone());
                self.calls.push((*f, self.body.span(e), times));
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

/// Function `f`'s one assignment of a top-level variable, when it is an
/// affine step of an integer `g` (`g = g * A + C`, wrapping, or that `% M`
/// for a power of two `M`) that every call runs exactly once: a statement
/// of the function's own block with no `return` before it, and no other
/// assignment of a top-level variable in the function or what it calls.
fn recurrence(prog: &hir::Program, f: hir::FnH, writers: &HashSet<usize>) -> Option<Recurrence> {
    let func = &prog.functions[f];
    let body = &func.body;
    let mut calls = Vec::new();
    crate::walk::callees(body, &body.block, &mut calls);
    if calls.iter().any(|c| writers.contains(c)) {
        return None;
    }
    let writes = |s: &Stmt| writes_global(body, std::slice::from_ref(s));
    let at = body.block.iter().position(writes)?;
    for (k, s) in body.block.iter().enumerate() {
        if k != at && writes(s) || k < at && returns(std::slice::from_ref(s)) {
            return None;
        }
    }
    let StmtKind::Assign {
        place: Place::Global(g),
        op: None,
        value,
    } = &body.block[at].kind
    else {
        return None;
    };
    let ty = prog.main.locals[*g].ty.scalar()?;
    let bits: u32 = match ty {
        Scalar::I32 | Scalar::U32 => 32,
        Scalar::I64 => 64,
        _ => return None,
    };
    let konst = |e: ExprH| match &body.exprs[e] {
        Expr::Const(v) => v.as_i128(),
        _ => None,
    };
    let is_g = |e: ExprH| matches!(body.exprs[e], Expr::Global(l) if l == *g);
    // `g * A + C` (either order), `g * A`, `g + C`.
    let step = |e: ExprH| -> Option<(i128, i128)> {
        let times = |e: ExprH| match &body.exprs[e] {
            Expr::Binary(BinOp::Mul, x, y) if is_g(*x) => konst(*y),
            Expr::Binary(BinOp::Mul, x, y) if is_g(*y) => konst(*x),
            _ if is_g(e) => Some(1),
            _ => None,
        };
        match &body.exprs[e] {
            Expr::Binary(BinOp::Add, x, y) => match (times(*x), konst(*y)) {
                (Some(a), Some(c)) => Some((a, c)),
                _ => Some((times(*y)?, konst(*x)?)),
            },
            _ => Some((times(e)?, 0)),
        }
    };
    let (max, signed) = match ty {
        Scalar::U32 => (u32::MAX as i128, false),
        Scalar::I32 => (i32::MAX as i128, true),
        _ => (i64::MAX as i128, true),
    };
    let (a, c, modbits, below) = match &body.exprs[*value] {
        Expr::Binary(BinOp::Rem, x, m) => {
            let (a, c) = step(*x)?;
            let m = konst(*m)?;
            if m <= 1 || m & (m - 1) != 0 || m > 1i128 << bits {
                return None;
            }
            let k = m.trailing_zeros();
            if !signed {
                (a, c, k, None)
            } else if a >= 0 && c >= 0 && (m - 1).checked_mul(a)?.checked_add(c)? <= max {
                // Never negative, never wrapping: exactly `mod M` once the
                // state is in [0, M).
                (a, c, k, Some(m as u128))
            } else {
                return None;
            }
        }
        _ => {
            let (a, c) = step(*value)?;
            (a, c, bits, None)
        }
    };
    let mask = |v: i128| (v as u128) & (u128::MAX >> (128 - modbits));
    Some(Recurrence {
        slot: g.index(),
        ty,
        func: f.index(),
        a: mask(a),
        c: mask(c),
        modbits,
        below,
        sites: Vec::new(),
    })
}

/// Whether `b` holds a `return`, at any depth.
fn returns(b: &[Stmt]) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { then, els, .. } => returns(then) || returns(els),
        StmtKind::While { body, .. } => returns(body),
        StmtKind::For(fl) => returns(&fl.body),
        StmtKind::Block(inner) => returns(inner),
        _ => false,
    })
}
