//! Arrays a kernel only reads, of 32-bit elements, are read through
//! uniform texel buffers on llvmpipe (where the tests run): every way an
//! element is reached (an index, a section's offset, a stencil's
//! neighbours, a reduction's input, a device function's argument) gives
//! what the host reference gives, and so does an array the same kernel
//! writes, which keeps its storage buffer. (A gang's workgroup cache of
//! such an array: `auto_mapping.rs`.)

use crate::common;
use common::{same_as_host, Floats};

#[test]
fn reads_of_f32_i32_and_u32_arrays_equal_the_host_reference() {
    let src = "
        const N = 1000;
        let x = zeros(f32, N);
        let k = zeros(i32, N);
        let c = zeros(u32, N);
        for i in 0..N {
            x[i] = i as f32 * 0.25 - 3.0;
            k[i] = i * 7 - 500;
            c[i] = (i * 13) as u32;
        }
        let y = zeros(f32, N);
        parallel loop for i in 1..N - 1 {
            y[i] = x[i - 1] + x[i + 1] + k[i] as f32 + c[N - 1 - i] as f32 + y[i];
        }
        let total = 0;
        parallel loop reduction(+: total) for i in 0..N { total += k[i] + c[i] as i32; }
        let biggest = 0.0f32;
        parallel loop reduction(max: biggest) for i in 0..N { biggest = max(biggest, x[i]); }
        assert(y[1] == x[0] + x[2] + k[1] as f32 + c[N - 2] as f32, \"a known element\");
    ";
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_section_on_the_device_is_read_at_its_offset() {
    // Only elements 100..900 are on the device: the kernel's indices are
    // the whole array's, less the section's first element.
    let src = "
        let a = zeros(i32, 1000);
        for i in 0..1000 { a[i] = i * i % 977; }
        let b = zeros(i32, 1000);
        enter data copyin(a[100:800]) create(b);
        parallel loop present(a[100:800], b) for i in 100..900 { b[i] = a[i] * 2 + a[999 - i]; }
        exit data copyout(b) delete(a[100:800]);
        assert(b[100] == a[100] * 2 + a[899], \"the first element of the section\");
        assert(b[899] == a[899] * 2 + a[100], \"the last element of the section\");
        assert(b[99] == 0 && b[900] == 0, \"outside the loop\");
    ";
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_stencil_over_a_grid_equals_the_host_reference() {
    let src = "
        const M = 130;
        let A = zeros(f32, M, M);
        for j in 0..M { for i in 0..M { A[j, i] = ((j * 17 + i * 5) % 23) as f32; } }
        let B = zeros(f32, M, M);
        for it in 0..3 {
            parallel loop collapse(2) for j in 1..M - 1 {
                for i in 1..M - 1 {
                    B[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i]);
                }
            }
            parallel loop collapse(2) for j in 1..M - 1 {
                for i in 1..M - 1 { A[j, i] = B[j, i]; }
            }
        }
        assert(B[1, 1] == A[1, 1], \"the last copy\");
    ";
    same_as_host(src, Floats::Exact);
}

#[test]
fn a_device_function_and_a_gang_loop_read_through_texels() {
    let src = "
        routine vector fn row_sum(v: f32[], p: i32[], r: i32) -> f32 {
            let s = 0.0f32;
            loop vector reduction(+: s) for q in p[r]..p[r + 1] { s += v[q]; }
            return s;
        }
        const R = 300;
        let p = zeros(i32, R + 1);
        for r in 0..R + 1 { p[r] = r * 5; }
        let v = zeros(f32, R * 5);
        for q in 0..R * 5 { v[q] = (q % 11) as f32 - 4.0; }
        let out = zeros(f32, R);
        parallel loop gang for r in 0..R { out[r] = row_sum(v, p, r); }
        assert(out[2] == v[10] + v[11] + v[12] + v[13] + v[14], \"row 2\");
    ";
    same_as_host(src, Floats::Exact);
}
