//! The arguments of `num_gangs`, `num_workers` and `vector_length`: the
//! values each may take, one rule for the checker (a constant argument),
//! the compiler and a device launch (an argument known only at run time),
//! so a value is refused alike wherever it is first known.

use super::Checker;
use crate::ast;
use crate::diag::Diag;
use crate::hir::{self, ExprH};
use crate::span::Span;

/// The most lanes of a gang: its vector, or its workers, are one Vulkan
/// workgroup, and no device runs more than 1024 invocations in one
/// (OpenACC 3.3 leaves the limit to the implementation).
pub const MAX_LANES: i128 = 1024;

/// Why `clause(n)` cannot run, if it cannot: a diagnostic at `span`, the
/// argument. `None` for a value in range or a clause without a range.
pub fn size_error(clause: &str, n: i128, span: Span) -> Option<Diag> {
    let (code, max, help) = match clause {
        "num_gangs" => (
            "accl::device::num_gangs",
            None,
            "a construct runs at least one gang; leave `num_gangs` out for the default",
        ),
        "num_workers" => (
            "accl::device::num_workers",
            Some(MAX_LANES),
            "a gang's workers share one workgroup of at most 1024 invocations; for more parallelism, run more gangs (`num_gangs`)",
        ),
        "vector_length" => (
            "accl::device::vector_length",
            Some(MAX_LANES),
            "a gang's vector is one workgroup of at most 1024 invocations; for more parallelism, run more gangs (`num_gangs`)",
        ),
        _ => return None,
    };
    let message = match max {
        _ if n >= 1 && max.is_none_or(|m| n <= m) => return None,
        Some(m) => format!("`{clause}({n})` must be between 1 and {m}"),
        None => format!("`{clause}({n})` must be at least 1"),
    };
    Some(Diag::error(code, message, span, "out of range").with_help(help))
}

impl Checker<'_> {
    /// The argument of a size clause, refused when it is a constant out of
    /// the clause's range.
    pub(super) fn size_arg(&mut self, clause: &str, e: &ast::Expr) -> ExprH {
        let h = self.int_arg(e);
        if let hir::Expr::Const(v) = self.body.exprs[h] {
            if let Some(d) = v.as_i128().and_then(|n| size_error(clause, n, e.span)) {
                self.err(d);
            }
        }
        h
    }

    /// `num_gangs(n)`, or OpenACC 3.3's `num_gangs(n, m[, l])`: a grid of
    /// gangs, which accl runs as `n * m * l` gangs in one dimension. Each
    /// dimension is checked where written, so a constant product of them is
    /// positive.
    pub(super) fn gang_count(&mut self, list: &[ast::Expr]) -> ExprH {
        if list.len() == 1 {
            return self.size_arg("num_gangs", &list[0]);
        }
        let before = self.diags.len();
        let dims: Vec<ExprH> = list.iter().map(|e| self.size_arg("num_gangs", e)).collect();
        if self.diags.len() > before {
            // Reported once, at the dimension; the product would repeat it.
            return dims[0];
        }
        let mut product = list[0].clone();
        for e in &list[1..] {
            let span = product.span.to(e.span);
            product = ast::Expr::new(
                ast::ExprKind::Binary(ast::BinOp::Mul, Box::new(product), Box::new(e.clone())),
                span,
            );
        }
        self.int_arg(&product)
    }
}
