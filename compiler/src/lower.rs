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
//! ([`identity`], [`combine`], copied from `src/interp/construct.rs`).
//!
//! Still refused with `accl::compile::unsupported`, naming the feature and
//! pointing at it: a non-`seq` `loop` nested in `loop vector`, `loop gang`
//! inside `parallel loop`, a reduction on `loop gang` in a region, a
//! `loop` reduction into a host variable the construct does not reduce,
//! atomic captures used as values in gang-redundant code, and what the
//! back end never did (strings, whole-array values, `break` out of an
//! iteration).

use crate::autovec::LoopNote;
use crate::kir::*;
use crate::unsupported;
use lang::arena::Arena;
use lang::hir::{self, DirectiveKind, FnH};
use lang::value::identity;
use lang::{Builtins, Diag, Effect, Scalar, Span, Type, Value};
use std::collections::HashMap;

/// Lower one `parallel loop` construct of `body` (the body it appears in:
/// `program.main` or a function's body) to a kernel.
pub fn lower(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
) -> Result<Kernel, Diag> {
    match lower_mapped(program, body, construct, builtins, true) {
        // A body the gang shape refuses (a value only lane 0 computes,
        // used outside the vector loop) runs as written.
        Err(_) if mapped_loops(program, body, construct, builtins).0.is_some() => {
            let mut k = lower_mapped(program, body, construct, builtins, false)?;
            k.notes = mapped_loops(program, body, construct, builtins)
                .1
                .into_iter()
                .map(|n| LoopNote {
                    vector: None,
                    reason: "its gang-redundant code uses a value only one lane computes".into(),
                    ..n
                })
                .collect();
            Ok(k)
        }
        r => r,
    }
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
    crate::autovec::independent_nest(program, body, loops, block, builtins)
        .err()
        .map(|why| LoopNote {
            span: loops[0].span,
            vector: None,
            reason: format!("`auto`: in order on one lane, since {why}"),
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
    if has_inner_loops(block) || auto_refused(program, body, construct, builtins).is_some() {
        return (None, Vec::new());
    }
    let (l, b) = crate::collapse::levels(program, body, construct, loops, block, builtins);
    if l.len() != loops.len() {
        return (None, Vec::new()); // collapsed instead
    }
    crate::autovec::vectorise(program, body, construct, loops, b, builtins)
}

fn lower_mapped(
    program: &hir::Program,
    body: &hir::Body,
    construct: &hir::Construct,
    builtins: &Builtins,
    map_loops: bool,
) -> Result<Kernel, Diag> {
    let c = &construct.clauses;
    let auto;
    let (mapped, mut notes) = if map_loops {
        mapped_loops(program, body, construct, builtins)
    } else {
        (None, Vec::new())
    };
    let refused = auto_refused(program, body, construct, builtins);
    let (shape, loops, block): (Shape, &[hir::LoopHeader], &hir::Block) =
        match (construct.kind, &construct.body) {
            (DirectiveKind::ParallelLoop, hir::ConstructBody::Loops { loops, .. })
                if mapped.is_some() =>
            {
                let Some(b) = &mapped else {
                    unreachable!("checked by the guard")
                };
                (Shape::Gang, loops, b)
            }
            (DirectiveKind::ParallelLoop, hir::ConstructBody::Loops { loops, body: block }) => {
                let shape = if has_inner_loops(block) {
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
    for v in &c.firstprivate {
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
        });
        reduction_locals.push(l);
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
        levels.push(LoopLevel {
            var,
            ty,
            lo: h.lo,
            hi: h.hi,
            inclusive: h.inclusive,
            span: h.span,
        });
    }

    // private: a fresh zero per iteration (per gang in a region);
    // firstprivate: a per-iteration copy.
    let mut prologue = Vec::new();
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

    fx.redundant = matches!(shape, Shape::Gang | Shape::Region);
    let mut stmts = lw.block(&mut fx, block)?;
    prologue.append(&mut stmts);
    fx.out.body = prologue;
    let entry = fx.out;

    let (vector_length, vector_length_expr) = match c.vector_length {
        None => (None, None),
        Some(e) => match &body.exprs[e] {
            hir::Expr::Const(v) => match v.as_i128() {
                Some(n) if (1..=1024).contains(&n) => (Some(n as u32), None),
                _ => {
                    return Err(Diag::error(
                        "accl::compile::vector_length",
                        format!("`vector_length({v})` must be between 1 and 1024"),
                        body.span(e),
                        "out of range",
                    ))
                }
            },
            _ => (None, Some(e)),
        },
    };

    // A run-time `num_workers(e)` is evaluated by the host (for its
    // effects) and otherwise left to the device's default.
    let num_workers = match c.num_workers.map(|e| (e, &body.exprs[e])) {
        Some((e, hir::Expr::Const(v))) => match v.as_i128() {
            Some(n) if (1..=1024).contains(&n) => Some(n as u32),
            _ => {
                return Err(Diag::error(
                    "accl::compile::num_workers",
                    format!("`num_workers({v})` must be between 1 and 1024"),
                    body.span(e),
                    "out of range",
                ))
            }
        },
        _ => None,
    };

    // Mapped loops get a subgroup-sized vector by default.
    let vector_length = match (&mapped, vector_length, &vector_length_expr) {
        (Some(_), None, None) => Some(crate::autovec::DEFAULT_VECTOR),
        _ => vector_length,
    };
    // `tile(a, b)` on a flat nest: workgroups of a x b tiles; `tile(a)`:
    // workgroups of a lanes.
    let (tile, vector_length) = match (shape, c.tile.as_slice(), levels.len()) {
        (Shape::Flat, &[a, b], 2) => (Some((a, b)), None),
        (Shape::Flat, &[a], _) => (None, vector_length.or(Some(a))),
        _ => (None, vector_length),
    };
    let mut kernel = Kernel {
        name: format!("kernel_{}", construct.id),
        id: construct.id,
        span: construct.span,
        params: lw.params,
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
        notes,
    };
    kernel.features = features_of(&kernel);
    kernel.private_atomics = crate::spirv::private_atomics(&kernel);
    Ok(kernel)
}

/// Does a `parallel loop` body hold a `loop` that is not `seq` (so each
/// iteration is a gang, with that loop spread over its invocations)?
fn has_inner_loops(b: &hir::Block) -> bool {
    b.iter().any(|s| match &s.kind {
        hir::StmtKind::Construct(c) => c.kind == DirectiveKind::Loop && !c.clauses.seq,
        hir::StmtKind::If { then, els, .. } => has_inner_loops(then) || has_inner_loops(els),
        hir::StmtKind::While { body, .. } | hir::StmtKind::Block(body) => has_inner_loops(body),
        hir::StmtKind::For(f) => has_inner_loops(&f.body),
        _ => false,
    })
}

/// The operator/type pairs the checker accepts (`lang::check::construct`).
pub fn reduction_legal(op: ReductionOp, t: Scalar) -> bool {
    use ReductionOp as O;
    match op {
        O::Add | O::Mul | O::Max | O::Min => t.is_numeric(),
        O::BitAnd | O::BitOr | O::BitXor => t.is_int(),
        O::And | O::Or => t == Scalar::Bool,
    }
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

impl Lowerer<'_> {
    fn block(&mut self, fx: &mut Fx, b: &hir::Block) -> Result<Block, Diag> {
        let mut out = Vec::new();
        for s in b {
            self.stmt(fx, s, &mut out)?;
        }
        Ok(out)
    }

    fn array_of(&self, fx: &Fx, e: hir::ExprH) -> Result<ArrayH, Diag> {
        match &fx.src.exprs[e] {
            hir::Expr::Local(l) => match fx.map.get(l) {
                Some(Binding::Array(a)) => Ok(*a),
                _ => Err(internal(fx.src.span(e), "an array that is not captured")),
            },
            _ => Err(unsupported(
                fx.src.span(e),
                "array values other than variables in device code",
            )),
        }
    }

    fn stmt(&mut self, fx: &mut Fx, s: &hir::Stmt, out: &mut Block) -> Result<(), Diag> {
        if !fx.redundant {
            return self.stmt_inner(fx, s, out);
        }
        // Gang-redundant code: lower, then make every effect vector-single.
        let mut mine = Vec::new();
        self.stmt_inner(fx, s, &mut mine)?;
        for st in mine {
            let effect = match &st.kind {
                StmtKind::StoreElem { index, value, .. } => {
                    self.refuse_effects(fx, index.iter().chain([value]), st.span)?;
                    true
                }
                StmtKind::Eval(e) => self.has_effects(&fx.out, *e),
                StmtKind::Store { value, .. } => {
                    self.refuse_effects(fx, [value], st.span)?;
                    false
                }
                StmtKind::If { cond, .. } => {
                    self.refuse_effects(fx, [cond], st.span)?;
                    false
                }
                _ => false,
            };
            if effect {
                let span = st.span;
                let lid = fx.out.add_expr(Expr::InvocationIndex, Scalar::U32, span);
                let zero = fx.konst(Value::U32(0), span);
                let is0 = fx
                    .out
                    .add_expr(Expr::Binary(BinOp::Eq, lid, zero), Scalar::Bool, span);
                out.push(Fx::stmt(
                    StmtKind::If {
                        cond: is0,
                        then: vec![st],
                        els: vec![],
                    },
                    span,
                ));
                out.push(Fx::stmt(StmtKind::Barrier, span));
            } else {
                out.push(st);
            }
        }
        Ok(())
    }

    /// Gang-redundant code cannot use a value that only invocation 0 computes.
    fn refuse_effects<'e>(
        &self,
        fx: &Fx,
        es: impl IntoIterator<Item = &'e ExprH>,
        span: Span,
    ) -> Result<(), Diag> {
        for &e in es {
            if self.has_effects(&fx.out, e) {
                return Err(unsupported(
                    span,
                    "an atomic capture or a call of a function that writes arrays, used as a value outside `loop vector` in a gang",
                )
                .with_help("move it into a `loop vector`, or make it a statement of its own"));
            }
        }
        Ok(())
    }

    /// Does evaluating `e` write memory (an atomic, or a call of a function that does)?
    fn has_effects(&self, f: &Function, e: ExprH) -> bool {
        match &f.exprs[e] {
            Expr::Atomic { .. } => true,
            Expr::Call(g, args) => {
                self.fn_effects.get(g).copied().unwrap_or(true)
                    || args.iter().any(|&a| self.has_effects(f, a))
            }
            Expr::Load { index, .. } => index.iter().any(|&a| self.has_effects(f, a)),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.has_effects(f, *a),
            Expr::Binary(_, a, b) | Expr::Reduce(_, a, b) => {
                self.has_effects(f, *a) || self.has_effects(f, *b)
            }
            Expr::Math(_, args) => args.iter().any(|&a| self.has_effects(f, a)),
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::InvocationIndex => false,
        }
    }

    fn stmt_inner(&mut self, fx: &mut Fx, s: &hir::Stmt, out: &mut Block) -> Result<(), Diag> {
        use hir::StmtKind as K;
        let span = s.span;
        match &s.kind {
            K::Let { local, init } => {
                let l = &fx.src.locals[*local];
                if let Type::Array(..) = l.ty {
                    // `let B = A;` aliases.
                    let a = self.array_of(fx, *init)?;
                    fx.map.insert(*local, Binding::Array(a));
                    return Ok(());
                }
                let ty = scalar_of(l.ty, span)?;
                let name = l.name.clone();
                let value = self.expr(fx, *init)?;
                let kl = fx.local(&name, ty, span);
                fx.map.insert(*local, Binding::Local(kl));
                out.push(Fx::stmt(StmtKind::Store { local: kl, value }, span));
            }
            K::Assign { place, op, value } => match place {
                hir::Place::Local(l) => {
                    let kl = match fx.map.get(l) {
                        Some(Binding::Local(kl))
                            if fx.vector_locals.as_ref().is_some_and(|v| !v.contains(kl)) =>
                        {
                            let name = &fx.src.locals[*l].name;
                            return Err(Diag::error(
                                "accl::compile::assign_gang_variable",
                                format!("`{name}` belongs to the gang and cannot be assigned in a `loop vector` iteration"),
                                span,
                                "assigned here",
                            )
                            .with_help(format!("use `reduction(..: {name})` on the `loop`, or declare `{name}` inside the loop")));
                        }
                        Some(Binding::Local(kl)) => *kl,
                        Some(Binding::Array(_)) => {
                            return Err(unsupported(span, "assigning whole arrays in device code"))
                        }
                        _ => {
                            let name = &fx.src.locals[*l].name;
                            return Err(Diag::error(
                                "accl::compile::assign_captured",
                                format!("`{name}` is captured by value and cannot be assigned in the kernel"),
                                span,
                                "assigned here",
                            )
                            .with_help(format!("use `reduction(..: {name})`, or declare `{name}` inside the loop")));
                        }
                    };
                    let mut v = self.expr(fx, *value)?;
                    if let Some(op) = op {
                        let ty = fx.out.locals[kl].ty;
                        let cur = fx.out.add_expr(Expr::Local(kl), ty, span);
                        let rty = if op_is_compare(*op) { Scalar::Bool } else { ty };
                        v = fx.out.add_expr(Expr::Binary(*op, cur, v), rty, span);
                    }
                    out.push(Fx::stmt(
                        StmtKind::Store {
                            local: kl,
                            value: v,
                        },
                        span,
                    ));
                }
                hir::Place::Element { array, indices } => {
                    let a = self.array_of(fx, *array)?;
                    let mut index = Vec::new();
                    for &i in indices {
                        index.push(self.expr(fx, i)?);
                    }
                    let mut v = self.expr(fx, *value)?;
                    if let Some(op) = op {
                        // Evaluate each index once: `a[f(i)] += v`.
                        let mut temps = Vec::new();
                        for e in index.drain(..) {
                            let ty = fx.out.ty(e);
                            let t = fx.local("index", ty, span);
                            out.push(Fx::stmt(StmtKind::Store { local: t, value: e }, span));
                            temps.push(t);
                        }
                        let mk = |fx: &mut Fx| -> Vec<ExprH> {
                            temps
                                .iter()
                                .map(|&t| {
                                    let ty = fx.out.locals[t].ty;
                                    fx.out.add_expr(Expr::Local(t), ty, span)
                                })
                                .collect()
                        };
                        let elem = self.arrays[a].elem;
                        let i1 = mk(fx);
                        let cur = fx.out.add_expr(
                            Expr::Load {
                                array: a,
                                index: i1,
                            },
                            elem,
                            span,
                        );
                        v = fx.out.add_expr(Expr::Binary(*op, cur, v), elem, span);
                        index = mk(fx);
                    }
                    out.push(Fx::stmt(
                        StmtKind::StoreElem {
                            array: a,
                            index,
                            value: v,
                        },
                        span,
                    ));
                }
            },
            K::Expr(e) => {
                let e = self.expr(fx, *e)?;
                out.push(Fx::stmt(StmtKind::Eval(e), span));
            }
            K::If { cond, then, els } => {
                let cond = self.expr(fx, *cond)?;
                let then = self.block(fx, then)?;
                let els = self.block(fx, els)?;
                out.push(Fx::stmt(StmtKind::If { cond, then, els }, span));
            }
            K::While { cond, body } => {
                fx.loop_depth += 1;
                let c = self.expr(fx, *cond)?;
                let nc = fx
                    .out
                    .add_expr(Expr::Unary(hir::UnOp::Not, c), Scalar::Bool, span);
                let mut b = vec![Fx::stmt(
                    StmtKind::If {
                        cond: nc,
                        then: vec![Fx::stmt(StmtKind::Break, span)],
                        els: vec![],
                    },
                    span,
                )];
                b.extend(self.block(fx, body)?);
                fx.loop_depth -= 1;
                out.push(Fx::stmt(
                    StmtKind::Loop {
                        body: b,
                        continuing: vec![],
                    },
                    span,
                ));
            }
            K::For(f) => self.for_loop(fx, f, span, out)?,
            K::Break => {
                if fx.loop_depth == 0 {
                    return Err(unsupported(
                        span,
                        "`break` out of a parallel loop's iteration",
                    ));
                }
                out.push(Fx::stmt(StmtKind::Break, span));
            }
            K::Continue => out.push(Fx::stmt(StmtKind::Continue, span)),
            K::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.expr(fx, *e)?),
                    None => None,
                };
                out.push(Fx::stmt(StmtKind::Return(v), span));
            }
            K::Block(b) => out.extend(self.block(fx, b)?),
            K::Construct(c) if c.kind == DirectiveKind::Loop => self.inner_loop(fx, c, out)?,
            K::Construct(c) => {
                return Err(unsupported(
                    c.kind_span,
                    "device constructs nested inside a kernel",
                ));
            }
            K::Cache { array, lo, count } => {
                if let Some(Binding::Array(a)) = fx.map.get(array).copied() {
                    let lo = self.expr(fx, *lo)?;
                    out.push(Fx::stmt(
                        StmtKind::Cache {
                            array: a,
                            lo,
                            count: *count,
                        },
                        span,
                    ));
                }
            }
            K::Atomic { place, op, value } => {
                let hir::Place::Element { array, indices } = place else {
                    return Err(unsupported(span, "`atomic` on a scalar variable"));
                };
                let kind = match op {
                    hir::AtomicOp::Add => AtomicKind::Add,
                    hir::AtomicOp::Sub => AtomicKind::Sub,
                    hir::AtomicOp::Mul => AtomicKind::Mul,
                    hir::AtomicOp::Max => AtomicKind::Max,
                    hir::AtomicOp::Min => AtomicKind::Min,
                    hir::AtomicOp::And => AtomicKind::And,
                    hir::AtomicOp::Or => AtomicKind::Or,
                    hir::AtomicOp::Xor => AtomicKind::Xor,
                };
                let e = self.atomic(fx, *array, indices, kind, *value, span)?;
                out.push(Fx::stmt(StmtKind::Eval(e), span));
            }
        }
        Ok(())
    }

    /// `for v in lo..hi { body }` as
    /// `v = lo; end = hi; loop { if !(v < end) break; body; continuing: v += 1 }`
    /// (`..=`: a `more` flag, so that `hi == MAX` does not overflow).
    fn for_loop(
        &mut self,
        fx: &mut Fx,
        f: &hir::ForLoop,
        span: Span,
        out: &mut Block,
    ) -> Result<(), Diag> {
        let h = &f.header;
        let ty = scalar_of(fx.src.locals[h.var].ty, h.span)?;
        let name = fx.src.locals[h.var].name.clone();
        let lo = self.expr(fx, h.lo)?;
        let hi = self.expr(fx, h.hi)?;
        let v = fx.local(&name, ty, h.span);
        let end = fx.local("end", ty, h.span);
        fx.map.insert(h.var, Binding::Local(v));
        out.push(Fx::stmt(
            StmtKind::Store {
                local: v,
                value: lo,
            },
            span,
        ));
        out.push(Fx::stmt(
            StmtKind::Store {
                local: end,
                value: hi,
            },
            span,
        ));
        let load = |fx: &mut Fx, l: LocalH| fx.out.add_expr(Expr::Local(l), ty, span);
        let one = match Value::IntLit(1).concretize(ty) {
            Some(one) => one,
            None => return Err(internal(span, "a loop variable that is not an integer")),
        };
        let mut continuing = Vec::new();
        let cond = if h.inclusive {
            let more = fx.local("more", Scalar::Bool, h.span);
            let (a, b) = (load(fx, v), load(fx, end));
            let init = fx
                .out
                .add_expr(Expr::Binary(hir::BinOp::Le, a, b), Scalar::Bool, span);
            out.push(Fx::stmt(
                StmtKind::Store {
                    local: more,
                    value: init,
                },
                span,
            ));
            let (a, b) = (load(fx, v), load(fx, end));
            let ne = fx
                .out
                .add_expr(Expr::Binary(hir::BinOp::Ne, a, b), Scalar::Bool, span);
            continuing.push(Fx::stmt(
                StmtKind::Store {
                    local: more,
                    value: ne,
                },
                span,
            ));
            fx.out.add_expr(Expr::Local(more), Scalar::Bool, span)
        } else {
            let (a, b) = (load(fx, v), load(fx, end));
            fx.out
                .add_expr(Expr::Binary(hir::BinOp::Lt, a, b), Scalar::Bool, span)
        };
        let a = load(fx, v);
        let c1 = fx.konst(one, span);
        let inc = fx
            .out
            .add_expr(Expr::Binary(hir::BinOp::Add, a, c1), ty, span);
        continuing.push(Fx::stmt(
            StmtKind::Store {
                local: v,
                value: inc,
            },
            span,
        ));
        let nc = fx
            .out
            .add_expr(Expr::Unary(hir::UnOp::Not, cond), Scalar::Bool, span);
        let mut body = vec![Fx::stmt(
            StmtKind::If {
                cond: nc,
                then: vec![Fx::stmt(StmtKind::Break, span)],
                els: vec![],
            },
            span,
        )];
        fx.loop_depth += 1;
        body.extend(self.block(fx, &f.body)?);
        fx.loop_depth -= 1;
        out.push(Fx::stmt(StmtKind::Loop { body, continuing }, span));
        Ok(())
    }

    /// Lower an expression (a call without a result is typed `bool`; only
    /// `StmtKind::Eval` holds one, which the checker ensures).
    fn expr(&mut self, fx: &mut Fx, e: hir::ExprH) -> Result<ExprH, Diag> {
        use hir::Expr as E;
        let span = fx.src.span(e);
        let hty = fx.src.ty(e);
        let out = match &fx.src.exprs[e] {
            E::Const(v) => {
                let t = scalar_of(hty, span).or_else(|_| scalar_of(v.ty(), span))?;
                let v = v.concretize(t).unwrap_or_else(|| v.cast(t));
                fx.out.add_expr(Expr::Const(v), t, span)
            }
            E::Local(l) => match fx.map.get(l).copied() {
                Some(Binding::Local(kl)) => {
                    let t = fx.out.locals[kl].ty;
                    fx.out.add_expr(Expr::Local(kl), t, span)
                }
                Some(Binding::Param(i)) => {
                    let t = self.params[i as usize].ty;
                    fx.out.add_expr(Expr::Param(i), t, span)
                }
                Some(Binding::Array(_)) => {
                    return Err(unsupported(span, "arrays as values in device code"));
                }
                None => {
                    return Err(internal(
                        span,
                        &format!("unbound variable `{}`", fx.src.locals[*l].name),
                    ))
                }
            },
            E::Unary(op, a) => {
                let a = self.expr(fx, *a)?;
                let t = fx.out.ty(a);
                fx.out.add_expr(Expr::Unary(*op, a), t, span)
            }
            E::Binary(op, a, b) => {
                let a = self.expr(fx, *a)?;
                let b = self.expr(fx, *b)?;
                let t = if op_is_compare(*op) {
                    Scalar::Bool
                } else {
                    fx.out.ty(a)
                };
                fx.out.add_expr(Expr::Binary(*op, a, b), t, span)
            }
            E::Cast(a, t) => {
                let a = self.expr(fx, *a)?;
                fx.out.add_expr(Expr::Cast(a, *t), *t, span)
            }
            E::Index(arr, idx) => {
                let a = self.array_of(fx, *arr)?;
                let mut index = Vec::new();
                for &i in idx {
                    index.push(self.expr(fx, i)?);
                }
                let t = self.arrays[a].elem;
                fx.out.add_expr(Expr::Load { array: a, index }, t, span)
            }
            E::Call(f, args) => {
                let func = &self.program.functions[*f];
                if let Err((bad, why)) = &func.device {
                    return Err(Diag::error(
                        "accl::compile::not_device_function",
                        format!("`{}` cannot run on the device: {why}", func.name),
                        span,
                        "called in a kernel",
                    )
                    .with_label(*bad, "because of this"));
                }
                let mut scalars = Vec::new();
                let mut arrays = Vec::new();
                for (&a, &p) in args.iter().zip(&func.params) {
                    if func.body.locals[p].ty.is_array() {
                        arrays.push(self.array_of(fx, a)?);
                    } else {
                        scalars.push(self.expr(fx, a)?);
                    }
                }
                let h = self.function(*f, arrays, span)?;
                let ret = self.functions[h].ret;
                let call = Expr::Call(h, scalars);
                // A call without a result is typed `bool` and never read
                // (only `StmtKind::Eval` holds one).
                fx.out.add_expr(call, ret.unwrap_or(Scalar::Bool), span)
            }
            E::Builtin(id, args) => {
                let b = self.builtins.get(*id);
                if b.effect == Effect::Atomic {
                    let kind = match b.name.as_str() {
                        "atomic_add" => AtomicKind::Add,
                        "atomic_min" => AtomicKind::Min,
                        "atomic_max" => AtomicKind::Max,
                        "atomic_xchg" => AtomicKind::Xchg,
                        "atomic_read" => AtomicKind::Read,
                        "atomic_write" => AtomicKind::Write,
                        _ => return Err(unsupported(span, &format!("atomics (`{}`)", b.name))),
                    };
                    // `atomic_read` has no value: the element stands in.
                    let (Some(&place), Some(&value)) = (args.first(), args.get(1).or(args.first()))
                    else {
                        return Err(internal(span, "an atomic builtin without arguments"));
                    };
                    let hir::Expr::Index(array, indices) = &fx.src.exprs[place] else {
                        return Err(unsupported(
                            fx.src.span(place),
                            "an atomic whose first argument is not an array element",
                        ));
                    };
                    let (array, indices) = (*array, indices.clone());
                    return self.atomic(fx, array, &indices, kind, value, span);
                }
                let Some(m) = MathFn::from_name(&b.name).filter(|_| b.effect == Effect::Pure)
                else {
                    return Err(unsupported(
                        span,
                        &format!("the builtin `{}` in device code", b.name),
                    ));
                };
                let t = scalar_of(hty, span)?;
                let mut xs = Vec::new();
                for &a in args {
                    xs.push(self.expr(fx, a)?);
                }
                if xs.len() != m.arity() || !(t.is_float() || m.integer_ok() && t.is_int()) {
                    return Err(unsupported(
                        span,
                        &format!("`{}` on `{t}` in device code", b.name),
                    ));
                }
                fx.out.add_expr(Expr::Math(m, xs), t, span)
            }
            E::Str(_) | E::TypeArg(_) => {
                return Err(unsupported(
                    span,
                    "strings and type arguments in device code",
                ));
            }
        };
        Ok(out)
    }

    /// `array[indices] op= value` atomically; the expression is the old value.
    fn atomic(
        &mut self,
        fx: &mut Fx,
        array: hir::ExprH,
        indices: &[hir::ExprH],
        op: AtomicKind,
        value: hir::ExprH,
        span: Span,
    ) -> Result<ExprH, Diag> {
        let a = self.array_of(fx, array)?;
        let mut index = Vec::new();
        for &i in indices {
            index.push(self.expr(fx, i)?);
        }
        let elem = self.arrays[a].elem;
        let value = if op == AtomicKind::Read {
            fx.konst(Value::IntLit(0).cast(elem), span)
        } else {
            self.expr(fx, value)?
        };
        let ok_type = matches!(
            elem,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        );
        let bitwise = matches!(op, AtomicKind::And | AtomicKind::Or | AtomicKind::Xor);
        if !ok_type || (bitwise && !elem.is_int()) || fx.out.ty(value) != elem {
            return Err(unsupported(
                span,
                &format!("this atomic on `{elem}` elements"),
            ));
        }
        self.arrays[a].read = true;
        if op != AtomicKind::Read {
            self.arrays[a].written = true;
        }
        Ok(fx.out.add_expr(
            Expr::Atomic {
                array: a,
                index,
                op,
                value,
            },
            elem,
            span,
        ))
    }

    /// A `loop` construct inside a kernel: `seq` runs it in order (every
    /// invocation that reaches it); otherwise, in gang-redundant code, a
    /// [`VectorLoop`] spread over the workgroup.
    fn inner_loop(&mut self, fx: &mut Fx, c: &hir::Construct, out: &mut Block) -> Result<(), Diag> {
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

        let in_order = cl.seq
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
                        "a `loop` nested inside `loop vector` (only `loop seq` can be)"
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
            if gangs && !cl.reductions.is_empty() {
                return Err(unsupported(
                    c.kind_span,
                    "a reduction on `loop gang` inside `parallel { .. }` (it would combine across gangs)",
                )
                .with_help("put the reduction on the `parallel` construct, or use `loop vector`"));
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
            let r = self.block(fx, body);
            fx.redundant = was_redundant;
            fx.vector_locals = was_vector;
            fx.loop_depth = was_depth;
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

    /// The KIR function for `f` called with these array bindings (lowered once).
    fn function(&mut self, f: FnH, arrays: Vec<ArrayH>, span: Span) -> Result<FuncH, Diag> {
        let key = (f, arrays);
        if let Some(&h) = self.fn_cache.get(&key) {
            return Ok(h);
        }
        let program = self.program;
        let func = &program.functions[f];
        let name = if key.1.is_empty() {
            func.name.clone()
        } else {
            let names: Vec<&str> = key
                .1
                .iter()
                .map(|a| self.arrays[*a].name.as_str())
                .collect();
            format!("{}<{}>", func.name, names.join(","))
        };
        let mut fx = Fx::new(name, &func.body);
        fx.loop_depth = 1; // `break` cannot escape a function: the checker ensures it.
        let mut arrays = key.1.iter();
        for &p in &func.params {
            let l = &func.body.locals[p];
            if l.ty.is_array() {
                let Some(&a) = arrays.next() else {
                    return Err(internal(span, "array argument count"));
                };
                if let Type::Array(e, r) = l.ty {
                    let ap = &self.arrays[a];
                    if (ap.elem, ap.rank) != (e, r) {
                        return Err(internal(span, "array argument of another type"));
                    }
                }
                fx.map.insert(p, Binding::Array(a));
            } else {
                let ty = scalar_of(l.ty, func.span)?;
                let kl = fx.local(&l.name, ty, func.span);
                fx.out.args.push(kl);
                fx.map.insert(p, Binding::Local(kl));
            }
        }
        fx.out.ret = match func.ret {
            Type::Unit => None,
            t => Some(scalar_of(t, func.span)?),
        };
        let body = self.block(&mut fx, &func.body.block)?;
        fx.out.body = body;
        let writes = writes_memory(&fx.out.body)
            || (0..fx.out.exprs.len())
                .any(|i| self.has_effects(&fx.out, lang::arena::Handle::new(i)));
        let h = self.functions.append(fx.out, func.span);
        self.fn_cache.insert(key, h);
        self.fn_effects.insert(h, writes);
        Ok(h)
    }
}

/// Does a block store to an array?
fn writes_memory(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::StoreElem { .. } => true,
        StmtKind::If { then, els, .. } => writes_memory(then) || writes_memory(els),
        StmtKind::Loop { body, continuing } => writes_memory(body) || writes_memory(continuing),
        StmtKind::VectorLoop(v) => writes_memory(&v.body),
        _ => false,
    })
}

pub(crate) fn op_is_compare(op: hir::BinOp) -> bool {
    use hir::BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge)
}
