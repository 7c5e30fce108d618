//! Diagnostics snapshots of array literals and constant arrays (the
//! pattern of `diagnostics.rs`: each case pins its primary code and
//! snapshots the rendering, as the user sees it).

mod common;
use common::*;

cases! {
    literal_mixed_types: "accl::type::array_literal_mismatch" =>
        "let x = [1i64, 2.0f32];";
    literal_float_in_int_array: "accl::type::mismatch" =>
        "let x: i32[] = [1, 2.5];";
    literal_ragged_rows: "accl::type::array_literal_shape" =>
        "let m = [[1, 2], [3]];";
    literal_rows_and_scalars: "accl::type::array_literal_shape" =>
        "let m = [[1, 2], 3];";
    literal_too_many_axes: "accl::type::array_literal_shape" =>
        "let m = [[[[1]]]];";
    literal_array_element: "accl::type::array_literal_element" =>
        "let a = zeros(f64, 2);\nlet m = [a, a];";
    literal_in_kernel: "accl::device::array_literal" =>
        "let a = zeros(f64, 3);\nparallel loop for i in 0..3 {\n    a[i] = [1.0, 2.0, 3.0][i];\n}";
    literal_const_in_kernel: "accl::device::array_literal" =>
        "let a = zeros(f64, 3);\nparallel loop for i in 0..3 {\n    const W = [1.0, 2.0, 3.0];\n    a[i] = W[i];\n}";
    const_array_element_written: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nQ[0] = 3.0;";
    const_array_reassigned: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nQ = zeros(f64, 2);";
    const_array_alias_written: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nlet r = Q;\nr[1] = 0.0;";
    const_array_written_in_fn: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nfn f() { Q[1] = 0.0; }\nf();";
    const_array_passed_to_writer: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nfn bump(a: f64[]) { a[0] += 1.0; }\nbump(Q);";
    const_array_written_in_kernel: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nparallel loop for i in 0..2 {\n    Q[i] = 0.0;\n}";
    const_array_copyout: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nlet s = zeros(f64, 2);\nparallel loop copyout(Q) for i in 0..2 {\n    s[i] = Q[i];\n}";
    const_array_copy_on_data: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\ndata copy(Q[0:1]) {\n}";
    const_array_passed_on_to_writer: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nfn outer(a: f64[]) { inner(a); }\nfn inner(b: f64[]) { b[1] = 0.0; }\nouter(Q);";
    const_array_atomic_builtin: "accl::type::assign_to_const" =>
        "const Q = [1, 2];\nlet old = atomic_add(Q[0], 1);";
    const_array_returned: "accl::type::assign_to_const" =>
        "const Q = [1.0, 2.0];\nfn get() -> f64[] { return Q; }\nlet a = get();";
    const_array_not_literal: "accl::type::not_constant" =>
        "let a = zeros(f64, 2);\nconst Q: f64[] = a;";
}

#[test]
fn every_case_is_counted() {
    assert!(CASES.len() >= 19, "{} cases", CASES.len());
}
