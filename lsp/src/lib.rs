//! `accl lsp`: a language server for .accl scripts over stdio.
//!
//! Every answer comes from the front end's own stages: diagnostics are
//! those of `accl check` (`lang::check_source` against the stdlib's
//! builtins), names resolve as the checker resolves them (the HIR), types
//! are the checker's, builtin signatures the stdlib's. Nothing here opens
//! a device.

mod analysis;
mod completion;
mod definition;
mod diagnostics;
mod document;
#[doc(hidden)]
pub mod fuzzing;
mod hover;
mod imports;
mod repair;
mod semantic_tokens;
mod server;
mod symbols;
mod transport;
mod view;

pub use server::{run, serve};

use lang::hir::{FnH, LocalH};
use lang::{Builtins, Span};
use std::sync::OnceLock;

/// What a name occurrence refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// A local of a function's body (`None`: the top level).
    Local(Option<FnH>, LocalH),
    Function(FnH),
    /// A `const`, by name and the span of its declared name.
    Const(String, Span),
    Builtin(String),
}

/// The stdlib's builtin table, built once.
pub(crate) fn builtins() -> &'static Builtins {
    static B: OnceLock<Builtins> = OnceLock::new();
    B.get_or_init(stdlib::builtins)
}
