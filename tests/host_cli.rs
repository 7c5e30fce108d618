//! `accl run`: exit status and diagnostics.

use std::process::Command;

fn accl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_accl"))
}

#[test]
fn run_host_succeeds_and_fails_with_status_one() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.accl");
    std::fs::write(
        &ok,
        "let a = arange(i32, 4);\nparallel loop for i in 0..4 { a[i] *= 2; }\nprintln(a);\n",
    )
    .unwrap();
    for args in [&["run", "--host"][..], &["run"][..]] {
        let out = accl()
            .args(args)
            .arg(&ok)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "[0 2 4 6]\n");
    }
    let bad = dir.path().join("bad.accl");
    std::fs::write(&bad, "let a = zeros(f32, 2);\nlet i = 2;\na[i] = 1.0;\n").unwrap();
    let out = accl().args(["run", "--host"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("accl::run::index_out_of_bounds"), "{err}");
    assert!(err.contains("index 2, extent 2"), "{err}");
}

#[test]
fn run_writes_files_relative_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.accl");
    std::fs::write(&f, "save_npy(arange(f64, 3), \"out.npy\");").unwrap();
    let out = accl()
        .args(["run", "--host"])
        .arg(&f)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("out.npy").exists());
}

#[test]
fn bench_runs_small() {
    let out = accl()
        .args(["bench", "host", "--n", "1000", "--runs", "3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("iterations/s"));
}
