//! Assignments: the target (a local, a top-level variable from a
//! function, an array element) resolved and checked, compound operators,
//! and the updates of a reduced array.

use super::{ast, hir, Binding, Checker, Diag, Span, Type};

impl Checker<'_> {
    pub(super) fn assign(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: Option<ast::BinOp>,
        op_span: Span,
        value: &ast::Expr,
    ) -> Option<hir::StmtKind> {
        if let ast::ExprKind::Index(a, _) = &target.kind {
            if let ast::ExprKind::Var(name) = &a.kind {
                if let Some(Binding::Local(l)) = self.lookup(name) {
                    if let Some(red) = self.reduced_array(l) {
                        let name = name.clone();
                        return self.reduced_array_update(
                            s,
                            target,
                            op,
                            op_span,
                            value,
                            (&name, red),
                        );
                    }
                }
            }
        }
        let (place, tty) = self.place(target, true)?;
        if op.is_some() {
            self.note_element_read(target);
        }
        if tty.is_array() {
            if op.is_some() {
                self.err(
                    Diag::error(
                        "accl::type::array_compound_assign",
                        "compound assignment to a whole array",
                        op_span,
                        "arrays are not numbers",
                    )
                    .with_help("update the elements in a loop"),
                );
                return None;
            }
            if !self.dev.is_empty() {
                self.err(Diag::error(
                    "accl::device::array_let",
                    "arrays cannot be re-bound inside a device construct",
                    s.span,
                    "array assignment in device code",
                ));
                return None;
            }
        }
        let (mut v, vty) = self.expr(value, Some(tty));
        match op {
            None => self.coerce(v, vty, tty, value.span),
            Some(op) => {
                let rty = if op.is_shift() {
                    if !tty.is_int_like() && tty != Type::Error {
                        self.bad_operands(op, tty, vty, op_span);
                    }
                    let want = if vty == Type::IntLit { tty } else { vty };
                    self.coerce(v, vty, want, value.span);
                    // Both backends shift by a count of the target's type.
                    if let (Type::Scalar(t), Type::Scalar(c)) = (tty, vty) {
                        if t != c && c.is_int() && t.is_int() {
                            v = self.push(hir::Expr::Cast(v, t), tty, value.span).0;
                        }
                    }
                    tty
                } else {
                    self.coerce(v, vty, tty, value.span);
                    self.binary_result(op, tty, op_span, tty, tty)
                };
                if rty != Type::Error && rty != tty && tty != Type::Error {
                    self.err(Diag::error(
                        "accl::type::mismatch",
                        format!(
                            "`{}=` gives a `{rty}`, which cannot be stored in a `{tty}`",
                            op.symbol()
                        ),
                        op_span,
                        "type changes",
                    ));
                }
            }
        }
        let _ = s;
        Some(hir::StmtKind::Assign {
            place,
            op,
            value: v,
        })
    }

    /// An update of an array element (`a[i] += v`, an atomic one) reads
    /// the element too: the array is both read and written.
    pub(super) fn note_element_read(&mut self, target: &ast::Expr) {
        if let ast::ExprKind::Index(a, _) = &target.kind {
            if let ast::ExprKind::Var(name) = &a.kind {
                if let Some(Binding::Local(l)) = self.lookup(name) {
                    let array = self.body.locals[l].ty.is_array();
                    if array && !self.dev.is_empty() && self.reduced_array(l).is_none() {
                        self.note_array(l, a.span, false);
                    }
                }
            }
        }
    }

    /// Resolve an assignment target. `write` records the write for captures.
    pub(super) fn place(&mut self, target: &ast::Expr, write: bool) -> Option<(hir::Place, Type)> {
        match &target.kind {
            ast::ExprKind::Var(name) => match self.lookup(name) {
                Some(Binding::Local(l)) => {
                    let local = &self.body.locals[l];
                    let ty = local.ty;
                    if local.constant {
                        self.constant_written(name, target.span, "assigned here");
                        return None;
                    }
                    if !local.mutable {
                        let decl = self.body.locals.span(l);
                        self.err(
                            Diag::error(
                                "accl::type::assign_to_loop_var",
                                format!("cannot assign to loop variable `{name}`"),
                                target.span,
                                "assigned here",
                            )
                            .with_label(decl, "declared by this loop")
                            .with_help("copy it first: `let j = i;`"),
                        );
                        return None;
                    }
                    if write {
                        self.note_scalar_write(l, name, target.span)?;
                    }
                    Some((hir::Place::Local(l), ty))
                }
                Some(Binding::Global(l)) => {
                    if self.out.main.locals[l].constant {
                        self.constant_written(name, target.span, "assigned here");
                        return None;
                    }
                    let ty = self.global_use(l, name, target.span)?;
                    Some((hir::Place::Global(l), ty))
                }
                Some(Binding::Const(_)) => {
                    self.err(
                        Diag::error(
                            "accl::type::assign_to_const",
                            format!("cannot assign to constant `{name}`"),
                            target.span,
                            "a constant",
                        )
                        .with_help(format!(
                            "declare it with `let {name} = ..;` to make it variable"
                        )),
                    );
                    None
                }
                None => {
                    self.unknown_name(name, target.span);
                    None
                }
            },
            ast::ExprKind::Index(a, ix) => {
                let (array, elem, indices) = self.index_parts(a, ix, target.span, write)?;
                Some((hir::Place::Element { array, indices }, Type::Scalar(elem)))
            }
            ast::ExprKind::Error => None,
            _ => {
                self.err(Diag::error(
                    "accl::type::not_assignable",
                    "cannot assign to this expression",
                    target.span,
                    "not a variable or an array element",
                ));
                None
            }
        }
    }
}
