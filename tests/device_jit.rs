//! Kernels are compiled ahead of their first launch: when an input is
//! compiled, its kernels' SPIR-V and pipelines are built on worker threads
//! for the current device, and each launch takes its own. On lavapipe
//! with the validation layer on; results against the host reference.

use crate::common;
use common::{same_as_host, Floats};

const THREE: &str = "
    let a = zeros(f32, 4096);
    let b = zeros(f32, 4096);
    let t = 0.0f32;
    parallel loop for i in 0..4096 { a[i] = i as f32 * 0.5; }
    parallel loop reduction(+: t) for i in 0..4096 { b[i] = a[i] + 1.0; t += b[i]; }
    let n = 4000;
    parallel loop for i in 1..n { a[i] = b[i - 1] - b[i]; }";

/// The compile events of a traced run of `src`: (name, duration in us).
fn compiles(src: &str) -> Vec<(String, f64)> {
    common::trace_events(src)
        .iter()
        .filter(|x| x["cat"] == "compile")
        .map(|x| {
            (
                x["name"].as_str().unwrap_or("").to_string(),
                x["dur"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect()
}

#[test]
fn every_kernel_of_an_input_is_compiled_ahead_of_its_first_launch() {
    let c = compiles(THREE);
    let ahead: Vec<&String> = c
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.ends_with("ahead"))
        .collect();
    assert_eq!(ahead.len(), 3, "{c:?}");
    for k in ["kernel_0", "kernel_1", "kernel_2"] {
        assert!(
            ahead.iter().any(|n| n.contains(&format!("compile {k} "))),
            "{k} not compiled ahead: {c:?}"
        );
    }
    assert!(c.iter().all(|(_, d)| *d >= 0.0), "{c:?}");
}

#[test]
fn kernels_compiled_ahead_give_the_host_results() {
    let (_, dev) = same_as_host(THREE, Floats::Exact);
    if let Err(e) = &dev.result {
        panic!("{}", e.render(100));
    }
    // t = sum of (i / 2 + 1) over 4096 (every partial sum a multiple of
    // 0.5 below 2^23, so exact in f32); a[i] = b[i - 1] - b[i] = -0.5.
    let e = &dev.engine;
    assert_eq!(e.get::<f32>("t"), Some(4_197_376.0));
    let a = e.get_array::<f32>("a").unwrap().0;
    assert_eq!((a[0], a[1], a[3999], a[4000]), (0.0, -0.5, -0.5, 2000.0));
}

#[test]
fn a_kernel_in_a_function_and_one_never_launched_are_harmless() {
    // The function's kernel is compiled ahead too; the one behind a false
    // condition is compiled and never used.
    let src = "
        fn fill(x: f32[], v: f32) { let n = len(x); parallel loop for i in 0..n { x[i] = v; } }
        let a = zeros(f32, 100);
        fill(a, 2.0);
        if a[0] > 10.0 { parallel loop for i in 0..100 { a[i] = 0.0; } }
        let s = a[99];";
    let (_, dev) = same_as_host(src, Floats::Exact);
    if let Err(e) = &dev.result {
        panic!("{}", e.render(100));
    }
    assert_eq!(dev.engine.get::<f32>("s"), Some(2.0));
}
