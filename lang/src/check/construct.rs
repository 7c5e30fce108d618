//! Device constructs: where each may appear, the clauses it requires (the
//! clauses themselves are checked in [`super::clauses`]), the loop nest of
//! a `parallel loop` or `loop` (`collapse`), captures and `default(none)`.

use super::{Capture, Checker, DevFrame};
use crate::ast::{self, DirectiveKind as DK};
use crate::diag::Diag;
use crate::hir::{self, DataKind, ExprH, LocalH};

impl Checker<'_> {
    pub(super) fn directive(&mut self, s: &ast::Stmt, d: &ast::Directive) -> Option<hir::Stmt> {
        // Where may this construct appear?
        match d.kind {
            DK::Loop => {
                // In a function, a `loop` is the routine's own parallelism
                // (its level is checked below, once the clauses are read).
                if !self.in_fn
                    && !self
                        .dev
                        .iter()
                        .any(|f| matches!(f.kind, DK::Parallel | DK::ParallelLoop))
                {
                    self.err(
                        Diag::error(
                            "accl::device::loop_outside_parallel",
                            "`loop` is only allowed inside a `parallel` construct",
                            d.kind_span,
                            "not inside `parallel`",
                        )
                        .with_help("use `parallel loop` to run this loop on the device, or put it in a `routine` function"),
                    );
                    return None;
                }
            }
            _ => {
                if let Some(f) = self.dev.first() {
                    let ks = f.kind_span;
                    self.err(
                        Diag::error(
                            "accl::device::nested_construct",
                            format!(
                                "`{}` cannot appear inside a device construct",
                                d.kind.name()
                            ),
                            d.kind_span,
                            "nested construct",
                        )
                        .with_label(ks, "inside this construct")
                        .with_help(
                            if matches!(d.kind, DK::ParallelLoop | DK::Parallel) {
                                "use `loop` for inner parallelism, or a plain `for` loop"
                            } else {
                                "move it before or after the enclosing construct"
                            },
                        ),
                    );
                    return None;
                }
            }
        }
        // A bad clause is reported, but the body is still checked (with the
        // clauses that were understood) so that its errors are found too.
        let (mut clauses, clauses_ok) = self.clauses(d);
        let mut ok = clauses_ok && self.required_clauses(d, &clauses).is_some();
        if d.kind == DK::Loop {
            ok &= self.loop_in_routine(d, &clauses);
            ok &= self.loop_nesting(d, &clauses);
        }
        let kernel = matches!(d.kind, DK::ParallelLoop | DK::Parallel);
        let id = if kernel {
            self.out.num_kernels += 1;
            self.out.num_kernels - 1
        } else {
            0
        };
        // Device frames: kernels and `loop`s.
        let frame = matches!(d.kind, DK::ParallelLoop | DK::Parallel | DK::Loop);
        let outer_capture = if kernel {
            self.capture.replace(Capture {
                scalars: Vec::new(),
                arrays: Vec::new(),
                functions: Vec::new(),
            })
        } else {
            None
        };
        if frame {
            let mut writable: Vec<LocalH> = clauses.reductions.iter().map(|r| r.var).collect();
            writable.extend(&clauses.private);
            writable.extend(&clauses.firstprivate);
            self.dev.push(DevFrame {
                in_order: clauses.seq,
                kernels: clauses.kernels || self.dev.first().is_some_and(|f| f.kernels),
                implicit: Vec::new(),
                reductions: clauses.reductions.iter().map(|r| (r.var, r.op)).collect(),
                implied: Vec::new(),
                kind: d.kind,
                level: frame_level(d.kind, &clauses),
                seq: d.kind == DK::Loop && clauses.seq,
                kind_span: d.kind_span,
                scope_base: self.scopes.len(),
                private: clauses
                    .private
                    .iter()
                    .chain(&clauses.firstprivate)
                    .copied()
                    .collect(),
                writable,
                reduced_arrays: clauses
                    .array_reductions
                    .iter()
                    .map(|r| (r.var, r.op))
                    .collect(),
                loop_base: self.loop_stack.len(),
                break_base: self.loop_stack.len(),
                if_: clauses.if_,
                loop_reduced: Vec::new(),
                one_gang: d.kind == DK::Parallel
                    && clauses.num_gangs.is_none_or(|e| {
                        matches!(&self.body.exprs[e], hir::Expr::Const(v) if v.as_i128() == Some(1))
                    }),
            });
        }
        // Arrays with a data clause visible inside (for `default(none)`).
        let copies = self.copy_back.len();
        self.copy_back.extend(&clauses.scalar_copies);
        let visible = self.data_visible.len();
        self.data_visible
            .extend(clauses.data.iter().map(|dc| dc.var));
        let body = match &d.body {
            ast::DirectiveBody::None => hir::ConstructBody::None,
            ast::DirectiveBody::Block(b) if std::mem::take(&mut self.same_scope_body) => {
                hir::ConstructBody::Block(self.block_in_scope(b))
            }
            ast::DirectiveBody::Block(b) => hir::ConstructBody::Block(self.block(b)),
            ast::DirectiveBody::For(f) => {
                self.collapse_force = clauses.collapse_force;
                let b = self.collapsed_loops(f, &clauses, d);
                self.collapse_force = false;
                b
            }
        };
        self.data_visible.truncate(visible);
        self.copy_back.truncate(copies);
        self.warn_rebound_in_data(d, &clauses, &body);
        if frame {
            let f = self.dev.pop().expect("pushed above");
            if d.kind == DK::Loop {
                self.loop_reductions_reach_the_construct(&clauses);
            }
            // The region's code that assigns the variable outside those
            // loops uses it as its own (firstprivate) scalar: then the
            // loops' reductions are the backends' to refuse or run.
            for (var, op) in f.loop_reduced {
                let own = f.implicit.iter().any(|&(l, _)| l == var);
                let twice = clauses.reductions.iter().any(|r| r.var == var);
                if !own && !twice {
                    clauses.reductions.push(hir::Reduction {
                        op,
                        var,
                        span: d.kind_span,
                    });
                }
            }
            for (var, op) in f.implied {
                if !clauses.reductions.iter().any(|r| r.var == var) {
                    clauses.reductions.push(hir::Reduction {
                        op,
                        var,
                        span: d.kind_span,
                    });
                }
            }
            for (l, copy) in f.implicit {
                if copy {
                    clauses.copy_scalars.push(l);
                } else {
                    clauses.firstprivate.push(l);
                    if !clauses.scalar_data {
                        self.firstprivate_assigned(l, d);
                    }
                }
            }
        }
        let captures = if kernel {
            let c =
                std::mem::replace(&mut self.capture, outer_capture).expect("capture opened above");
            hir::Captures {
                scalars: c.scalars,
                arrays: c.arrays,
                functions: c.functions,
            }
        } else {
            hir::Captures::default()
        };
        if clauses.collapse == 0 {
            clauses.collapse = 1;
        }
        if clauses.default_none {
            for a in &captures.arrays {
                if clauses.data.iter().any(|dc| dc.var == a.var)
                    || self.data_visible.contains(&a.var)
                {
                    continue;
                }
                let name = self.body.locals[a.var].name.clone();
                self.err(
                    Diag::error(
                        "accl::device::default_none",
                        format!("`{name}` has no data clause, and the construct says `default(none)`"),
                        a.span,
                        "used here",
                    )
                    .with_label(d.kind_span, "this construct")
                    .with_help(format!(
                        "add `copyin({name})`, `copy({name})`, `copyout({name})` or `present({name})` to the construct or an enclosing `data`"
                    )),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        Some(hir::Stmt {
            kind: hir::StmtKind::Construct(Box::new(hir::Construct {
                kind: d.kind,
                id,
                span: s.span,
                kind_span: d.kind_span,
                clauses,
                body,
                captures,
            })),
            span: s.span,
        })
    }

    /// The loop nest of a `parallel loop`/`loop`: `collapse(n)` (or
    /// `tile(..)`) headers, then the body.
    fn collapsed_loops(
        &mut self,
        f: &ast::ForLoop,
        clauses: &hir::Clauses,
        d: &ast::Directive,
    ) -> hir::ConstructBody {
        let n = clauses.collapse.max(1) as usize;
        let forced;
        let f = match force_nest(f, n, self.collapse_force) {
            Some(g) => {
                forced = g;
                &forced
            }
            None => f,
        };
        let mut headers = Vec::new();
        let mut cur = f;
        let mut opened = 0;
        let body;
        loop {
            // The bounds of a compute construct's own loops are evaluated
            // by the host at launch: `len(a)`/`shape(a, k)` are fine there.
            self.host_bounds = matches!(d.kind, DK::ParallelLoop);
            let h = self.loop_header(cur);
            self.host_bounds = false;
            opened += 1;
            // Collapsed loops must be rectangular: inner bounds may not use
            // outer loop variables.
            for outer in &headers {
                let outer: &hir::LoopHeader = outer;
                for b in [h.lo, h.hi] {
                    if self.expr_uses(b, outer.var) {
                        let name = self.body.locals[outer.var].name.clone();
                        self.err(
                            Diag::error(
                                "accl::device::collapse_not_rectangular",
                                "the bounds of a collapsed loop depend on an outer collapsed loop",
                                self.body.exprs.span(b),
                                format!("uses `{name}`"),
                            )
                            .with_label(d.kind_span, "collapsed here")
                            .with_help("collapse only loops with independent bounds, or lower `collapse(..)`"),
                        );
                    }
                }
            }
            headers.push(h);
            if headers.len() == n {
                body = self.parallel_loop_body(&cur.body);
                break;
            }
            // The next level must be the only statement of this body.
            match cur.body.stmts.as_slice() {
                [ast::Stmt {
                    kind: ast::StmtKind::For(inner),
                    ..
                }] => cur = inner,
                stmts => {
                    let span = stmts
                        .iter()
                        .find(|s| !matches!(s.kind, ast::StmtKind::For(_)))
                        .map(|s| s.span)
                        .unwrap_or(cur.body.span);
                    let found = headers.len();
                    let tiled = !clauses.tile.is_empty();
                    let (asks, level, fewer) = match tiled {
                        true => (
                            format!("`tile` with {n} sizes"),
                            "tiled",
                            format!(
                                "give `tile` {found} size{}",
                                if found == 1 { "" } else { "s" }
                            ),
                        ),
                        false => (
                            format!("`collapse({n})`"),
                            "collapsed",
                            format!("use `collapse({found})`"),
                        ),
                    };
                    self.err(
                        Diag::error(
                            "accl::device::collapse_depth",
                            format!(
                                "{asks} needs {n} tightly nested loops, but only {found} {} found",
                                if found == 1 { "was" } else { "were" }
                            ),
                            span,
                            if stmts.is_empty() {
                                "no nested loop here".to_string()
                            } else {
                                "this breaks the loop nest".to_string()
                            },
                        )
                        .with_label(clauses.nest_span.unwrap_or(d.kind_span), format!("asks for {n} levels"))
                        .with_help(if self.collapse_force {
                            "with `force:`, statements before the next loop run in every collapsed iteration, but not statements after it or ones that name its variable".to_string()
                        } else {
                            format!(
                                "a {level} loop's body must be exactly one `for` loop; {fewer} or restructure"
                            )
                        }),
                    );
                    body = self.parallel_loop_body(&cur.body);
                    break;
                }
            }
        }
        for _ in 0..opened {
            self.pop_scope();
        }
        hir::ConstructBody::Loops {
            loops: headers,
            body,
        }
    }

    /// The body of a construct's own loop nest: a loop for `continue`, but
    /// one that `break` may not leave (its iterations run in parallel).
    fn parallel_loop_body(&mut self, b: &ast::Block) -> hir::Block {
        self.loop_stack.push(self.scopes.len());
        let len = self.loop_stack.len();
        let saved = self
            .dev
            .last_mut()
            .map(|f| std::mem::replace(&mut f.break_base, len));
        let body = self.block_in_scope(b);
        if let (Some(f), Some(saved)) = (self.dev.last_mut(), saved) {
            f.break_base = saved;
        }
        self.loop_stack.pop();
        body
    }

    /// Does expression `e` read local `l`?
    fn expr_uses(&self, e: ExprH, l: LocalH) -> bool {
        use hir::Expr as E;
        match &self.body.exprs[e] {
            E::Local(x) => *x == l,
            E::Global(_) => false,
            E::Unary(_, a) | E::Cast(a, _) => self.expr_uses(*a, l),
            E::Binary(_, a, b) => self.expr_uses(*a, l) || self.expr_uses(*b, l),
            E::Index(a, ix) => self.expr_uses(*a, l) || ix.iter().any(|i| self.expr_uses(*i, l)),
            E::Call(_, args) | E::Builtin(_, args) | E::Array(_, args) | E::Tuple(args) => {
                args.iter().any(|i| self.expr_uses(*i, l))
            }
            E::Const(_) | E::Str(_) | E::TypeArg(_) => false,
        }
    }

    fn required_clauses(&mut self, d: &ast::Directive, c: &hir::Clauses) -> Option<()> {
        let has = |k: &[DataKind]| c.data.iter().any(|x| k.contains(&x.kind));
        let (ok, what) = match d.kind {
            DK::Update => (
                has(&[DataKind::UpdateSelf, DataKind::UpdateDevice]) || c.scalar_data,
                "`self(..)` or `device(..)`",
            ),
            DK::EnterData => (
                has(&[DataKind::CopyIn, DataKind::Create]) || !c.scalar_clauses.is_empty(),
                "`copyin(..)` or `create(..)`",
            ),
            DK::ExitData => (
                has(&[DataKind::CopyOut, DataKind::Delete]) || !c.scalar_clauses.is_empty(),
                "`copyout(..)` or `delete(..)`",
            ),
            DK::Set => (
                c.device_num.is_some() || c.device_type.is_some() || c.default_async.is_some(),
                "`device_num(..)`, `device_type(..)` or `default_async(..)`",
            ),
            DK::Data => (
                !c.data.is_empty() || c.scalar_data || c.default_present,
                "a data clause such as `copy(..)`",
            ),
            DK::HostData => (!c.use_device.is_empty(), "`use_device(..)`"),
            _ => (true, ""),
        };
        if !ok {
            let help = match d.kind {
                DK::Update => Some("`update self(a)` copies device data to the host, `update device(a)` the other way"),
                DK::EnterData => Some("`copyin(a)` copies `a` to the device, `create(a)` only allocates it there"),
                DK::ExitData => Some("`copyout(a)` copies `a` back and frees it, `delete(a)` only frees it"),
                DK::Set => Some("write `set device_num(d);`"),
                DK::HostData => Some("`host_data use_device(a) { f(a); }` hands the device copy of `a` to the embedder's function `f`"),
                _ => None,
            };
            let mut diag = Diag::error(
                "accl::device::missing_clause",
                format!("`{}` needs {what}", d.kind.name()),
                d.kind_span,
                "nothing to do",
            );
            if let Some(h) = help {
                diag = diag.with_help(h);
            }
            self.err(diag);
            return None;
        }
        if c.seq && (c.gang || c.worker || c.vector) {
            self.err(Diag::error(
                "accl::device::conflicting_clauses",
                "`seq` cannot be combined with `gang`, `worker` or `vector`",
                d.kind_span,
                "conflicting parallelism clauses",
            ));
            return None;
        }
        if c.auto && (c.seq || c.independent) {
            self.err(
                Diag::error(
                    "accl::device::conflicting_clauses",
                    "`auto` cannot be combined with `seq` or `independent`",
                    d.kind_span,
                    "conflicting parallelism clauses",
                )
                .with_help("`auto` leaves it to the compiler; `seq` and `independent` decide"),
            );
            return None;
        }
        Some(())
    }
}

/// `collapse(force: n)`: statements before the next loop of the nest run
/// in every collapsed iteration (OpenACC 3.3), so they move to the start of
/// that loop's body. `None` where nothing moves, or where they cannot: a
/// statement after the next loop, or one naming the next loop's variable
/// (which would then mean that variable).
fn force_nest(f: &ast::ForLoop, n: usize, force: bool) -> Option<ast::ForLoop> {
    if !force || n < 2 {
        return None;
    }
    let stmts = &f.body.stmts;
    let (last, prefix) = stmts.split_last()?;
    let ast::StmtKind::For(inner) = &last.kind else {
        return None;
    };
    let mut inner = inner.clone();
    if let Some(g) = force_nest(&inner, n - 1, force) {
        inner = g;
    }
    if prefix.is_empty() {
        let mut out = f.clone();
        out.body.stmts = vec![ast::Stmt {
            kind: ast::StmtKind::For(inner),
            span: last.span,
        }];
        return Some(out);
    }
    if prefix
        .iter()
        .any(|s| matches!(s.kind, ast::StmtKind::For(_)))
        || crate::kernels::names_in(prefix).contains(&inner.var.name)
    {
        return None;
    }
    let mut body = prefix.to_vec();
    body.append(&mut inner.body.stmts);
    inner.body.stmts = body;
    let mut out = f.clone();
    out.body.stmts = vec![ast::Stmt {
        kind: ast::StmtKind::For(inner),
        span: last.span,
    }];
    Some(out)
}

/// The level a call inside a frame must stay below ([`DevFrame::level`]).
fn frame_level(kind: DK, c: &hir::Clauses) -> Option<hir::Level> {
    use hir::Level as L;
    match kind {
        _ if c.vector => Some(L::Vector),
        _ if c.worker => Some(L::Worker),
        DK::ParallelLoop => Some(L::Gang),
        DK::Loop if c.gang => Some(L::Gang),
        _ => None,
    }
}

/// The highest level a `loop` uses (`None`: `seq` or no level).
fn loop_level(c: &hir::Clauses) -> Option<hir::Level> {
    use hir::Level as L;
    match () {
        _ if c.gang => Some(L::Gang),
        _ if c.worker => Some(L::Worker),
        _ if c.vector => Some(L::Vector),
        _ => None,
    }
}

impl Checker<'_> {
    /// A scalar of the host that a `parallel`/`serial` construct assigns
    /// with no clause is firstprivate there (OpenACC 3.3, 2.6.2): the
    /// device's assignments never reach the host's variable, which a C
    /// programmer used to `kernels` (where it is `copy`) may not expect.
    fn firstprivate_assigned(&mut self, l: LocalH, d: &ast::Directive) {
        let name = self.body.locals[l].name.clone();
        if name.contains('#') {
            return;
        }
        let decl = self.body.locals.span(l);
        self.err(
            Diag::error(
                "accl::device::firstprivate_assigned",
                format!("`{name}` is firstprivate here: what this construct assigns to it stays on the device"),
                d.kind_span,
                format!("assigns `{name}`"),
            )
            .with_label(decl, "declared here, outside the construct")
            .with_help(format!(
                "add `copy({name})` to bring the value back, `reduction(..: {name})` to combine one, or `firstprivate({name})` to say a copy is meant"
            ))
            .warning(),
        );
    }

    /// OpenACC 3.3 (2.9.3-2.9.5): a `loop worker` or `loop vector` holds
    /// no loop of its own level or above (a `vector` loop in a `vector`
    /// loop, a `worker` or `gang` loop in a `worker` loop); only `loop seq`
    /// or a loop with no level.
    fn loop_nesting(&mut self, d: &ast::Directive, c: &hir::Clauses) -> bool {
        use hir::Level as L;
        let Some(mine) = loop_level(c) else {
            return true;
        };
        let outer = self
            .dev
            .iter()
            .rev()
            .filter(|f| f.kind == DK::Loop)
            .find_map(|f| {
                f.level
                    .filter(|&l| l <= L::Worker)
                    .map(|l| (l, f.kind_span))
            });
        let Some((level, at)) = outer else {
            return true;
        };
        if mine < level {
            return true;
        }
        let more = if level == L::Vector {
            ", or make the outer loop `worker` (or `gang`)"
        } else {
            ""
        };
        self.err(
            Diag::error(
                "accl::device::loop_nesting",
                format!("a `loop {}` cannot be inside a `loop {}`", mine.name(), level.name()),
                d.kind_span,
                "nested here",
            )
            .with_label(at, format!("this `{}` loop", level.name()))
            .with_help(format!(
                "OpenACC nests gang, then worker, then vector: give the inner loop a lower level, or `seq`{more}"
            )),
        );
        false
    }

    /// A `loop` reduction into a scalar of the host that the compute
    /// construct does not reduce: OpenACC 3.3 (2.6.2, 2.9.11) makes it
    /// `copy` on the construct and combines it over every gang, so its
    /// value after the construct is the host's value combined with every
    /// iteration. A `loop gang` covers every iteration, and so does a
    /// `loop` of any level in a region of one gang; the construct then
    /// reduces the variable itself (each gang's copy starts at the
    /// operator's identity and the copies are combined with the host's
    /// value at the end), which is what NVHPC and GCC do. A worker or
    /// vector loop in a region of several gangs runs in every gang (gang-
    /// redundant), so it is left to the backends' own rules.
    fn loop_reductions_reach_the_construct(&mut self, clauses: &hir::Clauses) {
        let Some(construct) = self.dev.first() else {
            return;
        };
        if construct.kind != DK::Parallel || !(clauses.gang || construct.one_gang) {
            return;
        }
        // Only the outermost loop that reduces the variable: loops between
        // it and the construct that partition gangs, or that reduce the
        // variable themselves, decide for it.
        let between = &self.dev[1..];
        if between.iter().any(|g| g.level == Some(hir::Level::Gang)) {
            return;
        }
        let base = construct.scope_base;
        let promoted: Vec<_> = clauses
            .reductions
            .iter()
            .filter(|r| {
                let l = r.var;
                !self.body.locals[l].ty.is_array()
                    && self.body.local_scope[l.index()] < base
                    && !self
                        .dev
                        .iter()
                        .any(|g| g.reductions.iter().any(|x| x.0 == l))
                    && !between.iter().any(|g| g.writable.contains(&l))
            })
            .map(|r| (r.var, r.op))
            .collect();
        let c = &mut self.dev[0];
        for p in promoted {
            if !c.loop_reduced.contains(&p) {
                c.loop_reduced.push(p);
            }
        }
    }

    /// A `loop` directly in a function (not inside a construct there) uses
    /// at most the function's level.
    fn loop_in_routine(&mut self, d: &ast::Directive, c: &hir::Clauses) -> bool {
        if !self.in_fn || self.dev.iter().any(|f| f.kind != DK::Loop) {
            return true;
        }
        let Some(f) = self.body.func else {
            return true;
        };
        let func = &self.out.functions[f];
        let (have, name) = (func.level, func.name.clone());
        match loop_level(c) {
            Some(l) if l > have => {
                self.err(
                    Diag::error(
                        "accl::device::routine_level",
                        format!(
                            "`loop {}` in `{name}`, a `routine {}` function",
                            l.name(),
                            have.name()
                        ),
                        d.kind_span,
                        format!("needs `routine {}` or higher", l.name()),
                    )
                    .with_label(self.fn_name_span(func.span), "declared here")
                    .with_help(format!(
                        "declare it `routine {} fn {name}(..)` (a plain `fn` is `routine seq`), or make the loop `loop seq`",
                        l.name()
                    )),
                );
                false
            }
            _ => true,
        }
    }

    /// A call of a `routine` function from a context of its own level or
    /// lower (inside `loop vector`, a `routine vector` function cannot
    /// spread its own loop over the lanes that are already the loop's).
    pub(super) fn check_call_level(&mut self, callee: hir::FnH, span: crate::span::Span) {
        let func = &self.out.functions[callee];
        let level = func.level;
        if level == hir::Level::Seq {
            return;
        }
        let name = func.name.clone();
        let decl = func.span;
        // The innermost frame with a level decides; without one, the
        // calling function's own level bounds it (top level: anything).
        let (limit, at, inclusive) = match self
            .dev
            .iter()
            .rev()
            .find_map(|f| f.level.map(|l| (l, f.kind_span)))
        {
            Some((l, at)) => (l, Some(at), false),
            None => match self.body.func.filter(|_| self.in_fn) {
                Some(f) if self.dev.iter().all(|f| f.kind == DK::Loop) => {
                    (self.out.functions[f].level, None, true)
                }
                _ => return,
            },
        };
        let ok = if inclusive {
            level <= limit
        } else {
            level < limit
        };
        if ok {
            return;
        }
        let mut d = Diag::error(
            "accl::device::routine_level",
            format!(
                "`{name}` is a `routine {}` function, called where only {} can run",
                level.name(),
                match (limit, inclusive) {
                    (hir::Level::Seq, _) | (hir::Level::Vector, false) =>
                        "`routine seq` functions".to_string(),
                    (l, true) => format!("routines up to `{}`", l.name()),
                    (l, false) => format!("routines below `{}`", l.name()),
                }
            ),
            span,
            "called here",
        )
        .with_label(self.fn_name_span(decl), "declared here");
        if let Some(at) = at {
            d = d.with_label(at, format!("inside this `{}` parallelism", limit.name()));
        }
        self.err(d.with_help(if level == hir::Level::Gang {
            "call a `routine gang` function from a `parallel { .. }` region, outside its loops".to_string()
        } else {
            format!(
                "call a `routine {}` function from a loop of a higher level (gang > worker > vector > seq), or move the call out of the `{}` loop",
                level.name(),
                limit.name()
            )
        }));
    }
}
