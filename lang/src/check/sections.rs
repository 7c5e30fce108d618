//! Sections in data clauses and `update`: `a[lo:count, ..]`, one
//! `lo:count` (or `:`, the whole axis) per axis of the array, leading axis
//! first; axes past the list are whole, so `a[lo:count]` is rows of the
//! leading axis.

use super::Checker;
use crate::ast::{self, SectionAxis};
use crate::diag::Diag;
use crate::hir::{self, ExprH};
use crate::span::Span;
use crate::types::{Scalar, Type};
use crate::value::Value;

/// The checked axes of a section (see [`crate::hir::DataClause::section`]).
pub(super) type Axes = Vec<Option<(ExprH, ExprH)>>;

impl Checker<'_> {
    /// The axes of a section of `name` (of type `ty`) written `axes`; the
    /// whole section is at `span`. None (after the diagnostics) when an
    /// axis is not `lo:count` or `:`, or there are more axes than the rank.
    pub(super) fn section_axes(
        &mut self,
        name: &str,
        ty: Type,
        axes: &[SectionAxis],
        span: Span,
    ) -> Option<Axes> {
        let rank = match ty {
            Type::Array(_, r) => r as usize,
            _ => return None,
        };
        let mut ok = true;
        if axes.len() > rank {
            let plural = |n: usize| if n == 1 { "axis" } else { "axes" };
            let extra = axes[rank..]
                .iter()
                .map(SectionAxis::span)
                .reduce(Span::to)
                .unwrap_or(span);
            self.err(
                Diag::error(
                    "accl::device::section_rank",
                    format!(
                        "`{name}` is a `{ty}` with {rank} {}, but the section cuts {}",
                        plural(rank),
                        axes.len()
                    ),
                    extra,
                    format!("past the {} of `{name}`", plural(rank)),
                )
                .with_help(format!(
                    "write at most {rank} `lo:count` (or `:` for a whole axis), leading axis first"
                )),
            );
            ok = false;
        }
        let mut out = Vec::with_capacity(axes.len());
        for axis in axes {
            match axis {
                SectionAxis::All(_) => out.push(None),
                SectionAxis::Range(lo, n) => {
                    let lo = self.section_bound(lo);
                    let n = self.section_bound(n);
                    out.push(Some((lo, n)));
                }
                SectionAxis::Index(e) => {
                    let text: String = self
                        .src
                        .get(e.span.range())
                        .unwrap_or("i")
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect();
                    self.err(
                        Diag::error(
                            "accl::device::section_axis",
                            "each axis of a section is `lo:count` or `:`, not an index",
                            e.span,
                            "an index",
                        )
                        .with_help(format!(
                            "write `{text}:1` for the one index `{text}` of this axis"
                        )),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// A bound of a section axis: an integer.
    fn section_bound(&mut self, e: &ast::Expr) -> ExprH {
        let (h, t) = self.expr(e, None);
        let t = self.finalize(h, t);
        if t != Type::Error && !t.is_int_like() {
            self.err(
                Diag::error(
                    "accl::type::section_not_integer",
                    format!("a section's bounds are integers, found `{t}`"),
                    e.span,
                    "not an integer",
                )
                .with_help("write each axis as `lo:count` with integers (`x as i64` converts)"),
            );
        }
        h
    }
}

impl Checker<'_> {
    /// An argument of a builtin that takes sections
    /// ([`crate::Builtin::sections`]): an array (a section `a[lo:count, ..]`
    /// or any array expression) becomes the array then, per axis of its
    /// rank, `lo` and `count` as `i64` (a whole axis as two
    /// [`crate::builtins::WHOLE_AXIS`]); anything
    /// else is checked as an ordinary argument. Each expression comes with
    /// its type and the span a diagnostic about it should point at.
    pub(super) fn section_call_arg(&mut self, a: &ast::Expr) -> Vec<(ExprH, Type, Span)> {
        let ast::ExprKind::Section(base, axes) = &a.kind else {
            let (h, t) = self.expr(a, None);
            let mut out = vec![(h, t, a.span)];
            if let Type::Array(_, r) = t {
                for _ in 0..r {
                    self.whole_axis(a.span, &mut out);
                }
            }
            return out;
        };
        let (h, ty) = self.expr(base, None);
        let rank = match (&base.kind, ty) {
            (_, Type::Error) => return vec![(h, ty, a.span)],
            (ast::ExprKind::Var(_), Type::Array(_, r)) => r,
            _ => {
                self.err(
                    Diag::error(
                        "accl::type::section_not_array",
                        format!(
                            "`{}` is a `{ty}`, not an array",
                            self.src.get(base.span.range()).unwrap_or("this")
                        ),
                        base.span,
                        "not an array variable",
                    )
                    .with_help("write `a[lo:count, ..]` with `a` an array"),
                );
                let (h, t) = self.error_expr(a.span);
                return vec![(h, t, a.span)];
            }
        };
        let name = self.src.get(base.span.range()).unwrap_or("a").to_string();
        let Some(checked) = self.section_axes(&name, ty, axes, a.span) else {
            let (h, t) = self.error_expr(a.span);
            return vec![(h, t, a.span)];
        };
        // The array again, at the section's span: the call's diagnostics
        // point at the whole section.
        let e = self.body.exprs[h].clone();
        let (arr, _) = self.push(e, ty, a.span);
        let mut out = vec![(arr, ty, a.span)];
        for k in 0..rank as usize {
            match checked.get(k).copied().flatten() {
                Some((lo, n)) => {
                    for b in [lo, n] {
                        let (t, span) = (self.body.types[b.index()], self.body.exprs.span(b));
                        out.push(if t.is_int_like() && t != Type::I64 {
                            let (c, t) =
                                self.push(hir::Expr::Cast(b, Scalar::I64), Type::I64, span);
                            (c, t, span)
                        } else {
                            (b, t, span)
                        });
                    }
                }
                None => self.whole_axis(a.span, &mut out),
            }
        }
        out
    }

    /// The bounds of a whole axis of a section argument.
    pub(super) fn whole_axis(&mut self, span: Span, out: &mut Vec<(ExprH, Type, Span)>) {
        for v in [crate::builtins::WHOLE_AXIS; 2] {
            let (h, t) = self.constant(Value::I64(v), span);
            out.push((h, t, span));
        }
    }
}
