//! Rust functions callable from scripts. A closure of 0 to 4 arguments
//! (scalars `bool i32 i64 u32 u8 f32 f64`, strings as `&str` or `String`,
//! arrays as [`Array`] handles or as `&[T]`/`&mut [T]` element slices, the
//! device copy of an array inside `host_data` as [`crate::DeviceBuffer`])
//! returning a scalar, `String`, `Vec<T>` (a new 1-D array), `()` or a
//! `Result` of one (its `Err` is a
//! run-time diagnostic at the call) is declared to the checker with that
//! signature and effect `Host` (so it cannot be called inside a device
//! construct): a script's call is type-checked like any other.
//! [`Engine::register_val_fn`] takes any values with an explicit signature.
//!
//! Borrowed arguments (`&str`, slices) live for the call: the closure is
//! `for<'a> Fn(&'a str)`, which the two bounds of each `RegisterFn` impl
//! express (the first fixes the argument types from the closure's own
//! signature, the second asks for every lifetime). Slices hold the array's
//! `RefCell` borrow for the call; one array passed where the borrows would
//! conflict is refused before the closure runs.

use super::Engine;
use crate::interp::HostValFn;
use lang::{Builtin, Effect, Param, Type, Typing};
use std::rc::Rc;
use stdlib::{Array, Elem};

use super::Val;

/// An argument type of a function given to [`Engine::register_fn`].
pub trait HostArg {
    /// What is held for the call: the script's value, or a borrow of an
    /// array's elements.
    #[doc(hidden)]
    type Guard<'v>;
    /// What the closure is given: the type itself, with the lifetime of the
    /// call for a borrowed one (`&str`, `&[T]`, `&mut [T]`).
    #[doc(hidden)]
    type Item<'a>;
    /// How the checker types the argument.
    #[doc(hidden)]
    fn param() -> Param;
    /// Hold the argument (None: not of this type, or an array borrowed
    /// already: the same array passed twice, once as `&mut [T]`).
    #[doc(hidden)]
    fn lock(v: &Val) -> Option<Self::Guard<'_>>;
    #[doc(hidden)]
    fn item<'g>(g: &'g mut Self::Guard<'_>) -> Self::Item<'g>;
    /// What the closure holds of an array argument during the call.
    #[doc(hidden)]
    const HOLD: Hold = Hold::Nothing;
    /// Why argument `i` (from 0) was refused.
    #[doc(hidden)]
    fn refused(i: usize) -> String {
        format!("argument {} is not `{}`", i + 1, Self::param())
    }
}

/// What a closure holds of an array argument during its call.
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Nothing,
    /// The handle: it may borrow the elements in any way.
    Handle,
    Shared,
    Exclusive,
}

macro_rules! host_scalar {
    ($($t:ty),*) => {$(
        impl HostArg for $t {
            type Guard<'v> = $t;
            type Item<'a> = $t;
            fn param() -> Param {
                Param::Is(Type::Scalar(<$t as Elem>::SCALAR))
            }
            fn lock(v: &Val) -> Option<$t> {
                match v {
                    Val::Scalar(x) if x.ty() == Type::Scalar(<$t as Elem>::SCALAR) => {
                        Some(<$t as Elem>::from_value(*x))
                    }
                    _ => None,
                }
            }
            fn item(g: &mut $t) -> $t {
                *g
            }
        }
        impl HostRet for $t {
            fn ty() -> Type {
                Type::Scalar(<$t as Elem>::SCALAR)
            }
            fn into_val(self) -> Result<Val, String> {
                Ok(Val::Scalar(self.to_value()))
            }
        }
    )*};
}
host_scalar!(bool, i32, i64, u32, u8, f32, f64);

impl HostArg for &str {
    type Guard<'v> = &'v str;
    type Item<'a> = &'a str;
    fn param() -> Param {
        Param::Is(Type::Str)
    }
    fn lock(v: &Val) -> Option<&str> {
        match v {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
    fn item<'g>(g: &'g mut &str) -> &'g str {
        g
    }
}

impl HostArg for String {
    type Guard<'v> = &'v str;
    type Item<'a> = String;
    fn param() -> Param {
        Param::Is(Type::Str)
    }
    fn lock(v: &Val) -> Option<&str> {
        <&str as HostArg>::lock(v)
    }
    fn item(g: &mut &str) -> String {
        g.to_string()
    }
}

/// Any array (its element type and rank are the closure's to check); the
/// script's own array, so writes to it are seen by the script.
impl HostArg for Array {
    type Guard<'v> = Array;
    type Item<'a> = Array;
    const HOLD: Hold = Hold::Handle;
    fn param() -> Param {
        Param::AnyArray
    }
    fn lock(v: &Val) -> Option<Array> {
        match v {
            Val::Array(a) => Some(a.clone()),
            _ => None,
        }
    }
    fn item(g: &mut Array) -> Array {
        g.clone()
    }
}

/// The device copy of an array that a surrounding `host_data
/// use_device(..)` construct hands over: its Vulkan buffer (see
/// [`crate::DeviceBuffer`]); the device is idle while the construct runs.
impl HostArg for crate::DeviceBuffer {
    type Guard<'v> = crate::DeviceBuffer;
    type Item<'a> = crate::DeviceBuffer;
    fn param() -> Param {
        Param::AnyArray
    }
    fn lock(v: &Val) -> Option<crate::DeviceBuffer> {
        match v {
            Val::Array(a) => crate::interop::use_device_of(a.id()),
            _ => None,
        }
    }
    fn item(g: &mut crate::DeviceBuffer) -> crate::DeviceBuffer {
        *g
    }
    fn refused(i: usize) -> String {
        format!(
            "argument {} is not an array whose device copy a surrounding `host_data use_device(..)` hands over",
            i + 1
        )
    }
}

/// The elements of an array of `T`, of any rank, in row-major order,
/// borrowed for the call.
impl<T: Elem> HostArg for &[T] {
    type Guard<'v> = std::cell::Ref<'v, stdlib::array::Data>;
    type Item<'a> = &'a [T];
    const HOLD: Hold = Hold::Shared;
    fn param() -> Param {
        Param::ArrayOf(T::SCALAR)
    }
    fn lock(v: &Val) -> Option<Self::Guard<'_>> {
        match v {
            Val::Array(a) => a.try_data().filter(|d| d.scalar() == T::SCALAR),
            _ => None,
        }
    }
    fn item<'g>(g: &'g mut Self::Guard<'_>) -> &'g [T] {
        T::slice(g).unwrap_or_default()
    }
}

/// Like `&[T]`, writable: the script sees the writes.
impl<T: Elem> HostArg for &mut [T] {
    type Guard<'v> = std::cell::RefMut<'v, stdlib::array::Data>;
    type Item<'a> = &'a mut [T];
    const HOLD: Hold = Hold::Exclusive;
    fn param() -> Param {
        Param::ArrayOf(T::SCALAR)
    }
    fn lock(v: &Val) -> Option<Self::Guard<'_>> {
        match v {
            Val::Array(a) => a.try_data_mut().filter(|d| d.scalar() == T::SCALAR),
            _ => None,
        }
    }
    fn item<'g>(g: &'g mut Self::Guard<'_>) -> &'g mut [T] {
        T::slice_mut(g).unwrap_or_default()
    }
}

/// The result type of a function given to [`Engine::register_fn`].
pub trait HostRet: 'static {
    fn ty() -> Type;
    /// The script's value, or the message of a run-time error.
    fn into_val(self) -> Result<Val, String>;
}

impl HostRet for () {
    fn ty() -> Type {
        Type::Unit
    }
    fn into_val(self) -> Result<Val, String> {
        Ok(Val::Unit)
    }
}

impl HostRet for String {
    fn ty() -> Type {
        Type::Str
    }
    fn into_val(self) -> Result<Val, String> {
        Ok(Val::Str(self.into()))
    }
}

/// A new 1-D array of `T` (the script owns it).
impl<T: Elem + 'static> HostRet for Vec<T> {
    fn ty() -> Type {
        Type::Array(T::SCALAR, 1)
    }
    fn into_val(self) -> Result<Val, String> {
        let n = self.len();
        Array::from_vec(self, vec![n])
            .map(Val::Array)
            .map_err(|e| format!("{e:?}"))
    }
}

/// `Err(e)` stops the script with `accl::run::host_function` at the call,
/// with `e` as the message.
impl<T: HostRet, E: std::fmt::Display + 'static> HostRet for Result<T, E> {
    fn ty() -> Type {
        T::ty()
    }
    fn into_val(self) -> Result<Val, String> {
        self.map_err(|e| e.to_string())?.into_val()
    }
}

/// A Rust closure that can be registered (`Args` is its argument tuple).
pub trait RegisterFn<Args> {
    #[doc(hidden)]
    fn into_host(self) -> (Vec<Param>, Type, HostValFn);
}

fn lock<A: HostArg>(v: &[Val], i: usize) -> Result<A::Guard<'_>, String> {
    v.get(i).and_then(A::lock).ok_or_else(|| A::refused(i))
}

/// Refuse one array passed twice where the closure would borrow its
/// elements in conflicting ways (`&mut [T]` with anything, `&[T]` with an
/// `Array` handle, which may borrow it mutably).
fn no_conflict(v: &[Val], holds: &[Hold]) -> Result<(), String> {
    for (i, (a, &h)) in v.iter().zip(holds).enumerate() {
        for (j, (b, &k)) in v.iter().zip(holds).enumerate().skip(i + 1) {
            let (Val::Array(a), Val::Array(b)) = (a, b) else {
                continue;
            };
            let conflict = matches!(
                (h, k),
                (
                    Hold::Exclusive,
                    Hold::Handle | Hold::Shared | Hold::Exclusive
                ) | (Hold::Handle | Hold::Shared, Hold::Exclusive)
                    | (Hold::Handle, Hold::Shared)
                    | (Hold::Shared, Hold::Handle)
            );
            if conflict && a.same(b) {
                return Err(format!(
                    "arguments {} and {} are the same array, which the function cannot borrow through both",
                    i + 1,
                    j + 1
                ));
            }
        }
    }
    Ok(())
}

macro_rules! register_arity {
    ($call:ident; $($a:ident $g:ident $i:tt),*) => {
        /// Calls `f` through its higher-ranked `Fn` bound.
        #[allow(non_snake_case, clippy::too_many_arguments)]
        fn $call<R, $($a),*>(f: &impl Fn($($a),*) -> R, $($a: $a),*) -> R {
            f($($a),*)
        }
        impl<F, R: HostRet, $($a: HostArg),*> RegisterFn<($($a,)*)> for F
        where
            F: Fn($($a),*) -> R + for<'a> Fn($($a::Item<'a>),*) -> R + 'static,
        {
            #[allow(unused_variables, unused_mut)]
            fn into_host(self) -> (Vec<Param>, Type, HostValFn) {
                let holds = [$($a::HOLD),*];
                let f: HostValFn = Rc::new(move |v: &[Val]| {
                    if holds.iter().filter(|&&h| h != Hold::Nothing).count() > 1 {
                        no_conflict(v, &holds)?;
                    }
                    $(let mut $g = lock::<$a>(v, $i)?;)*
                    $call::<R, $($a::Item<'_>),*>(&self, $($a::item(&mut $g)),*).into_val()
                });
                (vec![$($a::param()),*], R::ty(), f)
            }
        }
    };
}
register_arity!(call0;);
register_arity!(call1; A ga 0);
register_arity!(call2; A ga 0, B gb 1);
register_arity!(call3; A ga 0, B gb 1, C gc 2);
register_arity!(call4; A ga 0, B gb 1, C gc 2, D gd 3);

impl Engine {
    /// Make a Rust closure callable from scripts as `name(..)` (one
    /// registered under the name of a builtin replaces it). Arguments:
    /// scalars, `&str` or `String` (a script `str`), [`Array`] (any array,
    /// the script's own), `&[T]` or `&mut [T]` (the elements of a `T` array
    /// of any rank, row-major; writes are seen by the script),
    /// [`crate::DeviceBuffer`] (inside `host_data`); results: a scalar,
    /// `String`, `Vec<T>` (a new 1-D array), `()`, or a `Result` of one
    /// whose `Err` stops the
    /// script with `accl::run::host_function`. Calls are type-checked
    /// against this signature.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.register_fn("hypot", |x: f64, y: f64| (x * x + y * y).sqrt());
    /// e.register_fn("tag", |s: &str, n: i32| format!("{s}_{n:04}"));
    /// e.register_fn("rows", |a: accl::Array| a.shape()[0] as i32);
    /// e.register_fn("scale", |x: &mut [f32], k: f32| x.iter_mut().for_each(|v| *v *= k));
    /// e.register_fn("squares", |n: i32| (0..n).map(|i| i * i).collect::<Vec<i32>>());
    /// let v = e.eval("hypot(3.0, 4.0)").unwrap().unwrap();
    /// assert_eq!(v.to_string(), "5");
    /// e.eval("let t = tag(\"heat\", rows(zeros(f32, 7, 2)));").unwrap();
    /// assert_eq!(e.get_str("t").as_deref(), Some("heat_0007"));
    /// assert_eq!(e.eval("tag(1, 2)").unwrap_err().code(), "accl::type::mismatch");
    /// e.eval("let x = ones(f32, 3); scale(x, 2.5);").unwrap();
    /// assert_eq!(e.get_array::<f32>("x").unwrap().0, [2.5; 3]);
    /// e.eval("let q = squares(4);").unwrap();
    /// assert_eq!(e.get_array::<i32>("q").unwrap().0, [0, 1, 4, 9]);
    /// ```
    pub fn register_fn<Args>(&mut self, name: &str, f: impl RegisterFn<Args>) -> &mut Self {
        let (params, ret, f) = f.into_host();
        self.declare_host_fn(name, params, ret);
        self.cx.host_fns.remove(name);
        self.cx.host_val_fns.insert(name.to_string(), f);
        self
    }

    /// Register a function on dynamic values with an explicit signature; an
    /// `Err` becomes a run-time diagnostic at the call.
    ///
    /// ```
    /// use accl::lang::{Type, Value};
    /// let mut e = accl::Engine::new();
    /// e.register_raw("checked_div", vec![Type::I32, Type::I32], Type::I32, std::rc::Rc::new(|v: &[Value]| {
    ///     match (v[0], v[1]) {
    ///         (Value::I32(a), Value::I32(b)) if b != 0 => Ok(Value::I32(a / b)),
    ///         _ => Err("division by zero".to_string()),
    ///     }
    /// }));
    /// assert_eq!(e.eval("checked_div(7, 2)").unwrap().unwrap().to_string(), "3");
    /// assert_eq!(e.eval("checked_div(7, 0)").unwrap_err().code(), "accl::run::host_function");
    /// ```
    pub fn register_raw(
        &mut self,
        name: &str,
        params: Vec<Type>,
        ret: Type,
        f: crate::interp::HostFn,
    ) -> &mut Self {
        self.declare_host_fn(name, params.into_iter().map(Param::Is).collect(), ret);
        self.cx.host_val_fns.remove(name);
        self.cx.host_fns.insert(name.to_string(), f);
        self
    }

    /// Register a function on any values, arrays included (`Val::Array`
    /// shares the script's array: writes to it are seen by the script),
    /// with an explicit signature such as `Type::Array(Scalar::F32, 1)`;
    /// it returns a `Val` of the `ret` type (`Val::Unit` for `Type::Unit`).
    ///
    /// ```
    /// use accl::lang::{Scalar, Type, Value};
    /// use accl::Val;
    /// let mut e = accl::Engine::new();
    /// // scale(x, k): x[i] *= k in Rust, on the script's own array.
    /// e.register_val_fn("scale", vec![Type::Array(Scalar::F32, 1), Type::F32], Type::Unit,
    ///     std::rc::Rc::new(|v: &[Val]| {
    ///         let (Val::Array(x), Val::Scalar(Value::F32(k))) = (&v[0], &v[1]) else {
    ///             return Err("bad arguments".into());
    ///         };
    ///         let mut d = x.data_mut();
    ///         for i in 0..x.len() {
    ///             let Some(Value::F32(a)) = d.get(i) else { continue };
    ///             d.set(i, Value::F32(a * k));
    ///         }
    ///         Ok(Val::Unit)
    ///     }));
    /// e.eval("let x = arange(f32, 4); scale(x, 2.0f32);").unwrap();
    /// assert_eq!(e.get_array::<f32>("x").unwrap().0, vec![0.0, 2.0, 4.0, 6.0]);
    /// ```
    pub fn register_val_fn(
        &mut self,
        name: &str,
        params: Vec<Type>,
        ret: Type,
        f: HostValFn,
    ) -> &mut Self {
        self.declare_host_fn(name, params.into_iter().map(Param::Is).collect(), ret);
        self.cx.host_fns.remove(name);
        self.cx.host_val_fns.insert(name.to_string(), f);
        self
    }

    fn declare_host_fn(&mut self, name: &str, params: Vec<Param>, ret: Type) {
        self.host_gen += 1;
        self.host_sigs
            .insert(name.to_string(), (params.clone(), ret));
        let synopsis = format!(
            "{name}({}) -> {ret}",
            params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.builtins.add(Builtin {
            name: name.to_string(),
            typing: Typing::Params { params, ret },
            effect: Effect::Host,
            synopsis,
            place_arg: false,
            sections: false,
        });
    }
}
