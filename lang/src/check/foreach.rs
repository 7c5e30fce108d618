//! `for c in s { .. }` and `for p in split(s, sep) { .. }`: loops over the
//! characters or the parts of a string, written as the counted loop they
//! are (`for i in 0..len(s) { let c = char_at(s, i); .. }`, with
//! `split_count`/`split_part`), so that nothing after the checker sees a new
//! kind of loop. Strings live on the host: inside a device construct both
//! are errors.

use super::Checker;
use crate::ast;
use crate::diag::Diag;
use crate::hir::{self, ExprH};
use crate::span::Span;
use crate::types::Type;
use crate::value::Value;

/// What a `for .. in` walks.
enum Walk {
    /// The characters of the string (one-character strings).
    Chars(ExprH),
    /// The parts of the string between separators.
    Split(ExprH, ExprH),
}

impl Checker<'_> {
    pub(super) fn for_each(&mut self, f: &ast::ForEach) -> hir::StmtKind {
        let walk = self.walk(&f.iter);
        self.push_scope();
        let mut pre = Vec::new();
        // The string (and separator) are read once, before the loop.
        // Each read keeps the span of what it reads: a run-time error (an
        // empty separator) points at the argument.
        let mut hidden = |ck: &mut Self, h: ExprH, what: &str| {
            let sp = ck.body.exprs.span(h);
            let local = ck.new_local(what, Type::Str, false, sp);
            pre.push(stmt(hir::StmtKind::Let { local, init: h }, sp));
            ck.push(hir::Expr::Local(local), Type::Str, sp).0
        };
        let (count, item, args) = match walk {
            Some(Walk::Chars(s)) => ("len", "char_at", vec![hidden(self, s, "$text")]),
            Some(Walk::Split(s, sep)) => {
                let s = hidden(self, s, "$text");
                let sep = hidden(self, sep, "$separator");
                ("split_count", "split_part", vec![s, sep])
            }
            None => ("", "", Vec::new()),
        };
        let span = f.iter.span;
        let lo = self.constant(Value::I32(0), span).0;
        let hi = if args.is_empty() {
            lo
        } else {
            self.builtin_call(count, args.clone(), Type::I32, span)
        };
        let index = self.new_local("$index", Type::I32, false, f.var.span);
        let ty = if args.is_empty() {
            Type::Error
        } else {
            Type::Str
        };
        let var = self.new_local(&f.var.name, ty, false, f.var.span);
        let mut body = Vec::new();
        if !args.is_empty() {
            let mut item_args = args;
            item_args.push(self.push(hir::Expr::Local(index), Type::I32, f.var.span).0);
            let init = self.builtin_call(item, item_args, Type::Str, f.var.span);
            body.push(stmt(hir::StmtKind::Let { local: var, init }, f.var.span));
        }
        self.loop_stack.push(self.scopes.len());
        body.extend(self.block(&f.body));
        self.loop_stack.pop();
        self.pop_scope();
        let header = hir::LoopHeader {
            var: index,
            lo,
            hi,
            inclusive: false,
            span: f.span,
        };
        pre.push(stmt(
            hir::StmtKind::For(hir::ForLoop { header, body }),
            f.span,
        ));
        hir::StmtKind::Block(pre)
    }

    /// Check the iterated expression: a string, or `split(s, sep)`.
    fn walk(&mut self, e: &ast::Expr) -> Option<Walk> {
        if let ast::ExprKind::Call(name, args) = &e.kind {
            if name.name == "split" && !self.fn_names.contains_key("split") {
                self.host_string(e.span);
                return self.split_args(name, args, e.span);
            }
        }
        let (h, t) = self.expr(e, None);
        match t {
            Type::Str => {
                self.host_string(e.span);
                Some(Walk::Chars(h))
            }
            Type::Error => None,
            t => {
                self.err(
                    Diag::error(
                        "accl::type::not_iterable",
                        format!("`for .. in` walks a range or a string, not `{t}`"),
                        e.span,
                        format!("a value of type `{t}`"),
                    )
                    .with_help(
                        "loop over a range of integers (`for i in 0..n`), the characters of a string (`for c in s`) or its parts (`for p in split(s, \",\")`)",
                    ),
                );
                None
            }
        }
    }

    fn split_args(&mut self, name: &ast::Ident, args: &[ast::Expr], span: Span) -> Option<Walk> {
        let mut hs = Vec::new();
        for a in args {
            let (h, t) = self.expr(a, None);
            if t != Type::Str && t != Type::Error {
                self.err(Diag::error(
                    "accl::type::builtin_args",
                    format!("`split` takes strings, not `{t}`"),
                    a.span,
                    "not a string",
                ));
                return None;
            }
            hs.push((h, t));
        }
        let [(s, st), (sep, sept)] = hs[..] else {
            self.err(
                Diag::error(
                    "accl::type::builtin_args",
                    format!("`split` takes 2 arguments, found {}", args.len()),
                    span,
                    "expected `split(s, sep)`",
                )
                .with_label(name.span, "the parts of `s` between the separators `sep`"),
            );
            return None;
        };
        if st == Type::Error || sept == Type::Error {
            return None;
        }
        if matches!(&self.body.exprs[sep], hir::Expr::Str(t) if t.is_empty()) {
            self.err(empty_separator(
                "accl::type::empty_separator",
                self.body.exprs.span(sep),
            ));
            return None;
        }
        Some(Walk::Split(s, sep))
    }

    fn builtin_call(&mut self, name: &str, args: Vec<ExprH>, ret: Type, span: Span) -> ExprH {
        match self.builtins.lookup(name) {
            Some(id) => self.push(hir::Expr::Builtin(id, args), ret, span).0,
            // The standard library always has them; a front end used without
            // it gets an error rather than a panic.
            None => {
                self.err(Diag::error(
                    "accl::type::unknown_function",
                    format!("`for .. in` over a string needs the builtin `{name}`"),
                    span,
                    "not available here",
                ));
                self.error_expr(span).0
            }
        }
    }

    /// `split(..)` anywhere but after `for .. in`.
    pub(super) fn split_outside_for(&mut self, span: Span) {
        self.err(
            Diag::error(
                "accl::type::split_outside_for",
                "`split(s, sep)` is walked by a `for` loop",
                span,
                "not after `for .. in`",
            )
            .with_help("write `for part in split(s, sep) { .. }`; `split_count(s, sep)` and `split_part(s, sep, i)` reach the parts by number"),
        );
    }
}

fn stmt(kind: hir::StmtKind, span: Span) -> hir::Stmt {
    hir::Stmt { kind, span }
}

/// The diagnostic of an empty separator: at check time for a literal `""`,
/// else at run time.
pub fn empty_separator(code: &'static str, span: Span) -> Diag {
    Diag::error(
        code,
        "`split` needs a separator that is not empty",
        span,
        "an empty separator",
    )
    .with_help("walk the characters with `for c in s { .. }`")
}
