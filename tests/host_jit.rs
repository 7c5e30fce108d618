//! Host code compiled to native code runs exactly as the interpreter runs
//! it: every script here runs twice through `accl run --host`, once with
//! the JIT (`ACCL_JIT=1`) and once without (`ACCL_JIT=0`), and the two
//! print the same bytes, stdout and stderr (errors included). Each script
//! also checks known answers with its own `assert`s, and the JIT's trace
//! line proves the compiled path really ran.

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
        .env("ACCL_JIT_TRACE", "1")
        .output()
        .expect("run accl");
    Out {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ok: out.status.success(),
    }
}

/// Run `src` both ways; they must agree. Returns the JIT's run and what
/// its trace says was compiled: (functions, loops).
fn both(src: &str) -> (Out, (usize, usize)) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    std::fs::write(&path, src).expect("write script");
    let j = run(&path, true);
    let i = run(&path, false);
    let (trace, rest): (Vec<&str>, Vec<&str>) =
        j.stderr.lines().partition(|l| l.starts_with("jit: "));
    let rest = rest.join("\n");
    assert_eq!(j.stdout, i.stdout, "stdout differs for:\n{src}");
    assert_eq!(
        rest,
        i.stderr.trim_end_matches('\n'),
        "stderr differs for:\n{src}"
    );
    assert_eq!(j.ok, i.ok, "exit status differs for:\n{src}");
    assert!(
        !i.stderr.contains("jit: "),
        "ACCL_JIT=0 still compiled:\n{}",
        i.stderr
    );
    let counts = trace
        .iter()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.get(1)?.parse().ok()?, w.get(4)?.parse().ok()?))
        })
        .unwrap_or((0, 0));
    (j, counts)
}

const MICRO: &str = "
fn f(x: f64, z: f64) -> f64 {
    let r = sqrt(x * x + z * z);
    if r < 1.0 {
        return cos(r) * 0.5;
    }
    return x * 0.001 + z * 0.002;
}
let s = 0.0;
for i in 0..400 {
    for j in 0..200 {
        s += f(i as f64 * 0.01, j as f64 * 0.01);
    }
}
println(s);
";

/// The same sum in Rust, term by term in the same order.
fn micro_rust() -> f64 {
    let f = |x: f64, z: f64| {
        let r = (x * x + z * z).sqrt();
        if r < 1.0 {
            return r.cos() * 0.5;
        }
        x * 0.001 + z * 0.002
    };
    let mut s = 0.0;
    for i in 0..400 {
        for j in 0..200 {
            s += f(i as f64 * 0.01, j as f64 * 0.01);
        }
    }
    s
}

#[test]
fn a_numeric_function_in_a_double_loop_matches_the_interpreter_bit_for_bit() {
    let (out, counts) = both(MICRO);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(counts, (1, 1), "the function and the loop nest compile");
    let got: f64 = out.stdout.trim().parse().expect("a number");
    assert_eq!(got.to_bits(), micro_rust().to_bits());
}

#[test]
fn integer_semantics_wrap_and_saturate_as_the_interpreter_does() {
    let src = "
let big: i32 = 2147483647;
let min64: i64 = -9223372036854775807 - 1;
let m1: i64 = -1;
let acc = 0;
let w: i64 = 0;
let u: u32 = 0;
let b: u8 = 0;
for k in 0..3 {
    acc = big + k;
    w = min64 / m1 + (min64 % m1);
    u = (k as u32) - 1;
    b = 250 as u8 + (k * 3) as u8;
}
assert(acc == -2147483647);
assert(w == min64);
assert(u == 1);
assert(b == 0);
let sh = 0;
let sr: i32 = 0;
for k in 30..34 {
    sh = 1 << k;
    sr = -64 >> (k - 28);
}
println(acc, \" \", w, \" \", u, \" \", b, \" \", sh, \" \", sr);
let q = 0;
let r = 0;
for k in 1..4 {
    q = -7 / k;
    r = -7 % k;
}
assert(q == -2 && r == -1);
let ud: u32 = 0;
for k in 1..3 {
    ud = 4000000000 as u32 / (k as u32);
}
assert(ud == 2000000000);
println(q, \" \", r, \" \", ud);
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert!(counts.1 >= 4, "every loop compiles: {counts:?}");
}

#[test]
fn casts_and_float_corners_match_rust() {
    let src = "
let nan = 0.0 / 0.0;
let inf = 1.0 / 0.0;
let c1 = 0;
let c2: i64 = 0;
let c3: u32 = 7;
let c4: u8 = 0;
let c5: u8 = 0;
let c6 = 0;
let mn = 0.0;
let mx = 0.0;
let rm = 0.0;
let rd = 0.0;
let cl = 0.0;
let fm = 0.0;
let p = 0.0;
let a2 = 0.0;
let e1 = false;
let e2 = false;
let e3 = false;
let f32v: f32 = 0.0;
for k in 0..2 {
    c1 = (1.0e20 + k as f64) as i32;
    c2 = nan as i64;
    c3 = (-1.0 - k as f64) as u32;
    c4 = 300.5 as u8;
    c5 = (-3.0 - k as f64) as u8;
    c6 = (2.0 * inf) as i32;
    mn = min(nan, 1.5);
    mx = max(2.5, nan);
    rm = -7.5 % 2.0;
    rd = round(2.5) + round(-2.5);
    cl = clamp(5.0, 0.0, 1.0);
    fm = fma(2.0, 3.0, 1.0);
    p = pow(2.0, 0.5);
    a2 = atan2(1.0, -1.0);
    e1 = nan == nan;
    e2 = nan != nan;
    e3 = nan < 1.0;
    f32v = (1.0 / 3.0) as f32;
}
assert(c1 == 2147483647 && c2 == 0 && c3 == 0 && c4 == 255 && c5 == 0);
assert(mn == 1.5 && mx == 2.5 && rm == -1.5 && rd == 0.0 && cl == 1.0 && fm == 7.0);
assert(!e1 && e2 && !e3);
println(c1, \" \", c2, \" \", c3, \" \", c4, \" \", c5, \" \", c6);
println(mn, \" \", mx, \" \", rm, \" \", rd, \" \", cl, \" \", fm, \" \", p, \" \", a2, \" \", f32v);
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(counts.1, 1, "{}", out.stderr);
    let last = out.stdout.lines().last().unwrap_or_default().to_string();
    let want = format!(
        "1.5 2.5 -1.5 0 1 7 {} {} {}",
        2f64.powf(0.5),
        1f64.atan2(-1.0),
        (1.0f64 / 3.0) as f32
    );
    assert_eq!(last, want);
}

#[test]
fn loops_over_arrays_of_every_rank_and_element_type() {
    let src = "
let n = 50;
let a = zeros(f32, n);
let m = zeros(f64, 6, 7);
let c = zeros(i32, 3, 4, 5);
let img = zeros(u8, 8, 8);
let flags = zeros(bool, n);
for i in 0..len(a) { a[i] = i as f32 * 0.5; a[i] += 1.0; }
for i in 0..shape(m, 0) {
    for j in 0..shape(m, 1) {
        m[i, j] = sin(i as f64) * cos(j as f64);
    }
}
for i in 0..3 { for j in 0..4 { for k in 0..5 { c[i, j, k] = i * 100 + j * 10 + k; } } }
for y in 0..8 { for x in 0..8 { img[y, x] = (x * 40 + y) as u8; } }
let b = a;
let s = 0.0;
for i in 0..n { b[i] *= 2.0; flags[i] = a[i] > 20.0; s += a[i] as f64; }
let count = 0;
let k = 0;
while k < n {
    k += 1;
    if !flags[k - 1] { continue; }
    count += 1;
    if count == 100 { break; }
}
assert(a[3] == 5.0);
assert(c[2, 3, 4] == 234);
assert(img[7, 7] == 31);
println(s, \" \", count, \" \", m[5, 6], \" \", img[2, 7], \" \", sum(c));
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(counts.1, 6, "{}", out.stderr);
    // a[i] = 2 * (0.5 i + 1) after the doubling through `b`, the same array.
    let s: f64 = (0..50).map(|i| 2.0 * (i as f32 * 0.5 + 1.0) as f64).sum();
    let count = (0..50)
        .filter(|&i| 2.0 * (i as f32 * 0.5 + 1.0) > 20.0)
        .count();
    let m56 = (5f64).sin() * (6f64).cos();
    let sum_c: i32 = (0..3)
        .flat_map(|i| (0..4).flat_map(move |j| (0..5).map(move |k| i * 100 + j * 10 + k)))
        .sum();
    assert_eq!(
        out.stdout.trim(),
        format!("{s} {count} {m56} {} {sum_c}", (7 * 40 + 2) as u8)
    );
}

#[test]
fn a_return_inside_a_compiled_loop_returns_from_the_function() {
    let src = "
fn locate(a: f64[], x: f64) -> i32 {
    for i in 0..len(a) {
        if a[i] == x {
            return i;
        }
    }
    return -1;
}
let v = zeros(f64, 100);
for i in 0..100 { v[i] = i as f64 * 1.5; }
println(locate(v, 30.0), \" \", locate(v, 31.0));
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "20 -1");
    assert_eq!(counts, (0, 2), "{}", out.stderr);
}

#[test]
fn errors_inside_compiled_code_are_the_interpreters_located_errors() {
    let cases = [
        (
            "let m = zeros(f64, 4, 5);\nlet s = 0.0;\nfor i in 0..4 { for j in 0..6 { s += m[i, j]; } }\n",
            "index 5 is out of bounds for axis 1 of extent 5",
        ),
        (
            "let a = zeros(i32, 10);\nfor i in 0..11 { a[i] = i; }\n",
            "index 10 is out of bounds for axis 0 of extent 10",
        ),
        (
            "let a = zeros(f64, 10);\nlet s = 0.0;\nfor i in -1..3 { s += a[i]; }\n",
            "index -1 is out of bounds for axis 0 of extent 10",
        ),
        (
            "let m = zeros(f32, 3, 4);\nfor j in 0..4 { for i in 0..4 { m[i, j] = 1.0; } }\n",
            "index 3 is out of bounds for axis 0 of extent 3",
        ),
        (
            "fn ratio(a: i32, b: i32) -> i32 { return a / b; }\nlet s = 0;\nfor i in 0..5 { s += ratio(10, 3 - i); }\n",
            "division by zero",
        ),
        (
            "let a = zeros(i64, 4);\nlet z: i64 = 0;\nfor i in 0..4 { a[i] %= z; }\n",
            "division by zero",
        ),
    ];
    for (src, want) in cases {
        let (out, counts) = both(src);
        assert!(!out.ok, "{src} should fail");
        assert!(counts.1 >= 1, "compiled: {src}\n{}", out.stderr);
        assert!(out.stderr.contains(want), "{src}\n{}", out.stderr);
    }
}

#[test]
fn short_circuits_skip_the_right_side_and_its_errors() {
    let src = "
fn bad(x: i32) -> bool { return 10 / x > 1; }
let hits = 0;
for i in 0..10 {
    if i > 0 && bad(i) { hits += 1; }
    if i == 0 || bad(i) { hits += 100; }
}
println(hits);
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    // bad(i) = 10 / i > 1: true for i in 1..=5; never called with 0.
    assert_eq!(out.stdout.trim(), "605");
    assert_eq!(counts, (1, 1));
}

#[test]
fn limits_stop_compiled_code_at_the_same_operation() {
    // The operation limit, counted in loop iterations and calls: the
    // same message, at the same operation, with and without the JIT (the
    // interpreter's run is in this process with `ACCL_JIT=0`; the other
    // tests here pass the variable to their own processes).
    // The first script's loop calls (each turn counted and checked); the
    // second's loops count nothing else, so they run unchecked while no
    // check can fall due in them: the first loops of 300 turns do, the
    // loop of 10^5 turns does not.
    let calls = "fn g(x: f64) -> f64 { return x * 0.5; }\nlet s = 0.0;\nfor i in 0..100000 { s += g(i as f64); }\n";
    let plain = "let a = zeros(f64, 300);\nlet s = 0.0;\nfor r in 0..30 { for i in 0..300 { a[i] += 1.0; } }\nfor i in 0..100000 { s += 1.0; }\n";
    for (src, n) in [
        (calls, 1_000u64),
        (calls, 12_345),
        (plain, 9_000),
        (plain, 12_345),
    ] {
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
    // The time limit stops a loop that cannot finish.
    let mut e = accl::Engine::new();
    e.set_time_limit(Some(std::time::Duration::from_millis(100)));
    let r = e.eval("let x = 0;\nwhile true { x += 1; }\n");
    let err = r.expect_err("the loop never ends");
    let msg = lang::diag::render_plain(&err.source, &err.diags, 100);
    assert!(msg.contains("time"), "{msg}");
}

#[test]
fn functions_returning_tuples_compile_with_their_destructurings() {
    let src = "
fn polar(x: f64, y: f64) -> (f64, f64) { return (sqrt(x * x + y * y), atan2(y, x)); }
fn divmod(a: i32, b: i32) -> (i32, i32) { return (a / b, a % b); }
fn fwd(x: f64) -> (f64, f64) { return polar(x, 1.0); }
fn pick(a: f64[]) -> (i32, f64) {
    for i in 0..len(a) {
        if a[i] > 5.0 { return (i, a[i]); }
    }
    return (-1, 0.0);
}
let sr = 0.0;
let st = 0.0;
let q = 0;
let r = 0;
for i in 0..100 {
    let (rr, th) = polar(i as f64, 2.0);
    sr += rr;
    st += th;
    let (qq, _) = divmod(i, 7);
    q += qq;
    (qq, r) = divmod(i + 3, 5);
}
let (a, b) = fwd(3.0);
let v = zeros(f64, 10);
for i in 0..10 { v[i] = i as f64 * 1.25; }
let (k, x) = pick(v);
println(sr, \" \", st, \" \", q, \" \", r, \" \", a, \" \", b, \" \", k, \" \", x);
let z = 0;
for i in 0..3 { let (d, m) = divmod(10, 2 - i); z += d + m; }
";
    let (out, counts) = both(src);
    assert!(!out.ok, "the last loop divides by zero");
    assert!(out.stderr.contains("division by zero"), "{}", out.stderr);
    assert_eq!(counts.0, 3, "polar, divmod and fwd compile: {}", out.stderr);
    let (mut sr, mut st, mut q) = (0.0f64, 0.0f64, 0);
    for i in 0..100 {
        let x = i as f64;
        sr += (x * x + 4.0).sqrt();
        st += 2f64.atan2(x);
        q += i / 7;
    }
    let r = (99 + 3) % 5;
    let (a, b) = ((9f64 + 1.0).sqrt(), 1f64.atan2(3.0));
    assert_eq!(
        out.stdout.trim(),
        format!("{sr} {st} {q} {r} {a} {b} 5 6.25")
    );
}

#[test]
fn tuples_of_3_6_and_12_elements_compile_through_memory() {
    // More elements than the return registers hold: the caller passes the
    // callee a place for them (each function here compiles on its own).
    let src = "
fn three(x: f64) -> (f64, f64, i32) { return (x, x * 2.0, x as i32 + 1); }
fn six(a: i32) -> (i32, i64, f32, f64, bool, u8) {
    return (a, a as i64 * 3, a as f32 * 0.5, a as f64 + 0.25, a > 2, (a * 100) as u8);
}
fn twelve(a: i64) -> (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) {
    return (a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10, a * 1000);
}
fn sum12(a: i64) -> i64 {
    let (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11) = twelve(a);
    return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
}
let t = 0.0;
let s: i64 = 0;
for i in 0..10 {
    let (a, b, c) = three(i as f64);
    t += a + b + c as f64;
    s += sum12(i as i64);
}
let (p, q, r, u, v, w) = six(5);
let (y0, _, _, _, _, _, _, _, _, _, _, y11) = twelve(7);
println(t, \" \", s, \" \", p, \" \", q, \" \", r, \" \", u, \" \", v, \" \", w, \" \", y0 + y11);
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(counts, (4, 1), "all four functions compile: {}", out.stderr);
    // three(i): i + 2i + (i + 1) = 4i + 1, summed over 0..10: 190.
    // sum12(a) = 11a + (0 + .. + 10) + 1000a = 1011a + 55: 1011 * 45 + 550.
    // six(5): 5, 15, 2.5, 5.25, true, 500 mod 256 = 244; twelve(7): 7 + 7000.
    assert_eq!(
        out.stdout.trim(),
        format!("190 {} 5 15 2.5 5.25 true 244 7007", 1011 * 45 + 550)
    );
}

#[test]
fn a_function_that_stays_interpreted_leaves_the_others_compiled() {
    let src = "
fn show(x: f64) { println(\"x = \", x); }
fn fact(n: i64) -> i64 { if n < 2 { return 1; } return n * fact(n - 1); }
fn trio(x: f64) -> (f64, f64, f64) { return (x, x * x, x * x * x); }
let s = 0.0;
for i in 0..4 {
    let (a, b, c) = trio(i as f64);
    s += a + b + c;
}
show(s);
println(fact(5));
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    // 0 + 3 + 14 + 39 (i + i^2 + i^3 for i = 0..4).
    assert_eq!(out.stdout, "x = 56\n120\n");
    assert_eq!(counts, (1, 1), "trio and the loop compile: {}", out.stderr);
    assert!(
        out.stderr
            .contains("jit: function `show` stays interpreted: it calls the builtin `println`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("jit: function `fact` stays interpreted: it is recursive"),
        "{}",
        out.stderr
    );
}

/// The C-style generator of the benchmark, in Rust.
fn lcg(seed: &mut i64) -> i32 {
    *seed = (*seed * 1103515245 + 12345) % 2147483648;
    *seed as i32
}

#[test]
fn functions_on_top_level_variables_compile_and_share_them_with_the_interpreter() {
    // `rand_int` updates `seed` and `calls`; the top-level loop (compiled)
    // also writes `seed` itself between calls, and the interpreter reads
    // both after.
    let src = "
let seed: i64 = 1;
let calls = 0;
let scale = 0.5;
fn rand_int() -> i32 {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    calls += 1;
    return seed as i32;
}
fn noise(x: f64) -> f64 { return x * scale + (rand_int() % 100) as f64; }
let s: i64 = 0;
let f = 0.0;
for i in 0..1000 {
    s += rand_int() as i64;
    if i % 100 == 0 { seed += 7; }
    f += noise(i as f64);
}
println(s, \" \", seed, \" \", calls, \" \", f);
";
    let (out, counts) = both(src);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        counts,
        (2, 1),
        "rand_int, noise and the loop: {}",
        out.stderr
    );
    let (mut seed, mut s, mut f) = (1i64, 0i64, 0.0f64);
    for i in 0..1000 {
        s += lcg(&mut seed) as i64;
        if i % 100 == 0 {
            seed += 7;
        }
        f += i as f64 * 0.5 + (lcg(&mut seed) % 100) as f64;
    }
    assert_eq!(out.stdout.trim(), format!("{s} {seed} 2000 {f}"));
}

#[test]
fn time_says_what_stays_interpreted_and_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    let src = "fn sq(x: f64) -> f64 { return x * x; }
fn show(x: f64) { println(x); }
let s = 0.0;
for i in 0..10 { s += sq(i as f64); }
for i in 0..2 { show(s + i as f64); }
";
    std::fs::write(&path, src).expect("write script");
    let out = Command::new(env!("CARGO_BIN_EXE_accl"))
        .args(["run", "--host", "--time"])
        .arg(&path)
        .output()
        .expect("run accl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // 0^2 + .. + 9^2 = 285.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "285\n286\n");
    for want in [
        "host code: 1 function(s) and 1 loop(s) compiled to native code",
        "interpreted: function `show` at line 2: it calls the builtin `println`",
        "interpreted: loop at line 5: it calls `show`, which stays interpreted",
    ] {
        assert!(stderr.contains(want), "no `{want}` in\n{stderr}");
    }
}

/// The trace's lines about loops in SIMD.
fn simd_lines(out: &Out) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("jit: loop at bytes") && l.contains("SIMD"))
        .collect()
}

#[test]
fn simd_loops_give_the_interpreters_bits_for_every_trip_count() {
    // Row n runs n turns (0 to 12): empty, fewer than a group of lanes,
    // whole groups and every remainder, for 4-lane f32 and i32 and 2-lane
    // f64.
    let src = "
let b = zeros(f32, 16);
let d = zeros(f64, 16);
let p = zeros(i32, 16);
for j in 0..16 {
    b[j] = ((j * 7) % 13) as f32 / 7.0 + 0.1;
    d[j] = ((j * 5) % 11) as f64 / 3.0 - 1.0;
    p[j] = j * 715827883;
}
let a = zeros(f32, 13, 16);
let e = zeros(f64, 13, 16);
let q = zeros(i32, 13, 16);
let k = 1.7f32;
let m: i32 = 12345;
for n in 0..13 {
    for j in 0..n { a[n, j] = 0.2 * (b[j] + b[j + 1] * k - sqrt(b[j + 2])) / (b[j + 3] + 1.0); }
}
for n in 0..13 {
    for j in 0..n {
        let t = d[j] * d[j + 1];
        e[n, j] = t - -d[j] / 3.0 + abs(t - 0.5) + floor(t * 10.0);
        e[n, j] *= 1.5;
    }
}
for n in 0..13 {
    for j in 0..n { q[n, j] = max(p[j] * 3 - m, -p[j + 1]) + abs(p[j]) - min(p[j], 7); }
}
for n in 0..13 { for j in 0..16 { println(a[n, j], \" \", e[n, j], \" \", q[n, j]); } }
";
    let (out, _) = both(src);
    assert!(out.ok, "{}", out.stderr);
    let b: Vec<f32> = (0..16).map(|j| ((j * 7) % 13) as f32 / 7.0 + 0.1).collect();
    let d: Vec<f64> = (0..16).map(|j| ((j * 5) % 11) as f64 / 3.0 - 1.0).collect();
    let p: Vec<i32> = (0..16).map(|j: i32| j.wrapping_mul(715827883)).collect();
    let mut want = String::new();
    for n in 0..13 {
        for j in 0..16 {
            let (mut a, mut e, mut q) = (0f32, 0f64, 0i32);
            if j < n {
                a = 0.2 * (b[j] + b[j + 1] * 1.7 - b[j + 2].sqrt()) / (b[j + 3] + 1.0);
                let t = d[j] * d[j + 1];
                e = (t - -d[j] / 3.0 + (t - 0.5).abs() + (t * 10.0).floor()) * 1.5;
                q = (p[j].wrapping_mul(3).wrapping_sub(12345))
                    .max(p[j + 1].wrapping_neg())
                    .wrapping_add(p[j].wrapping_abs())
                    .wrapping_sub(p[j].min(7));
            }
            want += &format!("{a} {e} {q}\n");
        }
    }
    assert_eq!(out.stdout, want);
    let lines = simd_lines(&out);
    let has = |w: &str| lines.iter().filter(|l| l.contains(w)).count();
    assert_eq!(
        has("innermost loop `j` in 4-lane SIMD"),
        2,
        "{}",
        out.stderr
    );
    assert_eq!(
        has("innermost loop `j` in 2-lane SIMD"),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn simd_loops_keep_dependences_aliases_and_bounds_errors() {
    // `b` is `a`: the run-time check sees one array and runs the scalar
    // loop, which carries each element into the next.
    let src = "
let a = zeros(f32, 50);
a[0] = 1.5;
let b = a;
for j in 0..49 { b[j + 1] = a[j] + 1.0; }
let c = zeros(f64, 50);
c[0] = 2.0;
for j in 1..50 { c[j] = c[j - 1] * 1.5; }
let x = zeros(f32, 50);
let y = zeros(f32, 50);
for j in 0..50 { y[j] = 1.0 + j as f32; }
for j in 0..50 { x[j] = y[j] * 2.0; }
let p = zeros(i32, 9);
for j in 0..9 { p[j] = j * j; }
let t = zeros(i32, 2, 3, 9);
let r: i32 = 5;
for j in 0..8 { t[1, 2, j] = p[j + 1] - r; }
println(a[49], \" \", c[49], \" \", x[49], \" \", x[0]);
println(t[1, 2, 0], \" \", t[1, 2, 7], \" \", t[1, 2, 8], \" \", t[0, 2, 7], \" \", t[1, 1, 7]);
";
    let (out, _) = both(src);
    assert!(out.ok, "{}", out.stderr);
    let c49 = (1..50).fold(2.0f64, |c, _| c * 1.5);
    // t[1, 2, j] = (j + 1)^2 - 5 for j < 8, through the rank-3 row.
    assert_eq!(out.stdout, format!("50.5 {c49} 100 2\n-4 59 0 0 0\n"));
    // The aliased loop, the copy and the rank-3 row plan SIMD (the alias
    // is found at run time); the loop with a dependence does not.
    assert_eq!(simd_lines(&out).len(), 3, "{}", out.stderr);
    // Out of bounds in a loop that would run in SIMD: the same error, at
    // the element where the interpreter stops (j = 39 reads y[40]), after
    // the same elements were written.
    for (src, want) in [
        (
            "let x = zeros(f32, 40);\nlet y = zeros(f32, 40);\nfor j in 0..40 { x[j] = y[j + 1] * 2.0; }\n",
            "index 40, extent 40",
        ),
        (
            "let m = zeros(f64, 3, 40);\nlet w = zeros(f64, 3, 40);\nlet r = 3;\nfor j in 0..40 { w[r, j] = m[0, j] + 1.0; }\n",
            "index 3, extent 3",
        ),
    ] {
        let (out, _) = both(src);
        assert!(!out.ok);
        assert!(out.stderr.contains(want), "{}", out.stderr);
    }
}

#[test]
fn accl_jit_simd_0_keeps_the_loops_scalar_with_the_same_results() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.accl");
    let src = "let x = zeros(f32, 103);
let y = zeros(f32, 103);
for j in 0..103 { y[j] = 0.1 * j as f32; }
for j in 0..102 { x[j] = (y[j] + y[j + 1]) / 3.0; }
println(x[0], \" \", x[57], \" \", x[101], \" \", x[102]);
";
    std::fs::write(&path, src).expect("write script");
    let run = |simd: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_accl"))
            .args(["run", "--host"])
            .arg(&path)
            .env("ACCL_JIT_SIMD", simd)
            .env("ACCL_JIT_TRACE", "1")
            .output()
            .expect("run accl");
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let ((on, on_trace), (off, off_trace)) = (run("1"), run("0"));
    let y = |j: usize| 0.1f32 * j as f32;
    let x = |j: usize| (y(j) + y(j + 1)) / 3.0;
    assert_eq!(on, format!("{} {} {} 0\n", x(0), x(57), x(101)));
    assert_eq!(on, off);
    assert!(
        on_trace.contains("innermost loop `j` in 4-lane SIMD"),
        "{on_trace}"
    );
    assert!(!off_trace.contains("SIMD"), "{off_trace}");
}
