//! Fuzz target `imports`: up to five small files (the input split at NUL
//! bytes: `main.accl`, `a.accl`, `b.accl`, `lib/c.accl`, `lib/d.accl`,
//! written to a folder of their own) that may import each other, through
//! every reader of imports: `accl check`'s (`accl::cli::check_source_text`,
//! the joined source rendered as the CLI renders it), the engine's (a host
//! engine under the pipeline target's limits, running `main.accl` by its
//! path) and the language server's (an edit session on the file's URI,
//! with requests at a few positions).
//!
//! Oracle: no panic, no hang (a cycle of imports, a file imported by
//! several), no sanitizer report; every error has diagnostics; no request
//! answered with an internal error and no `accl::internal` diagnostic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

const MAX_LEN: usize = 8192;
const NAMES: [&str; 5] = ["main.accl", "a.accl", "b.accl", "lib/c.accl", "lib/d.accl"];

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("accl_fuzz_imports_{}", std::process::id()));
        std::fs::create_dir_all(d.join("lib")).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let dir = folder();
    let texts: Vec<&str> = src.split('\0').take(NAMES.len()).collect();
    for (i, name) in NAMES.iter().enumerate() {
        let path = dir.join(name);
        match texts.get(i) {
            Some(t) => std::fs::write(&path, t).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let main = dir.join(NAMES[0]);
    let name = main.display().to_string();

    let (joined, diags) = accl::cli::check_source_text(&name, texts[0]);
    let _ = accl::lang::diag::render_plain(&joined, &diags, 80);

    let mut e = accl::Engine::new();
    e.set_max_operations(200_000)
        .set_max_call_depth(64)
        .set_max_array_bytes(1 << 20)
        .set_time_limit(Some(Duration::from_secs(1)))
        .set_print(|_| {});
    if let Err(err) = e.run_file(&main) {
        assert!(!err.diags.is_empty(), "an error without diagnostics");
        let _ = err.render(80);
    }

    let uri = format!("file://{name}");
    let session = vec![texts[0].to_string()];
    let failures = accl_lsp::fuzzing::edits_at(&uri, &session, &[(0, 0), (1, 4), (2, 8)]);
    assert!(failures.is_empty(), "{failures:?}");
});
