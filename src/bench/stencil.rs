//! `accl bench host`'s compute constructs on the host backend: a 2-D
//! 5-point stencil `parallel loop collapse(2)` (compiled by the host JIT)
//! on one thread and on all of them, beside the same loops in C built
//! with `cc -O2` (one thread); and a `private` array against the same
//! loop with the array's elements as scalars declared in the body.

use crate::Engine;
use std::process::Command;

const N: usize = 2048;
const SWEEPS: usize = 10;

/// Jacobi sweeps between two arrays; `sum` checks the result against C's.
fn stencil_src() -> String {
    format!(
        "const N = {N};
let a = zeros(f32, N, N);
let b = zeros(f32, N, N);
for i in 0..N {{ for j in 0..N {{ a[i, j] = ((i * 7 + j * 3) % 11) as f32; }} }}
let t0 = clock();
data copy(a) create(b) {{
    for s in 0..{half} {{
        parallel loop collapse(2) for i in 1..N - 1 {{
            for j in 1..N - 1 {{
                b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]);
            }}
        }}
        parallel loop collapse(2) for i in 1..N - 1 {{
            for j in 1..N - 1 {{
                a[i, j] = 0.2 * (b[i, j] + b[i - 1, j] + b[i + 1, j] + b[i, j - 1] + b[i, j + 1]);
            }}
        }}
    }}
}}
let secs = clock() - t0;
let sum = a[N / 2, N / 3] + a[7, 9] + a[N - 2, N - 2];
",
        half = SWEEPS / 2
    )
}

const STENCIL_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]), sweeps = atol(argv[2]);
    float *a = calloc(n * n, sizeof(float)), *b = calloc(n * n, sizeof(float));
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) a[i * n + j] = (float)((i * 7 + j * 3) % 11);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long s = 0; s < sweeps / 2; s++) {
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                b[i * n + j] = 0.2f * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                a[i * n + j] = 0.2f * (b[i * n + j] + b[(i - 1) * n + j] + b[(i + 1) * n + j] + b[i * n + j - 1] + b[i * n + j + 1]);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    float sum = a[(n / 2) * n + n / 3] + a[7 * n + 9] + a[(n - 2) * n + n - 2];
    printf("%.9f %.9g\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, sum);
    return 0;
}
"#;

/// Seconds of the accl sweeps (median of `runs`) on `threads` threads, and
/// the checksum of the last run.
fn stencil_accl(threads: usize, runs: usize) -> Result<(f64, f32), String> {
    crate::interp::native::set_threads(threads);
    let src = stencil_src();
    let mut t = Vec::new();
    let mut sum = 0.0;
    for _ in 0..runs {
        let mut e = Engine::new();
        let r = e.eval(&src).map_err(|e| e.render(100));
        crate::interp::native::set_threads(threads);
        r?;
        t.push(e.get::<f64>("secs").ok_or("no `secs`")?);
        sum = e.get::<f32>("sum").ok_or("no `sum`")?;
    }
    crate::interp::native::set_threads(0);
    Ok((median(t), sum))
}

/// A `private` array against the same loop with scalars declared in the
/// body: seconds of each (median of `runs`).
fn private_vs_locals(runs: usize) -> Result<(f64, f64), String> {
    let n = 400_000;
    let private = format!(
        "let a = zeros(f64, {n});
let tmp = zeros(f64, 4);
let t0 = clock();
parallel loop private(tmp) copy(a) for i in 0..{n} {{
    for k in 0..4 {{ tmp[k] = (i + k) as f64; }}
    a[i] = tmp[0] + tmp[3];
}}
let secs = clock() - t0;
"
    );
    let locals = format!(
        "let a = zeros(f64, {n});
let t0 = clock();
parallel loop copy(a) for i in 0..{n} {{
    let t0_ = 0.0;
    let t3 = 0.0;
    for k in 0..4 {{
        if k == 0 {{ t0_ = (i + k) as f64; }}
        if k == 3 {{ t3 = (i + k) as f64; }}
    }}
    a[i] = t0_ + t3;
}}
let secs = clock() - t0;
"
    );
    let time = |src: &str| -> Result<f64, String> {
        let mut t = Vec::new();
        for _ in 0..runs {
            let mut e = Engine::new();
            e.eval(src).map_err(|e| e.render(100))?;
            t.push(e.get::<f64>("secs").ok_or("no `secs`")?);
        }
        Ok(median(t))
    };
    Ok((time(&private)?, time(&locals)?))
}

/// Print the stencil and private-array figures.
pub fn figures(runs: usize) -> Result<(), String> {
    let all = crate::interp::native::threads();
    let (one, sum1) = stencil_accl(1, runs)?;
    let (many, sum_n) = stencil_accl(all, runs)?;
    if sum1.to_bits() != sum_n.to_bits() {
        return Err(format!(
            "the stencil on 1 and {all} threads: {sum1} and {sum_n}"
        ));
    }
    let cells = ((N - 2) * (N - 2) * SWEEPS) as f64;
    let c = c_program(
        "stencil",
        STENCIL_C,
        &[N.to_string(), SWEEPS.to_string()],
        runs,
    );
    let per = |s: f64| s * 1e9 / cells;
    match c {
        Ok((c_s, out)) => {
            let c_sum: f32 = out.trim().parse().map_err(|_| format!("C printed {out}"))?;
            if (c_sum - sum1).abs() > 1e-3 * c_sum.abs().max(1.0) {
                return Err(format!("the C stencil summed {c_sum}, accl {sum1}"));
            }
            outln!(
                "5-point stencil on --host ({N}x{N} f32, {SWEEPS} sweeps, parallel loop collapse(2)): accl 1 thread {:.2} ns a cell ({:.2}x C), {all} threads {:.2} ns ({:.2}x C); C (cc -O2, 1 thread) {:.2} ns",
                per(one),
                one / c_s,
                per(many),
                many / c_s,
                per(c_s)
            );
        }
        Err(why) => outln!(
            "5-point stencil on --host ({N}x{N} f32, {SWEEPS} sweeps): accl 1 thread {:.2} ns a cell, {all} threads {:.2} ns (no C figure: {why})",
            per(one),
            per(many)
        ),
    }
    let (p, l) = private_vs_locals(runs)?;
    outln!(
        "private array on --host (400000 iterations, 4 elements): {:.2} ms, scalars declared in the body {:.2} ms: {:.2}x",
        p * 1e3,
        l * 1e3,
        p / l
    );
    Ok(())
}

/// Build C program `src` with `cc -O2` and run it `runs` times with
/// `args`: the median of the seconds it prints first, and the rest of its
/// last output. `Err` with why when there is no C compiler.
pub(super) fn c_program(
    name: &str,
    src: &str,
    args: &[String],
    runs: usize,
) -> Result<(f64, String), String> {
    let dir = std::env::temp_dir().join(format!("accl-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (file, exe) = (dir.join(format!("{name}.c")), dir.join(name));
    let r = (|| {
        std::fs::write(&file, src).map_err(|e| e.to_string())?;
        let built = Command::new("cc")
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg(&file)
            .output()
            .map_err(|e| format!("no C compiler (`cc`: {e})"))?;
        if !built.status.success() {
            return Err(format!(
                "`cc -O2` failed: {}",
                String::from_utf8_lossy(&built.stderr).trim()
            ));
        }
        let (mut t, mut rest) = (Vec::new(), String::new());
        for _ in 0..runs {
            let out = Command::new(&exe)
                .args(args)
                .output()
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let (secs, more) = text.trim().split_once(' ').ok_or("no time")?;
            t.push(secs.parse::<f64>().map_err(|e| e.to_string())?);
            rest = more.to_string();
        }
        Ok((median(t), rest))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
