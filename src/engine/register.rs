//! Rust functions callable from scripts. A closure of 0 to 4 arguments
//! (scalars `bool i32 i64 u32 u8 f32 f64`, strings as `&str` or `String`,
//! arrays as [`Array`]) returning a scalar, `String`, `()` or a `Result` of
//! one (its `Err` is a run-time diagnostic at the call) is declared to the
//! checker with that signature and effect `Host` (so it cannot be called
//! inside a device construct): a script's call is type-checked like any
//! other. [`Engine::register_val_fn`] takes any values with an explicit
//! signature.
//!
//! `&str` arguments borrow the script's string for the call: the closure
//! is `for<'a> Fn(&'a str)`, which the two bounds of each `RegisterFn` impl
//! express (the first fixes the argument types from the closure's own
//! signature, the second asks for every lifetime).

use super::Engine;
use crate::interp::HostValFn;
use lang::{Builtin, Effect, Param, Type, Typing};
use std::rc::Rc;
use stdlib::{Array, Elem};

use super::Val;

/// An argument type of a function given to [`Engine::register_fn`].
pub trait HostArg {
    /// What the closure is given: the type itself, with the lifetime of the
    /// call for a borrowed one (`&str`).
    type Item<'a>;
    /// How the checker types the argument.
    fn param() -> Param;
    /// The argument from the script's value (None: not of this type).
    fn get(v: &Val) -> Option<Self::Item<'_>>;
}

macro_rules! host_scalar {
    ($($t:ty),*) => {$(
        impl HostArg for $t {
            type Item<'a> = $t;
            fn param() -> Param {
                Param::Is(Type::Scalar(<$t as Elem>::SCALAR))
            }
            fn get(v: &Val) -> Option<$t> {
                match v {
                    Val::Scalar(x) if x.ty() == Type::Scalar(<$t as Elem>::SCALAR) => {
                        Some(<$t as Elem>::from_value(*x))
                    }
                    _ => None,
                }
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
    type Item<'a> = &'a str;
    fn param() -> Param {
        Param::Is(Type::Str)
    }
    fn get(v: &Val) -> Option<&str> {
        match v {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl HostArg for String {
    type Item<'a> = String;
    fn param() -> Param {
        Param::Is(Type::Str)
    }
    fn get(v: &Val) -> Option<String> {
        <&str as HostArg>::get(v).map(String::from)
    }
}

/// Any array (its element type and rank are the closure's to check); the
/// script's own array, so writes to it are seen by the script.
impl HostArg for Array {
    type Item<'a> = Array;
    fn param() -> Param {
        Param::AnyArray
    }
    fn get(v: &Val) -> Option<Array> {
        match v {
            Val::Array(a) => Some(a.clone()),
            _ => None,
        }
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

fn arg<A: HostArg>(v: &[Val], i: usize) -> Result<A::Item<'_>, String> {
    v.get(i)
        .and_then(A::get)
        .ok_or_else(|| format!("argument {} is not `{}`", i + 1, A::param()))
}

macro_rules! register_arity {
    ($call:ident; $($a:ident $i:tt),*) => {
        /// Calls `f` through its higher-ranked `Fn` bound.
        #[allow(non_snake_case, clippy::too_many_arguments)]
        fn $call<R, $($a),*>(f: &impl Fn($($a),*) -> R, $($a: $a),*) -> R {
            f($($a),*)
        }
        impl<F, R: HostRet, $($a: HostArg),*> RegisterFn<($($a,)*)> for F
        where
            F: Fn($($a),*) -> R + for<'a> Fn($($a::Item<'a>),*) -> R + 'static,
        {
            #[allow(unused_variables)]
            fn into_host(self) -> (Vec<Param>, Type, HostValFn) {
                let f: HostValFn = Rc::new(move |v: &[Val]| {
                    $call::<R, $($a::Item<'_>),*>(&self, $(arg::<$a>(v, $i)?),*).into_val()
                });
                (vec![$($a::param()),*], R::ty(), f)
            }
        }
    };
}
register_arity!(call0;);
register_arity!(call1; A 0);
register_arity!(call2; A 0, B 1);
register_arity!(call3; A 0, B 1, C 2);
register_arity!(call4; A 0, B 1, C 2, D 3);

impl Engine {
    /// Make a Rust closure callable from scripts as `name(..)` (one
    /// registered under the name of a builtin replaces it). Arguments:
    /// scalars, `&str` or `String` (a script `str`), [`Array`] (any array,
    /// the script's own); results: a scalar, `String`, `()`, or a `Result`
    /// of one whose `Err` stops the script with `accl::run::host_function`.
    /// Calls are type-checked against this signature.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.register_fn("hypot", |x: f64, y: f64| (x * x + y * y).sqrt());
    /// e.register_fn("tag", |s: &str, n: i32| format!("{s}_{n:04}"));
    /// e.register_fn("rows", |a: accl::Array| a.shape()[0] as i32);
    /// let v = e.eval("hypot(3.0, 4.0)").unwrap().unwrap();
    /// assert_eq!(v.to_string(), "5");
    /// e.eval("let t = tag(\"heat\", rows(zeros(f32, 7, 2)));").unwrap();
    /// assert_eq!(e.get_str("t").as_deref(), Some("heat_0007"));
    /// assert_eq!(e.eval("tag(1, 2)").unwrap_err().code(), "accl::type::mismatch");
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
        });
    }
}
