//! Plain host loops on several threads: a compiled `for` loop whose
//! iterations touch disjoint elements runs its range in chunks on threads
//! (here four, `ACCL_HOST_THREADS=4`), and prints exactly what the
//! interpreter prints (`ACCL_JIT=0`). Each script checks known answers with
//! its own `assert`s; `--time` counts the loops that ran on threads.

use std::process::Command;

/// Run `src` with `accl run --host --time` on four threads and without the
/// JIT: both succeed with the same stdout. Returns the JIT run's stderr
/// and how many loop runs went on threads.
fn threads_and_interpreter(src: &str) -> (String, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    std::fs::write(&path, src).expect("write script");
    let run = |jit: &str| {
        Command::new(env!("CARGO_BIN_EXE_accl"))
            .args(["run", "--host", "--time"])
            .arg(&path)
            .env("ACCL_JIT", jit)
            .env("ACCL_HOST_THREADS", "4")
            .output()
            .expect("run accl")
    };
    let (j, i) = (run("1"), run("0"));
    let err = String::from_utf8_lossy(&j.stderr).into_owned();
    assert!(j.status.success(), "{src}\n{err}");
    assert!(i.status.success(), "{}", String::from_utf8_lossy(&i.stderr));
    assert_eq!(
        String::from_utf8_lossy(&j.stdout),
        String::from_utf8_lossy(&i.stdout),
        "stdout differs for:\n{src}"
    );
    let runs = err
        .lines()
        .find_map(|l| l.strip_prefix("host loops on 4 threads: "))
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    (err, runs)
}

#[test]
fn row_major_initialisation_runs_on_threads_with_the_interpreters_results() {
    // Needleman-Wunsch's and miniWeather's shapes: rows of a flat array,
    // planes of fields, a function reading top-level values, a matrix
    // by columns, and the same in a function's own loop.
    let src = "
let xlen = 2.0;
fn bump(x: f64, z: f64) -> (f64, f64) {
    let d = sqrt((x - xlen / 2.0) * (x - xlen / 2.0) + z * z);
    return (cos(d), d * xlen);
}
let n = 301;
let m = 257;
let a = zeros(i32, n * m);
for i in 0..n {
    for j in 0..m {
        a[i * m + j] = (i * 7 + j * 3) % 11;
    }
}
let nz = 90;
let nx = 120;
let s = zeros(f64, 4 * nz * nx);
let t = zeros(f64, 4 * nz * nx);
for k in 0..nz {
    for i in 0..nx {
        for v in 0..4 {
            s[v * nz * nx + k * nx + i] = 0.0;
        }
        for q in 0..3 {
            let (r, w) = bump(i as f64 * 0.01 + q as f64 * 0.003, k as f64 * 0.02);
            let ind = k * nx + i;
            s[ind] = s[ind] + r * 0.25;
            ind = 3 * nz * nx + k * nx + i;
            s[ind] = s[ind] + w * 0.25;
        }
        for v in 0..4 {
            let ind = v * nz * nx + k * nx + i;
            t[ind] = s[ind] * 2.0;
        }
    }
}
let c = zeros(f64, 300, 300);
for j in 0..300 {
    for i in 0..300 {
        c[i, j] = (i * 300 + j) as f64;
    }
}
fn fill(b: f64[], rows: i32, cols: i32) {
    for r in 0..rows {
        for q in 0..cols {
            b[r * cols + q] = sqrt((r * cols + q) as f64);
        }
    }
}
let b = zeros(f64, 400 * 200);
fill(b, 400, 200);
assert(a[5 * m + 9] == (5 * 7 + 9 * 3) % 11, \"a\");
assert(t[3 * nz * nx + 4 * nx + 5] == 2.0 * s[3 * nz * nx + 4 * nx + 5], \"t\");
assert(c[7, 250] == (7 * 300 + 250) as f64, \"c\");
assert(b[399 * 200 + 199] == sqrt(79999.0), \"b\");
let sum = 0.0;
for k in 0..4 * nz * nx {
    sum = sum + t[k];
}
println(a[1000], \" \", a[n * m - 1], \" \", sum, \" \", c[299, 1], \" \", b[12345]);
";
    let (err, runs) = threads_and_interpreter(src);
    // Four of them: `a`, `s`/`t`, `c` and `fill`'s; the float sum stays
    // in order.
    assert_eq!(runs, 4, "{err}");
}

#[test]
fn integer_reductions_on_threads_give_the_bits_of_the_loop_in_order() {
    let src = "
let n = 200000;
let a = zeros(i32, n);
for i in 0..n {
    a[i] = (i * 7919) % 100003 - 50000;
}
let total: i64 = 0;
let wrapped: i32 = 0;
let lo = i32::MAX;
let hi = i32::MIN;
let bits: u32 = 0;
for i in 0..n {
    total += a[i] as i64;
    wrapped = wrapped + a[i] * 40000;
    lo = min(lo, a[i]);
    hi = max(a[i], hi);
    bits = bits ^ (a[i] as u32);
}
let want: i64 = 0;
let i = 0;
while i < n {
    want += ((i * 7919) % 100003 - 50000) as i64;
    i += 1;
}
assert(total == want, \"sum\");
println(total, \" \", wrapped, \" \", lo, \" \", hi, \" \", bits);
";
    let (err, runs) = threads_and_interpreter(src);
    assert_eq!(runs, 2, "{err}");
}

#[test]
fn dependences_aliases_and_shared_state_keep_loops_in_order() {
    let src = "
let n = 400;
let m = 300;
let a = zeros(i64, n * m);
for j in 0..m {
    a[j] = j as i64;
}
// Each row reads the one before.
for i in 1..n {
    for j in 0..m {
        a[i * m + j] = a[(i - 1) * m + j] + 1;
    }
}
assert(a[(n - 1) * m + 5] == (n - 1 + 5) as i64, \"rows\");
// One array under two names, each row reading the next: tested as one
// array, a dependence.
let b = a;
for i in 0..n - 1 {
    for j in 0..m {
        a[i * m + j] = b[(i + 1) * m + j] * 2;
    }
}
assert(a[5] == 2 * (1 + 5) as i64, \"alias\");
// A generator on top-level state stepped on some turns only.
let seed: u32 = 1;
fn next() -> u32 {
    seed = seed * 1103515245 + 12345;
    return (seed / 65536) % 32768;
}
for i in 0..n {
    for j in 0..m {
        if j % 3 == 0 {
            a[i * m + j] = next() as i64;
        }
    }
}
// A float sum.
let s = 0.0;
for i in 0..n * m {
    s += a[i] as f64;
}
println(a[7], \" \", a[n * m - 1], \" \", s);
";
    let (err, runs) = threads_and_interpreter(src);
    // Only the first loop (each `a[j]` of row 0) has its turns apart, and it
    // has too few of them to start threads.
    assert_eq!(runs, 0, "{err}");
}

#[test]
fn an_error_on_a_thread_is_the_first_error_the_loop_in_order_raises() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    std::fs::write(
        &path,
        "let n = 300;\nlet m = 300;\nlet a = zeros(f64, n * m - 1);\nfor i in 0..n {\n    for j in 0..m {\n        a[i * m + j] = 1.0 / (i + 1) as f64;\n    }\n}\n",
    )
    .expect("write script");
    let run = |jit: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_accl"))
            .args(["run", "--host"])
            .arg(&path)
            .env("ACCL_JIT", jit)
            .env("ACCL_HOST_THREADS", "4")
            .output()
            .expect("run accl");
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let (j, i) = (run("1"), run("0"));
    assert_eq!(j, i);
    assert!(
        j.contains("index 89999 is out of bounds for axis 0 of extent 89999"),
        "{j}"
    );
}

#[test]
fn c_style_generators_jump_ahead_to_each_chunks_first_value() {
    // C's `rand()` (pathfinder, srad, nw) and a `% 2^31` generator on an
    // `i64` (a benchmark's), stepped in a top-level loop nest and in a
    // function's loop; after each loop the state is the one the loop in
    // order leaves, and the next values follow on.
    let src = "
let rand_next: u32 = 1;
fn c_srand(s: u32) { rand_next = s; }
fn c_rand() -> i32 {
    rand_next = rand_next * 1103515245 + 12345;
    return ((rand_next / 65536) % 32768) as i32;
}
let seed: i64 = 42;
fn lcg() -> i64 {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
}
let rows = 37;
let cols = 4099;
let wall = zeros(i32, rows * cols);
c_srand(9);
for i in 0..rows {
    for j in 0..cols {
        wall[i * cols + j] = c_rand() % 10;
    }
}
let after = c_rand();
fn fill(v: i64[], n: i32) {
    for i in 0..n {
        v[i] = lcg() % 1000 + lcg() % 7;
    }
}
let v = zeros(i64, 100000);
fill(v, 100000);
let s: i64 = 0;
for k in 0..rows * cols {
    s += wall[k] as i64;
}
println(wall[0], \" \", wall[cols + 5], \" \", wall[rows * cols - 1], \" \", after, \" \", s);
println(v[0], \" \", v[99999], \" \", lcg());
";
    let (err, runs) = threads_and_interpreter(src);
    // The two generator loops and the checksum.
    assert_eq!(runs, 3, "{err}");
}

#[test]
fn a_constructs_flattened_fields_run_on_threads_when_its_test_finds_them_apart() {
    // miniWeather's shape on the host backend: a `collapse(2)` nest whose
    // writes are a field's planes of a flat array, which no axis of its own
    // picks; and one whose rows overlap (each writes its row and the next
    // row's first element), which stays on one thread.
    let src = "
let nz = 60;
let nx = 90;
let state = zeros(f64, 4 * nz * nx);
let tend = zeros(f64, 4 * nz * nx);
let edge = zeros(f64, nz * nx + 1);
for k in 0..4 * nz * nx {
    state[k] = (k % 17) as f64 * 0.5;
}
for step in 0..3 {
    parallel loop collapse(2) for k in 0..nz {
        for i in 0..nx {
            for ll in 0..4 {
                let ind = ll * nz * nx + k * nx + i;
                tend[ind] = state[ind] * 2.0 + step as f64;
            }
        }
    }
    parallel loop collapse(2) for k in 0..nz {
        for i in 0..nx {
            edge[k * nx + i + 1] = state[k * nx + i] + 1.0;
            if i == 0 {
                edge[k * nx] = 0.0;
            }
        }
    }
}
assert(tend[3 * nz * nx + 5 * nx + 7] == state[3 * nz * nx + 5 * nx + 7] * 2.0 + 2.0, \"tend\");
let total = 0.0;
for k in 0..4 * nz * nx {
    total = total + tend[k];
}
println(total, \" \", tend[100], \" \", edge[nz * nx]);
";
    let (err, runs) = threads_and_interpreter(src);
    // The first construct's three launches (the plain loops have too few
    // turns to start threads).
    assert_eq!(runs, 3, "{err}");
}

#[test]
fn a_construct_with_a_reduction_runs_compiled_on_threads() {
    // Its reduction variable is its own: nothing is pending into it on the
    // host backend, so the compiled nest runs (on threads, chunks combined
    // in order), with the interpreter's bits.
    let src = "
let n = 300000;
let a = zeros(f64, n);
for i in 0..n {
    a[i] = (i % 101) as f64 * 0.25;
}
let s = 0.0;
let m: i64 = 0;
for rep in 0..2 {
    parallel loop reduction(+: s) reduction(max: m) for i in 0..n {
        s += a[i] * 1.5;
        m = max(m, ((i % 1000) + rep) as i64);
    }
}
println(s, \" \", m);
";
    let (err, runs) = threads_and_interpreter(src);
    // The fill and both launches.
    assert_eq!(runs, 3, "{err}");
}
