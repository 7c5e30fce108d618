//! HIR → KIR: one `parallel loop` or `parallel { .. }` construct to a [`Kernel`].
//!
//! The lowering resolves what the HIR leaves to the host: which local is a
//! captured scalar (a [`Expr::Param`]), which is an array (a binding), which
//! is private to the iteration (a KIR local). Device functions are lowered
//! once per distinct tuple of array bindings they are called with (so a
//! function taking `q: f32[]` called with two different arrays becomes two
//! SPIR-V functions, each with its buffer fixed) and once only otherwise.
//!
//! The kernel's [`Shape`] is chosen here: a `parallel loop` with a non-`seq`
//! `loop` inside is a gang loop, a region is a `Region`, `parallel loop seq`
//! is `Seq`, anything else `Flat` (`docs/language.md`, "How compute constructs map onto the device"). In gang-redundant
//! code (a gang's statements outside `loop vector`) every invocation
//! computes the same scalars and each effect (an element store, an atomic,
//! a call of a function that stores) is wrapped in `if invocation == 0 { .. }`
//! followed by a barrier ("vector-single"); a value only invocation 0 could
//! compute is refused. Reductions use the host's identities and `combine`
//! ([`identity`](lang::value::identity), [`combine`], copied from
//! `src/interp/construct.rs`).
//!
//! Still refused with `accl::compile::unsupported`, naming the feature and
//! pointing at it: a non-`seq` `loop` nested in `loop vector`, `loop gang`
//! inside `parallel loop`, a reduction on `loop gang` in a region, a
//! `loop` reduction into a host variable the construct does not reduce,
//! atomic captures used as values in gang-redundant code, and what the
//! back end never did (strings, whole-array values, `break` out of an
//! iteration).
//!
//! The parts: this file chooses the shape and lowers the construct's
//! captures, clauses and loop nest into the kernel's entry. Its private
//! modules: `stmt` lowers statements (and makes gang-redundant effects
//! vector-single), `expr` expressions and atomics, `inner` the `loop`
//! constructs inside a kernel, and `function` device functions.

mod calls;
mod copies;
mod expr;
mod function;
mod inner;
mod region;
mod routine;
mod stmt;
mod tuples;

use crate::kir::*;
use lang::arena::Arena;
use lang::hir::{self, DirectiveKind, FnH};
use lang::{Builtins, Diag, Scalar, Span, Type, Value};
use std::collections::HashMap;

/// Lower one `parallel loop` construct of `body` (the body it appears in:
/// `program.main` or a function's body) to a kernel.
pub fn lower(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
) -> Result<Kernel, Diag> {
    if let Some((c, choices)) = region::as_gang_loop(body, construct, builtins) {
        // When the gang loop's form is refused, the region's own lowering
        // says why (or runs it).
        if let Ok(mut k) = lower(program, body, &c, builtins) {
            default_vector(&mut k);
            let mut all = choices;
            all.append(&mut k.choices);
            k.choices = all;
            return Ok(k);
        }
    }
    // The compiler's own decisions, made once: `auto` refused, inner loops
    // mapped.
    let refused = auto_refused(program, body, construct, builtins);
    let (mapped, notes) = if refused.is_some() {
        (None, Vec::new())
    } else {
        mapped_loops(program, body, construct, builtins)
    };
    let Some(block) = mapped else {
        let mut k = lower_mapped(program, body, construct, builtins, None, notes, refused)?;
        if let hir::ConstructBody::Loops { body: b, .. } = &construct.body {
            if calls_routines(program, body, b) {
                default_vector(&mut k);
            }
        }
        return Ok(k);
    };
    let r = lower_mapped(
        program,
        body,
        construct,
        builtins,
        Some(&block),
        notes.clone(),
        refused.clone(),
    );
    if r.is_ok() {
        return r;
    }
    // A body the gang shape refuses (a value only lane 0 computes, used
    // outside the vector loop) runs as written.
    let notes = notes
        .into_iter()
        .map(|n| LoopNote {
            vector: None,
            reason: "its gang-redundant code uses a value only one lane computes".into(),
            ..n
        })
        .collect();
    lower_mapped(program, body, construct, builtins, None, notes, refused)
}

/// A gang kernel whose vector length the program leaves open (a region
/// run as a gang loop, a gang loop whose vector loops are a routine's):
/// a team of one subgroup per gang on NVIDIA GPUs, instead of a whole
/// 256-lane workgroup for inner loops that are often short.
fn default_vector(k: &mut Kernel) {
    if k.shape == Shape::Gang
        && k.vector_length.is_none()
        && k.vector_length_expr.is_none()
        && k.num_workers.is_none()
    {
        k.vector_length = Some(crate::autovec::DEFAULT_VECTOR);
        k.choices.push((
            k.span,
            format!(
                "vector length {} (no `vector_length`): a gang is a team of one subgroup where the subgroup is that wide",
                crate::autovec::DEFAULT_VECTOR
            ),
        ));
    }
}

/// The kernel of the first construct of `src` (inside the block the
/// private arrays' rewrite makes of it), for the compiler's unit tests.
#[cfg(test)]
pub(crate) fn first_kernel(src: &str) -> Kernel {
    let b = stdlib::builtins();
    let program = lang::check_source(src, &b).unwrap().program;
    fn find(b: &[hir::Stmt]) -> Option<&hir::Construct> {
        b.iter().find_map(|s| match &s.kind {
            hir::StmtKind::Construct(c) => Some(&**c),
            hir::StmtKind::Block(b) => find(b),
            _ => None,
        })
    }
    let c = find(&program.main.block).unwrap();
    lower(&program, &program.main, c, &b).unwrap()
}

/// The kernel of a `parallel loop auto` that [`lower`] runs in order on one
/// lane, lowered as if its iterations were independent, with the test
/// that tells at each launch whether they are ([`crate::depend`]); `None`
/// when no launch's values could make them so.
pub fn lower_variant(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
) -> Option<(Kernel, crate::depend::LaunchTest)> {
    auto_refused(program, body, construct, builtins)?;
    let test = crate::depend::LaunchTest::of(program, body, construct, builtins)?;
    let mut c = construct.clone();
    c.clauses.auto = false;
    c.clauses.independent = true;
    let k = lower(program, body, &c, builtins).ok()?;
    // The launch gives the construct's own levels; inner loops collapsed
    // into more would need theirs.
    let hir::ConstructBody::Loops { loops, .. } = &construct.body else {
        return None;
    };
    (k.levels.len() == loops.len()).then_some((k, test))
}

/// Why a `parallel loop auto` runs its iterations in order on one lane (it
/// cannot prove them independent), as a note on its loop; `None` when it
/// is not `auto` or they are independent.
fn auto_refused(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
) -> Option<LoopNote> {
    let hir::ConstructBody::Loops { loops, body: block } = &construct.body else {
        return None;
    };
    if !construct.clauses.auto {
        return None;
    }
    let private = &construct.clauses.private;
    let why =
        crate::autovec::independent_nest_private(program, body, loops, block, builtins, private)
            .err()?;
    let tested = crate::depend::LaunchTest::of(program, body, construct, builtins).is_some();
    let reason = if tested {
        format!("`auto`: {why}; each launch tests the indices' values and runs it in parallel when they keep iterations apart, else in order on one lane")
    } else {
        format!("`auto`: in order on one lane, since {why}")
    };
    Some(LoopNote {
        span: loops[0].span,
        vector: None,
        reason,
    })
}

/// The iteration body of a flat `parallel loop` with its parallel inner
/// loops made vector loops ([`crate::autovec`]), when there are any.
fn mapped_loops(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
) -> (Option<hir::Block>, Vec<LoopNote>) {
    let (DirectiveKind::ParallelLoop, hir::ConstructBody::Loops { loops, body: block }) =
        (construct.kind, &construct.body)
    else {
        return (None, Vec::new());
    };
    if has_inner_loops(program, body, block) {
        return (None, Vec::new());
    }
    let (l, b) = crate::collapse::levels(program, body, construct, loops, block, builtins);
    if l.len() != loops.len() {
        return (None, Vec::new()); // collapsed instead
    }
    crate::autovec::vectorise(program, body, construct, loops, b, builtins)
}

/// Lower with the compiler's decisions: `mapped`, the body with inner
/// loops made vector loops; `notes` on them; `refused`, why an `auto`
/// loop runs in order.
fn lower_mapped(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
    mapped: Option<&hir::Block>,
    mut notes: Vec<LoopNote>,
    refused: Option<LoopNote>,
) -> Result<Kernel, Diag> {
    let c = &construct.clauses;
    let auto;
    let (shape, loops, block): (Shape, &[hir::LoopHeader], &hir::Block) =
        match (construct.kind, &construct.body) {
            (DirectiveKind::ParallelLoop, hir::ConstructBody::Loops { loops, .. })
                if mapped.is_some() =>
            {
                let Some(b) = mapped else {
                    unreachable!("checked by the guard")
                };
                (Shape::Gang, loops, b)
            }
            (DirectiveKind::ParallelLoop, hir::ConstructBody::Loops { loops, body: block }) => {
                let shape = if has_inner_loops(program, body, block) {
                    Shape::Gang
                } else if c.seq || refused.is_some() {
                    Shape::Seq
                } else {
                    Shape::Flat
                };
                notes.extend(refused);
                if shape == Shape::Flat {
                    // Independent inner loops become levels of the nest.
                    let (l, b) =
                        crate::collapse::levels(program, body, construct, loops, block, builtins);
                    auto = l;
                    (shape, &auto[..], b)
                } else {
                    (shape, loops, block)
                }
            }
            (DirectiveKind::Parallel, hir::ConstructBody::Block(block)) => {
                (Shape::Region, &[], block)
            }
            (DirectiveKind::ParallelLoop | DirectiveKind::Parallel, _) => {
                return Err(internal(
                    construct.span,
                    "a compute construct without its loop nest or block",
                ))
            }
            (k, _) => {
                return Err(Diag::error(
                    "accl::compile::not_a_kernel",
                    format!("`{}` is not a kernel construct", k.name()),
                    construct.kind_span,
                    "only `parallel loop` and `parallel` are compiled to kernels",
                ))
            }
        };

    let mut lw = Lowerer {
        program,
        builtins,
        arrays: Arena::new(),
        functions: Arena::new(),
        fn_cache: HashMap::new(),
        fn_effects: HashMap::new(),
        params: Vec::new(),
        shape,
        one_gang: shape == Shape::Region
            && c.num_gangs.is_none_or(
                |e| matches!(&body.exprs[e], hir::Expr::Const(v) if v.as_i128() == Some(1)),
            ),
        construct_reductions: c.reductions.iter().map(|r| (r.var, r.op)).collect(),
        choices: Vec::new(),
        private_copies: Vec::new(),
    };
    let mut fx = Fx::new(format!("kernel_{}", construct.id), body);

    for a in &construct.captures.arrays {
        let local = &body.locals[a.var];
        let Type::Array(elem, rank) = local.ty else {
            return Err(internal(a.span, "an array capture that is not an array"));
        };
        let h = lw.arrays.append(
            ArrayParam {
                name: local.name.clone(),
                host: a.var,
                elem,
                rank,
                read: a.read,
                written: a.written,
            },
            a.span,
        );
        fx.map.insert(a.var, Binding::Array(h));
    }
    let reduced: Vec<hir::LocalH> = c.reductions.iter().map(|r| r.var).collect();
    let mut scalars: Vec<hir::LocalH> = construct
        .captures
        .scalars
        .iter()
        .copied()
        .filter(|v| !reduced.contains(v))
        .collect();
    for v in c.firstprivate.iter().chain(&c.copy_scalars) {
        if !scalars.contains(v) {
            scalars.push(*v);
        }
    }
    for v in scalars {
        let local = &body.locals[v];
        let ty = scalar_of(local.ty, construct.span)?;
        let i = lw.params.len() as u32;
        lw.params.push(ScalarParam {
            name: local.name.clone(),
            host: v,
            ty,
        });
        fx.map.insert(v, Binding::Param(i));
    }

    // Construct-level reductions: a private copy in an entry local.
    let mut reductions = Vec::new();
    let mut reduction_locals = Vec::new();
    for r in &c.reductions {
        let local = &body.locals[r.var];
        let ty = scalar_of(local.ty, r.span)?;
        if !reduction_legal(r.op, ty) {
            return Err(internal(
                r.span,
                "a reduction operator on a type it does not apply to",
            ));
        }
        let l = fx.out.locals.append(
            Local {
                name: local.name.clone(),
                ty,
            },
            r.span,
        );
        fx.map.insert(r.var, Binding::Local(l));
        reductions.push(ReductionParam {
            name: local.name.clone(),
            host: r.var,
            op: r.op,
            ty,
            copy: false,
        });
        reduction_locals.push(l);
    }
    // `kernels` scalars assigned with no clause: a reduction of the one
    // lane's copy, which starts at the host's value (below) and replaces
    // it at the end.
    let mut copy_inits = Vec::new();
    for &v in &c.copy_scalars {
        let local = &body.locals[v];
        let ty = scalar_of(local.ty, construct.span)?;
        let Some(Binding::Param(i)) = fx.map.get(&v).copied() else {
            return Err(internal(
                construct.span,
                "copied scalar without a parameter",
            ));
        };
        let l = fx.out.locals.append(
            Local {
                name: local.name.clone(),
                ty,
            },
            construct.span,
        );
        fx.map.insert(v, Binding::Local(l));
        // An operator whose identity leaves the lane's value as it is.
        let op = match ty {
            Scalar::Bool => ReductionOp::Or,
            Scalar::F32 | Scalar::F64 => ReductionOp::Max,
            _ => ReductionOp::BitOr,
        };
        reductions.push(ReductionParam {
            name: local.name.clone(),
            host: v,
            op,
            ty,
            copy: true,
        });
        reduction_locals.push(l);
        copy_inits.push((l, i, ty));
    }

    let mut levels = Vec::new();
    for h in loops {
        let ty = scalar_of(body.locals[h.var].ty, h.span)?;
        let var = fx.out.locals.append(
            Local {
                name: body.locals[h.var].name.clone(),
                ty,
            },
            h.span,
        );
        fx.map.insert(h.var, Binding::Local(var));
        let konst = |e: hir::ExprH| match &body.exprs[e] {
            hir::Expr::Const(v) => v.as_i128(),
            _ => None,
        };
        let count = konst(h.lo)
            .zip(konst(h.hi))
            .map(|(lo, hi)| hi - lo + h.inclusive as i128)
            .filter(|n| (1..=u32::MAX as i128).contains(n))
            .map(|n| n as u64);
        levels.push(LoopLevel {
            var,
            ty,
            lo: h.lo,
            hi: h.hi,
            inclusive: h.inclusive,
            count,
            span: h.span,
        });
    }

    // private: a fresh zero per iteration (per gang in a region);
    // firstprivate: a per-iteration copy.
    let mut prologue = Vec::new();
    for (l, i, ty) in copy_inits {
        let init = fx.out.add_expr(Expr::Param(i), ty, construct.span);
        prologue.push(Stmt {
            kind: StmtKind::Store {
                local: l,
                value: init,
            },
            span: construct.span,
        });
    }
    for (vars, first) in [(&c.private, false), (&c.firstprivate, true)] {
        for &v in vars {
            let local = &body.locals[v];
            let ty = scalar_of(local.ty, construct.span)?;
            let init = if first {
                let Some(Binding::Param(i)) = fx.map.get(&v).copied() else {
                    return Err(internal(
                        construct.span,
                        "firstprivate variable without a parameter",
                    ));
                };
                fx.out.add_expr(Expr::Param(i), ty, construct.span)
            } else {
                fx.out
                    .add_expr(Expr::Const(Value::zero(ty)), ty, construct.span)
            };
            let l = fx.out.locals.append(
                Local {
                    name: local.name.clone(),
                    ty,
                },
                construct.span,
            );
            fx.map.insert(v, Binding::Local(l));
            prologue.push(Stmt {
                kind: StmtKind::Store {
                    local: l,
                    value: init,
                },
                span: construct.span,
            });
        }
    }

    // The construct's iterations own these copies (a region's: its gang's).
    let slots = crate::private_copies::slots(shape);
    lw.own_copies(
        &fx,
        &c.private_copies,
        Ok(slots),
        construct.span,
        &mut prologue,
    )?;

    fx.redundant = matches!(shape, Shape::Gang | Shape::Region);
    let mut stmts = lw.block(&mut fx, block)?;
    prologue.append(&mut stmts);
    fx.out.body = prologue;
    let entry = fx.out;

    let (vector_length, vector_length_expr) = match c.vector_length {
        None => (None, None),
        Some(e) => match &body.exprs[e] {
            // The checker refuses these already; this keeps HIR built
            // some other way from a kernel that cannot launch.
            hir::Expr::Const(v) => match size(v.as_i128(), "vector_length", body.span(e)) {
                Ok(n) => (Some(n), None),
                Err(d) => return Err(d),
            },
            _ => (None, Some(e)),
        },
    };

    // A run-time `num_workers(e)` is evaluated by the host (for its
    // effects) and otherwise left to the device's default.
    let num_workers = match c.num_workers.map(|e| (e, &body.exprs[e])) {
        Some((e, hir::Expr::Const(v))) => Some(size(v.as_i128(), "num_workers", body.span(e))?),
        _ => None,
    };

    // Mapped loops get a subgroup-sized vector by default.
    let vector_length = match (&mapped, vector_length, &vector_length_expr) {
        (Some(_), None, None) => Some(crate::autovec::DEFAULT_VECTOR),
        _ => vector_length,
    };
    // `tile(a, b)` on a flat nest: workgroups of a x b tiles; `tile(a)`:
    // workgroups of a lanes.
    // A construct of one lane (`serial loop tile(..)`) stays one lane: its
    // tiles run one after another. Nests of three or more tiled loops run
    // as the collapsed nest (the tile shape only orders iterations).
    let one_lane = vector_length == Some(1);
    let (tile, vector_length) = match (shape, c.tile.as_slice(), levels.len()) {
        (Shape::Flat, &[a, b], 2) if !one_lane => (Some((a, b)), None),
        (Shape::Flat, &[a], _) if !one_lane => (None, vector_length.or(Some(a))),
        _ => (None, vector_length),
    };
    let mut kernel = Kernel {
        name: format!("kernel_{}", construct.id),
        id: construct.id,
        span: construct.span,
        params: lw.params,
        choices: lw.choices,
        private_copies: lw.private_copies,
        arrays: lw.arrays,
        levels,
        functions: lw.functions,
        entry,
        vector_length,
        num_workers,
        tile,
        vector_length_expr,
        features: Features::default(),
        shape,
        reductions,
        reduction_locals,
        num_gangs_expr: c.num_gangs,
        private_atomics: false,
        facts: BodyFacts::default(),
        notes,
    };
    kernel.features = features_of(&kernel);
    kernel.private_atomics = crate::privatise::private_atomics(&kernel);
    crate::private_copies::settle(&mut kernel);
    kernel.facts = crate::facts::body_facts(&kernel);
    Ok(kernel)
}

/// Does a `parallel loop` body hold a `loop` that is not `seq` (so each
/// iteration is a gang, with that loop spread over its invocations)?
/// Does `b` call a `routine vector|worker|gang` function at a statement
/// of its own (outside inner loops)?
fn calls_routines(p: &hir::Program, src: &hir::Body, b: &hir::Block) -> bool {
    b.iter().any(|s| match &s.kind {
        hir::StmtKind::If { then, els, .. } => {
            calls_routines(p, src, then) || calls_routines(p, src, els)
        }
        hir::StmtKind::While { body, .. } | hir::StmtKind::Block(body) => {
            calls_routines(p, src, body)
        }
        hir::StmtKind::For(f) => calls_routines(p, src, &f.body),
        hir::StmtKind::Let { init: e, .. }
        | hir::StmtKind::LetTuple { init: e, .. }
        | hir::StmtKind::Assign { value: e, .. }
        | hir::StmtKind::Expr(e) => calls::calls_routine(p, src, *e),
        _ => false,
    })
}

/// A call of a `routine vector|worker|gang` function counts: its loops run
/// inline, over the gang's lanes.
fn has_inner_loops(p: &hir::Program, src: &hir::Body, b: &hir::Block) -> bool {
    let go = |b: &hir::Block| has_inner_loops(p, src, b);
    b.iter().any(|s| match &s.kind {
        hir::StmtKind::Construct(c) => {
            c.kind == DirectiveKind::Loop
                && (!c.clauses.seq
                    || matches!(&c.body, hir::ConstructBody::Loops { body, .. } if go(body)))
        }
        hir::StmtKind::If { then, els, .. } => go(then) || go(els),
        hir::StmtKind::While { body, .. } | hir::StmtKind::Block(body) => go(body),
        hir::StmtKind::For(f) => go(&f.body),
        hir::StmtKind::Let { init: e, .. }
        | hir::StmtKind::LetTuple { init: e, .. }
        | hir::StmtKind::Assign { value: e, .. }
        | hir::StmtKind::Expr(e) => calls::calls_routine(p, src, *e),
        _ => false,
    })
}

/// Every optional feature the kernel uses (64-bit index arithmetic is added
/// by the emitter when the [`crate::Spec`] asks for it).
pub fn features_of(k: &Kernel) -> Features {
    let mut f = Features::default();
    for p in &k.params {
        f.note_scalar(p.ty);
    }
    for (_, a) in k.arrays.iter() {
        f.note_scalar(a.elem);
        if matches!(a.elem, Scalar::U8 | Scalar::Bool) {
            f.storage_buffer_8bit = true;
        }
    }
    for l in &k.levels {
        f.note_scalar(l.ty);
    }
    for func in std::iter::once(&k.entry).chain(k.functions.iter().map(|(_, f)| f)) {
        for t in &func.types {
            f.note_scalar(*t);
        }
        for (_, l) in func.locals.iter() {
            f.note_scalar(l.ty);
        }
        if let Some(r) = func.ret {
            f.note_scalar(r);
        }
        for (_, e) in func.exprs.iter() {
            if let Expr::Atomic { array, .. } = e {
                if k.arrays[*array].elem == Scalar::I64 {
                    f.int64_atomics = true;
                }
            }
        }
    }
    f
}

/// A constant `vector_length`/`num_workers` argument, by the checker's rule
/// (`lang::check::size_error`).
fn size(n: Option<i128>, clause: &str, span: Span) -> Result<u32, Diag> {
    let Some(n) = n else {
        return Err(internal(span, "a size that is not an integer"));
    };
    match lang::check::size_error(clause, n, span) {
        Some(d) => Err(d),
        None => Ok(n as u32),
    }
}

fn internal(span: Span, what: &str) -> Diag {
    Diag::error(
        "accl::compile::internal",
        format!("internal compiler error: {what}"),
        span,
        "while compiling this",
    )
}

fn scalar_of(t: Type, span: Span) -> Result<Scalar, Diag> {
    match t.defaulted() {
        Type::Scalar(s) => Ok(s),
        t => Err(internal(span, &format!("expected a scalar, found `{t}`"))),
    }
}

#[derive(Debug, Clone, Copy)]
enum Binding {
    Local(LocalH),
    Param(u32),
    Array(ArrayH),
}

/// Shared state of one kernel's lowering.
struct Lowerer<'a> {
    program: &'a hir::Program,
    builtins: &'a Builtins,
    arrays: Arena<ArrayParam>,
    functions: Arena<Function>,
    fn_cache: HashMap<(FnH, Vec<ArrayH>), FuncH>,
    /// Whether a lowered function writes memory (stores or atomics).
    fn_effects: HashMap<FuncH, bool>,
    params: Vec<ScalarParam>,
    shape: Shape,
    /// A region of one gang (no `num_gangs`, or `num_gangs(1)`): a `loop
    /// gang` in it spreads over that gang's lanes only, so a reduction on
    /// it folds as a vector loop's does.
    one_gang: bool,
    /// The construct's own reductions: a `loop gang` reduction into one of
    /// them (same operator) folds each gang's lanes into the gang's copy,
    /// and the construct combines the gangs' copies at the end.
    construct_reductions: Vec<(hir::LocalH, hir::ReductionOp)>,
    /// What the compiler chose where OpenACC lets it ([`Kernel::choices`]).
    choices: Vec<(Span, String)>,
    /// [`Kernel::private_copies`].
    private_copies: Vec<PrivateCopies>,
}

/// One function being lowered: its HIR source and its KIR output.
struct Fx<'a> {
    src: &'a hir::Body,
    out: Function,
    map: HashMap<hir::LocalH, Binding>,
    /// Sequential loops around the current statement (0: the kernel level).
    loop_depth: u32,
    /// Gang-redundant code (a gang's statements outside `loop vector`):
    /// every invocation computes the same scalars; stores and atomics are
    /// done by invocation 0, followed by a barrier.
    redundant: bool,
    /// Inside a `loop vector` body: the locals private to its iterations
    /// (any other local may not be assigned there).
    vector_locals: Option<Vec<LocalH>>,
    /// Inside a `loop vector` (or a `loop` of no level spread as one), not
    /// a `loop gang` spread over the lanes: OpenACC allows no gang, worker
    /// or vector loop in it.
    in_vector: bool,
    /// Lowering a simple statement (`let`, `=`, a call): a `routine`
    /// function called in it is inlined into [`Fx::pending`].
    inline_ok: bool,
    /// Statements of inlined routines, to run before the current statement.
    pending: Block,
    /// The body of an inlined routine: a `return` may only end it.
    inlined: bool,
}

impl<'a> Fx<'a> {
    fn new(name: String, src: &'a hir::Body) -> Fx<'a> {
        Fx {
            src,
            out: Function {
                name,
                ..Function::default()
            },
            map: HashMap::new(),
            loop_depth: 0,
            redundant: false,
            vector_locals: None,
            in_vector: false,
            inline_ok: false,
            pending: Vec::new(),
            inlined: false,
        }
    }
    fn local(&mut self, name: &str, ty: Scalar, span: Span) -> LocalH {
        let l = self.out.locals.append(
            Local {
                name: name.to_string(),
                ty,
            },
            span,
        );
        if let Some(v) = &mut self.vector_locals {
            v.push(l);
        }
        l
    }
    fn stmt(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }
    fn konst(&mut self, v: Value, span: Span) -> ExprH {
        let Type::Scalar(t) = v.ty() else {
            unreachable!("konst takes typed values")
        };
        self.out.add_expr(Expr::Const(v), t, span)
    }
}

pub(crate) fn op_is_compare(op: hir::BinOp) -> bool {
    use hir::BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge)
}
