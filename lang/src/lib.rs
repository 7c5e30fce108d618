//! The accl front end: source text to a checked, typed program.
//!
//! Stages, each a function from one data structure to the next:
//! [`lexer::lex`] (logos) → [`parse::parse`] (lalrpop) → [`ast::Program`]
//! → [`check::check`] → [`hir::Program`] (typed, names resolved, captures of
//! every device construct computed).

pub mod arena;
pub mod ast;
pub mod builtins;
pub mod check;
pub mod diag;
pub mod hir;
pub mod imports;
pub mod lexer;
pub mod parse;
pub mod span;
pub mod stack;
pub mod token;
pub mod types;
pub mod value;

mod habits;
mod kernels;
pub use builtins::{Builtin, BuiltinId, Builtins, Effect, Param, Sig, Typing};
pub use check::{after_parse_errors, check, check_source, Checked, Global};
pub use diag::{Diag, Source};
pub use lexer::MAX_NESTING;
pub use parse::{parse, MAX_EXPR_DEPTH, MAX_EXPR_NESTING};
pub use span::Span;
pub use types::{Scalar, Tuple, Type};
pub use value::Value;
