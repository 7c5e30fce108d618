//! Fuzz target `pipeline`: a small UTF-8 program (at most 4 KiB) through the
//! whole host pipeline: `accl::Engine` (front end, lowering to the
//! interpreter's code, interpreting, device constructs on the host backend).
//!
//! The input may hold up to three programs separated by a NUL byte; they are
//! evaluated one after another in one engine, which exercises what an engine
//! keeps between inputs (variables, `fn`/`const` declarations).
//!
//! Limits keep every input small in time and memory (docs/fuzzing.md): an
//! operation budget, call depth, array size and a wall-clock limit well under
//! libFuzzer's `-timeout`. Output is discarded; errors are rendered.
//!
//! Oracle: no panic, no hang, no sanitizer report, no allocation past
//! libFuzzer's `-rss_limit_mb`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::time::Duration;

const MAX_LEN: usize = 4096;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut e = accl::Engine::new();
    e.set_max_operations(200_000)
        .set_max_call_depth(64)
        .set_max_array_bytes(1 << 20)
        .set_time_limit(Some(Duration::from_secs(1)))
        .set_print(|_| {});
    for part in src.split('\0').take(3) {
        if let Err(err) = e.eval(part) {
            assert!(!err.diags.is_empty(), "an error without diagnostics");
            let _ = err.render(80);
            // What the CLI prints on a terminal (the first one: rendering
            // is slow, and the plain rendering above saw them all).
            if let Some(r) = err.reports().first() {
                let _ = format!("{r:?}");
            }
        }
    }
});
