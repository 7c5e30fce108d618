//! Rust functions callable from scripts. A closure of 0 to 4 scalar
//! arguments (`bool i32 i64 u32 u8 f32 f64`) returning a scalar or `()` is
//! declared to the checker with that fixed signature and effect `Host` (so
//! it cannot be called inside a device construct), and called with no
//! conversion beyond the scalars themselves. [`Engine::register_val_fn`]
//! takes any values, arrays included, with an explicit signature.

use super::Engine;
use crate::interp::HostFn;
use lang::{Builtin, Effect, Type, Typing, Value};
use std::rc::Rc;
use stdlib::Elem;

/// A scalar argument of a registered function.
pub trait HostArg: Elem {}
impl<T: Elem> HostArg for T {}

/// The result of a registered function: a scalar or `()`.
pub trait HostRet: 'static {
    fn ty() -> Type;
    fn into_value(self) -> Value;
}
macro_rules! host_ret {
    ($($t:ty),*) => {$(
        impl HostRet for $t {
            fn ty() -> Type {
                Type::Scalar(<$t as Elem>::SCALAR)
            }
            fn into_value(self) -> Value {
                self.to_value()
            }
        }
    )*};
}
host_ret!(bool, i32, i64, u32, u8, f32, f64);
impl HostRet for () {
    fn ty() -> Type {
        Type::Unit
    }
    fn into_value(self) -> Value {
        Value::Bool(false)
    }
}

/// A Rust closure that can be registered (`Args` is its argument tuple).
pub trait RegisterFn<Args> {
    fn into_host(self) -> (Vec<Type>, Type, HostFn);
}

fn arg<T: Elem>(v: &[Value], i: usize) -> T {
    v.get(i).map(|&x| T::from_value(x)).unwrap_or_default()
}

macro_rules! register_arity {
    ($($a:ident $i:tt),*) => {
        impl<F, R: HostRet, $($a: HostArg),*> RegisterFn<($($a,)*)> for F
        where
            F: Fn($($a),*) -> R + 'static,
        {
            #[allow(unused_variables)]
            fn into_host(self) -> (Vec<Type>, Type, HostFn) {
                let f: HostFn = Rc::new(move |v: &[Value]| Ok(self($(arg::<$a>(v, $i)),*).into_value()));
                (vec![$(Type::Scalar($a::SCALAR)),*], R::ty(), f)
            }
        }
    };
}
register_arity!();
register_arity!(A 0);
register_arity!(A 0, B 1);
register_arity!(A 0, B 1, C 2);
register_arity!(A 0, B 1, C 2, D 3);

impl Engine {
    /// Make a Rust closure callable from scripts as `name(..)` (one
    /// registered under the name of a builtin replaces it).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.register_fn("hypot", |x: f64, y: f64| (x * x + y * y).sqrt());
    /// let v = e.eval("hypot(3.0, 4.0)").unwrap().unwrap();
    /// assert_eq!(v.to_string(), "5");
    /// ```
    pub fn register_fn<Args>(&mut self, name: &str, f: impl RegisterFn<Args>) -> &mut Self {
        let (params, ret, f) = f.into_host();
        self.register_raw(name, params, ret, f)
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
        f: HostFn,
    ) -> &mut Self {
        self.declare_host_fn(name, params, ret);
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
        f: crate::interp::HostValFn,
    ) -> &mut Self {
        self.declare_host_fn(name, params, ret);
        self.cx.host_fns.remove(name);
        self.cx.host_val_fns.insert(name.to_string(), f);
        self
    }

    fn declare_host_fn(&mut self, name: &str, params: Vec<Type>, ret: Type) {
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
            typing: Typing::Fixed { params, ret },
            effect: Effect::Host,
            synopsis,
            place_arg: false,
        });
    }
}
