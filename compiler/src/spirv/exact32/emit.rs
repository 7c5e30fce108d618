//! The writer's side of [`super`]: the call where an f32 `/` or `sqrt` is,
//! and the functions' bodies, written after the entry point by [`Spv`], the
//! [`Ops`] that emits SPIR-V.

use super::{div, sqrt, Ops};
use crate::spirv::types::{Module, Ty};
use crate::spirv::{fnbody, spv, Writer};
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, FunctionControl, GlslStd450Op as GLOp, SelectionControl, Word};
use std::cell::{Cell, RefCell};

impl Writer<'_> {
    /// f32 `a / b` by the `fma` route: a call of its function (one per
    /// module: a module has one [`crate::ExactF32`]).
    pub(in crate::spirv) fn f32_div_fma(&mut self, a: Word, b: Word) -> Word {
        let id = *self.exact32.div.get_or_insert_with(|| self.m.b.id());
        let t = self.m.ty(Ty::F32);
        spv(self.m.b.function_call(t, None, id, [a, b]))
    }

    /// f32 `sqrt(a)` by the `fma` route: a call of its function.
    pub(in crate::spirv) fn f32_sqrt_fma(&mut self, a: Word) -> Word {
        let id = *self.exact32.sqrt.get_or_insert_with(|| self.m.b.id());
        let t = self.m.ty(Ty::F32);
        spv(self.m.b.function_call(t, None, id, [a]))
    }

    /// Write the bodies of the functions called.
    pub(in crate::spirv) fn exact32_functions(&mut self) {
        let fused = self.spec.exact_f32 != crate::ExactF32::FmaByF64;
        let skew = self.spec.exact_f32_skew;
        if let Some(id) = self.exact32.div {
            emit(&mut self.m, (fused, skew), id, "accl_div_f32", 2);
        }
        if let Some(id) = self.exact32.sqrt {
            emit(&mut self.m, (fused, skew), id, "accl_sqrt_f32", 1);
        }
    }
}

fn emit(m: &mut Module, (fused, skew): (bool, i32), id: Word, name: &str, arity: usize) {
    let t = m.ty(Ty::F32);
    let fnty = m.fn_type(t, vec![t; arity]);
    // A few instructions on the common path: inlined, and the branch for
    // operands out of range kept a branch (`Spv::when`).
    spv(m
        .b
        .begin_function(t, Some(id), FunctionControl::INLINE, fnty));
    m.b.name(id, name);
    let params: Vec<Word> = (0..arity).map(|_| spv(m.b.function_parameter(t))).collect();
    let label = spv(m.b.begin_block(None));
    let o = Spv {
        m: RefCell::new(m),
        fused,
        skew,
        cur: Cell::new(label),
    };
    let r = match params[..] {
        [a, b] => div(&o, a, b),
        _ => sqrt(&o, params[0]),
    };
    let m = o.m.into_inner();
    spv(m.b.ret_value(r));
    spv(m.b.end_function());
}

/// [`Ops`] as SPIR-V instructions in the function being written.
struct Spv<'m> {
    m: RefCell<&'m mut Module>,
    /// `fma` is the driver's `Fma`, else computed exactly in f64 and
    /// rounded once ([`crate::ExactF32::FmaByF64`]).
    fused: bool,
    /// [`crate::Spec::exact_f32_skew`].
    skew: i32,
    /// The block being written.
    cur: Cell<Word>,
}

impl Spv<'_> {
    fn ty(&self, t: Ty) -> Word {
        self.m.borrow_mut().ty(t)
    }
    fn glsl(&self, ret: Ty, op: GLOp, args: &[Word]) -> Word {
        let ret = self.ty(ret);
        let mut m = self.m.borrow_mut();
        let set = m.glsl();
        spv(m.b.ext_inst(
            ret,
            None,
            set,
            op as u32,
            args.iter().map(|&a| Operand::IdRef(a)),
        ))
    }
    /// `r`, which no driver may fuse with another operation or reorder.
    fn exact(&self, r: Word) -> Word {
        self.m
            .borrow_mut()
            .b
            .decorate(r, Decoration::NoContraction, []);
        r
    }
    /// `x` moved by [`Self::skew`] ulp (its bits plus the skew).
    fn skewed(&self, x: Word) -> Word {
        if self.skew == 0 {
            return x;
        }
        let k = self.ku(self.skew as u32);
        self.float_of(self.add_u(self.bits(x), k))
    }
    fn sel(&self, t: Ty, c: Word, a: Word, b: Word) -> Word {
        let t = self.ty(t);
        spv(self.m.borrow_mut().b.select(t, None, c, a, b))
    }
}

impl Ops for Spv<'_> {
    type F = Word;
    type U = Word;
    type B = Word;
    fn kf(&self, v: f32) -> Word {
        self.m.borrow_mut().konst(Ty::F32, v.to_bits() as u64)
    }
    fn ku(&self, v: u32) -> Word {
        self.m.borrow_mut().u32c(v)
    }
    fn recip(&self, b: Word) -> Word {
        let (t, one) = (self.ty(Ty::F32), self.kf(1.0));
        let r = spv(self.m.borrow_mut().b.f_div(t, None, one, b));
        self.skewed(r)
    }
    fn rsqrt(&self, a: Word) -> Word {
        let r = self.glsl(Ty::F32, GLOp::InverseSqrt, &[a]);
        self.skewed(r)
    }
    fn mul(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::F32);
        let r = spv(self.m.borrow_mut().b.f_mul(t, None, a, b));
        self.exact(r)
    }
    fn fma(&self, a: Word, b: Word, c: Word) -> Word {
        if self.fused {
            return self.glsl(Ty::F32, GLOp::Fma, &[a, b, c]);
        }
        // In f64: the product is exact; the sum is rounded to odd (its
        // exact error from Knuth's two-sum, and an inexact sum with an even
        // last bit moved one f64 ulp towards the exact value), which 29
        // spare bits make round to f32 as the exact sum would.
        let (t32, t64, u64t, bt) = (
            self.ty(Ty::F32),
            self.ty(Ty::F64),
            self.ty(Ty::U64),
            self.ty(Ty::Bool),
        );
        let op = |f: fn(&mut rspirv::dr::Builder, Word, Word, Word) -> Word, x, y| {
            let r = f(&mut self.m.borrow_mut().b, t64, x, y);
            self.exact(r)
        };
        let add = |b: &mut rspirv::dr::Builder, t, x, y| spv(b.f_add(t, None, x, y));
        let sub = |b: &mut rspirv::dr::Builder, t, x, y| spv(b.f_sub(t, None, x, y));
        let mul = |b: &mut rspirv::dr::Builder, t, x, y| spv(b.f_mul(t, None, x, y));
        let w = |v| spv(self.m.borrow_mut().b.f_convert(t64, None, v));
        let (a, b, c) = (w(a), w(b), w(c));
        let p = op(mul, a, b);
        let s = op(add, p, c);
        let bb = op(sub, s, p);
        let err = op(add, op(sub, p, op(sub, s, bb)), op(sub, c, bb));
        let zero = self.m.borrow_mut().konst(Ty::F64, 0);
        let (one, zero64) = {
            let mut m = self.m.borrow_mut();
            (m.konst(Ty::U64, 1), m.konst(Ty::U64, 0))
        };
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        let bits = spv(bm.bitcast(u64t, None, s));
        let even = spv(bm.bitwise_and(u64t, None, bits, one));
        let even = spv(bm.i_equal(bt, None, even, zero64));
        let inexact = spv(bm.f_ord_not_equal(bt, None, err, zero));
        let fix = spv(bm.logical_and(bt, None, even, inexact));
        // Away from zero when the error has the sum's sign.
        let e_pos = spv(bm.f_ord_greater_than(bt, None, err, zero));
        let s_pos = spv(bm.f_ord_greater_than(bt, None, s, zero));
        let away = spv(bm.logical_equal(bt, None, e_pos, s_pos));
        let up = spv(bm.i_add(u64t, None, bits, one));
        let down = spv(bm.i_sub(u64t, None, bits, one));
        let moved = spv(bm.select(u64t, None, away, up, down));
        let bits = spv(bm.select(u64t, None, fix, moved, bits));
        let s = spv(bm.bitcast(t64, None, bits));
        spv(bm.f_convert(t32, None, s))
    }
    fn neg(&self, a: Word) -> Word {
        let t = self.ty(Ty::F32);
        spv(self.m.borrow_mut().b.f_negate(t, None, a))
    }
    fn abs(&self, a: Word) -> Word {
        self.glsl(Ty::F32, GLOp::FAbs, &[a])
    }
    fn gt(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.f_ord_greater_than(t, None, a, b))
    }
    fn le(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.f_ord_less_than_equal(t, None, a, b))
    }
    fn bits(&self, a: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.bitcast(t, None, a))
    }
    fn float_of(&self, u: Word) -> Word {
        let t = self.ty(Ty::F32);
        spv(self.m.borrow_mut().b.bitcast(t, None, u))
    }
    fn sub_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.i_sub(t, None, a, b))
    }
    fn add_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.i_add(t, None, a, b))
    }
    fn lt_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.u_less_than(t, None, a, b))
    }
    fn float_of_u(&self, u: Word) -> Word {
        let t = self.ty(Ty::F32);
        spv(self.m.borrow_mut().b.convert_u_to_f(t, None, u))
    }
    fn and_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.bitwise_and(t, None, a, b))
    }
    fn or_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.bitwise_or(t, None, a, b))
    }
    fn eq_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.i_equal(t, None, a, b))
    }
    fn and_b(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_and(t, None, a, b))
    }
    fn or_b(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_or(t, None, a, b))
    }
    fn not_b(&self, a: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_not(t, None, a))
    }
    fn sel_f(&self, c: Word, a: Word, b: Word) -> Word {
        self.sel(Ty::F32, c, a, b)
    }
    fn sel_u(&self, c: Word, a: Word, b: Word) -> Word {
        self.sel(Ty::U32, c, a, b)
    }
    fn xor_u(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.bitwise_xor(t, None, a, b))
    }
    fn shr_u(&self, a: Word, by: u32) -> Word {
        let (t, k) = (self.ty(Ty::U32), self.ku(by));
        spv(self.m.borrow_mut().b.shift_right_logical(t, None, a, k))
    }
    fn shl_u(&self, a: Word, by: u32) -> Word {
        let (t, k) = (self.ty(Ty::U32), self.ku(by));
        spv(self.m.borrow_mut().b.shift_left_logical(t, None, a, k))
    }
    fn trunc_u(&self, a: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.convert_f_to_u(t, None, a))
    }
    fn sub(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::F32);
        let r = spv(self.m.borrow_mut().b.f_sub(t, None, a, b));
        self.exact(r)
    }
    fn when(&self, c: Word, v: Word, then: impl Fn() -> Word) -> Word {
        // Taken only near the ends of the range: kept a branch.
        let t = (self.ty(Ty::F32), SelectionControl::DONT_FLATTEN);
        fnbody::when(&self.m, &self.cur, t, c, v, then)
    }
}
