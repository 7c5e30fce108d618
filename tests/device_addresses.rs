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
         }
         // Computed independently (Python): `as u8` wraps, 7 * 999 % 256 = 81.
         assert(b[0] == -7 && c[0] == 0u8 && d[0] && e[0] == 0u32 && f[0] == 0.0f32, \"element 0\");
         assert(b[37] == 104 && c[37] == 3u8 && !d[37] && e[37] == 1369u32 && f[37] == 9.25f32, \"element 37\");
         assert(b[500] == 1493 && c[500] == 172u8 && !d[500] && e[500] == 250000u32 && f[500] == 125.0f32, \"element 500\");
         assert(b[999] == 2990 && c[999] == 81u8 && d[999] && e[999] == 998001u32 && f[999] == 330.75f32, \"element 999\");",
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
         }
         // 4096 items: 64 per bin of h, 1024 per bin of the others (halves
         // and quarters sum exactly); the last i of bin k is 4092 + k.
         for k in 0..64 { assert(h[k] == 64, \"h\"); }
         for k in 0..4 {
             assert(s32[k] == 512.0f32 && s64[k] == 256.0, \"float sums\");
             assert(m[k] == 3 * (4092 + k) as i64, \"max\");
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
         parallel loop for i in 0..4094 { cache(x[i:3]); z[i] = x[i] + x[i + 1] + x[i + 2]; }
         // 7919 is odd, so each run of 256 items hits every bin once:
         // 100000 = 390 * 256 + 160, the keys of items 0..160 get 391.
         let total = 0; for k in 0..256 { total += hist[k]; }
         assert(total == n && hist[0] == 391 && hist[1] == 391 && hist[128] == 391 && hist[255] == 390, \"hist\");
         // Three consecutive integers: 3 i + 3.
         assert(z[0] == 3.0f32 && z[2047] == 6144.0f32 && z[4093] == 12282.0f32, \"window sums\");",
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
         }
         // Rows 16..48 are 100 i + j, the box 20..24 x 8..24 half more, the rest 0.
         assert(a[0, 0] == 0.0f32 && a[15, 47] == 0.0f32 && a[48, 0] == 0.0f32 && a[63, 47] == 0.0f32, \"outside\");
         assert(a[16, 0] == 1600.0f32 && a[47, 47] == 4747.0f32 && a[20, 7] == 2007.0f32, \"rows\");
         assert(a[23, 24] == 2324.0f32 && a[24, 8] == 2408.0f32, \"next to the box\");
         assert(a[20, 8] == 2008.5f32 && a[23, 23] == 2323.5f32 && a[21, 15] == 2115.5f32, \"box\");",
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
         parallel loop reduction(+: total) for i in 0..rows { total += y[i]; }
         // Computed independently (Python, the same formulas); integers
         // under 2^24 add exactly in f32 in any order.
         assert(y[0] == 756.0f32 && y[1] == 780.0f32 && y[12] == 758.0f32 && y[511] == 774.0f32, \"rows\");
         assert(total == 393240.0f32, \"total\");",
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
