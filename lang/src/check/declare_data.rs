//! The `declare` directive, and one array in several data clauses of one
//! construct.
//!
//! `declare clauses;` is a `data` construct over the rest of the block it
//! stands in, checked in that block's scope (names declared after it stay
//! visible to the end of the block): in a function its data lives for the
//! call, and leaves on every path out (a `return`, an error); at the top
//! level for the rest of the program. The interpreter runs it as that
//! `data` construct; its kind stays `Declare` so that an embedder keeps the
//! top-level variables declared after it.

use super::Checker;
use crate::ast::{self, DirectiveKind as DK};
use crate::diag::Diag;
use crate::hir::{self, LocalH};
use crate::span::Span;

/// The clauses of `declare`.
pub(super) const DECLARE_CLAUSES: &[&str] = &[
    "copy",
    "copyin",
    "copyout",
    "create",
    "present",
    "deviceptr",
    "device_resident",
    "link",
];

impl Checker<'_> {
    /// `declare ..;` at `s`, followed by `rest` of its block (the top
    /// level's functions left out).
    pub(super) fn declare_directive(
        &mut self,
        s: &ast::Stmt,
        d: &ast::Directive,
        rest: &[ast::Stmt],
    ) -> Option<hir::Stmt> {
        self.note_violation(d.kind_span, "contains a `declare` directive");
        // `link(a)`: accl has no static device data, so an array's device
        // copy exists only where a data clause or directive puts it, which
        // is what `link` asks for: nothing happens here.
        let mut clauses = Vec::with_capacity(d.clauses.len());
        let mut ok = true;
        for cl in &d.clauses {
            if cl.name.name != "link" {
                clauses.push(cl.clone());
                continue;
            }
            if let ast::ClauseArgs::List(list) = &cl.args {
                for e in list {
                    let var = match &e.kind {
                        ast::ExprKind::Section(a, _) => &**a,
                        _ => e,
                    };
                    ok &= self.array_var(var, "link").is_some();
                }
            }
        }
        let span = rest.iter().fold(s.span, |sp, r| sp.to(r.span));
        let synthetic = ast::Directive {
            kind: DK::Declare,
            clauses,
            body: ast::DirectiveBody::Block(ast::Block {
                stmts: rest.to_vec(),
                span,
            }),
            ..d.clone()
        };
        self.same_scope_body = true;
        let out = self.directive(s, &synthetic);
        self.same_scope_body = false;
        out.filter(|_| ok)
    }

    /// `var` in a data clause `now` of construct `d`, after the clause
    /// `prev` named it: whether that may stand (else reported). On `data`
    /// and compute constructs the clauses of one array box act as one
    /// (the interpreter merges them: copied in if one copies in, out if
    /// one copies out), except with `present` or `deviceptr`, which say
    /// the data is already there; standalone directives take their
    /// clauses in order.
    pub(super) fn data_twice(
        &mut self,
        d: &ast::Directive,
        prev: Option<(Span, &str)>,
        now: (&str, Span),
        var: LocalH,
    ) -> bool {
        let Some((prev_span, prev_name)) = prev else {
            return true;
        };
        let structured = matches!(
            d.kind,
            DK::Parallel | DK::ParallelLoop | DK::Data | DK::Declare
        );
        let asserts = |n: &str| matches!(n, "present" | "deviceptr");
        if !structured || prev_name == now.0 || !(asserts(prev_name) || asserts(now.0)) {
            return true;
        }
        let n = self.body.locals[var].name.clone();
        let (which, other) = if asserts(prev_name) {
            (prev_name, now.0)
        } else {
            (now.0, prev_name)
        };
        let help = if which == "deviceptr" {
            format!("an array in `deviceptr` is the embedder's own device buffer: give `{n}` no other data clause")
        } else {
            format!("`present` requires `{n}` on the device already, `{other}` makes it so when absent: keep one of them")
        };
        self.err(
            Diag::error(
                "accl::device::conflicting_data",
                format!(
                    "`{n}` is both `{prev_name}` and `{}` on one construct",
                    now.0
                ),
                now.1,
                format!("`{}` here", now.0),
            )
            .with_label(prev_span, format!("`{prev_name}` here"))
            .with_help(help),
        );
        false
    }
}
