//! The types of accl values.

use std::fmt;

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    I32,
    I64,
    U32,
    U8,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: [Scalar; 7] = [
        Scalar::Bool,
        Scalar::I32,
        Scalar::I64,
        Scalar::U32,
        Scalar::U8,
        Scalar::F32,
        Scalar::F64,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U32 => "u32",
            Scalar::U8 => "u8",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }
    pub fn from_name(s: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|t| t.name() == s)
    }
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U8)
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }
    /// Size in bytes of one element in an array.
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool | Scalar::U8 => 1,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 => 8,
        }
    }
    /// The inclusive range of an integer type, as i128.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
            Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
            Scalar::U32 => (0, u32::MAX as i128),
            Scalar::U8 => (0, u8::MAX as i128),
            _ => return None,
        })
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a value or expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Type {
    Scalar(Scalar),
    /// A row-major array of `rank` dimensions (1..=3).
    Array(Scalar, u8),
    /// The value of a statement, or of a function without a result.
    #[default]
    Unit,
    /// A string literal (only as a builtin argument).
    Str,
    /// A type used as a value: the `f32` of `zeros(f32, n)`.
    TypeArg(Scalar),
    /// An integer literal (or untyped constant) not yet given a type.
    IntLit,
    /// A float literal (or untyped constant) not yet given a type.
    FloatLit,
    /// The result of a function returning several scalars, `(f64, i32)`:
    /// only returned and destructured, never stored whole.
    Tuple(Tuple),
    /// The type of an expression that already failed to check; it unifies
    /// with anything so that one mistake gives one diagnostic.
    Error,
}

/// The element types of a tuple, 2 to [`Tuple::MAX`] scalars, held inline
/// so that [`Type`] stays `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tuple {
    len: u8,
    elems: [Scalar; Tuple::MAX],
}

impl Tuple {
    /// The most elements a tuple may have.
    pub const MAX: usize = 16;

    /// A tuple of these element types (None: fewer than 2 or more than
    /// [`Tuple::MAX`]).
    pub fn new(elems: &[Scalar]) -> Option<Tuple> {
        if !(2..=Tuple::MAX).contains(&elems.len()) {
            return None;
        }
        let mut t = Tuple {
            len: elems.len() as u8,
            elems: [Scalar::Bool; Tuple::MAX],
        };
        t.elems[..elems.len()].copy_from_slice(elems);
        Some(t)
    }
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(self) -> usize {
        self.len as usize
    }
    pub fn elems(&self) -> &[Scalar] {
        &self.elems[..self.len as usize]
    }
}

impl fmt::Display for Tuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.elems().iter().map(|s| s.name()).collect();
        write!(f, "({})", names.join(", "))
    }
}

impl Type {
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);
    pub const I32: Type = Type::Scalar(Scalar::I32);
    pub const I64: Type = Type::Scalar(Scalar::I64);
    pub const U32: Type = Type::Scalar(Scalar::U32);
    pub const U8: Type = Type::Scalar(Scalar::U8);
    pub const F32: Type = Type::Scalar(Scalar::F32);
    pub const F64: Type = Type::Scalar(Scalar::F64);

    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_array(self) -> bool {
        matches!(self, Type::Array(..))
    }
    pub fn tuple(self) -> Option<Tuple> {
        match self {
            Type::Tuple(t) => Some(t),
            _ => None,
        }
    }
    pub fn is_literal(self) -> bool {
        matches!(self, Type::IntLit | Type::FloatLit)
    }
    pub fn is_int_like(self) -> bool {
        matches!(self, Type::IntLit) || self.scalar().is_some_and(Scalar::is_int)
    }
    pub fn is_float_like(self) -> bool {
        matches!(self, Type::FloatLit) || self.scalar().is_some_and(Scalar::is_float)
    }
    pub fn is_numeric_like(self) -> bool {
        self.is_int_like() || self.is_float_like()
    }
    /// The type a literal takes when nothing constrains it (as in Rust and C).
    pub fn defaulted(self) -> Type {
        match self {
            Type::IntLit => Type::I32,
            Type::FloatLit => Type::F64,
            t => t,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Array(s, r) => write!(f, "{s}[{}]", ",".repeat(r.saturating_sub(1) as usize)),
            Type::Unit => f.write_str("()"),
            Type::Str => f.write_str("str"),
            Type::TypeArg(s) => write!(f, "type {s}"),
            Type::IntLit => f.write_str("{integer}"),
            Type::FloatLit => f.write_str("{float}"),
            Type::Tuple(t) => write!(f, "{t}"),
            Type::Error => f.write_str("{error}"),
        }
    }
}
