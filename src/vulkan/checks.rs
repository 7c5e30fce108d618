//! Kernel faults read back from the fault buffer
//! ([`compiler::abi::fault`]) as diagnostics: bounds-check mode's index and
//! divisor violations (the same diagnostics as the host reference), the loop
//! watchdog, and loops a driver cut short.

use crate::interp::error;
use compiler::abi::fault::{self, Record};
use lang::Diag;

/// The diagnostic of a recorded fault.
pub fn diagnostic(r: &Record) -> Box<Diag> {
    match r.code {
        fault::BOUNDS => {
            error::out_of_bounds(r.span, r.whole, r.axis as usize, r.index, r.a as usize)
        }
        fault::SECTION => {
            let (lo, hi) = (r.a, r.a.saturating_add(r.b));
            let mut d = Diag::error(
                "accl::device::outside_section",
                format!(
                    "row {} is outside the rows {lo}..{hi} of this array present on the device",
                    r.index
                ),
                r.span,
                format!("row {}", r.index),
            );
            if r.whole != r.span && !r.whole.is_empty() {
                d = d.with_label(r.whole, "in this access");
            }
            Box::new(d.with_help(
                "the data clause put only those rows on the device: widen its section, \
                 or index inside it",
            ))
        }
        fault::DIV_ZERO => error::div_by_zero(r.span),
        fault::LOOP_BUDGET => Box::new(
            Diag::error(
                "accl::device::loop_budget",
                format!(
                    "a kernel invocation went round its loops more than {} times",
                    r.a
                ),
                r.span,
                "stopped in this loop",
            )
            .with_help(
                "does this loop ever end? If it is meant to run this long, raise the \
                 watchdog's budget: `accl run --loop-budget N`, `Engine::set_loop_budget(n)` \
                 (0 turns it off)",
            ),
        ),
        fault::LOOP_CUT => Box::new(
            Diag::error(
                "accl::device::loop_cut",
                "the Vulkan driver ended this loop before it finished",
                r.span,
                "this loop was cut short",
            )
            .with_help(
                "llvmpipe (lavapipe) ends a loop after 65,535 iterations; the kernel's \
                 results would be wrong, so none were copied back. Run it on a GPU, or \
                 with `--host`",
            ),
        ),
        c => error::internal(r.span, &format!("unknown kernel fault code {c}")),
    }
}
