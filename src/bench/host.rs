//! The rest of `accl bench host`: a C-style random generator on a global
//! (a seeded linear congruential generator, as Rodinia's set-up code has
//! it) beside the same generator in C built with `cc -O2` when a C
//! compiler is present, and the per-launch time of async kernels with a
//! private array that the program never waits for, at the start of a long
//! run and at its end.

use crate::Engine;
use std::time::Instant;

/// The generator: `seed` is a top-level variable, `rand_int` compiles.
const RAND_SRC: &str = "let seed: i64 = 1;
fn rand_int() -> i32 {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed as i32;
}
let acc: i64 = 0;
for i in 0..n { acc += rand_int() as i64; }
";

/// The same generator and loop in C; prints the seconds the loop took and
/// the sum (checked against accl's).
const RAND_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long seed = 1;
static int rand_int(void) {
    seed = (seed * 1103515245LL + 12345) % 2147483648LL;
    return (int)seed;
}
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    struct timespec a, b;
    long long acc = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) acc += rand_int();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f %lld\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9, acc);
    return 0;
}
"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Nanoseconds per value of the accl generator (median of `runs`) and the
/// sum of the last run.
fn rand_accl(n: usize, runs: usize) -> Result<(f64, i64), String> {
    let mut e = Engine::new();
    e.set("n", n as i64);
    let p = e.compile(RAND_SRC).map_err(|e| e.render(100))?;
    let mut t = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        e.run(&p).map_err(|e| e.render(100))?;
        t.push(t0.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    let acc = e.get::<i64>("acc").ok_or("no `acc` after the run")?;
    Ok((median(t), acc))
}

/// Nanoseconds per value of the C generator (median of `runs`) and its
/// sum; `Err` with why when there is no C compiler.
fn rand_c(n: usize, runs: usize) -> Result<(f64, i64), String> {
    let (secs, rest) = super::stencil::c_program("rand", RAND_C, &[n.to_string()], runs)?;
    let acc = rest.trim().parse().map_err(|_| "no sum")?;
    Ok((secs * 1e9 / n as f64, acc))
}

/// Async launches with a private array, never waited for until the end:
/// milliseconds per launch over the first and the last `window` of `n`.
fn private_launches(n: usize, window: usize) -> Result<(f64, f64), String> {
    let mut e = Engine::new();
    let src = format!(
        "let a = zeros(f64, 64);
let tmp = zeros(f64, 8);
let first = 0.0;
let last = 0.0;
let t0 = clock();
for step in 0..{n} {{
    if step == {n} - {window} {{ t0 = clock(); }}
    parallel loop async(1) private(tmp) copy(a) for i in 0..64 {{
        for k in 0..8 {{ tmp[k] = (i + k) as f64; }}
        a[i] = tmp[3];
    }}
    if step == {window} - 1 {{ first = clock() - t0; }}
}}
last = clock() - t0;
wait;
"
    );
    e.eval(&src).map_err(|e| e.render(100))?;
    let get = |v: &str| e.get::<f64>(v).ok_or(format!("no `{v}`"));
    let k = 1e3 / window as f64;
    Ok((get("first")? * k, get("last")? * k))
}

/// Print the generator and launch figures (`runs` timed runs each).
pub fn extras(runs: usize) -> Result<(), String> {
    let n = 10_000_000;
    // One thread (as the C runs), then all: the loop's chunks start from
    // the generator's state jumped ahead.
    let all = crate::interp::native::threads();
    crate::interp::native::set_threads(1);
    let one = rand_accl(n, runs);
    crate::interp::native::set_threads(0);
    let (ns, acc) = one?;
    let (ns_all, acc_all) = rand_accl(n, runs)?;
    if acc_all != acc {
        return Err(format!(
            "on {all} threads accl summed {acc_all}, on one {acc}"
        ));
    }
    let c = rand_c(n, runs);
    match &c {
        Ok((c_ns, c_acc)) => {
            if *c_acc != acc {
                return Err(format!("the C generator summed {c_acc}, accl {acc}"));
            }
            outln!(
                "C-style generator on a global (`seed`, {n} calls): accl {ns:.2} ns a value on one thread, {ns_all:.2} on {all}; C (cc -O2, one thread) {c_ns:.2} ns: {:.2}x C, {:.2}x C",
                ns / c_ns,
                ns_all / c_ns
            );
        }
        Err(why) => outln!(
            "C-style generator on a global (`seed`, {n} calls): accl {ns:.2} ns a value on one thread, {ns_all:.2} on {all} (no C figure: {why})"
        ),
    }
    let (launches, window) = (5000, 500);
    let (first, last) = private_launches(launches, window)?;
    outln!(
        "async launches with a private array, never waited for ({launches}): {first:.3} ms a launch over the first {window}, {last:.3} ms over the last {window}"
    );
    super::stencil::figures(runs)
}
