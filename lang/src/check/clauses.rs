//! Clauses of device constructs: every clause name and the arguments it
//! takes, which construct allows which, and their checking into
//! [`hir::Clauses`] (integer and constant arguments, `private` variables,
//! reduction variables, data clauses).

use super::{Binding, Checker};
use crate::ast::{self, ClauseArgs, DirectiveKind as DK};
use crate::diag::{did_you_mean, Diag};
use crate::hir::{self, AsyncQueue, DataKind, ExprH, LocalH};
use crate::span::Span;
use crate::types::Type;

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
    /// `(gpu)`: a kind of device.
    DeviceType,
    /// `(constant integer, ..)`.
    ConstInts,
    /// `(int)`, `(int, int)` or `(int, int, int)`: OpenACC 3.3's gang
    /// dimensions.
    Dims,
}

const CLAUSES: &[(&str, Shape)] = &[
    ("gang", Shape::Flag),
    ("worker", Shape::Flag),
    ("vector", Shape::Flag),
    ("seq", Shape::Flag),
    ("independent", Shape::Flag),
    ("auto", Shape::Flag),
    ("collapse", Shape::ConstInt),
    (ast::COLLAPSE_FORCE, Shape::ConstInt),
    (ast::GANG_DIM, Shape::ConstInt),
    (ast::GANG_STATIC, Shape::Int),
    ("tile", Shape::ConstInts),
    ("reduction", Shape::Reduction),
    ("private", Shape::Vars),
    ("firstprivate", Shape::Vars),
    ("use_device", Shape::Vars),
    (ast::PRIVATE_COPIES, Shape::Vars),
    (ast::FIRSTPRIVATE_COPIES, Shape::Vars),
    // `wait(devnum: d, ..)` (the parser makes it a clause).
    ("devnum", Shape::Int),
    ("num_gangs", Shape::Dims),
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
    // The arrays an embedder mapped onto its own buffers: `present`.
    ("deviceptr", Shape::Arrays),
    // `declare` only: `device_resident` is `create`, `link` does nothing
    // (check/declare_data.rs).
    ("device_resident", Shape::Arrays),
    ("link", Shape::Arrays),
    ("delete", Shape::Arrays),
    ("self", Shape::Arrays),
    ("host", Shape::Arrays),
    ("device", Shape::Arrays),
    ("finalize", Shape::Flag),
    ("if_present", Shape::Flag),
    ("device_num", Shape::Int),
    ("device_type", Shape::DeviceType),
    ("default_async", Shape::Int),
];

/// Every clause name of every construct (for completion in tools).
pub fn clause_names() -> impl Iterator<Item = &'static str> {
    CLAUSES.iter().map(|&(name, _)| name)
}

/// The clauses a construct of `kind` accepts, as written (for completion
/// in tools).
pub fn clauses_of(kind: DK) -> Vec<&'static str> {
    let mut v = allowed(kind);
    v.retain(|c| !c.contains('('));
    v
}

const DATA: &[&str] = &[
    "copy",
    "copyin",
    "copyout",
    "create",
    "present",
    "no_create",
    "deviceptr",
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
        DK::HostData => vec!["use_device", "if", "if_present"],
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
        DK::Wait => vec!["async", "if", "devnum"],
        DK::Set => vec!["device_num", "device_type", "default_async", "if"],
        DK::Init | DK::Shutdown => vec!["device_num", "device_type", "if"],
        DK::Declare => super::declare_data::DECLARE_CLAUSES.to_vec(),
    };
    if matches!(kind, DK::ParallelLoop | DK::Parallel | DK::Data) {
        v.extend_from_slice(DATA);
    }
    if v.contains(&"collapse") {
        v.push(ast::COLLAPSE_FORCE);
    }
    if v.contains(&"gang") {
        v.push(ast::GANG_STATIC);
        v.push(ast::GANG_DIM);
    }
    if v.contains(&"private") {
        v.extend([ast::PRIVATE_COPIES, ast::FIRSTPRIVATE_COPIES]);
    }
    v
}

/// The sizes of a compute construct, which `serial` fixes at one gang of one
/// worker with vector length 1 (OpenACC 3.3, 2.5.3).
const SIZES: &[&str] = &["num_gangs", "num_workers", "vector_length"];

/// `num_gangs(..)`, `num_workers(..)` or `vector_length(..)` written on
/// `kind`, a `serial` or `serial loop` (`described`).
fn serial_size(d: &ast::Directive, kind: &str, described: &str, cl: &ast::Clause) -> Diag {
    let name = cl.name.name.as_str();
    let more = match name {
        "num_gangs" => "more gangs",
        "num_workers" => "more workers",
        _ => "a longer vector",
    };
    Diag::error(
        "accl::device::clause_not_allowed",
        format!("clause `{name}` is not allowed on `{kind}`"),
        cl.span,
        "not valid here",
    )
    .with_label(d.kind_span, format!("this is {described}"))
    .with_help(format!(
        "`{kind}` runs one gang of one worker with vector length 1; for {more}, write `{} {name}(..)` instead",
        d.kind.name()
    ))
}

/// Clauses that may appear more than once on one construct.
fn repeatable(name: &str) -> bool {
    matches!(
        name,
        "reduction"
            | "wait"
            | "private"
            | "firstprivate"
            | "use_device"
            | "copy"
            | "copyin"
            | "copyout"
            | "create"
            | "present"
            | "no_create"
            | "deviceptr"
            | "device_resident"
            | ast::PRIVATE_COPIES
            | ast::FIRSTPRIVATE_COPIES
            | "link"
            | "delete"
            | "self"
            | "host"
            | "device"
    )
}

impl Checker<'_> {
    pub(super) fn clauses(&mut self, d: &ast::Directive) -> (hir::Clauses, bool) {
        // A `serial` construct is a `parallel` whose sizes follow the mark
        // (kernels.rs); sizes before it were written on `serial`.
        let serial_at = d
            .clauses
            .iter()
            .position(|c| c.name.name == crate::kernels::SERIAL);
        let allowed = allowed(d.kind);
        let (kind_name, described) = match (serial_at, d.kind) {
            (None, k) => (k.name(), k.described()),
            (Some(_), DK::ParallelLoop) => ("serial loop", "a `serial loop`".to_string()),
            (Some(_), _) => ("serial", "a `serial`".to_string()),
        };
        // What the messages list: the sizes `serial` adds, and the names the
        // parser and the private-array rewrite give clauses
        // (`collapse(force:)`, `private(copies:)`), are not the program's
        // to write.
        let mut listed = allowed.clone();
        listed.retain(|c| !c.contains('('));
        if serial_at.is_some() {
            listed.retain(|c| !SIZES.contains(c));
        }
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
        let mut arrays_seen: Vec<(LocalH, Span, &str)> = Vec::new();
        for (i, cl) in d.clauses.iter().enumerate() {
            let name = cl.name.name.as_str();
            if name == crate::kernels::KERNELS_PART {
                c.kernels = true;
                continue;
            }
            if name == crate::kernels::SERIAL {
                continue;
            }
            if serial_at.is_some_and(|m| i < m) && SIZES.contains(&name) {
                self.err(serial_size(d, kind_name, &described, cl));
                ok = false;
                continue;
            }
            let Some(&(_, shape)) = CLAUSES.iter().find(|(n, _)| *n == name) else {
                let mut diag = Diag::error(
                    "accl::device::unknown_clause",
                    format!("unknown clause `{name}`"),
                    cl.name.span,
                    "not a clause",
                );
                if let Some(s) = did_you_mean(name, listed.iter().copied()) {
                    diag = diag.with_help(format!("did you mean `{s}`?"));
                } else {
                    diag = diag.with_help(format!("`{kind_name}` takes: {}", listed.join(", ")));
                }
                self.err(diag);
                ok = false;
                continue;
            };
            if !allowed.contains(&name) {
                self.err(
                    Diag::error(
                        "accl::device::clause_not_allowed",
                        format!("clause `{name}` is not allowed on `{kind_name}`"),
                        cl.name.span,
                        "not valid here",
                    )
                    .with_label(d.kind_span, format!("this is {described}"))
                    .with_help(format!("`{kind_name}` takes: {}", listed.join(", "))),
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
                    Shape::OptInt
                    | Shape::Int
                    | Shape::Bool
                    | Shape::ConstInt
                    | Shape::Default
                    | Shape::DeviceType,
                ) => v.len() == 1,
                (ClauseArgs::List(v), Shape::Dims) => (1..=3).contains(&v.len()),
                (ClauseArgs::List(v), _) => !v.is_empty(),
            };
            // `*` is a size of `tile` only.
            if name != "tile" && name != ast::GANG_STATIC {
                if let Some(e) = list.iter().find(|e| is_star(e)) {
                    self.err(
                        Diag::error(
                            "accl::device::clause_arguments",
                            format!("`*` is not an argument of `{name}`"),
                            e.span,
                            "not a value",
                        )
                        .with_help("`*` stands for a tile size the compiler chooses: `tile(*, *)`"),
                    );
                    ok = false;
                    continue;
                }
            }
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
                    Shape::DeviceType => {
                        "write `device_type(gpu)`, `device_type(cpu)`, `device_type(host)` or `device_type(any)`".to_string()
                    }
                    Shape::ConstInts => format!("write `{name}(a, b)` with constant integers"),
                    Shape::Dims => format!("write `{name}(n)`, `{name}(n, m)` or `{name}(n, m, l)`"),
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
                    // `tile(*, ..)`: 16 lanes along the innermost loop and
                    // 16 along the next make square 256-lane workgroups;
                    // a single `*` takes 64 lanes; outer loops of three or
                    // more take 1 (only the two innermost are tiled).
                    let chosen = |k: usize| match (list.len(), k) {
                        (1, _) => 64,
                        (_, 0 | 1) => 16,
                        _ => 1,
                    };
                    c.tile_auto = list.iter().any(is_star);
                    for (k, e) in list.iter().enumerate() {
                        if is_star(e) {
                            sizes.push(chosen(k));
                            continue;
                        }
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
                    if list.len() > 8 {
                        self.err(
                            Diag::error(
                                "accl::device::tile_value",
                                "`tile` takes at most eight sizes",
                                cl.span,
                                "more than eight loops",
                            )
                            .with_help("a loop nest of at most eight loops can be tiled"),
                        );
                        ok = false;
                    } else if sizes.len() <= 2 && sizes.iter().product::<u32>() > 1024 {
                        self.err(Diag::error(
                            "accl::device::tile_value",
                            "a tile has at most 1024 elements (one workgroup)",
                            cl.span,
                            "too big a tile",
                        ));
                        ok = false;
                    }
                    c.tile = sizes;
                    c.nest_span = Some(cl.span);
                }
                ("collapse", _) | (ast::COLLAPSE_FORCE, _) => match self.const_int(&list[0]) {
                    Some(n) if (1..=8).contains(&n) => {
                        c.collapse = n as u32;
                        c.collapse_force = name == ast::COLLAPSE_FORCE;
                        c.nest_span = Some(cl.span);
                    }
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
                // Several `wait` clauses wait for every queue they name
                // (a bare `wait`, for every queue).
                ("wait", _) => {
                    let more = self.int_args(list);
                    c.wait = Some(match c.wait.take() {
                        Some(prev) if prev.is_empty() || more.is_empty() => Vec::new(),
                        Some(mut prev) => {
                            prev.extend(more);
                            prev
                        }
                        None => more,
                    });
                }
                ("if", _) => c.if_ = Some(self.cond(&list[0])),
                ("num_gangs", _) => c.num_gangs = Some(self.gang_count(list)),
                (ast::GANG_STATIC, _) => {
                    if !is_star(&list[0]) {
                        self.int_arg(&list[0]);
                    }
                    c.gang = true;
                }
                (ast::GANG_DIM, _) => match self.const_int(&list[0]) {
                    Some(1..=3) => c.gang = true,
                    Some(_) => {
                        self.err(
                            Diag::error(
                                "accl::device::gang_dim",
                                "`gang(dim: k)` needs k between 1 and 3",
                                list[0].span,
                                "out of range",
                            )
                            .with_help("gangs have at most three dimensions: `num_gangs(n, m, l)`"),
                        );
                        ok = false;
                    }
                    None => ok = false,
                },
                ("num_workers", _) => c.num_workers = Some(self.size_arg(name, &list[0])),
                ("vector_length", _) => c.vector_length = Some(self.size_arg(name, &list[0])),
                ("device_num" | "devnum", _) => c.device_num = Some(self.int_arg(&list[0])),
                ("default_async", _) => c.default_async = Some(self.int_arg(&list[0])),
                ("device_type", _) => match &list[0].kind {
                    ast::ExprKind::Var(v)
                        if ["gpu", "cpu", "host", "any"].contains(&v.as_str()) =>
                    {
                        c.device_type = Some(match v.as_str() {
                            "gpu" => "gpu",
                            "cpu" => "cpu",
                            "host" => "host",
                            _ => "any",
                        })
                    }
                    _ => {
                        self.err(
                            Diag::error(
                                "accl::device::bad_device_type",
                                "the device types are `gpu`, `cpu`, `host` and `any`",
                                list[0].span,
                                "not a device type",
                            )
                            .with_help("`gpu` is a GPU (discrete or integrated), `cpu` a CPU Vulkan driver such as lavapipe, `host` the host reference"),
                        );
                        ok = false;
                    }
                },
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
                    if let ClauseArgs::Reduction {
                        op,
                        op_span,
                        vars,
                        elements,
                    } = &cl.args
                    {
                        for (v, elem) in vars.iter().zip(elements) {
                            // A bad element form is reported; the variable
                            // is still reduced, so its uses raise nothing more.
                            if let Some(ix) = elem {
                                ok &= self.reduction_element(v, ix);
                            }
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
                                        self.unboxed.push((self.body.func, l));
                                        c.reductions.push(r);
                                    }
                                }
                            } else {
                                ok = false;
                            }
                        }
                    }
                }
                ("use_device", _) => {
                    for e in list {
                        match self.array_var(e, name) {
                            Some(l) => c.use_device.push(l),
                            None => ok = false,
                        }
                    }
                }
                (ast::PRIVATE_COPIES | ast::FIRSTPRIVATE_COPIES, _) => {
                    for e in list {
                        match self.array_var(e, name) {
                            Some(l) => c.private_copies.push((l, name == ast::FIRSTPRIVATE_COPIES)),
                            None => ok = false,
                        }
                    }
                }
                ("private" | "firstprivate", _) => {
                    for e in list {
                        match self.scalar_var(e, name) {
                            Some(l) => {
                                self.unboxed.push((self.body.func, l));
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
                        "create" | "device_resident" => DataKind::Create,
                        "present" | "deviceptr" => DataKind::Present,
                        "no_create" => DataKind::NoCreate,
                        "delete" => DataKind::Delete,
                        "device" => DataKind::UpdateDevice,
                        _ => DataKind::UpdateSelf,
                    };
                    for e in list {
                        // A scalar in a data clause of a compute, `data`,
                        // `declare` or `update` construct: kernels take it by
                        // value anyway (the host's is its only copy); with
                        // `copy`/`copyout`, what they assign comes back.
                        if matches!(
                            d.kind,
                            DK::Parallel
                                | DK::ParallelLoop
                                | DK::Data
                                | DK::Declare
                                | DK::Update
                                | DK::EnterData
                                | DK::ExitData
                        ) {
                            if let Some(l) = self.scalar_in_data(e) {
                                c.scalar_data = true;
                                if matches!(kind, DataKind::Copy | DataKind::CopyOut)
                                    && matches!(d.kind, DK::Parallel | DK::ParallelLoop | DK::Data)
                                {
                                    c.scalar_copies.push(l);
                                }
                                // The scalar gets a device copy of its own
                                // where the program can tell it apart
                                // (`data_scalars`); else the clause is
                                // dropped there.
                                c.scalar_clauses.push(hir::DataClause {
                                    kind,
                                    var: l,
                                    section: Vec::new(),
                                    span: e.span,
                                });
                                continue;
                            }
                        }
                        if matches!(kind, DataKind::Copy | DataKind::CopyOut) {
                            let var = match &e.kind {
                                ast::ExprKind::Section(a, _) => &a.kind,
                                k => k,
                            };
                            if let ast::ExprKind::Var(n) = var {
                                if self.is_constant_array(n) {
                                    self.constant_written(
                                        n,
                                        e.span,
                                        &format!("`{name}` copies it back to the host"),
                                    );
                                    ok = false;
                                    continue;
                                }
                            }
                        }
                        match self.data_arg(kind, e) {
                            Some(dc) => {
                                let prev = arrays_seen.iter().find(|(l, ..)| *l == dc.var);
                                if self.data_twice(
                                    d,
                                    prev.map(|p| (p.1, p.2)),
                                    (name, e.span),
                                    dc.var,
                                ) {
                                    arrays_seen.push((dc.var, e.span, name));
                                    c.data.push(dc);
                                } else {
                                    ok = false;
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

    pub(super) fn int_arg(&mut self, e: &ast::Expr) -> ExprH {
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

    fn int_args(&mut self, list: &[ast::Expr]) -> Vec<ExprH> {
        list.iter().map(|e| self.int_arg(e)).collect()
    }

    pub(super) fn const_int(&mut self, e: &ast::Expr) -> Option<i128> {
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
        // `private(c[0:n])`: a section of an array.
        if let ast::ExprKind::Section(a, _) | ast::ExprKind::Index(a, _) = &e.kind {
            if let ast::ExprKind::Var(name) = &a.kind {
                if let Some(Binding::Local(l)) = self.lookup(name) {
                    if self.body.locals[l].ty.is_array() {
                        self.private_array(clause, name, e.span);
                        return None;
                    }
                }
            }
        }
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
                    self.private_array(clause, name, e.span);
                    return None;
                }
                Some(l)
            }
            Some(Binding::Global(_)) => {
                self.unknown_name(name, e.span);
                None
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

    /// `private`/`firstprivate` of an array or a section where no compute
    /// construct encloses the clause (a routine's `loop`): the copies are
    /// allocated by the compute construct (`private_arrays`), which is in
    /// the caller.
    fn private_array(&mut self, clause: &str, name: &str, span: Span) {
        self.err(
            Diag::error(
                "accl::device::private_array",
                format!("`{clause}({name})` on a routine's `loop`: private arrays get their copies from the compute construct around the clause, which is in the caller"),
                span,
                "an array",
            )
            .with_help(format!(
                "make `{name}` private on the `parallel loop`/`loop` that calls this function, or give each iteration its own row of `{name}`"
            )),
        );
    }

    /// An array variable named by `clause` (`use_device`).
    pub(super) fn array_var(&mut self, e: &ast::Expr, clause: &str) -> Option<LocalH> {
        let ast::ExprKind::Var(name) = &e.kind else {
            self.err(
                Diag::error(
                    "accl::device::clause_arguments",
                    format!("`{clause}` takes array variable names"),
                    e.span,
                    "not a variable name",
                )
                .with_help("name whole arrays: the device copy of each is handed over"),
            );
            return None;
        };
        match self.lookup(name) {
            Some(Binding::Local(l)) if self.body.locals[l].ty.is_array() => Some(l),
            Some(Binding::Global(_)) => {
                self.unknown_name(name, e.span);
                None
            }
            Some(Binding::Local(_)) | Some(Binding::Const(_)) => {
                self.err(Diag::error(
                    "accl::device::clause_arguments",
                    format!("`{clause}` takes arrays; `{name}` is not one"),
                    e.span,
                    "not an array",
                ));
                None
            }
            None => {
                self.unknown_name(name, e.span);
                None
            }
        }
    }

    /// The scalar variable `e` names, if it names one.
    pub(super) fn scalar_in_data(&mut self, e: &ast::Expr) -> Option<LocalH> {
        let ast::ExprKind::Var(name) = &e.kind else {
            return None;
        };
        match self.lookup(name) {
            Some(Binding::Local(l)) if !self.body.locals[l].ty.is_array() => Some(l),
            _ => None,
        }
    }

    fn data_arg(&mut self, kind: DataKind, e: &ast::Expr) -> Option<hir::DataClause> {
        let (var_expr, section) = match &e.kind {
            ast::ExprKind::Section(a, axes) => (&**a, Some(axes)),
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
                .with_help("a kernel takes scalars by value, so only compute and `data` constructs take them in data clauses (`copy(x)` brings back what a kernel assigns)"),
            );
            return None;
        }
        let section = match section {
            None => Vec::new(),
            Some(axes) => self.section_axes(name, ty, axes, e.span)?,
        };
        Some(hir::DataClause {
            kind,
            var: l,
            section,
            span: e.span,
        })
    }
}

/// The `*` of `tile(*, ..)`.
fn is_star(e: &ast::Expr) -> bool {
    matches!(&e.kind, ast::ExprKind::Var(v) if v == ast::TILE_AUTO)
}
