//! f64 transcendentals on the device, at f64 precision.
//!
//! GLSL.std.450 has `Exp Log Sin Pow ...` for 16- and 32-bit floats only, so
//! the `f64` forms of `exp exp2 log log2 sin cos tan asin acos atan sinh cosh
//! tanh pow atan2` are written out here as SPIR-V functions of their own,
//! from f64 arithmetic, 32-bit integer operations on the two words of a
//! double (an `OpBitcast` to `uvec2`, so no `Int64` is needed), `FAbs Floor
//! Trunc Sqrt`, and selects. The algorithms are fdlibm's (as in musl and
//! FreeBSD's msun), about 1 ulp from the exact result or better (`sinh cosh
//! tanh` are rounded once from double-double), so within 2 ulp of the
//! host's (Rust's `f64::sin` and so on: the C library's, within 1 to 2 ulp
//! itself); see `exp_log.rs` and `trig.rs` for which is which.
//!
//! How they are emitted (`emit.rs`): the writer asks for a function by
//! [`Fun`] while it is in the middle of another function, so the id is
//! reserved then and the call written; the bodies come after the entry point,
//! each once per module, and one body may call another (`sinh` and `cosh`
//! call `exp(x)/2`, `atan2` calls `atan`); `sin`, `cos` and `tan` are one
//! function with the argument reduction shared and a mode argument.
//!
//! Determinism: every float `+ - * /` carries `NoContraction` (the
//! error-free transformations of these algorithms depend on each operation
//! rounding once, as on the host, and a driver must not reassociate them);
//! no `Fma` is used, because Vulkan allows it to round twice. Code is
//! straight-line (selects), with one exception: the Payne–Hanek reduction
//! of `sin cos tan` arguments beyond 2^20·π/2 is a structured branch taken
//! only for such arguments; it reads the bits of 2/π from a function-local
//! constant array. No loops (llvmpipe cuts long loops).
//!
//! The algorithms are written once, generically over [`Ops`]: the writer's
//! implementation emits instructions, and the unit tests' implementation
//! evaluates the same operations on the host in f64, so the accuracy of
//! exactly the emitted operation sequence is checked against the C library
//! on millions of arguments without a device.

// fdlibm's constants are written as fdlibm writes them (decimal, with the
// hex words in comments), some of them equal to `std::f64::consts` ones.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

mod dispatch;
mod emit;
mod exp_log;
#[cfg(test)]
mod tests;
mod trig;

// The unit tests evaluate the same bodies the writer emits.
#[cfg(test)]
pub(in crate::spirv::f64math) use dispatch::body;

use crate::spirv::types::{Module, Ty};
use rspirv::spirv::Word;
use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Shl, Shr, Sub};

/// A device function of f64 arguments returning f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fun {
    Exp,
    /// exp(x)/2 (for sinh and cosh).
    Expo2,
    Exp2,
    Log,
    Log2,
    Pow,
    Sinh,
    Cosh,
    Tanh,
    /// `(x, mode)`: sin (mode 0), cos (1) or tan (2) of x.
    Trig,
    Asin,
    Acos,
    Atan,
    Atan2,
}

impl Fun {
    fn arity(self) -> usize {
        match self {
            Fun::Pow | Fun::Atan2 | Fun::Trig => 2,
            _ => 1,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Fun::Exp => "accl_exp_f64",
            Fun::Expo2 => "accl_exp_half_f64",
            Fun::Exp2 => "accl_exp2_f64",
            Fun::Log => "accl_log_f64",
            Fun::Log2 => "accl_log2_f64",
            Fun::Pow => "accl_pow_f64",
            Fun::Sinh => "accl_sinh_f64",
            Fun::Cosh => "accl_cosh_f64",
            Fun::Tanh => "accl_tanh_f64",
            Fun::Trig => "accl_sincostan_f64",
            Fun::Asin => "accl_asin_f64",
            Fun::Acos => "accl_acos_f64",
            Fun::Atan => "accl_atan_f64",
            Fun::Atan2 => "accl_atan2_f64",
        }
    }
}

/// The f64 functions of one module: ids reserved on first use, bodies
/// written at the end.
#[derive(Debug, Default)]
pub(in crate::spirv) struct Fns {
    ids: Vec<(Fun, Word)>,
    emitted: usize,
    uvec2: Option<Word>,
    pair: Option<Word>,
}

impl Fns {
    /// The id of `f`'s function (reserved now, body written later).
    fn id(&mut self, m: &mut Module, f: Fun) -> Word {
        if let Some(&(_, id)) = self.ids.iter().find(|(g, _)| *g == f) {
            return id;
        }
        let id = m.b.id();
        self.ids.push((f, id));
        id
    }
    fn uvec2(&mut self, m: &mut Module) -> Word {
        if let Some(t) = self.uvec2 {
            return t;
        }
        let u = m.ty(Ty::U32);
        let t = m.b.type_vector(u, 2);
        self.uvec2 = Some(t);
        t
    }
    /// `struct { u32, u32 }` for `OpUMulExtended` (given its own id: the
    /// builder would otherwise dedup it onto some Block struct).
    fn pair(&mut self, m: &mut Module) -> Word {
        if let Some(t) = self.pair {
            return t;
        }
        let u = m.ty(Ty::U32);
        let id = m.b.id();
        let t = m.b.type_struct_id(Some(id), [u, u]);
        self.pair = Some(t);
        t
    }
}

// ---- the operations the algorithms are written in ---------------------------

#[derive(Clone, Copy, Debug)]
pub(super) enum FOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum F1 {
    Neg,
    Abs,
    Floor,
    Trunc,
    Sqrt,
}

/// Ordered comparisons (false when an operand is NaN).
#[derive(Clone, Copy, Debug)]
pub(super) enum FCmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum UOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// Shifts: the count is below 32 (the wrappers mask variable counts).
    Shl,
    Shr,
    Sar,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum UCmp {
    Eq,
    Ne,
    ULt,
    ULe,
    UGt,
    UGe,
    SLt,
    SGt,
    SGe,
}

/// What the algorithms need: f64 values `F`, 32-bit integers `U` (signed
/// operations read them as two's complement `i32`), booleans `B`.
pub(super) trait Ops: Sized {
    type F: Copy;
    type U: Copy;
    type B: Copy;
    fn kf(&self, v: f64) -> Self::F;
    fn ku(&self, v: u32) -> Self::U;
    fn fop(&self, op: FOp, a: Self::F, b: Self::F) -> Self::F;
    fn f1(&self, op: F1, a: Self::F) -> Self::F;
    fn fcmp(&self, op: FCmp, a: Self::F, b: Self::F) -> Self::B;
    fn is_nan(&self, a: Self::F) -> Self::B;
    fn fsel(&self, c: Self::B, a: Self::F, b: Self::F) -> Self::F;
    fn usel(&self, c: Self::B, a: Self::U, b: Self::U) -> Self::U;
    /// (high word, low word) of a double.
    fn words(&self, a: Self::F) -> (Self::U, Self::U);
    fn join(&self, hi: Self::U, lo: Self::U) -> Self::F;
    fn uop(&self, op: UOp, a: Self::U, b: Self::U) -> Self::U;
    fn ucmp(&self, op: UCmp, a: Self::U, b: Self::U) -> Self::B;
    /// The full product: (low word, high word).
    fn umul(&self, a: Self::U, b: Self::U) -> (Self::U, Self::U);
    fn band(&self, a: Self::B, b: Self::B) -> Self::B;
    fn bor(&self, a: Self::B, b: Self::B) -> Self::B;
    fn bnot(&self, a: Self::B) -> Self::B;
    /// Signed integer to double (exact).
    fn i2f(&self, a: Self::U) -> Self::F;
    /// Unsigned integer to double (exact).
    fn u2f(&self, a: Self::U) -> Self::F;
    /// Double to signed integer, truncating; `a` is in range (the callers
    /// make sure: out of range is undefined on the device).
    fn f2i(&self, a: Self::F) -> Self::U;
    fn call(&self, f: Fun, args: &[Self::F]) -> Self::F;
    /// `if c { then() } else { els() }`, as structured control flow.
    fn branch<const N: usize>(
        &self,
        c: Self::B,
        then: impl FnOnce() -> [Self::F; N],
        els: impl FnOnce() -> [Self::F; N],
    ) -> [Self::F; N];
    /// Element `i` of the bits of 2/π ([`trig::TWO_OVER_PI`]).
    fn table(&self, i: Self::U) -> Self::U;
}

/// A double.
pub(super) struct F<'a, O: Ops> {
    o: &'a O,
    v: O::F,
}
/// A 32-bit integer.
pub(super) struct U<'a, O: Ops> {
    o: &'a O,
    v: O::U,
}
/// A boolean.
pub(super) struct B<'a, O: Ops> {
    o: &'a O,
    v: O::B,
}

macro_rules! copy {
    ($($t:ident),*) => {$(
        impl<O: Ops> Clone for $t<'_, O> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<O: Ops> Copy for $t<'_, O> {}
    )*};
}
copy!(F, U, B);

/// A double or an f64 constant.
pub(super) trait IntoF<'a, O: Ops> {
    fn f(self, o: &'a O) -> O::F;
}
impl<'a, O: Ops> IntoF<'a, O> for F<'a, O> {
    fn f(self, _: &'a O) -> O::F {
        self.v
    }
}
impl<'a, O: Ops> IntoF<'a, O> for f64 {
    fn f(self, o: &'a O) -> O::F {
        o.kf(self)
    }
}

/// A 32-bit integer or a constant.
pub(super) trait IntoU<'a, O: Ops> {
    fn u(self, o: &'a O) -> O::U;
}
impl<'a, O: Ops> IntoU<'a, O> for U<'a, O> {
    fn u(self, _: &'a O) -> O::U {
        self.v
    }
}
impl<'a, O: Ops> IntoU<'a, O> for u32 {
    fn u(self, o: &'a O) -> O::U {
        o.ku(self)
    }
}
impl<'a, O: Ops> IntoU<'a, O> for i32 {
    fn u(self, o: &'a O) -> O::U {
        o.ku(self as u32)
    }
}

macro_rules! fbin {
    ($($tr:ident $m:ident $op:ident),*) => {$(
        impl<'a, O: Ops> $tr<F<'a, O>> for F<'a, O> {
            type Output = F<'a, O>;
            fn $m(self, b: F<'a, O>) -> F<'a, O> {
                F { o: self.o, v: self.o.fop(FOp::$op, self.v, b.v) }
            }
        }
        impl<'a, O: Ops> $tr<f64> for F<'a, O> {
            type Output = F<'a, O>;
            fn $m(self, b: f64) -> F<'a, O> {
                F { o: self.o, v: self.o.fop(FOp::$op, self.v, self.o.kf(b)) }
            }
        }
        impl<'a, O: Ops> $tr<F<'a, O>> for f64 {
            type Output = F<'a, O>;
            fn $m(self, b: F<'a, O>) -> F<'a, O> {
                F { o: b.o, v: b.o.fop(FOp::$op, b.o.kf(self), b.v) }
            }
        }
    )*};
}
fbin!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);

impl<'a, O: Ops> Neg for F<'a, O> {
    type Output = F<'a, O>;
    fn neg(self) -> F<'a, O> {
        self.un(F1::Neg)
    }
}

impl<'a, O: Ops> F<'a, O> {
    fn un(self, op: F1) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.f1(op, self.v),
        }
    }
    /// A constant beside this value.
    pub fn k(self, v: f64) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.kf(v),
        }
    }
    pub fn uk(self, v: u32) -> U<'a, O> {
        U {
            o: self.o,
            v: self.o.ku(v),
        }
    }
    pub fn abs(self) -> F<'a, O> {
        self.un(F1::Abs)
    }
    pub fn floor(self) -> F<'a, O> {
        self.un(F1::Floor)
    }
    pub fn trunc(self) -> F<'a, O> {
        self.un(F1::Trunc)
    }
    pub fn sqrt(self) -> F<'a, O> {
        self.un(F1::Sqrt)
    }
    fn cmp(self, op: FCmp, b: impl IntoF<'a, O>) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.fcmp(op, self.v, b.f(self.o)),
        }
    }
    pub fn lt(self, b: impl IntoF<'a, O>) -> B<'a, O> {
        self.cmp(FCmp::Lt, b)
    }
    pub fn le(self, b: impl IntoF<'a, O>) -> B<'a, O> {
        self.cmp(FCmp::Le, b)
    }
    pub fn gt(self, b: impl IntoF<'a, O>) -> B<'a, O> {
        self.cmp(FCmp::Gt, b)
    }
    pub fn ge(self, b: impl IntoF<'a, O>) -> B<'a, O> {
        self.cmp(FCmp::Ge, b)
    }
    pub fn eq(self, b: impl IntoF<'a, O>) -> B<'a, O> {
        self.cmp(FCmp::Eq, b)
    }
    pub fn is_nan(self) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.is_nan(self.v),
        }
    }
    /// (high word, low word).
    pub fn words(self) -> (U<'a, O>, U<'a, O>) {
        let (h, l) = self.o.words(self.v);
        (U { o: self.o, v: h }, U { o: self.o, v: l })
    }
    pub fn hi(self) -> U<'a, O> {
        self.words().0
    }
    /// The high word with the sign bit cleared.
    pub fn ahi(self) -> U<'a, O> {
        self.hi() & 0x7fff_ffffu32
    }
    /// The sign bit: 1 when negative (-0 included).
    pub fn sign(self) -> U<'a, O> {
        self.hi() >> 31
    }
    /// This double with its low word cleared.
    pub fn low0(self) -> F<'a, O> {
        let h = self.hi();
        h.join(0u32)
    }
    /// This double with its high word replaced.
    pub fn with_hi(self, h: U<'a, O>) -> F<'a, O> {
        h.join(self.words().1)
    }
    /// The magnitude of `self` with the sign of `s`.
    pub fn copysign(self, s: F<'a, O>) -> F<'a, O> {
        let (h, l) = self.words();
        ((h & 0x7fff_ffffu32) | (s.hi() & 0x8000_0000u32)).join(l)
    }
    /// Signed integer part (`self` is an integer in i32 range).
    pub fn to_i(self) -> U<'a, O> {
        U {
            o: self.o,
            v: self.o.f2i(self.v),
        }
    }
    pub fn call(self, f: Fun, rest: &[F<'a, O>]) -> F<'a, O> {
        let mut args = vec![self.v];
        args.extend(rest.iter().map(|a| a.v));
        F {
            o: self.o,
            v: self.o.call(f, &args),
        }
    }
}

macro_rules! ubin {
    ($($tr:ident $m:ident $op:ident),*) => {$(
        impl<'a, O: Ops, R: IntoU<'a, O>> $tr<R> for U<'a, O> {
            type Output = U<'a, O>;
            fn $m(self, b: R) -> U<'a, O> {
                U { o: self.o, v: self.o.uop(UOp::$op, self.v, b.u(self.o)) }
            }
        }
    )*};
}
// `+` and `-` wrap.
ubin!(Add add Add, Sub sub Sub, BitAnd bitand And, BitOr bitor Or, BitXor bitxor Xor);

impl<'a, O: Ops> Shl<u32> for U<'a, O> {
    type Output = U<'a, O>;
    fn shl(self, n: u32) -> U<'a, O> {
        assert!(n < 32);
        U {
            o: self.o,
            v: self.o.uop(UOp::Shl, self.v, self.o.ku(n)),
        }
    }
}
impl<'a, O: Ops> Shr<u32> for U<'a, O> {
    type Output = U<'a, O>;
    fn shr(self, n: u32) -> U<'a, O> {
        assert!(n < 32);
        U {
            o: self.o,
            v: self.o.uop(UOp::Shr, self.v, self.o.ku(n)),
        }
    }
}
impl<'a, O: Ops> Shl<U<'a, O>> for U<'a, O> {
    type Output = U<'a, O>;
    /// A variable count is masked to 0..=31.
    fn shl(self, n: U<'a, O>) -> U<'a, O> {
        let n = n.mask31();
        U {
            o: self.o,
            v: self.o.uop(UOp::Shl, self.v, n.v),
        }
    }
}
impl<'a, O: Ops> Shr<U<'a, O>> for U<'a, O> {
    type Output = U<'a, O>;
    /// A variable count is masked to 0..=31.
    fn shr(self, n: U<'a, O>) -> U<'a, O> {
        let n = n.mask31();
        U {
            o: self.o,
            v: self.o.uop(UOp::Shr, self.v, n.v),
        }
    }
}
impl<'a, O: Ops> Not for U<'a, O> {
    type Output = U<'a, O>;
    fn not(self) -> U<'a, O> {
        self ^ 0xffff_ffffu32
    }
}

impl<'a, O: Ops> U<'a, O> {
    /// `self & 31` (a variable shift count: SPIR-V leaves 32 and more
    /// undefined).
    fn mask31(self) -> U<'a, O> {
        self & 31u32
    }
    /// Arithmetic shift right by a constant.
    pub fn sar(self, n: u32) -> U<'a, O> {
        assert!(n < 32);
        U {
            o: self.o,
            v: self.o.uop(UOp::Sar, self.v, self.o.ku(n)),
        }
    }
    fn cmp(self, op: UCmp, b: impl IntoU<'a, O>) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.ucmp(op, self.v, b.u(self.o)),
        }
    }
    pub fn eq(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::Eq, b)
    }
    pub fn ne(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::Ne, b)
    }
    pub fn ult(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::ULt, b)
    }
    pub fn ule(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::ULe, b)
    }
    pub fn ugt(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::UGt, b)
    }
    pub fn uge(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::UGe, b)
    }
    pub fn slt(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::SLt, b)
    }
    pub fn sgt(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::SGt, b)
    }
    pub fn sge(self, b: impl IntoU<'a, O>) -> B<'a, O> {
        self.cmp(UCmp::SGe, b)
    }
    /// The double with this high word and low word `lo`.
    pub fn join(self, lo: impl IntoU<'a, O>) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.join(self.v, lo.u(self.o)),
        }
    }
    /// As a signed integer, to double.
    pub fn to_f(self) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.i2f(self.v),
        }
    }
    /// As an unsigned integer, to double.
    pub fn to_uf(self) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.u2f(self.v),
        }
    }
    /// The 64-bit product: (low word, high word).
    pub fn umul(self, b: U<'a, O>) -> (U<'a, O>, U<'a, O>) {
        let (l, h) = self.o.umul(self.v, b.v);
        (U { o: self.o, v: l }, U { o: self.o, v: h })
    }
    /// A constant beside this value.
    pub fn k(self, v: u32) -> U<'a, O> {
        U {
            o: self.o,
            v: self.o.ku(v),
        }
    }
}

impl<'a, O: Ops> BitAnd for B<'a, O> {
    type Output = B<'a, O>;
    fn bitand(self, b: B<'a, O>) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.band(self.v, b.v),
        }
    }
}
impl<'a, O: Ops> BitOr for B<'a, O> {
    type Output = B<'a, O>;
    fn bitor(self, b: B<'a, O>) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.bor(self.v, b.v),
        }
    }
}
impl<'a, O: Ops> Not for B<'a, O> {
    type Output = B<'a, O>;
    fn not(self) -> B<'a, O> {
        B {
            o: self.o,
            v: self.o.bnot(self.v),
        }
    }
}

impl<'a, O: Ops> B<'a, O> {
    /// `if self { a } else { b }`.
    pub fn sel(self, a: impl IntoF<'a, O>, b: impl IntoF<'a, O>) -> F<'a, O> {
        F {
            o: self.o,
            v: self.o.fsel(self.v, a.f(self.o), b.f(self.o)),
        }
    }
    /// `if self { a } else { b }` on integers.
    pub fn selu(self, a: impl IntoU<'a, O>, b: impl IntoU<'a, O>) -> U<'a, O> {
        U {
            o: self.o,
            v: self.o.usel(self.v, a.u(self.o), b.u(self.o)),
        }
    }
    /// `if self { then() } else { els() }`, branching.
    pub fn branch<const N: usize>(
        self,
        then: impl FnOnce() -> [F<'a, O>; N],
        els: impl FnOnce() -> [F<'a, O>; N],
    ) -> [F<'a, O>; N] {
        let o = self.o;
        let r = o.branch(self.v, || then().map(|f| f.v), || els().map(|f| f.v));
        r.map(|v| F { o, v })
    }
}

/// Element `i` of [`trig::TWO_OVER_PI`].
pub(super) fn table<'a, O: Ops>(i: U<'a, O>) -> U<'a, O> {
    U {
        o: i.o,
        v: i.o.table(i.v),
    }
}

// ---- double-double helpers (no fma: Vulkan's may round twice) ----------------

/// `a + b` exactly as (sum, error), any magnitudes.
pub(super) fn two_sum<'a, O: Ops>(a: F<'a, O>, b: F<'a, O>) -> (F<'a, O>, F<'a, O>) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `a + b` exactly as (sum, error), for |a| >= |b| (or a = 0).
pub(super) fn fast_two_sum<'a, O: Ops>(a: F<'a, O>, b: F<'a, O>) -> (F<'a, O>, F<'a, O>) {
    let s = a + b;
    let e = b - (s - a);
    (s, e)
}

/// Veltkamp's split of a constant into two 26-bit halves.
fn split_const(a: f64) -> (f64, f64) {
    let c = a * 134217729.0;
    let h = c - (c - a);
    (h, a - h)
}

/// Veltkamp's split of `a` into two 26-bit halves.
fn split<'a, O: Ops>(a: F<'a, O>) -> (F<'a, O>, F<'a, O>) {
    let c = a * 134217729.0;
    let h = c - (c - a);
    (h, a - h)
}

/// `a * b` exactly as (product, error) (Dekker).
pub(super) fn two_prod<'a, O: Ops>(a: F<'a, O>, b: F<'a, O>) -> (F<'a, O>, F<'a, O>) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, e)
}

/// A double-double: (high, low).
pub(super) type Dd<'a, O> = (F<'a, O>, F<'a, O>);

/// Double-double sum (relative error about 2^-104 without cancellation).
pub(super) fn dd_add<'a, O: Ops>(a: Dd<'a, O>, b: Dd<'a, O>) -> Dd<'a, O> {
    let (s, e) = two_sum(a.0, b.0);
    fast_two_sum(s, e + (a.1 + b.1))
}

/// Double-double product.
pub(super) fn dd_mul<'a, O: Ops>(a: Dd<'a, O>, b: Dd<'a, O>) -> Dd<'a, O> {
    let (p, e) = two_prod(a.0, b.0);
    fast_two_sum(p, e + (a.0 * b.1 + a.1 * b.0))
}

/// Double-double quotient.
pub(super) fn dd_div<'a, O: Ops>(a: Dd<'a, O>, b: Dd<'a, O>) -> Dd<'a, O> {
    let q = a.0 / b.0;
    let (p, pe) = two_prod(q, b.0);
    let r = ((a.0 - p) - pe + a.1) - q * b.1;
    fast_two_sum(q, r / b.0)
}

/// `a * b` exactly as (product, error) (Dekker), for a constant `b`.
pub(super) fn two_prod_const<'a, O: Ops>(a: F<'a, O>, b: f64) -> (F<'a, O>, F<'a, O>) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split_const(b);
    let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, e)
}
