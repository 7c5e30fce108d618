//! Which HIR code calls `routine vector|worker|gang` functions: such a
//! call holds loops of the gang that makes it (the routine runs inline),
//! so it decides a kernel's shape like an inner `loop` does.

use lang::hir::{self, Level};

/// Does `e` call a `routine vector|worker|gang` function?
pub(super) fn calls_routine(p: &hir::Program, src: &hir::Body, e: hir::ExprH) -> bool {
    use hir::Expr as E;
    let go = |x: &hir::ExprH| calls_routine(p, src, *x);
    match &src.exprs[e] {
        E::Call(f, args) => p.functions[*f].level != Level::Seq || args.iter().any(go),
        E::Global(_) => false,
        E::Unary(_, a) | E::Cast(a, _) => go(a),
        E::Binary(_, a, b) => go(a) || go(b),
        E::Index(a, idx) => go(a) || idx.iter().any(go),
        E::Builtin(_, args) | E::Array(_, args) | E::Tuple(args) => args.iter().any(go),
        E::Const(_) | E::Local(_) | E::Str(_) | E::TypeArg(_) => false,
    }
}
