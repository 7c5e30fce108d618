//! Loops past llvmpipe's hidden cap (65,535 back-edges per invocation and
//! dispatch, docs/reliability.md): the right answer or an error, never a
//! wrong answer with no error, with the watchdog on or off. On lavapipe in
//! CI; on a GPU the same programs simply run. Loop bodies are cheap, so
//! each test's work takes seconds on 2 cores.

use crate::common;
use accl::Engine;

fn dev() -> Engine {
    let mut e = common::device_engine();
    e.set_print(|_| {});
    e
}

fn run(e: &mut Engine, src: &str) -> Result<(), accl::Error> {
    let r = e.eval_source("test.accl", src).map(|_| ());
    assert!(
        e.take_validation_messages().is_empty(),
        "validation messages"
    );
    r
}

/// A flat loop of 2^32 + 4096 iterations: every one runs exactly once
/// (65,536 invocations of lavapipe would each take 65,537 turns of the
/// grid-stride loop, past the cap, so it runs in parts; the driver used to
/// skip the last 69,632). The count is the trip count and the largest
/// index n - 1.
#[test]
fn a_flat_loop_of_more_than_2_pow_32_iterations_runs_each_once() {
    let mut e = dev();
    run(
        &mut e,
        "const N = (1 as i64 << 32) + 4096;
         let count = 0 as i64;
         let top = 0 as i64;
         parallel loop reduction(+: count) reduction(max: top) for i in 0..N {
             count += 1;
             top = max(top, i);
         }",
    )
    .unwrap_or_else(|err| panic!("{}", err.render(100)));
    assert_eq!(e.get::<i64>("count").unwrap(), (1i64 << 32) + 4096);
    assert_eq!(e.get::<i64>("top").unwrap(), (1i64 << 32) + 4095);
}

/// Run `src` after `init`; it must succeed with the validation layer
/// silent.
fn ok(e: &mut Engine, init: &str, src: &str) {
    run(e, init).unwrap_or_else(|err| panic!("{}", err.render(100)));
    run(e, src).unwrap_or_else(|err| panic!("{src}:\n{}", err.render(100)));
}

/// One lane counting to 10^6 and to 10^8, watchdog on and off: on
/// lavapipe the kernel stops before the driver's cap and resumes (with
/// `--loop-budget 0` it used to return 524,280 for 10^6 with exit status
/// 0; then it was `accl::device::loop_cut`).
#[test]
fn a_serial_count_to_10_pow_8_is_right() {
    for budget in [accl::DEFAULT_LOOP_BUDGET, 0] {
        let mut e = dev();
        e.set_loop_budget(budget);
        for n in [1_000_000, 100_000_000] {
            ok(
                &mut e,
                &format!("let c = zeros(i32, 1); let n = {n};"),
                "serial {
                     let k = 0;
                     for i in 0..n { k += 1; }
                     c[0] = k;
                 }",
            );
            assert_eq!(
                e.get_array::<i32>("c").unwrap().0,
                vec![n],
                "budget {budget}"
            );
        }
    }
}

/// Loops of every shape past the cap in one lane: a 1024 x 1024 nest (cut
/// before, though each loop is short: the cap counts the invocation's
/// back-edges), a data-dependent `while` with a branch, and a `serial
/// loop` whose inner loop has a run-time bound.
#[test]
fn one_lane_nests_and_whiles_past_the_cap_are_right() {
    let mut e = dev();
    ok(
        &mut e,
        "let c = zeros(i64, 4); let m = 1024; let w_end = 300000;",
        "serial {
             let t = 0 as i64;
             for i in 0..m { for j in 0..m { t += 1; } }
             c[0] = t;
             let w = 0;
             let s = 0 as i64;
             while w < w_end { w += 1; if w % 2 == 0 { s += w as i64; } }
             c[1] = s;
         }
         serial loop for i in 0..4 { for j in 0..w_end { c[2] += 1; } }",
    );
    // The even numbers to 300,000: 2 (1 + .. + 150,000) = 150,000 x 150,001.
    assert_eq!(
        e.get_array::<i64>("c").unwrap().0,
        vec![1 << 20, 150_000 * 150_001, 1_200_000, 0]
    );
}

/// A one-lane reduction of 10^6 iterations (its partials one set per
/// dispatch), and a `kernels` loop kept in order on one lane over a
/// run-time count.
#[test]
fn a_one_lane_reduction_and_an_ordered_kernels_loop_of_10_pow_6() {
    let mut e = dev();
    ok(
        &mut e,
        "let n = 1000000; let a = zeros(i32, n);",
        "let s = 0 as i64;
         serial loop reduction(+: s) for i in 0..n { s += (i % 7) as i64; }
         kernels loop seq for i in 1..n { a[i] = a[i - 1] + 1; }",
    );
    // 142,857 whole weeks of 0 + .. + 6 = 21, then 0 (10^6 = 7 x 142,857 + 1).
    assert_eq!(e.get::<i64>("s").unwrap(), 142_857 * 21);
    let a = e.get_array::<i32>("a").unwrap().0;
    assert_eq!((a[0], a[999_999]), (0, 999_999));
}

/// Many lanes, each with a long loop of its own length: every invocation
/// stops and resumes on its own.
#[test]
fn lanes_with_loops_past_the_cap_resume_each_on_its_own() {
    let mut e = dev();
    ok(
        &mut e,
        "let b = zeros(i32, 300);",
        "parallel loop for i in 0..300 {
             let k = 0;
             while k < 100000 + i * 1000 { k += 1; }
             b[i] = k - i * 1000;
         }",
    );
    assert_eq!(e.get_array::<i32>("b").unwrap().0, vec![100_000; 300]);
}

/// A loop that never ends still meets the watchdog: it resumes, dispatch
/// after dispatch, until its count (kept across dispatches) is over the
/// budget.
#[test]
fn a_kernel_that_never_ends_resumes_until_the_watchdog_stops_it() {
    let mut e = dev();
    e.set_loop_budget(1_000_000);
    run(&mut e, "let a = zeros(i32, 1);").unwrap();
    let err = run(
        &mut e,
        "serial { let k = 0; while k >= 0 { k = (k + 1) % 1000; } a[0] = k; }",
    )
    .expect_err("never ends");
    assert_eq!(err.diags[0].code, "accl::device::loop_budget");
    assert_eq!(e.get_array::<i32>("a").unwrap().0, vec![0]);
}

/// A kernel that cannot stop midway (a construct reduction folds across
/// the workgroup at its end) and goes past the cap: with the watchdog off,
/// the cut is still reported on llvmpipe (it used to be a wrong answer
/// with no error); elsewhere the answer is right.
#[test]
fn with_the_watchdog_off_a_cut_that_cannot_resume_is_reported() {
    let mut e = dev();
    e.set_loop_budget(0);
    let llvmpipe = e.devices().first().is_some_and(|d| d.contains("llvmpipe"));
    run(&mut e, "let n = 1000000; let s = 0;").unwrap();
    match run(
        &mut e,
        "parallel loop reduction(+: s) for i in 0..64 {
             let k = 0;
             while k < n { k += 1; }
             s += k / 1000;
         }",
    ) {
        Ok(()) => {
            assert!(!llvmpipe, "llvmpipe cannot have run it whole");
            assert_eq!(e.get::<i32>("s").unwrap(), 64_000);
        }
        Err(err) => {
            assert_eq!(
                err.diags[0].code,
                "accl::device::loop_cut",
                "{}",
                err.render(100)
            );
            assert_eq!(e.get::<i32>("s").unwrap(), 0);
        }
    }
}
