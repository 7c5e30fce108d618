//! `loop` constructs inside a kernel: in order (`seq`, or `auto` without a
//! proof of independence), or a [`VectorLoop`] over the gang's
//! invocations, each with its `private` and `reduction` clauses.

use super::{internal, scalar_of, Binding, Fx, Lowerer};
use crate::kir::*;
use crate::unsupported;
use lang::hir;
use lang::value::identity;
use lang::{Diag, Value};

impl Lowerer<'_> {
    /// A `loop` construct inside a kernel: `seq` runs it in order (every
    /// invocation that reaches it); otherwise, in gang-redundant code, a
    /// [`VectorLoop`] spread over the workgroup.
    pub(super) fn inner_loop(
        &mut self,
        fx: &mut Fx,
        c: &hir::Construct,
        out: &mut Block,
    ) -> Result<(), Diag> {
        let span = c.span;
        let cl = &c.clauses;
        let hir::ConstructBody::Loops { loops, body } = &c.body else {
            return Err(internal(span, "a `loop` without a loop nest"));
        };
        // Reduction targets: locals of the enclosing code.
        let mut targets = Vec::new();
        for r in &cl.reductions {
            match fx.map.get(&r.var).copied() {
                Some(Binding::Local(t)) => {
                    let ty = fx.out.locals[t].ty;
                    if !reduction_legal(r.op, ty) {
                        return Err(internal(
                            r.span,
                            "a reduction operator on a type it does not apply to",
                        ));
                    }
                    if fx.vector_locals.as_ref().is_some_and(|v| !v.contains(&t)) {
                        let name = &fx.src.locals[r.var].name;
                        return Err(unsupported(
                            r.span,
                            &format!("a `loop seq` reduction into `{name}`, which belongs to the gang, inside `loop vector`"),
                        ));
                    }
                    targets.push((r, t, ty));
                }
                _ => {
                    let name = &fx.src.locals[r.var].name;
                    return Err(unsupported(
                        r.span,
                        &format!("a `loop` reduction into `{name}`, a variable of the host that the construct does not reduce"),
                    )
                    .with_help(format!("add `reduction(..: {name})` to the `parallel` construct too")));
                }
            }
        }
        let saved_map: Vec<(hir::LocalH, Option<Binding>)> = cl
            .private
            .iter()
            .chain(cl.reductions.iter().map(|r| &r.var))
            .map(|v| (*v, fx.map.get(v).copied()))
            .collect();

        // A worker loop that holds vector loops, in a gang: the gang has one
        // worker (OpenACC lets the implementation choose), which runs it in
        // order while its vector loops spread over the gang's lanes.
        let level_less = !(cl.seq || cl.auto || cl.gang || cl.worker || cl.vector);
        let one_worker = (cl.worker || level_less)
            && !cl.vector
            && !cl.gang
            && fx.redundant
            && super::has_inner_loops(self.program, fx.src, body);
        // Where lanes are already spread (a vector loop, a flat kernel, a
        // routine's code called there), a loop runs in order on its lane:
        // one without a level as OpenACC says, and a `loop gang`/`worker`/
        // `vector` nested in one spread over the lanes too (`loop gang(dim:
        // 1)` inside `loop gang(dim: 2)`), since running a parallel loop's
        // iterations in order is one of its schedules.
        let level_less_seq = level_less && !fx.redundant;
        let nested_seq = !level_less
            && !cl.seq
            && !fx.redundant
            && !one_worker
            && !(fx.in_vector && (cl.gang || cl.worker || cl.vector));
        if one_worker {
            self.choices.push((
                c.kind_span,
                format!("`loop{}` holds vector loops: the gang runs it as one worker, in order, each inner `loop vector` over the gang's lanes", if cl.worker { " worker" } else { "` (no level" }),
            ));
        } else if level_less_seq {
            self.choices.push((
                c.kind_span,
                "`loop` (no level): in order, since its lanes are already spread by an enclosing loop".into(),
            ));
        } else if nested_seq {
            self.choices.push((
                c.kind_span,
                "`loop` inside a loop already spread over the lanes: in order, on each lane".into(),
            ));
        } else if level_less && fx.redundant {
            self.choices.push((
                c.kind_span,
                "`loop` (no level): vector, over the gang's lanes".into(),
            ));
        }
        let in_order = cl.seq
            || one_worker
            || level_less_seq
            || nested_seq
            || (cl.auto
                && crate::autovec::independent_nest(
                    self.program,
                    fx.src,
                    loops,
                    body,
                    self.builtins,
                )
                .is_err());
        if in_order {
            // In order: save, identity, the loop nest, combine (as the host).
            let mut saves = Vec::new();
            for &(r, t, ty) in &targets {
                let save = fx.local("saved", ty, r.span);
                let cur = fx.out.add_expr(Expr::Local(t), ty, r.span);
                out.push(Fx::stmt(
                    StmtKind::Store {
                        local: save,
                        value: cur,
                    },
                    r.span,
                ));
                let id = fx.konst(identity(r.op, ty), r.span);
                out.push(Fx::stmt(
                    StmtKind::Store {
                        local: t,
                        value: id,
                    },
                    r.span,
                ));
                saves.push(save);
            }
            for &v in &cl.private {
                let ty = scalar_of(fx.src.locals[v].ty, span)?;
                let name = fx.src.locals[v].name.clone();
                let l = fx.local(&name, ty, span);
                let z = fx.konst(Value::zero(ty), span);
                out.push(Fx::stmt(StmtKind::Store { local: l, value: z }, span));
                fx.map.insert(v, Binding::Local(l));
            }
            let mut nest = hir::ForLoop {
                header: loops[loops.len() - 1].clone(),
                body: body.clone(),
            };
            for h in loops[..loops.len() - 1].iter().rev() {
                nest = hir::ForLoop {
                    header: h.clone(),
                    body: vec![hir::Stmt {
                        kind: hir::StmtKind::For(nest),
                        span,
                    }],
                };
            }
            // Copies per iteration of a loop run in order: the hidden array.
            self.own_copies(
                fx,
                &cl.private_copies,
                Err("its loop runs in order".into()),
                span,
                out,
            )?;
            // `continue` in the body goes to the next iteration: it is a loop.
            self.for_loop(fx, &nest, span, out)?;
            for (&(r, t, ty), save) in targets.iter().zip(saves) {
                let a = fx.out.add_expr(Expr::Local(save), ty, r.span);
                let b = fx.out.add_expr(Expr::Local(t), ty, r.span);
                let v = fx.out.add_expr(Expr::Reduce(r.op, a, b), ty, r.span);
                out.push(Fx::stmt(StmtKind::Store { local: t, value: v }, r.span));
            }
        } else {
            if !fx.redundant {
                return Err(unsupported(
                    c.kind_span,
                    if fx.vector_locals.is_some() {
                        "a gang, worker or vector `loop` nested inside `loop vector` (OpenACC allows only `loop seq` or a `loop` with no level there)"
                    } else {
                        "a `loop` in this position"
                    },
                ));
            }
            let gangs = cl.gang;
            if gangs && self.shape != Shape::Region {
                return Err(unsupported(
                    c.kind_span,
                    "`loop gang` inside `parallel loop` (its iterations already are the gangs)",
                ));
            }
            let construct_own = cl.reductions.iter().all(|r| {
                self.construct_reductions
                    .iter()
                    .any(|&(v, op)| v == r.var && op == r.op)
            });
            if gangs && !cl.reductions.is_empty() && !self.one_gang && !construct_own {
                return Err(unsupported(
                    c.kind_span,
                    "a reduction on `loop gang` inside a `parallel { .. }` region of several gangs (it would combine across gangs)",
                )
                .with_help("reduce into a variable the `parallel` construct reduces too (its gangs' copies are combined at the end), give the region one gang (no `num_gangs`, or `num_gangs(1)`), or use `loop vector`"));
            }
            // Bounds: evaluated by every invocation (identically) before the loop.
            let mut levels = Vec::new();
            let mut level_vars = Vec::new();
            for h in loops {
                let ty = scalar_of(fx.src.locals[h.var].ty, h.span)?;
                let lo = self.expr(fx, h.lo)?;
                let hi = self.expr(fx, h.hi)?;
                self.refuse_effects(fx, [&lo, &hi], h.span)?;
                let name = fx.src.locals[h.var].name.clone();
                let var = fx.local(&name, ty, h.span);
                level_vars.push((h.var, var));
                levels.push(InnerLevel {
                    var,
                    ty,
                    lo,
                    hi,
                    inclusive: h.inclusive,
                });
            }
            let was_redundant = std::mem::replace(&mut fx.redundant, false);
            let was_vector = fx.vector_locals.replace(Vec::new());
            let was_depth = std::mem::replace(&mut fx.loop_depth, 0);
            let was_in_vector = std::mem::replace(&mut fx.in_vector, !gangs);
            for &(hv, var) in &level_vars {
                fx.map.insert(hv, Binding::Local(var));
                if let Some(v) = &mut fx.vector_locals {
                    v.push(var);
                }
            }
            let mut reductions = Vec::new();
            for &(r, t, ty) in &targets {
                let name = fx.src.locals[r.var].name.clone();
                let private = fx.local(&name, ty, r.span);
                fx.map.insert(r.var, Binding::Local(private));
                reductions.push(InnerReduction {
                    op: r.op,
                    target: t,
                    private,
                });
            }
            let mut stmts = Vec::new();
            for &v in &cl.private {
                let ty = scalar_of(fx.src.locals[v].ty, span)?;
                let name = fx.src.locals[v].name.clone();
                let l = fx.local(&name, ty, span);
                let z = fx.konst(Value::zero(ty), span);
                stmts.push(Fx::stmt(StmtKind::Store { local: l, value: z }, span));
                fx.map.insert(v, Binding::Local(l));
            }
            // Each lane runs its iterations: a copy per lane. A sequential
            // loop around would run them again on the same copies (which
            // the host keeps from one trip to the next).
            let place = if was_depth == 0 {
                Ok(CopySlots::Lane)
            } else {
                Err("a sequential loop around its loop reuses the copies".into())
            };
            self.own_copies(fx, &cl.private_copies, place, span, &mut stmts)?;
            // A `loop gang` spreads its iterations over lanes, while each
            // gang has one copy of its variables (the region's
            // `private`/`firstprivate` ones, those its code declares) and
            // runs its iterations in order: a lane running iterations
            // assigns a copy of its own, starting from the gang's value.
            let mut lane_copies = Vec::new();
            if gangs {
                let mut assigned = Vec::new();
                super::region::assigned_in(body, &mut assigned);
                for v in assigned {
                    let Some(Binding::Local(g)) = fx.map.get(&v).copied() else {
                        continue;
                    };
                    if fx.vector_locals.as_ref().is_none_or(|l| l.contains(&g)) {
                        continue;
                    }
                    let ty = fx.out.locals[g].ty;
                    let name = fx.src.locals[v].name.clone();
                    let c = fx.local(&name, ty, span);
                    let cur = fx.out.add_expr(Expr::Local(g), ty, span);
                    stmts.push(Fx::stmt(
                        StmtKind::Store {
                            local: c,
                            value: cur,
                        },
                        span,
                    ));
                    fx.map.insert(v, Binding::Local(c));
                    lane_copies.push((v, g));
                }
            }
            let r = self.block(fx, body);
            for (v, g) in lane_copies {
                fx.map.insert(v, Binding::Local(g));
            }
            fx.redundant = was_redundant;
            fx.vector_locals = was_vector;
            fx.loop_depth = was_depth;
            fx.in_vector = was_in_vector;
            stmts.extend(r?);
            out.push(Fx::stmt(
                StmtKind::VectorLoop(Box::new(VectorLoop {
                    levels,
                    body: stmts,
                    reductions,
                    gangs,
                })),
                span,
            ));
        }
        for (v, b) in saved_map {
            match b {
                Some(b) => fx.map.insert(v, b),
                None => fx.map.remove(&v),
            };
        }
        Ok(())
    }
}
