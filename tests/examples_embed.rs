//! The embedding examples (`examples/embed*.rs`) run and succeed: `cargo
//! test` builds them next to the test binaries (`embed_ndarray` with the
//! `ndarray` feature, which scripts/test turns on).

use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn every_embedding_example_runs() {
    let mut examples = vec![
        ("embed", ""),
        ("embed_errors", "accl::run::index_out_of_bounds"),
        ("embed_call", "y[7] after 10 steps = 66.5"),
        (
            "embed_compile",
            "after `acc` became i32: accl::api::stale_program",
        ),
        ("embed_thread", "4 threads shared one engine"),
        ("embed_send", "the engine moved to a worker thread and back: sum = 1000000"),
        (
            "embed_vulkan",
            "the host program's shader filled accl's buffer on the program's own device: a[9999] = 5000.5",
        ),
    ];
    if cfg!(feature = "ndarray") {
        examples.push(("embed_ndarray", "moved in and out without a copy"));
    }
    for (name, says) in examples {
        let path = example(name);
        assert!(
            path.exists(),
            "{} was not built: `cargo test` with no target filter builds the examples (or `cargo build --examples`)",
            path.display()
        );
        let out = Command::new(&path).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(says), "{name}: {text}");
    }
}
