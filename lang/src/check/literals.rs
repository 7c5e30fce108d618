//! Array literals (`[1, 2, 3]`, `[[1, 2], [3, 4]]`) and array constants
//! (`const q = [..];`). A literal allocates a new array, which device code
//! cannot do, so it is host code only; an array constant is a local that
//! nothing writes, so a construct that uses it only reads it and takes it
//! with an implicit `copyin`.

use super::{Binding, Checker, Diag, Span, Type};
use crate::ast::{self, ExprKind};
use crate::hir::{self, ExprH, FnH, LocalH};

/// The most axes an array has ([`Type::Array`]).
const MAX_RANK: usize = 3;

/// Builtins that write the host data of one of their array arguments: the
/// builtin and the argument's position.
const WRITING_BUILTINS: &[(&str, usize)] = &[
    ("mpi_allreduce", 0),
    ("mpi_bcast", 0),
    ("mpi_sendrecv", 2),
    ("mpi_irecv", 0),
    ("acc_memcpy_from_device", 0),
    ("acc_memcpy_from_device_async", 0),
];

/// Which argument of builtin `name` it writes, if any.
pub(super) fn written_arg(name: &str) -> Option<usize> {
    WRITING_BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, k)| k)
}

fn elements(n: usize) -> String {
    match n {
        1 => "1 element".to_string(),
        n => format!("{n} elements"),
    }
}

/// The shape of a (nested) literal and its scalar elements in row-major
/// order, or why it is not a rectangular array of at most [`MAX_RANK`] axes.
fn layout(es: &[ast::Expr], span: Span) -> Result<(Vec<usize>, Vec<&ast::Expr>), Diag> {
    let rows: Vec<&[ast::Expr]> = es
        .iter()
        .filter_map(|e| match &e.kind {
            ExprKind::Array(r) => Some(r.as_slice()),
            _ => None,
        })
        .collect();
    if rows.is_empty() {
        return Ok((vec![es.len()], es.iter().collect()));
    }
    if rows.len() != es.len() {
        let row = es.iter().find(|e| matches!(e.kind, ExprKind::Array(_)));
        let scalar = es.iter().find(|e| !matches!(e.kind, ExprKind::Array(_)));
        let (row, scalar) = (
            row.map_or(span, |e| e.span),
            scalar.map_or(span, |e| e.span),
        );
        return Err(Diag::error(
            "accl::type::array_literal_shape",
            "an array literal mixes rows and single elements",
            scalar,
            "a single element",
        )
        .with_label(row, "a row")
        .with_help("write every element of a nested literal as a row: `[[1, 2], [3, 4]]`"));
    }
    let mut shape = None;
    let mut leaves = Vec::new();
    for (r, e) in rows.iter().zip(es) {
        let (s, l) = layout(r, e.span)?;
        match &shape {
            None => shape = Some((s, e.span)),
            Some((first, first_span)) if *first != s => {
                return Err(Diag::error(
                    "accl::type::array_literal_shape",
                    "the rows of an array literal differ in shape",
                    e.span,
                    elements(s[0]),
                )
                .with_label(*first_span, elements(first[0]))
                .with_help("an array is rectangular: give every row as many elements"));
            }
            Some(_) => {}
        }
        leaves.extend(l);
    }
    let inner = shape.map(|(s, _)| s).unwrap_or_default();
    let mut full = vec![es.len()];
    full.extend(inner);
    if full.len() > MAX_RANK {
        return Err(Diag::error(
            "accl::type::array_literal_shape",
            format!("an array literal of {} axes", full.len()),
            span,
            format!("arrays have at most {MAX_RANK} axes"),
        )
        .with_help("nest literals at most three deep"));
    }
    Ok((full, leaves))
}

impl Checker<'_> {
    /// `[e1, e2, ..]`: a new array; `expect` (an array type) gives the
    /// element type, else the elements' common type does.
    pub(super) fn array_literal(
        &mut self,
        es: &[ast::Expr],
        span: Span,
        expect: Option<Type>,
    ) -> (ExprH, Type) {
        if let Some(frame) = self.dev.first() {
            let construct = frame.kind_span;
            self.err(
                Diag::error(
                    "accl::device::array_literal",
                    "an array literal cannot be built inside a device construct",
                    span,
                    "allocates a new array",
                )
                .with_label(construct, "inside this construct")
                .with_help(
                    "declare it with `const` or `let` before the construct and use that name here",
                ),
            );
            return self.error_expr(span);
        }
        self.note_violation(span, "builds an array literal");
        let (shape, leaves) = match layout(es, span) {
            Ok(l) => l,
            Err(d) => {
                self.err(d);
                return self.error_expr(span);
            }
        };
        let want = match expect {
            Some(Type::Array(s, _)) => Some(Type::Scalar(s)),
            _ => None,
        };
        let typed: Vec<(ExprH, Type, Span)> = leaves
            .iter()
            .map(|e| {
                let (h, t) = self.expr(e, want);
                (h, t, e.span)
            })
            .collect();
        for &(_, t, s) in &typed {
            if t != Type::Error && t.scalar().is_none() && !t.is_literal() {
                self.err(
                    Diag::error(
                        "accl::type::array_literal_element",
                        format!("an element of an array literal must be a scalar, found `{t}`"),
                        s,
                        "not a scalar",
                    )
                    .with_help(
                        "nest literals for more axes (`[[1, 2], [3, 4]]`); copy an existing array with `clone(a)`",
                    ),
                );
                return self.error_expr(span);
            }
        }
        let elem = match want {
            Some(w) => w,
            None => match self.common_elem(&typed) {
                Some(t) => t.defaulted(),
                None => return self.error_expr(span),
            },
        };
        let Some(scalar) = elem.scalar() else {
            return self.error_expr(span);
        };
        let hs = typed
            .iter()
            .map(|&(h, t, s)| {
                self.coerce(h, t, elem, s);
                h
            })
            .collect();
        let rank = shape.len() as u8;
        self.push(hir::Expr::Array(shape, hs), Type::Array(scalar, rank), span)
    }

    /// The element type of a literal with no annotation: its first typed
    /// element's type (another typed element of another type is an error),
    /// else `{float}` if any element is a float literal, else `{integer}`.
    fn common_elem(&mut self, typed: &[(ExprH, Type, Span)]) -> Option<Type> {
        if typed.iter().any(|&(_, t, _)| t == Type::Error) {
            return None;
        }
        let first = typed.iter().find(|(_, t, _)| t.scalar().is_some());
        if let Some(&(_, ft, fs)) = first {
            for &(_, t, s) in typed {
                if t.scalar().is_some() && t != ft {
                    let help = match ft.scalar() {
                        Some(to) => format!(
                            "give every element one type: convert this one with `{} as {to}`",
                            self.snippet(s)
                        ),
                        None => "give every element one type".to_string(),
                    };
                    self.err(
                        Diag::error(
                            "accl::type::array_literal_mismatch",
                            format!("the elements of an array literal have types `{ft}` and `{t}`"),
                            s,
                            format!("this is `{t}`"),
                        )
                        .with_label(fs, format!("this is `{ft}`"))
                        .with_help(help),
                    );
                    return None;
                }
            }
            return Some(ft);
        }
        Some(if typed.iter().any(|&(_, t, _)| t == Type::FloatLit) {
            Type::FloatLit
        } else {
            Type::IntLit
        })
    }

    /// `const q = [..];`: a local array that nothing may write.
    pub(super) fn const_array(
        &mut self,
        name: &ast::Ident,
        want: Option<Type>,
        init: &ast::Expr,
    ) -> Option<hir::StmtKind> {
        if !matches!(init.kind, ExprKind::Array(_)) {
            self.expr(init, want);
            self.err(
                Diag::error(
                    "accl::type::not_constant",
                    format!("the value of constant array `{}` is not an array literal", name.name),
                    init.span,
                    "not an array literal",
                )
                .with_help(format!(
                    "write its elements as a literal (`const {} = [1.0, 2.0];`), or use `let` for a variable",
                    name.name
                )),
            );
            self.new_local(&name.name, Type::Error, true, name.span);
            return None;
        }
        let (h, got) = self.expr(init, want);
        let ty = match want {
            Some(w) => {
                self.coerce(h, got, w, init.span);
                w
            }
            None => got,
        };
        if !ty.is_array() || self.body.types[h.index()] == Type::Error {
            // Declared all the same, so its uses raise no second error.
            self.new_local(&name.name, Type::Error, true, name.span);
            return None;
        }
        let local = self.new_local(&name.name, ty, true, name.span);
        self.body.locals[local].constant = true;
        Some(hir::StmtKind::Let { local, init: h })
    }

    /// The constant array `e` reads, if it is one (a local, or a top-level
    /// one seen from a function).
    pub(super) fn constant_array(&self, e: ExprH) -> Option<LocalH> {
        match self.body.exprs[e] {
            hir::Expr::Local(l) if self.body.locals[l].constant => Some(l),
            hir::Expr::Global(l) if self.out.main.locals[l].constant => Some(l),
            _ => None,
        }
    }

    /// Is `name` bound to a constant array here?
    pub(super) fn is_constant_array(&self, name: &str) -> bool {
        match self.lookup(name) {
            Some(Binding::Local(l)) => self.body.locals[l].constant,
            Some(Binding::Global(l)) => self.out.main.locals[l].constant,
            _ => false,
        }
    }

    /// `return e`: a constant array would reach the caller as an array it
    /// may write.
    pub(super) fn returns_constant(&mut self, e: ExprH, span: Span) {
        let Some(l) = self.constant_array(e) else {
            return;
        };
        let name = match self.body.exprs[e] {
            hir::Expr::Global(_) => self.out.main.locals[l].name.clone(),
            _ => self.body.locals[l].name.clone(),
        };
        self.err(
            Diag::error(
                "accl::type::assign_to_const",
                format!("the constant array `{name}` cannot be returned"),
                span,
                "the caller could write it",
            )
            .with_help(format!("return a copy: `return clone({name});`")),
        );
    }

    /// A write to constant array `name` at `span`.
    pub(super) fn constant_written(&mut self, name: &str, span: Span, how: &str) {
        self.err(
            Diag::error(
                "accl::type::assign_to_const",
                format!("the constant array `{name}` cannot be written"),
                span,
                how.to_string(),
            )
            .with_help(format!(
                "copy it into a variable first: `let w = clone({name});`"
            )),
        );
    }

    /// Argument `a` of a builtin that writes it: refused for a constant
    /// array (whole or a section of it).
    pub(super) fn builtin_writes(&mut self, a: &ast::Expr, builtin: &str) {
        let var = match &a.kind {
            ExprKind::Section(base, _) => &base.kind,
            k => k,
        };
        if let ExprKind::Var(n) = var {
            if self.is_constant_array(n) {
                self.constant_written(n, a.span, &format!("`{builtin}` writes it"));
            }
        }
    }

    /// An element of local `l` written in a function: a parameter's write
    /// is remembered for the calls that pass a constant array.
    pub(super) fn note_param_write(&mut self, l: LocalH, span: Span) {
        let Some(f) = self.body.func else { return };
        let params = self.fn_param_tys[f.index()].len();
        let written = &mut self.fn_facts[f.index()].written_params;
        if l.index() < params && !written.iter().any(|&(p, _)| p == l.index()) {
            written.push((l.index(), span));
        }
    }

    /// Local `l` passed as parameter `param` of `callee`: a parameter
    /// passed on is written where the callee writes it.
    pub(super) fn note_param_passed(&mut self, l: LocalH, callee: FnH, param: usize, span: Span) {
        let Some(f) = self.body.func else { return };
        if l.index() < self.fn_param_tys[f.index()].len() {
            self.fn_facts[f.index()]
                .passed_params
                .push((l.index(), callee, param, span));
        }
    }

    /// Every function's written parameters, through the functions they pass
    /// them on to: a fixed point over the call graph (a parameter enters a
    /// set once, so it ends).
    fn close_written_params(&mut self) {
        loop {
            let mut grew = false;
            for f in 0..self.fn_facts.len() {
                for k in 0..self.fn_facts[f].passed_params.len() {
                    let (p, g, q, span) = self.fn_facts[f].passed_params[k];
                    let callee_writes = self.fn_facts[g.index()]
                        .written_params
                        .iter()
                        .any(|&(x, _)| x == q);
                    let facts = &mut self.fn_facts[f];
                    if callee_writes && !facts.written_params.iter().any(|&(x, _)| x == p) {
                        facts.written_params.push((p, span));
                        grew = true;
                    }
                }
            }
            if !grew {
                return;
            }
        }
    }

    /// After every body: constant arrays passed to functions that write
    /// the parameter (themselves or through the functions they pass it to).
    pub(super) fn judge_const_args(&mut self) {
        let args = std::mem::take(&mut self.const_args);
        if !args.is_empty() {
            self.close_written_params();
        }
        for a in args {
            let written = self.fn_facts[a.callee.index()]
                .written_params
                .iter()
                .find(|&&(p, _)| p == a.param)
                .map(|&(_, s)| s);
            if let Some(w) = written {
                let callee = self.out.functions[a.callee].name.clone();
                self.err(
                    Diag::error(
                        "accl::type::assign_to_const",
                        format!(
                            "the constant array `{}` is passed to `{callee}`, which writes it",
                            a.name
                        ),
                        a.span,
                        "a constant array",
                    )
                    .with_label(
                        w,
                        "written here (or passed on to a function that writes it)",
                    )
                    .with_help(format!("pass a copy instead: `clone({})`", a.name)),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::layout;
    use crate::ast::ExprKind;
    use crate::parse::parse_expr;

    /// The shape of literal `src`, or the code of the error.
    fn shape(src: &str) -> Result<(Vec<usize>, usize), &'static str> {
        let e = parse_expr(src).expect("parses");
        let ExprKind::Array(es) = &e.kind else {
            panic!("not a literal: {src}");
        };
        layout(es, e.span)
            .map(|(s, leaves)| (s, leaves.len()))
            .map_err(|d| d.code)
    }

    #[test]
    fn shapes_of_rectangular_literals() {
        assert_eq!(shape("[1, 2, 3]"), Ok((vec![3], 3)));
        assert_eq!(shape("[1, 2, 3,]"), Ok((vec![3], 3)));
        assert_eq!(shape("[[1, 2, 3], [4, 5, 6]]"), Ok((vec![2, 3], 6)));
        assert_eq!(shape("[[[1], [2]], [[3], [4]]]"), Ok((vec![2, 2, 1], 4)));
        // A row of one element is a row all the same.
        assert_eq!(shape("[[1 + 2]]"), Ok((vec![1, 1], 1)));
    }

    #[test]
    fn ragged_mixed_and_deep_literals_are_refused() {
        let bad = "accl::type::array_literal_shape";
        assert_eq!(shape("[[1, 2], [3]]"), Err(bad));
        assert_eq!(shape("[[1, 2], 3]"), Err(bad));
        assert_eq!(shape("[[[1, 2]], [[3], [4]]]"), Err(bad));
        assert_eq!(shape("[[[[1]]]]"), Err(bad));
    }

    #[test]
    fn empty_brackets_do_not_parse() {
        assert!(parse_expr("[]").is_err());
        assert!(parse_expr("[,]").is_err());
    }
}
