//! `private`/`firstprivate` of arrays and sections, rewritten before the
//! compute construct is checked into accesses of a hidden array of copies.
//!
//! Each private array of a construct becomes a host array `c'private<n>` of
//! `copies x section` elements, allocated (zeros; for `firstprivate` filled
//! with the section's values, once per copy) just before the outermost
//! compute construct, which takes it with `create` (`copyin`). Inside, an
//! element `c[i, j]` becomes `c'private<n>[k, i - lo0, j - lo1]`, `k` the
//! copy: the linear iteration number of the construct loops from the
//! compute construct down to the one that owns the clause (for a region, of
//! the top-level `loop gang` holding the use, or copy 0 where the region
//! has one gang). Every backend then runs the rewritten program as it runs
//! any other, so the host reference and the device agree by construction.
//! The construct or loop whose iterations own the copies gets a hidden
//! clause naming the hidden array (`ast::PRIVATE_COPIES`, or
//! `FIRSTPRIVATE_COPIES`): the compiler may keep the copies a workgroup
//! uses in workgroup memory instead, started at each such iteration as
//! the host's fresh copy starts (`compiler::private_copies`).
//! The copy count must be known when the construct starts, so the loops
//! that pick a copy may not take their bounds from the construct's own
//! variables.

mod uses;

use super::{Binding, Checker};
use crate::ast::{
    self, BinOp, Block, Clause, ClauseArgs, Directive, DirectiveBody, DirectiveKind as DK, Expr,
    ExprKind, ForLoop, Ident, SectionAxis, Stmt, StmtKind, TypeExpr,
};
use crate::diag::Diag;
use crate::span::Span;
use crate::types::{Scalar, Type};

/// A construct loop whose iteration picks the copy.
#[derive(Clone)]
struct Level {
    var: String,
    lo: Expr,
    hi: Expr,
    inclusive: bool,
}

/// One array named by a `private`/`firstprivate` clause.
struct Named {
    name: String,
    first: bool,
    span: Span,
    elem: Scalar,
    /// Per axis of the array: the section's `(lo, count)`; `None` whole.
    axes: Vec<Option<(Expr, Expr)>>,
}

/// A hidden array of copies, to allocate before the compute construct.
struct Hidden {
    named: Named,
    hidden: String,
    copies: Expr,
}

struct Walk<'c, 'a> {
    ck: &'c mut Checker<'a>,
    /// Every name the compute construct declares (anywhere in it).
    declared: Vec<String>,
    hidden: Vec<Hidden>,
    ok: bool,
    /// The compute construct is a region (`parallel`/`serial` block).
    region: bool,
    /// ... of one gang (`serial`, `num_gangs(1)`, or no `num_gangs`).
    one_gang: bool,
}

fn e(kind: ExprKind, span: Span) -> Expr {
    Expr::new(kind, span)
}

fn int(v: u64, span: Span) -> Expr {
    e(ExprKind::Int(v, None), span)
}

fn var(n: &str, span: Span) -> Expr {
    e(ExprKind::Var(n.to_string()), span)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let span = a.span.to(b.span);
    e(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn cast(a: Expr, elem: Scalar) -> Expr {
    let span = a.span;
    let t = TypeExpr {
        elem,
        rank: 0,
        string: false,
        tuple: None,
        span,
    };
    e(ExprKind::Cast(Box::new(a), t), span)
}

fn call(f: &str, args: Vec<Expr>, span: Span) -> Expr {
    e(
        ExprKind::Call(
            Ident {
                name: f.into(),
                span,
            },
            args,
        ),
        span,
    )
}

/// The clause that tells the compiler which construct or loop owns the
/// copies of `hidden` (it may keep them in workgroup memory).
fn owner_clause(hidden: &str, first: bool, span: Span) -> Clause {
    let name = if first {
        ast::FIRSTPRIVATE_COPIES
    } else {
        ast::PRIVATE_COPIES
    };
    Clause {
        name: Ident {
            name: name.into(),
            span,
        },
        args: ClauseArgs::List(vec![var(hidden, span)]),
        span,
    }
}

fn is_zero(x: &Expr) -> bool {
    matches!(x.kind, ExprKind::Int(0, _))
}

/// Iterations of a level (an `i32`, never negative).
fn trip(l: &Level) -> Expr {
    let span = l.lo.span.to(l.hi.span);
    let mut d = bin(
        BinOp::Sub,
        cast(l.hi.clone(), Scalar::I32),
        cast(l.lo.clone(), Scalar::I32),
    );
    if l.inclusive {
        d = bin(BinOp::Add, d, int(1, span));
    }
    call("max", vec![d, int(0, span)], span)
}

/// The linear iteration number of `levels` (outermost first), an `i32`.
fn linear(levels: &[Level], span: Span) -> Expr {
    let mut k: Option<Expr> = None;
    for l in levels {
        let i = bin(
            BinOp::Sub,
            cast(var(&l.var, span), Scalar::I32),
            cast(l.lo.clone(), Scalar::I32),
        );
        k = Some(match k {
            None => i,
            Some(k) => bin(BinOp::Add, bin(BinOp::Mul, k, trip(l)), i),
        });
    }
    k.unwrap_or_else(|| int(0, span))
}

fn product(levels: &[Level], span: Span) -> Expr {
    levels
        .iter()
        .map(trip)
        .reduce(|a, b| bin(BinOp::Mul, a, b))
        .unwrap_or_else(|| int(1, span))
}

fn has_clause(d: &Directive, names: &[&str]) -> bool {
    d.clauses
        .iter()
        .any(|c| names.contains(&c.name.name.as_str()))
}

/// The levels a loop directive owns: its `for` and, with `collapse(n)` or
/// `tile(..)`, the loops nested in it.
fn own_levels(d: &Directive) -> Vec<Level> {
    let DirectiveBody::For(f) = &d.body else {
        return Vec::new();
    };
    let mut n = 1usize;
    for c in &d.clauses {
        if let ClauseArgs::List(l) = &c.args {
            match c.name.name.as_str() {
                "collapse" | ast::COLLAPSE_FORCE => {
                    if let Some(ExprKind::Int(v, _)) = l.first().map(|x| &x.kind) {
                        n = (*v as usize).max(1);
                    }
                }
                "tile" => n = l.len().max(1),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let mut f: &ForLoop = f;
    loop {
        out.push(Level {
            var: f.var.name.clone(),
            lo: f.lo.clone(),
            hi: f.hi.clone(),
            inclusive: f.inclusive,
        });
        if out.len() == n {
            break;
        }
        match f.body.stmts.iter().find_map(|s| match &s.kind {
            StmtKind::For(g) => Some(g),
            _ => None,
        }) {
            Some(g) => f = g,
            None => break,
        }
    }
    out
}

/// Names an expression mentions.
fn names_in(x: &Expr, out: &mut Vec<String>) {
    match &x.kind {
        ExprKind::Var(n) => out.push(n.clone()),
        ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => names_in(a, out),
        ExprKind::Binary(_, a, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        ExprKind::Index(a, ix) => {
            names_in(a, out);
            ix.iter().for_each(|i| names_in(i, out));
        }
        ExprKind::Section(a, axes) => {
            names_in(a, out);
            axes.iter()
                .flat_map(SectionAxis::exprs)
                .for_each(|i| names_in(i, out));
        }
        ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
            args.iter().for_each(|a| names_in(a, out))
        }
        _ => {}
    }
}

/// Every name declared in `stmts` (lets, constants, loop variables).
fn declared_in(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Let { name, .. } | StmtKind::Const { name, .. } => {
                out.push(name.name.clone())
            }
            StmtKind::LetTuple { pats, .. } => out.extend(pats.iter().map(|p| p.name.name.clone())),
            StmtKind::If { then, els, .. } => {
                declared_in(&then.stmts, out);
                if let Some(b) = els {
                    declared_in(&b.stmts, out);
                }
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => declared_in(&body.stmts, out),
            StmtKind::For(f) => {
                out.push(f.var.name.clone());
                declared_in(&f.body.stmts, out);
            }
            StmtKind::Directive(d) => match &d.body {
                DirectiveBody::Block(b) => declared_in(&b.stmts, out),
                DirectiveBody::For(f) => {
                    out.push(f.var.name.clone());
                    declared_in(&f.body.stmts, out);
                }
                DirectiveBody::None => {}
            },
            StmtKind::AtomicForm { stmts, .. } => declared_in(stmts, out),
            _ => {}
        }
    }
}

/// Does any private clause of `d` or of a `loop` in it name an array?
fn any_private_array(ck: &Checker, d: &Directive) -> bool {
    let here = d.clauses.iter().any(|c| {
        matches!(c.name.name.as_str(), "private" | "firstprivate")
            && match &c.args {
                ClauseArgs::List(l) => l.iter().any(|x| ck.array_named(x).is_some()),
                _ => false,
            }
    });
    here || match &d.body {
        DirectiveBody::Block(b) => b.stmts.iter().any(|s| stmt_has(ck, s)),
        DirectiveBody::For(f) => f.body.stmts.iter().any(|s| stmt_has(ck, s)),
        DirectiveBody::None => false,
    }
}

fn stmt_has(ck: &Checker, s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Directive(d) => any_private_array(ck, d),
        StmtKind::If { then, els, .. } => {
            then.stmts.iter().any(|s| stmt_has(ck, s))
                || els
                    .as_ref()
                    .is_some_and(|b| b.stmts.iter().any(|s| stmt_has(ck, s)))
        }
        StmtKind::While { body, .. } | StmtKind::Block(body) => {
            body.stmts.iter().any(|s| stmt_has(ck, s))
        }
        StmtKind::For(f) => f.body.stmts.iter().any(|s| stmt_has(ck, s)),
        _ => false,
    }
}

impl Checker<'_> {
    /// The array local a clause argument (`c`, `c[0:n]`) names, with its
    /// element type and rank.
    fn array_named(&self, x: &Expr) -> Option<(String, Scalar, u8)> {
        let n = match &x.kind {
            ExprKind::Var(n) => n,
            ExprKind::Section(a, _) | ExprKind::Index(a, _) => match &a.kind {
                ExprKind::Var(n) => n,
                _ => return None,
            },
            _ => return None,
        };
        match self.lookup(n) {
            Some(Binding::Local(l)) => match self.body.locals[l].ty {
                Type::Array(elem, rank) => Some((n.clone(), elem, rank)),
                _ => None,
            },
            _ => None,
        }
    }

    /// A compute construct (not nested in another) whose clauses, or whose
    /// `loop`s' clauses, make arrays private: the block of statements it
    /// stands for (the hidden arrays' allocation, then the construct over
    /// them), or `None` when it has none.
    pub(super) fn private_arrays(&mut self, s: &Stmt, d: &Directive) -> Option<Block> {
        if !matches!(d.kind, DK::Parallel | DK::ParallelLoop)
            || !self.dev.is_empty()
            || !any_private_array(self, d)
        {
            return None;
        }
        let original = d;
        let mut d = d.clone();
        let mut declared = Vec::new();
        declared_in(std::slice::from_ref(s), &mut declared);
        let region = d.kind == DK::Parallel;
        let one_gang = match d.clauses.iter().find(|c| c.name.name == "num_gangs") {
            None => true,
            Some(c) => matches!(&c.args, ClauseArgs::List(l)
                if l.len() == 1 && matches!(l[0].kind, ExprKind::Int(1, _))),
        };
        let mut w = Walk {
            ck: self,
            declared,
            hidden: Vec::new(),
            ok: true,
            region,
            one_gang,
        };
        w.directive(&mut d, &[], false, true);
        if !w.ok {
            // Reported; the construct is checked as written for its other
            // errors, without the clauses already found wrong.
            let mut d = original.clone();
            strip_private_arrays(w.ck, &mut d);
            return Some(Block {
                stmts: vec![Stmt {
                    kind: StmtKind::Directive(d),
                    span: s.span,
                }],
                span: s.span,
            });
        }
        let hidden = std::mem::take(&mut w.hidden);
        let mut stmts = Vec::new();
        for h in &hidden {
            stmts.extend(prelude(h));
            let kind = if h.named.first { "copyin" } else { "create" };
            d.clauses.push(Clause {
                name: Ident {
                    name: kind.into(),
                    span: h.named.span,
                },
                args: ClauseArgs::List(vec![var(&h.hidden, h.named.span)]),
                span: h.named.span,
            });
        }
        stmts.push(Stmt {
            kind: StmtKind::Directive(d),
            span: s.span,
        });
        // The host's array of copies is only their shape once the
        // construct has its device copy: let it go (copies x elements can
        // be large) rather than hold it to the end of the program.
        for h in &hidden {
            let span = h.named.span;
            let mut dims = vec![e(ExprKind::Type(h.named.elem), span)];
            dims.extend((0..=h.named.axes.len()).map(|_| int(0, span)));
            stmts.push(Stmt {
                kind: StmtKind::Assign {
                    target: var(&h.hidden, span),
                    op: None,
                    op_span: span,
                    value: call("zeros", dims, span),
                },
                span,
            });
        }
        Some(Block {
            stmts,
            span: s.span,
        })
    }
}

/// Drop the array arguments of `private`/`firstprivate` clauses (after an
/// error about them).
fn strip_private_arrays(ck: &Checker, d: &mut Directive) {
    strip_clauses(ck, d);
    let stmts = match &mut d.body {
        DirectiveBody::Block(b) => &mut b.stmts,
        DirectiveBody::For(f) => &mut f.body.stmts,
        DirectiveBody::None => return,
    };
    for s in stmts {
        strip_stmt(ck, s);
    }
}

fn strip_stmt(ck: &Checker, s: &mut Stmt) {
    match &mut s.kind {
        StmtKind::Directive(d) => strip_private_arrays(ck, d),
        StmtKind::If { then, els, .. } => {
            then.stmts.iter_mut().for_each(|s| strip_stmt(ck, s));
            if let Some(b) = els {
                b.stmts.iter_mut().for_each(|s| strip_stmt(ck, s));
            }
        }
        StmtKind::While { body, .. } | StmtKind::Block(body) => {
            body.stmts.iter_mut().for_each(|s| strip_stmt(ck, s))
        }
        StmtKind::For(f) => f.body.stmts.iter_mut().for_each(|s| strip_stmt(ck, s)),
        _ => {}
    }
}

/// Remove (and return) the arrays `d`'s private clauses name.
fn strip_clauses(ck: &Checker, d: &mut Directive) -> Vec<(Expr, bool)> {
    let mut out = Vec::new();
    for c in &mut d.clauses {
        let first = match c.name.name.as_str() {
            "private" => false,
            "firstprivate" => true,
            _ => continue,
        };
        if let ClauseArgs::List(l) = &mut c.args {
            let (arrays, rest): (Vec<Expr>, Vec<Expr>) =
                l.drain(..).partition(|x| ck.array_named(x).is_some());
            *l = rest;
            out.extend(arrays.into_iter().map(|x| (x, first)));
        }
    }
    // A clause left with no argument is dropped (it would read as a flag).
    d.clauses
        .retain(|c| !matches!(&c.args, ClauseArgs::List(l) if l.is_empty() && matches!(c.name.name.as_str(), "private" | "firstprivate")));
    out
}

/// The allocation (and for `firstprivate` the filling) of a hidden array.
fn prelude(h: &Hidden) -> Vec<Stmt> {
    let span = h.named.span;
    let copies = format!("{}'copies", h.hidden);
    let st = |kind| Stmt { kind, span };
    let mut out = vec![st(StmtKind::Let {
        name: Ident {
            name: copies.clone(),
            span,
        },
        ty: None,
        init: h.copies.clone(),
    })];
    // Per axis: lo and count.
    let axes: Vec<(Expr, Expr)> = h
        .named
        .axes
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Some((lo, n)) => (lo.clone(), n.clone()),
            None => (
                int(0, span),
                call(
                    "shape",
                    vec![var(&h.named.name, span), int(i as u64, span)],
                    span,
                ),
            ),
        })
        .collect();
    let mut dims = vec![e(ExprKind::Type(h.named.elem), span), var(&copies, span)];
    dims.extend(axes.iter().map(|(_, n)| n.clone()));
    out.push(st(StmtKind::Let {
        name: Ident {
            name: h.hidden.clone(),
            span,
        },
        ty: None,
        init: call("zeros", dims, span),
    }));
    if h.named.first {
        // for k { for i0 in lo0..lo0 + n0 { .. hidden[k, i0 - lo0, ..] = c[i0, ..] } }
        let k = format!("{}'k", h.hidden);
        let ivars: Vec<String> = (0..axes.len())
            .map(|i| format!("{}'i{i}", h.hidden))
            .collect();
        let mut hidden_ix = vec![var(&k, span)];
        let mut src_ix = Vec::new();
        for ((lo, _), iv) in axes.iter().zip(&ivars) {
            src_ix.push(var(iv, span));
            hidden_ix.push(if is_zero(lo) {
                var(iv, span)
            } else {
                bin(BinOp::Sub, var(iv, span), lo.clone())
            });
        }
        let assign = st(StmtKind::Assign {
            target: e(
                ExprKind::Index(Box::new(var(&h.hidden, span)), hidden_ix),
                span,
            ),
            op: None,
            op_span: span,
            value: e(
                ExprKind::Index(Box::new(var(&h.named.name, span)), src_ix),
                span,
            ),
        });
        let mut body = vec![assign];
        for ((lo, n), iv) in axes.iter().zip(&ivars).rev() {
            let hi = if is_zero(lo) {
                n.clone()
            } else {
                bin(BinOp::Add, lo.clone(), n.clone())
            };
            body = vec![for_stmt(iv, lo.clone(), hi, body, span)];
        }
        out.push(for_stmt(&k, int(0, span), var(&copies, span), body, span));
    }
    out
}

fn for_stmt(v: &str, lo: Expr, hi: Expr, body: Vec<Stmt>, span: Span) -> Stmt {
    Stmt {
        kind: StmtKind::For(ForLoop {
            var: Ident {
                name: v.into(),
                span,
            },
            lo,
            hi,
            inclusive: false,
            rev: false,
            body: Block { stmts: body, span },
            span,
        }),
        span,
    }
}

impl Walk<'_, '_> {
    fn err(&mut self, d: Diag) {
        self.ok = false;
        self.ck.err(d);
    }

    /// `d` at loop levels `chain` (of the enclosing construct loops);
    /// `gang`: one of them is a gang loop (or the construct's own loop).
    fn directive(&mut self, d: &mut Directive, chain: &[Level], gang: bool, top: bool) {
        let own = own_levels(d);
        let gang =
            gang || (top && d.kind == DK::ParallelLoop) || has_clause(d, &["gang", ast::GANG_DIM]);
        let mut levels = chain.to_vec();
        levels.extend(own);
        // Inner constructs first: what they make private is theirs.
        match &mut d.body {
            DirectiveBody::Block(b) => self.stmts(&mut b.stmts, &levels, gang),
            DirectiveBody::For(f) => self.stmts(&mut f.body.stmts, &levels, gang),
            DirectiveBody::None => {}
        }
        let named = strip_clauses(self.ck, d);
        for (x, first) in named {
            let Some(n) = self.named(&x, first) else {
                continue;
            };
            let hidden = format!("{}'private{}", n.name, self.hidden.len());
            let los: Vec<Option<Expr>> = n
                .axes
                .iter()
                .map(|a| a.as_ref().map(|(lo, _)| lo.clone()))
                .collect();
            let copies = if top && self.region {
                let DirectiveBody::Block(b) = &mut d.body else {
                    continue;
                };
                let Some((c, shared)) = self.region_uses(&mut b.stmts, &n, &hidden, &los) else {
                    continue;
                };
                if shared {
                    d.clauses.push(owner_clause(&hidden, n.first, n.span));
                }
                c
            } else {
                if !self.host_levels(&levels, &n) {
                    continue;
                }
                if self.region && !gang && !self.one_gang {
                    self.several_gangs(&n, d.kind_span);
                    continue;
                }
                let k = linear(&levels, n.span);
                let stmts = match &mut d.body {
                    DirectiveBody::Block(b) => &mut b.stmts,
                    DirectiveBody::For(f) => &mut f.body.stmts,
                    DirectiveBody::None => continue,
                };
                self.rewrite_stmts(stmts, &n.name, &hidden, &k, &los);
                d.clauses.push(owner_clause(&hidden, n.first, n.span));
                product(&levels, n.span)
            };
            self.hidden.push(Hidden {
                named: n,
                hidden,
                copies,
            });
        }
    }

    fn stmts(&mut self, stmts: &mut [Stmt], levels: &[Level], gang: bool) {
        for s in stmts {
            match &mut s.kind {
                StmtKind::Directive(d) => self.directive(d, levels, gang, false),
                StmtKind::If { then, els, .. } => {
                    self.stmts(&mut then.stmts, levels, gang);
                    if let Some(b) = els {
                        self.stmts(&mut b.stmts, levels, gang);
                    }
                }
                StmtKind::While { body, .. } | StmtKind::Block(body) => {
                    self.stmts(&mut body.stmts, levels, gang)
                }
                StmtKind::For(f) => self.stmts(&mut f.body.stmts, levels, gang),
                _ => {}
            }
        }
    }

    /// The clause argument `x` as an array and its section.
    fn named(&mut self, x: &Expr, first: bool) -> Option<Named> {
        let (name, elem, rank) = self.ck.array_named(x)?;
        let mut axes: Vec<Option<(Expr, Expr)>> = vec![None; rank as usize];
        match &x.kind {
            ExprKind::Section(_, ax) => {
                if ax.len() > rank as usize {
                    self.err(Diag::error(
                        "accl::device::private_array",
                        format!("`{name}` has {rank} axes; this section names {}", ax.len()),
                        x.span,
                        "too many axes",
                    ));
                    return None;
                }
                for (i, a) in ax.iter().enumerate() {
                    match a {
                        SectionAxis::Range(lo, n) => axes[i] = Some((lo.clone(), n.clone())),
                        SectionAxis::All(_) => {}
                        SectionAxis::Index(ix) => {
                            self.err(
                                Diag::error(
                                    "accl::device::private_array",
                                    "a private section takes a range on every axis it names",
                                    ix.span,
                                    "a single index",
                                )
                                .with_help("write `lo:count` (`i:1` for one index)"),
                            );
                            return None;
                        }
                    }
                }
            }
            ExprKind::Index(..) => {
                self.err(
                    Diag::error(
                        "accl::device::private_array",
                        format!("`private` takes whole arrays or sections; this is an element of `{name}`"),
                        x.span,
                        "an element",
                    )
                    .with_help(format!("write a section (`{name}[i:1]`) or the whole array (`{name}`)")),
                );
                return None;
            }
            _ => {}
        }
        if rank > 2 {
            self.err(
                Diag::error(
                    "accl::device::private_array",
                    format!("`{name}` has {rank} axes: private arrays have one or two"),
                    x.span,
                    "a rank-3 array",
                )
                .with_help("make a 1-D or 2-D array private (the copies add an axis, and arrays have at most 3)"),
            );
            return None;
        }
        Some(Named {
            name,
            first,
            span: x.span,
            elem,
            axes,
        })
    }

    /// Are the levels' bounds known when the compute construct starts?
    fn host_levels(&mut self, levels: &[Level], n: &Named) -> bool {
        for l in levels {
            let mut names = Vec::new();
            names_in(&l.lo, &mut names);
            names_in(&l.hi, &mut names);
            if let Some(bad) = names.iter().find(|x| self.declared.contains(x)) {
                let span = l.lo.span.to(l.hi.span);
                self.err(
                    Diag::error(
                        "accl::device::private_array",
                        format!(
                            "the copies of private `{}` follow this loop, whose bounds use `{bad}`, a variable of the construct",
                            n.name
                        ),
                        span,
                        "bounds known only inside the construct",
                    )
                    .with_label(n.span, "private here")
                    .with_help("the number of copies is fixed when the construct starts: bound the loop by values from outside it, or make the array private on an outer loop"),
                );
                return false;
            }
        }
        true
    }

    fn several_gangs(&mut self, n: &Named, span: Span) {
        self.err(
            Diag::error(
                "accl::device::private_array",
                format!(
                    "private `{}` is used outside a `loop gang` of a region of several gangs",
                    n.name
                ),
                n.span,
                "private here",
            )
            .with_label(span, "run by every gang")
            .with_help("use it inside a `loop gang` (a copy per gang iteration), or give the region one gang (`num_gangs(1)`, `serial`)"),
        );
    }

    /// A region's private array: each top-level `loop gang` (with bounds
    /// known at the start) gets a copy per iteration; other uses share copy
    /// 0, which needs a region of one gang. The copy count, or `None` after
    /// an error, and whether the copy is the region's one shared copy (else
    /// each gang loop that uses it owns copies, and says so).
    fn region_uses(
        &mut self,
        stmts: &mut [Stmt],
        n: &Named,
        hidden: &str,
        los: &[Option<Expr>],
    ) -> Option<(Expr, bool)> {
        let mut counts: Vec<Expr> = Vec::new();
        let declared = &self.declared;
        let gang_loop = |s: &Stmt| match &s.kind {
            StmtKind::Directive(d)
                if d.kind == DK::Loop && has_clause(d, &["gang", ast::GANG_DIM]) =>
            {
                let levels = own_levels(d);
                let known = levels.iter().all(|l| {
                    let mut names = Vec::new();
                    names_in(&l.lo, &mut names);
                    names_in(&l.hi, &mut names);
                    !names.iter().any(|x| declared.contains(x))
                });
                known.then_some(levels)
            }
            _ => None,
        };
        let levels: Vec<Option<Vec<Level>>> = stmts.iter().map(gang_loop).collect();
        // Uses outside gang loops first: they make the one copy shared.
        let zero = int(0, n.span);
        let mut shared = None;
        for (s, l) in stmts.iter_mut().zip(&levels) {
            if l.is_none()
                && self.rewrite_stmts(std::slice::from_mut(s), &n.name, hidden, &zero, los)
            {
                shared = shared.or(Some(s.span));
            }
        }
        for (s, l) in stmts.iter_mut().zip(&levels) {
            let (StmtKind::Directive(d), Some(levels)) = (&mut s.kind, l) else {
                continue;
            };
            let k = if shared.is_some() {
                zero.clone()
            } else {
                linear(levels, n.span)
            };
            if let DirectiveBody::For(f) = &mut d.body {
                if self.rewrite_stmts(&mut f.body.stmts, &n.name, hidden, &k, los)
                    && shared.is_none()
                {
                    counts.push(product(levels, n.span));
                    d.clauses.push(owner_clause(hidden, n.first, n.span));
                }
            }
        }
        if let Some(span) = shared {
            if !self.one_gang {
                self.several_gangs(n, span);
                return None;
            }
            counts.push(int(1, n.span));
        }
        Some((
            counts
                .into_iter()
                .reduce(|a, b| {
                    let span = a.span;
                    call("max", vec![a, b], span)
                })
                .unwrap_or_else(|| int(1, n.span)),
            shared.is_some(),
        ))
    }
}
