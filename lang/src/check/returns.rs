//! Whether a function body ends in `return` on every path (a function with
//! a result type must).

use crate::ast;

/// Does every path through the block end in `return`?
pub(super) fn block_returns(b: &ast::Block) -> bool {
    b.stmts.iter().any(stmt_returns)
}

fn stmt_returns(s: &ast::Stmt) -> bool {
    match &s.kind {
        ast::StmtKind::Return(_) => true,
        ast::StmtKind::Block(b) => block_returns(b),
        ast::StmtKind::If {
            then,
            els: Some(els),
            ..
        } => block_returns(then) && block_returns(els),
        ast::StmtKind::While { cond, .. } => matches!(cond.kind, ast::ExprKind::Bool(true)),
        _ => false,
    }
}
