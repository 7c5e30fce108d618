//! The clauses of `routine`: `nohost` (no host version: every call is in
//! device code, a compute construct or another `nohost` routine) and
//! `bind(f)` (device code that calls the routine calls `f` instead, a
//! function of the same parameter and result types).

use super::Checker;
use crate::ast;
use crate::diag::Diag;
use crate::hir::FnH;
use crate::span::Span;

impl Checker<'_> {
    /// Record the clauses written between a routine's level and `fn`.
    pub(super) fn routine_clauses(&mut self, f: &ast::FnDecl, h: FnH) {
        for cl in &f.routine_clauses {
            let facts = &mut self.fn_facts[h.index()];
            match (cl.name.name.as_str(), &cl.args) {
                ("nohost", ast::ClauseArgs::None) => facts.nohost = true,
                ("bind", ast::ClauseArgs::List(list)) if list.len() == 1 => {
                    match &list[0].kind {
                        ast::ExprKind::Var(n) => {
                            facts.bind = Some(ast::Ident {
                                name: n.clone(),
                                span: list[0].span,
                            })
                        }
                        _ => self.err(
                            Diag::error(
                                "accl::device::bind",
                                "`bind` takes the name of a function",
                                list[0].span,
                                "not a function name",
                            )
                            .with_help("write `bind(f)` with `f` a function of the program (accl has no external names)"),
                        ),
                    }
                }
                (name @ ("nohost" | "bind"), _) => self.err(
                    Diag::error(
                        "accl::device::clause_arguments",
                        format!("`{name}` is written {}", if name == "bind" { "`bind(f)`" } else { "`nohost`, without arguments" }),
                        cl.span,
                        "here",
                    ),
                ),
                (name, _) => self.err(
                    Diag::error(
                        "accl::device::clause_not_allowed",
                        format!("clause `{name}` is not allowed on `routine`"),
                        cl.name.span,
                        "not valid here",
                    )
                    .with_help("`routine` takes a level (gang, worker, vector, seq), then `nohost` and `bind(f)`"),
                ),
            }
        }
    }

    /// Once every function is declared: each `bind(f)` names a function
    /// whose parameters and result match.
    pub(super) fn check_binds(&mut self) {
        for k in 0..self.fn_facts.len() {
            let Some(target) = self.fn_facts[k].bind.clone() else {
                continue;
            };
            let h = FnH::new(k);
            let name = self.out.functions[h].name.clone();
            let decl = self.fn_name_span(self.out.functions[h].span);
            let Some(&t) = self.fn_names.get(&target.name) else {
                self.err(
                    Diag::error(
                        "accl::device::bind",
                        format!("`bind({})` names no function", target.name),
                        target.span,
                        "not a function of the program",
                    )
                    .with_label(decl, format!("the routine `{name}`")),
                );
                self.fn_facts[k].bind = None;
                continue;
            };
            let same = self.param_types(t) == self.param_types(h)
                && self.out.functions[t].ret == self.out.functions[h].ret;
            if t == h || !same {
                self.err(
                    Diag::error(
                        "accl::device::bind",
                        if t == h {
                            format!("`{name}` is bound to itself")
                        } else {
                            format!("`{}` does not take and return what `{name}` does", target.name)
                        },
                        target.span,
                        "bound here",
                    )
                    .with_label(self.fn_name_span(self.out.functions[t].span), "this function")
                    .with_help("a bound function stands in for the routine on the device: same parameter types, same result"),
                );
                self.fn_facts[k].bind = None;
            }
        }
    }

    /// The function a call of `fh` at `span` runs: its `bind` target in
    /// device code. A `nohost` function called from host code is reported.
    pub(super) fn routine_callee(&mut self, fh: FnH, f: &ast::Ident, span: Span) -> FnH {
        let in_device = !self.dev.is_empty();
        let fh = match &self.fn_facts[fh.index()].bind {
            Some(t) if in_device => self.fn_names.get(&t.name).copied().unwrap_or(fh),
            _ => fh,
        };
        let caller_nohost = self
            .body
            .func
            .is_some_and(|c| self.fn_facts[c.index()].nohost);
        if self.fn_facts[fh.index()].nohost && !in_device && !caller_nohost {
            let decl = self.fn_name_span(self.out.functions[fh].span);
            self.err(
                Diag::error(
                    "accl::device::nohost",
                    format!("`{}` is `nohost`: it has no host version", f.name),
                    span,
                    "called from host code",
                )
                .with_label(decl, "declared `nohost` here")
                .with_help("call it inside a compute construct, or from another `nohost` routine"),
            );
        }
        fh
    }
}
