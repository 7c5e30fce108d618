//! Tuples: functions returning several scalars, `return (a, b);`, and
//! destructuring, `let (a, _) = f(..);` and `(x, y[i]) = f(..);`.
//!
//! A tuple is never a value a variable holds: it is the result of a call
//! that is destructured at once (or of `return`). So the HIR has just two
//! tuple forms: [`hir::Expr::Tuple`], the operand of `return` or of a
//! destructuring, and [`hir::StmtKind::LetTuple`], which binds the
//! elements of a call's result or of a tuple expression to new locals.
//! Everything else is lowered here onto those and plain `let` and
//! assignment: `return g(..)` binds `g`'s results and returns them,
//! `(a, b) = rhs` binds the right side to hidden locals and assigns them,
//! so that the usual checks of assignment (races, reductions, constants)
//! apply to each target, and the right side is evaluated before any
//! target is written (`(a, b) = (b, a)` swaps).

use super::expr::mismatch;
use super::{ast, hir, type_of, Binding, Checker, Diag, ExprH, Span, Type};
use crate::ast::ExprKind;
use crate::hir::LocalH;
use crate::types::{Scalar, Tuple};

/// The names of hidden locals are not identifiers, so no program names
/// one (and the engine does not count them among the top-level variables).
const HIDDEN: &str = "tuple#";

impl Checker<'_> {
    /// An expression in a place that needs a single value: a tuple there
    /// (a call of a function returning one) is reported.
    pub(super) fn expr(&mut self, e: &ast::Expr, expect: Option<Type>) -> (ExprH, Type) {
        let (h, ty) = self.expr_any(e, expect);
        let Type::Tuple(t) = ty else {
            return (h, ty);
        };
        self.err(tuple_value(t, e.span, &self.snippet(e.span)));
        self.body.types[h.index()] = Type::Error;
        (h, Type::Error)
    }

    /// `(a, b)` where no tuple can be: reported.
    pub(super) fn misplaced_tuple(&mut self, elems: &[ast::Expr], span: Span) -> (ExprH, Type) {
        for e in elems {
            self.expr(e, None);
        }
        self.err(
            Diag::error(
                "accl::type::tuple_expr",
                "a tuple cannot be used here",
                span,
                "tuple expression",
            )
            .with_help(
                "a tuple `(a, b)` is returned from a function declared `-> (T, U)`, or destructured: `let (x, y) = (a, b);`",
            ),
        );
        self.error_expr(span)
    }

    /// A type written for a variable or a parameter: a tuple type there is
    /// reported (and stands for an error).
    pub(super) fn value_type(&mut self, t: ast::TypeExpr, what: &str) -> Type {
        if t.tuple.is_none() {
            return type_of(t);
        }
        let help = if what == "parameter" {
            "pass the elements as parameters of their own"
        } else {
            "destructure the tuple into variables: `let (a, b) = f(..);`"
        };
        self.err(
            Diag::error(
                "accl::type::tuple_type",
                format!("a {what} cannot be a tuple"),
                t.span,
                "tuple type",
            )
            .with_help(help),
        );
        Type::Error
    }

    /// `let (a, _, c: T) = init;`
    pub(super) fn let_tuple(
        &mut self,
        s: &ast::Stmt,
        pats: &[ast::TuplePat],
        init: &ast::Expr,
    ) -> Option<hir::Stmt> {
        let wants: Vec<Option<Type>> = pats
            .iter()
            .map(|p| p.ty.map(|t| self.value_type(t, "variable")))
            .collect();
        for (i, p) in pats.iter().enumerate() {
            let first = pats[..i].iter().find(|q| q.name.name == p.name.name);
            if let (false, Some(q)) = (p.is_wildcard(), first) {
                self.err(
                    Diag::error(
                        "accl::name::duplicate_binding",
                        format!("`{}` is bound twice in one destructuring", p.name.name),
                        p.name.span,
                        "second binding",
                    )
                    .with_label(q.name.span, "first here")
                    .with_help("give each element its own name, or `_` to drop it"),
                );
            }
        }
        let kind = match &init.kind {
            ExprKind::Tuple(elems) => {
                let mut vals = Vec::new();
                for (i, e) in elems.iter().enumerate() {
                    vals.push(self.element(e, wants.get(i).copied().flatten()));
                }
                if !self.same_arity(pats.len(), pats_span(pats), elems.len(), init.span) {
                    return None;
                }
                if elems.len() > Tuple::MAX {
                    self.err(
                        Diag::error(
                            "accl::type::tuple_arity",
                            format!("a tuple has at most {} elements", Tuple::MAX),
                            init.span,
                            format!("{} elements", elems.len()),
                        )
                        .with_help("destructure it in parts"),
                    );
                    return None;
                }
                // Every value is computed (and every name resolved) before
                // any variable is declared.
                let mut locals = Vec::new();
                let mut hs = Vec::new();
                let mut elems = Vec::new();
                for (p, (h, ty)) in pats.iter().zip(vals) {
                    hs.push(h);
                    elems.push(ty.scalar().unwrap_or(Scalar::F64));
                    locals.push(
                        (!p.is_wildcard())
                            .then(|| self.new_local(&p.name.name, ty, true, p.name.span)),
                    );
                }
                let ty = Tuple::new(&elems).map_or(Type::Error, Type::Tuple);
                let (init, _) = self.push(hir::Expr::Tuple(hs), ty, init.span);
                hir::StmtKind::LetTuple { locals, init }
            }
            _ => {
                let (h, t) = self.tuple_call(init)?;
                if !self.same_arity(pats.len(), pats_span(pats), t.len(), init.span) {
                    return None;
                }
                let mut locals = Vec::new();
                for ((p, want), &elem) in pats.iter().zip(&wants).zip(t.elems()) {
                    let mut ty = Type::Scalar(elem);
                    if let (Some(w), Some(te)) = (want, p.ty) {
                        if *w != ty && *w != Type::Error {
                            self.err(
                                Diag::error(
                                    "accl::type::mismatch",
                                    format!("expected `{w}`, found `{ty}`"),
                                    te.span,
                                    format!("`{w}` here"),
                                )
                                .with_label(init.span, format!("this returns `{t}`"))
                                .with_help(format!(
                                    "destructure it into a `{ty}` variable and convert that with `as {w}`"
                                )),
                            );
                            ty = Type::Error;
                        }
                    }
                    locals.push(
                        (!p.is_wildcard())
                            .then(|| self.new_local(&p.name.name, ty, true, p.name.span)),
                    );
                }
                hir::StmtKind::LetTuple { locals, init: h }
            }
        };
        Some(hir::Stmt { kind, span: s.span })
    }

    /// `(a, b) = value;` (`_` drops an element): the right side into hidden
    /// locals, then one assignment per target.
    pub(super) fn assign_tuple(
        &mut self,
        s: &ast::Stmt,
        targets: &[ast::Expr],
        op: Option<(ast::BinOp, Span)>,
        value: &ast::Expr,
    ) -> Option<hir::Stmt> {
        if let Some((op, op_span)) = op {
            self.err(
                Diag::error(
                    "accl::type::tuple_compound_assign",
                    format!("`{}=` cannot assign to a tuple", op.symbol()),
                    op_span,
                    "compound assignment",
                )
                .with_help("assign the elements one by one"),
            );
            return None;
        }
        self.push_scope();
        let pats: Vec<ast::TuplePat> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| ast::TuplePat {
                name: ast::Ident {
                    name: if is_wildcard(t) {
                        "_".to_string()
                    } else {
                        format!("{HIDDEN}{i}")
                    },
                    span: t.span,
                },
                // The target's type, for literals to take and for a
                // mismatch to be told against the value.
                ty: self.target_scalar(t).map(|elem| ast::TypeExpr {
                    elem,
                    rank: 0,
                    string: false,
                    tuple: None,
                    span: t.span,
                }),
            })
            .collect();
        let bind = self.let_tuple(s, &pats, value);
        let mut block: Vec<hir::Stmt> = bind.into_iter().collect();
        if !block.is_empty() {
            for (t, p) in targets.iter().zip(&pats) {
                if p.is_wildcard() {
                    continue;
                }
                let assign = ast::Stmt {
                    kind: ast::StmtKind::Assign {
                        target: t.clone(),
                        op: None,
                        op_span: p.name.span,
                        value: ast::Expr::new(ExprKind::Var(p.name.name.clone()), p.name.span),
                    },
                    span: s.span,
                };
                block.extend(self.stmt(&assign));
            }
        }
        self.pop_scope();
        (!block.is_empty()).then_some(hir::Stmt {
            kind: hir::StmtKind::Block(block),
            span: s.span,
        })
    }

    /// `return e;` from a function returning the tuple `t`.
    pub(super) fn return_tuple(&mut self, s: &ast::Stmt, e: &ast::Expr, t: Tuple) -> hir::StmtKind {
        let ret = Type::Tuple(t);
        let elems = match &e.kind {
            ExprKind::Tuple(elems) => {
                let mut hs = Vec::new();
                for (i, x) in elems.iter().enumerate() {
                    let want = t.elems().get(i).map(|&s| Type::Scalar(s));
                    let (h, ty) = self.expr(x, want);
                    match want {
                        Some(w) => self.coerce(h, ty, w, x.span),
                        None => {
                            self.finalize(h, ty);
                        }
                    }
                    hs.push(h);
                }
                if hs.len() != t.len() {
                    self.err(
                        Diag::error(
                            "accl::type::tuple_arity",
                            format!("this function returns {} values, not {}", t.len(), hs.len()),
                            e.span,
                            format!("{} values", hs.len()),
                        )
                        .with_help(format!("return a `{t}`")),
                    );
                }
                let (h, _) = self.push(hir::Expr::Tuple(hs), ret, e.span);
                return hir::StmtKind::Return(Some(h));
            }
            ExprKind::Call(..) => {
                let (h, got) = self.expr_any(e, Some(ret));
                match got {
                    Type::Tuple(g) if g == t => h,
                    Type::Error => return hir::StmtKind::Return(None),
                    _ => {
                        self.err(mismatch(ret, got, e.span));
                        return hir::StmtKind::Return(None);
                    }
                }
            }
            _ => {
                let (_, got) = self.expr(e, None);
                if got != Type::Error {
                    self.err(mismatch(ret, got, e.span).with_help(format!(
                        "return one value per element: `return (a, b);` for a `{t}`"
                    )));
                }
                return hir::StmtKind::Return(None);
            }
        };
        // `return g(..)`: bind its results, return them.
        let locals: Vec<LocalH> = t
            .elems()
            .iter()
            .map(|&s| self.hidden_local(Type::Scalar(s), e.span))
            .collect();
        let reads: Vec<ExprH> = locals
            .iter()
            .zip(t.elems())
            .map(|(&l, &s)| self.push(hir::Expr::Local(l), Type::Scalar(s), e.span).0)
            .collect();
        let (tuple, _) = self.push(hir::Expr::Tuple(reads), ret, e.span);
        hir::StmtKind::Block(vec![
            hir::Stmt {
                kind: hir::StmtKind::LetTuple {
                    locals: locals.into_iter().map(Some).collect(),
                    init: elems,
                },
                span: s.span,
            },
            hir::Stmt {
                kind: hir::StmtKind::Return(Some(tuple)),
                span: s.span,
            },
        ])
    }

    /// A call of a function returning a tuple, whose results are unused.
    pub(super) fn discard_tuple(&mut self, h: ExprH, t: Tuple) -> hir::StmtKind {
        hir::StmtKind::LetTuple {
            locals: vec![None; t.len()],
            init: h,
        }
    }

    /// One element of a tuple expression being destructured: a scalar.
    fn element(&mut self, e: &ast::Expr, want: Option<Type>) -> (ExprH, Type) {
        let (h, got) = self.expr(e, want);
        let ty = match want {
            Some(w) => {
                self.coerce(h, got, w, e.span);
                w
            }
            None => self.finalize(h, got),
        };
        if ty.scalar().is_none() && ty != Type::Error {
            self.err(
                Diag::error(
                    "accl::type::tuple_element",
                    format!("a tuple cannot hold a `{ty}`"),
                    e.span,
                    "not a scalar",
                )
                .with_help("the elements of a tuple are scalars: `bool`, integers and floats; assign other values on their own"),
            );
            return (h, Type::Error);
        }
        (h, ty)
    }

    /// The right side of a destructuring that is not a tuple expression:
    /// a call of a function returning a tuple.
    fn tuple_call(&mut self, init: &ast::Expr) -> Option<(ExprH, Tuple)> {
        let (h, ty) = self.expr_any(init, None);
        match ty {
            Type::Tuple(t) => Some((h, t)),
            Type::Error => None,
            other => {
                let other = self.finalize(h, other);
                self.err(
                    Diag::error(
                        "accl::type::not_a_tuple",
                        format!("cannot destructure a `{other}`"),
                        init.span,
                        format!("this is a `{other}`, not a tuple"),
                    )
                    .with_help(
                        "destructure a call of a function returning a tuple, or a tuple `(a, b)`",
                    ),
                );
                None
            }
        }
    }

    /// Do the destructuring's `n` targets match the value's `m` elements?
    fn same_arity(&mut self, n: usize, pat_span: Span, m: usize, span: Span) -> bool {
        if n == m {
            return true;
        }
        self.err(
            Diag::error(
                "accl::type::tuple_arity",
                format!("{n} variables cannot take {m} values"),
                span,
                format!("{m} values"),
            )
            .with_label(pat_span, format!("{n} variables"))
            .with_help("name one variable per element; `_` drops an element"),
        );
        false
    }

    /// The scalar type of an assignment's target, where it is plainly one
    /// (a variable or an element of an array variable).
    fn target_scalar(&self, t: &ast::Expr) -> Option<Scalar> {
        let var = |name: &str| match self.lookup(name)? {
            Binding::Local(l) => Some(self.body.locals[l].ty),
            Binding::Global(l) => Some(self.out.main.locals[l].ty),
            Binding::Const(_) => None,
        };
        match &t.kind {
            ExprKind::Var(n) => var(n)?.scalar(),
            ExprKind::Index(a, _) => match &a.kind {
                ExprKind::Var(n) => match var(n)? {
                    Type::Array(s, _) => Some(s),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// A local no name reaches: a dropped element, a result on its way.
    fn hidden_local(&mut self, ty: Type, span: Span) -> LocalH {
        let n = self.body.locals.len();
        self.push_scope();
        let l = self.new_local(&format!("{HIDDEN}{n}"), ty, true, span);
        self.pop_scope();
        l
    }
}

/// The variables of a destructuring, first to last.
fn pats_span(pats: &[ast::TuplePat]) -> Span {
    match (pats.first(), pats.last()) {
        (Some(a), Some(b)) => a.name.span.to(b.ty.map_or(b.name.span, |t| t.span)),
        _ => Span::new(0, 0),
    }
}

fn is_wildcard(e: &ast::Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if n == "_")
}

/// A tuple where one value is needed.
fn tuple_value(t: Tuple, span: Span, text: &str) -> Diag {
    let names: Vec<String> = (0..t.len())
        .map(|i| ((b'a' + i as u8) as char).to_string())
        .collect();
    Diag::error(
        "accl::type::tuple_value",
        format!("a tuple `{t}` cannot be used as one value"),
        span,
        format!("this is a `{t}`"),
    )
    .with_help(format!(
        "destructure it into variables: `let ({}) = {text};`",
        names.join(", ")
    ))
}
