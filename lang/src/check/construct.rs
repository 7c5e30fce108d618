//! Device constructs: clause validation, data clauses, captures, `atomic`.

use super::{Binding, Capture, Checker, DevFrame};
use crate::ast::{self, ClauseArgs, DirectiveKind as DK, ReductionOp};
use crate::diag::{did_you_mean, Diag};
use crate::hir::{self, AsyncQueue, DataKind, ExprH, LocalH};
use crate::span::Span;
use crate::types::{Scalar, Type};

/// Every clause name, and the arguments it takes.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// No parentheses.
    Flag,
    /// Optional `(int)`.
    OptInt,
    /// `(int)`.
    Int,
    /// `(int, ..)` or nothing.
    OptInts,
    /// `(bool)`.
    Bool,
    /// `(array or section, ..)`.
    Arrays,
    /// `(scalar variable, ..)`.
    Vars,
    /// `(op: vars)`.
    Reduction,
    /// `(constant integer)`.
    ConstInt,
    /// `(present)`.
    Default,
    /// `(constant integer, ..)`.
    ConstInts,
}

const CLAUSES: &[(&str, Shape)] = &[
    ("gang", Shape::Flag),
    ("worker", Shape::Flag),
    ("vector", Shape::Flag),
    ("seq", Shape::Flag),
    ("independent", Shape::Flag),
    ("auto", Shape::Flag),
    ("collapse", Shape::ConstInt),
    ("tile", Shape::ConstInts),
    ("reduction", Shape::Reduction),
    ("private", Shape::Vars),
    ("firstprivate", Shape::Vars),
    ("num_gangs", Shape::Int),
    ("num_workers", Shape::Int),
    ("vector_length", Shape::Int),
    ("async", Shape::OptInt),
    ("wait", Shape::OptInts),
    ("if", Shape::Bool),
    ("default", Shape::Default),
    ("copy", Shape::Arrays),
    ("copyin", Shape::Arrays),
    ("copyout", Shape::Arrays),
    ("create", Shape::Arrays),
    ("present", Shape::Arrays),
    ("no_create", Shape::Arrays),
    ("delete", Shape::Arrays),
    ("self", Shape::Arrays),
    ("host", Shape::Arrays),
    ("device", Shape::Arrays),
    ("finalize", Shape::Flag),
    ("if_present", Shape::Flag),
    ("device_num", Shape::Int),
];

/// Every clause name of every construct (for completion in tools).
pub fn clause_names() -> impl Iterator<Item = &'static str> {
    CLAUSES.iter().map(|&(name, _)| name)
}

const DATA: &[&str] = &[
    "copy",
    "copyin",
    "copyout",
    "create",
    "present",
    "no_create",
];

fn allowed(kind: DK) -> Vec<&'static str> {
    let mut v: Vec<&str> = match kind {
        DK::ParallelLoop => vec![
            "gang",
            "worker",
            "vector",
            "seq",
            "independent",
            "auto",
            "tile",
            "collapse",
            "reduction",
            "private",
            "firstprivate",
            "num_gangs",
            "num_workers",
            "vector_length",
            "async",
            "wait",
            "if",
            "default",
        ],
        DK::Parallel => vec![
            "reduction",
            "private",
            "firstprivate",
            "num_gangs",
            "num_workers",
            "vector_length",
            "async",
            "wait",
            "if",
            "default",
        ],
        DK::Loop => vec![
            "gang",
            "worker",
            "vector",
            "seq",
            "independent",
            "auto",
            "tile",
            "collapse",
            "reduction",
            "private",
        ],
        DK::Data => vec!["if", "async", "wait", "default"],
        DK::EnterData => vec!["copyin", "create", "if", "async", "wait"],
        DK::ExitData => vec!["copyout", "delete", "finalize", "if", "async", "wait"],
        DK::Update => vec![
            "self",
            "host",
            "device",
            "if",
            "if_present",
            "async",
            "wait",
        ],
        DK::Wait => vec!["async", "if"],
        DK::Set => vec!["device_num", "if"],
    };
    if matches!(kind, DK::ParallelLoop | DK::Parallel | DK::Data) {
        v.extend_from_slice(DATA);
    }
    v
}

/// Clauses that may appear more than once on one construct.
fn repeatable(name: &str) -> bool {
    matches!(
        name,
        "reduction"
            | "private"
            | "firstprivate"
            | "copy"
            | "copyin"
            | "copyout"
            | "create"
            | "present"
            | "no_create"
            | "delete"
            | "self"
            | "host"
            | "device"
    )
}

impl Checker<'_> {
    pub(super) fn directive(&mut self, s: &ast::Stmt, d: &ast::Directive) -> Option<hir::Stmt> {
        // Where may this construct appear?
        match d.kind {
            DK::Loop => {
                if !self
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
                        .with_help("use `parallel loop` to run this loop on the device"),
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
                kind: d.kind,
                kind_span: d.kind_span,
                scope_base: self.scopes.len(),
                writable,
                reduced_arrays: clauses
                    .array_reductions
                    .iter()
                    .map(|r| (r.var, r.op))
                    .collect(),
                loop_base: self.loop_stack.len(),
                break_base: self.loop_stack.len(),
            });
        }
        // Arrays with a data clause visible inside (for `default(none)`).
        let visible = self.data_visible.len();
        self.data_visible
            .extend(clauses.data.iter().map(|dc| dc.var));
        let body = match &d.body {
            ast::DirectiveBody::None => hir::ConstructBody::None,
            ast::DirectiveBody::Block(b) => hir::ConstructBody::Block(self.block(b)),
            ast::DirectiveBody::For(f) => self.collapsed_loops(f, clauses.collapse, d),
        };
        self.data_visible.truncate(visible);
        if frame {
            self.dev.pop();
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

    /// The loop nest of a `parallel loop`/`loop`: `collapse(n)` headers, then the body.
    fn collapsed_loops(
        &mut self,
        f: &ast::ForLoop,
        collapse: u32,
        d: &ast::Directive,
    ) -> hir::ConstructBody {
        let n = collapse.max(1) as usize;
        let mut headers = Vec::new();
        let mut cur = f;
        let mut opened = 0;
        let body;
        loop {
            let h = self.loop_header(cur);
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
                    self.err(
                        Diag::error(
                            "accl::device::collapse_depth",
                            format!(
                                "`collapse({n})` needs {n} tightly nested loops, but only {} {} found",
                                headers.len(),
                                if headers.len() == 1 { "was" } else { "were" }
                            ),
                            span,
                            if stmts.is_empty() {
                                "no nested loop here".to_string()
                            } else {
                                "this breaks the loop nest".to_string()
                            },
                        )
                        .with_label(d.kind_span, format!("asks for {n} levels"))
                        .with_help(format!(
                            "a collapsed loop's body must be exactly one `for` loop; use `collapse({})` or restructure",
                            headers.len()
                        )),
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
            E::Unary(_, a) | E::Cast(a, _) => self.expr_uses(*a, l),
            E::Binary(_, a, b) => self.expr_uses(*a, l) || self.expr_uses(*b, l),
            E::Index(a, ix) => self.expr_uses(*a, l) || ix.iter().any(|i| self.expr_uses(*i, l)),
            E::Call(_, args) | E::Builtin(_, args) => args.iter().any(|i| self.expr_uses(*i, l)),
            E::Const(_) | E::Str(_) | E::TypeArg(_) => false,
        }
    }

    fn required_clauses(&mut self, d: &ast::Directive, c: &hir::Clauses) -> Option<()> {
        let has = |k: &[DataKind]| c.data.iter().any(|x| k.contains(&x.kind));
        let (ok, what) = match d.kind {
            DK::Update => (
                has(&[DataKind::UpdateSelf, DataKind::UpdateDevice]),
                "`self(..)` or `device(..)`",
            ),
            DK::EnterData => (
                has(&[DataKind::CopyIn, DataKind::Create]),
                "`copyin(..)` or `create(..)`",
            ),
            DK::ExitData => (
                has(&[DataKind::CopyOut, DataKind::Delete]),
                "`copyout(..)` or `delete(..)`",
            ),
            DK::Set => (c.device_num.is_some(), "`device_num(..)`"),
            DK::Data => (
                !c.data.is_empty() || c.default_present,
                "a data clause such as `copy(..)`",
            ),
            _ => (true, ""),
        };
        if !ok {
            let help = match d.kind {
                DK::Update => Some("`update self(a)` copies device data to the host, `update device(a)` the other way"),
                DK::EnterData => Some("`copyin(a)` copies `a` to the device, `create(a)` only allocates it there"),
                DK::ExitData => Some("`copyout(a)` copies `a` back and frees it, `delete(a)` only frees it"),
                DK::Set => Some("write `set device_num(d);`"),
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

    fn clauses(&mut self, d: &ast::Directive) -> (hir::Clauses, bool) {
        let allowed = allowed(d.kind);
        let mut c = hir::Clauses {
            collapse: 1,
            ..hir::Clauses::default()
        };
        let mut ok = true;
        if let Some(args) = &d.wait_args {
            let qs = self.int_args(args);
            c.wait = Some(qs);
        }
        let mut seen: Vec<(&str, Span)> = Vec::new();
        let mut arrays_seen: Vec<(LocalH, Span)> = Vec::new();
        for cl in &d.clauses {
            let name = cl.name.name.as_str();
            let Some(&(_, shape)) = CLAUSES.iter().find(|(n, _)| *n == name) else {
                let mut diag = Diag::error(
                    "accl::device::unknown_clause",
                    format!("unknown clause `{name}`"),
                    cl.name.span,
                    "not a clause",
                );
                if let Some(s) = did_you_mean(name, allowed.iter().copied()) {
                    diag = diag.with_help(format!("did you mean `{s}`?"));
                } else {
                    diag = diag.with_help(format!(
                        "`{}` takes: {}",
                        d.kind.name(),
                        allowed.join(", ")
                    ));
                }
                self.err(diag);
                ok = false;
                continue;
            };
            if !allowed.contains(&name) {
                self.err(
                    Diag::error(
                        "accl::device::clause_not_allowed",
                        format!("clause `{name}` is not allowed on `{}`", d.kind.name()),
                        cl.name.span,
                        "not valid here",
                    )
                    .with_label(d.kind_span, format!("this is {}", d.kind.described()))
                    .with_help(format!(
                        "`{}` takes: {}",
                        d.kind.name(),
                        allowed.join(", ")
                    )),
                );
                ok = false;
                continue;
            }
            if !repeatable(name) {
                if let Some((_, prev)) = seen.iter().find(|(n, _)| *n == name) {
                    self.err(
                        Diag::error(
                            "accl::device::duplicate_clause",
                            format!("clause `{name}` appears twice"),
                            cl.name.span,
                            "second time",
                        )
                        .with_label(*prev, "first time"),
                    );
                    ok = false;
                    continue;
                }
            }
            seen.push((name, cl.name.span));
            // Shape of the arguments.
            let list: &[ast::Expr] = match &cl.args {
                ClauseArgs::List(v) => v,
                _ => &[],
            };
            let shape_ok = match (&cl.args, shape) {
                (ClauseArgs::Reduction { .. }, Shape::Reduction) => true,
                (ClauseArgs::Reduction { .. }, _) | (_, Shape::Reduction) => false,
                (ClauseArgs::None, Shape::Flag | Shape::OptInt | Shape::OptInts) => true,
                (ClauseArgs::None, _) => false,
                (ClauseArgs::List(_), Shape::Flag) => false,
                (
                    ClauseArgs::List(v),
                    Shape::OptInt | Shape::Int | Shape::Bool | Shape::ConstInt | Shape::Default,
                ) => v.len() == 1,
                (ClauseArgs::List(v), _) => !v.is_empty(),
            };
            if !shape_ok {
                let usage = match shape {
                    Shape::Flag => format!("`{name}` takes no arguments"),
                    Shape::OptInt => format!("write `{name}` or `{name}(queue)`"),
                    Shape::Int => format!("write `{name}(n)` with one integer"),
                    Shape::OptInts => format!("write `{name}` or `{name}(q1, q2, ..)`"),
                    Shape::Bool => format!("write `{name}(condition)`"),
                    Shape::Arrays => format!("write `{name}(a, b[lo:count], ..)`"),
                    Shape::Vars => format!("write `{name}(x, y, ..)`"),
                    Shape::Reduction => {
                        "write `reduction(op: x, y)` with op one of `+ * max min & | ^ && ||`"
                            .to_string()
                    }
                    Shape::ConstInt => format!("write `{name}(n)` with a constant integer"),
                    Shape::Default => "write `default(present)`".to_string(),
                    Shape::ConstInts => format!("write `{name}(a, b)` with constant integers"),
                };
                let label = match &cl.args {
                    ClauseArgs::None => "missing arguments",
                    ClauseArgs::List(v) if v.is_empty() => "missing arguments",
                    ClauseArgs::List(v) if v.len() > 1 && shape != Shape::Flag => {
                        "too many arguments"
                    }
                    _ => "unexpected arguments",
                };
                self.err(
                    Diag::error(
                        "accl::device::clause_arguments",
                        format!("wrong arguments for clause `{name}`"),
                        cl.span,
                        label,
                    )
                    .with_help(usage),
                );
                ok = false;
                continue;
            }
            match (name, shape) {
                ("gang", _) => c.gang = true,
                ("worker", _) => c.worker = true,
                ("vector", _) => c.vector = true,
                ("seq", _) => c.seq = true,
                ("independent", _) => c.independent = true,
                ("auto", _) => c.auto = true,
                ("finalize", _) => c.finalize = true,
                ("if_present", _) => c.if_present = true,
                ("tile", _) => {
                    let mut sizes = Vec::new();
                    for e in list {
                        match self.const_int(e) {
                            Some(n) if (1..=1024).contains(&n) => sizes.push(n as u32),
                            Some(_) => {
                                self.err(Diag::error(
                                    "accl::device::tile_value",
                                    "tile sizes are between 1 and 1024",
                                    e.span,
                                    "out of range",
                                ));
                                ok = false;
                            }
                            None => ok = false,
                        }
                    }
                    if list.len() > 2 {
                        self.err(
                            Diag::error(
                                "accl::device::tile_value",
                                "`tile` takes one or two sizes",
                                cl.span,
                                "more than two loops",
                            )
                            .with_help("tile the two innermost loops, or collapse the rest"),
                        );
                        ok = false;
                    } else if sizes.iter().product::<u32>() > 1024 {
                        self.err(Diag::error(
                            "accl::device::tile_value",
                            "a tile has at most 1024 elements (one workgroup)",
                            cl.span,
                            "too big a tile",
                        ));
                        ok = false;
                    }
                    c.tile = sizes;
                }
                ("collapse", _) => match self.const_int(&list[0]) {
                    Some(n) if (1..=8).contains(&n) => c.collapse = n as u32,
                    Some(_) => {
                        self.err(Diag::error(
                            "accl::device::collapse_value",
                            "`collapse(n)` needs n between 1 and 8",
                            list[0].span,
                            "out of range",
                        ));
                        ok = false;
                    }
                    None => ok = false,
                },
                ("async", _) => {
                    c.async_ = Some(match list.first() {
                        None => AsyncQueue::Default,
                        Some(e) => AsyncQueue::Queue(self.int_arg(e)),
                    })
                }
                ("wait", _) => c.wait = Some(self.int_args(list)),
                ("if", _) => c.if_ = Some(self.cond(&list[0])),
                ("num_gangs", _) => c.num_gangs = Some(self.positive_int_arg(&list[0])),
                ("num_workers", _) => c.num_workers = Some(self.positive_int_arg(&list[0])),
                ("vector_length", _) => c.vector_length = Some(self.positive_int_arg(&list[0])),
                ("device_num", _) => c.device_num = Some(self.int_arg(&list[0])),
                ("default", _) => match &list[0].kind {
                    ast::ExprKind::Var(v) if v == "present" => c.default_present = true,
                    ast::ExprKind::Var(v) if v == "none" => c.default_none = true,
                    _ => {
                        self.err(
                            Diag::error(
                                "accl::device::bad_default",
                                "the default is `default(present)` or `default(none)`",
                                list[0].span,
                                "unknown default",
                            )
                            .with_help("write `default(present)` or `default(none)`"),
                        );
                        ok = false;
                    }
                },
                ("reduction", _) => {
                    if let ClauseArgs::Reduction { op, op_span, vars } = &cl.args {
                        for v in vars {
                            if let Some((l, array)) = self.reduction_var(*op, *op_span, v, d) {
                                let all = c.reductions.iter().chain(&c.array_reductions);
                                if all.clone().any(|r| r.var == l) {
                                    self.err(Diag::error(
                                        "accl::device::duplicate_reduction",
                                        format!("`{}` is reduced twice", v.name),
                                        v.span,
                                        "already in a reduction clause",
                                    ));
                                    ok = false;
                                } else {
                                    let r = hir::Reduction {
                                        op: *op,
                                        var: l,
                                        span: v.span,
                                    };
                                    if array {
                                        c.array_reductions.push(r);
                                    } else {
                                        c.reductions.push(r);
                                    }
                                }
                            } else {
                                ok = false;
                            }
                        }
                    }
                }
                ("private" | "firstprivate", _) => {
                    for e in list {
                        match self.scalar_var(e, name) {
                            Some(l) => {
                                if name == "private" {
                                    c.private.push(l)
                                } else {
                                    c.firstprivate.push(l)
                                }
                            }
                            None => ok = false,
                        }
                    }
                }
                (_, Shape::Arrays) => {
                    let kind = match name {
                        "copy" => DataKind::Copy,
                        "copyin" => DataKind::CopyIn,
                        "copyout" => DataKind::CopyOut,
                        "create" => DataKind::Create,
                        "present" => DataKind::Present,
                        "no_create" => DataKind::NoCreate,
                        "delete" => DataKind::Delete,
                        "device" => DataKind::UpdateDevice,
                        _ => DataKind::UpdateSelf,
                    };
                    for e in list {
                        match self.data_arg(kind, e) {
                            Some(dc) => {
                                if let Some((_, prev)) =
                                    arrays_seen.iter().find(|(l, _)| *l == dc.var)
                                {
                                    let n = self.body.locals[dc.var].name.clone();
                                    self.err(
                                        Diag::error(
                                            "accl::device::duplicate_data",
                                            format!("`{n}` appears in two data clauses of one construct"),
                                            e.span,
                                            "second time",
                                        )
                                        .with_label(*prev, "first time")
                                        .with_help("list each array once per construct"),
                                    );
                                    ok = false;
                                } else {
                                    arrays_seen.push((dc.var, e.span));
                                    c.data.push(dc);
                                }
                            }
                            None => ok = false,
                        }
                    }
                }
                _ => {}
            }
        }
        // A reduction variable cannot also be private.
        for r in &c.reductions {
            if c.private.contains(&r.var) || c.firstprivate.contains(&r.var) {
                let n = self.body.locals[r.var].name.clone();
                self.err(Diag::error(
                    "accl::device::reduction_private",
                    format!("`{n}` is both a reduction variable and private"),
                    r.span,
                    "in a reduction",
                ));
                ok = false;
            }
        }
        if !c.tile.is_empty() {
            if c.collapse > 1 {
                self.err(Diag::error(
                    "accl::device::conflicting_clauses",
                    "`tile` and `collapse` cannot both be given",
                    d.kind_span,
                    "both on this construct",
                ));
                ok = false;
            }
            // The tiled loops are the construct's nest.
            c.collapse = c.tile.len() as u32;
        }
        (c, ok)
    }

    fn int_arg(&mut self, e: &ast::Expr) -> ExprH {
        let (h, t) = self.expr(e, None);
        let t = self.finalize(h, t);
        if t != Type::Error && !t.is_int_like() {
            self.err(
                Diag::error(
                    "accl::type::queue_not_integer",
                    format!("expected an integer, found `{t}`"),
                    e.span,
                    "must be an integer",
                )
                .with_help("queue numbers, device numbers and sizes are integers"),
            );
        }
        h
    }

    fn positive_int_arg(&mut self, e: &ast::Expr) -> ExprH {
        let h = self.int_arg(e);
        if let hir::Expr::Const(v) = self.body.exprs[h] {
            if v.as_i128().is_some_and(|v| v <= 0) {
                self.err(Diag::error(
                    "accl::device::non_positive",
                    "this size must be positive",
                    e.span,
                    format!("is {v}"),
                ));
            }
        }
        h
    }

    fn int_args(&mut self, list: &[ast::Expr]) -> Vec<ExprH> {
        list.iter().map(|e| self.int_arg(e)).collect()
    }

    fn const_int(&mut self, e: &ast::Expr) -> Option<i128> {
        let (h, t) = self.expr(e, None);
        match (&self.body.exprs[h], t.is_int_like()) {
            (hir::Expr::Const(v), true) => v.as_i128(),
            _ => {
                if t != Type::Error {
                    self.err(Diag::error(
                        "accl::device::not_constant",
                        "expected a constant integer",
                        e.span,
                        "not a compile-time integer",
                    ));
                }
                None
            }
        }
    }

    fn scalar_var(&mut self, e: &ast::Expr, clause: &str) -> Option<LocalH> {
        let ast::ExprKind::Var(name) = &e.kind else {
            self.err(Diag::error(
                "accl::device::clause_arguments",
                format!("`{clause}` takes variable names"),
                e.span,
                "not a variable name",
            ));
            return None;
        };
        match self.lookup(name) {
            Some(Binding::Local(l)) => {
                if self.body.locals[l].ty.is_array() {
                    self.err(
                        Diag::error(
                            "accl::device::private_array",
                            format!("`{clause}` takes scalar variables; `{name}` is an array"),
                            e.span,
                            "an array",
                        )
                        .with_help(
                            "declare a private array-free temporary inside the loop instead",
                        ),
                    );
                    return None;
                }
                Some(l)
            }
            Some(Binding::Const(_)) => {
                self.err(Diag::error(
                    "accl::device::clause_arguments",
                    format!("`{name}` is a constant; `{clause}` takes variables"),
                    e.span,
                    "a constant",
                ));
                None
            }
            None => {
                self.unknown_name(name, e.span);
                None
            }
        }
    }

    fn reduction_var(
        &mut self,
        op: ReductionOp,
        op_span: Span,
        v: &ast::Ident,
        d: &ast::Directive,
    ) -> Option<(LocalH, bool)> {
        let l = match self.lookup(&v.name) {
            Some(Binding::Local(l)) => l,
            Some(Binding::Const(_)) => {
                self.err(Diag::error(
                    "accl::device::reduction_const",
                    format!("cannot reduce into constant `{}`", v.name),
                    v.span,
                    "a constant",
                ));
                return None;
            }
            None => {
                self.unknown_name(&v.name, v.span);
                return None;
            }
        };
        let ty = self.body.locals[l].ty;
        let ok = match (op, ty) {
            (_, Type::Array(elem, _)) => {
                // Array reductions become atomic updates of the elements.
                let ok = match op {
                    ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min => {
                        matches!(
                            elem,
                            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
                        )
                    }
                    ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => {
                        matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::I64)
                    }
                    ReductionOp::And | ReductionOp::Or => false,
                };
                if !ok {
                    self.err(
                        Diag::error(
                            "accl::device::reduction_array",
                            format!(
                                "`{}` is a `{elem}` array: arrays reduce with `+ * max min` on i32, u32, i64, f32 and f64 elements, and `& | ^` on integer ones",
                                v.name
                            ),
                            v.span,
                            format!("a `{elem}` array"),
                        )
                        .with_help("reduce into a scalar per element, or use `atomic` on the element"),
                    );
                    return None;
                }
                return Some((l, true));
            }
            (ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min, t) => {
                t.is_numeric_like()
            }
            (ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor, t) => t.is_int_like(),
            (ReductionOp::And | ReductionOp::Or, t) => t == Type::BOOL,
        };
        if !ok {
            let want = match op {
                ReductionOp::And | ReductionOp::Or => "a `bool` variable",
                ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => {
                    "an integer variable"
                }
                _ => "a numeric variable",
            };
            self.err(
                Diag::error(
                    "accl::device::reduction_type",
                    format!(
                        "reduction `{}` needs {want}, but `{}` is `{ty}`",
                        op.symbol(),
                        v.name
                    ),
                    v.span,
                    format!("`{ty}`"),
                )
                .with_label(op_span, "operator")
                .with_help(if ty.is_int_like() {
                    "integers reduce with `+ * max min & | ^`"
                } else if ty.is_float_like() {
                    "floats reduce with `+ * max min`"
                } else {
                    "a `bool` reduces with `&& ||`"
                }),
            );
            // Still a reduction variable: writing it is no race.
            return Some((l, false));
        }
        let _ = d;
        Some((l, false))
    }

    fn data_arg(&mut self, kind: DataKind, e: &ast::Expr) -> Option<hir::DataClause> {
        let (var_expr, section) = match &e.kind {
            ast::ExprKind::Section(a, lo, n) => (&**a, Some((&**lo, &**n))),
            _ => (e, None),
        };
        let ast::ExprKind::Var(name) = &var_expr.kind else {
            self.err(
                Diag::error(
                    "accl::device::data_not_array",
                    format!("`{}` takes array names or sections", kind.name()),
                    e.span,
                    "not an array name",
                )
                .with_help("write `a` or `a[lo:count]`"),
            );
            return None;
        };
        let l = match self.lookup(name) {
            Some(Binding::Local(l)) => l,
            _ => {
                self.unknown_name(name, var_expr.span);
                return None;
            }
        };
        let ty = self.body.locals[l].ty;
        if !ty.is_array() {
            self.err(
                Diag::error(
                    "accl::device::data_not_array",
                    format!("`{name}` is a `{ty}`, not an array"),
                    var_expr.span,
                    "a scalar",
                )
                .with_help("scalars need no data clause: a kernel reads them as firstprivate"),
            );
            return None;
        }
        let section = match section {
            None => None,
            Some((lo, n)) => {
                let lo = self.int_arg(lo);
                let n = self.int_arg(n);
                Some((lo, n))
            }
        };
        Some(hir::DataClause {
            kind,
            var: l,
            section,
            span: e.span,
        })
    }

    pub(super) fn atomic(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: ast::AtomicOp,
        op_span: Span,
        value: &ast::Expr,
        reduced: bool,
    ) -> Option<hir::Stmt> {
        let ast::ExprKind::Index(..) = &target.kind else {
            self.expr(target, None);
            self.err(
                Diag::error(
                    "accl::device::atomic_target",
                    "the target of `atomic` must be an array element",
                    target.span,
                    "not an array element",
                )
                .with_help("for a scalar sum use `reduction(+: x)` on the construct"),
            );
            return None;
        };
        self.updating_reduced_array = reduced;
        let place = self.place(target, true);
        self.updating_reduced_array = false;
        let (place, ty) = place?;
        let elem = ty.scalar()?;
        let supported = matches!(
            elem,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        );
        if !supported {
            self.err(
                Diag::error(
                    "accl::device::atomic_type",
                    format!("atomic updates of `{elem}` elements are not supported"),
                    target.span,
                    format!("a `{elem}` element"),
                )
                .with_help("atomics work on i32, u32, i64, f32 and f64 arrays"),
            );
            return None;
        }
        if matches!(
            op,
            ast::AtomicOp::And | ast::AtomicOp::Or | ast::AtomicOp::Xor
        ) && !elem.is_int()
        {
            self.err(
                Diag::error(
                    "accl::device::atomic_type",
                    format!(
                        "`atomic {}` needs an integer element, found `{elem}`",
                        op.symbol()
                    ),
                    op_span,
                    "bitwise operator",
                )
                .with_help("floats update atomically with `+= -= *= max= min=`"),
            );
            return None;
        }
        let (v, vt) = self.expr(value, Some(ty));
        self.coerce(v, vt, ty, value.span);
        Some(hir::Stmt {
            kind: hir::StmtKind::Atomic {
                place,
                op,
                value: v,
            },
            span: s.span,
        })
    }
}

impl Checker<'_> {
    /// The operator of array `l` when a device frame reduces it.
    pub(super) fn reduced_array(&self, l: LocalH) -> Option<ReductionOp> {
        self.dev
            .iter()
            .rev()
            .find_map(|f| f.reduced_arrays.iter().find(|(a, _)| *a == l).map(|r| r.1))
    }

    /// `h[i] op= v`, `h[i] = h[i] op v` or `h[i] = max(h[i], v)` (`min`) on
    /// an array `h` the construct reduces with `red`: an atomic update of
    /// the element (so every lane's contribution lands once, in any order).
    /// Anything else is an error.
    pub(super) fn reduced_array_update(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: Option<ast::BinOp>,
        op_span: Span,
        value: &ast::Expr,
        (name, red): (&str, ReductionOp),
    ) -> Option<hir::StmtKind> {
        use ast::{AtomicOp as A, BinOp as B};
        let text = |e: &ast::Expr| -> String {
            self.src[e.span.start as usize..e.span.end as usize]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect()
        };
        let of_bin = |b: B| match b {
            B::Add => Some((ReductionOp::Add, A::Add)),
            B::Sub => Some((ReductionOp::Add, A::Sub)),
            B::Mul => Some((ReductionOp::Mul, A::Mul)),
            B::BitAnd => Some((ReductionOp::BitAnd, A::And)),
            B::BitOr => Some((ReductionOp::BitOr, A::Or)),
            B::BitXor => Some((ReductionOp::BitXor, A::Xor)),
            _ => None,
        };
        let form = match (op, &value.kind) {
            (Some(b), _) => of_bin(b).map(|o| (o, value)),
            (None, ast::ExprKind::Binary(b, l, r)) if text(l) == text(target) => {
                of_bin(*b).map(|o| (o, &**r))
            }
            (None, ast::ExprKind::Call(f, args))
                if args.len() == 2
                    && matches!(f.name.as_str(), "max" | "min")
                    && text(&args[0]) == text(target) =>
            {
                Some(if f.name == "max" {
                    ((ReductionOp::Max, A::Max), &args[1])
                } else {
                    ((ReductionOp::Min, A::Min), &args[1])
                })
            }
            _ => None,
        };
        let Some(((found, aop), v)) = form.filter(|((r, _), _)| *r == red) else {
            self.err(
                Diag::error(
                    "accl::device::reduction_array_update",
                    format!(
                        "`{name}` is in a `reduction({}: ..)`: its elements can only be combined with `{}`",
                        red.symbol(),
                        red.symbol()
                    ),
                    s.span,
                    "not such an update",
                )
                .with_help(match red {
                    ReductionOp::Max | ReductionOp::Min => format!(
                        "write `{name}[i] = {}({name}[i], v);`",
                        red.symbol()
                    ),
                    _ => format!("write `{name}[i] {}= v;`", red.symbol()),
                }),
            );
            return None;
        };
        let _ = found;
        self.atomic(s, target, aop, op_span, v, true)
            .map(|st| st.kind)
    }
}

/// Elements of one `cache` section at most (16 KiB of workgroup memory at
/// 4 bytes an element).
pub const CACHE_MAX: i128 = 4096;

impl Checker<'_> {
    /// `cache(a[lo:n], ..)`: inside a compute construct, sections of 1-D
    /// arrays with a constant length.
    pub(super) fn cache(&mut self, s: &ast::Stmt, sections: &[ast::Expr]) -> Option<hir::Stmt> {
        if self.dev.is_empty() {
            self.err(
                Diag::error(
                    "accl::device::cache_outside",
                    "`cache` is only allowed inside a compute construct",
                    s.span,
                    "outside `parallel`",
                )
                .with_help("put it at the top of a loop body inside `parallel loop`"),
            );
            return None;
        }
        let mut out = Vec::new();
        for e in sections {
            let bad = |me: &mut Self, why: &str| {
                me.err(
                    Diag::error("accl::device::cache_section", why.to_string(), e.span, "this section")
                        .with_help(format!(
                            "write `cache(a[lo:n])` with `a` a 1-D array and `n` a constant from 1 to {CACHE_MAX}"
                        )),
                );
            };
            let ast::ExprKind::Section(a, lo, n) = &e.kind else {
                bad(self, "`cache` takes array sections `a[lo:n]`");
                continue;
            };
            let array = match &a.kind {
                ast::ExprKind::Var(name) => match self.lookup(name) {
                    Some(Binding::Local(l)) => l,
                    _ => {
                        self.unknown_name(name, a.span);
                        continue;
                    }
                },
                _ => {
                    bad(self, "`cache` takes sections of array variables");
                    continue;
                }
            };
            if !matches!(self.body.locals[array].ty, Type::Array(_, 1)) {
                bad(self, "`cache` takes sections of 1-D arrays");
                continue;
            }
            self.note_array(array, a.span, false);
            let count = match self.const_int(n) {
                Some(c) if (1..=CACHE_MAX).contains(&c) => c as u32,
                Some(_) => {
                    bad(self, "the length of a cached section is from 1 to 4096");
                    continue;
                }
                None => continue,
            };
            let lo = self.int_arg(lo);
            out.push(hir::Stmt {
                kind: hir::StmtKind::Cache { array, lo, count },
                span: e.span,
            });
        }
        match out.len() {
            0 => None,
            1 => out.pop(),
            _ => Some(hir::Stmt {
                kind: hir::StmtKind::Block(out),
                span: s.span,
            }),
        }
    }
}
