//! The argument-count check every signature rule starts with.

use lang::Type;

/// `Ok` when `args` has `n` arguments; else the message saying so.
pub(super) fn count(args: &[Type], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "takes {n} argument{} but {} {} given",
            if n == 1 { "" } else { "s" },
            args.len(),
            if args.len() == 1 { "was" } else { "were" }
        ))
    }
}
