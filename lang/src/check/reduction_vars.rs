//! Reduction clause arguments: the variable a `reduction(op: ..)` names
//! (a scalar, an array, or an element or section of one) and whether the
//! operator applies to its type.

use super::{Binding, Checker};
use crate::ast::{self, ReductionOp};
use crate::diag::Diag;
use crate::hir::LocalH;
use crate::span::Span;
use crate::types::{Scalar, Type};

impl Checker<'_> {
    /// `reduction(op: h[i])` / `h[lo:n]`: an element or section of an
    /// array reduces as the array does (each update of an element is an
    /// atomic update, so the result lands in the element); the subscript
    /// is checked for its types only.
    pub(super) fn reduction_element(&mut self, v: &ast::Ident, ix: &[ast::SectionAxis]) -> bool {
        if let Some(Binding::Local(l)) = self.lookup(&v.name) {
            if !self.body.locals[l].ty.is_array() {
                let ty = self.body.locals[l].ty;
                self.err(
                    Diag::error(
                        "accl::device::reduction_element",
                        format!(
                            "`{}` is `{ty}`, not an array: it has no elements to reduce",
                            v.name
                        ),
                        v.span,
                        format!("`{ty}`"),
                    )
                    .with_help(format!(
                        "reduce the whole variable: `reduction(op: {})`",
                        v.name
                    )),
                );
                return false;
            }
        }
        for a in ix {
            match a {
                ast::SectionAxis::Index(e) => {
                    self.int_arg(e);
                }
                ast::SectionAxis::Range(lo, n) => {
                    self.int_arg(lo);
                    self.int_arg(n);
                }
                ast::SectionAxis::All(_) => {}
            }
        }
        true
    }

    pub(super) fn reduction_var(
        &mut self,
        op: ReductionOp,
        op_span: Span,
        v: &ast::Ident,
        d: &ast::Directive,
    ) -> Option<(LocalH, bool)> {
        let l = match self.lookup(&v.name) {
            Some(Binding::Local(l)) => l,
            Some(Binding::Global(_)) => {
                self.unknown_name(&v.name, v.span);
                return None;
            }
            Some(Binding::Const(_)) => {
                self.err(Diag::error(
                    "accl::device::reduction_const",
                    format!("cannot reduce into constant `{}`", v.name),
                    v.span,
                    "a constant",
                ));
                return None;
            }
            None => {
                self.unknown_name(&v.name, v.span);
                return None;
            }
        };
        let ty = self.body.locals[l].ty;
        let ok = match (op, ty) {
            (_, Type::Array(elem, _)) => {
                // Array reductions become atomic updates of the elements.
                let ok = match op {
                    ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min => {
                        matches!(
                            elem,
                            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
                        )
                    }
                    ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => {
                        matches!(elem, Scalar::I32 | Scalar::U32 | Scalar::I64)
                    }
                    ReductionOp::And | ReductionOp::Or => false,
                };
                if !ok {
                    self.err(
                        Diag::error(
                            "accl::device::reduction_array",
                            format!(
                                "`{}` is a `{elem}` array: arrays reduce with `+ * max min` on i32, u32, i64, f32 and f64 elements, and `& | ^` on integer ones",
                                v.name
                            ),
                            v.span,
                            format!("a `{elem}` array"),
                        )
                        .with_help("reduce into a scalar per element, or use `atomic` on the element"),
                    );
                    return None;
                }
                return Some((l, true));
            }
            (ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min, t) => {
                t.is_numeric_like()
            }
            (ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor, t) => t.is_int_like(),
            (ReductionOp::And | ReductionOp::Or, t) => t == Type::BOOL,
        };
        if !ok {
            let want = match op {
                ReductionOp::And | ReductionOp::Or => "a `bool` variable",
                ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => {
                    "an integer variable"
                }
                _ => "a numeric variable",
            };
            self.err(
                Diag::error(
                    "accl::device::reduction_type",
                    format!(
                        "reduction `{}` needs {want}, but `{}` is `{ty}`",
                        op.symbol(),
                        v.name
                    ),
                    v.span,
                    format!("`{ty}`"),
                )
                .with_label(op_span, "operator")
                .with_help(if ty.is_int_like() {
                    "integers reduce with `+ * max min & | ^`"
                } else if ty.is_float_like() {
                    "floats reduce with `+ * max min`"
                } else {
                    "a `bool` reduces with `&& ||`"
                }),
            );
            // Still a reduction variable: writing it is no race.
            return Some((l, false));
        }
        let _ = d;
        Some((l, false))
    }
}
