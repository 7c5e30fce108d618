//! Every `examples/*.accl` runs on the Vulkan device (lavapipe in CI),
//! passes its own asserts, and leaves every variable as the host reference
//! run of the same script does: integers and booleans bit for bit, floats bit
//! for bit except where a float reduction combines in another order on the
//! device (per-work-group trees, then the groups in order) than on the host
//! (one sequential sum): those are within a relative 1e-5 (f32) or 1e-12
//! (f64), and listed here with that reason.

use crate::common;
use common::{same_as_host, Floats};
use std::path::PathBuf;

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.accl"));
    std::fs::read_to_string(p).unwrap()
}

fn check(name: &str, floats: Floats) {
    let (_, dev) = same_as_host(&example(name), floats);
    if let Err(e) = &dev.result {
        panic!("{name} failed on the device:\n{}", e.render(100));
    }
}

macro_rules! exact {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            check(stringify!($name), Floats::Exact);
        }
    )*};
}

exact!(
    async_join,
    column_halo,
    conv2d,
    heat,
    histogram,
    jacobi_mpi,
    jacobi_mpi_2d,
    kmeans,
    mandelbrot,
    mandelbrot_async,
    mandelbrot_multi,
    matmul,
    newton,
    saxpy,
    scan,
    sections,
    smoothing,
    spmv,
    unstructured,
    xsbench
);

/// Float reductions (see the module doc).
macro_rules! reduced {
    ($($name:ident: $tol:expr),*) => {$(
        #[test]
        fn $name() {
            check(stringify!($name), Floats::Within($tol));
        }
    )*};
}

reduced!(
    gram_schmidt: 1e-5,
    jacobi: 1e-5,
    // Its total energies before and after are f64 `+` reductions.
    nbody: 1e-12,
    pi: 1e-12,
    reductions: 1e-5
);
