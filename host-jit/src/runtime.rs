//! What compiled code shares with the interpreter at run time: the block
//! it reads and updates ([`Rt`]), how a run ended, the arrays of a loop
//! ([`ArrDesc`]), and the math routines it calls (the same Rust functions
//! the interpreter calls, so results are bit for bit the same).

use std::ffi::c_void;

/// How a compiled run ended (the return value of an entry point).
pub const NEXT: u32 = 0;
/// A trap: [`Rt::trap`] says which.
pub const TRAP: u32 = 1;
/// A `return` inside a compiled loop: [`Rt::ret`] holds the value's slot
/// bits ([`Rt::rets`] a tuple's).
pub const RETURN: u32 = 2;

/// Trap kinds ([`Trap::kind`]).
pub const TRAP_BOUNDS: u32 = 1;
pub const TRAP_DIV_ZERO: u32 = 2;
pub const TRAP_DEPTH: u32 = 3;
/// The limit check ([`Rt::check`]) stopped the run; the hook holds why.
pub const TRAP_LIMIT: u32 = 4;

/// What stopped a run, with the site (an index into the unit's sites)
/// and, for an index, which axis, the index and the extent.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Trap {
    pub kind: u32,
    pub site: u32,
    pub axis: u64,
    pub index: i64,
    pub extent: u64,
}

/// The limit check the interpreter provides: called with the site of the
/// operation that reached [`Rt::next_check`]; nonzero stops the run.
pub type CheckFn = unsafe extern "C" fn(rt: *mut Rt, site: u32) -> u32;

/// The state a compiled run shares with the interpreter. Compiled code
/// reads the fields at fixed offsets, so the layout is C's.
#[repr(C)]
pub struct Rt {
    /// Operations counted so far (loop iterations and calls), as
    /// [`Ctx::tick`] counts them in the interpreter.
    pub ops: u64,
    /// The count at which the limit check runs next.
    pub next_check: u64,
    /// Call depth, and the most allowed.
    pub depth: u64,
    pub max_depth: u64,
    /// The slot bits of a returned value.
    pub ret: u64,
    pub trap: Trap,
    pub check: CheckFn,
    /// The interpreter's own state for `check`.
    pub hook: *mut c_void,
    /// The slot bits of a returned tuple's elements.
    pub rets: [u64; lang::Tuple::MAX],
    /// The top-level frame's scalar slots, which compiled code reads and
    /// writes a top-level variable in (the interpreter's own storage, so
    /// its view stays the same); null when the unit uses none.
    pub globals: *mut u64,
}

pub const OFF_OPS: i32 = 0;
pub const OFF_NEXT_CHECK: i32 = 8;
pub const OFF_DEPTH: i32 = 16;
pub const OFF_MAX_DEPTH: i32 = 24;
pub const OFF_RET: i32 = 32;
pub const OFF_TRAP_KIND: i32 = 40;
pub const OFF_TRAP_SITE: i32 = 44;
pub const OFF_TRAP_AXIS: i32 = 48;
pub const OFF_TRAP_INDEX: i32 = 56;
pub const OFF_TRAP_EXTENT: i32 = 64;
pub const OFF_CHECK: i32 = 72;
pub const OFF_RETS: i32 = 88;
pub const OFF_GLOBALS: i32 = OFF_RETS + 8 * lang::Tuple::MAX as i32;

/// One array of a compiled loop: its elements and its extents (unused
/// axes 1).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ArrDesc {
    pub ptr: *mut u8,
    pub dims: [u64; 3],
}

pub const DESC_SIZE: i32 = 32;

/// A compiled function's entry: arguments as slot bits; the result goes to
/// [`Rt::ret`] (a tuple's elements to [`Rt::rets`]). Returns [`NEXT`] or
/// [`TRAP`].
pub type FnEntry = unsafe extern "C" fn(args: *const u64, rt: *mut Rt) -> u32;

/// A compiled loop's entry: the frame's scalar slots (read at the start,
/// written back at every exit) and the descriptors of its arrays.
pub type LoopEntry =
    unsafe extern "C" fn(slots: *mut u64, arrays: *const ArrDesc, rt: *mut Rt) -> u32;

macro_rules! math_fns {
    ($($name:literal: $f32:ident $f64:ident = $body:expr;)*) => {
        $(
            extern "C" fn $f32(x: f32) -> f32 {
                let f: fn(f32) -> f32 = $body;
                f(x)
            }
            extern "C" fn $f64(x: f64) -> f64 {
                let f: fn(f64) -> f64 = $body;
                f(x)
            }
        )*
        /// One-argument routines: (name, f32 symbol, f32 fn, f64 symbol, f64 fn).
        pub fn unary() -> Vec<(&'static str, &'static str, *const u8, &'static str, *const u8)> {
            vec![$(($name, stringify!($f32), $f32 as *const u8, stringify!($f64), $f64 as *const u8)),*]
        }
    };
}

// The interpreter evaluates these through `stdlib::math::Float::f1`,
// which maps each name to the same std method.
math_fns! {
    "exp": accl_exp_f32 accl_exp_f64 = |x| x.exp();
    "exp2": accl_exp2_f32 accl_exp2_f64 = |x| x.exp2();
    "log": accl_log_f32 accl_log_f64 = |x| x.ln();
    "log2": accl_log2_f32 accl_log2_f64 = |x| x.log2();
    "sin": accl_sin_f32 accl_sin_f64 = |x| x.sin();
    "cos": accl_cos_f32 accl_cos_f64 = |x| x.cos();
    "tan": accl_tan_f32 accl_tan_f64 = |x| x.tan();
    "asin": accl_asin_f32 accl_asin_f64 = |x| x.asin();
    "acos": accl_acos_f32 accl_acos_f64 = |x| x.acos();
    "atan": accl_atan_f32 accl_atan_f64 = |x| x.atan();
    "sinh": accl_sinh_f32 accl_sinh_f64 = |x| x.sinh();
    "cosh": accl_cosh_f32 accl_cosh_f64 = |x| x.cosh();
    "tanh": accl_tanh_f32 accl_tanh_f64 = |x| x.tanh();
    "round": accl_round_f32 accl_round_f64 = |x| x.round();
}

macro_rules! math_fns2 {
    ($($name:literal: $f32:ident $f64:ident = $body:expr;)*) => {
        $(
            extern "C" fn $f32(x: f32, y: f32) -> f32 {
                let f: fn(f32, f32) -> f32 = $body;
                f(x, y)
            }
            extern "C" fn $f64(x: f64, y: f64) -> f64 {
                let f: fn(f64, f64) -> f64 = $body;
                f(x, y)
            }
        )*
        /// Two-argument routines, as [`unary`].
        pub fn binary() -> Vec<(&'static str, &'static str, *const u8, &'static str, *const u8)> {
            vec![$(($name, stringify!($f32), $f32 as *const u8, stringify!($f64), $f64 as *const u8)),*]
        }
    };
}

// `min`/`max` are std's (`stdlib::math::Math`), whose NaN and signed-zero
// behaviour is not Cranelift's `fmin`/`fmax`; `%` is `fmod`.
math_fns2! {
    // The interpreter's `pow` (stdlib's `math::pow_f64`): a square is
    // `x * x`, as C compilers emit `pow(x, 2.0)`.
    "pow": accl_pow_f32 accl_pow_f64 = |x, y| if y == 2.0 { x * x } else { x.powf(y) };
    "atan2": accl_atan2_f32 accl_atan2_f64 = |x, y| x.atan2(y);
    "min": accl_min_f32 accl_min_f64 = |x, y| x.min(y);
    "max": accl_max_f32 accl_max_f64 = |x, y| x.max(y);
    "%": accl_rem_f32 accl_rem_f64 = |x, y| x % y;
}

extern "C" fn accl_fma_f32(x: f32, y: f32, z: f32) -> f32 {
    x.mul_add(y, z)
}
extern "C" fn accl_fma_f64(x: f64, y: f64, z: f64) -> f64 {
    x.mul_add(y, z)
}

/// Three-argument routines, as [`unary`].
pub fn ternary() -> Vec<(
    &'static str,
    &'static str,
    *const u8,
    &'static str,
    *const u8,
)> {
    vec![(
        "fma",
        "accl_fma_f32",
        accl_fma_f32 as *const u8,
        "accl_fma_f64",
        accl_fma_f64 as *const u8,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn offsets_match_the_layout() {
        assert_eq!(offset_of!(Rt, ops), OFF_OPS as usize);
        assert_eq!(offset_of!(Rt, next_check), OFF_NEXT_CHECK as usize);
        assert_eq!(offset_of!(Rt, depth), OFF_DEPTH as usize);
        assert_eq!(offset_of!(Rt, max_depth), OFF_MAX_DEPTH as usize);
        assert_eq!(offset_of!(Rt, ret), OFF_RET as usize);
        assert_eq!(
            offset_of!(Rt, trap) + offset_of!(Trap, kind),
            OFF_TRAP_KIND as usize
        );
        assert_eq!(
            offset_of!(Rt, trap) + offset_of!(Trap, site),
            OFF_TRAP_SITE as usize
        );
        assert_eq!(
            offset_of!(Rt, trap) + offset_of!(Trap, axis),
            OFF_TRAP_AXIS as usize
        );
        assert_eq!(
            offset_of!(Rt, trap) + offset_of!(Trap, index),
            OFF_TRAP_INDEX as usize
        );
        assert_eq!(
            offset_of!(Rt, trap) + offset_of!(Trap, extent),
            OFF_TRAP_EXTENT as usize
        );
        assert_eq!(offset_of!(Rt, check), OFF_CHECK as usize);
        assert_eq!(offset_of!(Rt, rets), OFF_RETS as usize);
        assert_eq!(offset_of!(Rt, globals), OFF_GLOBALS as usize);
        assert_eq!(std::mem::size_of::<ArrDesc>(), DESC_SIZE as usize);
    }
}
