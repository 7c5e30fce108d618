//! examples/xsbench.accl, the port of XSBench's OpenACC version, prints the
//! verification checksum the C program prints for the same inputs, on the
//! host reference and on the device, and both backends agree on every
//! lookup's result and on the grids they built.
//!
//! The checksums come from the C program (github.com/ANL-CESAR/XSBench,
//! openacc/ at commit 17be517c65b63c1f5cba5750daafa4fdeeafc58d, built with
//! `make COMPILER=gnu`, which ignores the OpenACC pragmas and runs the same
//! code on the CPU; openmp-threading/ at the same commit prints the same
//! checksums), run as `./XSBench ARGS -m event` with the ARGS of each case.

use crate::common;
use common::{run_args, same_values, Floats};
use std::path::PathBuf;

fn source() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/xsbench.accl");
    std::fs::read_to_string(p).unwrap()
}

/// Runs the example with `args` on both backends and checks the checksum
/// against the C program's.
fn check(args: &[&str], c_checksum: i64) {
    let src = source();
    let host = run_args(&src, false, args);
    let dev = run_args(&src, true, args);
    for (run, backend) in [(&host, "host"), (&dev, "device")] {
        if let Err(e) = &run.result {
            panic!("{args:?} failed on the {backend}:\n{}", e.render(100));
        }
        let vhash = run.engine.get_value("vhash").unwrap().to_string();
        assert_eq!(
            vhash,
            c_checksum.to_string(),
            "{args:?}: checksum on the {backend}"
        );
        let out = run.out.borrow();
        assert!(
            out.contains(&format!("Verification checksum: {c_checksum},")),
            "{out}"
        );
    }
    same_values(
        &host,
        &dev,
        &[
            "verification",
            "nuclide_grid",
            "unionized_energy_array",
            "index_grid",
            "mats",
            "concs",
        ],
        Floats::Exact,
    );
}

// ./XSBench -s small -g 50 -l 1000 -m event
#[test]
fn small_unionized_grid() {
    check(&["-s", "small", "-g", "50", "-l", "1000"], 3075);
}

// ./XSBench -s small -g 50 -l 1000 -G nuclide -m event
#[test]
fn small_nuclide_grid() {
    check(
        &["-s", "small", "-g", "50", "-l", "1000", "-G", "nuclide"],
        3075,
    );
}

// ./XSBench -s small -g 50 -l 1000 -G hash -h 100 -m event
#[test]
fn small_hash_grid() {
    check(
        &[
            "-s", "small", "-g", "50", "-l", "1000", "-G", "hash", "-h", "100",
        ],
        3075,
    );
}

// ./XSBench -s large -g 5 -l 500 -m event
#[test]
fn large_unionized_grid() {
    check(&["-s", "large", "-g", "5", "-l", "500"], 1629);
}

// ./XSBench -s large -g 8 -l 700 -G hash -h 50 -m event
#[test]
fn large_hash_grid() {
    check(
        &[
            "-s", "large", "-g", "8", "-l", "700", "-G", "hash", "-h", "50",
        ],
        2016,
    );
}

/// The OpenACC version has only the event-based method: asking for the
/// history-based one ends the program with status 1, as the C does.
#[test]
fn history_based_method_exits() {
    let r = run_args(&source(), false, &["-m", "history"]);
    let e = r.result.as_ref().expect_err("the run should stop");
    assert_eq!(e.code(), "accl::run::exit", "{}", e.render(100));
    assert!(r
        .out
        .borrow()
        .contains("History-based simulation not implemented"));
}
