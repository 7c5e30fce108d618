//! The device frames the checker keeps while inside a construct.

use crate::ast;
use crate::hir::{ExprH, LocalH};
use crate::span::Span;

/// A device construct (or a `loop` inside one) being checked.
pub(super) struct DevFrame {
    pub(super) kind: ast::DirectiveKind,
    /// The level of the frame's parallelism that a call inside must stay
    /// below (`None`: a `loop seq`, a level-less `loop`, or a region,
    /// which leave the choice to the enclosing frames).
    pub(super) level: Option<crate::hir::Level>,
    /// A `loop seq` (its iterations run in order).
    pub(super) seq: bool,
    pub(super) kind_span: Span,
    /// `scopes.len()` when the frame was entered: locals in scopes below it
    /// are declared outside the frame.
    pub(super) scope_base: usize,
    /// Reduction and private variables of this frame: may be written.
    pub(super) writable: Vec<LocalH>,
    /// The frame's `private` and `firstprivate` scalars: on a region, each
    /// gang's own.
    pub(super) private: Vec<LocalH>,
    /// Scalars reduced by this frame, with their operator.
    pub(super) reductions: Vec<(LocalH, ast::ReductionOp)>,
    /// Reductions of an enclosing frame that this loop updates: it
    /// reduces them too.
    pub(super) implied: Vec<(LocalH, ast::ReductionOp)>,
    /// Arrays reduced by this frame, with their operator: only updated.
    pub(super) reduced_arrays: Vec<(LocalH, ast::ReductionOp)>,
    /// `loop_stack.len()` at entry: `continue` may not leave the frame.
    pub(super) loop_base: usize,
    /// A `seq` loop: its iterations run one after another, so a scalar of
    /// the construct may be assigned in them without a race.
    pub(super) in_order: bool,
    /// A part of a `kernels` construct: scalars without a clause are `copy`
    /// there (OpenACC 3.3), not firstprivate.
    pub(super) kernels: bool,
    /// Scalars declared outside the construct and assigned in it with no
    /// clause: firstprivate (`parallel`, `serial`) by default, or copied
    /// back (`true`: in `kernels`, or named in a `copy`/`copyout`).
    pub(super) implicit: Vec<(LocalH, bool)>,
    /// Like `loop_base`, but counting the construct's own (parallel) loops:
    /// `break` may not leave them either, while `continue` just ends one
    /// iteration.
    pub(super) break_base: usize,
    /// The construct's `if(c)` (false: it runs on the host).
    pub(super) if_: Option<ExprH>,
    /// A region that runs as one gang (`serial`, or `parallel` with no
    /// `num_gangs` or `num_gangs(1)`): a `loop` of any level in it covers
    /// every iteration of the construct.
    pub(super) one_gang: bool,
    /// Reductions of `loop`s inside that combine into a scalar of the
    /// host this construct does not reduce: the construct reduces it
    /// (OpenACC's implied `copy`), unless its own code assigns it.
    pub(super) loop_reduced: Vec<(LocalH, ast::ReductionOp)>,
}
