//! `kernels` and `serial`, written in terms of the other constructs when
//! parsed (so the checker, the interpreter and the compiler know only
//! `parallel`, `parallel loop` and `data`):
//!
//! * `serial [clauses] { .. }` is `parallel num_gangs(1) vector_length(1)
//!   [clauses] { .. }`: one gang of one lane runs the block;
//! * `kernels [clauses] { .. }` splits its block at its top-level `for`
//!   loops. A loop that assigns no variable declared outside it, or only
//!   reduction variables (`s op= e`, `s = s op e`, `s = max(s, e)`, one
//!   operator each, `s` read nowhere else in the loop), becomes `parallel
//!   loop auto [reduction(op: s)]`: the compiler runs it in parallel when
//!   it proves the iterations independent, else on one lane in order. Any
//!   other loop, and each run of statements between loops, becomes a
//!   `serial` region. The data clauses (and `if`) go on a `data` region
//!   around them all; `async`, `wait`, `if`, `num_gangs`, `num_workers`
//!   and `vector_length` go on every part (`vector_length` and the gang and
//!   worker counts on the loops only). Variables declared between the loops
//!   are local to their part. A top-level `loop [clauses] for ..` is
//!   analysed as a bare `for` is, its clauses going to its part (`seq`
//!   keeps it in a `serial` part, `independent` makes it a parallel one).
//!   `kernels loop [clauses] for ..` is `kernels` around `loop [clauses]
//!   for ..`, the loop's clauses on the loop. Every part carries the
//!   [`KERNELS_PART`] mark: a scalar assigned in it with no clause is
//!   `copy` there (OpenACC 3.3), where `parallel` makes it firstprivate.

use crate::ast::*;
use crate::span::Span;

/// The clause that marks a part of a `kernels` construct. It has a space,
/// so no program can write it.
pub const KERNELS_PART: &str = "kernels part";

/// The clause that marks a construct written `serial`: the clauses before
/// it are the program's, the `num_gangs(1) vector_length(1)` after it what
/// `serial` stands for, so the checker can refuse a written `num_gangs`
/// instead of reporting it twice. It has a space, so no program can write
/// it.
pub const SERIAL: &str = "serial construct";

const DATA_CLAUSES: &[&str] = &[
    "copy",
    "copyin",
    "copyout",
    "create",
    "present",
    "no_create",
    "deviceptr",
    "default",
];
/// The clauses of `kernels loop` that belong to its loop.
const LOOP_CLAUSES: &[&str] = &[
    "gang",
    "worker",
    "vector",
    "seq",
    "independent",
    "auto",
    "reduction",
    "collapse",
    "tile",
    "private",
    COLLAPSE_FORCE,
    GANG_DIM,
    GANG_STATIC,
];
const PER_PART: &[&str] = &["async", "wait", "if"];
const LOOP_ONLY: &[&str] = &["num_gangs", "num_workers", "vector_length", "collapse"];

fn int_clause(name: &str, v: u64, span: Span) -> Clause {
    Clause {
        name: Ident {
            name: name.into(),
            span,
        },
        args: ClauseArgs::List(vec![Expr::new(ExprKind::Int(v, None), span)]),
        span,
    }
}

fn flag(name: &str, span: Span) -> Clause {
    Clause {
        name: Ident {
            name: name.into(),
            span,
        },
        args: ClauseArgs::None,
        span,
    }
}

/// `serial [clauses] { .. }`.
pub fn serial(kind_span: Span, mut clauses: Vec<Clause>, block: Block) -> Directive {
    clauses.push(flag(SERIAL, kind_span));
    clauses.push(int_clause("num_gangs", 1, kind_span));
    clauses.push(int_clause("vector_length", 1, kind_span));
    Directive {
        kind: DirectiveKind::Parallel,
        kind_span,
        wait_args: None,
        clauses,
        body: DirectiveBody::Block(block),
    }
}

/// `serial loop [clauses] for ..`: a `parallel loop` of one gang of one
/// lane, as `serial` is a `parallel` of one.
pub fn serial_loop(kind_span: Span, clauses: Vec<Clause>, f: ForLoop, _span: Span) -> Directive {
    let mut d = serial(
        kind_span,
        clauses,
        Block {
            stmts: Vec::new(),
            span: kind_span,
        },
    );
    d.kind = DirectiveKind::ParallelLoop;
    d.body = DirectiveBody::For(Box::new(f));
    d
}

/// `kernels [clauses] { .. }`: the statement it stands for.
pub fn kernels(kind_span: Span, clauses: Vec<Clause>, block: Block) -> StmtKind {
    let named = |names: &[&str]| -> Vec<Clause> {
        clauses
            .iter()
            .filter(|c| names.contains(&c.name.name.as_str()))
            .cloned()
            .collect()
    };
    // Clauses no part takes are kept on the data region, whose checker
    // then reports them.
    let mut data = named(DATA_CLAUSES);
    data.extend(named(&["if"]));
    data.extend(
        clauses
            .iter()
            .filter(|c| {
                let n = c.name.name.as_str();
                !DATA_CLAUSES.contains(&n) && !PER_PART.contains(&n) && !LOOP_ONLY.contains(&n)
            })
            .cloned(),
    );
    let per_part = named(PER_PART);
    let loop_only = named(LOOP_ONLY);
    let mut parts = Vec::new();
    let mut run: Vec<Stmt> = Vec::new();
    let flush = |run: &mut Vec<Stmt>, parts: &mut Vec<Stmt>| {
        if run.is_empty() {
            return;
        }
        let span = Span::new(
            run[0].span.start as usize,
            run[run.len() - 1].span.end as usize,
        );
        let stmts = std::mem::take(run);
        let mut cl = per_part.clone();
        cl.push(flag(KERNELS_PART, kind_span));
        parts.push(Stmt {
            kind: StmtKind::Directive(serial(kind_span, cl, Block { stmts, span })),
            span,
        });
    };
    let stmts = block.stmts;
    let count = stmts.len();
    for (at, s) in stmts.iter().cloned().enumerate() {
        // A `loop` of the region gets the analysis a bare `for` gets, its
        // clauses going to the part it becomes: `seq` keeps it in order on
        // one lane, `independent` runs it in parallel as told.
        let (f, explicit) = match &s.kind {
            // A loop counted down keeps its order: it stays in a serial part.
            StmtKind::For(f) if !f.rev => (f, Vec::new()),
            StmtKind::Directive(Directive {
                kind: DirectiveKind::Loop,
                clauses,
                body: DirectiveBody::For(f),
                ..
            }) => (&**f, clauses.clone()),
            _ => {
                run.push(s);
                continue;
            }
        };
        let has = |n: &str| explicit.iter().any(|c| c.name.name == n);
        // Names the loop's own clauses make private to it or reduce.
        let known: Vec<String> = explicit
            .iter()
            .flat_map(|c| match &c.args {
                ClauseArgs::Reduction { vars, .. } => vars.iter().map(|v| v.name.clone()).collect(),
                ClauseArgs::List(v) if c.name.name == "private" => v
                    .iter()
                    .filter_map(|e| match &e.kind {
                        ExprKind::Var(n) => Some(n.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        // Scalars each iteration assigns before it reads them are the
        // iteration's own (as NVHPC and GCC privatise them), unless the
        // region reads them after the loop.
        let later = names_in(&stmts[(at + 1).min(count)..]);
        let privates: Vec<String> = if has("seq") {
            Vec::new()
        } else {
            let mut seen = vec![f.var.name.clone()];
            let mut out = Vec::new();
            assigned_first(&f.body.stmts, &mut seen, &mut out);
            out.retain(|n| !known.contains(n) && !later.contains(n));
            out
        };
        let mut known = known;
        known.extend(privates.iter().cloned());
        let analysed = if has("seq") {
            None
        } else {
            loop_reductions(f, &known)
        };
        let reductions = match analysed {
            Some(r) => Some(r),
            None if has("independent") => Some(Vec::new()),
            None => None,
        };
        match reductions {
            Some(reductions) => {
                flush(&mut run, &mut parts);
                let mut cl = per_part.clone();
                cl.extend(loop_only.iter().filter(|c| !has(&c.name.name)).cloned());
                cl.extend(explicit.iter().cloned());
                cl.push(flag(KERNELS_PART, kind_span));
                if !has("independent") && !has("auto") {
                    cl.push(flag("auto", kind_span));
                }
                if !privates.is_empty() {
                    cl.push(Clause {
                        name: Ident {
                            name: "private".into(),
                            span: kind_span,
                        },
                        args: ClauseArgs::List(
                            privates
                                .iter()
                                .map(|n| Expr::new(ExprKind::Var(n.clone()), kind_span))
                                .collect(),
                        ),
                        span: kind_span,
                    });
                }
                for (op, names) in reductions {
                    cl.push(Clause {
                        name: Ident {
                            name: "reduction".into(),
                            span: kind_span,
                        },
                        args: ClauseArgs::Reduction {
                            op,
                            op_span: kind_span,
                            elements: vec![None; names.len()],
                            vars: names,
                        },
                        span: kind_span,
                    });
                }
                let f = match s.kind {
                    StmtKind::For(f) => f,
                    StmtKind::Directive(Directive {
                        body: DirectiveBody::For(f),
                        ..
                    }) => *f,
                    _ => unreachable!("matched above"),
                };
                parts.push(Stmt {
                    kind: StmtKind::Directive(Directive {
                        kind: DirectiveKind::ParallelLoop,
                        kind_span,
                        wait_args: None,
                        clauses: cl,
                        body: DirectiveBody::For(Box::new(f)),
                    }),
                    span: s.span,
                });
            }
            None => run.push(s),
        }
    }
    flush(&mut run, &mut parts);
    let body = Block {
        stmts: parts,
        span: block.span,
    };
    if data.is_empty() {
        StmtKind::Block(body)
    } else {
        StmtKind::Directive(Directive {
            kind: DirectiveKind::Data,
            kind_span,
            wait_args: None,
            clauses: data,
            body: DirectiveBody::Block(body),
        })
    }
}

/// `kernels loop [clauses] for ..`: `kernels` around `loop [clauses] for
/// ..`, the loop's clauses (`seq`, `independent`, `reduction`, `tile`, ..)
/// going to the loop and the rest to the construct.
pub fn kernels_loop(kind_span: Span, clauses: Vec<Clause>, f: ForLoop, span: Span) -> StmtKind {
    let (on_loop, on_kernels): (Vec<Clause>, Vec<Clause>) = clauses
        .into_iter()
        .partition(|c| LOOP_CLAUSES.contains(&c.name.name.as_str()));
    let l = Directive {
        kind: DirectiveKind::Loop,
        kind_span,
        wait_args: None,
        clauses: on_loop,
        body: DirectiveBody::For(Box::new(f)),
    };
    let stmts = vec![Stmt {
        kind: StmtKind::Directive(l),
        span,
    }];
    kernels(kind_span, on_kernels, Block { stmts, span })
}

/// The reductions of a loop that assigns nothing declared outside it but
/// reduction variables (grouped by operator); `None` otherwise.
fn loop_reductions(f: &ForLoop, known: &[String]) -> Option<Vec<(ReductionOp, Vec<Ident>)>> {
    let mut declared = vec![f.var.name.clone()];
    declared.extend(known.iter().cloned());
    let mut w = Walk {
        declared,
        ..Walk::default()
    };
    w.block(&f.body);
    if w.bad {
        return None;
    }
    let mut out: Vec<(ReductionOp, Vec<Ident>)> = Vec::new();
    let mut seen: Vec<(String, ReductionOp)> = Vec::new();
    for (name, op, span) in &w.updates {
        if w.declared.contains(name) {
            continue;
        }
        if w.reads.contains(name) || w.assigned.contains(name) {
            return None;
        }
        match seen.iter().find(|(n, _)| n == name) {
            Some((_, o)) if o != op => return None,
            Some(_) => {}
            None => {
                seen.push((name.clone(), *op));
                let id = Ident {
                    name: name.clone(),
                    span: *span,
                };
                match out.iter_mut().find(|(o, _)| o == op) {
                    Some((_, v)) => v.push(id),
                    None => out.push((*op, vec![id])),
                }
            }
        }
    }
    if w.assigned.iter().any(|n| !w.declared.contains(n)) {
        return None;
    }
    Some(out)
}

/// The names whose first use in `stmts`, in order, assigns them with `n =
/// e` (`e` not reading `n`), at the top level or first in a nested `for`
/// body: each iteration sets them before reading them. `seen` holds the
/// names used so far.
fn assigned_first(stmts: &[Stmt], seen: &mut Vec<String>, out: &mut Vec<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign {
                target,
                op: None,
                value,
                ..
            } => {
                if let ExprKind::Var(n) = &target.kind {
                    let reads = names_in(&[Stmt {
                        kind: StmtKind::Expr(value.clone()),
                        span: s.span,
                    }]);
                    if !seen.contains(n) && !reads.contains(n) {
                        out.push(n.clone());
                    }
                }
            }
            StmtKind::For(f) => {
                let mut inner = seen.clone();
                inner.push(f.var.name.clone());
                assigned_first(&f.body.stmts, &mut inner, out);
            }
            _ => {}
        }
        seen.extend(names_in(std::slice::from_ref(s)));
    }
}

/// Every name statements `stmts` read, assign or declare.
pub(crate) fn names_in(stmts: &[Stmt]) -> Vec<String> {
    let mut w = Walk::default();
    stmts.iter().for_each(|s| w.stmt(s));
    let mut out = w.reads;
    out.extend(w.assigned);
    out.extend(w.declared);
    out.extend(w.updates.into_iter().map(|(n, _, _)| n));
    out
}

#[derive(Default)]
struct Walk {
    declared: Vec<String>,
    /// Names assigned otherwise than by a reduction update.
    assigned: Vec<String>,
    /// Reduction-form updates: name, operator, where.
    updates: Vec<(String, ReductionOp, Span)>,
    /// Names read outside the left side of their own update.
    reads: Vec<String>,
    /// Something that keeps the loop on one lane (a nested construct).
    bad: bool,
}

impl Walk {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { name, init, .. } | StmtKind::Const { name, init, .. } => {
                self.expr(init);
                self.declared.push(name.name.clone());
            }
            StmtKind::LetTuple { pats, init } => {
                self.expr(init);
                let named = pats.iter().filter(|p| !p.is_wildcard());
                self.declared.extend(named.map(|p| p.name.name.clone()));
            }
            StmtKind::Assign {
                target, op, value, ..
            } => match &target.kind {
                ExprKind::Var(n) => match update(n, *op, value) {
                    Some((rop, rest)) => {
                        self.expr(rest);
                        self.updates.push((n.clone(), rop, target.span));
                    }
                    None => {
                        self.expr(value);
                        if op.is_some() {
                            self.reads.push(n.clone());
                        }
                        self.assigned.push(n.clone());
                    }
                },
                ExprKind::Tuple(targets) => {
                    self.expr(value);
                    for t in targets {
                        match &t.kind {
                            ExprKind::Var(n) if n == "_" => {}
                            ExprKind::Var(n) => self.assigned.push(n.clone()),
                            _ => self.expr(t),
                        }
                    }
                }
                _ => {
                    self.expr(target);
                    self.expr(value);
                }
            },
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                if let Some(e) = els {
                    self.block(e);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::For(f) => {
                self.expr(&f.lo);
                self.expr(&f.hi);
                self.declared.push(f.var.name.clone());
                self.block(&f.body);
            }
            StmtKind::ForEach(f) => {
                self.expr(&f.iter);
                self.declared.push(f.var.name.clone());
                self.block(&f.body);
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Atomic { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::AtomicForm { stmts, .. } => stmts.iter().for_each(|s| self.stmt(s)),
            StmtKind::Directive(_) | StmtKind::Fn(_) | StmtKind::Import { .. } => self.bad = true,
            StmtKind::Cache(v) => v.iter().for_each(|e| self.expr(e)),
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Error => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(n) => self.reads.push(n.clone()),
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Index(a, ix) => {
                self.expr(a);
                ix.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Section(a, axes) => {
                self.expr(a);
                axes.iter()
                    .flat_map(|x| x.exprs())
                    .for_each(|x| self.expr(x));
            }
            ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
                args.iter().for_each(|x| self.expr(x))
            }
            _ => {}
        }
    }
}

/// `n op= e`, `n = n op e`, `n = e op n` (commutative `op`) or `n =
/// max(n, e)` (`min`): the reduction operator and `e`.
fn update<'e>(n: &str, op: Option<BinOp>, value: &'e Expr) -> Option<(ReductionOp, &'e Expr)> {
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
    let is_n = |e: &Expr| matches!(&e.kind, ExprKind::Var(v) if v == n);
    match (op, &value.kind) {
        (Some(b), _) => of(b).map(|o| (o, value)),
        (None, ExprKind::Binary(b, l, r)) if is_n(l) => of(*b).map(|o| (o, &**r)),
        (None, ExprKind::Binary(b, l, r))
            if is_n(r) && !matches!(b, BinOp::Sub | BinOp::And | BinOp::Or) =>
        {
            of(*b).map(|o| (o, &**l))
        }
        (None, ExprKind::Call(f, args)) if args.len() == 2 => {
            let op = match f.name.as_str() {
                "max" => ReductionOp::Max,
                "min" => ReductionOp::Min,
                _ => return None,
            };
            if is_n(&args[0]) {
                Some((op, &args[1]))
            } else if is_n(&args[1]) {
                Some((op, &args[0]))
            } else {
                None
            }
        }
        _ => None,
    }
}
