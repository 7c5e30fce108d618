//! `accl::Engine`: the embedding API (after rhai's: one file per concern).
//!
//! An engine keeps one state across [`Engine::eval`] calls: the variables
//! (each later input is checked with them as `lang::Global`s), the `fn` and
//! `const` declarations (their text is kept and checked again in front of
//! each input that can reach them, so they stay callable; an input that
//! declares a name again replaces the earlier declaration), the registered
//! host functions, the
//! limits and the present table. An input that fails to parse, check or run
//! leaves the variables and declarations as they were (array contents that
//! ran before a run-time error stay written: arrays are reference values).
//!
//! Files: `eval` (eval, run_file, the front end), `program` (compile once,
//! run many), `vars` (scalars and arrays by name), `register` (Rust
//! functions), `limits` (operations, depth, progress), `io` (print sink,
//! file-system access), `error`.

mod compiled;
mod error;
mod eval;
mod interop;
mod introspect;
mod io;
mod limits;
#[cfg(feature = "ndarray")]
mod nd;
mod program;
mod register;
mod send;
pub(crate) mod sources;
mod thread;
mod vars;

pub use compiled::Program;
pub use error::Error;
pub use introspect::PresentEntry;
pub use register::{HostArg, HostRet, RegisterFn};
pub use send::{SendArg, SendArgs, SendEngine};
pub use thread::EngineThread;

use crate::interp::{Ctx, RtVal};
use lang::{Builtins, Type};

/// A value returned by [`Engine::eval`].
pub type Val = RtVal;

/// A variable kept between inputs.
#[derive(Clone)]
pub(crate) struct Var {
    pub name: String,
    pub ty: Type,
    /// A constant array (`const q = [..];`): later inputs may not write it.
    pub constant: bool,
    pub bits: u64,
    pub array: Option<stdlib::Array>,
    pub text: Option<crate::interp::value::Text>,
}

/// An accl interpreter with persistent state.
///
/// ```
/// let mut e = accl::Engine::new();
/// e.eval("let x = 20;").unwrap();
/// let v = e.eval("x * 2 + 2").unwrap();
/// assert_eq!(e.get::<i32>("x"), Some(20));
/// assert_eq!(v.unwrap().to_string(), "42");
/// ```
pub struct Engine {
    pub(crate) builtins: Builtins,
    pub(crate) cx: Ctx,
    pub(crate) vars: Vec<Var>,
    /// The `fn` and `const` declarations of earlier inputs.
    pub(crate) decls: Vec<sources::Decl>,
    /// The identifiers of each declaration's text, by index in `decls`.
    pub(crate) decl_idents: Vec<Vec<String>>,
    /// The files an input imported (their canonical paths): run once.
    pub(crate) imported: std::collections::HashSet<std::path::PathBuf>,
    pub(crate) name_counter: usize,
    /// Unique per engine (a [`Program`] knows the engine it was compiled by).
    pub(crate) id: u64,
    /// The registered Rust functions' signatures, and how many
    /// registrations there have been.
    pub(crate) host_sigs: std::collections::HashMap<String, (Vec<lang::Param>, Type)>,
    pub(crate) host_gen: u64,
    /// Changes whenever a declaration is kept: compiled calls of
    /// [`Engine::call_fn`] (by function: argument types, `decl_gen`, program)
    /// are good while it stays.
    pub(crate) decl_gen: u64,
    pub(crate) call_cache:
        std::collections::HashMap<String, (Vec<Type>, u64, std::rc::Rc<Program>)>,
    pub(crate) timings: Timings,
    /// The engine runs one program and nothing after it (`accl run`): a
    /// device it opens need only have the queues that program uses.
    pub(crate) whole_program: bool,
}

/// Where the time of the last [`Engine::eval`] went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Parsing and type checking.
    pub check: std::time::Duration,
    /// Compiling host code and lowering kernels, plus SPIR-V generation and
    /// pipeline creation at first launches on a device.
    pub compile: std::time::Duration,
    /// Running: host code, transfers, kernels and waits.
    pub run: std::time::Duration,
}

static NEXT_ENGINE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// A fresh engine on the host backend: no variables, file-system access
    /// off, printing to stdout, no operation limit, call depth 128.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// assert!(e.eval("let a = zeros(f32, 4);").is_ok());
    /// ```
    pub fn new() -> Engine {
        Engine {
            builtins: stdlib::builtins(),
            cx: Ctx::default(),
            vars: Vec::new(),
            decls: Vec::new(),
            decl_idents: Vec::new(),
            imported: Default::default(),
            name_counter: 0,
            id: NEXT_ENGINE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            host_sigs: Default::default(),
            host_gen: 0,
            decl_gen: 0,
            call_cache: Default::default(),
            timings: Timings::default(),
            whole_program: false,
        }
    }

    /// A fresh engine whose device constructs run on `backend`.
    pub fn with_backend(backend: std::rc::Rc<dyn crate::interp::Backend>) -> Engine {
        let mut e = Engine::new();
        e.cx.backend = backend;
        e
    }

    /// A fresh engine on the Vulkan backend, current device `device`
    /// (numbered as `accl devices` lists them). Fails when there is no
    /// Vulkan driver or no such device.
    ///
    /// ```no_run
    /// let mut e = accl::Engine::vulkan(0).unwrap();
    /// e.eval("let x = zeros(f32, 4); parallel loop for i in 0..4 { x[i] = 2.0; }").unwrap();
    /// assert_eq!(e.get_array::<f32>("x").unwrap().0, [2.0; 4]);
    /// ```
    pub fn vulkan(device: usize) -> Result<Engine, Error> {
        Engine::vulkan_devices(None, device)
    }

    /// Like [`Engine::vulkan`], with the devices chosen as `ACCL_DEVICES`
    /// chooses them (`"0,2"`, `"gpu"`, `"cpu"`; a repeated number opens
    /// several logical devices on one adapter, a testing aid for
    /// multi-device code on a one-GPU machine). `None` reads `ACCL_DEVICES`.
    ///
    /// ```no_run
    /// let mut e = accl::Engine::vulkan_devices(Some("0,0"), 0).unwrap();
    /// e.eval("assert(acc_get_num_devices() == 2, \"two logical devices\");").unwrap();
    /// ```
    pub fn vulkan_devices(devices: Option<&str>, device: usize) -> Result<Engine, Error> {
        let b = crate::vulkan::VulkanBackend::with_devices(devices)
            .map_err(|m| Error::api("accl::device::open", format!("cannot open Vulkan: {m}")))?;
        let mut e = Engine::with_backend(std::rc::Rc::new(b));
        e.set_device(device)
            .map_err(|m| Error::api("accl::device::open", m))?;
        Ok(e)
    }

    /// Messages of the Vulkan validation layer since the last call (only
    /// with `ACCL_VALIDATION=1`; always empty on the host backend).
    pub fn take_validation_messages(&self) -> Vec<String> {
        self.cx.backend.validation_messages()
    }

    /// Device memory accl holds, per device (in device order; a device not
    /// opened yet holds none): the bytes allocated now (arrays, staging and
    /// reduction buffers) and the bytes of the memory blocks they come from.
    /// Empty on the host backend. A long-running embedder can watch it for
    /// growth.
    pub fn device_memory_in_use(&self) -> Vec<(u64, u64)> {
        self.cx.backend.device_memory_in_use()
    }

    /// Where the time of the last evaluation went (check, compile, run).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let s = 0; for i in 0..1000 { s += i; }").unwrap();
    /// let t = e.last_timings();
    /// assert!(t.run > std::time::Duration::ZERO);
    /// ```
    pub fn last_timings(&self) -> Timings {
        self.timings
    }

    /// The name of the backend that runs device constructs (`"host"`).
    ///
    /// ```
    /// assert_eq!(accl::Engine::new().backend_name(), "host");
    /// ```
    pub fn backend_name(&self) -> &'static str {
        self.cx.backend.name()
    }
}

impl std::fmt::Display for RtVal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::interp::builtin::show(self))
    }
}
