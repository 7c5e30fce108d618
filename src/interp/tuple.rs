//! Tuples on the host: a tuple is the bit patterns of its scalar elements
//! ([`CExpr::Tuple`]), made by a tuple expression or a call of a function
//! returning one (the callee's `return` leaves it in [`Frame::ret_tuple`]),
//! and only ever returned or bound to locals by `LetTuple`.

use super::error;
use super::machine::{CExpr, St};
use super::value::{Flow, Frame};
use super::Compiler;
use lang::hir::{ExprH, LocalH};
use lang::Span;

impl Compiler<'_> {
    /// `(a, b, ..)`: every element in order.
    pub fn tuple_expr(&self, elems: &[ExprH]) -> CExpr {
        let parts: Vec<CExpr> = elems.iter().map(|&e| self.expr(e)).collect();
        CExpr::Tuple(Box::new(move |fr, cx| {
            parts.iter().map(|p| p.eval_bits(fr, cx)).collect()
        }))
    }

    /// `return t;` in a function returning a tuple.
    pub fn return_tuple(&self, init: ExprH, span: Span) -> St {
        let CExpr::Tuple(f) = self.expr(init) else {
            return Box::new(move |_, _| Err(error::internal(span, "a tuple return of no tuple")));
        };
        Box::new(move |fr: &mut Frame, cx| {
            fr.ret_tuple = f(fr, cx)?;
            Ok(Flow::Return)
        })
    }

    /// Bind the elements of `init` to `locals` (`None`: dropped).
    pub fn let_tuple(&self, locals: &[Option<LocalH>], init: ExprH, span: Span) -> St {
        let CExpr::Tuple(f) = self.expr(init) else {
            return Box::new(move |_, _| Err(error::internal(span, "a destructuring of no tuple")));
        };
        let slots: Vec<Option<usize>> = locals.iter().map(|l| l.map(|l| l.index())).collect();
        Box::new(move |fr, cx| {
            let bits = f(fr, cx)?;
            for (slot, b) in slots.iter().zip(bits) {
                if let Some(s) = slot {
                    fr.s[*s] = b;
                }
            }
            Ok(Flow::Next)
        })
    }
}
