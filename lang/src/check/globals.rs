//! Top-level variables seen from functions. A function body sees the
//! variables of the top-level scope as the top level ends (after its last
//! `let` of each name): it reads them, and assigns them and their
//! elements, on the host. Device code cannot reach them (a kernel's data
//! is what its clauses and captures name), so a function that uses one,
//! or calls one that does, is not a device function, and a compute
//! construct inside a function cannot name one. A top-level call of a
//! function that uses a variable whose `let` comes after the call is
//! refused: the variable does not exist yet when the call runs.

use super::{Checker, Diag, Span, Type};
use crate::hir::{FnH, LocalH};

impl Checker<'_> {
    /// A use of top-level variable `l` (called `name`) at `span` inside a
    /// function: its type, or `None` after a diagnostic.
    pub(super) fn global_use(&mut self, l: LocalH, name: &str, span: Span) -> Option<Type> {
        let ty = self.out.main.locals[l].ty;
        if let Some(frame) = self.dev.first() {
            let construct = frame.kind_span;
            self.err(
                Diag::error(
                    "accl::device::global_in_construct",
                    format!("the top-level variable `{name}` cannot be used in a compute construct inside a function"),
                    span,
                    "a top-level variable",
                )
                .with_label(construct, "this construct")
                .with_help(format!(
                    "pass `{name}` to the function as a parameter; the construct then sees it as any local"
                )),
            );
            return None;
        }
        if ty == Type::Str {
            self.host_string(span);
        }
        self.note_violation(span, format!("uses the top-level variable `{name}`"));
        if let Some(f) = self.body.func {
            let uses = &mut self.fn_facts[f.index()].globals;
            if !uses.iter().any(|&(g, _)| g == l) {
                uses.push((l, span));
            }
        }
        Some(ty)
    }

    /// A read of top-level variable `l` in a compute construct inside a
    /// function: the function reads it just before the construct into a
    /// hidden local (once per construct), which the construct captures as
    /// it captures any local (firstprivate for a scalar; the same array
    /// for an array), as NVHPC and GCC give a kernel a global's value.
    pub(super) fn global_in_construct(
        &mut self,
        l: LocalH,
        name: &str,
        span: Span,
    ) -> (crate::hir::ExprH, Type) {
        let Some(frame) = self.dev.first() else {
            return self.error_expr(span);
        };
        let (base, construct) = (frame.scope_base, frame.kind_span);
        let ty = self.out.main.locals[l].ty;
        if ty == Type::Str {
            self.host_string(span);
        }
        if let Some(f) = self.body.func {
            let uses = &mut self.fn_facts[f.index()].globals;
            if !uses.iter().any(|&(g, _)| g == l) {
                uses.push((l, span));
            }
        }
        let hidden = format!("{name}#global@{}", construct.start);
        if self.lookup(&hidden).is_none() {
            let (init, _) = self.push(crate::hir::Expr::Global(l), ty, span);
            self.hoist(&hidden, ty, init, base, span);
        }
        self.expr(
            &crate::ast::Expr::new(crate::ast::ExprKind::Var(hidden), span),
            None,
        )
    }

    /// After every body: which functions reach top-level variables (through
    /// calls too), and top-level calls that would run before a `let` they
    /// need.
    pub(super) fn judge_globals(&mut self) {
        let n = self.fn_facts.len();
        // Each function's variables, through its calls: a fixed point over
        // the call graph (a variable enters a set once, so it ends).
        let mut reach: Vec<Vec<(LocalH, Span, FnH)>> = (0..n)
            .map(|i| {
                let f = FnH::new(i);
                self.fn_facts[i]
                    .globals
                    .iter()
                    .map(|&(g, s)| (g, s, f))
                    .collect()
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..n {
                for c in 0..self.fn_facts[i].callees.len() {
                    let callee = self.fn_facts[i].callees[c].0.index();
                    for k in 0..reach[callee].len() {
                        let item = reach[callee][k];
                        if !reach[i].iter().any(|r| r.0 == item.0) {
                            reach[i].push(item);
                            changed = true;
                        }
                    }
                }
            }
        }
        for (i, r) in reach.iter().enumerate() {
            self.out.functions[FnH::new(i)].globals = r.iter().map(|x| x.0).collect();
        }
        let calls = std::mem::take(&mut self.main_calls);
        for &(f, call) in &calls {
            let Some(&(g, used, user)) = reach[f.index()]
                .iter()
                .find(|(g, _, _)| self.out.main.locals.span(*g).start > call.start)
            else {
                continue;
            };
            let name = self.out.main.locals[g].name.clone();
            let decl = self.out.main.locals.span(g);
            let callee = &self.out.functions[f].name;
            let user_name = &self.out.functions[user].name;
            let mut d = Diag::error(
                "accl::name::global_before_let",
                format!("`{callee}` uses the top-level variable `{name}`, which does not exist yet when this call runs"),
                call,
                "called here",
            )
            .with_label(decl, format!("`{name}` is declared here, after the call"));
            d = d.with_label(used, format!("used here, in `{user_name}`"));
            self.err(d.with_help(format!("move `let {name} = ..;` above the call")));
        }
    }
}
