//! OpenACC's data and wait runtime routines, called as statements, are the
//! directives they are defined to equal: `acc_copyin(a)` is
//! `enter data copyin(a)`, `acc_delete_finalize_async(a, q)` is
//! `exit data delete(a) finalize async(q)`, `acc_wait_all_async(q)` is
//! `wait async(q)`. Checking them as those directives gives them the
//! directives' present-table rules, queues and diagnostics on both
//! backends, with nothing of their own to run.

use super::Checker;
use crate::ast::{self, Clause, ClauseArgs, Directive, DirectiveBody, DirectiveKind, Ident};
use crate::diag::Diag;
use crate::Span;

/// What a routine's name asks for.
struct Routine {
    kind: DirectiveKind,
    /// The data clause the array goes in (none for the waits).
    clause: Option<&'static str>,
    finalize: bool,
    /// The last argument is the queue of an `async` clause.
    queued: bool,
}

fn routine(name: &str) -> Option<Routine> {
    let (base, queued) = match name.strip_suffix("_async") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let (base, finalize) = match base.strip_suffix("_finalize") {
        Some(b) => (b, true),
        None => (base, false),
    };
    let (kind, clause) = match base {
        "acc_copyin" => (DirectiveKind::EnterData, "copyin"),
        "acc_create" => (DirectiveKind::EnterData, "create"),
        "acc_copyout" => (DirectiveKind::ExitData, "copyout"),
        "acc_delete" => (DirectiveKind::ExitData, "delete"),
        "acc_update_device" => (DirectiveKind::Update, "device"),
        "acc_update_self" => (DirectiveKind::Update, "self"),
        "acc_wait" | "acc_wait_all" if !finalize => {
            return Some(Routine {
                kind: DirectiveKind::Wait,
                clause: None,
                finalize: false,
                queued,
            })
        }
        _ => return None,
    };
    if finalize && kind != DirectiveKind::ExitData {
        return None;
    }
    Some(Routine {
        kind,
        clause: Some(clause),
        finalize,
        queued,
    })
}

/// Whether `name` is one of these routines (a statement, not a value).
pub(super) fn is_routine(name: &str) -> bool {
    routine(name).is_some()
}

impl Checker<'_> {
    /// The directive a call statement of one of these routines equals;
    /// `None` when `f` names none of them or a function of the program.
    /// A wrong argument count is reported here (and `Some` of nothing to
    /// check is never returned: the caller checks the directive).
    pub(super) fn routine_directive(
        &mut self,
        f: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Result<Directive, ()>> {
        if self.fn_names.contains_key(&f.name) {
            return None;
        }
        let r = routine(&f.name)?;
        let arrays = usize::from(r.clause.is_some());
        let waited = usize::from(waits_for_one(&f.name));
        let queues = waited + usize::from(r.queued);
        if args.len() != arrays + queues {
            let what = match (r.clause.is_some(), queues) {
                (true, 0) => "an array or a section",
                (true, _) => "an array or a section, then a queue",
                (false, 0) => "no arguments",
                (false, 1) => "a queue",
                (false, _) => "two queues (the one waited for, then the one that waits)",
            };
            self.err(
                Diag::error(
                    "accl::type::builtin_args",
                    format!("`{}` takes {what}; {} given", f.name, args.len()),
                    span,
                    "this call",
                )
                .with_help(format!("it is the directive `{}`", spelled(&f.name, &r))),
            );
            return Some(Err(()));
        }
        let clause = |name: &str, args: ClauseArgs, span: Span| Clause {
            name: Ident {
                name: name.to_string(),
                span,
            },
            args,
            span,
        };
        let mut clauses = Vec::new();
        let mut wait_args = None;
        match r.clause {
            Some(c) => clauses.push(clause(
                c,
                ClauseArgs::List(vec![args[0].clone()]),
                args[0].span,
            )),
            None if waits_for_one(&f.name) => {
                wait_args = Some(vec![args[0].clone()]);
            }
            None => {}
        }
        if r.finalize {
            clauses.push(clause("finalize", ClauseArgs::None, f.span));
        }
        if r.queued {
            let q = args.last().expect("counted above");
            clauses.push(clause("async", ClauseArgs::List(vec![q.clone()]), q.span));
        }
        Some(Ok(Directive {
            kind: r.kind,
            kind_span: f.span,
            wait_args,
            clauses,
            body: DirectiveBody::None,
        }))
    }
}

/// `acc_wait(q)` and `acc_wait_async(q, r)` name the queue waited for.
fn waits_for_one(name: &str) -> bool {
    name == "acc_wait" || name == "acc_wait_async"
}

/// How the directive a routine equals is written, for help text.
fn spelled(name: &str, r: &Routine) -> String {
    let mut s = r.kind.name().to_string();
    if waits_for_one(name) {
        s.push_str("(q)");
    }
    if let Some(c) = r.clause {
        s.push_str(&format!(" {c}(a)"));
    }
    if r.finalize {
        s.push_str(" finalize");
    }
    if r.queued {
        s.push_str(" async(q)");
    }
    s + ";"
}
