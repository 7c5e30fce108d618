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
//!   are local to their part. `kernels loop [clauses] for ..` is `kernels`
//!   around that one loop.

use crate::ast::*;
use crate::span::Span;

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
        parts.push(Stmt {
            kind: StmtKind::Directive(serial(kind_span, per_part.clone(), Block { stmts, span })),
            span,
        });
    };
    for s in block.stmts {
        let StmtKind::For(f) = &s.kind else {
            run.push(s);
            continue;
        };
        match loop_reductions(f) {
            Some(reductions) => {
                flush(&mut run, &mut parts);
                let mut cl = per_part.clone();
                cl.extend(loop_only.iter().cloned());
                cl.push(flag("auto", kind_span));
                for (op, names) in reductions {
                    cl.push(Clause {
                        name: Ident {
                            name: "reduction".into(),
                            span: kind_span,
                        },
                        args: ClauseArgs::Reduction {
                            op,
                            op_span: kind_span,
                            vars: names,
                        },
                        span: kind_span,
                    });
                }
                let StmtKind::For(f) = s.kind else {
                    unreachable!("matched above")
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

/// The reductions of a loop that assigns nothing declared outside it but
/// reduction variables (grouped by operator); `None` otherwise.
fn loop_reductions(f: &ForLoop) -> Option<Vec<(ReductionOp, Vec<Ident>)>> {
    let mut w = Walk {
        declared: vec![f.var.name.clone()],
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
            StmtKind::Block(b) => self.block(b),
            StmtKind::Atomic { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::AtomicForm { stmts, .. } => stmts.iter().for_each(|s| self.stmt(s)),
            StmtKind::Directive(_) | StmtKind::Fn(_) => self.bad = true,
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
            ExprKind::Call(_, args) => args.iter().for_each(|x| self.expr(x)),
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
