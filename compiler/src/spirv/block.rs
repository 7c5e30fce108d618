//! Statements and expressions: KIR blocks as structured control flow,
//! element pointers, stores and loads (through the array's storage view),
//! and expression trees evaluated at the statement that uses them.

use super::types::Ty;
use super::{ice, spv, Writer};
use crate::abi::FieldKind;
use crate::kir::{ArrayH, Block, Expr, ExprH, Function, Stmt, StmtKind};
use lang::hir::UnOp;
use lang::{Diag, Scalar};
use rspirv::spirv::{LoopControl, SelectionControl, Word};

impl Writer<'_> {
    // ---- statements ----------------------------------------------------------

    pub(super) fn block(&mut self, f: &Function, b: &Block) -> Result<(), Diag> {
        if self.skips_in_block(f, b) {
            return self.resuming_block(f, b);
        }
        for (i, s) in b.iter().enumerate() {
            if self.terminated {
                break; // dead code after break/continue/return
            }
            if let StmtKind::Loop { body, continuing } = &s.kind {
                self.bounded_next = self.count_var.is_some()
                    && crate::bounded::bounded(f, &b[..i], body, continuing);
            }
            self.stmt(f, s)?;
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, f: &Function, s: &Stmt) -> Result<(), Diag> {
        match &s.kind {
            StmtKind::Store { local, value } => {
                let v = self.expr(f, *value)?;
                spv(self.m.b.store(self.locals[local.index()], v, None, []));
            }
            StmtKind::StoreElem {
                array,
                index,
                value,
            } => {
                let at = match self.copy_of(*array) {
                    Some(c) => Err((c, self.index_words(f, index)?)),
                    None => Ok(self.element_at(f, *array, index, s.span)?),
                };
                let v = self.expr(f, *value)?;
                let elem = self.k.arrays[*array].elem;
                let u8t = Ty::storage(elem);
                let view = self.views[array.index()];
                let v = match elem {
                    _ if view != u8t => {
                        let vw = self.m.ty(view);
                        spv(self.m.b.bitcast(vw, None, v))
                    }
                    Scalar::Bool => {
                        let one = self.m.u32c(1);
                        let zero = self.m.u32c(0);
                        let u32t = self.m.ty(Ty::U32);
                        let w = spv(self.m.b.select(u32t, None, v, one, zero));
                        let t = self.m.ty(u8t);
                        spv(self.m.b.u_convert(t, None, w))
                    }
                    Scalar::U8 => {
                        let t = self.m.ty(u8t);
                        spv(self.m.b.u_convert(t, None, v))
                    }
                    _ => v,
                };
                let (ptr, ok) = match at {
                    Ok(p) => p,
                    Err((c, ix)) => return self.copy_store(c, *array, &ix, v),
                };
                match (ok, &mut self.deferred) {
                    (Some(ok), _) => {
                        let m = self.begin_if(ok);
                        self.store_elem(ptr, v);
                        self.end_if(m);
                    }
                    (None, Some(later)) => later.push((ptr, v)),
                    (None, None) => self.store_elem(ptr, v),
                }
            }
            StmtKind::Eval(e) => {
                self.expr(f, *e)?;
            }
            StmtKind::CallTuple {
                func,
                args,
                results,
            } => self.call_tuple(f, *func, args, results)?,
            StmtKind::ReturnTuple(vs) => self.return_tuple(f, vs)?,
            StmtKind::Barrier => self.barrier(),
            StmtKind::Cache { array, lo, count } => self.cache_stmt(f, s, *array, *lo, *count)?,
            StmtKind::PrivateInit(array) => self.copy_init(*array)?,
            StmtKind::VectorLoop(v) => self.vector_loop(f, v)?,
            StmtKind::If { cond, then, els } => {
                let mut c = self.expr(f, *cond)?;
                if self.resumes_in_block(f) && crate::resume::points_in(s) > 0 {
                    c = self.resume_cond(c, then);
                }
                let then_l = self.m.b.id();
                let merge = self.m.b.id();
                let else_l = if els.is_empty() { merge } else { self.m.b.id() };
                spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
                spv(self.m.b.branch_conditional(c, then_l, else_l, []));
                self.label(then_l);
                self.block(f, then)?;
                let then_done = self.terminated;
                if !self.terminated {
                    spv(self.m.b.branch(merge));
                }
                let mut else_done = false;
                if !els.is_empty() {
                    self.label(else_l);
                    self.block(f, els)?;
                    else_done = self.terminated;
                    if !self.terminated {
                        spv(self.m.b.branch(merge));
                    }
                }
                self.label(merge);
                if then_done && else_done {
                    spv(self.m.b.unreachable());
                    self.terminated = true;
                }
            }
            StmtKind::Loop { body, continuing } => {
                let counted = !std::mem::take(&mut self.bounded_next);
                let header = self.m.b.id();
                let body_l = self.m.b.id();
                let cont = self.m.b.id();
                let merge = self.m.b.id();
                // With the fault buffer: was the loop left through an exit?
                let exited = self.fault_var.map(|_| {
                    let v = self.fvar(Ty::Bool, "exited");
                    let bt = self.m.ty(Ty::Bool);
                    let fls = self.m.b.constant_false(bt);
                    spv(self.m.b.store(v, fls, None, []));
                    v
                });
                let point = self.resume_enter_loop(f);
                spv(self.m.b.branch(header));
                self.label(header);
                spv(self.m.b.loop_merge(merge, cont, LoopControl::NONE, []));
                spv(self.m.b.branch(body_l));
                self.label(body_l);
                self.loops.push((merge, cont, exited));
                self.block(f, body)?;
                self.loops.pop();
                if !self.terminated {
                    spv(self.m.b.branch(cont));
                }
                self.label(cont);
                // Never resumed into: no statement of it is skipped.
                let was = std::mem::replace(&mut self.in_continuing, true);
                self.block(f, continuing)?;
                self.in_continuing = was;
                let again = if counted { self.loop_back_edge() } else { None };
                // Past the turns of a dispatch, the loop is left too (no
                // branch in the loop), and the invocation stops after it.
                let again = match point {
                    Some(_) => Some(self.resume_back_edge(again)),
                    None => again,
                };
                match again {
                    Some(again) => spv(self.m.b.branch_conditional(again, header, merge, [])),
                    None => spv(self.m.b.branch(header)),
                }
                self.label(merge);
                if let Some(p) = point {
                    self.resume_stop_after(p);
                }
                if let Some(e) = exited {
                    self.loop_exit_check(e, s.span);
                }
            }
            StmtKind::Break => {
                let Some(&(merge, _, exited)) = self.loops.last() else {
                    return Err(ice(s.span, "break outside a loop"));
                };
                if let Some(e) = exited {
                    let bt = self.m.ty(Ty::Bool);
                    let t = self.m.b.constant_true(bt);
                    spv(self.m.b.store(e, t, None, []));
                }
                spv(self.m.b.branch(merge));
                self.terminated = true;
            }
            StmtKind::Continue => {
                let Some(&(_, cont, _)) = self.loops.last() else {
                    return Err(ice(s.span, "continue outside a loop"));
                };
                spv(self.m.b.branch(cont));
                self.terminated = true;
            }
            StmtKind::Return(v) => {
                match v {
                    Some(v) => {
                        let v = self.expr(f, *v)?;
                        spv(self.m.b.ret_value(v))
                    }
                    None => spv(self.m.b.ret()),
                }
                self.terminated = true;
            }
        }
        Ok(())
    }

    // ---- expressions ---------------------------------------------------------

    /// Pointer to an element: row-major linear index minus the base offset.
    /// Pointer to an element, and (bounds-check mode) whether it is in
    /// bounds; `whole` is the span of the access.
    pub(super) fn element_at(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
        whole: lang::Span,
    ) -> Result<(Word, Option<Word>), Diag> {
        if self.spec.checks {
            let (p, ok) = self.element_checked(f, array, index, whole)?;
            return Ok((p, Some(ok)));
        }
        Ok((self.element(f, array, index)?, None))
    }

    fn element(&mut self, f: &Function, array: ArrayH, index: &[ExprH]) -> Result<Word, Diag> {
        let lin = self.element_index(f, array, index)?;
        Ok(self.element_ptr(array, lin))
    }

    /// The element's index in the array's buffer (row-major, less the
    /// section's base), in the index type.
    pub(super) fn element_index(
        &mut self,
        f: &Function,
        array: ArrayH,
        index: &[ExprH],
    ) -> Result<Word, Diag> {
        let a = array.index();
        let idx_w = self.m.ty(self.idx);
        if index.is_empty() {
            return Err(ice(self.k.span, "an element without indices"));
        }
        let ix = self.index_words(f, index)?;
        let lin = self.row_major(a, &ix, 0)?;
        let base = self.load_arg(FieldKind::Base(a))?;
        Ok(spv(self.m.b.i_sub(idx_w, None, lin, base)))
    }

    pub(super) fn expr(&mut self, f: &Function, h: ExprH) -> Result<Word, Diag> {
        let s = f.ty(h);
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        Ok(match &f.exprs[h] {
            Expr::Const(v) => self.constant(*v),
            Expr::Param(i) => {
                let v = self.load_arg(FieldKind::Param(*i as usize))?;
                self.arg_value(v, s)
            }
            Expr::Local(l) => spv(self.m.b.load(tw, None, self.locals[l.index()], None, [])),
            Expr::Load { array, index } => {
                let elem = self.k.arrays[*array].elem;
                let view = self.views[array.index()];
                let st = self.m.ty(view);
                let cached = self.cached.iter().find(|c| c.array == *array).copied();
                let copy = self.copy_of(*array);
                let v = match cached {
                    _ if copy.is_some() => {
                        let ix = self.index_words(f, index)?;
                        self.copy_load(copy.expect("just tested"), *array, &ix)?
                    }
                    Some(c) if !self.spec.checks => {
                        let lin = self.element_index(f, *array, index)?;
                        self.cached_load(c, lin)
                    }
                    _ => {
                        // Out of bounds (check mode), the pointer is to element 0:
                        // the load is harmless and the kernel's results are dropped.
                        let (ptr, _) = self.element_at(f, *array, index, f.exprs.span(h))?;
                        self.load_elem(st, ptr)
                    }
                };
                match elem {
                    _ if view != Ty::storage(elem) => spv(self.m.b.bitcast(tw, None, v)),
                    Scalar::U8 | Scalar::Bool => {
                        let u32t = self.m.ty(Ty::U32);
                        let w = spv(self.m.b.u_convert(u32t, None, v));
                        if elem == Scalar::Bool {
                            let z = self.m.u32c(0);
                            spv(self.m.b.i_not_equal(tw, None, w, z))
                        } else {
                            w
                        }
                    }
                    _ => v,
                }
            }
            Expr::Unary(op, a) => {
                let av = self.expr(f, *a)?;
                match op {
                    UnOp::Neg if s.is_float() => spv(self.m.b.f_negate(tw, None, av)),
                    UnOp::Neg => {
                        let r = spv(self.m.b.s_negate(tw, None, av));
                        self.wrap_u8(r, s)
                    }
                    UnOp::Not if s == Scalar::Bool => spv(self.m.b.logical_not(tw, None, av)),
                    UnOp::Not => {
                        let r = spv(self.m.b.not(tw, None, av));
                        self.wrap_u8(r, s)
                    }
                }
            }
            Expr::Binary(op, a, b) => {
                let r = self.binary(f, *op, *a, *b, s, f.exprs.span(h));
                r?
            }
            Expr::Cast(a, to) => {
                let from = f.ty(*a);
                let v = self.expr(f, *a)?;
                self.cast(v, from, *to)
            }
            Expr::Math(m, args) => {
                let mut vs = Vec::new();
                for &a in args {
                    vs.push(self.expr(f, a)?);
                }
                self.math(*m, &vs, s)
            }
            Expr::Reduce(op, a, b) => {
                let av = self.expr(f, *a)?;
                let bv = self.expr(f, *b)?;
                self.combine(*op, s, av, bv)
            }
            Expr::InvocationIndex => match self.teams {
                Some(t) => self.team_lane(t),
                None => self.local_id(),
            },
            Expr::Atomic {
                array,
                index,
                op,
                value,
            } => self.atomic(f, *array, index, *op, *value, f.exprs.span(h))?,
            Expr::Call(callee, args) => {
                let mut vs = Vec::new();
                for &a in args {
                    vs.push(self.expr(f, a)?);
                }
                let g = &self.k.functions[*callee];
                let rt = self.m.ty(g.ret.map_or(Ty::Void, Ty::reg));
                spv(self
                    .m
                    .b
                    .function_call(rt, None, self.func_ids[callee.index()], vs))
            }
        })
    }
}
