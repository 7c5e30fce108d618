//! accl: an OpenACC-style array language. Host code is interpreted; every
//! `parallel` construct is JIT-compiled to SPIR-V and run on Vulkan compute.
//!
//! The stages live in their own crates: `lang` (lexer, parser, checker),
//! `stdlib` (builtins), `compiler` (kernel IR, SPIR-V), `vk-runtime` (Vulkan).
//! This crate ties them together: the interpreter ([`interp`]), the
//! embedding API ([`Engine`]), the command line ([`cli`]).

pub mod bench;
pub mod cli;
pub mod engine;
mod explain;
pub mod interp;
pub mod repl;
mod timing;
pub mod vulkan;

pub use engine::{Engine, Error, Timings};
pub use lang;
pub use stdlib;
pub use stdlib::Array;
pub use vulkan::DEFAULT_LOOP_BUDGET;
