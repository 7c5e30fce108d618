//! Faults and limits (docs/reliability.md): bounds-check mode, the loop
//! watchdog, out of device memory, a missing device feature, and every
//! embedding limit. Each test checks the diagnostic (a snapshot where the
//! exact span and values matter), that host data is as it was, and that the
//! same `Engine` then runs a correct program. On lavapipe in CI, with the
//! validation layer on and every module through `spirv-val`.

use crate::common;
use accl::Engine;
use insta::assert_snapshot;
use std::time::Duration;

fn dev() -> Engine {
    let mut e = common::device_engine();
    e.set_print(|_| {});
    e
}

fn host() -> Engine {
    let mut e = Engine::new();
    e.set_print(|_| {});
    e
}

/// A device engine in check mode, after `init` ran (without checks).
fn checked(init: &str) -> Engine {
    let mut e = dev();
    setup(&mut e, init);
    e.set_checks(true);
    e
}

/// The error of `src`, rendered plain at 80 columns.
fn fail(e: &mut Engine, src: &str) -> accl::Error {
    let r = e.eval_source("test.accl", src);
    clean(e);
    match r {
        Ok(_) => panic!("expected an error from:\n{src}"),
        Err(err) => err,
    }
}

fn render(err: &accl::Error) -> String {
    lang::diag::render_plain(&err.source, &err.diags, 80)
}

/// Run `src`, which must succeed (the setup of a test: variables of an
/// input that fails are not kept).
fn setup(e: &mut Engine, src: &str) {
    if let Err(err) = e.eval(src) {
        panic!("setup failed:\n{}", err.render(100));
    }
}

/// The source text under each label of the first diagnostic.
fn labels(src: &str, err: &accl::Error) -> Vec<String> {
    err.diags[0]
        .labels
        .iter()
        .map(|(s, _)| src[s.start as usize..s.end as usize].to_string())
        .collect()
}

fn clean(e: &Engine) {
    let m = e.take_validation_messages();
    assert!(m.is_empty(), "validation messages:\n{}", m.join("\n"));
}

/// The engine still works: a kernel whose result the host reference
/// computes too.
fn still_works(e: &mut Engine) {
    let src = "let w = arange(f32, 1000.0);
               parallel loop for i in 0..1000 { w[i] = w[i] * 2.0 + 1.0; }";
    if let Err(err) = e.eval(src) {
        panic!(
            "the engine no longer runs a correct program:\n{}",
            err.render(100)
        );
    }
    clean(e);
    let mut h = host();
    h.eval(src).unwrap();
    assert_eq!(e.get_array::<f32>("w"), h.get_array::<f32>("w"));
}

// ---- bounds-check mode ------------------------------------------------------

/// A load on the right of `&&` is skipped where the left side is false, in
/// check mode too: the guard stops the read past the end, and the flat
/// loop condition beside it computes what the host does.
#[test]
fn check_mode_skips_a_load_its_guard_rules_out() {
    let src = "const N = 1000;
               let a = zeros(i32, N);
               for i in 0..N { a[i] = i % 3 - 1; }
               let out = zeros(i32, N);
               parallel loop copyin(a) copyout(out) for i in 0..N {
                   let next = 0;
                   if i + 1 < N && a[i + 1] > 0 { next = 1; }
                   let k = 0;
                   while k < 40 && (k * k < i || k == 3) { k += 1; }
                   out[i] = k * 10 + next;
               }";
    let mut e = checked("");
    setup(&mut e, src);
    let mut h = host();
    setup(&mut h, src);
    let out = e.get_array::<i32>("out").unwrap().0;
    assert_eq!(Some(&out), h.get_array::<i32>("out").map(|a| a.0).as_ref());
    assert_eq!(&out[..4], &[0, 11, 20, 20]);
    still_works(&mut e);
}

#[test]
fn check_mode_reports_an_out_of_bounds_read_as_the_host_does() {
    let init = "let n = 10; let a = arange(f32, 10.0); let b = zeros(f32, n);";
    let src = "parallel loop for i in 0..n {
    b[i] = a[i + 1] * 2.0;
}";
    let mut e = checked(init);
    let err = fail(&mut e, src);
    assert_snapshot!(render(&err));
    assert_eq!(labels(src, &err), ["i + 1", "a[i + 1]"]);
    // The same diagnostic as the host reference's.
    let mut h = host();
    setup(&mut h, init);
    let h = fail(&mut h, src);
    assert_eq!(err.diags[0].code, h.diags[0].code);
    assert_eq!(err.diags[0].message, h.diags[0].message);
    // Nothing of the kernel came back: `b` is still zeros.
    assert_eq!(e.get_array::<f32>("b").unwrap().0, vec![0.0; 10]);
    still_works(&mut e);
}

#[test]
fn a_kernel_compiled_again_reports_its_own_source_positions() {
    // Modules are cached by kernel fingerprint, so the same construct run
    // again reuses its module; the fault sites baked into a module are
    // source positions, so the same kernel text at another place is
    // another module, and every run reports where its own input says.
    let init = "let a = arange(f32, 10.0); let b = zeros(f32, 10);";
    let src = "parallel loop for i in 0..10 { b[i] = a[i + 1]; }";
    let mut e = checked(init);
    for shifted in [
        src.to_string(),
        format!("let pad = 1;\n  {src}"),
        src.to_string(),
    ] {
        let err = fail(&mut e, &shifted);
        assert_eq!(labels(&shifted, &err), ["i + 1", "a[i + 1]"], "{shifted}");
    }
    still_works(&mut e);
}

#[test]
fn check_mode_reports_an_out_of_bounds_write_and_keeps_host_data() {
    // One invocation faults (i = 7, index -1): the snapshot is stable.
    // (With several, which one is reported is unspecified.)
    let src = "parallel loop for i in 0..8 {
    a[6 - i] = -1;
}";
    let mut e = checked("let a = arange(i32, 8);");
    let err = fail(&mut e, src);
    assert_snapshot!(render(&err));
    assert_eq!(err.diags[0].code, "accl::run::index_out_of_bounds");
    // The in-bounds writes were not copied back either.
    assert_eq!(
        e.get_array::<i32>("a").unwrap().0,
        (0..8).collect::<Vec<_>>()
    );
    still_works(&mut e);
}

#[test]
fn check_mode_reports_the_axis_of_a_2d_access() {
    let src = "parallel loop collapse(2) for i in 0..4 {
    for j in 0..6 {
        m[i, j + i] = 1.0;
    }
}";
    let mut e = checked("let m = zeros(f32, 4, 6);");
    let err = fail(&mut e, src);
    assert_eq!(labels(src, &err)[0], "j + i");
    assert!(
        err.diags[0].message.contains("for axis 1 of extent 6"),
        "{}",
        err.diags[0].message
    );
    assert_eq!(e.get_array::<f32>("m").unwrap().0, vec![0.0; 24]);
    still_works(&mut e);
}

#[test]
fn check_mode_reports_integer_division_by_zero() {
    let src = "parallel loop for i in 0..10 {
    a[i] = 100 / (a[i] - 3);
}";
    let mut e = checked("let a = arange(i32, 10);");
    let err = fail(&mut e, src);
    assert_snapshot!(render(&err));
    let mut h = host();
    setup(&mut h, "let a = arange(i32, 10);");
    let h = fail(&mut h, src);
    assert_eq!(err.diags[0].code, h.diags[0].code);
    assert_eq!(labels(src, &err), labels(src, &h));
    assert_eq!(
        e.get_array::<i32>("a").unwrap().0,
        (0..10).collect::<Vec<_>>()
    );
    still_works(&mut e);
}

#[test]
fn check_mode_reports_a_row_outside_the_present_section() {
    let src = "data copyin(a[10:20]) {
    parallel loop present(a[10:20]) for i in 10..31 { a[i] = 1.0; }
}";
    let mut e = checked("let a = zeros(f32, 100);");
    let err = fail(&mut e, src);
    assert_snapshot!(render(&err));
    assert_eq!(err.diags[0].code, "accl::device::outside_section");
    assert_eq!(e.get_array::<f32>("a").unwrap().0, vec![0.0; 100]);
    still_works(&mut e);
}

#[test]
fn check_mode_skips_an_atomic_out_of_bounds() {
    let src = "parallel loop for i in 0..16 {
    atomic bins[keys[i]] += 1;
}";
    let mut e = checked("let keys = arange(i32, 16); let bins = zeros(i32, 8);");
    let err = fail(&mut e, src);
    assert_eq!(err.diags[0].code, "accl::run::index_out_of_bounds");
    assert_eq!(labels(src, &err)[0], "keys[i]");
    assert_eq!(e.get_array::<i32>("bins").unwrap().0, vec![0; 8]);
    still_works(&mut e);
}

#[test]
fn check_mode_async_kernels_report_at_their_construct() {
    let src = "parallel loop async(1) for i in 0..32 { a[i + 1] = 1.0; }
wait(1);";
    let mut e = checked("let a = zeros(f32, 32);");
    let err = fail(&mut e, src);
    assert_eq!(labels(src, &err)[0], "i + 1");
    assert_eq!(e.get_array::<f32>("a").unwrap().0, vec![0.0; 32]);
    still_works(&mut e);
}

#[test]
fn check_mode_passes_correct_examples_with_the_host_results() {
    for name in ["saxpy", "jacobi", "histogram", "spmv", "gram_schmidt"] {
        let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(format!("{name}.accl"));
        let src = std::fs::read_to_string(p).unwrap();
        let mut e = dev();
        e.set_checks(true);
        if let Err(err) = e.eval_source(name, &src) {
            panic!("{name} fails in check mode:\n{}", err.render(100));
        }
        clean(&e);
    }
}

#[test]
fn without_check_mode_a_stray_write_stays_inside_its_own_buffer() {
    // robustBufferAccess: an out-of-bounds store is dropped or lands in the
    // array's own buffer, never in another array.
    let src = "let a = zeros(f32, 16);
let b = zeros(f32, 16);
parallel loop for i in 0..16 { a[i + 1000] = 7.0; b[i] = b[i] + 1.0; }";
    let mut e = dev();
    e.eval(src).expect("no check: no error");
    clean(&e);
    assert_eq!(e.get_array::<f32>("b").unwrap().0, vec![1.0; 16]);
}

// ---- the loop watchdog ------------------------------------------------------

const ENDLESS: &str = "parallel loop for i in 0..64 {
    let k = 0;
    while k >= 0 { k = (k + 1) % 1000; }
    a[i] = k;
}";

#[test]
fn the_watchdog_stops_a_kernel_that_never_ends() {
    let mut e = dev();
    setup(&mut e, "let a = zeros(i32, 64);");
    e.set_loop_budget(10_000);
    let err = fail(&mut e, ENDLESS);
    assert_snapshot!(render(&err));
    assert_eq!(err.diags[0].code, "accl::device::loop_budget");
    assert_eq!(
        labels(ENDLESS, &err)[0],
        "while k >= 0 { k = (k + 1) % 1000; }"
    );
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![0; 64]);
    e.set_loop_budget(accl::DEFAULT_LOOP_BUDGET);
    still_works(&mut e);
}

#[test]
fn a_loop_the_driver_cuts_short_is_an_error_not_a_wrong_result() {
    // On llvmpipe the kernel stops before the driver's own cap (65,535
    // back-edges) and resumes, dispatch after dispatch, so the budget
    // stops it there too; a loop the driver did cut (one in a called
    // function, which cannot stop midway) would be `loop_cut`.
    let mut e = dev();
    setup(&mut e, "let a = zeros(i32, 64);");
    e.set_loop_budget(1_000_000);
    let err = fail(&mut e, ENDLESS);
    e.set_loop_budget(accl::DEFAULT_LOOP_BUDGET);
    let code = err.diags[0].code;
    assert!(
        code == "accl::device::loop_cut" || code == "accl::device::loop_budget",
        "{}",
        render(&err)
    );
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![0; 64]);
    still_works(&mut e);
}

#[test]
fn long_loops_that_end_are_not_reported() {
    let src = "let a = zeros(i32, 4);
parallel loop for i in 0..4 {
    let k = 0;
    while k < 200000 { k += 1; }
    a[i] = k;
}";
    let mut e = dev();
    e.eval(src).unwrap();
    clean(&e);
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![200_000; 4]);
}

/// Kernels whose invocations take more loop back-edges than llvmpipe's cap
/// between them, through loops with constant bounds (which the watchdog does
/// not count): on llvmpipe the run is `accl::device::loop_cut` and the host
/// array keeps its values; on a driver without the cap the values are right.
/// Either way, never a wrong result.
#[test]
fn long_one_lane_kernels_are_right_or_reported() {
    let cases = [
        // One lane walks 10^6 iterations of a loop with no loop inside.
        // (Arrays stay under the size of direct copies, which may show a
        // stopped kernel's partial results: docs/reliability.md.)
        (
            "serial loop for i in 0..1000000 { a[i % 1000] += 1.0; }",
            "let a = zeros(f64, 1000);",
            1000,
            1000.0,
        ),
        // One lane, nested constant-bound loops (10^6 inner iterations).
        (
            "serial loop for x in 0..100 {
                 for y in 0..100 {
                     let t = 0.0;
                     for z in 0..100 { t += 1.0; }
                     a[x * 100 + y] = t;
                 }
             }",
            "let a = zeros(f64, 10000);",
            10_000,
            100.0,
        ),
        // A one-lane region whose loops hold a loop reduction: llvmpipe
        // left the outer loop after its first row.
        (
            "serial {
                 for y in 0..10 {
                     let avg = 0.0;
                     while avg < 1000.0 {
                         avg = 0.0;
                         loop reduction(+: avg) for x in 0..100 {
                             a[100 * y + x] *= 2.0;
                             avg += a[100 * y + x] / 100.0;
                         }
                     }
                 }
             }",
            "let a = full(f64, 1.0, 1000);",
            1000,
            1024.0,
        ),
        // A one-iteration parallel loop whose body nests the same loops.
        (
            "parallel loop for x in 0..1 {
                 for y in 0..10000 {
                     let t = 0.0;
                     for z in 0..100 { t += 1.0; }
                     a[y] = t;
                 }
             }",
            "let a = zeros(f64, 10000);",
            10_000,
            100.0,
        ),
    ];
    let mut e = dev();
    let llvmpipe = e.devices().first().is_some_and(|d| d.contains("llvmpipe"));
    for (src, init, n, want) in cases {
        setup(&mut e, init);
        match e.eval_source("test.accl", src) {
            Ok(_) => {
                clean(&e);
                let a = e.get_array::<f64>("a").unwrap().0;
                let wrong = a.iter().filter(|&&v| v != want).count();
                assert_eq!(wrong, 0, "{wrong} of {n} wrong after:\n{src}");
            }
            Err(err) => {
                clean(&e);
                assert_eq!(
                    err.diags[0].code,
                    "accl::device::loop_cut",
                    "{}",
                    render(&err)
                );
                assert!(llvmpipe, "cut short off llvmpipe: {}", render(&err));
                let a = e.get_array::<f64>("a").unwrap().0;
                let before = if init.contains("full") { 1.0 } else { 0.0 };
                assert!(
                    a.iter().all(|&v| v == before),
                    "partial results copied back"
                );
            }
        }
    }
    still_works(&mut e);
}

#[test]
fn one_lane_kernels_past_the_loop_cap_run_in_parts() {
    // 10^6 iterations in order on one lane: on llvmpipe in several
    // dispatches, each well below its cap, in turn; known answers on both.
    let cases = [
        (
            "serial loop for i in 0..1000000 { a[i % 1000] += 1.0; }",
            "let a = zeros(f64, 1000);",
            1000.0,
        ),
        (
            "serial loop tile(*, *) for x in 0..100 {
                 for y in 0..100 {
                     let t = 0.0;
                     for z in 0..100 { t += 1.0; }
                     a[x * 100 + y] = t;
                 }
             }",
            "let a = zeros(f64, 10000);",
            100.0,
        ),
        // Kept in order (each iteration reads the one before), 10^4
        // iterations of 100 inner ones.
        (
            "kernels loop for i in 1..10000 {
                 let t = 0.0;
                 for z in 0..100 { t += 0.01; }
                 a[i] = a[i - 1] * 0.0 + t;
             }
             a[0] = a[1];",
            "let a = zeros(f64, 10000);",
            1.0,
        ),
    ];
    for (src, init, want) in cases {
        for mut e in [dev(), host()] {
            setup(&mut e, init);
            if let Err(err) = e.eval_source("test.accl", src) {
                panic!("{src}:\n{}", render(&err));
            }
            let a = e.get_array::<f64>("a").unwrap().0;
            let wrong = a.iter().filter(|&&v| (v - want).abs() > 1e-9).count();
            assert_eq!(wrong, 0, "{src}");
        }
    }
}

#[test]
fn narrow_workgroups_with_data_dependent_loops_are_never_reported_cut() {
    // A few thousand iterations in all, in workgroups of 1, 2 and 4 lanes
    // (below llvmpipe's SIMD width of 8): llvmpipe kept the `while` going
    // in the lanes past the workgroup (their loads read zeros, so `avg`
    // never grew) until its loop cap, then reported the workgroup's own
    // lane cut. Every shape gives the known answer: 5 * 1.5^14.
    let body = "let avg = 0.0;
        while avg < 1000.0 {
            avg = 0.0;
            for x in 0..100 { a[x] *= 1.5; avg += a[x] / 100.0; }
        }";
    let want = 5.0 * 1.5f64.powi(14);
    for head in [
        "serial",
        "parallel num_gangs(1) vector_length(1)",
        "parallel num_gangs(1) vector_length(2)",
        "parallel num_gangs(1) vector_length(4)",
    ] {
        for mut e in [dev(), host()] {
            setup(&mut e, "let a = full(f64, 5.0, 100);");
            let src = format!("data copy(a) {{ {head} {{ {body} }} }}");
            if let Err(err) = e.eval_source("test.accl", &src) {
                panic!("{head}:\n{}", render(&err));
            }
            let a = e.get_array::<f64>("a").unwrap().0;
            assert!(
                a.iter().all(|&v| (v - want).abs() < 1e-9),
                "{head}: {}",
                a[0]
            );
        }
    }
}

// ---- device memory ----------------------------------------------------------

#[test]
fn an_allocation_larger_than_the_device_memory_is_a_diagnostic() {
    // The embedder's cap stands in for a small heap: the same check as
    // against the real heap, before the driver is asked.
    let src = "parallel loop for i in 0..n { a[i] = a[i] + 1.0; }";
    let mut e = dev();
    setup(
        &mut e,
        "let n = 1 << 19; let a = zeros(f32, n); for i in 0..n { a[i] = i as f32; }",
    );
    e.set_max_device_bytes(Some(1 << 20));
    let err = fail(&mut e, src);
    assert_snapshot!(render(&err));
    assert_eq!(err.diags[0].code, "accl::device::out_of_memory");
    assert!(err.diags[0].message.contains("`a`"));
    assert!(err.diags[0].message.contains("2097152 bytes"));
    // Host data intact, and the memory of the failed attempt given back.
    let a = e.get_array::<f32>("a").unwrap().0;
    assert!(a.iter().enumerate().all(|(i, &x)| x == i as f32));
    still_works(&mut e);
    e.set_max_device_bytes(None);
    e.eval(src).unwrap();
    clean(&e);
    assert_eq!(e.get_array::<f32>("a").unwrap().0[5], 6.0);
}

#[test]
fn device_memory_is_given_back_when_data_leaves() {
    let mut e = dev();
    e.set_max_device_bytes(Some(600_000));
    // 400 KB each: one fits, two do not, one after the other do.
    e.eval("let a = zeros(f32, 100000); let b = zeros(f32, 100000);")
        .unwrap();
    let err = fail(&mut e, "data copyin(a) { data copyin(b) { } }");
    assert_eq!(err.diags[0].code, "accl::device::out_of_memory");
    assert_eq!(
        labels("data copyin(a) { data copyin(b) { } }", &err)[0],
        "b"
    );
    e.eval("data copyin(a) { } data copyin(b) { }").unwrap();
    e.eval("enter data copyin(a); exit data delete(a); enter data copyin(b); exit data delete(b);")
        .unwrap();
    clean(&e);
}

// ---- a missing device feature -----------------------------------------------

#[test]
fn a_kernel_needing_a_missing_feature_is_refused_at_compile_time() {
    let mut e = dev();
    e.disable_device_feature("shaderFloat64").unwrap();
    setup(&mut e, "let x = zeros(f64, 8);");
    let src = "parallel loop for i in 0..8 { x[i] = 1.5; }";
    let err = fail(&mut e, src);
    assert_eq!(err.diags[0].code, "accl::compile::missing_feature");
    assert!(
        err.diags[0].message.contains("shaderFloat64"),
        "{}",
        render(&err)
    );
    assert_eq!(e.get_array::<f64>("x").unwrap().0, vec![0.0; 8]);
    still_works(&mut e);
    assert!(e.disable_device_feature("warpDrive").is_err());
}

// ---- embedding limits -------------------------------------------------------

/// Work that cannot finish: an endless chain of kernels, each waited for
/// (the time spent is mostly device waits). Whether the limit strikes in a
/// wait or between kernels, the input must stop with the limit's error.
/// (The wait itself, stopped on work that is held back until the test lets
/// it go, is tested in `src/vulkan/device_tests.rs`.)
const ENDLESS_CHAIN: &str = "while true {
    parallel loop for i in 0..4096 {
        let x = s[i];
        for k in 0..1000 { x = x * 0.5 + 1.0; }
        s[i] = x;
    }
}";

const LIMIT: Duration = Duration::from_millis(20);

#[test]
fn the_time_limit_bounds_an_endless_chain_of_device_work() {
    let mut e = dev();
    setup(&mut e, "let s = zeros(f32, 4096);");
    e.set_time_limit(Some(LIMIT));
    let err = fail(&mut e, ENDLESS_CHAIN);
    assert_eq!(
        err.diags[0].code,
        "accl::run::time_limit",
        "{}",
        render(&err)
    );
    e.set_time_limit(None);
    still_works(&mut e);
}

#[test]
fn the_progress_callback_can_stop_an_endless_chain_of_device_work() {
    let mut e = dev();
    setup(&mut e, "let s = zeros(f32, 4096);");
    // No clock: the callback says stop on its third call, which an endless
    // chain always reaches.
    let mut calls = 0;
    e.on_progress(1 << 10, move |_| {
        calls += 1;
        calls < 3
    });
    let err = fail(&mut e, ENDLESS_CHAIN);
    assert_eq!(err.diags[0].code, "accl::run::aborted", "{}", render(&err));
    e.on_progress(1 << 20, |_| true);
    still_works(&mut e);
}

#[test]
fn the_time_limit_stops_host_loops() {
    let mut e = host();
    e.set_time_limit(Some(Duration::from_millis(20)));
    let err = fail(&mut e, "let i = 0; while true { i += 1; }");
    assert_eq!(err.diags[0].code, "accl::run::time_limit");
    e.set_time_limit(None);
    assert_eq!(e.eval("1 + 2").unwrap().unwrap().to_string(), "3");
}

#[test]
fn the_array_size_limit_is_checked_before_allocating() {
    for mut e in [host(), dev()] {
        e.set_max_array_bytes(4096);
        e.eval("let ok = zeros(f32, 1024);").unwrap();
        for src in [
            "let a = zeros(f32, 1025);",
            "let a = full(f64, 1.0, 64, 64);",
            "let a = linspace(f32, 0.0, 1.0, 5000);",
            "let a = arange(i32, 5000);",
            "let big = zeros(u8, 4096); let c = clone(big); let d = zeros(u8, 4097);",
        ] {
            let err = fail(&mut e, src);
            assert_eq!(err.diags[0].code, "accl::run::array_limit", "{src}");
        }
        e.set_max_array_bytes(0);
        e.eval("let a = zeros(f32, 1025);").unwrap();
    }
}

#[test]
fn the_operation_and_recursion_limits_hold_with_a_device_backend() {
    let mut e = dev();
    e.set_max_operations(1000);
    let err = fail(&mut e, "for i in 0..100000 { }");
    assert_eq!(err.diags[0].code, "accl::run::operation_limit");
    e.set_max_operations(0);
    e.set_max_call_depth(16);
    setup(
        &mut e,
        "fn f(n: i32) -> i32 { if n == 0 { return 0; } return f(n - 1) + 1; }",
    );
    let err = fail(&mut e, "f(100)");
    assert_eq!(err.diags[0].code, "accl::run::recursion_limit");
    assert_eq!(e.eval("f(10)").unwrap().unwrap().to_string(), "10");
    still_works(&mut e);
}
