//! The writer's side of [`super`]: the call where a float `%` is, and the
//! functions' bodies, written after the entry point by [`Spv`], the
//! [`RemOps`] that emits SPIR-V.

use super::{rem, Cmp, RemOps, Width};
use crate::spirv::types::{Module, Ty};
use crate::spirv::{fnbody, spv, Writer};
use rspirv::dr::Operand;
use rspirv::spirv::{
    Decoration, FunctionControl, GlslStd450Op as GLOp, LoopControl, SelectionControl, Word,
};
use std::cell::{Cell, RefCell};

impl Writer<'_> {
    /// `a % b` on floats of register type `t`: a call of its function.
    pub(in crate::spirv) fn float_rem(&mut self, t: Ty, a: Word, b: Word) -> Word {
        let slot = match t {
            Ty::F32 => &mut self.rem_fns.f32,
            _ => &mut self.rem_fns.f64,
        };
        let id = *slot.get_or_insert_with(|| self.m.b.id());
        let tw = self.m.ty(t);
        spv(self.m.b.function_call(tw, None, id, [a, b]))
    }

    /// Write the bodies of the remainder functions called.
    pub(in crate::spirv) fn rem_functions(&mut self) {
        if let Some(id) = self.rem_fns.f32 {
            emit(&mut self.m, Width::F32, id);
        }
        if let Some(id) = self.rem_fns.f64 {
            emit(&mut self.m, Width::F64, id);
        }
    }
}

fn emit(m: &mut Module, w: Width, id: Word) {
    let ty = match w {
        Width::F32 => Ty::F32,
        Width::F64 => Ty::F64,
    };
    let t = m.ty(ty);
    let fnty = m.fn_type(t, vec![t, t]);
    spv(m.b.begin_function(t, Some(id), FunctionControl::NONE, fnty));
    m.b.name(
        id,
        match w {
            Width::F32 => "accl_rem_f32",
            Width::F64 => "accl_rem_f64",
        },
    );
    let x = spv(m.b.function_parameter(t));
    let y = spv(m.b.function_parameter(t));
    let label = spv(m.b.begin_block(None));
    let o = Spv {
        m: RefCell::new(m),
        ty,
        cur: Cell::new(label),
    };
    let r = rem(&o, w, x, y);
    let m = o.m.into_inner();
    spv(m.b.ret_value(r));
    spv(m.b.end_function());
}

/// [`RemOps`] as SPIR-V instructions in the function being written.
struct Spv<'m> {
    m: RefCell<&'m mut Module>,
    /// The float type.
    ty: Ty,
    /// The block being written.
    cur: Cell<Word>,
}

impl Spv<'_> {
    fn glsl(&self, ret: Word, op: GLOp, args: &[Word]) -> Word {
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
    fn t(&self) -> Word {
        self.m.borrow_mut().ty(self.ty)
    }
    fn bool_t(&self) -> Word {
        self.m.borrow_mut().ty(Ty::Bool)
    }
}

impl RemOps for Spv<'_> {
    type F = Word;
    type I = Word;
    type B = Word;
    fn kf(&self, v: f64) -> Word {
        let bits = match self.ty {
            Ty::F32 => (v as f32).to_bits() as u64,
            _ => v.to_bits(),
        };
        self.m.borrow_mut().konst(self.ty, bits)
    }
    fn sub(&self, a: Word, b: Word) -> Word {
        let t = self.t();
        let mut m = self.m.borrow_mut();
        let r = spv(m.b.f_sub(t, None, a, b));
        // Exact by construction; no driver may fuse or reorder it.
        m.b.decorate(r, Decoration::NoContraction, []);
        r
    }
    fn mul(&self, a: Word, b: Word) -> Word {
        let t = self.t();
        let mut m = self.m.borrow_mut();
        let r = spv(m.b.f_mul(t, None, a, b));
        m.b.decorate(r, Decoration::NoContraction, []);
        r
    }
    fn abs(&self, a: Word) -> Word {
        let t = self.t();
        self.glsl(t, GLOp::FAbs, &[a])
    }
    fn cmp(&self, op: Cmp, a: Word, b: Word) -> Word {
        let t = self.bool_t();
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        spv(match op {
            Cmp::Lt => bm.f_ord_less_than(t, None, a, b),
            Cmp::Gt => bm.f_ord_greater_than(t, None, a, b),
            Cmp::Ge => bm.f_ord_greater_than_equal(t, None, a, b),
            Cmp::Eq => bm.f_ord_equal(t, None, a, b),
        })
    }
    fn is_nan(&self, a: Word) -> Word {
        let t = self.bool_t();
        spv(self.m.borrow_mut().b.is_nan(t, None, a))
    }
    fn or(&self, a: Word, b: Word) -> Word {
        let t = self.bool_t();
        spv(self.m.borrow_mut().b.logical_or(t, None, a, b))
    }
    fn sel(&self, c: Word, a: Word, b: Word) -> Word {
        let t = self.t();
        spv(self.m.borrow_mut().b.select(t, None, c, a, b))
    }
    fn frexp(&self, a: Word) -> (Word, Word) {
        let (st, t, i) = {
            let mut m = self.m.borrow_mut();
            let st = m.tuple_struct(&[self.ty, Ty::I32]);
            (st, m.ty(self.ty), m.ty(Ty::I32))
        };
        let s = self.glsl(st, GLOp::FrexpStruct, &[a]);
        let mut m = self.m.borrow_mut();
        let man = spv(m.b.composite_extract(t, None, s, [0]));
        let exp = spv(m.b.composite_extract(i, None, s, [1]));
        (man, exp)
    }
    fn ldexp(&self, a: Word, e: Word) -> Word {
        let t = self.t();
        self.glsl(t, GLOp::Ldexp, &[a, e])
    }
    fn copysign(&self, mag: Word, sign: Word) -> Word {
        // On the word holding the sign (the high one of a double, read
        // through a `uvec2`, so no `Int64` is needed).
        let t = self.t();
        let mut m = self.m.borrow_mut();
        let u = m.ty(Ty::U32);
        let (sbit, rest) = (m.u32c(0x8000_0000), m.u32c(0x7fff_ffff));
        let high = |m: &mut Module, v: Word| match self.ty {
            Ty::F32 => (spv(m.b.bitcast(u, None, v)), None),
            _ => {
                let u2 = m.b.type_vector(u, 2);
                let v = spv(m.b.bitcast(u2, None, v));
                (spv(m.b.composite_extract(u, None, v, [1])), Some((u2, v)))
            }
        };
        let (mh, mv) = high(&mut m, mag);
        let (sh, _) = high(&mut m, sign);
        let mh = spv(m.b.bitwise_and(u, None, mh, rest));
        let sh = spv(m.b.bitwise_and(u, None, sh, sbit));
        let h = spv(m.b.bitwise_or(u, None, mh, sh));
        let bits = match mv {
            None => h,
            Some((u2, v)) => spv(m.b.composite_insert(u2, None, h, v, [1])),
        };
        spv(m.b.bitcast(t, None, bits))
    }
    fn repeat(
        &self,
        init: Word,
        trips: u32,
        step: impl Fn(Word) -> Word,
        more: impl Fn(Word) -> Word,
    ) -> Word {
        let (t, b) = (self.t(), self.bool_t());
        let u = self.m.borrow_mut().ty(Ty::U32);
        let pre = self.cur.get();
        // The loop-carried values come from the continue block, written
        // after the header's phis: their ids are reserved here.
        let (header, body, cont, merge, r_next, n_next, r, n) = {
            let mut m = self.m.borrow_mut();
            let zero = m.u32c(0);
            let ids: [Word; 6] = std::array::from_fn(|_| m.b.id());
            let [header, body, cont, merge, r_next, n_next] = ids;
            spv(m.b.branch(header));
            spv(m.b.begin_block(Some(header)));
            let r = spv(m.b.phi(t, None, [(init, pre), (r_next, cont)]));
            let n = spv(m.b.phi(u, None, [(zero, pre), (n_next, cont)]));
            spv(m.b.loop_merge(merge, cont, LoopControl::NONE, []));
            spv(m.b.branch(body));
            spv(m.b.begin_block(Some(body)));
            (header, body, cont, merge, r_next, n_next, r, n)
        };
        self.cur.set(body);
        let stepped = step(r);
        {
            let mut m = self.m.borrow_mut();
            spv(m.b.branch(cont));
            spv(m.b.begin_block(Some(cont)));
            spv(m.b.copy_object(t, Some(r_next), stepped));
        }
        self.cur.set(cont);
        let go = more(r_next);
        let mut m = self.m.borrow_mut();
        let one = m.u32c(1);
        let cap = m.u32c(trips);
        spv(m.b.i_add(u, Some(n_next), n, one));
        let under = spv(m.b.u_less_than(b, None, n_next, cap));
        let go = spv(m.b.logical_and(b, None, go, under));
        spv(m.b.branch_conditional(go, header, merge, []));
        spv(m.b.begin_block(Some(merge)));
        self.cur.set(merge);
        r_next
    }
    fn when(&self, c: Word, v: Word, then: impl Fn(Word) -> Word) -> Word {
        let t = (self.t(), SelectionControl::NONE);
        fnbody::when(&self.m, &self.cur, t, c, v, || then(v))
    }
}
