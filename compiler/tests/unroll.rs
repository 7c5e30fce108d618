//! `compiler::unroll`: unrolled kernels mean the same, pass `spirv-val`, and
//! get past llvmpipe's shared budget of 65,535 loop iterations per SIMD
//! group, which silently truncates the plain kernel.

mod common;
use common::*;
use std::collections::HashMap;

const SRC: &str = "
fn steps(k: i32) -> i32 {
    let i = 0;
    let s = 0;
    while i < k {
        s += i % 7;
        i += 1;
        if s > 1000000000 { break; }
    }
    return s;
}
let out = zeros(i32, 64);
parallel loop for j in 0..64 {
    let t = 0;
    for r in 0..40 {
        t += steps(j * 50 + r);
    }
    out[j] = t;
}
";

fn expected() -> Vec<i32> {
    let steps = |k: i32| (0..k).map(|i| i % 7).sum::<i32>();
    (0..64)
        .map(|j| (0..40).map(|r| steps(j * 50 + r)).sum())
        .collect()
}

fn run_with(factor: usize) -> Vec<i32> {
    let src = Source::new(SRC);
    let mut k = src.kernel(0);
    compiler::unroll::unroll(&mut k, factor, true);
    let mut out = Vec::new();
    with_device(|dev| {
        let spec = spec_for(dev);
        let arrays = HashMap::from([("out", Arr::whole(vec![0; 64 * 4], &[64]))]);
        let ran = run(dev, &src, &k, &spec, &[], &arrays);
        out = ran.arrays[0]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
    });
    out
}

#[test]
fn unrolled_kernels_compute_the_same_and_pass_spirv_val() {
    // Up to 40 * 3189 = 127,560 iterations per invocation: beyond
    // llvmpipe's budget without unrolling, within it unrolled 8 times.
    assert_eq!(run_with(8), expected());
    assert_eq!(run_with(3), expected());
}

#[test]
fn unrolling_copies_the_innermost_loops_only() {
    let src = Source::new(SRC);
    let mut k = src.kernel(0);
    let before = compiler::disassemble(&compiler::compile(&k, &compiler::Spec::default()).unwrap());
    compiler::unroll::unroll(&mut k, 4, true);
    let after = compiler::disassemble(&compiler::compile(&k, &compiler::Spec::default()).unwrap());
    let loops = |s: &str| s.matches("OpLoopMerge").count();
    assert_eq!(
        loops(before.as_str()),
        loops(after.as_str()),
        "no new loops"
    );
    let mods = |s: &str| s.matches("OpSMod").count() + s.matches("OpSRem").count();
    assert_eq!(
        mods(after.as_str()),
        4 * mods(before.as_str()),
        "the while body four times"
    );
}

#[test]
fn loops_that_write_memory_stay_rolled_off_llvmpipe() {
    // NVIDIA's driver miscompiled unrolled loops that update an array
    // element (see `compiler::compile`); llvmpipe needs every loop
    // unrolled for its loop cap, and a loop that only computes a value is
    // unrolled everywhere.
    let src = Source::new(
        "routine seq fn f(b: f64[], n: i32) { for y in 0..n { b[0] += 1.5; } }
         fn g(n: i32) -> f64 { let s = 0.0; for y in 0..n { s *= 0.5; } return s; }
         let b = zeros(f64, 4);
         parallel { f(b, 100); }
         parallel loop for i in 0..4 { b[i] = g(i); }
         parallel loop for i in 0..4 { for y in 0..i { b[i] -= 2.5; } }",
    );
    let count = |k: usize, op: &str, loop_cap| {
        let spec = compiler::Spec {
            unroll: 4,
            loop_cap,
            ..compiler::Spec::default()
        };
        compiler::disassemble(&compiler::compile(&src.kernel(k), &spec).unwrap())
            .matches(op)
            .count()
    };
    assert_eq!(
        count(0, "OpFAdd", false),
        1,
        "a function's writing loop as written"
    );
    assert_eq!(count(0, "OpFAdd", true), 4, "unrolled for llvmpipe's cap");
    assert_eq!(count(1, "OpFMul", false), 4, "a loop that only computes");
    assert_eq!(
        count(2, "OpFSub", false),
        1,
        "the kernel's own writing loop"
    );
    assert_eq!(count(2, "OpFSub", true), 4);
}
