//! Scalar values and their operations, shared by constant folding and the
//! interpreter so that `const` arithmetic and run-time arithmetic agree bit
//! for bit (wrapping integers, IEEE floats).

use crate::ast::{BinOp, ReductionOp, UnOp};
use crate::types::{Scalar, Type};
use std::fmt;

/// A scalar value, or an untyped literal (`IntLit`/`FloatLit`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U8(u8),
    F32(f32),
    F64(f64),
    IntLit(i128),
    FloatLit(f64),
}

/// Why an operation on values failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueError {
    DivByZero,
    /// Not an operation of these operand types (the checker rules it out).
    BadOperands,
}

impl Value {
    pub fn ty(self) -> Type {
        match self {
            Value::Bool(_) => Type::BOOL,
            Value::I32(_) => Type::I32,
            Value::I64(_) => Type::I64,
            Value::U32(_) => Type::U32,
            Value::U8(_) => Type::U8,
            Value::F32(_) => Type::F32,
            Value::F64(_) => Type::F64,
            Value::IntLit(_) => Type::IntLit,
            Value::FloatLit(_) => Type::FloatLit,
        }
    }
    /// The zero of a scalar type.
    pub fn zero(t: Scalar) -> Value {
        match t {
            Scalar::Bool => Value::Bool(false),
            Scalar::I32 => Value::I32(0),
            Scalar::I64 => Value::I64(0),
            Scalar::U32 => Value::U32(0),
            Scalar::U8 => Value::U8(0),
            Scalar::F32 => Value::F32(0.0),
            Scalar::F64 => Value::F64(0.0),
        }
    }
    /// Integer value as i128 (literal or typed); None for floats and bools.
    pub fn as_i128(self) -> Option<i128> {
        Some(match self {
            Value::I32(v) => v as i128,
            Value::I64(v) => v as i128,
            Value::U32(v) => v as i128,
            Value::U8(v) => v as i128,
            Value::IntLit(v) => v,
            _ => return None,
        })
    }
    pub fn as_f64(self) -> Option<f64> {
        Some(match self {
            Value::F32(v) => v as f64,
            Value::F64(v) | Value::FloatLit(v) => v,
            _ => return self.as_i128().map(|v| v as f64),
        })
    }
    pub fn as_bool(self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
    /// `self as t`, with Rust's cast semantics (wrapping int→int,
    /// saturating float→int, NaN→0).
    pub fn cast(self, t: Scalar) -> Value {
        if let Value::Bool(b) = self {
            return Value::U8(b as u8).cast(t);
        }
        match (self.as_i128(), t) {
            (Some(i), Scalar::I32) => Value::I32(i as i32),
            (Some(i), Scalar::I64) => Value::I64(i as i64),
            (Some(i), Scalar::U32) => Value::U32(i as u32),
            (Some(i), Scalar::U8) => Value::U8(i as u8),
            (Some(i), Scalar::F32) => Value::F32(i as f32),
            (Some(i), Scalar::F64) => Value::F64(i as f64),
            (Some(i), Scalar::Bool) => Value::Bool(i != 0),
            (None, _) => {
                let f = match self {
                    Value::F32(v) => v as f64,
                    Value::F64(v) | Value::FloatLit(v) => v,
                    _ => 0.0,
                };
                match (self, t) {
                    // f32 → f32 must not round-trip through f64 arithmetic.
                    (Value::F32(v), Scalar::F32) => Value::F32(v),
                    (_, Scalar::I32) => Value::I32(f as i32),
                    (_, Scalar::I64) => Value::I64(f as i64),
                    (_, Scalar::U32) => Value::U32(f as u32),
                    (_, Scalar::U8) => Value::U8(f as u8),
                    (_, Scalar::F32) => Value::F32(f as f32),
                    (_, Scalar::F64) => Value::F64(f),
                    (_, Scalar::Bool) => Value::Bool(f != 0.0),
                }
            }
        }
    }
    /// Give an untyped literal the type `t`; None when the value does not fit
    /// (an integer out of range, or a fractional float given an integer type).
    pub fn concretize(self, t: Scalar) -> Option<Value> {
        match self {
            Value::IntLit(i) => {
                if let Some((lo, hi)) = t.int_range() {
                    (lo..=hi).contains(&i).then(|| self.cast(t))
                } else if t.is_float() {
                    Some(self.cast(t))
                } else {
                    None
                }
            }
            Value::FloatLit(_) if t.is_float() => Some(self.cast(t)),
            Value::FloatLit(_) => None,
            v if v.ty() == Type::Scalar(t) => Some(v),
            _ => None,
        }
    }

    pub fn unary(op: UnOp, v: Value) -> Result<Value, ValueError> {
        use Value::*;
        Ok(match (op, v) {
            (UnOp::Neg, I32(a)) => I32(a.wrapping_neg()),
            (UnOp::Neg, I64(a)) => I64(a.wrapping_neg()),
            (UnOp::Neg, U32(a)) => U32(a.wrapping_neg()),
            (UnOp::Neg, U8(a)) => U8(a.wrapping_neg()),
            (UnOp::Neg, F32(a)) => F32(-a),
            (UnOp::Neg, F64(a)) => F64(-a),
            (UnOp::Neg, IntLit(a)) => IntLit(-a),
            (UnOp::Neg, FloatLit(a)) => FloatLit(-a),
            (UnOp::Not, Bool(a)) => Bool(!a),
            (UnOp::Not, I32(a)) => I32(!a),
            (UnOp::Not, I64(a)) => I64(!a),
            (UnOp::Not, U32(a)) => U32(!a),
            (UnOp::Not, U8(a)) => U8(!a),
            (UnOp::Not, IntLit(a)) => IntLit(!a),
            _ => return Err(ValueError::BadOperands),
        })
    }

    /// `a op b` for operands of one type (or two literals).
    pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, ValueError> {
        use Value::*;
        macro_rules! int_ops {
            ($a:expr, $b:expr, $ctor:path, $t:ty) => {{
                let (x, y) = ($a, $b);
                match op {
                    BinOp::Add => $ctor(x.wrapping_add(y)),
                    BinOp::Sub => $ctor(x.wrapping_sub(y)),
                    BinOp::Mul => $ctor(x.wrapping_mul(y)),
                    BinOp::Div if y == 0 => return Err(ValueError::DivByZero),
                    BinOp::Rem if y == 0 => return Err(ValueError::DivByZero),
                    BinOp::Div => $ctor(x.wrapping_div(y)),
                    BinOp::Rem => $ctor(x.wrapping_rem(y)),
                    BinOp::BitAnd => $ctor(x & y),
                    BinOp::BitOr => $ctor(x | y),
                    BinOp::BitXor => $ctor(x ^ y),
                    // Shift counts wrap at the bit width, as on the device (OpShiftLeftLogical
                    // with a masked count) and as Rust's wrapping_shl.
                    BinOp::Shl => $ctor(x.wrapping_shl(y as u32)),
                    BinOp::Shr => $ctor(x.wrapping_shr(y as u32)),
                    BinOp::Eq => Bool(x == y),
                    BinOp::Ne => Bool(x != y),
                    BinOp::Lt => Bool(x < y),
                    BinOp::Le => Bool(x <= y),
                    BinOp::Gt => Bool(x > y),
                    BinOp::Ge => Bool(x >= y),
                    BinOp::And | BinOp::Or => return Err(ValueError::BadOperands),
                }
            }};
        }
        macro_rules! float_ops {
            ($a:expr, $b:expr, $ctor:path) => {{
                let (x, y) = ($a, $b);
                match op {
                    BinOp::Add => $ctor(x + y),
                    BinOp::Sub => $ctor(x - y),
                    BinOp::Mul => $ctor(x * y),
                    BinOp::Div => $ctor(x / y),
                    BinOp::Rem => $ctor(x % y),
                    BinOp::Eq => Bool(x == y),
                    BinOp::Ne => Bool(x != y),
                    BinOp::Lt => Bool(x < y),
                    BinOp::Le => Bool(x <= y),
                    BinOp::Gt => Bool(x > y),
                    BinOp::Ge => Bool(x >= y),
                    _ => return Err(ValueError::BadOperands),
                }
            }};
        }
        Ok(match (a, b) {
            (I32(x), I32(y)) => int_ops!(x, y, I32, i32),
            (I64(x), I64(y)) => int_ops!(x, y, I64, i64),
            (U32(x), U32(y)) => int_ops!(x, y, U32, u32),
            (U8(x), U8(y)) => int_ops!(x, y, U8, u8),
            (IntLit(x), IntLit(y)) => match op {
                // Literal arithmetic is exact (i128) and checked against the
                // destination type when the literal is given one.
                BinOp::Shl => IntLit(x.checked_shl(y.clamp(0, 127) as u32).unwrap_or(0)),
                BinOp::Shr => IntLit(x >> y.clamp(0, 127)),
                BinOp::Add => IntLit(x.saturating_add(y)),
                BinOp::Sub => IntLit(x.saturating_sub(y)),
                BinOp::Mul => IntLit(x.saturating_mul(y)),
                _ => int_ops!(x, y, IntLit, i128),
            },
            (F32(x), F32(y)) => float_ops!(x, y, F32),
            (F64(x), F64(y)) => float_ops!(x, y, F64),
            (FloatLit(x), FloatLit(y)) => float_ops!(x, y, FloatLit),
            (IntLit(x), FloatLit(_)) => return Value::binary(op, FloatLit(x as f64), b),
            (FloatLit(_), IntLit(y)) => return Value::binary(op, a, FloatLit(y as f64)),
            (Bool(x), Bool(y)) => match op {
                BinOp::And => Bool(x && y),
                BinOp::Or => Bool(x || y),
                BinOp::BitAnd => Bool(x & y),
                BinOp::BitOr => Bool(x | y),
                BinOp::BitXor => Bool(x ^ y),
                BinOp::Eq => Bool(x == y),
                BinOp::Ne => Bool(x != y),
                _ => return Err(ValueError::BadOperands),
            },
            _ => return Err(ValueError::BadOperands),
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Bool(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::U8(v) => write!(f, "{v}"),
            Value::IntLit(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:?}"),
            Value::F64(v) | Value::FloatLit(v) => write!(f, "{v:?}"),
        }
    }
}

/// The identity of reduction operator `op` for type `t`: where every
/// reduction starts, on the host and on the device.
pub fn identity(op: ReductionOp, t: Scalar) -> Value {
    use ReductionOp as O;
    let v = match (op, t) {
        (O::Add | O::BitOr | O::BitXor, _) => Value::IntLit(0),
        (O::Mul, _) => Value::IntLit(1),
        (O::And, _) => Value::Bool(true),
        (O::Or, _) => Value::Bool(false),
        (O::BitAnd, Scalar::Bool) => Value::Bool(true),
        (O::BitAnd, _) => Value::IntLit(-1),
        (O::Max, Scalar::F32 | Scalar::F64) => Value::F64(f64::NEG_INFINITY),
        (O::Min, Scalar::F32 | Scalar::F64) => Value::F64(f64::INFINITY),
        (O::Max, Scalar::Bool) => Value::Bool(false),
        (O::Min, Scalar::Bool) => Value::Bool(true),
        (O::Max, _) => Value::IntLit(t.int_range().map_or(0, |r| r.0)),
        (O::Min, _) => Value::IntLit(t.int_range().map_or(0, |r| r.1)),
    };
    v.cast(t)
}

/// `a op b` for a reduction operator: the host's combination, and the
/// semantics the device's (float `max`/`min` take `b` when `a` is NaN, and
/// a NaN `b` loses).
pub fn combine(op: ReductionOp, a: Value, b: Value) -> Value {
    use crate::ast::BinOp as B;
    use ReductionOp as O;
    let bin = |o| Value::binary(o, a, b).unwrap_or(a);
    match op {
        O::Add => bin(B::Add),
        O::Mul => bin(B::Mul),
        O::BitAnd => bin(B::BitAnd),
        O::BitOr => bin(B::BitOr),
        O::BitXor => bin(B::BitXor),
        O::And => Value::Bool(a.as_bool().unwrap_or(false) && b.as_bool().unwrap_or(false)),
        O::Or => Value::Bool(a.as_bool().unwrap_or(false) || b.as_bool().unwrap_or(false)),
        O::Max | O::Min => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            let take_b = if a.as_bool().is_some() {
                if op == O::Max {
                    b == Value::Bool(true)
                } else {
                    b == Value::Bool(false)
                }
            } else if x.is_nan() {
                true
            } else if y.is_nan() {
                false
            } else if let (Some(p), Some(q)) = (a.as_i128(), b.as_i128()) {
                if op == O::Max {
                    q > p
                } else {
                    q < p
                }
            } else if op == O::Max {
                y > x
            } else {
                y < x
            };
            if take_b {
                b
            } else {
                a
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(
            Value::binary(BinOp::Add, Value::I32(i32::MAX), Value::I32(1)),
            Ok(Value::I32(i32::MIN))
        );
        assert_eq!(
            Value::binary(BinOp::Mul, Value::U8(16), Value::U8(17)),
            Ok(Value::U8(16))
        );
        assert_eq!(
            Value::binary(BinOp::Div, Value::I32(1), Value::I32(0)),
            Err(ValueError::DivByZero)
        );
        assert_eq!(
            Value::binary(BinOp::Div, Value::I32(i32::MIN), Value::I32(-1)),
            Ok(Value::I32(i32::MIN))
        );
    }

    #[test]
    fn literals_concretize_only_when_they_fit() {
        assert_eq!(
            Value::IntLit(255).concretize(Scalar::U8),
            Some(Value::U8(255))
        );
        assert_eq!(Value::IntLit(256).concretize(Scalar::U8), None);
        assert_eq!(Value::IntLit(-1).concretize(Scalar::U32), None);
        assert_eq!(
            Value::IntLit(2).concretize(Scalar::F32),
            Some(Value::F32(2.0))
        );
        assert_eq!(Value::FloatLit(2.5).concretize(Scalar::I32), None);
    }

    #[test]
    fn casts_follow_rust() {
        assert_eq!(Value::F64(-1.5).cast(Scalar::U8), Value::U8(0));
        assert_eq!(Value::F64(300.0).cast(Scalar::U8), Value::U8(255));
        assert_eq!(Value::I32(-1).cast(Scalar::U32), Value::U32(u32::MAX));
        assert_eq!(Value::Bool(true).cast(Scalar::F32), Value::F32(1.0));
    }
}
