//! accl from Python (`import accl`): the native module `accl._accl`. A
//! thin layer over the embedding API: conversions in `convert` (NumPy
//! memory borrowed without a copy in `borrow`), errors in
//! `errors`, the classes in `engine`; the Python package (`accl/`) adds
//! the Jupyter kernel and the `%%accl` magic.

mod borrow;
mod convert;
mod engine;
mod errors;
mod owned;

use pyo3::prelude::*;

/// Device lines of every Vulkan device (`accl devices`' numbering), empty
/// when there is no Vulkan driver.
#[pyfunction]
fn devices() -> Vec<String> {
    accl::Engine::vulkan_devices(Some("all"), 0)
        .map(|e| e.devices())
        .unwrap_or_default()
}

/// A new accl array of zeros as a NumPy array (passed to accl without a
/// copy).
#[pyfunction]
fn zeros<'py>(py: Python<'py>, shape: Vec<usize>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    convert::zeros(py, shape, dtype)
}

/// Whether a NumPy array views a whole accl array.
#[pyfunction]
fn is_shared(a: &Bound<'_, PyAny>) -> bool {
    convert::is_shared(a)
}

/// Whether passing a NumPy array to an accl function copies it (it is
/// neither in accl's memory nor borrowable: Fortran order, strided,
/// read-only, misaligned, bool).
#[pyfunction]
fn is_copied(a: &Bound<'_, PyAny>) -> bool {
    convert::is_copied(a)
}

#[pymodule]
fn _accl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<engine::Engine>()?;
    m.add_class::<engine::Module>()?;
    m.add_class::<engine::Function>()?;
    m.add_class::<convert::Buffer>()?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(is_shared, m)?)?;
    m.add_function(wrap_pyfunction!(is_copied, m)?)?;
    errors::add(m)?;
    Ok(())
}
