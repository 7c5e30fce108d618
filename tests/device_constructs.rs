//! Each construct and clause of the device data environment and of kernels,
//! run on the Vulkan device (lavapipe in CI) and compared with the host
//! reference run of the same script (`common::same_as_host`): the same
//! values of every variable, or the same error codes.

use crate::common;
use common::{run, run_without, same_as_host, Floats};

fn exact(src: &str) {
    let (h, _) = same_as_host(src, Floats::Exact);
    if let Err(e) = &h.result {
        panic!("expected success:\n{}", e.render(100));
    }
}

fn same_error(src: &str, code: &str) {
    common::same_failure(src, code);
}

#[test]
fn every_element_type() {
    exact(
        "let n = 1000;
         let a = zeros(i32, n); let b = zeros(u32, n); let c = zeros(i64, n);
         let d = zeros(f32, n); let e = zeros(f64, n); let f = zeros(u8, n); let g = zeros(bool, n);
         parallel loop for i in 0..n {
             a[i] = i * 7 - 3000; b[i] = (i as u32) * 4000000000u32; c[i] = (i as i64) << 40;
             d[i] = i as f32 / 3.0; e[i] = (i as f64) / 7.0; f[i] = (i * 3) as u8; g[i] = i % 3 == 0;
         }
         assert(a[999] == 3993 && b[1] == 4000000000u32 && c[3] == 3i64 << 40, \"integers\");
         assert(d[3] == 1.0f32 && e[7] == 1.0 && f[100] == 44u8 && g[3] && !g[4], \"the rest\");",
    );
}

#[test]
fn collapse_and_sequential_inner_loops() {
    exact(
        "let m = zeros(f32, 30, 40);
         let t = zeros(i32, 5, 6, 7);
         parallel loop collapse(2) for i in 0..30 { for j in 0..40 { m[i, j] = (i * 40 + j) as f32 * 0.5; } }
         parallel loop collapse(3) for i in 0..5 { for j in 0..6 { for k in 0..7 { t[i, j, k] = i * 100 + j * 10 + k; } } }
         let s = zeros(i64, 50);
         parallel loop for i in 0..50 {
             let acc: i64 = 0;
             for k in 0..=i { acc += k as i64; }
             s[i] = acc;
         }
         assert(m[29, 39] == 599.5f32 && t[4, 5, 6] == 456 && s[49] == 1225i64, \"known values\");",
    );
}

#[test]
fn control_flow_in_kernels() {
    exact(
        "let r = zeros(i32, 200);
         parallel loop for i in 0..200 {
             let k = 0; let x = i;
             while x != 1 && x != 0 {
                 if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
                 k += 1;
                 if k > 1000 { break; }
             }
             for j in 0..10 { if j % 3 == 0 { continue; } k += j; }
             r[i] = k;
         }
         // Collatz steps of 27 (111), plus 1+2+4+5+7+8 = 27.
         assert(r[27] == 138 && r[1] == 27 && r[0] == 27 && r[8] == 30, \"known values\");",
    );
}

#[test]
fn casts_and_firstprivate_scalars() {
    exact(
        "let a = 2.5f32; let b: i64 = -7; let c: u8 = 200; let flag = true;
         let x = zeros(f64, 64); let y = zeros(i32, 64); let z = zeros(u8, 64);
         parallel loop for i in 0..64 {
             x[i] = (i as f64) * (a as f64) + b as f64;
             y[i] = ((i as f32) * a) as i32 - (c as i32);
             z[i] = 0u8;
             if flag { z[i] = (i as u8) + c; }
         }
         assert(x[2] == -2.0 && y[10] == -175 && z[55] == 255u8, \"known values\");",
    );
}

#[test]
fn math_builtins_within_tolerance() {
    // f32 math goes through GLSL.std.450, which is not correctly rounded.
    let (h, _) = same_as_host(
        "let n = 256;
         let a = zeros(f32, n); let b = zeros(f32, n);
         parallel loop for i in 0..n {
             let x = (i as f32) / 64.0 + 0.01;
             a[i] = sqrt(x) + exp(x / 4.0) + log(x) + sin(x) + cos(x) + pow(x, 1.5);
             b[i] = min(max(floor(x * 3.0), 1.0), ceil(x)) + abs(-x) + clamp(x, 0.5, 2.0);
         }
         // Computed independently (Python, in f64 from the f32 x).
         assert(abs(a[0] + 2.4917172) < 1e-4 && abs(a[100] - 6.1584637) < 1e-4 && abs(a[255] - 12.670069) < 1e-4, \"a\");
         assert(abs(b[0] - 1.51) < 1e-5 && abs(b[100] - 5.145) < 1e-5 && abs(b[255] - 9.994375) < 1e-5, \"b\");",
        Floats::Within(1e-5),
    );
    assert!(h.result.is_ok());
}

#[test]
fn device_functions() {
    exact(
        "fn sq(x: i64) -> i64 { return x * x; }
         fn poly(x: i64) -> i64 { return sq(x) + 3 * x + 1; }
         let r = zeros(i64, 100);
         parallel loop for i in 0..100 { r[i] = poly(i as i64) - sq(2); }
         assert(r[0] == -3i64 && r[10] == 127i64, \"known values\");",
    );
}

#[test]
fn data_regions_and_clauses() {
    exact(
        "let a = arange(f32, 100); let b = zeros(f32, 100); let c = zeros(f32, 100); let t = zeros(f32, 100);
         data copyin(a) copyout(b) create(t) copy(c) {
             parallel loop present(a, t) for i in 0..100 { t[i] = a[i] * 2.0; }
             parallel loop for i in 0..100 { b[i] = t[i] + 1.0; c[i] = c[i] + a[i]; }
         }
         let present_after = acc_is_present(a);
         assert(b[10] == 21.0f32 && c[10] == 10.0f32 && !present_after, \"known values\");",
    );
}

#[test]
fn copyin_is_not_copied_back_and_create_is_zero() {
    exact(
        "let a = full(i32, 5, 10); let z = full(i32, 9, 10); let out = zeros(i32, 10);
         data copyin(a) create(z) {
             parallel loop for i in 0..10 { a[i] = -1; out[i] = z[i]; }
         }
         data create(z) copyout(out) {
             parallel loop for i in 0..10 { out[i] = z[i]; }
         }
         assert(a[3] == 5 && z[3] == 9, \"copyin is not copied back, create leaves the host alone\");",
    );
}

#[test]
fn enter_exit_update_with_sections() {
    exact(
        "let a = arange(i32, 20);
         enter data copyin(a);
         parallel loop present(a) for i in 0..20 { a[i] = a[i] * 10; }
         let before = a[3];
         update self(a[2:4]);
         let mid = a[3]; let untouched = a[10];
         a[15] = -5;
         update device(a[15:1]);
         parallel loop present(a) for i in 0..20 { a[i] = a[i] + 1; }
         exit data copyout(a);
         let gone = acc_is_present(a);
         // The host saw 3 until the update of rows 2..6 brought 30; the
         // device row 15 took the host's -5, then + 1.
         assert(before == 3 && mid == 30 && untouched == 10 && !gone, \"host view\");
         assert(a[2] == 21 && a[15] == -4 && a[19] == 191, \"device result\");",
    );
}

#[test]
fn section_storage_is_indexed_through_a_base_offset() {
    exact(
        "let a = zeros(f64, 12, 5);
         for i in 0..12 { for j in 0..5 { a[i, j] = (i * 5 + j) as f64; } }
         enter data copyin(a[4:6]);
         parallel loop present(a[4:6]) collapse(2) for i in 4..10 { for j in 0..5 { a[i, j] = -a[i, j]; } }
         exit data copyout(a[4:6]);
         assert(a[4, 0] == -20.0 && a[9, 4] == -49.0 && a[3, 4] == 19.0 && a[10, 0] == 50.0, \"rows 4..10 only\");",
    );
}

#[test]
fn reference_counts_and_finalize() {
    exact(
        "let a = zeros(i32, 8);
         enter data copyin(a); enter data copyin(a);
         parallel loop for i in 0..8 { a[i] = 7; }
         exit data copyout(a);
         let still = acc_is_present(a); let v1 = a[0];
         enter data copyin(a);
         exit data copyout(a) finalize;
         let after = acc_is_present(a); let v2 = a[0];
         // The first exit only counts down; finalize copies out.
         assert(still && v1 == 0 && !after && v2 == 7, \"reference counts\");",
    );
}

#[test]
fn update_if_present_and_if_clause() {
    exact(
        "let a = full(f32, 1.0, 16); let b = full(f32, 1.0, 16);
         update self(a) if_present;
         let on = false;
         parallel loop if(on) for i in 0..16 { a[i] = 2.0; }
         parallel loop if(!on) copy(b) for i in 0..16 { b[i] = 3.0; }
         enter data copyin(a) if(on);
         let p = acc_is_present(a);
         assert(a[0] == 2.0f32 && b[15] == 3.0f32 && !p, \"known values\");",
    );
}

#[test]
fn no_create_of_absent_and_present_data() {
    exact(
        "let a = zeros(i32, 10); let b = zeros(i32, 10);
         parallel loop no_create(a) for i in 0..10 { a[i] = i; }
         enter data create(b);
         parallel loop no_create(b) for i in 0..10 { b[i] = 2 * i; }
         let host_b = b[3];
         exit data copyout(b);
         assert(a[9] == 9 && host_b == 0 && b[3] == 6, \"known values\");",
    );
}

#[test]
fn present_errors_match_the_host() {
    same_error(
        "let a = zeros(f32, 4); parallel loop present(a) for i in 0..4 { a[i] = 1.0; }",
        "accl::run::not_present",
    );
    same_error(
        "let a = zeros(f32, 4); parallel loop default(present) for i in 0..4 { a[i] = 1.0; }",
        "accl::run::not_present",
    );
    same_error(
        "let a = zeros(f32, 10); enter data copyin(a[0:5]); parallel loop copy(a) for i in 0..10 { a[i] = 1.0; }",
        "accl::run::partially_present",
    );
    same_error(
        "let a = zeros(f32, 4); update device(a);",
        "accl::run::not_present",
    );
}

#[test]
fn reductions_every_operator() {
    exact(
        "let n = 5000;
         let s: i64 = 3; let p: i32 = 1; let mx: i32 = -5; let mn: u32 = 4000000000u32;
         let ba: u32 = 4294967295u32; let bo: i32 = 0; let bx: i64 = 0; let la = true; let lo = false;
         parallel loop reduction(+: s) reduction(max: mx) reduction(min: mn) reduction(&: ba) reduction(|: bo)
             reduction(^: bx) reduction(&&: la) reduction(||: lo) for i in 0..n {
             s += (i as i64) * (i as i64);
             mx = max(mx, (i * 37) % 1001);
             mn = min(mn, ((i * 7919) % 100000) as u32 + 7u32);
             ba = ba & (((i as u32) | 1024u32) | 4096u32);
             bo = bo | (1 << (i % 20));
             bx = bx ^ (i as i64 * 1234567);
             la = la && (i < 100000);
             lo = lo || (i == 4321);
         }
         parallel loop reduction(*: p) for i in 0..20 { if i % 5 == 0 { p *= 2; } }
         // Computed independently (Python, the same loops): 3 + sum of i^2,
         // i = 0 gives the minimum and the and, 20 bits set, 4 doublings.
         assert(s == 41654167503i64 && mx == 1000 && mn == 7u32 && ba == 5120u32, \"s, max, min, and\");
         assert(bo == 1048575 && bx == 6585163448i64 && la && lo && p == 16, \"or, xor, logical, product\");",
    );
    let (h, _) = same_as_host(
        "let x = 0.0; let y = 0.0f32; let hi = -1.0e30; let lo = 1.0e30f32;
         parallel loop reduction(+: x, y) reduction(max: hi) reduction(min: lo) for i in 0..100000 {
             x += 1.0 / ((i + 1) as f64); y += 0.5f32;
             hi = max(hi, sin(i as f64)); lo = min(lo, cos(i as f32));
         }
         // The harmonic number H(100000), 0.5 added 100000 times, and sine
         // and cosine reaching within 1e-9 of 1 and -1 (Python).
         assert(abs(x - 12.090146129863335) < 1e-9 && y == 50000.0f32, \"sums\");
         assert(abs(hi - 0.999999999696513) < 1e-12 && abs(lo + 1.0f32) < 1e-5f32, \"extremes\");",
        Floats::Within(1e-5),
    );
    assert!(h.result.is_ok());
}

#[test]
fn atomics_on_every_type() {
    exact(
        "let hi = zeros(i32, 16); let hu = zeros(u32, 16); let hl = zeros(i64, 16); let hf = zeros(f32, 16); let hd = zeros(f64, 16);
         parallel loop for i in 0..4096 {
             let b = (i * 7) % 16;
             atomic hi[b] += 1;
             atomic hu[b] += 2u32;
             atomic hl[b] += i as i64;
             atomic hf[b] += 0.5;
             atomic hd[b] += 0.25;
         }
         // 7 is odd: each of the 16 bins gets 256 of the 4096 iterations;
         // bin 0 those with i = 16 t, bin 1 those with i = 7 + 16 t.
         assert(hi[5] == 256 && hu[5] == 512u32 && hf[5] == 128.0f32 && hd[5] == 64.0, \"counts\");
         assert(hl[0] == 522240i64 && hl[1] == 524032i64, \"sums\");",
    );
}

#[test]
fn grid_stride_beyond_the_largest_dispatch() {
    // 65535 groups of 256 invocations on lavapipe: 2^24 - 2^8 at once.
    exact(
        "let n = 17000000;
         let a = zeros(u8, n);
         parallel loop for i in 0..n { a[i] = (i % 251) as u8; }
         let last = a[n - 1];
         assert(last == 20u8 && a[251] == 0u8 && a[16777216] == (16777216 % 251) as u8, \"known values\");",
    );
}

#[test]
fn runtime_vector_length() {
    exact(
        "let w = 64; let a = zeros(i32, 1000);
         parallel loop vector_length(w) for i in 0..1000 { a[i] = i * 2; }
         assert(a[0] == 0 && a[999] == 1998, \"known values\");",
    );
}

#[test]
fn a_failed_launch_leaves_host_arrays_unchanged() {
    // One kernel using two separate present sections of `a` fails at
    // launch (a kernel binds one section of an array).
    let enter = "let a = full(i32, 4, 8); let b = full(i32, 7, 8);
        enter data copyin(a[0:2], a[4:2]);";
    let kernel = "parallel loop copy(b) default(present)
        for i in 0..2 { b[i] = 0; a[i] = 0; a[i + 4] = 0; }";
    let d = run(&format!("{enter} {kernel}"), true);
    let e = d
        .result
        .as_ref()
        .expect_err("two sections in one kernel are refused");
    assert_eq!(e.code(), "accl::device::launch", "{}", e.render(100));
    let mut e = d.engine;
    e.eval(enter).unwrap();
    assert!(e.eval(kernel).is_err());
    assert_eq!(e.get_array::<i32>("b").unwrap().0, [7; 8]);
    e.eval("exit data delete(a[0:2], a[4:2]);").unwrap();
    assert_eq!(e.get_array::<i32>("a").unwrap().0, [4; 8]);
    assert!(e.present().is_empty(), "the data region was undone");
}

/// lavapipe's maxStorageBufferRange is 128 MiB: 40M f32 (160 MB) is more
/// than one binding shows a kernel, so kernels reach it by address.
const BEYOND_ONE_BINDING: &str = "
const N = 40000000;
let a = zeros(f32, N);
let hits = zeros(i32, 16);
let total = 0.0;
parallel loop copy(a[N - 10:10]) for i in N - 10..N { a[i] = 7.0; }
parallel loop copy(a, hits) reduction(+: total) for i in 0..N {
    a[i] = a[i] + (i % 1000) as f32 * 0.5;
    total += (i % 7) as f64;
    if i % 4000000 == 0 { atomic hits[i / 4000000] += 1; }
}
let last = a[N - 1];
";

#[test]
fn arrays_larger_than_one_binding_are_reached_by_address() {
    let (_, dev) = same_as_host(BEYOND_ONE_BINDING, Floats::Within(1e-5));
    if let Err(e) = &dev.result {
        panic!("{}", e.render(100));
    }
    // The last kernel reached `a` by address (the first one bound its
    // 10-row section as usual), and its last element is right.
    let spirv = dev.engine.last_spirv().unwrap();
    assert!(spirv.contains("PhysicalStorageBuffer64"), "{spirv}");
    assert_eq!(
        dev.engine
            .array("a")
            .unwrap()
            .data()
            .get(39_999_999)
            .unwrap()
            .as_f64(),
        Some(506.5)
    );
}

#[test]
fn without_buffer_addresses_arrays_larger_than_one_binding_are_refused_clearly() {
    let mut e = run_without("let a = zeros(f32, 40000000);", &["bufferDeviceAddress"]).engine;
    let err = e
        .eval("parallel loop for i in 0..10 { a[i] = 1.0; }")
        .expect_err("too large");
    assert_eq!(err.code(), "accl::device::data");
    let text = err.render(100);
    assert!(text.contains("maxStorageBufferRange"), "{text}");
    assert!(text.contains("160000000 bytes"), "{text}");
    assert_eq!(
        e.array("a").unwrap().data().get(0).unwrap().as_f64(),
        Some(0.0)
    );
    // A section of it fits, and the engine goes on.
    e.eval("parallel loop copy(a[0:1000]) for i in 0..1000 { a[i] = 2.0; }")
        .unwrap();
    assert_eq!(
        e.array("a").unwrap().data().get(999).unwrap().as_f64(),
        Some(2.0)
    );
    assert!(e.take_validation_messages().is_empty());
}

#[test]
fn kernels_inside_functions_and_loops() {
    exact(
        "fn scale(v: f32[], n: i32, k: f32) { parallel loop for i in 0..n { v[i] = v[i] * k; } }
         let a = arange(f32, 50);
         for r in 0..3 { scale(a, len(a), 2.0); }
         assert(a[1] == 8.0f32 && a[49] == 392.0f32, \"known values\");",
    );
}

#[test]
fn inner_loops_collapsed_automatically_give_the_host_results() {
    // Independent inner loops run one element per invocation
    // (`compiler::collapse`); dependent ones stay sequential. Both must
    // equal the host's element for element.
    exact(
        "let n = 37; let m = 11;
         let a = zeros(i64, 5, n, m);
         let b = zeros(f32, 9, n);
         let c = zeros(f32, 9, n);
         parallel loop for i in 0..5 {
             for j in 0..=n - 1 {
                 for k in 0..m {
                     let t = (i * 1000 + j * 10 + k) as i64;
                     a[i, j, k] = t * t - 7;
                 }
             }
         }
         parallel loop for y in 0..9 {
             for x in 0..n { b[y, x] = (x * y) as f32 * 0.5 + 1.0; }
         }
         parallel loop for y in 0..9 {
             for x in 1..n { c[y, x] = c[y, x - 1] + b[y, x]; }
         }
         // a is t^2 - 7 for t = 1000 i + 10 j + k (4370^2 = 19096900); c is the
         // running sum y x (x + 1) / 4 + x, halves exact in f32.
         assert(a[0, 0, 0] == -7 && a[2, 18, 5] == 4774218 && a[4, 36, 10] == 19096893, \"a\");
         assert(b[0, 0] == 1.0f32 && b[3, 5] == 8.5f32 && b[8, 36] == 145.0f32, \"b\");
         assert(c[5, 0] == 0.0f32 && c[3, 5] == 27.5f32 && c[0, 36] == 36.0f32 && c[8, 36] == 2700.0f32, \"c\");",
    );
}

#[test]
fn len_and_shape_bound_a_constructs_loops() {
    // The bounds of a construct's own loops run on the host at launch.
    let (h, _) = same_as_host(
        "let x = zeros(f32, 10, 7);
         parallel loop collapse(2) for i in 0..shape(x, 0) { for j in 0..shape(x, 1) { x[i, j] = (i * j) as f32; } }
         let y = zeros(i32, 12);
         parallel loop for i in 0..len(y) { y[i] = i * 2; }",
        Floats::Exact,
    );
    h.result.unwrap();
    let (x, shape) = h.engine.get_array::<f32>("x").unwrap();
    assert_eq!(shape, [10, 7]);
    assert_eq!((x[0], x[7 * 9 + 6]), (0.0, 54.0));
    let y = h.engine.get_array::<i32>("y").unwrap().0;
    assert_eq!(y, (0..12).map(|i| i * 2).collect::<Vec<_>>());
}

#[test]
fn clamp_with_crossed_bounds_or_a_nan_gives_the_host_result() {
    // clamp is min(max(x, lo), hi) on the host: with lo > hi every x gives
    // hi, and a NaN x gives min(lo, hi). The device once picked lo for x < lo
    // and kept a NaN x.
    let (h, _) = same_as_host(
        "let n = 8;
         let si = zeros(i32, n); let su = zeros(u32, n); let sb = zeros(u8, n); let sl = zeros(i64, n);
         let f = zeros(f32, n); let d = zeros(f64, n);
         let big = 2147483647; let zero = 0.0;
         parallel loop for i in 0..n {
             si[i] = clamp(i - 4, big, i);
             su[i] = clamp(i as u32, 4u32, 2u32);
             sb[i] = clamp(5u8, 128u8, (i * 20) as u8);
             sl[i] = clamp(1i64, 3i64, (i as i64) - 2);
             f[i] = clamp(i as f32 - 4.0, 1.0f32, -1.0f32);
             d[i] = clamp(if_nan(i, zero), -2.0, 2.0 + i as f64);
         }
         fn if_nan(i: i32, z: f64) -> f64 { if i % 2 == 0 { return z / z; } return i as f64 * 3.0 - 9.0; }",
        Floats::Exact,
    );
    h.result.unwrap();
    assert_eq!(
        h.engine.get_array::<i32>("si").unwrap().0,
        (0..8).collect::<Vec<_>>()
    );
    assert_eq!(h.engine.get_array::<u32>("su").unwrap().0, vec![2; 8]);
    let sb = h.engine.get_array::<u8>("sb").unwrap().0;
    assert_eq!(sb, vec![0, 20, 40, 60, 80, 100, 120, 128]);
    assert_eq!(
        h.engine.get_array::<i64>("sl").unwrap().0,
        vec![-2, -1, 0, 1, 2, 3, 3, 3]
    );
    assert_eq!(h.engine.get_array::<f32>("f").unwrap().0, vec![-1.0; 8]);
    let d = h.engine.get_array::<f64>("d").unwrap().0;
    assert_eq!(d, vec![-2.0, -2.0, -2.0, 0.0, -2.0, 6.0, -2.0, 9.0]);
}

/// A sign-extended `i32` compared with an `i64` constant: llvmpipe of Mesa
/// 22.3 compared against the constant's high word (`(i as i64) < 2i64` was
/// false for every `i` >= 0), so there the compiler widens from the two
/// words instead.
#[test]
fn widened_i32_compared_with_i64_constants() {
    exact(
        "let v = [-3, -1, 0, 1, 2, 5, 2147483647, -2147483648];
         let s = zeros(i32, 8, 5);
         parallel loop for i in 0..8 {
             let x = v[i] as i64;
             s[i, 0] = (x < 2i64) as i32;
             s[i, 1] = (x >= 2147483647i64) as i32;
             s[i, 2] = (2i64 > x) as i32;
             let q = 0;
             if (i as i64) <= 3i64 { q = 1; }
             s[i, 3] = q;
             s[i, 4] = ((i as i64) < 3000000000i64) as i32;
         }
         assert(s[0, 0] == 1 && s[4, 0] == 0 && s[6, 1] == 1 && s[7, 2] == 1, \"x\");
         assert(s[3, 3] == 1 && s[4, 3] == 0 && s[7, 4] == 1, \"i\");",
    );
}

/// Subnormal operands and results, on a device that keeps them (lavapipe
/// does; where a device offers `DenormPreserve`, accl asks for it): every
/// element the host's, and not merely zero on both.
#[test]
fn subnormal_arithmetic_is_the_hosts() {
    exact(
        "let n = 4096;
         let a = zeros(f32, n); let b = zeros(f32, n); let c = zeros(f64, n);
         for i in 0..n {
             a[i] = (i * 2039 + 1) as f32 * 1.4e-45f32;
             b[i] = (i % 1000 + 1) as f32 * 1.2e-38f32;
             c[i] = (i * 2039 + 1) as f64 * 4.9e-324;
         }
         let p = zeros(f32, n); let q = zeros(f32, n); let r = zeros(f32, n);
         let s = zeros(f32, n); let w = zeros(f64, n); let x = zeros(f64, n);
         parallel loop for i in 0..n {
             p[i] = a[i] * 1.5f32 + a[i];
             q[i] = a[i] / a[(i + 1) % n] + a[i] / 3.0f32;
             r[i] = b[i] / 1000.0f32;
             s[i] = b[i] * 1.0e-5f32;
             w[i] = a[i] as f64;
             x[i] = c[i] * 1.5 + c[i] / 3.0;
         }
         assert(r[0] > 0.0f32 && r[0] < 1.2e-38f32 && s[5] > 0.0f32 && w[0] > 0.0, \"subnormal, not zero\");",
    );
}
