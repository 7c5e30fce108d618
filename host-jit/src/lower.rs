//! Statements to Cranelift IR: one [`Gen`] builds one native function,
//! either a whole accl function or one loop of some body. Control flow,
//! the operation count and the traps live here; expressions are in
//! [`crate::expr`].

use crate::plan::scalar;
use crate::runtime::*;
use crate::Site;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Block, InstBuilder, StackSlotData, StackSlotKind, Type as ClType, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::FuncId;
use lang::hir::{Body, ExprH, LocalH, Place, Stmt, StmtKind};
use lang::{Scalar, Span, Type};
use std::collections::HashMap;

/// The native type of a scalar.
pub fn cl(s: Scalar) -> ClType {
    match s {
        Scalar::Bool | Scalar::U8 => types::I8,
        Scalar::I32 | Scalar::U32 => types::I32,
        Scalar::I64 => types::I64,
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
    }
}

pub const PTR: ClType = types::I64;

pub fn flags() -> cranelift_codegen::ir::MemFlagsData {
    cranelift_codegen::ir::MemFlagsData::trusted()
}

/// How a unit ends its runs.
pub enum Exit {
    /// A whole function: returns its value natively.
    Function,
    /// A loop: writes its scalars back to the frame and returns a status.
    Loop {
        /// The enclosing function's result (a `return` in the loop).
        ret: crate::Rets,
    },
}

/// One array of a loop unit: where its descriptor's fields live.
pub struct ArrVars {
    pub ptr: Variable,
    pub dims: Vec<Variable>,
    pub elem: Scalar,
}

/// What a unit calls: compiled functions and math routines, as ids of the
/// module, resolved into the function being built on first use.
pub struct Callees<'a> {
    pub fns: &'a [Option<FuncId>],
    /// Each compiled function's parameters and results.
    pub sigs: &'a [Option<(Vec<Scalar>, crate::Rets)>],
    /// Each function's top-level variables.
    pub globals: &'a [Vec<usize>],
    pub math: &'a HashMap<String, FuncId>,
}

pub struct Gen<'a, 'b> {
    pub b: FunctionBuilder<'b>,
    pub body: &'a Body,
    pub rt: Value,
    pub vars: HashMap<usize, Variable>,
    pub arrays: HashMap<usize, ArrVars>,
    pub ops: Variable,
    pub next: Variable,
    /// (continue, break) targets, innermost last.
    pub loops: Vec<(Block, Block)>,
    pub trap_exit: Block,
    pub ret_exit: Block,
    pub exit: Exit,
    pub sites: &'a mut Vec<Site>,
    pub module: &'a mut cranelift_jit::JITModule,
    pub callees: Callees<'a>,
    pub builtins: &'a lang::Builtins,
    pub refs: HashMap<FuncId, cranelift_codegen::ir::FuncRef>,
    /// Element addresses already bounds-checked in this statement, by
    /// array and the indices' text: `a[i] = a[i] * 2.0` checks once.
    /// Only pure index expressions are keyed, and the cache is emptied
    /// wherever control flow could skip the check that filled it.
    pub checked: HashMap<(usize, Vec<String>), Value>,
    /// (loop variable, array, axis): inside the turns of a loop whose
    /// range was checked to lie within that axis, an index that is the
    /// loop variable needs no check of its own.
    /// (loop variable, array, axis, c): `var + c` is inside that axis for
    /// every turn of the loop being generated (checked before it).
    pub in_bounds: Vec<(usize, usize, usize, i64)>,
    /// The top-level frame's scalar slots ([`Rt::globals`]), loaded once
    /// at the unit's start.
    pub globals: Option<Value>,
    /// In a loop of the top level: its scalar locals, which are top-level
    /// variables a called function may read or write in the frame.
    pub spills: Vec<usize>,
    /// The loops that run in SIMD: the loop variable's name and the lanes.
    pub simd: &'a mut Vec<(String, u8)>,
}

impl Gen<'_, '_> {
    pub fn site(&mut self, s: Site) -> u32 {
        self.sites.push(s);
        (self.sites.len() - 1) as u32
    }

    pub fn ty(&self, e: ExprH) -> Scalar {
        scalar(self.body.ty(e).defaulted()).unwrap_or(Scalar::I64)
    }

    pub fn local_ty(&self, l: LocalH) -> Scalar {
        scalar(self.body.locals[l].ty).unwrap_or(Scalar::I64)
    }

    /// The variable of scalar local `l`, declared on first use.
    pub fn var(&mut self, l: usize) -> Variable {
        if let Some(&v) = self.vars.get(&l) {
            return v;
        }
        let t = scalar(self.body.locals[LocalH::new(l)].ty).unwrap_or(Scalar::I64);
        let v = self.b.declare_var(cl(t));
        self.vars.insert(l, v);
        v
    }

    /// Start a new block after a jump (code there is unreachable).
    pub fn dead(&mut self) {
        let blk = self.b.create_block();
        self.b.switch_to_block(blk);
    }

    /// Load the top-level slots' address (in the unit's entry block).
    pub fn load_globals(&mut self) {
        self.globals = Some(self.load_rt(PTR, OFF_GLOBALS));
    }

    /// The address of top-level variable `l`'s slot.
    pub fn global_addr(&mut self, l: LocalH) -> Value {
        let base = self.globals.expect("loaded at the unit's start");
        self.b.ins().iadd_imm_s(base, 8 * l.index() as i64)
    }

    pub fn load_rt(&mut self, t: ClType, off: i32) -> Value {
        self.b.ins().load(t, flags(), self.rt, off)
    }

    pub fn store_rt(&mut self, v: Value, off: i32) {
        self.b.ins().store(flags(), v, self.rt, off);
    }

    /// Returned values as slot bits in the shared block: a scalar in
    /// `ret`, a tuple's elements in `rets`.
    pub fn store_rets(&mut self, vals: &[Value], ret: &crate::Rets) {
        for (k, (&v, &t)) in vals.iter().zip(&ret.types).enumerate() {
            let bits = self.slot_bits(v, t);
            let off = if ret.tuple {
                OFF_RETS + 8 * k as i32
            } else {
                OFF_RET
            };
            self.store_rt(bits, off);
        }
    }

    /// Record a trap and leave.
    pub fn trap(&mut self, kind: u32, site: u32) {
        let k = self.b.ins().iconst(types::I32, kind as i64);
        self.store_rt(k, OFF_TRAP_KIND);
        let s = self.b.ins().iconst(types::I32, site as i64);
        self.store_rt(s, OFF_TRAP_SITE);
        self.b.ins().jump(self.trap_exit, &[]);
    }

    /// Count one operation (a loop iteration or a call), as `Ctx::tick`
    /// does; the limit check runs in the interpreter when the count
    /// reaches `next_check`.
    pub fn tick(&mut self, span: Span, call: bool) {
        let ops = self.b.use_var(self.ops);
        let ops = self.b.ins().iadd_imm_s(ops, 1);
        self.b.def_var(self.ops, ops);
        let next = self.b.use_var(self.next);
        let due = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, ops, next);
        let slow = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(due, slow, &[], cont, &[]);
        self.b.set_cold_block(slow);
        self.b.switch_to_block(slow);
        let site = self.site(if call {
            Site::Call(span)
        } else {
            Site::Tick(span)
        });
        self.sync_out();
        let f = self.load_rt(PTR, OFF_CHECK);
        let mut sig = self.module_sig();
        sig.params.push(cranelift_codegen::ir::AbiParam::new(PTR));
        sig.params
            .push(cranelift_codegen::ir::AbiParam::new(types::I32));
        sig.returns
            .push(cranelift_codegen::ir::AbiParam::new(types::I32));
        let sref = self.b.import_signature(sig);
        let s = self.b.ins().iconst(types::I32, site as i64);
        let call = self.b.ins().call_indirect(sref, f, &[self.rt, s]);
        let r = self.b.inst_results(call)[0];
        self.sync_in();
        let stop = self.b.create_block();
        self.b.ins().brif(r, stop, &[], cont, &[]);
        self.b.switch_to_block(stop);
        self.trap(TRAP_LIMIT, site);
        self.b.switch_to_block(cont);
    }

    pub fn module_sig(&self) -> cranelift_codegen::ir::Signature {
        use cranelift_module::Module;
        self.module.make_signature()
    }

    /// The operation count to the shared block (before a call out).
    pub fn sync_out(&mut self) {
        let ops = self.b.use_var(self.ops);
        self.store_rt(ops, OFF_OPS);
    }

    /// The operation count and the next check from the shared block
    /// (after a call out, which may have moved both).
    pub fn sync_in(&mut self) {
        let ops = self.load_rt(types::I64, OFF_OPS);
        self.b.def_var(self.ops, ops);
        let next = self.load_rt(types::I64, OFF_NEXT_CHECK);
        self.b.def_var(self.next, next);
    }

    pub fn block(&mut self, b: &[Stmt]) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.checked.clear();
        match &s.kind {
            StmtKind::Let { local, init } => {
                let v = self.expr(*init);
                let var = self.var(local.index());
                self.b.def_var(var, v);
            }
            StmtKind::Assign { place, op, value } => match place {
                Place::Local(l) => {
                    let var = self.var(l.index());
                    let v = match op {
                        None => self.expr(*value),
                        Some(op) => {
                            let x = self.b.use_var(var);
                            let y = self.expr(*value);
                            let t = self.local_ty(*l);
                            self.arith(*op, t, x, y, s.span)
                        }
                    };
                    self.b.def_var(var, v);
                }
                Place::Element { array, indices } => {
                    self.store_elem(*array, indices, *op, *value, s.span)
                }
                Place::Global(g) => {
                    // The value's type is the variable's (the interpreter
                    // stores the value's slot bits).
                    let t = self.ty(*value);
                    let addr = self.global_addr(*g);
                    let v = match op {
                        None => self.expr(*value),
                        Some(op) => {
                            let bits = self.b.ins().load(types::I64, flags(), addr, 0);
                            let x = self.value_of(bits, t);
                            let y = self.expr(*value);
                            self.arith(*op, t, x, y, s.span)
                        }
                    };
                    let bits = self.slot_bits(v, t);
                    self.b.ins().store(flags(), bits, addr, 0);
                }
            },
            StmtKind::Expr(e) => {
                if let lang::hir::Expr::Call(f, args) = &self.body.exprs[*e] {
                    self.call(*f, args, self.body.span(*e));
                } else {
                    self.expr(*e);
                }
            }
            StmtKind::If { cond, then, els } => {
                let c = self.expr(*cond);
                let t = self.b.create_block();
                let e = self.b.create_block();
                let join = self.b.create_block();
                self.b.ins().brif(c, t, &[], e, &[]);
                self.b.switch_to_block(t);
                self.block(then);
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(e);
                self.block(els);
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(join);
            }
            StmtKind::While { cond, body } => {
                let head = self.b.create_block();
                let run = self.b.create_block();
                let out = self.b.create_block();
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(head);
                let c = self.expr(*cond);
                self.b.ins().brif(c, run, &[], out, &[]);
                self.b.switch_to_block(run);
                self.tick(s.span, false);
                self.loops.push((head, out));
                self.block(body);
                self.loops.pop();
                self.b.ins().jump(head, &[]);
                self.b.switch_to_block(out);
            }
            StmtKind::For(fl) => {
                let h = &fl.header;
                let lo = self.index(h.lo);
                let hi = self.index(h.hi);
                let out = self.b.create_block();
                let end = if h.inclusive {
                    hi
                } else {
                    // `lo..i64::MIN` is empty (its end does not exist).
                    let min = self.b.ins().icmp_imm_s(IntCC::Equal, hi, i64::MIN);
                    let ok = self.b.create_block();
                    self.b.ins().brif(min, out, &[], ok, &[]);
                    self.b.switch_to_block(ok);
                    self.b.ins().iadd_imm_s(hi, -1)
                };
                self.for_range(fl, lo, end, out);
                self.b.switch_to_block(out);
            }
            StmtKind::Break | StmtKind::Continue => {
                let (c, b) = *self.loops.last().expect("planned: inside a loop");
                let to = if matches!(s.kind, StmtKind::Break) {
                    b
                } else {
                    c
                };
                self.b.ins().jump(to, &[]);
                self.dead();
            }
            StmtKind::Return(e) => {
                let vals: Vec<Value> = match e.map(|e| (e, &self.body.exprs[e])) {
                    None => Vec::new(),
                    Some((_, lang::hir::Expr::Tuple(elems))) => {
                        let elems = elems.clone();
                        elems.iter().map(|&x| self.expr(x)).collect()
                    }
                    Some((e, _)) => vec![self.expr(e)],
                };
                if let Exit::Loop { ret } = &self.exit {
                    let ret = ret.clone();
                    self.store_rets(&vals, &ret);
                    self.b.ins().jump(self.ret_exit, &[]);
                } else {
                    let args: Vec<_> = vals.into_iter().map(Into::into).collect();
                    self.b.ins().jump(self.ret_exit, &args);
                }
                self.dead();
            }
            StmtKind::LetTuple { locals, init } => {
                let vals: Vec<Value> = match &self.body.exprs[*init] {
                    lang::hir::Expr::Tuple(elems) => {
                        let elems = elems.clone();
                        elems.iter().map(|&x| self.expr(x)).collect()
                    }
                    lang::hir::Expr::Call(f, args) => {
                        let (f, args) = (*f, args.clone());
                        self.call(f, &args, self.body.span(*init))
                    }
                    _ => unreachable!("planned: a tuple or a call"),
                };
                for (l, v) in locals.iter().zip(vals) {
                    if let Some(l) = l {
                        let var = self.var(l.index());
                        self.b.def_var(var, v);
                    }
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Cache { .. } => {}
            StmtKind::Construct(_) | StmtKind::Atomic { .. } => unreachable!("planned out"),
        }
    }

    /// The turns of `for` loop `fl` from `lo` to `end` (none when `lo >
    /// end`), leaving through `out` (not switched to): with no limit check
    /// due before it ends, a version without per-turn checks runs.
    pub fn for_range(&mut self, fl: &lang::hir::ForLoop, lo: Value, end: Value, out: Block) {
        let h = &fl.header;
        let some = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, end);
        let run = self.b.create_block();
        self.b.ins().brif(some, run, &[], out, &[]);
        self.b.switch_to_block(run);
        if crate::walk::ticks(self.body, &fl.body) {
            self.for_turns(fl, lo, end, out, None);
        } else {
            // A body that counts no operation of its own: when no
            // limit check falls due before the loop ends, a version
            // without the per-turn check runs, its count kept as
            // `base + i` (what the checks would have counted).
            let ops = self.b.use_var(self.ops);
            let next = self.b.use_var(self.next);
            let below = self.b.ins().icmp(IntCC::UnsignedLessThan, ops, next);
            let room = self.b.ins().isub(next, ops);
            let room = self.b.ins().iadd_imm_s(room, -1);
            let turns = self.b.ins().isub(end, lo);
            let fits = self.b.ins().icmp(IntCC::UnsignedLessThan, turns, room);
            let mut fast = self.b.ins().band(below, fits);
            // The axes indexed by the loop variable alone: the
            // quick version also needs the whole range inside them.
            let axes = self.indexed_by(h.var.index(), &fl.body);
            if !axes.is_empty() {
                let inside = self.inside(h.var, &axes, lo, end);
                fast = self.b.ins().band(fast, inside);
            }
            let (quick, counted) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(fast, quick, &[], counted, &[]);
            self.b.switch_to_block(quick);
            let one = self.b.ins().iadd_imm_s(ops, 1);
            let base = self.b.ins().isub(one, lo);
            let mark = self.in_bounds.len();
            let var = h.var.index();
            self.in_bounds
                .extend(axes.iter().map(|&(s, a, c)| (var, s, a, c)));
            self.simd_turns(fl, lo, end, out, base);
            self.in_bounds.truncate(mark);
            self.b.switch_to_block(counted);
            self.for_turns(fl, lo, end, out, None);
        }
    }

    /// The (array, axis) pairs that loop variable `var` alone indexes in
    /// `b`, when nothing in `b` assigns it and its type holds every value
    /// of the range exactly (so the index is the counter).
    pub(crate) fn indexed_by(&self, var: usize, b: &[Stmt]) -> Vec<(usize, usize, i64)> {
        let mut out = Vec::new();
        if !matches!(self.exit, Exit::Loop { .. })
            || !matches!(self.local_ty(LocalH::new(var)), Scalar::I32 | Scalar::I64)
            || crate::walk::assigns(b, var)
        {
            return out;
        }
        crate::walk::indexed_by(self.body, b, var, &mut out);
        out.retain(|(s, _, _)| self.arrays.contains_key(s));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether `var + c` stays inside axis `axis` of array `slot` for every
    /// (slot, axis, c) of `axes` and every value of `var` from `lo` to
    /// `end` (`lo <= end`): `lo >= 0` (so nothing below wraps; offsets are
    /// small), `lo + c >= 0` and `end + c` below the extent, and for an
    /// `i32` variable `end + c` within `i32` (its index arithmetic wraps
    /// there).
    pub(crate) fn inside(
        &mut self,
        var: LocalH,
        axes: &[(usize, usize, i64)],
        lo: Value,
        end: Value,
    ) -> Value {
        let mut ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, lo, 0);
        let narrow = matches!(self.local_ty(var), Scalar::I32);
        for &(slot, axis, c) in axes {
            let d = self.arrays[&slot].dims[axis];
            let n = self.b.use_var(d);
            let last = self.b.ins().iadd_imm_s(end, c);
            let below = self.b.ins().icmp(IntCC::UnsignedLessThan, last, n);
            ok = self.b.ins().band(ok, below);
            if c < 0 {
                let first = self.b.ins().iadd_imm_s(lo, c);
                let nonneg = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, first, 0);
                ok = self.b.ins().band(ok, nonneg);
            }
            if narrow {
                let fits =
                    self.b
                        .ins()
                        .icmp_imm_s(IntCC::SignedLessThanOrEqual, last, i32::MAX as i64);
                ok = self.b.ins().band(ok, fits);
            }
        }
        ok
    }

    /// The turns of `for` loop `fl` from `lo` to `end` (`lo <= end`), then
    /// a jump to `out`. With `base`, the operation count of each turn is
    /// `base + i` instead of a tick.
    pub(crate) fn for_turns(
        &mut self,
        fl: &lang::hir::ForLoop,
        lo: Value,
        end: Value,
        out: Block,
        base: Option<Value>,
    ) {
        let h = &fl.header;
        let i = self.b.declare_var(types::I64);
        self.b.def_var(i, lo);
        let head = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        // The variable takes the counter's value each turn; the body may
        // change the variable, never the counter.
        let iv = self.b.use_var(i);
        let vt = self.local_ty(h.var);
        let v = self.narrow(iv, vt);
        let var = self.var(h.var.index());
        self.b.def_var(var, v);
        match base {
            Some(base) => {
                let ops = self.b.ins().iadd(base, iv);
                self.b.def_var(self.ops, ops);
            }
            None => self.tick(h.span, false),
        }
        self.loops.push((cont, out));
        self.block(&fl.body);
        self.loops.pop();
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        let iv = self.b.use_var(i);
        let last = self.b.ins().icmp(IntCC::Equal, iv, end);
        let step = self.b.create_block();
        self.b.ins().brif(last, out, &[], step, &[]);
        self.b.switch_to_block(step);
        let n = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, n);
        self.b.ins().jump(head, &[]);
    }

    /// `a[i..] (op)= v`, in the interpreter's order: for a plain store to a
    /// rank-1 array the index, the value, then the bounds; otherwise the
    /// indices, their bounds, then the value.
    fn store_elem(
        &mut self,
        array: ExprH,
        indices: &[ExprH],
        op: Option<lang::ast::BinOp>,
        value: ExprH,
        span: Span,
    ) {
        let lang::hir::Expr::Local(l) = self.body.exprs[array] else {
            unreachable!("planned: a local array")
        };
        let elem = self.arrays[&l.index()].elem;
        if op.is_none() && indices.len() == 1 {
            let k = self.index(indices[0]);
            let v = self.expr(value);
            let addr = self.element_addr(l.index(), &[k], indices, span);
            self.b.ins().store(flags(), v, addr, 0);
            return;
        }
        let ks: Vec<Value> = indices.iter().map(|&i| self.index(i)).collect();
        let addr = self.element_addr(l.index(), &ks, indices, span);
        let v = self.expr(value);
        let v = match op {
            None => v,
            Some(op) => {
                let old = self.b.ins().load(cl(elem), flags(), addr, 0);
                self.arith(op, elem, old, v, span)
            }
        };
        self.b.ins().store(flags(), v, addr, 0);
    }

    /// The address of element `ks` of loop array `slot`, after the bounds
    /// check of each axis in order.
    pub fn element_addr(&mut self, slot: usize, ks: &[Value], ix: &[ExprH], span: Span) -> Value {
        let key: Option<Vec<String>> = ix.iter().map(|&i| self.pure_key(i)).collect();
        if let Some(k) = &key {
            if let Some(&addr) = self.checked.get(&(slot, k.clone())) {
                return addr;
            }
        }
        let addr = self.checked_addr(slot, ks, ix, span);
        if let Some(k) = key {
            self.checked.insert((slot, k), addr);
        }
        addr
    }

    /// The text of a pure expression (locals, constants and operators),
    /// equal for two expressions with equal values within a statement.
    fn pure_key(&self, e: ExprH) -> Option<String> {
        use lang::hir::Expr;
        Some(match &self.body.exprs[e] {
            Expr::Local(l) => format!("l{}", l.index()),
            Expr::Const(v) => format!("c{v:?}"),
            Expr::Unary(op, a) => format!("({op:?} {})", self.pure_key(*a)?),
            Expr::Cast(a, t) => format!("({t:?} {})", self.pure_key(*a)?),
            Expr::Binary(op, a, b) => {
                format!("({op:?} {} {})", self.pure_key(*a)?, self.pure_key(*b)?)
            }
            _ => return None,
        })
    }

    fn checked_addr(&mut self, slot: usize, ks: &[Value], ix: &[ExprH], span: Span) -> Value {
        let (ptr, dims, elem) = {
            let a = &self.arrays[&slot];
            (a.ptr, a.dims.clone(), a.elem)
        };
        let site = self.site(Site::Index {
            ix: ix.iter().map(|&i| self.body.span(i)).collect(),
            span,
        });
        let mut off: Option<Value> = None;
        for (axis, (&k, &d)) in ks.iter().zip(&dims).enumerate() {
            let n = self.b.use_var(d);
            let proven = self.in_bounds.iter().any(|&(v, s, a, c)| {
                s == slot && a == axis && crate::walk::offset_of(self.body, ix[axis], v) == Some(c)
            });
            if proven {
                off = Some(match off {
                    None => k,
                    Some(o) => {
                        let m = self.b.ins().imul(o, n);
                        self.b.ins().iadd(m, k)
                    }
                });
                continue;
            }
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, k, n);
            let good = self.b.create_block();
            let bad = self.b.create_block();
            self.b.ins().brif(ok, good, &[], bad, &[]);
            self.b.set_cold_block(bad);
            self.b.switch_to_block(bad);
            let a = self.b.ins().iconst(types::I64, axis as i64);
            self.store_rt(a, OFF_TRAP_AXIS);
            self.store_rt(k, OFF_TRAP_INDEX);
            self.store_rt(n, OFF_TRAP_EXTENT);
            self.trap(TRAP_BOUNDS, site);
            self.b.switch_to_block(good);
            off = Some(match off {
                None => k,
                Some(o) => {
                    let m = self.b.ins().imul(o, n);
                    self.b.ins().iadd(m, k)
                }
            });
        }
        let off = off.expect("planned: at least one index");
        let size = cl(elem).bytes() as i64;
        let bytes = if size == 1 {
            off
        } else {
            self.b.ins().imul_imm_s(off, size)
        };
        let base = self.b.use_var(ptr);
        self.b.ins().iadd(base, bytes)
    }

    /// A call of compiled function `f`, as the interpreter makes it: the
    /// arguments, the depth check, one operation, the call, the depth back.
    pub fn call(&mut self, f: lang::hir::FnH, args: &[ExprH], span: Span) -> Vec<Value> {
        let vals: Vec<Value> = args.iter().map(|&a| self.expr(a)).collect();
        let site = self.site(Site::Call(span));
        let depth = self.load_rt(types::I64, OFF_DEPTH);
        let max = self.load_rt(types::I64, OFF_MAX_DEPTH);
        let full = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, depth, max);
        let deep = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(full, deep, &[], ok, &[]);
        self.b.set_cold_block(deep);
        self.b.switch_to_block(deep);
        self.trap(TRAP_DEPTH, site);
        self.b.switch_to_block(ok);
        let d1 = self.b.ins().iadd_imm_s(depth, 1);
        self.store_rt(d1, OFF_DEPTH);
        self.tick(span, true);
        self.sync_out();
        let id = self.callees.fns[f.index()].expect("planned: a compiled callee");
        let rets = self.callees.sigs[f.index()]
            .as_ref()
            .map(|s| s.1.clone())
            .unwrap_or_default();
        let fref = self.func_ref(id);
        let mut argv = vals;
        let out = rets.in_memory().then(|| {
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                8 * rets.types.len() as u32,
                3,
            ));
            argv.push(self.b.ins().stack_addr(PTR, slot, 0));
            slot
        });
        argv.push(self.rt);
        let shared: Vec<usize> = self
            .spills
            .iter()
            .copied()
            .filter(|l| self.callees.globals[f.index()].contains(l))
            .collect();
        for &l in &shared {
            let var = self.var(l);
            let v = self.b.use_var(var);
            let t = self.local_ty(LocalH::new(l));
            let bits = self.slot_bits(v, t);
            let addr = self.global_addr(LocalH::new(l));
            self.b.ins().store(flags(), bits, addr, 0);
        }
        let call = self.b.ins().call(fref, &argv);
        let mut r = self.b.inst_results(call).to_vec();
        if let Some(slot) = out {
            r = rets
                .types
                .iter()
                .enumerate()
                .map(|(k, &t)| {
                    let bits = self.b.ins().stack_load(PTR, types::I64, slot, 8 * k as i32);
                    self.value_of(bits, t)
                })
                .collect();
        }
        for &l in &shared {
            let addr = self.global_addr(LocalH::new(l));
            let bits = self.b.ins().load(types::I64, flags(), addr, 0);
            let t = self.local_ty(LocalH::new(l));
            let v = self.value_of(bits, t);
            let var = self.var(l);
            self.b.def_var(var, v);
        }
        self.sync_in();
        let depth = self.load_rt(types::I64, OFF_DEPTH);
        let d0 = self.b.ins().iadd_imm_s(depth, -1);
        self.store_rt(d0, OFF_DEPTH);
        let k = self.load_rt(types::I32, OFF_TRAP_KIND);
        let cont = self.b.create_block();
        self.b.ins().brif(k, self.trap_exit, &[], cont, &[]);
        self.b.switch_to_block(cont);
        r
    }

    pub fn func_ref(&mut self, id: FuncId) -> cranelift_codegen::ir::FuncRef {
        use cranelift_module::Module;
        if let Some(&r) = self.refs.get(&id) {
            return r;
        }
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    /// An `i64` of an integer value of type `t` (how indices and loop
    /// bounds are taken).
    pub fn widen(&mut self, v: Value, t: Scalar) -> Value {
        match t {
            Scalar::I64 => v,
            Scalar::I32 => self.b.ins().sextend(types::I64, v),
            _ => self.b.ins().uextend(types::I64, v),
        }
    }

    /// An `i64` narrowed to integer type `t`, wrapping.
    pub fn narrow(&mut self, v: Value, t: Scalar) -> Value {
        match cl(t) {
            types::I64 => v,
            ty => self.b.ins().ireduce(ty, v),
        }
    }

    pub fn index(&mut self, e: ExprH) -> Value {
        let t = self.ty(e);
        let v = self.expr(e);
        self.widen(v, t)
    }

    /// The slot bits of value `v` of type `t` (the interpreter's encoding).
    pub fn slot_bits(&mut self, v: Value, t: Scalar) -> Value {
        match t {
            Scalar::I64 => v,
            Scalar::I32 => self.b.ins().sextend(types::I64, v),
            Scalar::U32 | Scalar::U8 | Scalar::Bool => self.b.ins().uextend(types::I64, v),
            Scalar::F32 => {
                let i =
                    self.b
                        .ins()
                        .bitcast(types::I32, cranelift_codegen::ir::MemFlagsData::new(), v);
                self.b.ins().uextend(types::I64, i)
            }
            Scalar::F64 => {
                self.b
                    .ins()
                    .bitcast(types::I64, cranelift_codegen::ir::MemFlagsData::new(), v)
            }
        }
    }

    /// A value of type `t` from slot bits.
    pub fn value_of(&mut self, bits: Value, t: Scalar) -> Value {
        match t {
            Scalar::I64 => bits,
            Scalar::I32 | Scalar::U32 | Scalar::U8 => self.b.ins().ireduce(cl(t), bits),
            Scalar::Bool => self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0),
            Scalar::F32 => {
                let i = self.b.ins().ireduce(types::I32, bits);
                self.b
                    .ins()
                    .bitcast(types::F32, cranelift_codegen::ir::MemFlagsData::new(), i)
            }
            Scalar::F64 => {
                self.b
                    .ins()
                    .bitcast(types::F64, cranelift_codegen::ir::MemFlagsData::new(), bits)
            }
        }
    }

    /// The scalar locals a unit touches, sorted (what a loop unit loads
    /// from and writes back to the frame).
    pub fn touched(body: &Body, b: &[Stmt]) -> Vec<usize> {
        let mut out = Vec::new();
        crate::walk::locals(body, b, &mut out);
        out.retain(|&l| scalar(body.locals[LocalH::new(l)].ty).is_some());
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn array_locals(body: &Body, b: &[Stmt]) -> Vec<usize> {
        let mut out = Vec::new();
        crate::walk::locals(body, b, &mut out);
        out.retain(|&l| matches!(body.locals[LocalH::new(l)].ty, Type::Array(..)));
        out.sort_unstable();
        out.dedup();
        out
    }
}
