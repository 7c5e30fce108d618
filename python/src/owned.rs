//! Values that belong to one thread, inside Python objects that any
//! thread may hold.
//!
//! An engine and its arrays are reference-counted without atomics (the
//! embedding API's `Engine` is not `Send`). pyo3's `unsendable` classes
//! would panic when another thread touches them; [`Owned`] instead gives
//! the value only to the thread that made it and raises `RuntimeError`
//! elsewhere, and a value dropped on another thread (its Python object
//! freed there) is leaked rather than dropped, as pyo3 does.

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;
use std::mem::ManuallyDrop;
use std::thread::{self, ThreadId};

pub struct Owned<T> {
    owner: ThreadId,
    value: ManuallyDrop<T>,
}

// SAFETY: the value is reached only through `get`/`get_mut`, which hand it
// out on the owner thread alone, and it is dropped only there.
unsafe impl<T> Send for Owned<T> {}
unsafe impl<T> Sync for Owned<T> {}

fn elsewhere() -> pyo3::PyErr {
    PyRuntimeError::new_err(
        "an accl engine and its arrays belong to the thread that made them: make an engine on this thread",
    )
}

impl<T> Owned<T> {
    pub fn new(value: T) -> Owned<T> {
        Owned {
            owner: thread::current().id(),
            value: ManuallyDrop::new(value),
        }
    }

    pub fn get(&self) -> PyResult<&T> {
        if thread::current().id() == self.owner {
            Ok(&self.value)
        } else {
            Err(elsewhere())
        }
    }

    pub fn get_mut(&mut self) -> PyResult<&mut T> {
        if thread::current().id() == self.owner {
            Ok(&mut self.value)
        } else {
            Err(elsewhere())
        }
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if thread::current().id() == self.owner {
            // SAFETY: dropped once, here, on the owner thread.
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}
