//! Sections in data clauses and `update`: `a[lo:count, ..]`, one
//! `lo:count` (or `:`, the whole axis) per axis of the array, leading axis
//! first; axes past the list are whole, so `a[lo:count]` is rows of the
//! leading axis.

use super::Checker;
use crate::ast::{self, SectionAxis};
use crate::diag::Diag;
use crate::hir::ExprH;
use crate::span::Span;
use crate::types::Type;

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
