//! accl: an OpenACC-style array language. Host code is interpreted; every
//! `parallel` construct is JIT-compiled to SPIR-V and run on Vulkan compute.
//!
//! The stages live in their own crates: `lang` (lexer, parser, checker),
//! `stdlib` (builtins), `compiler` (kernel IR, SPIR-V), `vk-runtime` (Vulkan).
//! This crate ties them together: the interpreter, the embedding API
//! ([`Engine`]) and the command line. The documented surface is the
//! embedding API: [`Engine`], [`EngineThread`], [`Program`], [`Error`], [`Val`], [`Array`],
//! [`Timings`] (a guide: `docs/embedding.md`), and [`mpi`] (is this process
//! an MPI rank, and `finalize` before exit); the other modules are public
//! for the `accl` binary, its benches and tests only.
//!
//! ```
//! let mut e = accl::Engine::new();
//! e.eval("let x = zeros(f32, 4); parallel loop for i in 0..4 { x[i] = i as f32 * 2.0; }")
//!     .unwrap();
//! assert_eq!(e.array("x").unwrap().data().get(3).unwrap().as_f64(), Some(6.0));
//! ```

/// `print!` for the CLI's output: quiet when stdout's reader has gone
/// (`interp::machine::write_stdout`).
macro_rules! out {
    ($($a:tt)*) => { $crate::interp::machine::write_stdout(&format!($($a)*)) };
}

/// `println!` for the CLI's output, as [`out!`].
macro_rules! outln {
    () => { $crate::interp::machine::write_stdout("\n") };
    ($($a:tt)*) => { $crate::interp::machine::write_stdout(&format!("{}\n", format_args!($($a)*))) };
}

/// `eprint!` for the CLI's messages: a closed stderr drops them instead of
/// panicking ([`interp::machine::write_stderr`]).
macro_rules! err {
    ($($a:tt)*) => { $crate::interp::machine::write_stderr(&format!($($a)*)) };
}

/// `eprintln!` for the CLI's messages, as [`err!`].
macro_rules! errln {
    () => { $crate::interp::machine::write_stderr("\n") };
    ($($a:tt)*) => { $crate::interp::machine::write_stderr(&format!("{}\n", format_args!($($a)*))) };
}

#[doc(hidden)]
pub mod bench;
#[doc(hidden)]
pub mod cli;
pub mod engine;
mod explain;
mod interop;
#[doc(hidden)]
pub mod interp;
pub mod mpi;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod repl;
mod timing;
#[doc(hidden)]
pub mod vulkan;

/// The `ash` crate accl uses, for the Vulkan types of [`VulkanDevice`] and
/// [`DeviceBuffer`] (a host program's own Vulkan code uses the same version).
pub use ash;
pub use engine::{Engine, EngineThread, Error, Program, SendEngine, Timings, Val};
pub use interop::{DeviceBuffer, VulkanDevice};
pub use lang;
pub use stdlib;
pub use stdlib::Array;
pub use vk_runtime::{ExternalDevice, EXTERNAL_FEATURES};
pub use vulkan::DEFAULT_LOOP_BUDGET;
