//! A `parallel { .. }` region whose work is one `loop gang` (or one `loop`
//! with no level) is the `parallel loop` it is equivalent to, so it gets
//! the gang loop's layout (teams, unroll and jam) instead of running the
//! block redundantly in every gang.
//!
//! OpenACC runs a region's statements outside loops in every gang; when
//! those statements are only `let`s of values that any gang computes alike
//! (no call of a user function, no effectful builtin, no read of an array
//! the region writes, never assigned afterwards), recomputing them in each
//! gang iteration instead cannot be told apart. A `loop worker` that is the
//! whole of the gang loop's body (after such `let`s again) is collapsed
//! into the gang loop: the (gang, worker) pairs are spread over the gangs'
//! teams, which is what "iterations of `j` over the gang's workers" gives
//! when each worker is a team. The loop bounds become host expressions
//! (the launch evaluates them), so they may not mention the region's own
//! variables.

use lang::hir::{self, DirectiveKind, Expr, ExprH, LocalH, StmtKind};
use lang::{Builtins, Effect, Span};

/// The `parallel loop` that `c` (a region) is equivalent to, with what
/// was decided for `--explain`; `None` when the region is not that shape.
pub(super) fn as_gang_loop(
    body: &hir::Body,
    c: &hir::Construct,
    builtins: &Builtins,
) -> Option<(hir::Construct, Vec<(Span, String)>)> {
    let (DirectiveKind::Parallel, hir::ConstructBody::Block(block)) = (c.kind, &c.body) else {
        return None;
    };
    let cx = Cx {
        body,
        builtins,
        written: c
            .captures
            .arrays
            .iter()
            .filter(|a| a.written)
            .map(|a| a.var)
            .collect(),
    };
    let mut declared = Vec::new();
    declared_in(block, &mut declared);
    let (lets, gang) = cx.split(block, &declared)?;
    let cl = &gang.clauses;
    let level_less = !(cl.gang || cl.worker || cl.vector || cl.seq || cl.auto);
    if !(cl.gang || level_less) || cl.vector || cl.seq || cl.auto || !cl.tile.is_empty() {
        return None;
    }
    // A reduction on the gang loop is the region's own (one gang at a time
    // reduces into the gang's copy), so it may only repeat one of those.
    let same = |r: &hir::Reduction| {
        c.clauses
            .reductions
            .iter()
            .any(|q| q.var == r.var && q.op == r.op)
    };
    if !cl.reductions.iter().all(same) || !cl.array_reductions.is_empty() {
        return None;
    }
    let hir::ConstructBody::Loops { loops, body: inner } = &gang.body else {
        return None;
    };
    if !loops.iter().all(|h| cx.host_bound(h, &declared)) {
        return None;
    }
    let mut loops = loops.clone();
    let mut stmts: hir::Block = lets.to_vec();
    let mut clauses = c.clauses.clone();
    clauses.private.extend(cl.private.iter().copied());
    clauses
        .private_copies
        .extend(cl.private_copies.iter().copied());
    let mut notes = Vec::new();
    let mut inner_body = inner.clone();
    let mut worker = false;
    // gang > worker: collapsed when the worker loop is all the gang does.
    if cl.gang && !cl.worker {
        if let Some((wlets, w)) = cx.split(inner, &declared) {
            let wc = &w.clauses;
            if let hir::ConstructBody::Loops {
                loops: wl,
                body: wb,
            } = &w.body
            {
                let gang_vars: Vec<LocalH> = loops.iter().map(|h| h.var).collect();
                let mut inner_decl = declared.clone();
                inner_decl.extend(&gang_vars);
                if wc.worker
                    && !(wc.gang || wc.vector || wc.seq || wc.auto)
                    && wc.reductions.is_empty()
                    && wc.array_reductions.is_empty()
                    && wc.tile.is_empty()
                    && wl.iter().all(|h| cx.host_bound(h, &inner_decl))
                {
                    stmts.extend(wlets.iter().cloned());
                    loops.extend(wl.iter().cloned());
                    clauses.private.extend(wc.private.iter().copied());
                    // The gang loop's copies are each gang iteration's,
                    // shared by its worker iterations, which are separate
                    // iterations now: they stay in the hidden array.
                    clauses
                        .private_copies
                        .retain(|p| !cl.private_copies.contains(p));
                    clauses
                        .private_copies
                        .extend(wc.private_copies.iter().copied());
                    inner_body = wb.clone();
                    worker = true;
                    notes.push((
                        w.span,
                        "`loop worker`: collapsed into the gang loop; each (gang, worker) iteration goes to one worker, a team of lanes".into(),
                    ));
                }
            }
        }
    }
    stmts.extend(inner_body);
    clauses.gang = cl.gang;
    clauses.worker = worker || cl.worker;
    clauses.collapse = loops.len() as u32;
    notes.insert(
        0,
        (
            gang.span,
            if level_less {
                "`loop` (no level) is the region's only work: the compiler chooses its levels as for a `parallel loop`".into()
            } else {
                "`loop gang` is the region's only work: it runs as a `parallel loop gang` (gang-partitioned; the region's `let`s are computed in each gang iteration)".into()
            },
        ),
    );
    Some((
        hir::Construct {
            kind: DirectiveKind::ParallelLoop,
            id: c.id,
            span: c.span,
            kind_span: c.kind_span,
            clauses,
            body: hir::ConstructBody::Loops { loops, body: stmts },
            captures: c.captures.clone(),
        },
        notes,
    ))
}

struct Cx<'a> {
    body: &'a hir::Body,
    builtins: &'a Builtins,
    /// Arrays the region writes.
    written: Vec<LocalH>,
}

impl Cx<'_> {
    /// `block` as `let`s any gang computes alike, then one `loop` construct
    /// (nothing after it); the `let`s' variables are never assigned.
    fn split<'b>(
        &self,
        block: &'b hir::Block,
        declared: &[LocalH],
    ) -> Option<(&'b [hir::Stmt], &'b hir::Construct)> {
        let (last, lets) = block.split_last()?;
        let StmtKind::Construct(c) = &last.kind else {
            return None;
        };
        if c.kind != DirectiveKind::Loop {
            return None;
        }
        let mut assigned = Vec::new();
        assigned_in(block, &mut assigned);
        for s in lets {
            let StmtKind::Let { local, init } = &s.kind else {
                return None;
            };
            if assigned.contains(local) || !self.pure(*init, declared, true) {
                return None;
            }
        }
        Some((lets, c))
    }

    /// A loop bound the host can evaluate at launch.
    fn host_bound(&self, h: &hir::LoopHeader, declared: &[LocalH]) -> bool {
        self.pure(h.lo, declared, false) && self.pure(h.hi, declared, false)
    }

    /// No user function, no effect, no read of an array the region writes;
    /// `local_ok`: it may read the region's own variables.
    fn pure(&self, e: ExprH, declared: &[LocalH], local_ok: bool) -> bool {
        let go = |x: &ExprH| self.pure(*x, declared, local_ok);
        match &self.body.exprs[e] {
            Expr::Const(_) | Expr::TypeArg(_) => true,
            Expr::Local(l) => local_ok || !declared.contains(l),
            Expr::Global(_) => false,
            Expr::Unary(_, a) | Expr::Cast(a, _) => go(a),
            Expr::Binary(_, a, b) => go(a) && go(b),
            Expr::Index(a, idx) => {
                let readable = match &self.body.exprs[*a] {
                    Expr::Local(l) => !self.written.contains(l),
                    _ => false,
                };
                readable && idx.iter().all(go)
            }
            Expr::Call(..) | Expr::Str(_) | Expr::Array(..) | Expr::Tuple(_) => false,
            Expr::Builtin(id, args) => {
                self.builtins.get(*id).effect == Effect::Pure && args.iter().all(go)
            }
        }
    }
}

/// Every local declared in `b` (lets and loop variables), at any depth.
fn declared_in(b: &hir::Block, out: &mut Vec<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, .. } => out.push(*local),
            StmtKind::LetTuple { locals, .. } => out.extend(locals.iter().flatten()),
            StmtKind::If { then, els, .. } => {
                declared_in(then, out);
                declared_in(els, out);
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => declared_in(body, out),
            StmtKind::For(f) => {
                out.push(f.header.var);
                declared_in(&f.body, out);
            }
            StmtKind::Construct(c) => {
                if let hir::ConstructBody::Loops { loops, body } = &c.body {
                    out.extend(loops.iter().map(|h| h.var));
                    declared_in(body, out);
                } else if let hir::ConstructBody::Block(body) = &c.body {
                    declared_in(body, out);
                }
            }
            _ => {}
        }
    }
}

pub(super) use lang::hir::assigned_in;
