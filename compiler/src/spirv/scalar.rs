//! Scalar operations with the host's semantics (listed in the module
//! documentation): constants, integer conversions, the `u8` mask, binary
//! operators, `as` casts and the math functions.

use super::types::Ty;
use super::{spv, Writer};
use crate::kir::{Expr, ExprH, Function, MathFn};
use crate::ExactF32;
use lang::hir::BinOp;
use lang::{Diag, Scalar, Value};
use rspirv::dr::Operand;
use rspirv::spirv::{GlslStd450Op as GLOp, SelectionControl, Word};

impl Writer<'_> {
    pub(super) fn constant(&mut self, v: Value) -> Word {
        let (t, bits) = match v {
            Value::Bool(b) => (Ty::Bool, b as u64),
            Value::I32(x) => (Ty::I32, x as u32 as u64),
            Value::I64(x) => (Ty::I64, x as u64),
            Value::U32(x) => (Ty::U32, x as u64),
            Value::U8(x) => (Ty::U32, x as u64),
            Value::F32(x) => (Ty::F32, x.to_bits() as u64),
            Value::F64(x) | Value::FloatLit(x) => (Ty::F64, x.to_bits()),
            Value::IntLit(x) => (Ty::I32, x as i32 as u32 as u64),
        };
        self.m.konst(t, bits)
    }

    /// An integer constant of register type `t`.
    pub(super) fn int_const(&mut self, t: Ty, v: i64) -> Word {
        let bits = match t {
            Ty::I64 | Ty::U64 => v as u64,
            _ => v as u32 as u64,
        };
        self.m.konst(t, bits)
    }

    pub(super) fn float_const(&mut self, t: Ty, v: f64) -> Word {
        match t {
            Ty::F32 => self.m.konst(Ty::F32, (v as f32).to_bits() as u64),
            _ => self.m.konst(Ty::F64, v.to_bits()),
        }
    }

    /// Mask a `u8` held in a `u32` back to 0..=255.
    pub(super) fn wrap_u8(&mut self, v: Word, s: Scalar) -> Word {
        if s != Scalar::U8 {
            return v;
        }
        let u32t = self.m.ty(Ty::U32);
        let ff = self.m.u32c(0xff);
        spv(self.m.b.bitwise_and(u32t, None, v, ff))
    }

    /// An argument-block value (u8/bool widened to u32) as a register value.
    pub(super) fn arg_value(&mut self, v: Word, s: Scalar) -> Word {
        if s == Scalar::Bool {
            let b = self.m.ty(Ty::Bool);
            let z = self.m.u32c(0);
            spv(self.m.b.i_not_equal(b, None, v, z))
        } else {
            v
        }
    }

    /// Wrapping conversion between integer register types.
    pub(super) fn int_cast(&mut self, v: Word, from: Ty, to: Ty) -> Word {
        if from == to {
            return v;
        }
        let (fw, fs) = from.int_width().expect("integer type");
        let (tw, ts) = to.int_width().expect("integer type");
        let mut cur = v;
        let mut cur_signed = fs;
        if fw != tw {
            if fw == 32 && tw == 64 && fs && self.spec.sext_by_words {
                cur = self.sext_by_words(cur);
                cur_signed = true;
            } else if fw < tw && fs {
                let t = self.m.ty(Ty::int(tw, true));
                cur = spv(self.m.b.s_convert(t, None, cur));
                cur_signed = true;
            } else {
                let t = self.m.ty(Ty::int(tw, false));
                cur = spv(self.m.b.u_convert(t, None, cur));
                cur_signed = false;
            }
        }
        if cur_signed != ts {
            let t = self.m.ty(to);
            cur = spv(self.m.b.bitcast(t, None, cur));
        }
        cur
    }

    /// `i32` `v` sign-extended to `i64` as `zext(v) | zext(v >> 31) << 32`
    /// ([`compiler::Spec::sext_by_words`](crate::Spec::sext_by_words)).
    fn sext_by_words(&mut self, v: Word) -> Word {
        let (u32t, i32t) = (self.m.ty(Ty::U32), self.m.ty(Ty::I32));
        let (u64t, i64t) = (self.m.ty(Ty::U64), self.m.ty(Ty::I64));
        let c31 = self.int_const(Ty::U32, 31);
        let c32 = self.int_const(Ty::U32, 32);
        let bm = &mut self.m.b;
        let sign = spv(bm.shift_right_arithmetic(i32t, None, v, c31));
        let sign = spv(bm.bitcast(u32t, None, sign));
        let high = spv(bm.u_convert(u64t, None, sign));
        let high = spv(bm.shift_left_logical(u64t, None, high, c32));
        let low = spv(bm.bitcast(u32t, None, v));
        let low = spv(bm.u_convert(u64t, None, low));
        let w = spv(bm.bitwise_or(u64t, None, low, high));
        spv(bm.bitcast(i64t, None, w))
    }

    /// How an f32 `a / b` is computed where f32 division is exact
    /// ([`Self::exact_f32`]): `None` as any other float operation.
    fn exact_division(&self, f: &Function, b: ExprH) -> Option<ExactDiv> {
        let route = self.exact_f32()?;
        Some(match f.exprs[b] {
            // The same real number as `a / b`, and `*` is correctly rounded.
            Expr::Const(Value::F32(x))
                if x.abs().to_bits() & 0x007f_ffff == 0 && (1.0 / x).is_normal() =>
            {
                ExactDiv::ByReciprocal(1.0 / x)
            }
            _ => ExactDiv::Route(route),
        })
    }

    /// The exact route f32 divisions and square roots take, if any: all
    /// but the `fma` route need f64 ([`crate::ExactF32`]).
    pub(super) fn exact_f32(&self) -> Option<ExactF32> {
        let f = &self.spec.features;
        match self.spec.exact_f32 {
            ExactF32::Off => None,
            ExactF32::Fma => Some(ExactF32::Fma),
            _ if !f.float64 => None,
            ExactF32::FmaByF64 if !f.int64 => Some(ExactF32::InF64),
            r => Some(r),
        }
    }

    /// f32 `a / b`, correctly rounded by `route` ([`exact32`](super::exact32)).
    pub(super) fn f32_div_exact(&mut self, route: ExactF32, a: Word, b: Word) -> Word {
        match route {
            ExactF32::Fma | ExactF32::FmaByF64 => self.f32_div_fma(a, b),
            _ => self.f32_div_in_f64(a, b),
        }
    }

    /// f32 `a / b`, correctly rounded: both widened to f64 (exact), divided
    /// there and rounded back. The exact quotient of two 24-bit significands
    /// is never an f32 midpoint and lies at least 2^-49 of itself from one,
    /// more than an f64 division 2.5 f64 ulp off (under 2^-50.6) can move
    /// it, so the f64 quotient rounds the same way. (In f32's subnormal
    /// range a quotient can be a midpoint; there it takes an f64 division
    /// that is itself exact.)
    pub(super) fn f32_div_in_f64(&mut self, a: Word, b: Word) -> Word {
        let (t32, t64) = (self.m.ty(Ty::F32), self.m.ty(Ty::F64));
        let bm = &mut self.m.b;
        let a64 = spv(bm.f_convert(t64, None, a));
        let b64 = spv(bm.f_convert(t64, None, b));
        let q = spv(bm.f_div(t64, None, a64, b64));
        bm.decorate(q, rspirv::spirv::Decoration::NoContraction, []);
        spv(bm.f_convert(t32, None, q))
    }

    pub(super) fn binary(
        &mut self,
        f: &Function,
        op: BinOp,
        a: ExprH,
        b: ExprH,
        result: Scalar,
        span: lang::Span,
    ) -> Result<Word, Diag> {
        use BinOp::*;
        let s = f.ty(a);
        if matches!(op, And | Or) && flat_operand(f, b, 16).is_some() {
            // A right side with no effect and nothing that can fault is
            // evaluated anyway: one `OpLogicalAnd`/`Or` keeps a loop
            // condition inside one block, where a selection would make a
            // SIMD driver (llvmpipe) mask and test its lanes twice per trip.
            let av = self.expr(f, a)?;
            let bv = self.expr(f, b)?;
            let bt = self.m.ty(Ty::Bool);
            return Ok(spv(if op == And {
                self.m.b.logical_and(bt, None, av, bv)
            } else {
                self.m.b.logical_or(bt, None, av, bv)
            }));
        }
        if matches!(op, And | Or) {
            // Short circuit: a selection and a phi.
            let av = self.expr(f, a)?;
            let from = self.cur_label;
            let rhs = self.m.b.id();
            let merge = self.m.b.id();
            spv(self.m.b.selection_merge(merge, SelectionControl::NONE));
            if op == And {
                spv(self.m.b.branch_conditional(av, rhs, merge, []));
            } else {
                spv(self.m.b.branch_conditional(av, merge, rhs, []));
            }
            self.label(rhs);
            let bv = self.expr(f, b)?;
            let rhs_end = self.cur_label;
            spv(self.m.b.branch(merge));
            self.label(merge);
            let bt = self.m.ty(Ty::Bool);
            return Ok(spv(self.m.b.phi(bt, None, [(av, from), (bv, rhs_end)])));
        }
        let av = self.expr(f, a)?;
        let bv = self.expr(f, b)?;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        let signed = s.is_signed_int();
        if op == Div && s == Scalar::F32 {
            match self.exact_division(f, b) {
                Some(ExactDiv::Route(route)) => return Ok(self.f32_div_exact(route, av, bv)),
                Some(ExactDiv::ByReciprocal(r)) => {
                    let rc = self.float_const(Ty::F32, r as f64);
                    let q = spv(self.m.b.f_mul(tw, None, av, rc));
                    let nc = rspirv::spirv::Decoration::NoContraction;
                    self.m.b.decorate(q, nc, []);
                    return Ok(q);
                }
                None => {}
            }
        }
        let bm = &mut self.m.b;
        let r = match op {
            Eq | Ne | Lt | Le | Gt | Ge => {
                debug_assert_eq!(result, Scalar::Bool);
                return Ok(if s == Scalar::Bool {
                    match op {
                        Eq => spv(bm.logical_equal(bool_t, None, av, bv)),
                        _ => spv(bm.logical_not_equal(bool_t, None, av, bv)),
                    }
                } else if s.is_float() {
                    match op {
                        Eq => spv(bm.f_ord_equal(bool_t, None, av, bv)),
                        Ne => spv(bm.f_unord_not_equal(bool_t, None, av, bv)),
                        Lt => spv(bm.f_ord_less_than(bool_t, None, av, bv)),
                        Le => spv(bm.f_ord_less_than_equal(bool_t, None, av, bv)),
                        Gt => spv(bm.f_ord_greater_than(bool_t, None, av, bv)),
                        _ => spv(bm.f_ord_greater_than_equal(bool_t, None, av, bv)),
                    }
                } else {
                    match (op, signed) {
                        (Eq, _) => spv(bm.i_equal(bool_t, None, av, bv)),
                        (Ne, _) => spv(bm.i_not_equal(bool_t, None, av, bv)),
                        (Lt, true) => spv(bm.s_less_than(bool_t, None, av, bv)),
                        (Le, true) => spv(bm.s_less_than_equal(bool_t, None, av, bv)),
                        (Gt, true) => spv(bm.s_greater_than(bool_t, None, av, bv)),
                        (Ge, true) => spv(bm.s_greater_than_equal(bool_t, None, av, bv)),
                        (Lt, false) => spv(bm.u_less_than(bool_t, None, av, bv)),
                        (Le, false) => spv(bm.u_less_than_equal(bool_t, None, av, bv)),
                        (Gt, false) => spv(bm.u_greater_than(bool_t, None, av, bv)),
                        _ => spv(bm.u_greater_than_equal(bool_t, None, av, bv)),
                    }
                });
            }
            BitAnd | BitOr | BitXor if s == Scalar::Bool => {
                return Ok(match op {
                    BitAnd => spv(bm.logical_and(bool_t, None, av, bv)),
                    BitOr => spv(bm.logical_or(bool_t, None, av, bv)),
                    _ => spv(bm.logical_not_equal(bool_t, None, av, bv)),
                })
            }
            BitAnd => spv(bm.bitwise_and(tw, None, av, bv)),
            BitOr => spv(bm.bitwise_or(tw, None, av, bv)),
            BitXor => spv(bm.bitwise_xor(tw, None, av, bv)),
            // Exact, as the host's; `OpFRem`'s precision is the driver's.
            Rem if s.is_float() => self.float_rem(t, av, bv),
            // NoContraction: a driver may otherwise fuse `a * b + c` into
            // one fma and round differently from the host (IEEE, one
            // rounding per operation), which changes chaotic results such
            // as a Mandelbrot boundary.
            Add | Sub | Mul | Div if s.is_float() => {
                let r = spv(match op {
                    Add => bm.f_add(tw, None, av, bv),
                    Sub => bm.f_sub(tw, None, av, bv),
                    Mul => bm.f_mul(tw, None, av, bv),
                    _ => bm.f_div(tw, None, av, bv),
                });
                bm.decorate(r, rspirv::spirv::Decoration::NoContraction, []);
                r
            }
            Add => spv(bm.i_add(tw, None, av, bv)),
            Sub => spv(bm.i_sub(tw, None, av, bv)),
            Mul => spv(bm.i_mul(tw, None, av, bv)),
            Shl | Shr => {
                let bits = match s {
                    Scalar::U8 => 8,
                    Scalar::I64 => 64,
                    _ => 32,
                };
                let mask = self.int_const(t, bits - 1);
                let bm = &mut self.m.b;
                let n = spv(bm.bitwise_and(tw, None, bv, mask));
                match (op, signed) {
                    (Shl, _) => spv(bm.shift_left_logical(tw, None, av, n)),
                    (_, true) => spv(bm.shift_right_arithmetic(tw, None, av, n)),
                    (_, false) => spv(bm.shift_right_logical(tw, None, av, n)),
                }
            }
            Div | Rem => {
                // Division by zero gives 0; MIN / -1 wraps; neither is undefined.
                if self.spec.checks {
                    self.check_divisor(bv, t, span);
                }
                let zero = self.int_const(t, 0);
                let one = self.int_const(t, 1);
                let bm = &mut self.m.b;
                let is0 = spv(bm.i_equal(bool_t, None, bv, zero));
                if signed {
                    let m1 = self.int_const(t, -1);
                    let bm = &mut self.m.b;
                    let ism1 = spv(bm.i_equal(bool_t, None, bv, m1));
                    let bad = spv(bm.logical_or(bool_t, None, is0, ism1));
                    let safe = spv(bm.select(tw, None, bad, one, bv));
                    if op == Div {
                        let q = spv(bm.s_div(tw, None, av, safe));
                        let neg = spv(bm.s_negate(tw, None, av));
                        let q = spv(bm.select(tw, None, ism1, neg, q));
                        spv(bm.select(tw, None, is0, zero, q))
                    } else {
                        // Not `OpSRem`: Vulkan leaves it (and `OpSMod`)
                        // undefined for negative operands, and NVIDIA's
                        // driver gave the unsigned remainder (`-40 % 7`
                        // came out 6). `OpSDiv` is defined, so `a - (a / b) * b`.
                        let q = spv(bm.s_div(tw, None, av, safe));
                        let qb = spv(bm.i_mul(tw, None, q, safe));
                        let r = spv(bm.i_sub(tw, None, av, qb));
                        spv(bm.select(tw, None, bad, zero, r))
                    }
                } else {
                    let safe = spv(bm.select(tw, None, is0, one, bv));
                    let q = if op == Div {
                        spv(bm.u_div(tw, None, av, safe))
                    } else {
                        spv(bm.u_mod(tw, None, av, safe))
                    };
                    spv(bm.select(tw, None, is0, zero, q))
                }
            }
            And | Or => unreachable!("handled above"),
        };
        Ok(match op {
            Add | Sub | Mul | Shl => self.wrap_u8(r, s),
            _ => r,
        })
    }

    /// `v as to` with Rust semantics.
    pub(super) fn cast(&mut self, v: Word, from: Scalar, to: Scalar) -> Word {
        if from == to {
            return v;
        }
        let ft = Ty::reg(from);
        let tt = Ty::reg(to);
        let tw = self.m.ty(tt);
        let bool_t = self.m.ty(Ty::Bool);
        if from == Scalar::Bool {
            let (one, zero) = if to.is_float() {
                (self.float_const(tt, 1.0), self.float_const(tt, 0.0))
            } else {
                (self.int_const(tt, 1), self.int_const(tt, 0))
            };
            return spv(self.m.b.select(tw, None, v, one, zero));
        }
        if to == Scalar::Bool {
            return if from.is_float() {
                let z = self.float_const(ft, 0.0);
                spv(self.m.b.f_unord_not_equal(bool_t, None, v, z))
            } else {
                let z = self.int_const(ft, 0);
                spv(self.m.b.i_not_equal(bool_t, None, v, z))
            };
        }
        match (from.is_float(), to.is_float()) {
            (false, false) => {
                let r = self.int_cast(v, ft, tt);
                self.wrap_u8(r, to)
            }
            (false, true) => {
                if from.is_signed_int() {
                    spv(self.m.b.convert_s_to_f(tw, None, v))
                } else {
                    spv(self.m.b.convert_u_to_f(tw, None, v))
                }
            }
            (true, true) => spv(self.m.b.f_convert(tw, None, v)),
            (true, false) => {
                // Saturating: [lo, hi1) converts; below → MIN, above → MAX, NaN → 0.
                let (lo, hi1, min, max): (f64, f64, i64, i64) = match to {
                    Scalar::I32 => (
                        -2147483648.0,
                        2147483648.0,
                        i32::MIN as i64,
                        i32::MAX as i64,
                    ),
                    Scalar::U32 => (0.0, 4294967296.0, 0, u32::MAX as i64),
                    Scalar::U8 => (0.0, 256.0, 0, 255),
                    _ => (
                        -9223372036854775808.0,
                        9223372036854775808.0,
                        i64::MIN,
                        i64::MAX,
                    ),
                };
                let lo_c = self.float_const(ft, lo);
                let hi_c = self.float_const(ft, hi1);
                let zero_f = self.float_const(ft, 0.0);
                let min_c = self.int_const(tt, min);
                let max_c = self.int_const(tt, max);
                let zero = self.int_const(tt, 0);
                let ftw = self.m.ty(ft);
                let bm = &mut self.m.b;
                let below = spv(bm.f_ord_less_than(bool_t, None, v, lo_c));
                let above = spv(bm.f_ord_greater_than_equal(bool_t, None, v, hi_c));
                let nan = spv(bm.is_nan(bool_t, None, v));
                let in_lo = spv(bm.f_ord_greater_than_equal(bool_t, None, v, lo_c));
                let in_hi = spv(bm.f_ord_less_than(bool_t, None, v, hi_c));
                let ok = spv(bm.logical_and(bool_t, None, in_lo, in_hi));
                let safe = spv(bm.select(ftw, None, ok, v, zero_f));
                let r = if to.is_signed_int() {
                    spv(bm.convert_f_to_s(tw, None, safe))
                } else {
                    spv(bm.convert_f_to_u(tw, None, safe))
                };
                let r = spv(bm.select(tw, None, below, min_c, r));
                let r = spv(bm.select(tw, None, above, max_c, r));
                spv(bm.select(tw, None, nan, zero, r))
            }
        }
    }

    fn glsl(&mut self, t: Ty, op: GLOp, args: &[Word]) -> Word {
        let set = self.m.glsl();
        let tw = self.m.ty(t);
        spv(self.m.b.ext_inst(
            tw,
            None,
            set,
            op as u32,
            args.iter().map(|&a| Operand::IdRef(a)),
        ))
    }

    pub(super) fn math(&mut self, m: MathFn, a: &[Word], s: Scalar) -> Word {
        use MathFn::*;
        let t = Ty::reg(s);
        let tw = self.m.ty(t);
        let bool_t = self.m.ty(Ty::Bool);
        if s.is_int() {
            let signed = s.is_signed_int();
            return match m {
                Abs if signed => self.glsl(t, GLOp::SAbs, a),
                Abs => a[0],
                Min => self.glsl(t, if signed { GLOp::SMin } else { GLOp::UMin }, a),
                Max => self.glsl(t, if signed { GLOp::SMax } else { GLOp::UMax }, a),
                _ => {
                    // The host's `min(max(x, lo), hi)`: with `lo > hi` that is
                    // `hi` for every `x`, where GLSL's `SClamp` is undefined.
                    let (max, min) = if signed {
                        (GLOp::SMax, GLOp::SMin)
                    } else {
                        (GLOp::UMax, GLOp::UMin)
                    };
                    let m = self.glsl(t, max, &a[..2]);
                    self.glsl(t, min, &[m, a[2]])
                }
            };
        }
        match m {
            Abs => self.glsl(t, GLOp::FAbs, a),
            Min => self.glsl(t, GLOp::NMin, a),
            Max => self.glsl(t, GLOp::NMax, a),
            Clamp => {
                // The host's `min(max(x, lo), hi)` with Rust's float min/max,
                // which `NMax`/`NMin` are: a NaN `x` gives `min(lo, hi)`.
                let m = self.glsl(t, GLOp::NMax, &a[..2]);
                self.glsl(t, GLOp::NMin, &[m, a[2]])
            }
            // Vulkan lets an f32 `Sqrt` be off by what
            // `1.0 / inversesqrt(x)` would be: correctly rounded by the
            // `fma` route, or in f64 below.
            Sqrt if t == Ty::F32
                && matches!(self.exact_f32(), Some(ExactF32::Fma | ExactF32::FmaByF64)) =>
            {
                self.f32_sqrt_fma(a[0])
            }
            // As `f32_div_in_f64`: the root of an f32 value is never an f32
            // midpoint and lies at least 2^-51 of itself from one, so an
            // f64 root within 2 f64 ulp (lavapipe's is exact; accl's f64
            // functions assume the same of every driver) rounds to the
            // correctly rounded f32 root.
            Sqrt if t == Ty::F32 && self.exact_f32().is_some() => {
                let t64 = self.m.ty(Ty::F64);
                let x = spv(self.m.b.f_convert(t64, None, a[0]));
                let r = self.glsl(Ty::F64, GLOp::Sqrt, &[x]);
                spv(self.m.b.f_convert(tw, None, r))
            }
            Sqrt => self.glsl(t, GLOp::Sqrt, a),
            Floor => self.glsl(t, GLOp::Floor, a),
            Ceil => self.glsl(t, GLOp::Ceil, a),
            Trunc => self.glsl(t, GLOp::Trunc, a),
            Fma => self.glsl(t, GLOp::Fma, a),
            Round => {
                // Half away from zero: trunc(x) + sign(x) when |x - trunc(x)| >= 0.5.
                let tr = self.glsl(t, GLOp::Trunc, a);
                let half = self.float_const(t, 0.5);
                let zero = self.float_const(t, 0.0);
                let one = self.float_const(t, 1.0);
                let m1 = self.float_const(t, -1.0);
                let bm = &mut self.m.b;
                let d = spv(bm.f_sub(tw, None, a[0], tr));
                let set = self.m.glsl();
                let ad =
                    spv(self
                        .m
                        .b
                        .ext_inst(tw, None, set, GLOp::FAbs as u32, [Operand::IdRef(d)]));
                let bm = &mut self.m.b;
                let far = spv(bm.f_ord_greater_than_equal(bool_t, None, ad, half));
                let neg = spv(bm.f_ord_less_than(bool_t, None, a[0], zero));
                let sign = spv(bm.select(tw, None, neg, m1, one));
                let up = spv(bm.f_add(tw, None, tr, sign));
                spv(bm.select(tw, None, far, up, tr))
            }
            _ => {
                let op = match m {
                    Exp => GLOp::Exp,
                    Exp2 => GLOp::Exp2,
                    Log => GLOp::Log,
                    Log2 => GLOp::Log2,
                    Sin => GLOp::Sin,
                    Cos => GLOp::Cos,
                    Tan => GLOp::Tan,
                    Asin => GLOp::Asin,
                    Acos => GLOp::Acos,
                    Atan => GLOp::Atan,
                    Sinh => GLOp::Sinh,
                    Cosh => GLOp::Cosh,
                    Tanh => GLOp::Tanh,
                    Pow => GLOp::Pow,
                    _ => GLOp::Atan2,
                };
                if t == Ty::F64 {
                    // 32-bit only in GLSL.std.450: a function of our own.
                    self.f64_transcendental(m, a)
                } else {
                    self.glsl(t, op, a)
                }
            }
        }
    }
}

/// Whether `e` can be evaluated where the source would skip it: no loads,
/// calls, atomics or division (a load or a division the left side guards may
/// fault in bounds-check mode), and at most `budget` nodes so that skipping
/// stays the cheaper choice for long right sides. The budget left, if so.
fn flat_operand(f: &Function, e: ExprH, budget: u32) -> Option<u32> {
    let budget = budget.checked_sub(1)?;
    match &f.exprs[e] {
        Expr::Const(_) | Expr::Param(_) | Expr::Local(_) => Some(budget),
        Expr::Unary(_, x) | Expr::Cast(x, _) => flat_operand(f, *x, budget),
        Expr::Binary(op, x, y) if !matches!(op, BinOp::Div | BinOp::Rem) => {
            flat_operand(f, *y, flat_operand(f, *x, budget)?)
        }
        _ => None,
    }
}

/// An exact f32 division ([`Writer::exact_division`]).
enum ExactDiv {
    /// By an exact route ([`Writer::f32_div_exact`]).
    Route(ExactF32),
    /// By a constant power of two: a multiplication by its reciprocal.
    ByReciprocal(f32),
}
