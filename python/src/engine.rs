//! `accl.Engine`, `accl.Module` and the callables of a module's functions:
//! each method converts its arguments (`convert`), calls the embedding API
//! with the GIL released, and maps errors (`errors`).

use crate::borrow::Borrowed;
use crate::convert::{self, ArrayIn};
use crate::errors;
use crate::owned::Owned;
use accl::lang::ast::StmtKind;
use accl::Val;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Operations between two looks at Python's signal flag (Ctrl-C): a look
/// takes the GIL for a moment, so not at every operation.
const SIGNAL_EVERY: u64 = 1 << 14;

/// A value handed across `Python::detach`, which asks for `Send`.
///
/// The closure runs on this same thread, before `detach` returns, so the
/// engine and its reference-counted values never leave the thread; other
/// Python threads cannot reach them meanwhile (an engine's state and an
/// array's handle are `Owned`: refused on any other thread).
struct OnThisThread<T>(T);
// SAFETY: see above: the value is used only on the thread that made it.
unsafe impl<T> Send for OnThisThread<T> {}
impl<T> OnThisThread<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// Run `f` on the engine (or a REPL session) with the GIL released.
fn unlocked<E, R>(py: Python<'_>, e: &mut E, f: impl FnOnce(&mut E) -> R) -> R {
    let e = OnThisThread(e);
    let f = OnThisThread(f);
    py.detach(move || {
        let (e, f) = (e.into_inner(), f.into_inner());
        OnThisThread(f(e))
    })
    .into_inner()
}

/// An accl engine: variables, declarations and device data kept between
/// calls. Its state belongs to the thread that made it.
#[pyclass(subclass, module = "accl._accl", name = "Engine")]
pub struct Engine {
    state: Owned<State>,
}

/// What an engine holds.
pub struct State {
    pub inner: accl::Engine,
    /// The exception (KeyboardInterrupt) that stopped the running input.
    interrupt: Rc<RefCell<Option<PyErr>>>,
    /// Where `print` goes: a callable of one str, or `sys.stdout`.
    printer: Rc<RefCell<Option<Py<PyAny>>>>,
    /// NumPy arrays passed without a copy, by buffer.
    borrowed: Borrowed,
}

/// A Python exception for the result of an engine call: the pending
/// KeyboardInterrupt when Ctrl-C stopped it.
fn result<T>(
    py: Python<'_>,
    interrupt: &RefCell<Option<PyErr>>,
    r: Result<T, accl::Error>,
) -> PyResult<T> {
    let pending = interrupt.borrow_mut().take();
    match r {
        Ok(v) => Ok(v),
        Err(e) => match pending {
            Some(p) if e.code() == "accl::run::aborted" => Err(p),
            _ => Err(errors::to_py(py, &e)),
        },
    }
}

impl State {
    /// Print to Python's `sys.stdout` (a notebook's cell output), files
    /// relative to the working directory, the environment readable, and
    /// Ctrl-C stopping a run.
    fn configure(
        e: &mut accl::Engine,
        interrupt: &Rc<RefCell<Option<PyErr>>>,
        printer: &Rc<RefCell<Option<Py<PyAny>>>>,
    ) {
        let printer = printer.clone();
        e.set_print(move |s| {
            Python::attach(|py| {
                let _ = match &*printer.borrow() {
                    Some(f) => f.call1(py, (s,)).map(drop),
                    None => py
                        .import("sys")
                        .and_then(|sys| sys.getattr("stdout"))
                        .and_then(|out| out.call_method1("write", (s,)))
                        .map(drop),
                };
            })
        });
        e.set_fs_access(std::env::current_dir().ok());
        e.set_env_access(true);
        let slot = interrupt.clone();
        e.on_progress(SIGNAL_EVERY, move |_| {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => true,
                Err(err) => {
                    *slot.borrow_mut() = Some(err);
                    false
                }
            })
        });
    }

    fn open(py: Python<'_>, device: Option<&Bound<'_, PyAny>>) -> PyResult<accl::Engine> {
        let r = match device {
            None => Ok(auto()),
            Some(d) => {
                if let Ok(n) = d.extract::<usize>() {
                    accl::Engine::vulkan(n)
                } else if let Ok(s) = d.extract::<String>() {
                    match s.as_str() {
                        "auto" => Ok(auto()),
                        "host" => Ok(accl::Engine::new()),
                        s => accl::Engine::vulkan_devices(Some(s), 0),
                    }
                } else {
                    return Err(errors::argument(
                        py,
                        "device is \"auto\", \"host\", a device number or a device list as ACCL_DEVICES takes it",
                    ));
                }
            }
        };
        r.map_err(|e| errors::to_py(py, &e))
    }

    fn call(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut accl::Engine) -> Result<Option<Val>, accl::Error>,
    ) -> PyResult<Py<PyAny>> {
        let r = unlocked(py, &mut self.inner, f);
        let v = result(py, &self.interrupt, r)?;
        convert::value_out(py, v.as_ref())
    }
}

/// `"auto"`: Vulkan device 0 (as `ACCL_DEVICES` chooses, a GPU first),
/// else the host backend.
fn auto() -> accl::Engine {
    accl::Engine::vulkan_devices(None, 0).unwrap_or_else(|_| accl::Engine::new())
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (device = None))]
    fn new(py: Python<'_>, device: Option<&Bound<'_, PyAny>>) -> PyResult<Engine> {
        let mut inner = State::open(py, device)?;
        let interrupt = Rc::new(RefCell::new(None));
        let printer = Rc::new(RefCell::new(None));
        State::configure(&mut inner, &interrupt, &printer);
        Ok(Engine {
            state: Owned::new(State {
                inner,
                interrupt,
                printer,
                borrowed: Borrowed::default(),
            }),
        })
    }

    /// `"host"` or `"vulkan"`.
    #[getter]
    fn backend(&self) -> PyResult<&'static str> {
        let st = self.state.get()?;
        Ok(st.inner.backend_name())
    }

    /// One line per device of this engine's backend.
    fn devices(&self) -> PyResult<Vec<String>> {
        let st = self.state.get()?;
        Ok(st.inner.devices())
    }

    /// Where `print` output goes: a callable taking one str, or None for
    /// `sys.stdout` (the default).
    fn set_print(&mut self, f: Option<Py<PyAny>>) -> PyResult<()> {
        let st = self.state.get_mut()?;
        *st.printer.borrow_mut() = f;
        Ok(())
    }

    /// Messages of the Vulkan validation layer since the last call (with
    /// `ACCL_VALIDATION=1`; always empty on the host backend).
    fn validation_messages(&self) -> PyResult<Vec<String>> {
        let st = self.state.get()?;
        Ok(st.inner.take_validation_messages())
    }

    /// Run accl source (or the file at `path`) in the engine; its value.
    #[pyo3(signature = (source, path = None, args = None))]
    fn run(
        &mut self,
        py: Python<'_>,
        source: Option<String>,
        path: Option<std::path::PathBuf>,
        args: Option<Vec<String>>,
    ) -> PyResult<Py<PyAny>> {
        let st = self.state.get_mut()?;
        if let Some(a) = args {
            st.inner.set_args(a);
        }
        match (source, path) {
            (_, Some(p)) => st.call(py, move |e| e.run_file(&p)),
            (Some(s), None) => st.call(py, move |e| e.eval_source("<run>", &s)),
            (None, None) => Err(errors::argument(py, "run() needs source or a path")),
        }
    }

    /// Evaluate an input whose value is returned (statements may come
    /// first); `name` names the source in diagnostics.
    #[pyo3(signature = (source, name = "<eval>"))]
    fn eval(&mut self, py: Python<'_>, source: &str, name: &str) -> PyResult<Py<PyAny>> {
        let st = self.state.get_mut()?;
        st.call(py, |e| e.eval_source(name, source))
    }

    /// Run `source` and return its functions as a module.
    #[pyo3(signature = (source, name = "<module>"))]
    fn compile(slf: Bound<'_, Self>, source: &str, name: &str) -> PyResult<Module> {
        let py = slf.py();
        slf.borrow_mut()
            .state
            .get_mut()?
            .call(py, |e| e.eval_source(name, source))?;
        let (prog, _) = accl::lang::parse(source);
        let mut functions = HashMap::new();
        for s in &prog.stmts {
            if let StmtKind::Fn(f) = &s.kind {
                let params = f
                    .params
                    .iter()
                    .map(|p| Param {
                        name: p.name.name.to_string(),
                        kind: if p.ty.string {
                            Kind::Str
                        } else if p.ty.tuple.is_some() {
                            Kind::Other
                        } else if p.ty.rank == 0 {
                            Kind::Scalar(p.ty.elem)
                        } else {
                            Kind::Array(p.ty.elem, p.ty.rank)
                        },
                    })
                    .collect();
                let name = f.name.name.to_string();
                let func = Function {
                    engine: slf.clone().unbind(),
                    name: name.clone(),
                    params,
                };
                functions.insert(name, Py::new(py, func)?);
            }
        }
        Ok(Module { functions })
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let st = self.state.get()?;
        if let Some(a) = st.inner.array(name) {
            return Ok(convert::view(py, &a)?.unbind());
        }
        if let Some(v) = st.inner.get_value(name) {
            return convert::scalar_out(py, v);
        }
        if let Some(s) = st.inner.get_str(name) {
            return Ok(PyString::new(py, &s).into_any().unbind());
        }
        Err(pyo3::exceptions::PyKeyError::new_err(name.to_string()))
    }

    /// Bind a variable: a NumPy array (the same memory when it views an
    /// accl array or can be borrowed, else a copy), a scalar or a str.
    fn __setitem__(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let st = self.state.get_mut()?;
        st.borrowed.sweep(value.py());
        let (v, _) = convert::value_in(
            value,
            &|| format!("the value of `{name}`"),
            &mut st.borrowed,
        )?;
        match v {
            Val::Array(a) => st.inner.set_array_handle(name, a),
            Val::Str(s) => st.inner.set_str(name, &s),
            Val::Scalar(x) => set_scalar(&mut st.inner, name, x),
            _ => {}
        }
        Ok(())
    }

    fn __delitem__(&mut self, name: &str) -> PyResult<()> {
        let st = self.state.get_mut()?;
        if st.inner.remove(name) {
            Ok(())
        } else {
            Err(pyo3::exceptions::PyKeyError::new_err(name.to_string()))
        }
    }

    fn __contains__(&self, name: &str) -> PyResult<bool> {
        let st = self.state.get()?;
        Ok(st.inner.variables().iter().any(|(n, _)| n == name))
    }

    /// Every variable and its accl type, as `{name: "f32[]"}`.
    fn variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.state.get()?;
        let d = PyDict::new(py);
        for (n, t) in st.inner.variables() {
            d.set_item(n, t.to_string())?;
        }
        Ok(d)
    }

    /// Run a REPL meta command (`:vars`, `:type x`, `:help`, ...); what it
    /// printed.
    fn meta(&mut self, py: Python<'_>, line: &str) -> PyResult<String> {
        let st = self.state.get_mut()?;
        let buf: Rc<RefCell<Vec<u8>>> = Rc::new(RefCell::new(Vec::new()));
        let sink: accl::repl::Sink = buf.clone();
        let engine = std::mem::take(&mut st.inner);
        let mut s = accl::repl::Session::new(
            engine,
            accl::repl::Style { color: false },
            sink.clone(),
            sink,
        );
        let line = line.to_string();
        let flow = unlocked(py, &mut s, |s| {
            matches!(s.meta(&line), accl::repl::Flow::Quit)
        });
        st.inner = s.engine;
        State::configure(&mut st.inner, &st.interrupt, &st.printer);
        let mut out = String::from_utf8_lossy(&buf.borrow()).into_owned();
        if flow {
            out.push_str("(the kernel stays: restart it from the notebook instead)\n");
        }
        Ok(out)
    }
}

fn set_scalar(e: &mut accl::Engine, name: &str, x: accl::lang::Value) {
    use accl::lang::Value as V;
    match x {
        V::Bool(v) => e.set(name, v),
        V::I32(v) => e.set(name, v),
        V::I64(v) => e.set(name, v),
        V::U32(v) => e.set(name, v),
        V::U8(v) => e.set(name, v),
        V::F32(v) => e.set(name, v),
        V::F64(v) | V::FloatLit(v) => e.set(name, v),
        V::IntLit(v) => e.set(name, v as i64),
    }
}

/// What a function parameter takes.
#[derive(Clone, Copy)]
enum Kind {
    Scalar(accl::lang::Scalar),
    Array(accl::lang::Scalar, u8),
    Str,
    Other,
}

struct Param {
    name: String,
    kind: Kind,
}

/// The functions one `Engine.compile` declared, as attributes.
#[pyclass(module = "accl._accl", name = "Module")]
pub struct Module {
    functions: HashMap<String, Py<Function>>,
}

#[pymethods]
impl Module {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<Function>> {
        self.functions
            .get(name)
            .map(|f| f.clone_ref(py))
            .ok_or_else(|| {
                pyo3::exceptions::PyAttributeError::new_err(format!(
                    "the module declares no function `{name}`"
                ))
            })
    }

    fn __dir__(&self) -> Vec<String> {
        let mut v: Vec<String> = self.functions.keys().cloned().collect();
        v.sort();
        v
    }
}

/// An accl function of a module: calling it runs it in its engine.
#[pyclass(module = "accl._accl", name = "Function")]
pub struct Function {
    engine: Py<Engine>,
    name: String,
    params: Vec<Param>,
}

#[pymethods]
impl Function {
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if args.len() != self.params.len() {
            return Err(errors::argument(
                py,
                format!(
                    "`{}` takes {} argument{}, not {}",
                    self.name,
                    self.params.len(),
                    if self.params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut engine = self.engine.bind(py).try_borrow_mut().map_err(|_| {
            errors::api(py, "accl::api::busy", "the engine is running another call")
        })?;
        let st = engine.state.get_mut()?;
        st.borrowed.sweep(py);
        let what = |i: usize| format!("argument `{}` of `{}`", self.params[i].name, self.name);
        // Scalars and strings as values; arrays by position in `arrays`.
        let mut vals = Vec::with_capacity(args.len());
        let mut arrays: Vec<ArrayIn<'_>> = Vec::new();
        for (i, (p, a)) in self.params.iter().zip(args.iter()).enumerate() {
            let what = || what(i);
            match p.kind {
                Kind::Scalar(s) => vals.push(Ok(Val::Scalar(convert::scalar_in(&a, s, &what)?))),
                Kind::Array(s, r) => {
                    arrays.push(convert::array_in(
                        &a,
                        Some((s, r)),
                        &what,
                        &mut st.borrowed,
                    )?);
                    vals.push(Err(arrays.len() - 1));
                }
                Kind::Str | Kind::Other => {
                    let (v, arr) = convert::value_in(&a, &what, &mut st.borrowed)?;
                    match arr {
                        Some(arr) => {
                            arrays.push(arr);
                            vals.push(Err(arrays.len() - 1));
                        }
                        None => vals.push(Ok(v)),
                    }
                }
            }
        }
        if arrays.len() > 1 {
            convert::separate(&mut arrays, &|k| {
                let i = vals.iter().position(|v| matches!(v, Err(j) if *j == k));
                what(i.unwrap_or(0))
            })?;
        }
        let vals: Vec<Val> = vals
            .into_iter()
            .map(|v| v.unwrap_or_else(|k| Val::Array(arrays[k].array.clone())))
            .collect();
        let name = self.name.as_str();
        let out = st.call(py, |e| e.call_fn(name, &vals));
        for a in &arrays {
            convert::copy_back(a)?;
        }
        out
    }

    fn __repr__(&self) -> String {
        format!("<accl function {}>", self.name)
    }
}
