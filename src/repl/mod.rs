//! The interactive session (`accl` with no arguments). Issue 7 builds it.

use crate::Engine;
use std::process::ExitCode;

/// Run an interactive session on `engine` until the user quits.
pub fn run(engine: Engine) -> ExitCode {
    let _ = engine;
    eprintln!("accl: the interactive session is not built yet; see `accl --help`");
    ExitCode::FAILURE
}
