//! Array literals (`[1, 2]`, `[[1, 2], [3, 4]]`) and constant arrays
//! (`const q = [..];`) on both backends, against known answers: element
//! types, `len`, `sum`, indexing, function arguments, and constant arrays
//! read by kernels (taken with an implicit `copyin`, never copied back).

use crate::common;
use common::{run, trace_events, values_on_both};

const TYPES: &str = "const Q = [0.1, 0.5, 0.9];
let w = [1, 2, 1,];
let z: f32[] = [1, 2.5];
let b = [1u8, 2, 3];
let big = [1i64 << 40, 2];
let flags = [true, false, true];
let m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
let cube = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]];
let n_q = len(Q);
let sum_q = sum(Q);
let sum_w = sum(w);
let w_ty = w[0] + 2147483000;
let sum_z = z[0] + z[1];
let sum_b = b[0] + b[1] + b[2];
let big_1 = big[0] + big[1];
let t = 0;
for i in 0..len(flags) { if flags[i] { t += 1; } }
let m12 = m[1, 2];
let m_rows = len(m);
let c = cube[1, 0, 1];
let direct = [10, 20, 30][2] + [[1, 2], [3, 4]][1, 0];";

#[test]
fn element_types_shapes_and_reads_on_both_backends() {
    values_on_both(
        TYPES,
        &[
            ("n_q", "3"),
            ("sum_q", "1.5"),
            ("sum_w", "4"),
            ("w_ty", "2147483001"),
            ("sum_z", "3.5"),
            ("sum_b", "6"),
            ("big_1", "1099511627778"),
            ("t", "2"),
            ("m12", "6.0"),
            ("m_rows", "6"),
            ("c", "6"),
            ("direct", "33"),
        ],
    );
}

const KERNELS: &str = "const Q = [0.25, 0.5, 0.75, 1.0];
let w = [1, 2, 1, 2];
const N = 1000;
let out = zeros(f64, N);
parallel loop for i in 0..N {
    out[i] = Q[i % 4] * w[i % 4] as f64 + i as f64;
}
fn weights() -> f64 {
    const K = [[1.0, 2.0], [3.0, 4.0]];
    let r = zeros(f64, 2);
    parallel loop for i in 0..2 {
        r[i] = K[i, 0] + 10.0 * K[i, 1];
    }
    return r[0] + r[1];
}
fn pass_on(a: f64[]) -> f64 { return total(a); }
fn total(a: f64[]) -> f64 {
    let s = 0.0;
    for i in 0..len(a) { s += a[i]; }
    return s;
}
let o0 = out[0];
let o1 = out[1];
let o999 = out[999];
let s_out = sum(out);
let k = weights();
let tq = pass_on(Q);
let tl = total([1.0, 2.0, 4.0]);
let q2 = Q[2];";

#[test]
fn constant_arrays_in_kernels_and_functions_on_both_backends() {
    // out[i] = Q[i % 4] * w[i % 4] + i: the four-step pattern sums to
    // 0.25 + 1 + 0.75 + 2 = 4 per 4 elements, 250 times, plus 0..999.
    values_on_both(
        KERNELS,
        &[
            ("o0", "0.25"),
            ("o1", "2.0"),
            ("o999", "1001.0"),
            ("s_out", "500500.0"),
            ("k", "64.0"),
            ("tq", "2.5"),
            ("tl", "7.0"),
            ("q2", "0.75"),
        ],
    );
}

#[test]
fn a_literal_is_a_new_array_each_time() {
    let src = "let a = zeros(i32, 3);
for k in 0..3 {
    let fresh = [1, 2, 3];
    fresh[k] = 0;
    a[k] = sum(fresh);
}
let s = sum(a);";
    // Each pass writes one element of its own new array: 5 + 4 + 3.
    values_on_both(src, &[("s", "12")]);
}

#[test]
fn a_constant_array_is_copied_in_and_never_back() {
    let src = "const Q = [1.0, 2.0, 3.0, 4.0];
let out = zeros(f64, 4);
parallel loop for i in 0..4 { out[i] = 2.0 * Q[i]; }
let s = sum(out);";
    let names: Vec<String> = trace_events(src)
        .iter()
        .filter_map(|e| e["name"].as_str().map(String::from))
        .collect();
    let count = |n: &str| names.iter().filter(|x| *x == n).count();
    assert_eq!(count("upload"), 2, "{names:?}");
    assert_eq!(count("download"), 1, "only `out` comes back: {names:?}");
    values_on_both(src, &[("s", "20.0")]);
}

#[test]
fn constant_array_contents_match_on_both_backends() {
    for device in [false, true] {
        let r = run("const Q = [[0.5, 1.5], [2.5, 3.5]];", device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let q = r.engine.array("Q").unwrap();
        assert_eq!(q.shape(), &[2, 2]);
        assert_eq!(q.to_vec::<f64>().unwrap(), vec![0.5, 1.5, 2.5, 3.5]);
    }
}

#[test]
fn a_constant_array_stays_constant_in_later_inputs() {
    for device in [false, true] {
        let mut r = run("const Q = [1.0, 2.0]; let w = [3.0, 4.0];", device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let err = r.engine.eval("Q[0] = 5.0;").unwrap_err();
        assert!(
            err.render(100).contains("accl::type::assign_to_const"),
            "{}",
            err.render(100)
        );
        r.engine.eval("w[0] = 5.0; let s = w[0] + Q[1];").unwrap();
        assert_eq!(r.engine.get_value("s").unwrap().to_string(), "7.0");
    }
}
