//! The REPL driven through a pseudo-terminal, as a person uses it: the real
//! `accl` binary on the host backend (no GPU needed; `:time`'s device table
//! on the Vulkan backend, lavapipe in CI), rustyline in raw mode, Ctrl-C as
//! a real SIGINT from the terminal's line discipline.
//!
//! Every step waits for output that only the step itself can produce (the
//! echo of typed text never contains it), so there is no sleeping.

use rexpect::reader::Options;
use rexpect::session::{spawn_with_options, PtySession};
use std::path::Path;
use std::process::{Command, Stdio};

const TIMEOUT_MS: u64 = 120_000;

fn spawn(history: &Path, strip_ansi: bool) -> PtySession {
    spawn_on(&["--host"], history, strip_ansi)
}

/// `accl` with `args` (no `--host`: the Vulkan backend) in a pty.
fn spawn_on(args: &[&str], history: &Path, strip_ansi: bool) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_accl"));
    cmd.args(args)
        .env("ACCL_HISTORY", history)
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    spawn_with_options(
        cmd,
        Options::new()
            .timeout_ms(Some(TIMEOUT_MS))
            .strip_ansi_escape_codes(strip_ansi),
    )
    .expect("spawn accl in a pty")
}

/// Wait for `needle`; on failure say what came before.
fn expect(p: &mut PtySession, needle: &str) -> String {
    match p.exp_string(needle) {
        Ok(before) => before,
        Err(e) => panic!("waiting for {needle:?}: {e}"),
    }
}

#[test]
fn a_session_in_a_pty() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let mut p = spawn(&history, true);
    expect(&mut p, "`:help` lists the commands");

    // A multi-line parallel loop entered line by line: the continuation
    // prompt shows while the brace is open.
    p.send_line("let a = arange(f32, 8);").unwrap();
    p.send_line("parallel loop for i in 0..8 {").unwrap();
    expect(&mut p, "  ... ");
    p.send_line("    a[i] = a[i] * 2.0 + 1.0;").unwrap();
    p.send_line("}").unwrap();

    // A trailing expression prints type, shape and preview.
    p.send_line("a").unwrap();
    expect(&mut p, "f32[], shape [8]");
    expect(&mut p, "[1 3 5 7 9 11 13 15]");

    // An error prints its diagnostic; the next input still sees `a`.
    p.send_line("let b = a[99];").unwrap();
    expect(&mut p, "index 99 is out of bounds");
    p.send_line("a[7] + 1.0").unwrap();
    expect(&mut p, "16 : f32");

    // Completion of a builtin and of a variable (one candidate: inline).
    p.send_line("let alpha_beta = 5;").unwrap();
    p.send("alpha_b\t").unwrap();
    p.send_line(" * 2").unwrap();
    expect(&mut p, "10 : i32");
    p.send("arang\t").unwrap();
    p.send_line("(i64, 3)").unwrap();
    expect(&mut p, "i64[], shape [3]");

    // Meta-commands.
    p.send_line(":type a[0] * 2.0").unwrap();
    expect(&mut p, "a[0] * 2.0 : f32");
    p.send_line(":vars").unwrap();
    expect(&mut p, "a           f32[]  shape [8]  host only");
    p.send_line("enter data copyin(a[2:4]);").unwrap();
    p.send_line(":present").unwrap();
    expect(&mut p, "[2:4] of 8");
    p.send_line(":spirv").unwrap();
    expect(
        &mut p,
        "no SPIR-V: the host backend runs parallel constructs",
    );

    // Ctrl-C stops a running `while true {}`; the session goes on. The
    // printed `spin2` (not in the echo) says the loop is running.
    p.send_line("println(\"spin\", 1 + 1); while true { }")
        .unwrap();
    expect(&mut p, "spin2");
    p.send_control('c').unwrap();
    expect(&mut p, "interrupted (Ctrl-C)");
    p.send_line("a[1] * 10.0").unwrap();
    expect(&mut p, "30 : f32");

    // Ctrl-C at an empty prompt does not exit.
    p.send_control('c').unwrap();
    expect(&mut p, "Ctrl-D or type :quit");
    p.send_line("alpha_beta + 1").unwrap();
    expect(&mut p, "6 : i32");

    // Ctrl-D exits, saving the history.
    p.send_control('d').unwrap();
    p.exp_eof().expect("accl exits on Ctrl-D");
    let saved = std::fs::read_to_string(&history).expect("history file written");
    assert!(saved.contains("a[7] + 1.0"), "{saved}");
    assert!(saved.contains("parallel loop for i in 0..8 {"), "{saved}");
}

#[test]
fn keywords_are_highlighted_and_history_is_recalled() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("h");
    std::fs::write(&history, "#V2\nlet remembered = 41;\n").unwrap();
    let mut p = spawn(&history, false);
    expect(&mut p, "Ctrl-D exits");
    // Typed text comes back coloured: a keyword, a type, a number.
    p.send("let z: f64 = 2.5").unwrap();
    p.flush().unwrap();
    expect(&mut p, "\x1b[1;35mlet\x1b[0m");
    expect(&mut p, "\x1b[36mf64\x1b[0m");
    expect(&mut p, "\x1b[33m2.5\x1b[0m");
    // Ctrl-C discards the line being typed (rustyline drops what was
    // typed after it, so wait for the new prompt's hint).
    p.send_control('c').unwrap();
    expect(&mut p, "(Ctrl-C: to leave");
    // Up arrow recalls the saved history entry.
    p.send("\x1b[A").unwrap();
    p.send_line("").unwrap();
    p.send_line("remembered + 1").unwrap();
    expect(&mut p, "42 \x1b[2m: i32");
    p.send_line(":quit").unwrap();
    p.exp_eof().expect("accl exits on :quit");
}

#[test]
fn each_input_is_its_own_source_in_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn(&dir.path().join("history"), true);
    expect(&mut p, "Ctrl-D exits");
    // A function declared over three lines, two inputs before the error.
    p.send_line("fn half(x: f64) -> f64 {").unwrap();
    p.send_line("    return x / 2.0;").unwrap();
    p.send_line("}").unwrap();
    p.send_line("let k = 1;").unwrap();
    p.send_line("let h = half(1.0, 2.0);").unwrap();
    // The error is on line 1 of input 3; `defined here` quotes input 1.
    expect(&mut p, "takes 1 argument but 2 were given");
    let before = expect(&mut p, "<input 3>:1:9]");
    let before = before + &expect(&mut p, "<input 1>:1:4]");
    let before = before + &expect(&mut p, "defined here");
    assert!(!before.contains("Failed to read"), "{before}");
    assert!(!before.contains("let k = 1;"), "{before}");
    // A one-line input after them: line 1, no earlier text quoted.
    p.send_line("let bad = k[0];").unwrap();
    let before = expect(&mut p, "<input 4>:1:11]");
    let before = before + &expect(&mut p, "not an array");
    assert!(!before.contains("fn half"), "{before}");
    p.send_line(":quit").unwrap();
    p.exp_eof().expect("accl exits on :quit");
}

#[test]
fn ctrl_d_on_a_continuation_line_discards_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn(&dir.path().join("history"), true);
    expect(&mut p, "Ctrl-D exits");
    p.send_line("fn unfinished(x: i32) -> i32 {").unwrap();
    expect(&mut p, "  ... ");
    p.send_line("    return x;").unwrap();
    expect(&mut p, "  ... ");
    // Ctrl-D on the empty continuation line: a note, the main prompt again.
    p.send_control('d').unwrap();
    expect(&mut p, "(Ctrl-D: unfinished input discarded)");
    expect(&mut p, "accl> ");
    // The discarded declaration is not in the session.
    p.send_line("let r = unfinished(1);").unwrap();
    expect(&mut p, "cannot find function `unfinished`");
    p.send_line("40 + 2").unwrap();
    expect(&mut p, "42 : i32");
    // Ctrl-D at the empty main prompt still leaves.
    p.send_control('d').unwrap();
    p.exp_eof().expect("accl exits on Ctrl-D");
}

/// `:time` prints the last input's time table, the one `accl run --time`
/// prints at exit: on the Vulkan backend (lavapipe in CI), its kernels by
/// line, copies, host compile/launch/wait time and the wall time.
#[test]
fn time_prints_the_last_inputs_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn_on(&[], &dir.path().join("history"), true);
    expect(&mut p, "on the vulkan backend");
    p.send_line(":time").unwrap();
    expect(&mut p, "no input has run yet");
    p.send_line("let a = zeros(f32, 4096);").unwrap();
    p.send_line("fn fill(v: f32[]) {").unwrap();
    p.send_line("    parallel loop for i in 0..len(v) { v[i] = 1.0; }")
        .unwrap();
    p.send_line("}").unwrap();
    p.send_line("fill(a); parallel loop for i in 0..4096 { a[i] += 1.0; }")
        .unwrap();
    p.send_line("a[4095]").unwrap();
    expect(&mut p, "2 : f32");
    // `a[4095]` ran no device work: its table has no kernel.
    p.send_line(":time").unwrap();
    let t = expect(&mut p, "device busy 0.000 ms; wall ");
    assert!(!t.contains("kernels (device)"), "{t}");
    p.send_line("fill(a); parallel loop for i in 0..4096 { a[i] += 1.0; }")
        .unwrap();
    p.send_line(":time").unwrap();
    expect(&mut p, "total ms");
    expect(&mut p, "kernels (device)");
    let t = expect(&mut p, "device busy ");
    // Both kernels, each named by its line in its own input.
    assert!(t.contains(" line 1 "), "{t}");
    assert!(t.contains(" line 2 of <input 2> "), "{t}");
    assert!(t.contains("copies (device)"), "{t}");
    expect(&mut p, "; wall ");
    // `:time on`: a line after each input.
    p.send_line(":time on").unwrap();
    expect(&mut p, "timing on");
    p.send_line("1 + 1").unwrap();
    expect(&mut p, "2 : i32");
    expect(&mut p, "time: ");
    p.send_line(":quit").unwrap();
    p.exp_eof().expect("accl exits on :quit");
}

#[test]
fn an_unusable_history_file_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // The history's folder is a plain file: it can be neither read nor written.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, "").unwrap();
    let mut p = spawn(&blocker.join("history"), true);
    expect(&mut p, "Ctrl-D exits");
    p.send_line("1 + 1").unwrap();
    expect(&mut p, "2 : i32");
    p.send_control('d').unwrap();
    expect(&mut p, "history not saved");
    p.exp_eof().expect("accl exits on Ctrl-D");
    let status = p.process().wait().expect("exit status");
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
}

#[test]
fn piped_input_is_plain() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_accl"))
        .arg("--host")
        .env("ACCL_HISTORY", dir.path().join("unused"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = "let a = zeros(i32, 3)\n\
                  parallel loop for i in 0..3 {\n\
                  a[i] = i * i;\n\
                  }\n\
                  a\n\
                  let oops = a[3];\n\
                  sum(a)\n\
                  :type a[0]\n\
                  :quit\n\
                  a\n";
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stdout, "i32[], shape [3]\n[0 1 4]\n5 : i32\na[0] : i32\n",
        "stderr: {stderr}"
    );
    assert!(stderr.contains("index 3 is out of bounds"), "{stderr}");
    assert!(!stdout.contains('\x1b') && !stderr.contains('\x1b'));
    // An input failed: exit status 1.
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("unused").exists());
}

/// Ctrl-C during device work, on the Vulkan backend (lavapipe in CI): the
/// input ends only once the work it started is done or stopped, says so in
/// one line, and the next inputs neither wait for it nor see its results
/// or faults.
#[test]
fn ctrl_c_during_a_kernel_waits_for_it_and_the_next_input_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn_on(&[], &dir.path().join("history"), true);
    expect(&mut p, "`:help` lists the commands");
    p.send_line("let c = zeros(i32, 1); let s = 7 as i64; let n = 2000000000;")
        .unwrap();
    // A serial count to 2 x 10^9: on lavapipe thousands of dispatches,
    // each resuming where the last stopped; Ctrl-C stops between them.
    p.send_line(
        "println(\"spin\", 1 + 1); serial { let k = 0; for i in 0..n { k += 1; } c[0] = k; }",
    )
    .unwrap();
    expect(&mut p, "spin2");
    p.send_control('c').unwrap();
    expect(&mut p, "interrupted (Ctrl-C)");
    expect(&mut p, "variables are as before this input");
    // Nothing came back: the kernel never finished.
    p.send_line("c[0] + 40").unwrap();
    expect(&mut p, "40 : i32");
    // A reduction of 2^29 iterations, recorded as one batch of
    // dispatches: the input waits for them after Ctrl-C, and `s` keeps
    // its value.
    p.send_line(
        "println(\"spin\", 2 + 1); parallel loop reduction(+: s) for i in 0..(1 as i64 << 29) { s += i % 3; }",
    )
    .unwrap();
    expect(&mut p, "spin3");
    p.send_control('c').unwrap();
    expect(&mut p, "interrupted (Ctrl-C)");
    p.send_line("s * 6").unwrap();
    expect(&mut p, "42 : i64");
    p.send_line("1 + 1").unwrap();
    let before = expect(&mut p, "2 : i32");
    assert!(!before.contains("error"), "{before}");
    // In check mode, a kernel that writes out of bounds near its end: its
    // fault is reported by the interrupted input, under its line, and the
    // next input runs clean.
    p.send_line(":check on").unwrap();
    p.send_line(
        "println(\"spin\", 3 + 1); parallel loop reduction(+: s) for i in 0..(1 as i64 << 29) { if i == 500000000 { c[i % 5 + 3] = 1; } s += i % 3; }",
    )
    .unwrap();
    expect(&mut p, "spin4");
    p.send_control('c').unwrap();
    expect(&mut p, "the device work it started failed");
    expect(&mut p, "out of bounds");
    p.send_line("s + 1").unwrap();
    let before = expect(&mut p, "8 : i64");
    assert!(!before.contains("out of bounds"), "{before}");
    p.send_control('d').unwrap();
    p.exp_eof().expect("accl exits on Ctrl-D");
}
