//! Updates of one array element from several parallel iterations: in a
//! loop whose iterations run in parallel (a `parallel loop`, a `loop`
//! without `seq`, each with the loops `collapse(n)` folds into it), an
//! update `a[..] op= v` (or `a[..] = a[..] op v`) whose indices do not use
//! some of those loops' variables reads and writes the same element from
//! every iteration over the missing ones: updates are lost, and which
//! depends on timing (on a device; the host reference runs them in
//! order). Only certain cases are reported: indices made of the parallel
//! loops' variables, constants and variables from outside the construct.
//! An index that uses a variable declared inside (which may be computed
//! from a loop variable) is left alone, as are `atomic` updates, arrays a
//! `private`, `firstprivate` or `reduction` clause names, `serial` and
//! `kernels` constructs and `loop seq`.

use super::Checker;
use crate::ast::{Block, ClauseArgs, Directive, DirectiveBody, DirectiveKind as DK, Expr};
use crate::ast::{ExprKind, ForLoop, Stmt, StmtKind};
use crate::diag::Diag;
use crate::span::Span;

/// The variables of parallel loops around a statement, with the directive
/// that runs them in parallel.
#[derive(Clone)]
struct Level {
    var: String,
    kind: &'static str,
    kind_span: Span,
}

#[derive(Default, Clone)]
struct Scope {
    levels: Vec<Level>,
    /// Names declared inside the construct (may hold a loop variable).
    inner: Vec<String>,
    /// Arrays with copies per iteration or reduced.
    excluded: Vec<String>,
}

impl Checker<'_> {
    /// Report every update of a compute construct `d` (at the top level)
    /// that several of its parallel iterations make to one element.
    pub(super) fn update_races(&mut self, d: &Directive) {
        if !matches!(d.kind, DK::Parallel | DK::ParallelLoop) || !self.dev.is_empty() {
            return;
        }
        let in_order = d.clauses.iter().any(|c| {
            c.name.name == crate::kernels::SERIAL || c.name.name == crate::kernels::KERNELS_PART
        });
        if in_order {
            return;
        }
        let mut found = Vec::new();
        directive(d, Scope::default(), &mut found);
        for r in found {
            self.err(r);
        }
    }
}

fn base_name(x: &Expr) -> Option<&str> {
    match &x.kind {
        ExprKind::Var(n) => Some(n),
        ExprKind::Index(a, _) | ExprKind::Section(a, _) => base_name(a),
        _ => None,
    }
}

/// Every node of `e` (with an explicit stack: trees may be deep).
fn each(e: &Expr, f: &mut impl FnMut(&Expr)) {
    let mut todo = vec![e];
    while let Some(x) = todo.pop() {
        f(x);
        match &x.kind {
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => todo.push(a),
            ExprKind::Binary(_, a, b) => todo.extend([&**a, &**b]),
            ExprKind::Index(a, ix) => {
                todo.push(a);
                todo.extend(ix);
            }
            ExprKind::Section(a, axes) => {
                todo.push(a);
                todo.extend(axes.iter().flat_map(crate::ast::SectionAxis::exprs));
            }
            ExprKind::Call(_, args) | ExprKind::Array(args) | ExprKind::Tuple(args) => {
                todo.extend(args)
            }
            _ => {}
        }
    }
}

fn directive(d: &Directive, mut sc: Scope, out: &mut Vec<Diag>) {
    for c in &d.clauses {
        if matches!(
            c.name.name.as_str(),
            "private" | "firstprivate" | "reduction"
        ) {
            match &c.args {
                ClauseArgs::List(l) => sc
                    .excluded
                    .extend(l.iter().filter_map(base_name).map(str::to_string)),
                ClauseArgs::Reduction { vars, .. } => {
                    sc.excluded.extend(vars.iter().map(|v| v.name.clone()))
                }
                _ => {}
            }
        }
    }
    let seq = d.clauses.iter().any(|c| c.name.name == "seq");
    match &d.body {
        DirectiveBody::For(f) => {
            let mut n = 1;
            for c in &d.clauses {
                if let ClauseArgs::List(l) = &c.args {
                    if c.name.name == "collapse" || c.name.name == crate::ast::COLLAPSE_FORCE {
                        if let Some(ExprKind::Int(v, _)) = l.first().map(|x| &x.kind) {
                            n = (*v as usize).max(1);
                        }
                    }
                }
            }
            let mut f: &ForLoop = f;
            for level in 0..n {
                if seq {
                    sc.inner.push(f.var.name.clone());
                } else {
                    sc.levels.push(Level {
                        var: f.var.name.clone(),
                        kind: d.kind.name(),
                        kind_span: d.kind_span,
                    });
                }
                if level + 1 < n {
                    match f.body.stmts.as_slice() {
                        [Stmt {
                            kind: StmtKind::For(g),
                            ..
                        }] => f = g,
                        _ => break,
                    }
                }
            }
            block(&f.body, &mut sc.clone(), out);
        }
        DirectiveBody::Block(b) => block(b, &mut sc, out),
        DirectiveBody::None => {}
    }
}

fn block(b: &Block, sc: &mut Scope, out: &mut Vec<Diag>) {
    let saved = sc.inner.len();
    for s in &b.stmts {
        stmt(s, sc, out);
    }
    sc.inner.truncate(saved);
}

fn stmt(s: &Stmt, sc: &mut Scope, out: &mut Vec<Diag>) {
    match &s.kind {
        StmtKind::Let { name, .. } | StmtKind::Const { name, .. } => {
            sc.inner.push(name.name.clone())
        }
        StmtKind::LetTuple { pats, .. } => {
            sc.inner.extend(pats.iter().map(|p| p.name.name.clone()))
        }
        StmtKind::Assign {
            target, op, value, ..
        } => {
            if let ExprKind::Index(a, ix) = &target.kind {
                if let ExprKind::Var(name) = &a.kind {
                    if op.is_some() || reads(value, name) {
                        update(name, ix, target.span, sc, out);
                    }
                }
            }
        }
        StmtKind::If { then, els, .. } => {
            block(then, sc, out);
            if let Some(e) = els {
                block(e, sc, out);
            }
        }
        StmtKind::While { body, .. } => block(body, sc, out),
        StmtKind::For(f) => {
            let mut inner = sc.clone();
            inner.inner.push(f.var.name.clone());
            block(&f.body, &mut inner, out);
        }
        StmtKind::Block(b) => block(b, sc, out),
        StmtKind::Directive(d) if d.kind == DK::Loop => directive(d, sc.clone(), out),
        _ => {}
    }
}

/// Does `e` read an element of `name`?
fn reads(e: &Expr, name: &str) -> bool {
    let mut hit = false;
    each(e, &mut |x| {
        if let ExprKind::Index(a, _) = &x.kind {
            hit |= matches!(&a.kind, ExprKind::Var(n) if n == name);
        }
    });
    hit
}

fn update(name: &str, ix: &[Expr], span: Span, sc: &Scope, out: &mut Vec<Diag>) {
    if sc.levels.is_empty()
        || sc.excluded.iter().any(|x| x == name)
        || sc.inner.iter().any(|x| x == name)
    {
        return;
    }
    let mut used = Vec::new();
    for i in ix {
        each(i, &mut |x| {
            if let ExprKind::Var(n) = &x.kind {
                used.push(n.clone());
            }
        });
    }
    if used.iter().any(|u| sc.inner.contains(u)) {
        return;
    }
    let missing: Vec<&Level> = sc
        .levels
        .iter()
        .filter(|l| !used.contains(&l.var))
        .collect();
    let Some(first) = missing.first() else {
        return;
    };
    let names = missing
        .iter()
        .map(|l| format!("`{}`", l.var))
        .collect::<Vec<_>>()
        .join(", ");
    let loops = if missing.len() == 1 { "loop" } else { "loops" };
    out.push(
        Diag::error(
            "accl::device::race",
            format!("every iteration over {names} updates the same element of `{name}`"),
            span,
            format!("these indices do not use {names}: one element for all those iterations, a data race"),
        )
        .with_label(first.kind_span, format!("iterations of this `{}` run in parallel", first.kind))
        .with_help(format!(
            "make the update `atomic update`, or accumulate into a scalar with `reduction(+: ..)` on the {loops} over {names} and store it once, or run the {loops} over {names} in order (out of the `collapse`, or `loop seq`)"
        )),
    );
}
