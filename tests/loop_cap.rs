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

/// With the watchdog off, a loop the driver cuts is still reported (it
/// used to return 524,280 for 10^6 with exit status 0), or it is right.
#[test]
fn with_the_watchdog_off_a_serial_count_is_right_or_reported() {
    let mut e = dev();
    e.set_loop_budget(0);
    run(&mut e, "let c = zeros(i32, 1); let n = 1000000;").unwrap();
    match run(
        &mut e,
        "serial {
             let k = 0;
             for i in 0..n { k += 1; }
             c[0] = k;
         }",
    ) {
        Ok(()) => assert_eq!(e.get_array::<i32>("c").unwrap().0, vec![1_000_000]),
        Err(err) => {
            assert_eq!(err.diags[0].code, "accl::device::loop_cut");
            assert_eq!(e.get_array::<i32>("c").unwrap().0, vec![0]);
        }
    }
}
