//! Compute constructs on `--host` whose loop nest the JIT compiled run as
//! the interpreter runs them: every script runs through `accl run --host`
//! with the JIT on two threads (`ACCL_HOST_THREADS=2`) and without it
//! (`ACCL_JIT=0`), and the two print the same bytes, errors included.
//! Known answers are checked too, and the JIT's trace proves which path
//! ran.

use std::process::Command;

struct Out {
    stdout: String,
    stderr: String,
    ok: bool,
}

fn run(path: &std::path::Path, jit: bool) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_accl"))
        .args(["run", "--host"])
        .arg(path)
        .env("ACCL_JIT", if jit { "1" } else { "0" })
        .env("ACCL_HOST_THREADS", "2")
        .env("ACCL_JIT_TRACE", "1")
        .output()
        .expect("run accl");
    Out {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ok: out.status.success(),
    }
}

/// Run `src` both ways; they must agree. Returns the JIT's run and its
/// trace lines about constructs.
fn both(src: &str) -> (Out, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    std::fs::write(&path, src).expect("write script");
    let j = run(&path, true);
    let i = run(&path, false);
    let (trace, rest): (Vec<&str>, Vec<&str>) =
        j.stderr.lines().partition(|l| l.starts_with("jit: "));
    assert_eq!(j.stdout, i.stdout, "stdout differs for:\n{src}");
    assert_eq!(
        rest.join("\n"),
        i.stderr.trim_end_matches('\n'),
        "stderr differs for:\n{src}"
    );
    assert_eq!(j.ok, i.ok, "exit status differs for:\n{src}");
    let constructs = trace
        .iter()
        .filter(|l| l.contains("construct"))
        .map(|l| l.to_string())
        .collect();
    (j, constructs)
}

/// `accl ARGS t.accl` on a script file holding `src`, with `env` set.
fn accl(args: &[&str], src: &str, env: &[(&str, &str)]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    std::fs::write(&path, src).expect("write script");
    Command::new(env!("CARGO_BIN_EXE_accl"))
        .args(args)
        .arg(&path)
        .envs(env.iter().copied())
        .output()
        .expect("run accl")
}

#[test]
fn compiled_constructs_give_known_answers_on_threads_with_the_interpreters_bits() {
    // 300 x 50 turns and 20000 turns: several chunks each, so threads run.
    let src = "
let b = zeros(i64, 300, 50);
parallel loop collapse(2) copyout(b) for i in 0..300 {
    for j in 0..50 { b[i, j] = (i * 100 + j) as i64; }
}
let n: i64 = 0;
parallel loop reduction(+: n) for i in 0..20000 { n += (i as i64) * (i as i64); }
let x = zeros(f64, 20000);
for i in 0..20000 { x[i] = 1.0 / (i + 1) as f64; }
let h = 0.0;
let big = -1.0;
parallel loop reduction(+: h) reduction(max: big) copyin(x) for i in 0..20000 {
    h += x[i];
    big = max(big, x[i]);
}
let y = zeros(f32, 5000);
parallel copy(y) {
    loop gang for i in 0..5000 { y[i] = 2.0 * i as f32 + 1.0; }
}
assert(b[299, 49] == 29949, \"b\");
assert(b[7, 3] == 703, \"b7\");
// sum of i^2 for i < 20000 = 19999 * 20000 * 39999 / 6
assert(n == 2666466670000, \"n\");
assert(big == 1.0, \"max\");
assert(y[4999] == 9999.0, \"y\");
println(n, \" \", h, \" \", y[123]);
";
    let (out, trace) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert!(out.stdout.starts_with("2666466670000 "), "{}", out.stdout);
    // Harmonic number H(20000) = ln(20000) + 0.5772156649 + 1/40000 - ...
    let h: f64 = out
        .stdout
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!((h - 10.480_728_217_229_2).abs() < 1e-9, "{h}");
    assert_eq!(
        trace
            .iter()
            .filter(|l| l.ends_with("on up to 2 thread(s)"))
            .count(),
        4,
        "{trace:?}"
    );
}

#[test]
fn every_check_of_the_host_backend_is_still_raised() {
    let cases = [
        // Bounds, in the last chunk of a threaded run.
        (
            "let a = zeros(f64, 10000);\nparallel loop copy(a) for i in 0..10001 { a[i] = 1.0; }\n",
            "index 10000 is out of bounds for axis 0 of extent 10000",
        ),
        // Bounds on one thread, in the first chunk, of a 2-D nest.
        (
            "let m = zeros(f32, 100, 100);\nparallel loop collapse(2) copy(m) for i in 0..100 { for j in 0..101 { m[i, j] += 1.0; } }\n",
            "index 100 is out of bounds for axis 1 of extent 100",
        ),
        // Present check.
        (
            "let a = zeros(f64, 10000);\nparallel loop present(a) for i in 0..10000 { a[i] = 1.0; }\n",
            "not present",
        ),
        // Race with pending async work.
        (
            "let a = zeros(f64, 10000);\nparallel loop async(1) copy(a) for i in 0..10000 { a[i] = 1.0; }\na[0] = 2.0;\n",
            "accl::race::host",
        ),
    ];
    for (src, want) in cases {
        let (out, trace) = both(src);
        assert!(!out.ok, "{src} should fail");
        assert!(
            trace.iter().any(|l| l.contains("compiled")),
            "{src}\n{trace:?}"
        );
        assert!(out.stderr.contains(want), "{src}\n{}", out.stderr);
    }
}

#[test]
fn limits_stop_a_compiled_construct_at_the_same_operation() {
    let src = "let a = zeros(f64, 100, 100);\nparallel loop collapse(2) copy(a) for i in 0..100 { for j in 0..100 { a[i, j] = 1.0; } }\n";
    for n in [777u64, 5_000] {
        let stop = |jit: bool| {
            let mut e = accl::Engine::new();
            e.set_max_operations(n);
            if !jit {
                std::env::set_var("ACCL_JIT", "0");
            }
            let r = e.eval_source("ops.accl", src);
            std::env::remove_var("ACCL_JIT");
            let err = r.expect_err("stops at the limit");
            lang::diag::render_plain(&err.source, &err.diags, 100)
        };
        let (j, i) = (stop(true), stop(false));
        assert_eq!(j, i);
        assert!(j.contains(&n.to_string()), "{j}");
    }
}

#[test]
fn shared_writes_keep_a_construct_on_one_thread_and_others_interpreted() {
    let src = "
let a = zeros(i64, 3);
parallel loop copy(a) for i in 0..9000 { a[i % 3] += i as i64; }
let b = zeros(i64, 9000);
let t: i64 = 0;
parallel loop copy(b) private(t) for i in 0..9000 { t = (2 * i) as i64; b[i] = t + 1; }
assert(b[8999] == 17999, \"b\");
println(a[0], \" \", a[1], \" \", a[2]);
";
    let (out, trace) = both(src);
    assert!(out.ok, "{}", out.stderr);
    // a[r] = sum of i < 9000 with i % 3 == r: 3k + r for k < 3000.
    assert_eq!(out.stdout.trim(), "13495500 13498500 13501500");
    assert!(
        trace
            .iter()
            .any(|l| l.contains("on one thread: it writes `a`")),
        "{trace:?}"
    );
    assert!(
        trace
            .iter()
            .any(|l| l.contains("on one thread: it assigns `t`")),
        "{trace:?}"
    );
}

#[test]
fn neighbour_accesses_are_checked_where_the_range_reaches_past_an_edge() {
    // A 5-point stencil inside the edges (its checks proven before the
    // loops run): sum over the interior of 0.2 * (5 * 1.0) = 1.0 a cell,
    // 98 x 98 cells.
    let (j, c) = both(
        "let a = zeros(f64, 100, 100);
let b = zeros(f64, 100, 100);
parallel loop collapse(2) for i in 0..100 { for j in 0..100 { a[i, j] = 1.0; } }
parallel loop collapse(2) for i in 1..99 {
    for j in 1..99 {
        b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]);
    }
}
let s = 0.0;
for i in 0..100 { for j in 0..100 { s += b[i, j]; } }
println(s);
",
    );
    assert!(j.ok, "{}", j.stderr);
    assert_eq!(j.stdout, "9604\n");
    assert!(c.iter().all(|l| l.contains("compiled")), "{c:?}");
    // The same reaching one past the last row, on the outer level and on
    // the inner one, and one before the first: the errors the interpreter
    // gives (index 100 of extent 100; index -1).
    for (range, access, want) in [
        (
            "0..100 { for j in 1..99",
            "a[i + 1, j]",
            "index 100, extent 100",
        ),
        (
            "1..99 { for j in 1..100",
            "a[i, j + 1]",
            "index 100, extent 100",
        ),
        ("0..99 { for j in 0..99", "a[i, j - 1]", "index -1"),
    ] {
        let (j, _) = both(&format!(
            "let a = zeros(f64, 100, 100);
let b = zeros(f64, 100, 100);
parallel loop collapse(2) for i in {range} {{ b[i, j] = {access}; }} }}
"
        ));
        assert!(!j.ok);
        assert!(
            j.stderr.contains("accl::run::index_out_of_bounds"),
            "{}",
            j.stderr
        );
        assert!(j.stderr.contains(want), "{want}: {}", j.stderr);
    }
    // A host loop outside constructs: `i + 1` at the end of the range.
    let (j, _) = both(
        "let a = zeros(i32, 10);
let s = 0;
for i in 0..10 { s += a[i + 1]; }
",
    );
    assert!(j.stderr.contains("index 10, extent 10"), "{}", j.stderr);
}

#[test]
fn explain_says_how_each_construct_runs_on_the_host() {
    let src = "let a = zeros(i32, 10);
parallel loop for i in 0..10 { a[i] = i; }
let s = 0;
parallel loop reduction(+: s) for i in 0..10 { s += a[9 - i] % 3; }
parallel num_gangs(2) { let x = 1; }
";
    let out = accl(&["check", "--explain"], src, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    let host: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  on the host: "))
        .collect();
    assert_eq!(host.len(), 3, "{text}");
    assert!(
        host[0].starts_with(
            "compiled; the gang loop's iterations run in fixed chunks on the machine's threads"
        ),
        "{text}"
    );
    assert!(host[1].starts_with("compiled; "), "{text}");
    assert_eq!(
        host[2],
        "interpreted (only a construct's loop nest is compiled)"
    );
    let off = accl(&["check", "--explain"], src, &[("ACCL_JIT", "0")]);
    assert!(String::from_utf8_lossy(&off.stdout)
        .contains("  on the host: interpreted (the host JIT is off: ACCL_JIT=0)"));
}

#[test]
fn async_work_pending_on_other_arrays_leaves_constructs_and_loops_compiled() {
    // A time loop of async kernels inside a function that takes arrays
    // (miniWeather's shape): every launch finds async work pending, on
    // the arrays of the kernels before it. Each compiled construct or loop
    // entered counts in `--time`'s "compiled host code" row.
    let src = "
fn step(a: f64[], b: f64[], n: i32) {
    parallel loop present(a, b) async for i in 0..n { b[i] = a[i] * 0.5 + 1.0; }
    parallel loop present(a, b) async for i in 0..n { a[i] = b[i] * 2.0 - 1.0; }
}
let n = 1000;
let a = zeros(f64, n);
let b = zeros(f64, n);
let c = zeros(f64, n);
for i in 0..n { a[i] = i as f64; }
data copy(a) create(b) {
    for s in 0..10 { step(a, b, n); }
    // Pending work is on `a` and `b`: a loop over `c` runs compiled.
    for i in 0..n { c[i] = (i * 2) as f64; }
    wait;
}
let s = 0.0;
for i in 0..n { s += a[i] + c[i]; }
println(s);
// Reading `a` while a kernel on it is pending is still the race it is.
parallel loop async copy(a) for i in 0..n { a[i] = 0.0; }
let t = 0.0;
for i in 0..n { t += a[i]; }
";
    let (out, _) = both(src);
    assert!(!out.ok, "the last loop races with the pending kernel");
    // Each step makes a[i] (a[i] * 0.5 + 1) * 2 - 1 = a[i] + 1, so a[i]
    // ends at i + 10; c[i] is 2i: the sum is 3 * 499500 + 10 * 1000.
    assert_eq!(out.stdout.trim(), "1508500", "{}", out.stderr);
    assert!(out.stderr.contains("accl::race::host"), "{}", out.stderr);
    let timed = accl(
        &["run", "--host", "--time"],
        src,
        &[("ACCL_HOST_THREADS", "1")],
    );
    let err = String::from_utf8_lossy(&timed.stderr);
    let entered: u64 = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("compiled host code"))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no compiled host code row:\n{err}"));
    // 20 kernels and the loop over `c`, at least (the loops before and
    // after the data region may be compiled as well).
    assert!(entered >= 21, "{entered} entries:\n{err}");
}

#[test]
fn a_stencil_runs_its_inner_loop_in_simd_on_each_thread_with_the_interpreters_bits() {
    // 98 x 97 turns (more than one chunk, so both threads run; 97 is no
    // multiple of 4). Rows alternate between two arrays, as in Jacobi.
    let n = 100;
    let src = format!(
        "const N = {n};
let a = zeros(f32, N, N);
let b = zeros(f32, N, N);
for i in 0..N {{ for j in 0..N {{ a[i, j] = ((i * 7 + j * 3) % 11) as f32; }} }}
for s in 0..2 {{
    parallel loop collapse(2) copyin(a) copy(b) for i in 1..N - 1 {{
        for j in 1..N - 2 {{
            b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]);
        }}
    }}
    parallel loop collapse(2) copy(a) copyin(b) for i in 1..N - 1 {{
        for j in 1..N - 2 {{
            a[i, j] = 0.2 * (b[i, j] + b[i - 1, j] + b[i + 1, j] + b[i, j - 1] + b[i, j + 1]);
        }}
    }}
}}
for i in 0..N {{ println(a[i, 1], \" \", a[i, N / 2], \" \", a[i, N - 3]); }}
"
    );
    let (out, trace) = both(&src);
    assert!(out.ok, "{}", out.stderr);
    let mut a: Vec<f32> = (0..n * n)
        .map(|k| (((k / n) * 7 + (k % n) * 3) % 11) as f32)
        .collect();
    let mut b = vec![0f32; n * n];
    let sweep = |from: &[f32], to: &mut [f32]| {
        for i in 1..n - 1 {
            for j in 1..n - 2 {
                let at = |i: usize, j: usize| from[i * n + j];
                to[i * n + j] =
                    0.2 * (at(i, j) + at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1));
            }
        }
    };
    for _ in 0..2 {
        sweep(&a, &mut b);
        sweep(&b, &mut a);
    }
    let want: String = (0..n)
        .map(|i| {
            format!(
                "{} {} {}\n",
                a[i * n + 1],
                a[i * n + n / 2],
                a[i * n + n - 3]
            )
        })
        .collect();
    assert_eq!(out.stdout, want);
    assert_eq!(
        trace
            .iter()
            .filter(|l| l.ends_with("on up to 2 thread(s); innermost loop `j` in 4-lane SIMD"))
            .count(),
        2,
        "{trace:?}"
    );
    let out = accl(&["check", "--explain"], &src, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("  on the host: compiled; ")
                && l.ends_with("; innermost loop `j` in 4-lane SIMD"))
            .count(),
        2,
        "{text}"
    );
}
