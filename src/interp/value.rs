//! Run-time values of the interpreter: frames of untyped 64-bit scalar
//! slots plus array and string slots, the values builtins and embedders
//! exchange ([`RtVal`]), and how a statement ends ([`Flow`]). Plain data,
//! so every layer above (the context, the scalar operations, evaluation)
//! can name it.

use lang::{Diag, Scalar, Value};
use std::rc::Rc;
use stdlib::Array;

/// A run-time error; control flow is never one (see [`Flow`]).
pub type R<T> = Result<T, Box<Diag>>;

/// How a statement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

/// The locals of one function activation (or of the top level): scalars as
/// bit patterns and arrays, both indexed by the local's handle index.
#[derive(Default)]
pub struct Frame {
    pub s: Vec<u64>,
    pub a: Vec<Option<Array>>,
    /// String locals (shared, immutable text: a copy is a reference count).
    pub t: Vec<Option<Text>>,
    pub ret_s: u64,
    pub ret_a: Option<Array>,
    pub ret_t: Option<Text>,
    /// The elements of a returned tuple, as bits.
    pub ret_tuple: Vec<u64>,
}

impl Frame {
    pub fn new(n: usize) -> Frame {
        Frame {
            s: vec![0; n],
            a: vec![None; n],
            t: vec![None; n],
            ret_s: 0,
            ret_a: None,
            ret_t: None,
            ret_tuple: Vec::new(),
        }
    }
}

/// A string value: shared, so a copy is a reference count, and growable in
/// place while only one variable holds it, so `s += t` in a loop appends
/// (amortised) instead of copying all of `s` each time.
pub type Text = Rc<String>;

/// A value of any type, for builtins, registered functions and the REPL.
#[derive(Debug, Clone)]
pub enum RtVal {
    Scalar(Value),
    Array(Array),
    Unit,
    Str(Text),
    Type(Scalar),
}
