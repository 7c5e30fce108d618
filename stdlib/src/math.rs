//! Host implementations of the math builtins (`docs/language.md`,
//! "Builtins").
//!
//! Typed, so that the interpreter can turn a call into a direct function
//! pointer call with no dynamic values: [`Math`] holds what every numeric
//! type has (`abs min max clamp`), [`float1`]/[`float2`]/[`float3`] the
//! float-only functions by name. The results are Rust's (`f32::sqrt`, ...);
//! `min`/`max` return the other operand when one is NaN (IEEE minNum), and
//! `clamp` never panics (it is `min(max(x, lo), hi)`). Integer `abs` wraps
//! (`abs(i32::MIN) == i32::MIN`), as integer arithmetic does.

use crate::array::Elem;

/// What every numeric element type has.
pub trait Math: Elem {
    fn abs(self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn clamp(self, lo: Self, hi: Self) -> Self {
        self.max(lo).min(hi)
    }
}

macro_rules! int_math {
    ($($t:ty: $abs:expr),*) => {$(
        impl Math for $t {
            #[inline(always)]
            fn abs(self) -> Self {
                ($abs)(self)
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                std::cmp::min(self, o)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                std::cmp::max(self, o)
            }
        }
    )*};
}
int_math!(i32: i32::wrapping_abs, i64: i64::wrapping_abs, u32: |x| x, u8: |x| x);

macro_rules! float_math {
    ($($t:ty),*) => {$(
        impl Math for $t {
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                <$t>::min(self, o)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                <$t>::max(self, o)
            }
        }
    )*};
}
float_math!(f32, f64);

/// The float types, with their one-, two- and three-argument builtins.
pub trait Float: Math {
    fn f1(name: &str) -> Option<fn(Self) -> Self>;
    fn f2(name: &str) -> Option<fn(Self, Self) -> Self>;
    fn f3(name: &str) -> Option<fn(Self, Self, Self) -> Self>;
}

/// `pow(x, y)`: `x * x` when `y` is 2, as C compilers emit `pow(x, 2.0)`
/// (the correctly rounded square, never further from the exact value than
/// the C library's `pow`, and several times faster); the C library's `pow`
/// otherwise. The interpreter and the host JIT both call these.
pub fn pow_f32(x: f32, y: f32) -> f32 {
    if y == 2.0 {
        x * x
    } else {
        x.powf(y)
    }
}

/// [`pow_f32`] on `f64`.
pub fn pow_f64(x: f64, y: f64) -> f64 {
    if y == 2.0 {
        x * x
    } else {
        x.powf(y)
    }
}

macro_rules! float_fns {
    ($t:ident, $pow:ident) => {
        impl Float for $t {
            fn f1(name: &str) -> Option<fn($t) -> $t> {
                Some(match name {
                    "sqrt" => $t::sqrt,
                    "exp" => $t::exp,
                    "exp2" => $t::exp2,
                    "log" => $t::ln,
                    "log2" => $t::log2,
                    "sin" => $t::sin,
                    "cos" => $t::cos,
                    "tan" => $t::tan,
                    "asin" => $t::asin,
                    "acos" => $t::acos,
                    "atan" => $t::atan,
                    "sinh" => $t::sinh,
                    "cosh" => $t::cosh,
                    "tanh" => $t::tanh,
                    "floor" => $t::floor,
                    "ceil" => $t::ceil,
                    "round" => $t::round,
                    "trunc" => $t::trunc,
                    _ => return None,
                })
            }
            fn f2(name: &str) -> Option<fn($t, $t) -> $t> {
                Some(match name {
                    "pow" => $pow,
                    "atan2" => $t::atan2,
                    _ => return None,
                })
            }
            fn f3(name: &str) -> Option<fn($t, $t, $t) -> $t> {
                Some(match name {
                    "fma" => $t::mul_add,
                    _ => return None,
                })
            }
        }
    };
}
float_fns!(f32, pow_f32);
float_fns!(f64, pow_f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_edges() {
        assert_eq!(Math::abs(i32::MIN), i32::MIN);
        assert_eq!(Math::clamp(5, 10, 0), 0);
        assert_eq!(Math::max(f32::NAN, 1.0), 1.0);
        assert_eq!(f64::f1("sqrt").unwrap()(9.0), 3.0);
        assert_eq!(f32::f3("fma").unwrap()(2.0, 3.0, 1.0), 7.0);
        assert!(f32::f1("nope").is_none());
    }

    #[test]
    fn a_square_is_the_product_and_other_powers_the_libraries() {
        let pow = f64::f2("pow").unwrap();
        // 1 + 2^-52 squared is 1 + 2^-51 + 2^-104: the product rounds to
        // 1 + 2^-51 exactly.
        let x = 1.0 + f64::EPSILON;
        assert_eq!(pow(x, 2.0).to_bits(), (1.0 + 2.0 * f64::EPSILON).to_bits());
        assert_eq!(pow(-0.0, 2.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(pow(f64::NEG_INFINITY, 2.0), f64::INFINITY);
        assert!(pow(f64::NAN, 2.0).is_nan());
        assert_eq!(pow(1e200, 2.0), f64::INFINITY);
        // The smallest subnormal's square underflows to +0.
        assert_eq!(pow(-5e-324, 2.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(pow(2.0, 0.5), 2.0f64.sqrt());
        assert_eq!(pow(-8.0, 3.0), -512.0);
        let powf = f32::f2("pow").unwrap();
        assert_eq!(powf(3.0, 2.0), 9.0);
        assert_eq!(powf(4.0, 0.5), 2.0);
    }
}
