//! Scalars and arrays by name, from and to Rust values. Arrays move as whole
//! typed buffers (`Vec<T>` or a slice copy), never element by element
//! through a dynamic value.

use super::{Engine, Error, Val, Var};
use crate::interp::scalar::{bits_to_value, value_to_bits};
use lang::{Type, Value};
use stdlib::{Array, Elem};

impl Engine {
    fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }

    fn put(&mut self, var: Var) {
        match self.vars.iter_mut().find(|v| v.name == var.name) {
            Some(v) => *v = var,
            None => self.vars.push(var),
        }
    }

    /// A scalar variable, if it exists and has type `T`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let x: u8 = 250;").unwrap();
    /// assert_eq!(e.get::<u8>("x"), Some(250));
    /// assert_eq!(e.get::<i32>("x"), None);
    /// ```
    pub fn get<T: Elem>(&self, name: &str) -> Option<T> {
        let v = self.var(name)?;
        (v.ty == Type::Scalar(T::SCALAR)).then(|| T::from_value(bits_to_value(T::SCALAR, v.bits)))
    }

    /// A scalar variable of any type as a [`Value`].
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let b = 1 < 2;").unwrap();
    /// assert_eq!(e.get_value("b"), Some(accl::lang::Value::Bool(true)));
    /// ```
    pub fn get_value(&self, name: &str) -> Option<Value> {
        let v = self.var(name)?;
        v.ty.scalar().map(|s| bits_to_value(s, v.bits))
    }

    /// Create or replace a scalar variable of type `T`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set("n", 5i64);
    /// assert_eq!(e.eval("n * 2").unwrap().unwrap().to_string(), "10");
    /// ```
    pub fn set<T: Elem>(&mut self, name: &str, v: T) {
        self.put(Var {
            name: name.to_string(),
            constant: false,
            ty: Type::Scalar(T::SCALAR),
            bits: value_to_bits(v.to_value(), T::SCALAR),
            array: None,
            text: None,
        });
    }

    /// Create or replace a string variable.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_str("name", "heat");
    /// e.eval("let file = format(\"{}_{:04}.npy\", name, 50);").unwrap();
    /// assert_eq!(e.get_str("file").as_deref(), Some("heat_0050.npy"));
    /// ```
    pub fn set_str(&mut self, name: &str, text: &str) {
        self.put(Var {
            name: name.to_string(),
            constant: false,
            ty: Type::Str,
            bits: 0,
            array: None,
            text: Some(std::rc::Rc::new(text.to_string())),
        });
    }

    /// A string variable, if it exists and is a string.
    pub fn get_str(&self, name: &str) -> Option<String> {
        self.var(name)?.text.as_deref().map(String::from)
    }

    /// Create or replace an array variable from a vector and a shape (rank
    /// 1 to 3, row-major); the vector becomes the array's storage (no copy).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_array("m", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    /// assert_eq!(e.eval("m[1, 2]").unwrap().unwrap().to_string(), "6");
    /// assert!(e.set_array("bad", vec![1u8, 2], &[3]).is_err());
    /// ```
    pub fn set_array<T: Elem>(
        &mut self,
        name: &str,
        data: Vec<T>,
        shape: &[usize],
    ) -> Result<(), Error> {
        let a = Array::from_vec(data, shape.to_vec())
            .map_err(|e| Error::api("accl::engine::bad_shape", e.to_string()))?;
        self.set_array_handle(name, a);
        Ok(())
    }

    /// Like [`Engine::set_array`], copying from a slice.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_array_from_slice("v", &[1i32, 2, 3], &[3]).unwrap();
    /// assert_eq!(e.eval("sum(v)").unwrap().unwrap().to_string(), "6");
    /// ```
    pub fn set_array_from_slice<T: Elem>(
        &mut self,
        name: &str,
        data: &[T],
        shape: &[usize],
    ) -> Result<(), Error> {
        self.set_array(name, data.to_vec(), shape)
    }

    /// Bind an existing array handle (aliasing it: script writes are seen
    /// through the handle).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let a = accl::Array::from_vec(vec![0.0f64; 3], vec![3]).unwrap();
    /// e.set_array_handle("a", a.clone());
    /// e.eval("a[1] = 7.0;").unwrap();
    /// assert_eq!(a.to_vec::<f64>().unwrap(), vec![0.0, 7.0, 0.0]);
    /// ```
    pub fn set_array_handle(&mut self, name: &str, a: Array) {
        self.put(Var {
            name: name.to_string(),
            constant: false,
            ty: Type::Array(a.scalar(), a.rank() as u8),
            bits: 0,
            array: Some(a),
            text: None,
        });
    }

    /// An array variable's elements (a typed copy) and shape, if it exists
    /// with element type `T`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = arange(i64, 4);").unwrap();
    /// assert_eq!(e.get_array::<i64>("a"), Some((vec![0, 1, 2, 3], vec![4])));
    /// ```
    pub fn get_array<T: Elem>(&self, name: &str) -> Option<(Vec<T>, Vec<usize>)> {
        let a = self.array(name)?;
        Some((a.to_vec::<T>()?, a.shape().to_vec()))
    }

    /// Copy an array variable's elements into `out` (which must have its
    /// length); returns the shape.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = full(u32, 9, 2, 2);").unwrap();
    /// let mut buf = [0u32; 4];
    /// assert_eq!(e.read_array_into("a", &mut buf), Some(vec![2, 2]));
    /// assert_eq!(buf, [9; 4]);
    /// ```
    pub fn read_array_into<T: Elem>(&self, name: &str, out: &mut [T]) -> Option<Vec<usize>> {
        let a = self.array(name)?;
        let d = a.data();
        let s = T::slice(&d)?;
        (s.len() == out.len()).then(|| out.copy_from_slice(s))?;
        Some(a.shape().to_vec())
    }

    /// The array handle bound to a variable (aliasing it).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let z = zeros(bool, 2, 2, 2);").unwrap();
    /// assert_eq!(e.array("z").unwrap().shape(), &[2, 2, 2]);
    /// ```
    pub fn array(&self, name: &str) -> Option<Array> {
        self.var(name)?.array.clone()
    }

    /// Remove a variable; whether it existed.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set("t", 1.0f64);
    /// assert!(e.remove("t"));
    /// assert!(e.eval("t").is_err());
    /// ```
    pub fn remove(&mut self, name: &str) -> bool {
        let n = self.vars.len();
        self.vars.retain(|v| v.name != name);
        self.vars.len() != n
    }

    /// Every variable with its type, in declaration order.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = 1; let b = 2.0;").unwrap();
    /// let names: Vec<String> = e.variables().into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// ```
    pub fn variables(&self) -> Vec<(String, Type)> {
        self.vars.iter().map(|v| (v.name.clone(), v.ty)).collect()
    }
}

/// The prefix of the variables that carry [`Engine::call_fn`]'s arguments.
const CALL_ARG: &str = "__accl_call_arg";

impl Engine {
    /// Call the script function `name` (declared by an earlier `eval`)
    /// with `args` (scalars and arrays; arrays are passed by reference, as
    /// in the language): its value, or `None` for a function without one.
    ///
    /// ```
    /// use accl::lang::Value;
    /// let mut e = accl::Engine::new();
    /// e.eval("fn hyp(a: f64, b: f64) -> f64 { return sqrt(a * a + b * b); }
    ///         fn fill(x: f32[], v: f32) { for i in 0..len(x) { x[i] = v; } }").unwrap();
    /// let r = e.call_fn("hyp", &[accl::Val::Scalar(Value::F64(3.0)), accl::Val::Scalar(Value::F64(4.0))]);
    /// assert_eq!(r.unwrap().unwrap().to_string(), "5");
    /// let x = accl::Array::zeros(accl::lang::Scalar::F32, vec![3]).unwrap();
    /// e.call_fn("fill", &[accl::Val::Array(x.clone()), accl::Val::Scalar(Value::F32(2.5))]).unwrap();
    /// assert_eq!(x.data().get(2), Some(Value::F32(2.5)));
    /// ```
    pub fn call_fn(&mut self, name: &str, args: &[Val]) -> Result<Option<Val>, Error> {
        let mut names = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let n = format!("{CALL_ARG}{i}");
            match a {
                Val::Scalar(v) => {
                    let Type::Scalar(s) = v.ty() else {
                        return Err(Error::api(
                            "accl::api::argument",
                            format!("argument {i} of `{name}` is an untyped literal"),
                        ));
                    };
                    self.put(Var {
                        name: n.clone(),
                        constant: false,
                        ty: Type::Scalar(s),
                        bits: value_to_bits(*v, s),
                        array: None,
                        text: None,
                    });
                }
                Val::Array(arr) => self.set_array_handle(&n, arr.clone()),
                Val::Str(t) => self.set_str(&n, t),
                other => {
                    return Err(Error::api(
                        "accl::api::argument",
                        format!("argument {i} of `{name}` cannot be passed ({other})"),
                    ))
                }
            }
            names.push(n);
        }
        let r = self.call_program(name, &names);
        self.vars.retain(|v| !v.name.starts_with(CALL_ARG));
        r
    }

    /// Run the call `name(args..)` (the arguments bound already), compiled
    /// once per function and argument types while the declarations stay
    /// the same; a stale compiled call is compiled again.
    fn call_program(&mut self, name: &str, args: &[String]) -> Result<Option<Val>, Error> {
        let types: Vec<Type> = args
            .iter()
            .filter_map(|a| self.var(a).map(|v| v.ty))
            .collect();
        let cached = match self.call_cache.get(name) {
            Some((t, gen, p)) if *t == types && *gen == self.decl_gen => Some(p.clone()),
            _ => None,
        };
        if let Some(p) = cached {
            match self.run(&p) {
                Err(e) if e.code() == "accl::api::stale_program" => {}
                r => return r,
            }
        }
        let src = format!("{name}({})", args.join(", "));
        let t = std::time::Instant::now();
        let p = self.front_end("<call>", &src);
        self.timings = super::Timings {
            check: t.elapsed(),
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let p = std::rc::Rc::new(self.finish_compile(p?));
        self.timings.compile = t.elapsed();
        self.call_cache
            .insert(name.to_string(), (types, self.decl_gen, p.clone()));
        let r = lang::stack::large(|| self.run_program(&p));
        self.release_unreachable();
        r
    }

    /// [`Engine::eval`] of an expression of type `T`: its value, or an
    /// `accl::api::type` error naming the type it has.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// assert_eq!(e.eval_as::<i64>("let n: i64 = 20; n * 2 + 2").unwrap(), 42);
    /// assert_eq!(e.eval_as::<f32>("1.5f32 * 2.0").unwrap(), 3.0);
    /// assert_eq!(e.eval_as::<f64>("1 + 1").unwrap_err().code(), "accl::api::type");
    /// ```
    pub fn eval_as<T: Elem>(&mut self, src: &str) -> Result<T, Error> {
        match self.eval(src)? {
            Some(Val::Scalar(v)) if v.ty() == Type::Scalar(T::SCALAR) => Ok(T::from_value(v)),
            other => Err(Error::api(
                "accl::api::type",
                format!(
                    "the value is {}, not `{}`",
                    match other {
                        Some(Val::Scalar(v)) => format!("`{}`", v.ty()),
                        Some(v) => format!("`{v}`"),
                        None => "nothing".to_string(),
                    },
                    T::SCALAR
                ),
            )),
        }
    }
}
