//! Kernels that reach their arrays through 64-bit device addresses
//! (`PhysicalStorageBuffer` pointers) instead of bindings. The device does
//! so for an array larger than one binding (`device_constructs.rs` runs one
//! of 160 MB on lavapipe, whose bindings stop at 128 MiB); this binary sets
//! `ACCL_BY_ADDRESS=all`, so every array of every kernel goes that way, and
//! runs the examples and each way the writer touches memory (plain loads
//! and stores, float and integer atomics, privatised atomics, cached
//! sections, sections with a base, `u8` and `bool` elements, check mode)
//! against the host reference.

mod common;
use common::{same_as_host, Floats};
use std::path::PathBuf;

fn engine_env() {
    common::set_env_once(&[("ACCL_BY_ADDRESS", "all")]);
}

/// `src` on the device equals the host run, and its last kernel reached
/// its arrays by address.
fn by_address(src: &str, floats: Floats) {
    engine_env();
    let (_, dev) = same_as_host(src, floats);
    if let Err(e) = &dev.result {
        panic!("failed on the device:\n{}", e.render(100));
    }
    let spirv = dev.engine.last_spirv().expect("a kernel ran");
    assert!(
        spirv.contains("OpMemoryModel PhysicalStorageBuffer64") && !spirv.contains(" Binding 0"),
        "{spirv}"
    );
}

#[test]
fn every_example_by_address() {
    engine_env();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "accl"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for p in names {
        let src = std::fs::read_to_string(&p).unwrap();
        // Float reductions combine in another order on the device.
        let (_, dev) = same_as_host(&src, Floats::Within(1e-5));
        if let Err(e) = &dev.result {
            panic!("{} failed on the device:\n{}", p.display(), e.render(100));
        }
    }
}

#[test]
fn loads_and_stores_of_every_element_type() {
    by_address(
        "let n = 1000;
         let a = arange(f64, n as f64); let b = zeros(i64, n); let c = zeros(u8, n);
         let d = zeros(bool, n); let e = zeros(u32, n); let f = zeros(f32, n);
         parallel loop for i in 0..n {
             b[i] = (a[i] * 3.0) as i64 - 7;
             c[i] = (i * 7) as u8;
             d[i] = i % 3 == 0;
             e[i] = (i * i) as u32;
             f[i] = a[i] as f32 * 0.25;
         }
         parallel loop for i in 0..n {
             if d[i] { f[i] = f[i] + c[i] as f32; }
         }",
        Floats::Exact,
    );
}

#[test]
fn atomics_native_and_by_compare_and_swap() {
    by_address(
        "let n = 4096;
         let h = zeros(i32, 64); let s32 = zeros(f32, 4); let s64 = zeros(f64, 4);
         let m = zeros(i64, 4);
         parallel loop for i in 0..n {
             atomic h[i % 64] += 1;
             atomic s32[i % 4] += 0.5;
             atomic s64[i % 4] += 0.25;
             atomic m[i % 4] max= (i as i64) * 3;
         }",
        Floats::Exact,
    );
}

#[test]
fn privatised_atomics_and_cached_sections() {
    by_address(
        "let n = 100000;
         let keys = zeros(i32, n);
         parallel loop for i in 0..n { keys[i] = (i * 7919) % 256; }
         let hist = zeros(i32, 256);
         parallel loop for i in 0..n { atomic hist[keys[i]] += 1; }
         let x = arange(f32, 4096.0); let z = zeros(f32, 4094);
         parallel loop for i in 0..4094 { cache(x[i:3]); z[i] = x[i] + x[i + 1] + x[i + 2]; }",
        Floats::Exact,
    );
}

#[test]
fn sections_with_a_base_and_two_dimensions() {
    by_address(
        "let a = zeros(f32, 64, 48);
         parallel loop collapse(2) copy(a[16:32, :]) for i in 16..48 {
             for j in 0..48 { a[i, j] = (i * 100 + j) as f32; }
         }
         parallel loop copy(a[20:4, 8:16]) for i in 20..24 {
             for j in 8..24 { a[i, j] = a[i, j] + 0.5; }
         }",
        Floats::Exact,
    );
}

#[test]
fn gangs_workers_vectors_and_reductions() {
    by_address(
        "let rows = 512; let w = 64;
         let m = zeros(f32, rows, w); let y = zeros(f32, rows);
         parallel loop for i in 0..rows { for j in 0..w { m[i, j] = ((i + j) % 13) as f32; } }
         parallel loop gang worker num_workers(4) vector_length(32) for i in 0..rows {
             let s = 0.0f32;
             loop vector reduction(+: s) for j in 0..w { s += m[i, j] * 2.0; }
             y[i] = s;
         }
         let total = 0.0f32;
         parallel loop reduction(+: total) for i in 0..rows { total += y[i]; }",
        Floats::Within(1e-5),
    );
}

#[test]
fn check_mode_reports_out_of_bounds_as_the_host_does() {
    engine_env();
    let init = "let n = 10; let a = arange(f32, 10.0); let b = zeros(f32, n);";
    let src = "parallel loop for i in 0..n { b[i] = a[i + 1] * 2.0; }";
    let mut dev = common::device_engine();
    dev.set_checks(true);
    dev.eval(init).unwrap();
    let d = dev.eval(src).expect_err("out of bounds");
    let spirv = dev.last_spirv().unwrap();
    assert!(spirv.contains("PhysicalStorageBuffer64"), "{spirv}");
    let mut host = accl::Engine::new();
    host.eval(init).unwrap();
    let h = host.eval(src).expect_err("out of bounds");
    assert_eq!(d.diags[0].code, h.diags[0].code);
    assert_eq!(d.diags[0].message, h.diags[0].message);
    // Nothing of the kernel came back.
    assert_eq!(dev.get_array::<f32>("b").unwrap().0, vec![0.0; 10]);
    assert!(dev.take_validation_messages().is_empty());
}
