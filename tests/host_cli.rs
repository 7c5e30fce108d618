//! `accl run`: exit status and diagnostics.

use std::process::{Command, Stdio};

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

#[test]
fn bench_device_runs_only_the_named_workloads() {
    let out = accl()
        .args(["bench", "device", "--only", "histogram,nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not `nope`") && err.contains("spmv"), "{err}");
    // On the test machine's device (lavapipe in CI), at the small sizes.
    let text = succeeds(&[
        "bench",
        "device",
        "--sizes",
        "cpu",
        "--runs",
        "1",
        "--only",
        "histogram",
    ]);
    assert!(
        text.contains("histogram ") && text.contains("array reduction"),
        "{text}"
    );
    assert!(!text.contains("saxpy") && !text.contains("JIT"), "{text}");
}

/// The stdout of `accl args`, with the validation layer on, which must
/// succeed.
fn succeeds(args: &[&str]) -> String {
    let out = accl()
        .env("ACCL_VALIDATION", "1")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn bench_async_spreads_over_the_devices_asked_for() {
    let out = accl()
        .args(["bench", "async", "--devices", "9", "--runs", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--devices 9: this machine has"), "{err}");
    // The test machine's first device alone (lavapipe in CI).
    let text = succeeds(&[
        "bench",
        "async",
        "--devices",
        "1",
        "--runs",
        "1",
        "--side",
        "64",
    ]);
    assert!(text.contains("mandelbrot multi  64x64"), "{text}");
    assert!(text.contains(", 1 device ("), "{text}");
    assert!(text.contains("the host issued the 16 blocks in"), "{text}");
}

#[test]
fn run_reads_stdin_skips_a_shebang_and_exits_with_a_code() {
    use std::io::Write;
    let mut child = accl()
        .args(["run", "--host", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"#!/usr/bin/env -S accl run\nprintln(40 + 2);\nexit(7);\nprintln(0);\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
}

#[test]
fn exit_gives_the_shell_the_low_byte_as_c_does() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("e.accl");
    // n & 255 worked by hand: -1 -> 255, -2 -> 254, 300 -> 44, 256 -> 0.
    for (n, status) in [(-1, 255), (-2, 254), (300, 44), (256, 0), (3, 3)] {
        std::fs::write(&f, format!("exit({n});\n")).unwrap();
        let out = accl().args(["run", "--host"]).arg(&f).output().unwrap();
        assert_eq!(out.status.code(), Some(status), "exit({n})");
        assert!(out.stderr.is_empty(), "exit({n}) is quiet");
    }
}

#[test]
fn eprintln_writes_to_stderr_and_println_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("e.accl");
    std::fs::write(
        &f,
        "eprint(\"warn \", 1 + 1);\neprintln(\"!\");\nprintln(\"out\");\n",
    )
    .unwrap();
    let out = accl().args(["run", "--host"]).arg(&f).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "warn 2!\n");
}

#[test]
fn doubling_a_string_under_ulimit_v_is_a_diagnostic_not_an_abort() {
    // The default limit takes a quarter of the address space (a quarter of
    // 1 GB here: 256,000,000 bytes), so the doubling stops at the limit's
    // diagnostic (exit status 1), not in the allocator's abort (134).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d.accl");
    std::fs::write(&f, "let s = \"ab\";\nfor i in 0..60 { s += s; }\n").unwrap();
    let cmd = format!(
        "ulimit -v 1000000 && exec '{}' run --host '{}'",
        env!("CARGO_BIN_EXE_accl"),
        f.display()
    );
    let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("accl::run::memory_limit"), "{err}");
    assert!(err.contains("more than the limit of 256000000"), "{err}");
}

#[test]
fn run_passes_parameters_after_the_file_or_after_two_dashes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.accl");
    std::fs::write(
        &f,
        "println(nargs(), \" \", arg_i32(0) + 1, \" \", arg(1), \" \", getenv(\"ACCL_CLI_TEST_VAR\"));\n",
    )
    .unwrap();
    for extra in [&["41", "b"][..], &["--", "41", "b"][..]] {
        let out = accl()
            .args(["run", "--host"])
            .arg(&f)
            .args(extra)
            .env("ACCL_CLI_TEST_VAR", "seen")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2 42 b seen\n");
    }
    // A parameter that is not a number: the call is located.
    let out = accl()
        .args(["run", "--host"])
        .arg(&f)
        .args(["--", "-x", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("parameter 0 is `-x`"), "{err}");
}

#[test]
fn a_bad_trace_path_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.accl");
    std::fs::write(&f, "println(1);\n").unwrap();
    let out = accl()
        .args(["run", "--trace", "/nonexistent-dir/t.json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // The script did not run.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// The `host phases` rows of `--time`'s output: name, count (None for
/// `-`), total ms and share.
fn host_phases(stderr: &str) -> Vec<(String, Option<u64>, f64, f64)> {
    stderr
        .lines()
        .skip_while(|l| !l.starts_with("host phases"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let n = w.len();
            assert!(n >= 4, "{l}");
            let share = w[n - 1].trim_end_matches('%').parse().unwrap();
            let total = w[n - 2].parse().unwrap();
            let count = w[n - 3].parse().ok();
            (w[..n - 3].join(" "), count, total, share)
        })
        .collect()
}

#[test]
fn run_time_splits_the_wall_time_by_host_phase() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "1,2\n3,4\n").unwrap();
    std::fs::write(
        dir.path().join("t.accl"),
        "fn sq(x: f64) -> f64 { return x * x; }
let a = load_csv(f32, \"t.csv\");
let s = 0.0;
for i in 0..4 { s += sq(i as f64); }
let x = zeros(f32, 4);
parallel loop for i in 0..4 { x[i] = a[i / 2, i % 2] * 2.0; }
save_npy(x, \"x.npy\");
println(s, \" \", x[3]);
",
    )
    .unwrap();
    for host in [true, false] {
        let mut cmd = accl();
        cmd.current_dir(dir.path()).args(["run", "--time"]);
        if host {
            cmd.arg("--host");
        }
        let out = cmd.arg("t.accl").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        // 0 + 1 + 4 + 9; x[3] = 4 * 2.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "14 8\n");
        let rows = host_phases(&err);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "parse and check",
                "open the device",
                "compile (host code, kernels)",
                "compiled host code",
                "interpreted host code",
                "file I/O",
                "launches",
                "waits",
                "copies",
                "other"
            ],
            "{err}"
        );
        let count = |name: &str| rows.iter().find(|r| r.0 == name).unwrap().1;
        // load_csv and save_npy; the loop calling `sq`, compiled, entered
        // once, and on the host the construct's compiled loop nest too.
        assert_eq!(count("file I/O"), Some(2), "{err}");
        assert_eq!(
            count("compiled host code"),
            Some(if host { 2 } else { 1 }),
            "{err}"
        );
        assert_eq!(count("launches"), Some(if host { 0 } else { 1 }), "{err}");
        // The device opened once, on a thread of its own from the
        // program's compile on (the row is the time the run waited for it).
        assert_eq!(
            count("open the device"),
            Some(if host { 0 } else { 1 }),
            "{err}"
        );
        assert_eq!(
            err.contains("opened on a thread of their own: 1 device(s) in "),
            !host,
            "{err}"
        );
        // The rows split the wall time: their shares add up to 100%
        // (each rounded to 0.1%).
        let share: f64 = rows.iter().map(|r| r.3).sum();
        assert!((share - 100.0).abs() < 1.0, "{share}% in\n{err}");
    }
}

#[test]
fn run_time_prints_a_table_per_kernel_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.accl");
    std::fs::write(
        &f,
        "let x = zeros(f32, 1000); enter data copyin(x);
parallel loop present(x) for i in 0..1000 { x[i] = i as f32; }
for r in 0..3 { parallel loop present(x) for i in 0..1000 { x[i] = x[i] * 0.5; } }
exit data copyout(x);
",
    )
    .unwrap();
    let out = accl().args(["run", "--time"]).arg(&f).output().unwrap();
    assert!(out.status.success());
    // Figures vary from run to run: the snapshot keeps the shape.
    let err = String::from_utf8_lossy(&out.stderr);
    let shape: String = err
        .lines()
        .map(|l| {
            let mut s = String::new();
            let mut last_digit = false;
            for ch in l.chars() {
                let digitish = ch.is_ascii_digit() || (last_digit && ch == '.');
                if digitish && !last_digit {
                    s.push('N');
                } else if !digitish {
                    s.push(ch);
                }
                last_digit = digitish;
            }
            s.split_whitespace().collect::<Vec<_>>().join(" ") + "\n"
        })
        .collect();
    // Rows are ordered by time, and an upload and a download of the same
    // array take about as long: their order is not part of the shape.
    let mut lines: Vec<&str> = shape.lines().collect();
    if let (Some(a), Some(b)) = (
        lines.iter().position(|l| l.starts_with("copies")),
        lines.iter().position(|l| *l == "host"),
    ) {
        lines[a + 1..b].sort_unstable();
    }
    insta::assert_snapshot!("run_time_table", lines.join("\n") + "\n");
}

#[test]
fn the_repl_takes_bare_exit_quit_and_help() {
    use std::io::Write;
    for (input, want_out, not_out) in [
        ("println(1);\nhelp\nexit\nprintln(2);\n", ":explain", "2\n"),
        ("println(1);\nquit;\nprintln(2);\n", "1\n", "2\n"),
        // A variable named `help` is printed, not the help.
        ("let help = 41 + 1;\nhelp\n", "42", ":explain"),
    ] {
        let mut child = accl()
            .arg("--host")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{input}: {text}");
        assert!(text.contains(want_out), "{input}: {text}");
        assert!(!text.contains(not_out), "{input}: {text}");
    }
}

#[test]
fn host_runs_refuse_a_loop_budget_and_api_errors_have_no_empty_box() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.accl");
    std::fs::write(&f, "while true { }\n").unwrap();
    // Refused up front rather than accepted and then running forever.
    let out = accl()
        .args(["run", "--host", "--loop-budget", "10"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--loop-budget"));
    // A device that cannot be opened: one line with the code, no box.
    let g = dir.path().join("g.accl");
    std::fs::write(&g, "println(1);\n").unwrap();
    let out = accl()
        .args(["run"])
        .arg(&g)
        .env("VK_ICD_FILENAMES", "/nonexistent-icd.json")
        .env_remove("VK_DRIVER_FILES")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("accl::device::open"), "{err}");
    assert!(!err.contains("<api>") && !err.contains('╭'), "{err}");
}

#[test]
fn completions_print_a_script_naming_the_subcommands() {
    let out = accl().args(["completions", "bash"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("_accl()"), "{script}");
    for sub in [
        "run",
        "check",
        "devices",
        "spirv",
        "bench",
        "completions",
        "lsp",
    ] {
        assert!(script.contains(sub), "no `{sub}` in\n{script}");
    }
    // Options of a subcommand too.
    assert!(script.contains("--loop-budget"), "{script}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = accl().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
    let out = accl().args(["completions", "tcsh"]).output().unwrap();
    assert!(!out.status.success());
}

/// `accl --version`: `accl X.Y.Z (commit abc1234)`, then the Vulkan driver
/// of device 0 or why there is none; it never fails.
#[test]
fn version_names_the_commit_and_the_vulkan_driver() {
    let check = |out: std::process::Output, want_device: Option<bool>| {
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        let head = format!("accl {} (commit ", env!("CARGO_PKG_VERSION"));
        let commit = lines[0]
            .strip_prefix(&head)
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            commit == "unknown"
                || (commit.len() >= 4 && commit.chars().all(|c| c.is_ascii_hexdigit())),
            "{text}"
        );
        match lines[1].strip_prefix("device 0: ") {
            Some(d) => {
                assert_ne!(want_device, Some(false), "{text}");
                let (_, api) = d
                    .rsplit_once(", Vulkan ")
                    .unwrap_or_else(|| panic!("{text}"));
                let parts: Vec<&str> = api.split('.').collect();
                assert_eq!(parts.len(), 3, "{text}");
                assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "{text}");
                assert!(d.contains("version "), "{text}");
            }
            None => {
                assert_ne!(want_device, Some(true), "{text}");
                let why = lines[1].strip_prefix("no Vulkan device: ");
                assert!(why.is_some_and(|w| !w.trim().is_empty()), "{text}");
            }
        }
    };
    // Whatever this machine has.
    check(accl().arg("--version").output().unwrap(), None);
    check(accl().arg("-V").output().unwrap(), None);
    // No driver at all: the reason, and still success.
    let none = "/nonexistent/accl_icd.json";
    let out = accl()
        .arg("--version")
        .env("VK_ICD_FILENAMES", none)
        .env("VK_DRIVER_FILES", none)
        .env_remove("VK_ADD_DRIVER_FILES")
        .output()
        .unwrap();
    check(out, Some(false));
}

#[test]
fn a_reader_that_goes_away_ends_no_run_in_a_panic() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.accl");
    std::fs::write(&f, "for i in 0..200000 { println(\"line \", i); }\n").unwrap();
    let mut child = accl()
        .args(["run", "--host"])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "line 0\n");
    // The reader is dropped here, as `head -1` exits.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

#[test]
fn every_command_ends_quietly_on_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = "let a = zeros(f32, 4);\nparallel loop for i in 0..4 {\n    a[i] = 1.0;\n}\n";
    std::fs::write(dir.path().join("k.accl"), kernel).unwrap();
    std::fs::write(dir.path().join("unformatted.accl"), "let a=zeros(f32,4);\n").unwrap();
    std::fs::write(
        dir.path().join("print.accl"),
        "for i in 0..1000 { println(i); }\n",
    )
    .unwrap();
    for args in [
        &["spirv", "k.accl"][..],
        &["check", "--explain", "k.accl"],
        &["fmt", "--check", "unformatted.accl"],
        &["devices"],
        &["completions", "bash"],
        &["bench", "host", "--n", "1000", "--runs", "1"],
        &["--version"],
        &["--help"],
        &["help", "run"],
        &["run", "--host", "print.accl"],
    ] {
        // The reader is gone before the first line (`accl spirv x | head -0`),
        // so every write to stdout fails.
        let out = with_a_closed_stream(args, dir.path(), true);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// The same for stderr: diagnostics and errors whose reader went away
/// (`accl check bad.accl 2>&1 | head -0`) end the command with its own
/// exit code, not a panic.
#[test]
fn errors_end_quietly_on_a_closed_stderr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.accl"), "let x = ;\n").unwrap();
    std::fs::write(
        dir.path().join("fails.accl"),
        "let a = zeros(f32, 2);\nprintln(a[5]);\n",
    )
    .unwrap();
    for (args, code) in [
        (&["check", "bad.accl"][..], 1),
        (&["run", "--host", "bad.accl"], 1),
        (&["run", "--host", "fails.accl"], 1),
        (&["run", "--host", "missing.accl"], 1),
        (&["spirv", "bad.accl"], 1),
    ] {
        let out = with_a_closed_stream(args, dir.path(), false);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}

/// `accl args` in `dir` with the reader of its stdout (or stderr) gone
/// before it writes anything.
fn with_a_closed_stream(
    args: &[&str],
    dir: &std::path::Path,
    stdout: bool,
) -> std::process::Output {
    let mut child = accl()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if stdout {
        drop(child.stdout.take());
    } else {
        drop(child.stderr.take());
    }
    child.wait_with_output().unwrap()
}

/// `accl devices` says how each device's kernels divide and take roots in
/// f32: lavapipe rounds them correctly itself, and `ACCL_EXACT_F32=1` takes
/// the f64 route there too.
#[test]
fn devices_say_how_f32_division_is_rounded() {
    let lines = |exact: Option<&str>| {
        let mut c = accl();
        c.arg("devices").env_remove("ACCL_EXACT_F32");
        if let Some(v) = exact {
            c.env("ACCL_EXACT_F32", v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("f32 `/` and `sqrt`"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let plain = lines(None);
    assert!(!plain.is_empty());
    assert!(
        plain
            .iter()
            .all(|l| l.ends_with("the driver's instructions")),
        "{plain:?}"
    );
    for (knob, how) in [
        // The route of a GPU whose `Fma` is not known to be fused.
        ("1", "computed in f64, correctly rounded"),
        ("fma", "refined with fma, correctly rounded"),
        ("fma-f64", "fma (computed in f64), correctly rounded"),
        ("f64", "computed in f64, correctly rounded"),
    ] {
        let exact = lines(Some(knob));
        assert!(exact.iter().all(|l| l.ends_with(how)), "{knob}: {exact:?}");
    }
}
