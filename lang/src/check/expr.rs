//! Expressions: typing, literal coercion, constant folding, captures.

use super::{Binding, Checker};
use crate::ast::{self, BinOp, ExprKind, UnOp};
use crate::diag::Diag;
use crate::hir::{self, ExprH, LocalH};
use crate::span::Span;
use crate::types::{Scalar, Type};
use crate::value::{Value, ValueError};

impl Checker<'_> {
    pub(super) fn push(&mut self, e: hir::Expr, ty: Type, span: Span) -> (ExprH, Type) {
        let h = self.body.exprs.append(e, span);
        self.body.types.push(ty);
        (h, ty)
    }

    pub(super) fn error_expr(&mut self, span: Span) -> (ExprH, Type) {
        self.push(hir::Expr::Const(Value::Bool(false)), Type::Error, span)
    }

    pub(super) fn constant(&mut self, v: Value, span: Span) -> (ExprH, Type) {
        self.push(hir::Expr::Const(v), v.ty(), span)
    }

    /// Give a literal-typed expression its default type (`i32`, `f64`).
    pub(super) fn finalize(&mut self, h: ExprH, ty: Type) -> Type {
        let d = ty.defaulted();
        if d != ty {
            self.coerce(h, ty, d, self.body.exprs.span(h));
        }
        d
    }

    /// Make the expression `h` (of type `got`) have type `want`, or report
    /// the mismatch. Literals are converted (with a range check).
    pub(super) fn coerce(&mut self, h: ExprH, got: Type, want: Type, span: Span) {
        if got == want || got == Type::Error || want == Type::Error {
            return;
        }
        if got.is_literal() {
            if let (hir::Expr::Const(v), Some(t)) = (&self.body.exprs[h], want.scalar()) {
                let v = *v;
                match v.concretize(t) {
                    Some(c) => {
                        self.body.exprs[h] = hir::Expr::Const(c);
                        self.body.types[h.index()] = want;
                    }
                    None => {
                        let d = if got == Type::IntLit && t.is_int() {
                            let (lo, hi) = t.int_range().unwrap_or((0, 0));
                            Diag::error(
                                "accl::type::literal_out_of_range",
                                format!("the value {v} does not fit in `{t}`"),
                                span,
                                format!("`{t}` holds {lo}..={hi}"),
                            )
                            .with_help(wider_help(v, t))
                        } else if got == Type::FloatLit && t.is_int() {
                            Diag::error(
                                "accl::type::mismatch",
                                format!("expected `{t}`, found a float literal"),
                                span,
                                format!("expected `{t}`"),
                            )
                            .with_help(format!(
                                "convert it explicitly: `{}`",
                                cast_text(&self.snippet(span), t)
                            ))
                        } else {
                            let d = mismatch(want, got, span);
                            match self.conversion_help(got, want, span) {
                                Some(help) => d.with_help(help),
                                None => d,
                            }
                        };
                        self.err(d);
                        self.body.types[h.index()] = Type::Error;
                    }
                }
                return;
            }
        }
        let mut d = mismatch(want, got, span);
        if let Some(help) = self.conversion_help(got, want, span) {
            d = d.with_help(help);
        }
        self.err(d);
    }

    /// How to turn a value of type `got` (source text at `span`) into a
    /// `want`, when a cast or comparison can: the help of a mismatch.
    pub(super) fn conversion_help(&self, got: Type, want: Type, span: Span) -> Option<String> {
        let text = self.snippet(span);
        let zero = |t: Type| if t.is_float_like() { "0.0" } else { "0" };
        match (got, want.scalar()?) {
            (Type::IntLit | Type::FloatLit, Scalar::Bool) => {
                Some("write `true` or `false`, or a comparison such as `n > 0`".to_string())
            }
            (_, Scalar::Bool) if got.is_numeric_like() => {
                Some(format!("compare instead: `{text} != {}`", zero(got)))
            }
            (Type::Scalar(Scalar::Bool), t) if t.is_float() => Some(format!(
                "a `bool` converts to a number through an integer: `({text} as i32 as {t})`"
            )),
            (Type::Scalar(_), t) => {
                Some(format!("convert it explicitly: `{}`", cast_text(&text, t)))
            }
            (Type::IntLit | Type::FloatLit, t) => {
                Some(format!("convert it explicitly: `{}`", cast_text(&text, t)))
            }
            _ => None,
        }
    }

    /// The non-blank text strictly between two spans (the operator of a
    /// binary expression), if any.
    pub(super) fn between(&self, a: Span, b: Span) -> Option<Span> {
        let (lo, hi) = (a.end as usize, b.start as usize);
        let text = self.src.get(lo..hi)?;
        let start = lo + (text.len() - text.trim_start().len());
        let end = hi - (text.len() - text.trim_end().len());
        (start < end).then(|| Span::new(start, end))
    }

    /// The source text of a span, for help lines.
    pub(super) fn snippet(&self, span: Span) -> String {
        self.src.get(span.range()).unwrap_or("..").to_string()
    }

    /// Unify the operand types of a binary operation, coercing literals.
    pub(super) fn unify(
        &mut self,
        a: ExprH,
        at: Type,
        b: ExprH,
        bt: Type,
        span: Span,
        op: Option<BinOp>,
    ) -> Type {
        if at == Type::Error || bt == Type::Error {
            return Type::Error;
        }
        if at == bt {
            return at;
        }
        match (at.is_literal(), bt.is_literal()) {
            // A float literal never becomes an integer: the fix is to convert
            // the integer operand, so say that rather than "cast the literal".
            (true, false) if at == Type::FloatLit && bt.is_int_like() => {
                self.float_literal_with_int(a, b, bt, span, op, true)
            }
            (false, true) if bt == Type::FloatLit && at.is_int_like() => {
                self.float_literal_with_int(b, a, at, span, op, false)
            }
            (true, false) => {
                self.coerce(a, at, bt, self.body.exprs.span(a));
                self.body.types[a.index()].max_err(bt)
            }
            (false, true) => {
                self.coerce(b, bt, at, self.body.exprs.span(b));
                self.body.types[b.index()].max_err(at)
            }
            (true, true) => Type::FloatLit,
            (false, false) => {
                let sa = self.body.exprs.span(a);
                let sb = self.body.exprs.span(b);
                // The primary label sits on the operator between the operands
                // (labels that overlap on one line render garbled).
                let op_span = self.between(sa, sb).unwrap_or(span);
                let mut d = Diag::error(
                    "accl::type::mismatch",
                    format!("mismatched types `{at}` and `{bt}`"),
                    op_span,
                    "no implicit conversion between these",
                );
                if op_span != span {
                    d = d
                        .with_label(sa, format!("this is `{at}`"))
                        .with_label(sb, format!("this is `{bt}`"));
                }
                if let (Some(x), Some(y)) = (at.scalar(), bt.scalar()) {
                    // Suggest converting the narrower operand into the wider one.
                    let (ta, tb) = (self.snippet(sa), self.snippet(sb));
                    let (ta, tb) = if rank_of(x) >= rank_of(y) {
                        (ta, cast_text(&tb, x))
                    } else {
                        (cast_text(&ta, y), tb)
                    };
                    d = d.with_help(match op {
                        Some(op) => format!("convert explicitly: `{ta} {} {tb}`", op.symbol()),
                        None => format!("convert explicitly: `{ta}` and `{tb}`"),
                    });
                }
                self.err(d);
                Type::Error
            }
        }
    }

    /// `2.5 * i` with `i: i32`: report it with a help that converts `i`.
    fn float_literal_with_int(
        &mut self,
        lit: ExprH,
        int: ExprH,
        int_ty: Type,
        span: Span,
        op: Option<BinOp>,
        lit_first: bool,
    ) -> Type {
        let (ls, is) = (self.body.exprs.span(lit), self.body.exprs.span(int));
        let (lt, it) = (self.snippet(ls), self.snippet(is));
        let conv = cast_text(&it, Scalar::F64);
        let help = match (op, lit_first) {
            (Some(op), true) => format!(
                "convert the integer: `{lt} {} {conv}` (or `as f32`)",
                op.symbol()
            ),
            (Some(op), false) => format!(
                "convert the integer: `{conv} {} {lt}` (or `as f32`)",
                op.symbol()
            ),
            (None, _) => format!("convert the integer: `{conv}` (or `as f32`)"),
        };
        // As in `unify`: the primary label goes on the operator, since
        // labels that overlap on one line render garbled.
        let (first, second) = if lit_first { (ls, is) } else { (is, ls) };
        let op_span = self.between(first, second).unwrap_or(span);
        let mut d = Diag::error(
            "accl::type::mismatch",
            format!("a float literal cannot be combined with `{int_ty}`"),
            op_span,
            "no implicit conversion between these",
        );
        if op_span != span {
            d = d
                .with_label(ls, "a float literal")
                .with_label(is, format!("this is `{int_ty}`"));
        }
        self.err(d.with_help(help));
        Type::Error
    }

    pub(super) fn bad_operands(&mut self, op: BinOp, at: Type, bt: Type, span: Span) {
        let what = if op.is_logical() {
            "`bool` operands"
        } else if op.is_bitwise() {
            "integer or `bool` operands"
        } else if op.is_shift() {
            "integer operands"
        } else if op.is_comparison() {
            "two numbers or two `bool`s"
        } else {
            "numeric operands"
        };
        let mut d = Diag::error(
            "accl::type::bad_operands",
            format!("`{}` cannot be applied to `{at}` and `{bt}`", op.symbol()),
            span,
            format!("`{}` takes {what}", op.symbol()),
        );
        if at.is_array() || bt.is_array() {
            // No whole-array arithmetic: show the loop to write.
            let s = op.symbol();
            d = d.with_help(format!(
                "operators work on elements; write the loop, e.g. `let y = zeros(T, len(x)); parallel loop for i in 0..len(x) {{ y[i] = x[i] {s} v; }}`"
            ));
        }
        self.err(d);
    }

    /// The result type of `a op b` where both operands have type `t`.
    pub(super) fn binary_result(
        &mut self,
        op: BinOp,
        t: Type,
        span: Span,
        at: Type,
        bt: Type,
    ) -> Type {
        if t == Type::Error {
            return Type::Error;
        }
        let ok = match op {
            // `s += "text"` (binary operators on strings take another path).
            BinOp::Add if t == Type::Str => true,
            BinOp::And | BinOp::Or => t == Type::BOOL,
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => t.is_int_like() || t == Type::BOOL,
            BinOp::Shl | BinOp::Shr => t.is_int_like(),
            BinOp::Eq | BinOp::Ne => t.is_numeric_like() || t == Type::BOOL,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => t.is_numeric_like(),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => t.is_numeric_like(),
        };
        if !ok {
            self.bad_operands(op, at, bt, span);
            return Type::Error;
        }
        if op.is_comparison() || op.is_logical() {
            Type::BOOL
        } else {
            t
        }
    }

    /// Fold an operation whose operands are constants, if they are.
    pub(super) fn try_fold(
        &mut self,
        f: impl FnOnce(&[Value]) -> Result<Value, ValueError>,
        args: &[ExprH],
        span: Span,
    ) -> Option<(ExprH, Type)> {
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            match &self.body.exprs[a] {
                hir::Expr::Const(v) if self.body.types[a.index()] != Type::Error => vals.push(*v),
                _ => return None,
            }
        }
        match f(&vals) {
            Ok(v) => Some(self.constant(v, span)),
            Err(ValueError::DivByZero) => {
                self.err(Diag::error(
                    "accl::type::const_div_by_zero",
                    "division by zero in a constant expression",
                    span,
                    "the divisor is zero",
                ));
                Some(self.error_expr(span))
            }
            Err(ValueError::BadOperands) => None,
        }
    }

    /// Check an expression. `expect` is the type the context wants, used only
    /// to give literals a type early (mismatches are reported by the caller).
    /// An expression of any type, a tuple included (see [`Checker::expr`]
    /// in tuples.rs for one that must be a single value).
    pub(super) fn expr_any(&mut self, e: &ast::Expr, expect: Option<Type>) -> (ExprH, Type) {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(v, suffix) => {
                let lit = Value::IntLit(*v as i128);
                match suffix {
                    Some(t) => match lit.concretize(*t) {
                        Some(v) => self.constant(v, span),
                        None => {
                            self.err(Diag::error(
                                "accl::type::literal_out_of_range",
                                format!("the value {v} does not fit in `{t}`"),
                                span,
                                "out of range",
                            ));
                            self.error_expr(span)
                        }
                    },
                    None => {
                        let (h, t) = self.constant(lit, span);
                        if let Some(want @ Type::Scalar(s)) = expect {
                            if s.is_numeric() {
                                self.coerce(h, t, want, span);
                                return (h, self.body.types[h.index()]);
                            }
                        }
                        (h, t)
                    }
                }
            }
            ExprKind::Float(v, suffix) => match suffix {
                Some(t) => self.constant(Value::FloatLit(*v).cast(*t), span),
                None => {
                    let (h, t) = self.constant(Value::FloatLit(*v), span);
                    if let Some(want @ Type::Scalar(s)) = expect {
                        if s.is_float() {
                            self.coerce(h, t, want, span);
                            return (h, want);
                        }
                    }
                    (h, t)
                }
            },
            ExprKind::Bool(b) => self.constant(Value::Bool(*b), span),
            ExprKind::Str(s) => {
                self.host_string(span);
                self.push(hir::Expr::Str(s.clone()), Type::Str, span)
            }
            ExprKind::Type(t) => self.push(hir::Expr::TypeArg(*t), Type::TypeArg(*t), span),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(Binding::Local(l)) => {
                    self.note_read(l, span);
                    let ty = self.body.locals[l].ty;
                    if ty == Type::Str {
                        self.host_string(span);
                    }
                    self.push(hir::Expr::Local(l), ty, span)
                }
                Some(Binding::Global(l)) if !self.dev.is_empty() => {
                    self.global_in_construct(l, name, span)
                }
                Some(Binding::Global(l)) => match self.global_use(l, name, span) {
                    Some(ty) => self.push(hir::Expr::Global(l), ty, span),
                    None => self.error_expr(span),
                },
                Some(Binding::Const(v)) => {
                    let (h, t) = self.constant(v, span);
                    if let (true, Some(want @ Type::Scalar(s))) = (t.is_literal(), expect) {
                        if s.is_numeric() && v.concretize(s).is_some() {
                            self.coerce(h, t, want, span);
                            return (h, want);
                        }
                    }
                    (h, t)
                }
                None if super::on_device::device_type_name(name).is_some() => {
                    let t = super::on_device::device_type_name(name).expect("checked");
                    self.host_string(span);
                    self.push(hir::Expr::Str(t.to_string()), Type::Str, span)
                }
                None if self.builtins.constant("", name).is_some() => {
                    let v = self.builtins.constant("", name).expect("checked");
                    self.constant(v, span)
                }
                None => {
                    if self.fn_names.contains_key(name) || self.builtins.lookup(name).is_some() {
                        self.err(
                            Diag::error(
                                "accl::type::fn_as_value",
                                format!("`{name}` is a function, not a value"),
                                span,
                                "a function",
                            )
                            .with_help(format!("call it: `{name}(..)`")),
                        );
                    } else {
                        self.unknown_name(name, span);
                    }
                    self.error_expr(span)
                }
            },
            ExprKind::Path(owner, member) => match self.builtins.constant(owner, &member.name) {
                Some(v) => self.constant(v, span),
                None => {
                    let names: Vec<String> = self.builtins.const_names().collect();
                    let full = format!("{owner}::{}", member.name);
                    let mut d = Diag::error(
                        "accl::name::unknown_const",
                        format!("no constant `{full}`"),
                        span,
                        "unknown constant",
                    );
                    if let Some(s) =
                        crate::diag::did_you_mean(&full, names.iter().map(String::as_str))
                    {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    }
                    self.err(d);
                    self.error_expr(span)
                }
            },
            ExprKind::Unary(op, inner) => {
                let (h, t) = self.expr(inner, expect);
                if t == Type::Error {
                    return self.error_expr(span);
                }
                let ok = match op {
                    UnOp::Neg => t.is_numeric_like(),
                    UnOp::Not => t == Type::BOOL || t.is_int_like(),
                };
                if !ok {
                    let (sym, what) = match op {
                        UnOp::Neg => ("-", "a number"),
                        UnOp::Not => ("!", "a `bool` or an integer"),
                    };
                    self.err(Diag::error(
                        "accl::type::bad_operand",
                        format!("`{sym}` cannot be applied to `{t}`"),
                        span,
                        format!("`{sym}` takes {what}"),
                    ));
                    return self.error_expr(span);
                }
                let op = *op;
                if let Some(r) = self.try_fold(|v| Value::unary(op, v[0]), &[h], span) {
                    return r;
                }
                self.push(hir::Expr::Unary(op, h), t, span)
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, span, expect),
            ExprKind::Cast(inner, to) => {
                let (h, t) = self.expr(inner, None);
                let to_t = to.elem;
                if t == Type::Error {
                    return self.error_expr(span);
                }
                let ok = match t {
                    Type::Scalar(Scalar::Bool) => to_t.is_int() || to_t == Scalar::Bool,
                    Type::Scalar(_) => to_t != Scalar::Bool,
                    Type::IntLit | Type::FloatLit => to_t != Scalar::Bool,
                    _ => false,
                };
                if !ok {
                    self.err(
                        Diag::error(
                            "accl::type::bad_cast",
                            format!("cannot cast `{t}` to `{to_t}`"),
                            span,
                            "invalid cast",
                        )
                        .with_help(if t == Type::BOOL {
                            format!(
                                "a `bool` casts to an integer type only: `{} as i32 as {to_t}`",
                                self.snippet(inner.span)
                            )
                        } else if to_t == Scalar::Bool {
                            let zero = if t.scalar().is_some_and(|s| s.is_float())
                                || t == Type::FloatLit
                            {
                                "0.0"
                            } else {
                                "0"
                            };
                            format!("compare instead: `{} != {zero}`", self.snippet(inner.span))
                        } else {
                            "`as` converts between scalar types".to_string()
                        }),
                    );
                    return self.error_expr(span);
                }
                if let Some(r) = self.try_fold(|v| Ok(v[0].cast(to_t)), &[h], span) {
                    return r;
                }
                self.push(hir::Expr::Cast(h, to_t), Type::Scalar(to_t), span)
            }
            ExprKind::Index(a, ix) => match self.index_parts(a, ix, span, false) {
                Some((array, elem, indices)) => {
                    self.push(hir::Expr::Index(array, indices), Type::Scalar(elem), span)
                }
                None => self.error_expr(span),
            },
            ExprKind::Section(..) => {
                // The builtins that take sections as arguments, by name.
                let mut takers: Vec<String> = self
                    .builtins
                    .iter()
                    .filter(|(_, b)| b.sections)
                    .map(|(_, b)| format!("`{}`", b.name))
                    .collect();
                takers.sort();
                let mut help =
                    "index one element with `a[i]`, or copy the section with a loop".to_string();
                if let Some((last, rest)) = takers.split_last() {
                    let list = if rest.is_empty() {
                        last.clone()
                    } else {
                        format!("{} and {last}", rest.join(", "))
                    };
                    help.push_str(&format!(" ({list} also take sections)"));
                }
                self.err(
                    Diag::error(
                        "accl::type::section_outside_clause",
                        "an array section is only allowed in a data clause or `update`",
                        span,
                        "section here",
                    )
                    .with_help(help),
                );
                self.error_expr(span)
            }
            ExprKind::Call(f, args) => self.call(f, args, span),
            ExprKind::Array(es) => self.array_literal(es, span, expect),
            ExprKind::Tuple(es) => self.misplaced_tuple(es, span),
            ExprKind::Error => self.error_expr(span),
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        a: &ast::Expr,
        b: &ast::Expr,
        span: Span,
        expect: Option<Type>,
    ) -> (ExprH, Type) {
        // Arithmetic passes the expected type down (so `let x: f32 = 1.0 + y`
        // types `1.0` as f32); comparisons and logic do not.
        let down = if op.is_comparison() || op.is_logical() {
            None
        } else {
            expect
        };
        // A bare literal on the left takes the other operand's type, as on
        // the right: `0.5 * x` and `x * 0.5` (`x: f32`) are both f32
        // products, whatever the destination.
        let down_a = if bare_literal(a) && !op.is_shift() {
            None
        } else {
            down
        };
        let (ha, at) = self.expr(a, down_a);
        let down_b = if op.is_shift() || at.is_array() {
            // An array operand is reported once, below (with its loop).
            None
        } else if at.is_literal() {
            down
        } else {
            Some(at)
        };
        let (mut hb, bt) = self.expr(b, down_b);
        if at == Type::Str || bt == Type::Str {
            return self.string_binary(op, (ha, at), (hb, bt), span);
        }
        let t = if op.is_shift() {
            // The count may be any integer type; the result has the left type.
            if at.is_int_like() && bt.is_int_like() {
                if at.is_literal() && !bt.is_literal() {
                    if let Some(want) = down.filter(|t| t.is_int_like()) {
                        self.coerce(ha, at, want, a.span);
                    } else {
                        self.coerce(ha, at, Type::I32, a.span);
                    }
                }
                let lt = self.body.types[ha.index()];
                if bt.is_literal() && !lt.is_literal() {
                    self.coerce(hb, bt, lt, b.span);
                } else if let (Type::Scalar(l), Type::Scalar(c)) = (lt, bt) {
                    // Both backends shift by a count of the left type.
                    if l != c {
                        hb = self.push(hir::Expr::Cast(hb, l), lt, b.span).0;
                    }
                }
                lt
            } else {
                if at != Type::Error && bt != Type::Error {
                    self.bad_operands(op, at, bt, span);
                }
                Type::Error
            }
        } else if at.is_array() || bt.is_array() {
            if at != Type::Error && bt != Type::Error {
                self.bad_operands(op, at, bt, span);
            }
            Type::Error
        } else {
            let u = self.unify(ha, at, hb, bt, span, Some(op));
            let at2 = self.body.types[ha.index()];
            let bt2 = self.body.types[hb.index()];
            if u == Type::Error {
                Type::Error
            } else {
                self.binary_result(op, u, span, at2, bt2)
            }
        };
        if t == Type::Error {
            return self.error_expr(span);
        }
        if let Some(r) = self.try_fold(|v| Value::binary(op, v[0], v[1]), &[ha, hb], span) {
            return r;
        }
        // Two literals of different kinds (`1 + 2.5`) have folded above; a
        // literal left here took the other operand's type.
        self.push(hir::Expr::Binary(op, ha, hb), t, span)
    }

    /// Strings live on the host: one inside a device construct is an
    /// error, and one in a function keeps it off the device.
    pub(super) fn host_string(&mut self, span: Span) {
        if let Some(frame) = self.dev.first() {
            let ks = frame.kind_span;
            // One report per construct is enough.
            if self.string_in_device == Some(ks) {
                return;
            }
            self.string_in_device = Some(ks);
            self.err(
                Diag::error(
                    "accl::device::string",
                    "strings cannot be used inside a device construct",
                    span,
                    "a string in device code",
                )
                .with_label(ks, "device construct")
                .with_help("strings live on the host: use them before or after the construct"),
            );
        }
        self.note_violation(span, "uses a string");
    }

    /// `a op b` where an operand is a string: `+` joins two strings, the
    /// comparisons compare them (bytewise, as Rust's `str`); two literals
    /// fold.
    fn string_binary(
        &mut self,
        op: BinOp,
        (ha, at): (ExprH, Type),
        (hb, bt): (ExprH, Type),
        span: Span,
    ) -> (ExprH, Type) {
        if at == Type::Error || bt == Type::Error {
            return self.error_expr(span);
        }
        let ok = at == bt && (op == BinOp::Add || op.is_comparison());
        if !ok {
            let mut d = Diag::error(
                "accl::type::bad_operands",
                format!("`{}` cannot be applied to `{at}` and `{bt}`", op.symbol()),
                span,
                if op == BinOp::Add || op.is_comparison() {
                    format!("`{}` takes two strings here", op.symbol())
                } else {
                    format!("strings take no `{}`", op.symbol())
                },
            );
            if op == BinOp::Add {
                let other = if at == Type::Str { hb } else { ha };
                let text = self.snippet(self.body.exprs.span(other));
                d = d.with_help(format!(
                    "turn the number into a string first: `str({text})`, or `format(\"{{:.3}}\", {text})` for a chosen precision"
                ));
            }
            self.err(d);
            return self.error_expr(span);
        }
        if let (hir::Expr::Str(x), hir::Expr::Str(y)) = (&self.body.exprs[ha], &self.body.exprs[hb])
        {
            let folded = match op {
                BinOp::Add => Some(hir::Expr::Str(format!("{x}{y}"))),
                _ => None,
            };
            if let Some(e) = folded {
                return self.push(e, Type::Str, span);
            }
        }
        let t = if op == BinOp::Add {
            Type::Str
        } else {
            Type::BOOL
        };
        self.push(hir::Expr::Binary(op, ha, hb), t, span)
    }

    /// Check `array[indices]`: the array, its element type, the indices.
    pub(super) fn index_parts(
        &mut self,
        a: &ast::Expr,
        ix: &[ast::Expr],
        span: Span,
        write: bool,
    ) -> Option<(ExprH, Scalar, Vec<ExprH>)> {
        let (array, at) = match &a.kind {
            ast::ExprKind::Var(name) => match self.lookup(name) {
                Some(Binding::Local(l)) => {
                    let ty = self.body.locals[l].ty;
                    if let Type::Array(..) = ty {
                        self.note_array(l, a.span, write);
                    } else {
                        self.note_read(l, a.span);
                    }
                    self.push(hir::Expr::Local(l), ty, a.span)
                }
                Some(Binding::Global(_)) if write && !self.dev.is_empty() => {
                    // Through the construct's hidden local, written.
                    let (h, ty) = self.expr(a, None);
                    if let (&hir::Expr::Local(l), Type::Array(..)) = (&self.body.exprs[h], ty) {
                        self.note_array(l, a.span, true);
                    }
                    (h, ty)
                }
                _ => self.expr(a, None),
            },
            _ => self.expr(a, None),
        };
        if write {
            if let Some(l) = self.constant_array(array) {
                let name = match self.body.exprs[array] {
                    hir::Expr::Global(_) => self.out.main.locals[l].name.clone(),
                    _ => self.body.locals[l].name.clone(),
                };
                self.constant_written(&name, span, "element written here");
                return None;
            }
            if let (&hir::Expr::Local(l), Some(_)) = (&self.body.exprs[array], self.body.func) {
                self.note_param_write(l, span);
            }
        }
        let mut indices = Vec::with_capacity(ix.len());
        for i in ix {
            let (h, t) = self.expr(i, None);
            let t = if t == Type::IntLit {
                self.finalize(h, t)
            } else {
                t
            };
            if t != Type::Error && !t.is_int_like() {
                self.err(
                    Diag::error(
                        "accl::type::index_not_integer",
                        format!("array index must be an integer, found `{t}`"),
                        i.span,
                        "not an integer",
                    )
                    .with_help(if t.is_numeric_like() {
                        format!(
                            "convert it: `{}`",
                            cast_text(&self.snippet(i.span), Scalar::I32)
                        )
                    } else {
                        "indices are integers".to_string()
                    }),
                );
            }
            indices.push(h);
        }
        match at {
            Type::Array(elem, rank) => {
                if rank as usize != ix.len() {
                    self.err(
                        Diag::error(
                            "accl::type::index_arity",
                            format!(
                                "this array has {rank} dimension{} but {} ind{} given",
                                if rank == 1 { "" } else { "s" },
                                ix.len(),
                                if ix.len() == 1 { "ex was" } else { "ices were" }
                            ),
                            span,
                            format!(
                                "expected {rank} ind{}",
                                if rank == 1 { "ex" } else { "ices" }
                            ),
                        )
                        .with_help(format!(
                            "index every dimension: `a[{}]`",
                            ["i", "j", "k"][..rank.min(3) as usize].join(", ")
                        )),
                    );
                    return None;
                }
                Some((array, elem, indices))
            }
            Type::Error => None,
            t => {
                self.err(Diag::error(
                    "accl::type::index_non_array",
                    format!("cannot index into a value of type `{t}`"),
                    a.span,
                    "not an array",
                ));
                None
            }
        }
    }

    // ------------------------------------------------------------ captures

    fn outside_all_frames(&self, l: LocalH) -> bool {
        self.dev
            .first()
            .is_some_and(|f| self.body.local_scope[l.index()] < f.scope_base)
    }

    pub(super) fn note_read(&mut self, l: LocalH, span: Span) {
        if self.dev.is_empty() {
            return;
        }
        let ty = self.body.locals[l].ty;
        if ty.is_array() {
            self.note_array(l, span, false);
            return;
        }
        if self.outside_all_frames(l) && !self.is_frame_var(l) {
            if let Some(c) = &mut self.capture {
                if !c.scalars.contains(&l) {
                    c.scalars.push(l);
                }
            }
        }
    }

    /// Reduction and private variables of any open frame are not captured.
    fn is_frame_var(&self, l: LocalH) -> bool {
        self.dev.iter().any(|f| f.writable.contains(&l))
    }

    pub(super) fn note_array(&mut self, l: LocalH, span: Span, write: bool) {
        if !self.updating_reduced_array {
            if let Some(red) = self.reduced_array(l) {
                let name = self.body.locals[l].name.clone();
                self.err(
                    Diag::error(
                        "accl::device::reduction_array_use",
                        format!(
                            "`{name}` is in a `reduction({}: ..)` here: it can only be updated, not read, written or passed on",
                            red.symbol()
                        ),
                        span,
                        "used here",
                    )
                    .with_help({
                        let update = match red {
                            crate::ast::ReductionOp::Max | crate::ast::ReductionOp::Min => {
                                format!("{name}[i] = {0}({name}[i], v)", red.symbol())
                            }
                            _ => format!("{name}[i] {}= v", red.symbol()),
                        };
                        format!("update its elements with `{update}`, and read `{name}` after the construct")
                    }),
                );
            }
        }
        if !self.outside_all_frames(l) {
            return;
        }
        if let Some(c) = &mut self.capture {
            if let Some(u) = c.arrays.iter_mut().find(|u| u.var == l) {
                u.read |= !write;
                u.written |= write;
            } else {
                c.arrays.push(hir::ArrayUse {
                    var: l,
                    read: !write,
                    written: write,
                    span,
                });
            }
        }
    }
}

trait MaxErr {
    fn max_err(self, other: Type) -> Type;
}
impl MaxErr for Type {
    fn max_err(self, other: Type) -> Type {
        if self == Type::Error {
            Type::Error
        } else {
            other
        }
    }
}

fn rank_of(s: Scalar) -> u8 {
    match s {
        Scalar::Bool => 0,
        Scalar::U8 => 1,
        Scalar::U32 => 2,
        Scalar::I32 => 3,
        Scalar::I64 => 4,
        Scalar::F32 => 5,
        Scalar::F64 => 6,
    }
}

/// `text as t`, bracketed so that it reads right whatever `text` is.
fn cast_text(text: &str, t: Scalar) -> String {
    let simple = text
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if simple {
        format!("({text} as {t})")
    } else {
        format!("(({text}) as {t})")
    }
}

/// The help of an integer literal that does not fit its type: name a type
/// that holds it.
fn wider_help(v: Value, t: Scalar) -> String {
    let fits = |w: Scalar| v.concretize(w).is_some();
    match [Scalar::I32, Scalar::U32, Scalar::I64]
        .into_iter()
        .find(|&w| w != t && fits(w))
    {
        Some(w) => format!("use a type that holds it, such as `{w}`"),
        None => "no integer type holds it; use a float type".to_string(),
    }
}

pub(super) fn mismatch(want: Type, got: Type, span: Span) -> Diag {
    Diag::error(
        "accl::type::mismatch",
        format!("expected `{want}`, found `{got}`"),
        span,
        format!("this is `{got}`"),
    )
}

/// An unsuffixed number, possibly negated: a literal whose type the other
/// operand of a binary operation gives.
fn bare_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_, None) | ast::ExprKind::Float(_, None) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, inner) => bare_literal(inner),
        _ => false,
    }
}
