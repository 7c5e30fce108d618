//! An engine that can move between threads ([`SendEngine`]).
//!
//! [`Engine`] is not `Send`: its arrays and values are reference counted
//! without atomics, and its API hands clones of them out, which would be
//! shared between threads if the engine moved. `SendEngine` owns an engine
//! that nothing outside it can reach: it is made here (never from an engine
//! the program used), and its API takes and gives only owned plain data
//! (scalars, strings, `Vec`s of elements, errors) and accepts only `Send`
//! closures whose arguments hold no such handle. So every reference count
//! inside it moves with it, and moving it is sound. The engine's speed is
//! the same: it is the same engine.

use super::register::{HostArg, RegisterFn};
use super::{Engine, Error};
use stdlib::Elem;

/// An [`Engine`] that is `Send`: a thread, a tokio task or a rayon worker
/// can own it, and it can move between them. It is not `Sync`: one owner
/// at a time (share one engine between threads with
/// [`crate::EngineThread`]).
///
/// ```
/// let mut e = accl::SendEngine::new();
/// e.set_array("x", vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let mut e = std::thread::spawn(move || {
///     e.eval("parallel loop for i in 0..3 { x[i] = x[i] * 10.0; }").unwrap();
///     e
/// })
/// .join()
/// .unwrap();
/// assert_eq!(e.get_array::<f32>("x").unwrap().0, [10.0, 20.0, 30.0]);
/// assert_eq!(e.eval_as::<f32>("x[2] + 1.0").unwrap(), 31.0);
/// ```
///
/// A closure that would get a handle into the engine is refused at
/// compile time:
///
/// ```compile_fail
/// let mut e = accl::SendEngine::new();
/// e.register_fn("rows", |a: accl::Array| a.shape()[0] as i32);
/// ```
///
/// and so is moving an [`Engine`] itself:
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// send(accl::Engine::new());
/// ```
pub struct SendEngine {
    inner: Engine,
}

// SAFETY: see the module documentation. Every `Rc` the engine holds was
// made inside it and stays there: `SendEngine` is only built from a fresh
// engine, its methods return owned data (no `Array`, `Val`, `Program`),
// and the closures it takes are `Send` with arguments of `SendArg` types,
// which carry no handle into the engine. The one thread-local accl keeps
// (the device copies of a running `host_data`) holds plain data and is
// empty between calls.
unsafe impl Send for SendEngine {}

/// Argument types of [`SendEngine::register_fn`] closures: those that
/// hand the closure no handle into the engine (not [`crate::Array`]).
pub trait SendArg: HostArg {}
macro_rules! send_arg {
    ($($t:ty),*) => {$(impl SendArg for $t {})*};
}
send_arg!(
    bool,
    i32,
    i64,
    u32,
    u8,
    f32,
    f64,
    String,
    crate::DeviceBuffer
);
impl SendArg for &str {}
impl<T: Elem> SendArg for &[T] {}
impl<T: Elem> SendArg for &mut [T] {}

/// An argument tuple of [`SendArg`]s.
pub trait SendArgs {}
impl SendArgs for () {}
impl<A: SendArg> SendArgs for (A,) {}
impl<A: SendArg, B: SendArg> SendArgs for (A, B) {}
impl<A: SendArg, B: SendArg, C: SendArg> SendArgs for (A, B, C) {}
impl<A: SendArg, B: SendArg, C: SendArg, D: SendArg> SendArgs for (A, B, C, D) {}

impl Default for SendEngine {
    fn default() -> Self {
        SendEngine::new()
    }
}

impl SendEngine {
    /// An engine on the host reference backend ([`Engine::new`]).
    pub fn new() -> SendEngine {
        SendEngine {
            inner: Engine::new(),
        }
    }

    /// An engine on Vulkan device `device` ([`Engine::vulkan`]).
    pub fn vulkan(device: usize) -> Result<SendEngine, Error> {
        Ok(SendEngine {
            inner: Engine::vulkan(device)?,
        })
    }

    /// Run source text ([`Engine::eval`]); its value is not returned (read
    /// variables, or use [`SendEngine::eval_as`]).
    pub fn eval(&mut self, src: &str) -> Result<(), Error> {
        self.inner.eval(src).map(|_| ())
    }

    /// Run source text whose value is a scalar of type `T`
    /// ([`Engine::eval_as`]).
    pub fn eval_as<T: Elem>(&mut self, src: &str) -> Result<T, Error> {
        self.inner.eval_as(src)
    }

    /// [`Engine::set`].
    pub fn set<T: Elem>(&mut self, name: &str, v: T) {
        self.inner.set(name, v)
    }

    /// [`Engine::get`].
    pub fn get<T: Elem>(&self, name: &str) -> Option<T> {
        self.inner.get(name)
    }

    /// A new array variable from `data` in row-major order
    /// ([`Engine::set_array`]).
    pub fn set_array<T: Elem>(
        &mut self,
        name: &str,
        data: Vec<T>,
        shape: &[usize],
    ) -> Result<(), Error> {
        self.inner.set_array(name, data, shape)
    }

    /// A copy of an array variable's elements and its shape
    /// ([`Engine::get_array`]).
    pub fn get_array<T: Elem>(&self, name: &str) -> Option<(Vec<T>, Vec<usize>)> {
        self.inner.get_array(name)
    }

    /// [`Engine::set_str`].
    pub fn set_str(&mut self, name: &str, text: &str) {
        self.inner.set_str(name, text)
    }

    /// [`Engine::get_str`].
    pub fn get_str(&self, name: &str) -> Option<String> {
        self.inner.get_str(name)
    }

    /// [`Engine::register_fn`] for `Send` closures whose arguments are
    /// scalars, strings, element slices or device buffers.
    pub fn register_fn<Args: SendArgs, F: RegisterFn<Args> + Send>(
        &mut self,
        name: &str,
        f: F,
    ) -> &mut Self {
        self.inner.register_fn(name, f);
        self
    }

    /// [`Engine::set_print`] for a `Send` sink.
    pub fn set_print(&mut self, sink: impl FnMut(&str) + Send + 'static) -> &mut Self {
        self.inner.set_print(sink);
        self
    }

    /// [`Engine::set_eprint`].
    pub fn set_eprint(&mut self, sink: impl FnMut(&str) + Send + 'static) -> &mut Self {
        self.inner.set_eprint(sink);
        self
    }

    /// [`Engine::set_time_limit`].
    pub fn set_time_limit(&mut self, limit: Option<std::time::Duration>) -> &mut Self {
        self.inner.set_time_limit(limit);
        self
    }

    /// [`Engine::set_max_operations`].
    pub fn set_max_operations(&mut self, n: u64) -> &mut Self {
        self.inner.set_max_operations(n);
        self
    }

    /// [`Engine::set_device`].
    pub fn set_device(&mut self, d: usize) -> Result<(), String> {
        self.inner.set_device(d)
    }

    /// [`Engine::devices`].
    pub fn devices(&self) -> Vec<String> {
        self.inner.devices()
    }

    /// [`Engine::take_validation_messages`].
    pub fn take_validation_messages(&self) -> Vec<String> {
        self.inner.take_validation_messages()
    }
}
