//! Expressions to Cranelift IR, with the interpreter's semantics: wrapping
//! integers, integer division by zero a located error, `i64::MIN / -1`
//! wrapping, Rust's saturating float-to-integer casts, std's math.

use crate::lower::{cl, Gen};
use crate::runtime::TRAP_DIV_ZERO;
use crate::Site;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use lang::ast::{BinOp, UnOp};
use lang::hir::{Expr, ExprH};
use lang::{Scalar, Span, Value as V};

fn is_float(t: Scalar) -> bool {
    matches!(t, Scalar::F32 | Scalar::F64)
}

fn signed(t: Scalar) -> bool {
    matches!(t, Scalar::I32 | Scalar::I64)
}

impl Gen<'_, '_> {
    pub fn expr(&mut self, e: ExprH) -> Value {
        let t = self.ty(e);
        let span = self.body.span(e);
        match &self.body.exprs[e] {
            Expr::Const(v) => self.constant(*v, t),
            Expr::Local(l) => {
                let var = self.var(l.index());
                self.b.use_var(var)
            }
            Expr::Unary(op, a) => {
                let x = self.expr(*a);
                match (op, t) {
                    (UnOp::Neg, t) if is_float(t) => self.b.ins().fneg(x),
                    (UnOp::Neg, _) => self.b.ins().ineg(x),
                    (UnOp::Not, Scalar::Bool) => self.b.ins().bxor_imm_u(x, 1),
                    (UnOp::Not, _) => self.b.ins().bnot(x),
                }
            }
            Expr::Binary(op, a, b) => {
                let (op, a, b) = (*op, *a, *b);
                if matches!(op, BinOp::And | BinOp::Or) {
                    return self.logic(op, a, b);
                }
                let at = self.ty(a);
                let x = self.expr(a);
                let y = self.expr(b);
                match op {
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        self.compare(op, at, x, y)
                    }
                    _ => self.arith(op, at, x, y, span),
                }
            }
            Expr::Cast(a, to) => {
                let from = self.ty(*a);
                let x = self.expr(*a);
                self.cast(x, from, *to)
            }
            Expr::Index(arr, ix) => {
                let Expr::Local(l) = self.body.exprs[*arr] else {
                    unreachable!("planned: a local array")
                };
                let ix = ix.clone();
                let ks: Vec<Value> = ix.iter().map(|&i| self.index(i)).collect();
                let addr = self.element_addr(l.index(), &ks, &ix, span);
                let elem = self.arrays[&l.index()].elem;
                self.b.ins().load(cl(elem), crate::lower::flags(), addr, 0)
            }
            Expr::Call(f, args) => {
                let (f, args) = (*f, args.clone());
                self.call(f, &args, span)[0]
            }
            Expr::Builtin(id, args)
                if matches!(self.exit, crate::lower::Exit::Loop { .. })
                    && self.extent_of(*id, args).is_some() =>
            {
                let (slot, axis) = self.extent_of(*id, args).unwrap_or_default();
                let dims = self.arrays[&slot].dims.clone();
                let n = match axis {
                    Some(k) => self.b.use_var(dims[k]),
                    None => {
                        let mut n = self.b.use_var(dims[0]);
                        for &d in &dims[1..] {
                            let x = self.b.use_var(d);
                            n = self.b.ins().imul(n, x);
                        }
                        n
                    }
                };
                // `as i32`, as the interpreter's `len` and `shape` give it.
                self.b.ins().ireduce(types::I32, n)
            }
            Expr::Builtin(id, args) => {
                let args = args.clone();
                let name = self.builtin_name(*id);
                self.math(&name, t, &args)
            }
            Expr::Global(l) => {
                let addr = self.global_addr(*l);
                let bits = self
                    .b
                    .ins()
                    .load(types::I64, crate::lower::flags(), addr, 0);
                self.value_of(bits, t)
            }
            Expr::Str(_) | Expr::TypeArg(_) | Expr::Array(..) | Expr::Tuple(_) => {
                unreachable!("planned out")
            }
        }
    }

    fn extent_of(&self, id: lang::BuiltinId, args: &[ExprH]) -> Option<(usize, Option<usize>)> {
        crate::plan::Planner::extent_with(self.builtins, self.body, id, args)
    }

    fn builtin_name(&self, id: lang::BuiltinId) -> String {
        self.builtins.get(id).name.clone()
    }

    fn constant(&mut self, v: V, t: Scalar) -> Value {
        match v.cast(t) {
            V::Bool(b) => self.b.ins().iconst(types::I8, b as i64),
            V::I32(x) => self.b.ins().iconst(types::I32, x as i64),
            V::U32(x) => self.b.ins().iconst(types::I32, x as i64),
            V::U8(x) => self.b.ins().iconst(types::I8, x as i64),
            V::I64(x) => self.b.ins().iconst(types::I64, x),
            V::F32(x) => self.b.ins().f32const(x),
            V::F64(x) => self.b.ins().f64const(x),
            V::IntLit(_) | V::FloatLit(_) => self.b.ins().iconst(cl(t), 0),
        }
    }

    /// `&&` / `||`, short-circuit: the right side runs only when needed
    /// (it may call, count operations or fail).
    fn logic(&mut self, op: BinOp, a: ExprH, b: ExprH) -> Value {
        let x = self.expr(a);
        // What the right side checks may not have happened after it.
        self.checked.clear();
        let rhs = self.b.create_block();
        let join = self.b.create_block();
        self.b.append_block_param(join, types::I8);
        if op == BinOp::And {
            self.b.ins().brif(x, rhs, &[], join, &[x.into()]);
        } else {
            self.b.ins().brif(x, join, &[x.into()], rhs, &[]);
        }
        self.b.switch_to_block(rhs);
        let y = self.expr(b);
        self.b.ins().jump(join, &[y.into()]);
        self.b.switch_to_block(join);
        self.checked.clear();
        self.b.block_params(join)[0]
    }

    fn compare(&mut self, op: BinOp, t: Scalar, x: Value, y: Value) -> Value {
        if is_float(t) {
            // Rust's comparisons: ordered, except `!=` (true on NaN).
            let cc = match op {
                BinOp::Eq => FloatCC::Equal,
                BinOp::Ne => FloatCC::NotEqual,
                BinOp::Lt => FloatCC::LessThan,
                BinOp::Le => FloatCC::LessThanOrEqual,
                BinOp::Gt => FloatCC::GreaterThan,
                _ => FloatCC::GreaterThanOrEqual,
            };
            return self.b.ins().fcmp(cc, x, y);
        }
        let s = signed(t);
        let cc = match op {
            BinOp::Eq => IntCC::Equal,
            BinOp::Ne => IntCC::NotEqual,
            BinOp::Lt if s => IntCC::SignedLessThan,
            BinOp::Le if s => IntCC::SignedLessThanOrEqual,
            BinOp::Gt if s => IntCC::SignedGreaterThan,
            BinOp::Ge if s => IntCC::SignedGreaterThanOrEqual,
            BinOp::Lt => IntCC::UnsignedLessThan,
            BinOp::Le => IntCC::UnsignedLessThanOrEqual,
            BinOp::Gt => IntCC::UnsignedGreaterThan,
            _ => IntCC::UnsignedGreaterThanOrEqual,
        };
        self.b.ins().icmp(cc, x, y)
    }

    /// An arithmetic or bitwise operator on operands of type `t`; `span`
    /// locates a division by zero.
    pub fn arith(&mut self, op: BinOp, t: Scalar, x: Value, y: Value, span: Span) -> Value {
        let f = is_float(t);
        let ins = self.b.ins();
        match op {
            BinOp::Add if f => ins.fadd(x, y),
            BinOp::Sub if f => ins.fsub(x, y),
            BinOp::Mul if f => ins.fmul(x, y),
            BinOp::Div if f => ins.fdiv(x, y),
            BinOp::Rem if f => self.routine("%", t, &[x, y]),
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::BitAnd => ins.band(x, y),
            BinOp::BitOr => ins.bor(x, y),
            BinOp::BitXor => ins.bxor(x, y),
            BinOp::Shl => ins.ishl(x, y),
            BinOp::Shr if signed(t) => ins.sshr(x, y),
            BinOp::Shr => ins.ushr(x, y),
            BinOp::Div | BinOp::Rem => self.int_div(op, t, x, y, span),
            _ => unreachable!("not an arithmetic operator"),
        }
    }

    fn int_div(&mut self, op: BinOp, t: Scalar, x: Value, y: Value, span: Span) -> Value {
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
        let bad = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(zero, bad, &[], ok, &[]);
        self.b.set_cold_block(bad);
        self.b.switch_to_block(bad);
        let site = self.site(Site::Div(span));
        self.trap(TRAP_DIV_ZERO, site);
        self.b.switch_to_block(ok);
        if !signed(t) {
            return if op == BinOp::Div {
                self.b.ins().udiv(x, y)
            } else {
                self.b.ins().urem(x, y)
            };
        }
        // `MIN / -1` wraps to MIN and `MIN % -1` is 0 (Rust's wrapping
        // division); the hardware would fault, so -1 never reaches it.
        let m1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
        let one = self.b.ins().iconst(cl(t), 1);
        let d = self.b.ins().select(m1, one, y);
        if op == BinOp::Div {
            let q = self.b.ins().sdiv(x, d);
            let n = self.b.ins().ineg(x);
            self.b.ins().select(m1, n, q)
        } else {
            let r = self.b.ins().srem(x, d);
            let z = self.b.ins().iconst(cl(t), 0);
            self.b.ins().select(m1, z, r)
        }
    }

    /// `x as to` with Rust's semantics (as the interpreter's casts).
    pub fn cast(&mut self, x: Value, from: Scalar, to: Scalar) -> Value {
        use Scalar::*;
        if from == to {
            return x;
        }
        let ins = self.b.ins();
        match (from, to) {
            (F32, F64) => ins.fpromote(types::F64, x),
            (F64, F32) => ins.fdemote(types::F32, x),
            (F32 | F64, Bool) => {
                let z = if from == F32 {
                    ins.f32const(0.0)
                } else {
                    self.b.ins().f64const(0.0)
                };
                self.b.ins().fcmp(FloatCC::NotEqual, x, z)
            }
            (F32 | F64, I32) => ins.fcvt_to_sint_sat(types::I32, x),
            (F32 | F64, I64) => ins.fcvt_to_sint_sat(types::I64, x),
            (F32 | F64, U32) => ins.fcvt_to_uint_sat(types::I32, x),
            (F32 | F64, U8) => {
                // Saturate to 0..=255 through a wider integer.
                let w = ins.fcvt_to_sint_sat(types::I32, x);
                let lo = self.b.ins().iconst(types::I32, 0);
                let hi = self.b.ins().iconst(types::I32, 255);
                let c = self.b.ins().smax(w, lo);
                let c = self.b.ins().smin(c, hi);
                self.b.ins().ireduce(types::I8, c)
            }
            (I32 | I64, F32 | F64) => ins.fcvt_from_sint(cl(to), x),
            (U32, F32 | F64) => ins.fcvt_from_uint(cl(to), x),
            (U8 | Bool, F32 | F64) => {
                let w = ins.uextend(types::I32, x);
                self.b.ins().fcvt_from_sint(cl(to), w)
            }
            (_, Bool) => ins.icmp_imm_s(IntCC::NotEqual, x, 0),
            _ => {
                // Integer to integer: widen by the source's sign, then wrap.
                let w = self.widen(x, from);
                self.narrow(w, to)
            }
        }
    }

    fn math(&mut self, name: &str, t: Scalar, args: &[ExprH]) -> Value {
        let v: Vec<Value> = args.iter().map(|&a| self.expr(a)).collect();
        let f = is_float(t);
        let s = signed(t);
        let ins = self.b.ins();
        match name {
            "abs" if f => ins.fabs(v[0]),
            "abs" if s => ins.iabs(v[0]),
            "abs" => v[0],
            "min" if !f && s => ins.smin(v[0], v[1]),
            "min" if !f => ins.umin(v[0], v[1]),
            "max" if !f && s => ins.smax(v[0], v[1]),
            "max" if !f => ins.umax(v[0], v[1]),
            "clamp" if !f && s => {
                let m = ins.smax(v[0], v[1]);
                self.b.ins().smin(m, v[2])
            }
            "clamp" if !f => {
                let m = ins.umax(v[0], v[1]);
                self.b.ins().umin(m, v[2])
            }
            "clamp" => {
                let m = self.routine("max", t, &[v[0], v[1]]);
                self.routine("min", t, &[m, v[2]])
            }
            "sqrt" => ins.sqrt(v[0]),
            "floor" => ins.floor(v[0]),
            "ceil" => ins.ceil(v[0]),
            "trunc" => ins.trunc(v[0]),
            _ => self.routine(name, t, &v),
        }
    }

    /// A call of the math routine `name` for float type `t`.
    fn routine(&mut self, name: &str, t: Scalar, args: &[Value]) -> Value {
        let key = format!("{name}/{}", if t == Scalar::F32 { 32 } else { 64 });
        let id = *self
            .callees
            .math
            .get(key.as_str())
            .expect("every planned routine is declared");
        let r = self.func_ref(id);
        let call = self.b.ins().call(r, args);
        self.b.inst_results(call)[0]
    }
}
