//! The accl standard library: every builtin function and constant, declared
//! once here with its typing rule and effect (the checker consults this
//! table; it hard-wires no builtin), plus their host implementations.
//!
//! ```
//! let b = stdlib::builtins();
//! let sqrt = b.lookup("sqrt").unwrap();
//! assert!(b.get(sqrt).effect.device_legal());
//! ```
//!
//! Host implementations: [`array`] (the array value itself), [`math`],
//! [`ops`] (constructors and whole-array reductions), [`format`] (`print`),
//! [`npy`] (`load_npy`/`save_npy`), [`image`] (`write_png`); [`mpi`] (the
//! MPI builtins' signatures).

pub mod array;
pub mod buf;
pub mod csvio;
pub mod format;
pub mod image;
pub mod math;
pub mod mpi;
pub mod npy;
pub mod ops;
pub mod sigs;
pub mod text;

pub use array::{Array, Buf, Data, Elem};
pub use sigs::builtins;
