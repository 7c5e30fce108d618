//! Limits on what a script may take, and limits a script must not hit by
//! accident, on the host reference and on the device backend (lavapipe,
//! validation on): strings count against the memory limit and fail with a
//! located error instead of aborting the process; a long chain of one
//! operator is not "deep"; recursion goes as deep as the call-depth limit
//! says, on a stack that grows.

use crate::common;
use accl::Engine;
use std::process::Command;

fn accl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_accl"))
}

fn engine(device: bool) -> Engine {
    common::set_env_once(&[]);
    if device {
        common::device_engine()
    } else {
        Engine::new()
    }
}

/// Runs `src`, which must fail with `code`; then the same engine runs a
/// correct program.
fn fails_with(e: &mut Engine, src: &str, code: &str) -> String {
    let err = e.eval(src).expect_err("the script must fail");
    let text = err.render(100);
    assert_eq!(err.code(), code, "{text}");
    e.eval("let ok_after = 1 + 2;").unwrap();
    assert_eq!(e.get::<i32>("ok_after"), Some(3));
    text
}

const DOUBLING: &str = "let s = \"ab\";\nfor i in 0..60 { s = s + s; }\n";

#[test]
fn a_string_that_doubles_forever_stops_at_the_memory_limit() {
    for device in [false, true] {
        let mut e = engine(device);
        e.set_max_array_bytes(1 << 20);
        let text = fails_with(&mut e, DOUBLING, "accl::run::memory_limit");
        assert!(text.contains("more than the limit of 1048576"), "{text}");
        // The label is on the `+`, in the source.
        assert!(text.contains("s + s"), "{text}");
        // `+=` too.
        fails_with(
            &mut e,
            "let t = \"ab\"; for i in 0..60 { t += t; }",
            "accl::run::memory_limit",
        );
    }
}

#[test]
fn format_widths_and_join_count_against_the_memory_limit() {
    for device in [false, true] {
        let mut e = engine(device);
        e.set_max_array_bytes(1 << 20);
        // Each placeholder is at most 2^16 wide; many of them are not.
        fails_with(
            &mut e,
            "let f = \"{0:60000}\"; for i in 0..6 { f = f + f; } let s = format(f, 1);",
            "accl::run::memory_limit",
        );
        fails_with(
            &mut e,
            "let s = format(\"{:60000}\", 1); let t = join(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s);",
            "accl::run::memory_limit",
        );
        // Under the limit, both work.
        e.eval("let w = format(\"{:>5}|{:.2}\", 7, 1.0); let j = join(\"-\", 1, \"a\");")
            .unwrap();
        assert_eq!(e.get_str("w").as_deref(), Some("    7|1.00"));
        assert_eq!(e.get_str("j").as_deref(), Some("1-a"));
    }
}

#[test]
fn the_cli_stops_a_runaway_string_with_a_diagnostic_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("double.accl");
    std::fs::write(&f, DOUBLING).unwrap();
    for backend in [&["--host"][..], &[][..]] {
        let out = accl()
            .arg("run")
            .args(backend)
            .args(["--max-memory", "64M"])
            .arg(&f)
            .env("ACCL_VALIDATION", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{backend:?}: {err}");
        assert!(err.contains("accl::run::memory_limit"), "{err}");
        assert!(err.contains("67108864"), "{err}");
    }
    // A bad size is refused by the argument parser.
    let out = accl()
        .args(["run", "--host", "--max-memory", "lots"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_cli_has_a_memory_limit_from_the_machine() {
    let m = accl::cli::default_memory_limit();
    assert!(m > 0, "no limit from /proc/meminfo");
    assert_eq!(accl::cli::parse_bytes("64M"), Ok(64 << 20));
    assert_eq!(accl::cli::parse_bytes("3 GiB"), Ok(3 << 30));
    assert_eq!(accl::cli::parse_bytes("100"), Ok(100));
    assert!(accl::cli::parse_bytes("1X").is_err());
}

fn chain(op: &str, n: usize) -> String {
    vec!["1"; n].join(op)
}

#[test]
fn a_long_flat_chain_of_one_operator_is_not_deep() {
    for device in [false, true] {
        let mut e = engine(device);
        let src = format!(
            "let s = {};\nlet a = zeros(i32, 4);\nparallel loop for i in 0..4 {{ a[i] = {}; }}\nlet t = {};\n",
            chain(" + ", 5000),
            chain(" + ", 2000),
            chain(" * ", 5000),
        );
        e.eval(&src)
            .unwrap_or_else(|d| panic!("device {device}: {}", d.render(100)));
        assert_eq!(e.get::<i32>("s"), Some(5000));
        assert_eq!(e.get::<i32>("t"), Some(1));
        assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![2000; 4]);
    }
    // The checker alone (`accl check`) agrees.
    let builtins = accl::stdlib::builtins();
    let checked = accl::lang::check_source(&format!("let s = {};", chain(" - ", 9_000)), &builtins);
    assert!(checked.is_ok(), "{:?}", checked.err());
}

const DEEP: &str = "fn down(n: i32) -> i32 { if n == 0 { return 0; } return 1 + down(n - 1); }\n";

#[test]
fn recursion_goes_as_deep_as_the_limit_says_on_a_growing_stack() {
    for device in [false, true] {
        let mut e = engine(device);
        e.set_max_call_depth(100_000);
        e.eval(&format!("{DEEP}let d = down(60000);"))
            .unwrap_or_else(|d| panic!("{}", d.render(100)));
        assert_eq!(e.get::<i32>("d"), Some(60000));
        let text = fails_with(
            &mut e,
            "fn forever(n: i32) -> i32 { return forever(n + 1); } let x = forever(0);",
            "accl::run::recursion_limit",
        );
        assert!(text.contains("100000"), "{text}");
    }
}

#[test]
fn the_cli_allows_ten_thousand_calls_deep() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep.accl");
    std::fs::write(&f, format!("{DEEP}println(down(9990));\n")).unwrap();
    let out = accl().args(["run", "--host"]).arg(&f).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "9990\n");
    let out = accl()
        .args(["run", "--host", "--max-call-depth", "50"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("accl::run::recursion_limit"), "{err}");
}

#[test]
fn a_deep_bracket_error_shows_a_window_of_its_line() {
    let src = format!("let x = {}1{};\n", "(".repeat(2000), ")".repeat(2000));
    let mut e = Engine::new();
    let err = e.eval(&src).unwrap_err();
    assert_eq!(err.code(), "accl::parse::too_deep");
    let text = err.render(100);
    assert!(
        text.lines().all(|l| l.len() < 400),
        "a line of the diagnostic is too long:\n{text}"
    );
    assert!(text.contains("nesting limit reached here"), "{text}");
    // The CLI prints the same window.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep.accl");
    std::fs::write(&f, &src).unwrap();
    let out = accl().args(["check"]).arg(&f).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.len() < 3000, "{} bytes:\n{err}", err.len());
    assert!(err.contains("accl::parse::too_deep"), "{err}");
}

#[test]
fn loading_a_large_table_or_npy_counts_against_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let row = vec!["1.5"; 100].join(",");
    std::fs::write(dir.path().join("big.csv"), vec![row; 1000].join("\n")).unwrap();
    let mut w = Engine::new();
    w.set_fs_access(Some(dir.path().to_path_buf()));
    w.eval("save_npy(ones(f64, 100000), \"big.npy\");").unwrap();
    for device in [false, true] {
        let mut e = engine(device);
        e.set_fs_access(Some(dir.path().to_path_buf()));
        e.set_max_array_bytes(64 << 10);
        let text = fails_with(
            &mut e,
            "let t = load_csv(f64, \"big.csv\");",
            "accl::run::memory_limit",
        );
        assert!(text.contains("table"), "{text}");
        fails_with(
            &mut e,
            "let a = load_npy(f64, \"big.npy\");",
            "accl::run::memory_limit",
        );
        // Under the limit both load.
        e.set_max_array_bytes(1 << 20);
        e.eval("let t = load_csv(f64, \"big.csv\"); let a = load_npy(f64, \"big.npy\"); let s = sum(t) + sum(a);")
            .unwrap();
        assert_eq!(e.get::<f64>("s"), Some(150_000.0 + 100_000.0));
    }
}

#[test]
fn an_mpi_buffer_the_system_refuses_is_a_located_error_not_an_abort() {
    // Under an address-space limit with room for the 1 GiB array but not
    // for the copy `mpi_bcast` packs it into, the run ends with
    // `accl::run::out_of_memory` at the section (it aborted with exit 134).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bcast.accl");
    std::fs::write(
        &f,
        "let a = zeros(u8, 1 << 30);\nmpi_bcast(a, 0);\nprintln(\"sent\");\n",
    )
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1700000 && exec \"$0\" run --host --max-memory 2G {}",
            f.display()
        ))
        .arg(env!("CARGO_BIN_EXE_accl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("accl::run::out_of_memory"), "{err}");
    assert!(err.contains("MPI buffer"), "{err}");
    assert!(err.contains("mpi_bcast(a, 0)"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("sent"));
}
