//! The writer's side of [`super`]: function ids reserved on first use, the
//! calls, and the bodies written after the entry point by [`Spv`], the
//! [`Ops`] that emits SPIR-V.

use super::dispatch::body;
use super::{trig, FCmp, FOp, Fns, Fun, Ops, UCmp, UOp, F, F1};
use crate::kir::MathFn;
use crate::spirv::types::{Module, Ty};
use crate::spirv::{spv, Writer};
use rspirv::dr::Operand;
use rspirv::spirv::{
    Decoration, FunctionControl, GlslStd450Op as GLOp, SelectionControl, StorageClass, Word,
};
use std::cell::{Cell, RefCell};

impl Writer<'_> {
    /// `m` on f64 arguments: a call of its function.
    pub(in crate::spirv) fn f64_transcendental(&mut self, m: MathFn, a: &[Word]) -> Word {
        let (f, mode) = match m {
            MathFn::Exp => (Fun::Exp, None),
            MathFn::Exp2 => (Fun::Exp2, None),
            MathFn::Log => (Fun::Log, None),
            MathFn::Log2 => (Fun::Log2, None),
            MathFn::Sin => (Fun::Trig, Some(0.0)),
            MathFn::Cos => (Fun::Trig, Some(1.0)),
            MathFn::Tan => (Fun::Trig, Some(2.0)),
            MathFn::Asin => (Fun::Asin, None),
            MathFn::Acos => (Fun::Acos, None),
            MathFn::Atan => (Fun::Atan, None),
            MathFn::Sinh => (Fun::Sinh, None),
            MathFn::Cosh => (Fun::Cosh, None),
            MathFn::Tanh => (Fun::Tanh, None),
            MathFn::Pow => (Fun::Pow, None),
            _ => (Fun::Atan2, None),
        };
        let id = self.f64fns.id(&mut self.m, f);
        let mut args = a.to_vec();
        if let Some(mode) = mode {
            args.push(self.m.konst(Ty::F64, f64::to_bits(mode)));
        }
        let t = self.m.ty(Ty::F64);
        spv(self.m.b.function_call(t, None, id, args))
    }

    /// Write the bodies of the f64 functions called (after everything else).
    pub(in crate::spirv) fn f64_functions(&mut self) {
        let (m, fns) = (&mut self.m, &mut self.f64fns);
        while fns.emitted < fns.ids.len() {
            let (f, id) = fns.ids[fns.emitted];
            fns.emitted += 1;
            emit(m, fns, f, id);
        }
    }
}

/// 2/π's bits as a function-local constant array (for [`Fun::Trig`]).
fn table_var(m: &mut Module) -> Word {
    let u = m.ty(Ty::U32);
    let words: Vec<Word> = trig::TWO_OVER_PI.iter().map(|&w| m.u32c(w)).collect();
    let len = m.u32c(words.len() as u32);
    let arr = m.b.type_array(u, len);
    let init = m.b.constant_composite(arr, words);
    let p = m.ptr(StorageClass::Function, arr);
    m.b.variable(p, None, StorageClass::Function, Some(init))
}

fn emit(m: &mut Module, fns: &mut Fns, f: Fun, id: Word) {
    let t = m.ty(Ty::F64);
    let params = vec![t; f.arity()];
    let fnty = m.fn_type(t, params);
    spv(m.b.begin_function(t, Some(id), FunctionControl::NONE, fnty));
    m.b.name(id, f.name());
    let args: Vec<Word> = (0..f.arity())
        .map(|_| spv(m.b.function_parameter(t)))
        .collect();
    let label = spv(m.b.begin_block(None));
    let table = (f == Fun::Trig).then(|| table_var(m));
    let o = Spv {
        m: RefCell::new(m),
        fns: RefCell::new(fns),
        cur: Cell::new(label),
        table,
    };
    let a: Vec<F<'_, Spv<'_>>> = args.iter().map(|&v| F { o: &o, v }).collect();
    let r = body(f, &a).v;
    let m = o.m.into_inner();
    spv(m.b.ret_value(r));
    spv(m.b.end_function());
}

/// [`Ops`] as SPIR-V instructions in the function being written.
struct Spv<'m> {
    m: RefCell<&'m mut Module>,
    fns: RefCell<&'m mut Fns>,
    /// The block being written.
    cur: Cell<Word>,
    table: Option<Word>,
}

impl Spv<'_> {
    fn ty(&self, t: Ty) -> Word {
        self.m.borrow_mut().ty(t)
    }
    fn glsl(&self, op: GLOp, a: Word) -> Word {
        let mut m = self.m.borrow_mut();
        let set = m.glsl();
        let t = m.ty(Ty::F64);
        spv(m.b.ext_inst(t, None, set, op as u32, [Operand::IdRef(a)]))
    }
}

impl Ops for Spv<'_> {
    type F = Word;
    type U = Word;
    type B = Word;
    fn kf(&self, v: f64) -> Word {
        self.m.borrow_mut().konst(Ty::F64, v.to_bits())
    }
    fn ku(&self, v: u32) -> Word {
        self.m.borrow_mut().u32c(v)
    }
    fn fop(&self, op: FOp, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::F64);
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        let r = spv(match op {
            FOp::Add => bm.f_add(t, None, a, b),
            FOp::Sub => bm.f_sub(t, None, a, b),
            FOp::Mul => bm.f_mul(t, None, a, b),
            FOp::Div => bm.f_div(t, None, a, b),
        });
        bm.decorate(r, Decoration::NoContraction, []);
        r
    }
    fn f1(&self, op: F1, a: Word) -> Word {
        match op {
            F1::Neg => {
                let t = self.ty(Ty::F64);
                spv(self.m.borrow_mut().b.f_negate(t, None, a))
            }
            F1::Abs => self.glsl(GLOp::FAbs, a),
            F1::Floor => self.glsl(GLOp::Floor, a),
            F1::Trunc => self.glsl(GLOp::Trunc, a),
            F1::Sqrt => self.glsl(GLOp::Sqrt, a),
        }
    }
    fn fcmp(&self, op: FCmp, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        spv(match op {
            FCmp::Lt => bm.f_ord_less_than(t, None, a, b),
            FCmp::Le => bm.f_ord_less_than_equal(t, None, a, b),
            FCmp::Gt => bm.f_ord_greater_than(t, None, a, b),
            FCmp::Ge => bm.f_ord_greater_than_equal(t, None, a, b),
            FCmp::Eq => bm.f_ord_equal(t, None, a, b),
        })
    }
    fn is_nan(&self, a: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.is_nan(t, None, a))
    }
    fn fsel(&self, c: Word, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::F64);
        spv(self.m.borrow_mut().b.select(t, None, c, a, b))
    }
    fn usel(&self, c: Word, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.select(t, None, c, a, b))
    }
    fn words(&self, a: Word) -> (Word, Word) {
        let mut m = self.m.borrow_mut();
        let v2 = self.fns.borrow_mut().uvec2(&mut m);
        let u = m.ty(Ty::U32);
        let v = spv(m.b.bitcast(v2, None, a));
        // Component 0 holds the low-order bits.
        let lo = spv(m.b.composite_extract(u, None, v, [0]));
        let hi = spv(m.b.composite_extract(u, None, v, [1]));
        (hi, lo)
    }
    fn join(&self, hi: Word, lo: Word) -> Word {
        let mut m = self.m.borrow_mut();
        let v2 = self.fns.borrow_mut().uvec2(&mut m);
        let t = m.ty(Ty::F64);
        let v = spv(m.b.composite_construct(v2, None, [lo, hi]));
        spv(m.b.bitcast(t, None, v))
    }
    fn uop(&self, op: UOp, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::U32);
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        spv(match op {
            UOp::Add => bm.i_add(t, None, a, b),
            UOp::Sub => bm.i_sub(t, None, a, b),
            UOp::And => bm.bitwise_and(t, None, a, b),
            UOp::Or => bm.bitwise_or(t, None, a, b),
            UOp::Xor => bm.bitwise_xor(t, None, a, b),
            UOp::Shl => bm.shift_left_logical(t, None, a, b),
            UOp::Shr => bm.shift_right_logical(t, None, a, b),
            UOp::Sar => bm.shift_right_arithmetic(t, None, a, b),
        })
    }
    fn ucmp(&self, op: UCmp, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        let mut m = self.m.borrow_mut();
        let bm = &mut m.b;
        spv(match op {
            UCmp::Eq => bm.i_equal(t, None, a, b),
            UCmp::Ne => bm.i_not_equal(t, None, a, b),
            UCmp::ULt => bm.u_less_than(t, None, a, b),
            UCmp::ULe => bm.u_less_than_equal(t, None, a, b),
            UCmp::UGt => bm.u_greater_than(t, None, a, b),
            UCmp::UGe => bm.u_greater_than_equal(t, None, a, b),
            UCmp::SLt => bm.s_less_than(t, None, a, b),
            UCmp::SGt => bm.s_greater_than(t, None, a, b),
            UCmp::SGe => bm.s_greater_than_equal(t, None, a, b),
        })
    }
    fn umul(&self, a: Word, b: Word) -> (Word, Word) {
        let mut m = self.m.borrow_mut();
        let pair = self.fns.borrow_mut().pair(&mut m);
        let u = m.ty(Ty::U32);
        let r = spv(m.b.u_mul_extended(pair, None, a, b));
        let lo = spv(m.b.composite_extract(u, None, r, [0]));
        let hi = spv(m.b.composite_extract(u, None, r, [1]));
        (lo, hi)
    }
    fn band(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_and(t, None, a, b))
    }
    fn bor(&self, a: Word, b: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_or(t, None, a, b))
    }
    fn bnot(&self, a: Word) -> Word {
        let t = self.ty(Ty::Bool);
        spv(self.m.borrow_mut().b.logical_not(t, None, a))
    }
    fn i2f(&self, a: Word) -> Word {
        let t = self.ty(Ty::F64);
        spv(self.m.borrow_mut().b.convert_s_to_f(t, None, a))
    }
    fn u2f(&self, a: Word) -> Word {
        let t = self.ty(Ty::F64);
        spv(self.m.borrow_mut().b.convert_u_to_f(t, None, a))
    }
    fn f2i(&self, a: Word) -> Word {
        // A 32-bit result of `OpConvertFToS`, read as signed by the callers.
        let t = self.ty(Ty::I32);
        let i = spv(self.m.borrow_mut().b.convert_f_to_s(t, None, a));
        let u = self.ty(Ty::U32);
        spv(self.m.borrow_mut().b.bitcast(u, None, i))
    }
    fn call(&self, f: Fun, args: &[Word]) -> Word {
        let mut m = self.m.borrow_mut();
        let id = self.fns.borrow_mut().id(&mut m, f);
        let t = m.ty(Ty::F64);
        spv(m.b.function_call(t, None, id, args.iter().copied()))
    }
    fn branch<const N: usize>(
        &self,
        c: Word,
        then: impl FnOnce() -> [Word; N],
        els: impl FnOnce() -> [Word; N],
    ) -> [Word; N] {
        let (merge, tl, el) = {
            let mut m = self.m.borrow_mut();
            let ids = (m.b.id(), m.b.id(), m.b.id());
            spv(m.b.selection_merge(ids.0, SelectionControl::NONE));
            spv(m.b.branch_conditional(c, ids.1, ids.2, []));
            spv(m.b.begin_block(Some(ids.1)));
            ids
        };
        self.cur.set(tl);
        let tv = then();
        let tend = self.cur.get();
        {
            let mut m = self.m.borrow_mut();
            spv(m.b.branch(merge));
            spv(m.b.begin_block(Some(el)));
        }
        self.cur.set(el);
        let ev = els();
        let eend = self.cur.get();
        let t = self.ty(Ty::F64);
        let mut m = self.m.borrow_mut();
        spv(m.b.branch(merge));
        spv(m.b.begin_block(Some(merge)));
        self.cur.set(merge);
        std::array::from_fn(|i| spv(m.b.phi(t, None, [(tv[i], tend), (ev[i], eend)])))
    }
    fn table(&self, i: Word) -> Word {
        let var = self
            .table
            .expect("the table is declared in the functions that read it");
        let u = self.ty(Ty::U32);
        let mut m = self.m.borrow_mut();
        let p = m.ptr(StorageClass::Function, u);
        let ptr = spv(m.b.access_chain(p, None, var, [i]));
        spv(m.b.load(u, None, ptr, None, []))
    }
}
