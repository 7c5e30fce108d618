//! The accl standard library: every builtin function and constant, declared
//! once here with its typing rule and effect (the checker consults this
//! table; it hard-wires no builtin), plus their host implementations.
//!
//! ```
//! let b = stdlib::builtins();
//! let sqrt = b.lookup("sqrt").unwrap();
//! assert!(b.get(sqrt).effect.device_legal());
//! ```

pub mod sigs;

pub use sigs::builtins;
