//! The scalar types of the interpreter: the [`Sc`] trait gives each one its
//! slot encoding, its place in a compiled expression ([`CExpr`]) and its
//! operations with the language's semantics (wrapping integers, IEEE
//! floats, Rust casts). The operations agree bit for bit with
//! [`lang::Value::binary`] (which constant folding uses); a unit test checks
//! it. It sits above the machine because wrapping a closure names
//! [`CExpr`].

use super::machine::{CExpr, Ctx, Ex};
use super::value::{Frame, R};
use lang::{Scalar, Value};
use stdlib::array::Elem;
use stdlib::math::Math;

impl CExpr {
    /// Evaluate a scalar expression to its slot bits.
    pub fn eval_bits(&self, fr: &mut Frame, cx: &mut Ctx) -> R<u64> {
        Ok(match self {
            CExpr::Bool(f) => f(fr, cx)?.to_slot(),
            CExpr::I32(f) => f(fr, cx)?.to_slot(),
            CExpr::I64(f) => f(fr, cx)?.to_slot(),
            CExpr::U32(f) => f(fr, cx)?.to_slot(),
            CExpr::U8(f) => f(fr, cx)?.to_slot(),
            CExpr::F32(f) => f(fr, cx)?.to_slot(),
            CExpr::F64(f) => f(fr, cx)?.to_slot(),
            _ => {
                self.eval(fr, cx)?;
                0
            }
        })
    }
}

/// A scalar's slot bits as a value of type `t`.
pub fn bits_to_value(t: Scalar, b: u64) -> Value {
    match t {
        Scalar::Bool => Value::Bool(<bool as Sc>::from_slot(b)),
        Scalar::I32 => Value::I32(<i32 as Sc>::from_slot(b)),
        Scalar::I64 => Value::I64(<i64 as Sc>::from_slot(b)),
        Scalar::U32 => Value::U32(<u32 as Sc>::from_slot(b)),
        Scalar::U8 => Value::U8(<u8 as Sc>::from_slot(b)),
        Scalar::F32 => Value::F32(<f32 as Sc>::from_slot(b)),
        Scalar::F64 => Value::F64(<f64 as Sc>::from_slot(b)),
    }
}

/// A value's slot bits (after `as t`).
pub fn value_to_bits(v: Value, t: Scalar) -> u64 {
    match v.cast(t) {
        Value::Bool(x) => x.to_slot(),
        Value::I32(x) => x.to_slot(),
        Value::I64(x) => x.to_slot(),
        Value::U32(x) => x.to_slot(),
        Value::U8(x) => x.to_slot(),
        Value::F32(x) => x.to_slot(),
        Value::F64(x) => x.to_slot(),
        _ => 0,
    }
}

/// A scalar type of the interpreter.
pub trait Sc: Elem {
    fn to_slot(self) -> u64;
    fn from_slot(b: u64) -> Self;
    fn wrap(f: Ex<Self>) -> CExpr;
    fn unwrap(c: CExpr) -> Option<Ex<Self>>;
    /// `i as Self` (Rust semantics) from an integer or bool.
    fn from_int(i: i128) -> Self;
    /// `f as Self` (Rust semantics) from a float.
    fn from_f64(f: f64) -> Self;
    /// Integer (or bool) value; None for floats.
    fn as_int(self) -> Option<i128>;
    fn as_float(self) -> f64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// None: integer division by zero.
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
    fn band(self, o: Self) -> Self;
    fn bor(self, o: Self) -> Self;
    fn bxor(self, o: Self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn not(self) -> Self;
    /// min/max for reductions and atomics (bools: and/or).
    fn mn(self, o: Self) -> Self;
    fn mx(self, o: Self) -> Self;
}

macro_rules! sc_common {
    ($t:ty, $var:ident) => {
        #[inline(always)]
        fn wrap(f: Ex<Self>) -> CExpr {
            CExpr::$var(f)
        }
        fn unwrap(c: CExpr) -> Option<Ex<Self>> {
            match c {
                CExpr::$var(f) => Some(f),
                _ => None,
            }
        }
    };
}

macro_rules! sc_int {
    ($t:ty, $var:ident) => {
        impl Sc for $t {
            sc_common!($t, $var);
            #[inline(always)]
            fn to_slot(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_slot(b: u64) -> Self {
                b as $t
            }
            fn from_int(i: i128) -> Self {
                i as $t
            }
            fn from_f64(f: f64) -> Self {
                f as $t
            }
            fn as_int(self) -> Option<i128> {
                Some(self as i128)
            }
            fn as_float(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn div(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_div(o))
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_rem(o))
            }
            fn band(self, o: Self) -> Self {
                self & o
            }
            fn bor(self, o: Self) -> Self {
                self | o
            }
            fn bxor(self, o: Self) -> Self {
                self ^ o
            }
            fn shl(self, o: Self) -> Self {
                self.wrapping_shl(o as u32)
            }
            fn shr(self, o: Self) -> Self {
                self.wrapping_shr(o as u32)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn not(self) -> Self {
                !self
            }
            fn mn(self, o: Self) -> Self {
                Math::min(self, o)
            }
            fn mx(self, o: Self) -> Self {
                Math::max(self, o)
            }
        }
    };
}
sc_int!(i32, I32);
sc_int!(i64, I64);
sc_int!(u32, U32);
sc_int!(u8, U8);

macro_rules! sc_float {
    ($t:ty, $var:ident, $bits:ty) => {
        impl Sc for $t {
            sc_common!($t, $var);
            #[inline(always)]
            fn to_slot(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            #[inline(always)]
            fn from_slot(b: u64) -> Self {
                <$t>::from_bits(b as $bits)
            }
            fn from_int(i: i128) -> Self {
                i as $t
            }
            fn from_f64(f: f64) -> Self {
                f as $t
            }
            fn as_int(self) -> Option<i128> {
                None
            }
            fn as_float(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Option<Self> {
                Some(self / o)
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Option<Self> {
                Some(self % o)
            }
            fn band(self, _: Self) -> Self {
                self
            }
            fn bor(self, _: Self) -> Self {
                self
            }
            fn bxor(self, _: Self) -> Self {
                self
            }
            fn shl(self, _: Self) -> Self {
                self
            }
            fn shr(self, _: Self) -> Self {
                self
            }
            fn neg(self) -> Self {
                -self
            }
            fn not(self) -> Self {
                self
            }
            fn mn(self, o: Self) -> Self {
                Math::min(self, o)
            }
            fn mx(self, o: Self) -> Self {
                Math::max(self, o)
            }
        }
    };
}
sc_float!(f32, F32, u32);
sc_float!(f64, F64, u64);

impl Sc for bool {
    sc_common!(bool, Bool);
    #[inline(always)]
    fn to_slot(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_slot(b: u64) -> Self {
        b != 0
    }
    fn from_int(i: i128) -> Self {
        i != 0
    }
    fn from_f64(f: f64) -> Self {
        f != 0.0
    }
    fn as_int(self) -> Option<i128> {
        Some(self as i128)
    }
    fn as_float(self) -> f64 {
        self as u8 as f64
    }
    fn add(self, o: Self) -> Self {
        self | o
    }
    fn sub(self, _: Self) -> Self {
        self
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn div(self, _: Self) -> Option<Self> {
        Some(self)
    }
    fn rem(self, _: Self) -> Option<Self> {
        Some(self)
    }
    fn band(self, o: Self) -> Self {
        self & o
    }
    fn bor(self, o: Self) -> Self {
        self | o
    }
    fn bxor(self, o: Self) -> Self {
        self ^ o
    }
    fn shl(self, _: Self) -> Self {
        self
    }
    fn shr(self, _: Self) -> Self {
        self
    }
    fn neg(self) -> Self {
        self
    }
    fn not(self) -> Self {
        !self
    }
    fn mn(self, o: Self) -> Self {
        self & o
    }
    fn mx(self, o: Self) -> Self {
        self | o
    }
}

/// Dispatch on a scalar type: `$body` is generic code using the type alias `$T`.
#[doc(hidden)]
#[macro_export]
macro_rules! per_scalar {
    ($s:expr, $T:ident => $body:expr) => {
        match $s {
            lang::Scalar::Bool => {
                type $T = bool;
                $body
            }
            lang::Scalar::I32 => {
                type $T = i32;
                $body
            }
            lang::Scalar::I64 => {
                type $T = i64;
                $body
            }
            lang::Scalar::U32 => {
                type $T = u32;
                $body
            }
            lang::Scalar::U8 => {
                type $T = u8;
                $body
            }
            lang::Scalar::F32 => {
                type $T = f32;
                $body
            }
            lang::Scalar::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// The slot bits of loop counter value `i` for a counter of type `t`
/// (for every integer type and a value in its range this is `i as u64`;
/// the statement loops rely on that).
pub fn counter_bits(t: Scalar) -> fn(i64) -> u64 {
    per_scalar!(t, T => |i: i64| T::from_int(i as i128).to_slot())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::ast::BinOp;

    fn check<T: Sc>(xs: &[T]) {
        for &a in xs {
            for &b in xs {
                let (va, vb) = (a.to_value(), b.to_value());
                let ops: [(BinOp, Option<T>); 5] = [
                    (BinOp::Add, Some(a.add(b))),
                    (BinOp::Sub, Some(a.sub(b))),
                    (BinOp::Mul, Some(a.mul(b))),
                    (BinOp::Div, a.div(b)),
                    (BinOp::Rem, a.rem(b)),
                ];
                for (op, got) in ops {
                    let want = Value::binary(op, va, vb).ok();
                    let got = got.map(|g| g.to_value());
                    // NaN != NaN: compare bits through Debug.
                    assert_eq!(
                        format!("{want:?}"),
                        format!("{got:?}"),
                        "{op:?} {va:?} {vb:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ops_match_constant_folding() {
        check(&[0i32, 1, -1, 7, i32::MIN, i32::MAX]);
        check(&[0i64, 3, -9, i64::MIN, i64::MAX]);
        check(&[0u32, 1, 5, u32::MAX]);
        check(&[0u8, 1, 200, 255]);
        check(&[0.0f32, -0.0, 1.5, f32::INFINITY, f32::NAN]);
        check(&[0.0f64, 2.5, -1e300, f64::NAN]);
    }
}
