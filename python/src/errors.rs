//! accl errors as Python exceptions: the one place a diagnostic becomes a
//! `PyErr`. The class follows the code's stage (`accl::<stage>::<what>`);
//! every class derives from `accl.Error` and carries the code, the message,
//! where it points and the rendered report.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_accl, Error, PyException, "Any accl diagnostic.");
create_exception!(_accl, ParseError, Error, "accl::lex::* and accl::parse::*.");
create_exception!(_accl, CheckError, Error, "accl::name::* and accl::type::*.");
create_exception!(
    _accl,
    DeviceError,
    Error,
    "accl::device::* and accl::compile::*."
);
create_exception!(
    _accl,
    RunError,
    Error,
    "accl::run::* (run time and limits)."
);
create_exception!(
    _accl,
    ApiError,
    Error,
    "accl::api::*, accl::engine::* and the package's own argument errors."
);

/// Width the reports are rendered at (as the REPL renders them).
const WIDTH: usize = 100;

/// Register the classes on the module.
pub fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("CheckError", py.get_type::<CheckError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("ApiError", py.get_type::<ApiError>())?;
    Ok(())
}

/// The exception of an accl error, with its attributes set.
pub fn to_py(py: Python<'_>, e: &accl::Error) -> PyErr {
    let code = e.code();
    let first = e.diags.iter().find(|d| d.is_error()).or(e.diags.first());
    let message = first.map(|d| d.message.clone()).unwrap_or_default();
    let err = match code.split("::").nth(1).unwrap_or("") {
        "lex" | "parse" => ParseError::new_err(e.to_string()),
        "name" | "type" => CheckError::new_err(e.to_string()),
        "device" | "compile" => DeviceError::new_err(e.to_string()),
        "run" => RunError::new_err(e.to_string()),
        _ => ApiError::new_err(e.to_string()),
    };
    let at = first
        .and_then(|d| d.labels.first())
        .filter(|_| !e.source.text.is_empty())
        .map(|(span, _)| {
            let (file, line, col) = e.source.locate(span.start as usize);
            let (_, end_line, end_col) = e.source.locate(span.end as usize);
            (file.to_string(), line, col, end_line, end_col)
        });
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("message", &message)?;
        value.setattr("help", first.and_then(|d| d.help.clone()))?;
        value.setattr("report", e.render(WIDTH))?;
        match &at {
            Some((file, line, col, end_line, end_col)) => {
                value.setattr("file", file)?;
                value.setattr("line", line)?;
                value.setattr("column", col)?;
                value.setattr("span", (line, col, end_line, end_col))?;
            }
            None => {
                for a in ["file", "line", "column", "span"] {
                    value.setattr(a, py.None())?;
                }
            }
        }
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// An argument the package cannot pass (`accl::api::argument`), raised
/// with the same attributes as an engine's own error.
pub fn argument(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    api(py, "accl::api::argument", msg)
}

/// An error of the package's own API under `code`.
pub fn api(py: Python<'_>, code: &'static str, msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    let e = accl::Error {
        diags: vec![accl::lang::Diag::error(
            code,
            msg,
            accl::lang::Span::default(),
            "",
        )],
        source: accl::lang::Source::new("<api>", ""),
    };
    to_py(py, &e)
}
