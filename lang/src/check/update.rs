//! Statements that touch device memory in their own way: `atomic`
//! updates, updates of an array in a `reduction` clause (atomic updates
//! of its elements), and `cache` sections.

use super::{Binding, Checker};
use crate::ast::{self, ReductionOp};
use crate::diag::Diag;
use crate::hir::{self, LocalH};
use crate::span::Span;
use crate::types::{Scalar, Type};

impl Checker<'_> {
    pub(super) fn atomic(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: ast::AtomicOp,
        op_span: Span,
        value: &ast::Expr,
        reduced: bool,
    ) -> Option<hir::Stmt> {
        // `atomic x += v` on a scalar of the host: the scalar is data, and
        // the update goes to its device copy (`data_scalars`).
        if let Some((l, ty)) = self.atomic_scalar(target) {
            self.present_scalars.push((self.body.func, l, target.span));
            let (v, vt) = self.expr(value, Some(ty));
            self.coerce(v, vt, ty, value.span);
            return Some(hir::Stmt {
                kind: hir::StmtKind::Atomic {
                    place: hir::Place::Local(l),
                    op,
                    value: v,
                },
                span: s.span,
            });
        }
        let ast::ExprKind::Index(..) = &target.kind else {
            self.expr(target, None);
            self.err(
                Diag::error(
                    "accl::device::atomic_target",
                    "the target of `atomic` must be an array element",
                    target.span,
                    "not an array element",
                )
                .with_help("for a scalar sum use `reduction(+: x)` on the construct"),
            );
            return None;
        };
        self.updating_reduced_array = reduced;
        let place = self.place(target, true);
        self.updating_reduced_array = false;
        if !reduced {
            self.note_element_read(target);
        }
        let (place, ty) = place?;
        let elem = ty.scalar()?;
        let supported = matches!(
            elem,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        );
        if !supported {
            self.err(
                Diag::error(
                    "accl::device::atomic_type",
                    format!("atomic updates of `{elem}` elements are not supported"),
                    target.span,
                    format!("a `{elem}` element"),
                )
                .with_help("atomics work on i32, u32, i64, f32 and f64 arrays"),
            );
            return None;
        }
        if op.int_only() && !elem.is_int() {
            self.err(
                Diag::error(
                    "accl::device::atomic_type",
                    format!(
                        "`atomic {}` needs an integer element, found `{elem}`",
                        op.symbol()
                    ),
                    op_span,
                    "bitwise operator",
                )
                .with_help("floats update atomically with `+= -= *= /= max= min=`"),
            );
            return None;
        }
        let (v, vt) = self.expr(value, Some(ty));
        self.coerce(v, vt, ty, value.span);
        Some(hir::Stmt {
            kind: hir::StmtKind::Atomic {
                place,
                op,
                value: v,
            },
            span: s.span,
        })
    }
}

impl Checker<'_> {
    /// The target of `atomic` when it is a scalar declared outside every
    /// device construct around it, of a type atomics take.
    fn atomic_scalar(&mut self, target: &ast::Expr) -> Option<(LocalH, Type)> {
        let first = self.dev.first()?.scope_base;
        let l = self.scalar_in_data(target)?;
        let ty = self.body.locals[l].ty;
        let ok = self.body.local_scope[l.index()] < first
            && matches!(
                ty.scalar()?,
                Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64
            );
        ok.then_some((l, ty))
    }

    /// The operator of array `l` when a device frame reduces it.
    pub(super) fn reduced_array(&self, l: LocalH) -> Option<ReductionOp> {
        self.dev
            .iter()
            .rev()
            .find_map(|f| f.reduced_arrays.iter().find(|(a, _)| *a == l).map(|r| r.1))
    }

    /// `h[i] op= v`, `h[i] = h[i] op v` or `h[i] = max(h[i], v)` (`min`) on
    /// an array `h` the construct reduces with `red`: an atomic update of
    /// the element (so every lane's contribution lands once, in any order).
    /// Anything else is an error.
    pub(super) fn reduced_array_update(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: Option<ast::BinOp>,
        op_span: Span,
        value: &ast::Expr,
        (name, red): (&str, ReductionOp),
    ) -> Option<hir::StmtKind> {
        use ast::{AtomicOp as A, BinOp as B};
        let text = |e: &ast::Expr| -> String {
            self.src[e.span.start as usize..e.span.end as usize]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect()
        };
        let of_bin = |b: B| match b {
            B::Add => Some((ReductionOp::Add, A::Add)),
            B::Sub => Some((ReductionOp::Add, A::Sub)),
            B::Mul => Some((ReductionOp::Mul, A::Mul)),
            B::BitAnd => Some((ReductionOp::BitAnd, A::And)),
            B::BitOr => Some((ReductionOp::BitOr, A::Or)),
            B::BitXor => Some((ReductionOp::BitXor, A::Xor)),
            _ => None,
        };
        let form = match (op, &value.kind) {
            (Some(b), _) => of_bin(b).map(|o| (o, value)),
            (None, ast::ExprKind::Binary(b, l, r)) if text(l) == text(target) => {
                of_bin(*b).map(|o| (o, &**r))
            }
            // `h[i] = v op h[i]` for a commutative `op` (not `-`).
            (None, ast::ExprKind::Binary(b, l, r)) if text(r) == text(target) && *b != B::Sub => {
                of_bin(*b).map(|o| (o, &**l))
            }
            // `max(h[i], v)` or `max(v, h[i])` (min alike).
            (None, ast::ExprKind::Call(f, args))
                if args.len() == 2 && matches!(f.name.as_str(), "max" | "min") =>
            {
                let v = if text(&args[0]) == text(target) {
                    Some(&args[1])
                } else if text(&args[1]) == text(target) {
                    Some(&args[0])
                } else {
                    None
                };
                v.map(|v| {
                    if f.name == "max" {
                        ((ReductionOp::Max, A::Max), v)
                    } else {
                        ((ReductionOp::Min, A::Min), v)
                    }
                })
            }
            _ => None,
        };
        let Some(((found, aop), v)) = form.filter(|((r, _), _)| *r == red) else {
            self.err(
                Diag::error(
                    "accl::device::reduction_array_update",
                    format!(
                        "`{name}` is in a `reduction({}: ..)`: its elements can only be combined with `{}`",
                        red.symbol(),
                        red.symbol()
                    ),
                    s.span,
                    "not such an update",
                )
                .with_help(match red {
                    ReductionOp::Max | ReductionOp::Min => format!(
                        "write `{name}[i] = {}({name}[i], v);`",
                        red.symbol()
                    ),
                    _ => format!("write `{name}[i] {}= v;`", red.symbol()),
                }),
            );
            return None;
        };
        let _ = found;
        self.atomic(s, target, aop, op_span, v, true)
            .map(|st| st.kind)
    }
}

/// Elements of one `cache` section at most (16 KiB of workgroup memory at
/// 4 bytes an element).
pub const CACHE_MAX: i128 = 4096;

impl Checker<'_> {
    /// `cache(a[lo:n], ..)`: inside a compute construct, sections of 1-D
    /// arrays with a constant length.
    pub(super) fn cache(&mut self, s: &ast::Stmt, sections: &[ast::Expr]) -> Option<hir::Stmt> {
        if self.dev.is_empty() {
            self.err(
                Diag::error(
                    "accl::device::cache_outside",
                    "`cache` is only allowed inside a compute construct",
                    s.span,
                    "outside `parallel`",
                )
                .with_help("put it at the top of a loop body inside `parallel loop`"),
            );
            return None;
        }
        let mut out = Vec::new();
        for e in sections {
            let bad = |me: &mut Self, why: &str| {
                me.err(
                    Diag::error("accl::device::cache_section", why.to_string(), e.span, "this section")
                        .with_help(format!(
                            "write `cache(a[lo:n])` with `a` a 1-D array and `n` a constant from 1 to {CACHE_MAX}"
                        )),
                );
            };
            let (a, lo, n) = match &e.kind {
                ast::ExprKind::Section(a, axes) => match axes.as_slice() {
                    [ast::SectionAxis::Range(lo, n)] => (a, lo, n),
                    _ => {
                        bad(self, "`cache` takes sections `a[lo:n]` of one axis");
                        continue;
                    }
                },
                _ => {
                    bad(self, "`cache` takes array sections `a[lo:n]`");
                    continue;
                }
            };
            let array = match &a.kind {
                ast::ExprKind::Var(name) => match self.lookup(name) {
                    Some(Binding::Local(l)) => l,
                    _ => {
                        self.unknown_name(name, a.span);
                        continue;
                    }
                },
                _ => {
                    bad(self, "`cache` takes sections of array variables");
                    continue;
                }
            };
            if !matches!(self.body.locals[array].ty, Type::Array(_, 1)) {
                bad(self, "`cache` takes sections of 1-D arrays");
                continue;
            }
            self.note_array(array, a.span, false);
            let count = match self.const_int(n) {
                Some(c) if (1..=CACHE_MAX).contains(&c) => c as u32,
                Some(_) => {
                    bad(self, "the length of a cached section is from 1 to 4096");
                    continue;
                }
                None => continue,
            };
            let lo = self.int_arg(lo);
            out.push(hir::Stmt {
                kind: hir::StmtKind::Cache { array, lo, count },
                span: e.span,
            });
        }
        match out.len() {
            0 => None,
            1 => out.pop(),
            _ => Some(hir::Stmt {
                kind: hir::StmtKind::Block(out),
                span: s.span,
            }),
        }
    }
}
