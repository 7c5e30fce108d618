//! What compiling an input makes: the front end's result ([`Prepared`])
//! and the [`Program`] a later `run` binds and runs. Below both the front
//! end (`super::eval`) and compile-and-run (`super::program`), which make
//! and read them.

use super::sources::SourceMap;
use crate::interp;
use lang::Type;
use std::collections::HashMap;
use std::rc::Rc;

/// A checked and compiled input, run with [`crate::Engine::run`] as often as
/// needed without being parsed or checked again.
///
/// It is a snapshot: the `fn` and `const` declarations it sees are those of
/// the engine when it was compiled (a later redeclaration does not change
/// it). Running it is [`crate::Engine::eval`] of its text without the front end:
/// its `let`s, `fn`s and `const`s are kept by the engine afterwards.
///
/// ```
/// let mut e = accl::Engine::new();
/// e.eval("fn sq(x: f64) -> f64 { return x * x; } let acc = 0.0;").unwrap();
/// let p = e.compile("acc += sq(2.0); acc").unwrap();
/// for _ in 0..3 {
///     e.run(&p).unwrap();
/// }
/// assert_eq!(e.get::<f64>("acc"), Some(12.0));
/// ```
pub struct Program {
    /// The engine it was compiled by and its registration count then.
    pub(super) engine: u64,
    pub(super) host_gen: u64,
    /// The checked text and where its pieces came from.
    pub(super) map: Rc<SourceMap>,
    pub(super) compiled: interp::Compiled,
    /// The engine variables the text names: (slot, name, type).
    pub(super) globals: Vec<(usize, String, Type)>,
    /// Top-level `let`s and constant arrays: (slot, name, type, constant).
    pub(super) lets: Vec<(usize, String, Type, bool, bool)>,
    /// Its own `fn` and `const` declarations, and those of the files it
    /// imports.
    pub(super) decls: Vec<OwnDecl>,
    /// The files it imports (run with it; not again by later inputs).
    pub(super) imported: Vec<std::path::PathBuf>,
    /// Every identifier of the text (declarations included), and the
    /// signature of those that were registered Rust functions.
    pub(super) idents: Vec<String>,
    pub(super) host: HashMap<String, HostSig>,
}

/// A registered function's parameter and result types.
pub(super) type HostSig = (Vec<lang::Param>, Type);

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Program({})", self.map.input.name)
    }
}

/// What the front end made of one input (checked, with its source map).
pub(super) struct Prepared {
    pub map: SourceMap,
    pub prog: lang::hir::Program,
    /// The input's own `fn` and `const` declarations, and those of the
    /// files it imports.
    pub decls: Vec<OwnDecl>,
    /// The files the input imports that this engine had not run.
    pub imported: Vec<std::path::PathBuf>,
}

/// A `fn` or `const` an input declares: its name, its text (ending in `;`
/// or `}`) and where it starts in the input, or in the imported file
/// `from`.
#[derive(Clone)]
pub(super) struct OwnDecl {
    pub name: String,
    pub text: String,
    pub at: usize,
    pub from: Option<lang::Source>,
}
