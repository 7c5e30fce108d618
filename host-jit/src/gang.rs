//! Compute constructs' loops for the host reference backend: the loop nest
//! of a `parallel loop` (or a `loop` inside a region) compiled into one
//! native function over a range of its outermost (gang) loop, so the
//! interpreter keeps the data clauses, present checks, race checks and
//! reductions of the construct and only the turns change executor.
//!
//! The turns run as the interpreter's construct nest runs them: every
//! bound evaluated before the first turn (the interpreter passes them in),
//! one operation counted per turn of the innermost level only, `break`
//! leaving the innermost level. Whether the gang loop's iterations may run
//! on several threads at once is a separate proof ([`parallel_why`]).

use crate::par::refused;
use crate::plan::{no, Mode, Planner, Why};
use lang::hir::{
    Body, Construct, ConstructBody, DirectiveKind as DK, Expr, ExprH, ForLoop, LocalH, Place, Stmt,
    StmtKind,
};
use lang::Type;

/// A compiled construct's entry: the frame's scalar slots (read at the
/// start, written back at every exit), its arrays' descriptors, the
/// runtime block and each level's first and last counter value (`2 *
/// levels` of them, outermost first; the caller runs none of an empty
/// range).
pub type GangEntry = unsafe extern "C" fn(
    slots: *mut u64,
    arrays: *const crate::runtime::ArrDesc,
    rt: *mut crate::runtime::Rt,
    bounds: *const i64,
) -> u32;

/// Push the constructs of `b` whose loop nest could compile: `parallel
/// loop`s and `loop`s, at any depth (inside loops, data regions and
/// compute regions).
pub fn find<'p>(b: &'p [Stmt], out: &mut Vec<&'p Construct>) {
    for s in b {
        match &s.kind {
            StmtKind::Construct(c) => {
                match &c.body {
                    ConstructBody::Loops { body, .. } => {
                        if matches!(c.kind, DK::ParallelLoop | DK::Loop) {
                            out.push(c);
                        }
                        // A `loop` inside a gang loop that stays interpreted.
                        find(body, out);
                    }
                    ConstructBody::Block(b) => find(b, out),
                    ConstructBody::None => {}
                }
            }
            StmtKind::For(fl) => find(&fl.body, out),
            StmtKind::While { body, .. } => find(body, out),
            StmtKind::If { then, els, .. } => {
                find(then, out);
                find(els, out);
            }
            StmtKind::Block(b) => find(b, out),
            _ => {}
        }
    }
}

/// The loop nest of construct `c` as one `for` statement per level (the
/// code generator's and the walkers' view of it).
pub fn nest(c: &Construct) -> Option<Stmt> {
    let ConstructBody::Loops { loops, body } = &c.body else {
        return None;
    };
    let mut inner = body.clone();
    for h in loops.iter().rev() {
        inner = vec![Stmt {
            kind: StmtKind::For(ForLoop {
                header: h.clone(),
                body: inner,
            }),
            span: h.span,
        }];
    }
    inner.pop()
}

/// Whether construct `c`'s loop nest compiles: every level's counter an
/// integer and the body made only of what a compiled loop takes.
pub fn compile_why(p: &Planner, body: &Body, c: &Construct) -> Result<(), Why> {
    let ConstructBody::Loops { loops, body: b } = &c.body else {
        return no(c.span, "its body is not a loop nest");
    };
    for h in loops {
        if !matches!(
            body.locals[h.var].ty,
            Type::Scalar(
                lang::Scalar::I32 | lang::Scalar::I64 | lang::Scalar::U32 | lang::Scalar::U8
            )
        ) {
            return no(h.span, "its counter is not an integer");
        }
    }
    p.block_why(body, b, Mode::Loop)
}

/// Whether the gang loop's iterations of construct `c` can run on several
/// threads with the results of running them in order: no iteration writes
/// what another reads or writes. That holds when the body
/// - assigns no scalar declared outside it except reduction variables
///   (combined per chunk in order) and its own loop counters,
/// - uses no top-level variable and calls no function that does,
/// - and indexes every array it writes, at every access of that array, on
///   one fixed axis by the gang loop's counter alone (never assigned), so
///   distinct iterations touch disjoint elements.
pub fn parallel_why(p: &Planner, body: &Body, c: &Construct) -> Result<(), Why> {
    let (w, gang) = static_why(p, body, c)?;
    for &(a, span) in &w.written {
        let axes: Vec<Option<usize>> = w
            .accesses
            .iter()
            .filter(|(x, _)| *x == a)
            .map(|(_, ix)| {
                ix.iter()
                    .position(|&i| matches!(body.exprs[i], Expr::Local(l) if l == gang))
            })
            .collect();
        let fixed = axes.first().copied().flatten();
        if fixed.is_none() || axes.iter().any(|&k| k != fixed) {
            return no(
                span,
                format!(
                    "it writes `{}` at elements that the gang loop's counter alone does not pick",
                    body.locals[a].name
                ),
            );
        }
    }
    Ok(())
}

/// Where [`parallel_why`] fails only at how the arrays written are
/// indexed, the test that decides as the construct starts whether its
/// gang iterations touch apart elements all the same ([`crate::par`]:
/// flattened row-major indices, a field of several planes).
pub fn threads_test(p: &Planner, body: &Body, c: &Construct) -> Option<crate::par::ParTest> {
    static_why(p, body, c).ok()?;
    let StmtKind::For(fl) = nest(c)?.kind else {
        return None;
    };
    let cl = &c.clauses;
    let handled: Vec<LocalH> = cl
        .reductions
        .iter()
        .map(|r| r.var)
        .chain(cl.private.iter().chain(&cl.firstprivate).copied())
        .collect();
    crate::par::ParTest::of_nest(p, body, &fl, &handled).ok()
}

/// Everything [`parallel_why`] proves but how the arrays written are
/// indexed: the body's walk and the gang loop's counter.
fn static_why(p: &Planner, body: &Body, c: &Construct) -> Result<(Walk, LocalH), Why> {
    let ConstructBody::Loops { loops, body: b } = &c.body else {
        return refused(c.span, "its body is not a loop nest");
    };
    let gang = loops[0].var;
    let mut w = Walk::default();
    w.block(body, b);
    let own: Vec<LocalH> = loops.iter().map(|h| h.var).collect();
    if w.assigned.contains(&gang) {
        return refused(c.span, "it assigns the gang loop's counter");
    }
    let reductions: Vec<LocalH> = c.clauses.reductions.iter().map(|r| r.var).collect();
    for &(l, span) in &w.assigned_at {
        if !w.declared.contains(&l) && !own.contains(&l) && !reductions.contains(&l) {
            return refused(
                span,
                format!(
                    "it assigns `{}`, declared outside the loop, which the iterations share",
                    body.locals[l].name
                ),
            );
        }
    }
    if let Some(span) = w.global {
        return refused(span, "it uses a top-level variable");
    }
    for &(f, span) in &w.calls {
        let f = &p.prog.functions[f];
        if !f.globals.is_empty() {
            return refused(
                span,
                format!("it calls `{}`, which uses top-level variables", f.name),
            );
        }
    }
    Ok((w, gang))
}

/// What a body does, for [`parallel_why`].
#[derive(Default)]
struct Walk {
    declared: Vec<LocalH>,
    assigned: Vec<LocalH>,
    assigned_at: Vec<(LocalH, lang::Span)>,
    /// Every element access: the array and its indices.
    accesses: Vec<(LocalH, Vec<ExprH>)>,
    /// The arrays written, where first.
    written: Vec<(LocalH, lang::Span)>,
    global: Option<lang::Span>,
    calls: Vec<(lang::hir::FnH, lang::Span)>,
}

impl Walk {
    fn assign(&mut self, l: LocalH, span: lang::Span) {
        self.assigned.push(l);
        self.assigned_at.push((l, span));
    }

    fn block(&mut self, body: &Body, b: &[Stmt]) {
        for s in b {
            match &s.kind {
                StmtKind::Let { local, init } => {
                    self.declared.push(*local);
                    self.expr(body, *init);
                }
                StmtKind::LetTuple { locals, init } => {
                    self.declared.extend(locals.iter().flatten().copied());
                    self.expr(body, *init);
                }
                StmtKind::Assign { place, value, .. } => {
                    self.expr(body, *value);
                    match place {
                        Place::Local(l) => self.assign(*l, s.span),
                        Place::Global(_) => self.global = self.global.or(Some(s.span)),
                        Place::Element { array, indices } => {
                            indices.iter().for_each(|&i| self.expr(body, i));
                            if let Expr::Local(a) = body.exprs[*array] {
                                self.accesses.push((a, indices.clone()));
                                if !self.written.iter().any(|(x, _)| *x == a) {
                                    self.written.push((a, s.span));
                                }
                            }
                        }
                    }
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(body, *e),
                StmtKind::If { cond, then, els } => {
                    self.expr(body, *cond);
                    self.block(body, then);
                    self.block(body, els);
                }
                StmtKind::While { cond, body: w } => {
                    self.expr(body, *cond);
                    self.block(body, w);
                }
                StmtKind::For(fl) => {
                    self.declared.push(fl.header.var);
                    self.expr(body, fl.header.lo);
                    self.expr(body, fl.header.hi);
                    self.block(body, &fl.body);
                }
                StmtKind::Block(b) => self.block(body, b),
                _ => {}
            }
        }
    }

    fn expr(&mut self, body: &Body, e: ExprH) {
        match &body.exprs[e] {
            Expr::Global(_) => self.global = self.global.or(Some(body.span(e))),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.expr(body, *a),
            Expr::Binary(_, a, b) => {
                self.expr(body, *a);
                self.expr(body, *b);
            }
            Expr::Index(a, ix) => {
                ix.iter().for_each(|&i| self.expr(body, i));
                if let Expr::Local(a) = body.exprs[*a] {
                    self.accesses.push((a, ix.clone()));
                }
            }
            Expr::Call(f, args) => {
                self.calls.push((*f, body.span(e)));
                args.iter().for_each(|&a| self.expr(body, a));
            }
            Expr::Builtin(_, args) | Expr::Array(_, args) | Expr::Tuple(args) => {
                args.iter().for_each(|&a| self.expr(body, a));
            }
            _ => {}
        }
    }
}

impl crate::Builder<'_> {
    /// Construct `c`'s loop nest as a [`GangEntry`].
    pub(crate) fn gang_unit(&mut self, body: &Body, c: &Construct) -> Result<crate::Built, String> {
        let (Some(all), ConstructBody::Loops { loops, body: inner }) = (nest(c), &c.body) else {
            return Err("not a loop construct".into());
        };
        let innermost = ForLoop {
            header: loops[loops.len() - 1].clone(),
            body: inner.clone(),
        };
        self.range_entry(body, &all, loops, &innermost)
    }

    /// Loop statement `all`, a nest of `loops` (one header per level,
    /// outermost first) around `innermost`, as a [`GangEntry`] over
    /// ranges of each level: a construct's nest, or a plain loop of one
    /// level ([`crate::par`]).
    pub(crate) fn range_entry(
        &mut self,
        body: &Body,
        all: &Stmt,
        loops: &[lang::hir::LoopHeader],
        innermost: &ForLoop,
    ) -> Result<crate::Built, String> {
        use crate::lower::{self, Exit};
        use cranelift_codegen::ir::{types, InstBuilder};
        use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
        use cranelift_module::Module;

        let (scalars, arrays) = crate::frame_of(body, std::slice::from_ref(all));
        let fc = self.module.isa().frontend_config();
        let (id, mut ctx) = self.declare_entry("gang", 4)?;
        let top = std::ptr::eq(body, self.main);
        {
            let mut fbc = FunctionBuilderContext::new();
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let p = crate::open(&mut fb);
            let (slots, descs, rt, bounds) = (p[0], p[1], p[2], p[3]);
            let (ops, next, trap_exit, ret_exit) = crate::exits(&mut fb);
            let mut g = self.gen(
                fb,
                body,
                rt,
                ops,
                next,
                trap_exit,
                ret_exit,
                Exit::Loop {
                    ret: crate::Rets::default(),
                },
            );
            g.load_globals();
            if top {
                g.spills = scalars.clone();
            }
            g.sync_in();
            crate::entry::load(&mut g, body, slots, descs, &scalars, &arrays);
            let mut range = Vec::with_capacity(loops.len());
            for k in 0..loops.len() as i32 {
                let lo = g.b.ins().load(types::I64, lower::flags(), bounds, 16 * k);
                let end =
                    g.b.ins()
                        .load(types::I64, lower::flags(), bounds, 16 * k + 8);
                range.push((lo, end));
            }
            levels(&mut g, loops, innermost, &range, 0);
            crate::entry::close(&mut g, body, slots, &scalars, [ret_exit, trap_exit]);
            g.b.seal_all_blocks();
            g.b.finalize(fc);
        }
        self.define(id, &mut ctx)?;
        Ok((id, scalars, arrays, std::mem::take(&mut self.simd)))
    }
}

/// Level `k` of the nest and those inside it, over `range[k]`: the outer
/// levels only set their counter (the interpreter counts no operation for
/// them), the innermost runs as a `for` loop does. Leaves the builder in
/// the block after the level.
fn levels(
    g: &mut crate::lower::Gen,
    loops: &[lang::hir::LoopHeader],
    innermost: &ForLoop,
    range: &[(cranelift_codegen::ir::Value, cranelift_codegen::ir::Value)],
    k: usize,
) {
    use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder};
    let (lo, end) = range[k];
    let out = g.b.create_block();
    if k + 1 == loops.len() {
        g.for_range(innermost, lo, end, out);
        g.b.switch_to_block(out);
        return;
    }
    let some = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, end);
    let run = g.b.create_block();
    g.b.ins().brif(some, run, &[], out, &[]);
    g.b.switch_to_block(run);
    // The axes this level's counter indexes (plus a constant): when its
    // whole range is inside them, a version without their checks runs
    // (as a `for` loop's quick version does).
    let h = &loops[k];
    let axes = g.indexed_by(h.var.index(), &innermost.body);
    if axes.is_empty() {
        turns(g, loops, innermost, range, k, out);
    } else {
        let inside = g.inside(h.var, &axes, lo, end);
        let (quick, checked) = (g.b.create_block(), g.b.create_block());
        g.b.ins().brif(inside, quick, &[], checked, &[]);
        g.b.switch_to_block(quick);
        let mark = g.in_bounds.len();
        let var = h.var.index();
        g.in_bounds
            .extend(axes.iter().map(|&(s, a, c)| (var, s, a, c)));
        turns(g, loops, innermost, range, k, out);
        g.in_bounds.truncate(mark);
        g.b.switch_to_block(checked);
        turns(g, loops, innermost, range, k, out);
    }
    g.b.switch_to_block(out);
}

/// The turns of outer level `k` over `range[k]` (not empty), each running
/// the levels inside; the last jumps to `out`.
fn turns(
    g: &mut crate::lower::Gen,
    loops: &[lang::hir::LoopHeader],
    innermost: &ForLoop,
    range: &[(cranelift_codegen::ir::Value, cranelift_codegen::ir::Value)],
    k: usize,
    out: cranelift_codegen::ir::Block,
) {
    use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder};
    let (lo, end) = range[k];
    let i = g.b.declare_var(types::I64);
    g.b.def_var(i, lo);
    let head = g.b.create_block();
    g.b.ins().jump(head, &[]);
    g.b.switch_to_block(head);
    let iv = g.b.use_var(i);
    let h = &loops[k];
    let vt = g.local_ty(h.var);
    let v = g.narrow(iv, vt);
    let var = g.var(h.var.index());
    g.b.def_var(var, v);
    // A check cached for one turn does not hold for the next.
    g.checked.clear();
    levels(g, loops, innermost, range, k + 1);
    let iv = g.b.use_var(i);
    let last = g.b.ins().icmp(IntCC::Equal, iv, end);
    let step = g.b.create_block();
    g.b.ins().brif(last, out, &[], step, &[]);
    g.b.switch_to_block(step);
    let n = g.b.ins().iadd_imm_s(iv, 1);
    g.b.def_var(i, n);
    g.b.ins().jump(head, &[]);
}
