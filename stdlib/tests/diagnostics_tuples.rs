//! Diagnostics snapshots of tuples: functions returning several values,
//! `return (a, b);` and destructuring (the pattern of `diagnostics.rs`:
//! each case pins its primary code and snapshots the rendering).

mod common;
use common::*;

const TWO: &str = "fn two(x: f64) -> (f64, f64) {\n    return (x, x * 2.0);\n}\n";

cases! {
    tuple_stored_in_a_variable: "accl::type::tuple_value" =>
        &format!("{TWO}let t = two(1.0);");
    tuple_in_arithmetic: "accl::type::tuple_value" =>
        &format!("{TWO}let y = two(1.0) + 1.0;");
    tuple_as_an_argument: "accl::type::tuple_value" =>
        &format!("{TWO}let y = sqrt(two(4.0));");
    tuple_destructured_into_too_many: "accl::type::tuple_arity" =>
        &format!("{TWO}let (a, b, c) = two(1.0);");
    tuple_literal_destructured_into_too_few: "accl::type::tuple_arity" =>
        "let (a, b) = (1, 2, 3);";
    tuple_return_of_the_wrong_type: "accl::type::mismatch" =>
        "fn f(x: f64) -> (f64, i32) {\n    return (x, x * 2.0);\n}";
    tuple_return_of_the_wrong_arity: "accl::type::tuple_arity" =>
        "fn f(x: f64) -> (f64, f64) {\n    return (x, x, x);\n}";
    tuple_return_of_a_scalar: "accl::type::mismatch" =>
        "fn f(x: f64) -> (f64, f64) {\n    return x;\n}";
    tuple_return_of_another_tuple: "accl::type::mismatch" =>
        "fn g() -> (f64, i32) {\n    return (1.0, 2);\n}\nfn f() -> (f64, f64) {\n    return g();\n}";
    tuple_returned_from_a_scalar_fn: "accl::type::tuple_expr" =>
        "fn f() -> f64 {\n    return (1.0, 2.0);\n}";
    tuple_expression_as_a_value: "accl::type::tuple_expr" =>
        "let x = (1.0, 2.0) + 1.0;";
    tuple_parameter: "accl::type::tuple_type" =>
        "fn f(p: (f64, f64)) -> f64 {\n    return 1.0;\n}";
    tuple_typed_variable: "accl::type::tuple_type" =>
        &format!("{TWO}let t: (f64, f64) = two(1.0);");
    tuple_array_type: "accl::type::tuple_array" =>
        "fn f() -> (f64, i32)[] {\n    return zeros(f64, 3);\n}";
    tuple_of_an_array: "accl::type::tuple_element" =>
        "fn f() -> (f64, f64[]) {\n    return (1.0, 2.0);\n}";
    tuple_of_one: "accl::type::tuple_arity" =>
        "fn f() -> (f64) {\n    return 1.0;\n}";
    tuple_of_too_many: "accl::type::tuple_arity" =>
        "fn f() -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {\n    return (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);\n}";
    tuple_literal_of_too_many: "accl::type::tuple_arity" =>
        "let (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q) = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);";
    tuple_binding_a_name_twice: "accl::name::duplicate_binding" =>
        &format!("{TWO}let (a, a) = two(1.0);");
    tuple_literal_holding_an_array: "accl::type::tuple_element" =>
        "let a = zeros(f64, 2);\nlet (x, y) = (a, 1);";
    tuple_destructuring_of_a_scalar: "accl::type::not_a_tuple" =>
        "let x = 1.0;\nlet (a, b) = x;";
    tuple_element_typed_unlike_it: "accl::type::mismatch" =>
        &format!("{TWO}let (a: i32, b) = two(1.0);");
    tuple_compound_assignment: "accl::type::tuple_compound_assign" =>
        &format!("{TWO}let a = 1.0;\nlet b = 2.0;\n(a, b) += two(1.0);");
    tuple_assigned_to_unlike_types: "accl::type::mismatch" =>
        &format!("{TWO}let a = 1.0;\nlet n = 2;\n(a, n) = two(1.0);");
    tuple_assigned_to_a_constant: "accl::type::assign_to_const" =>
        &format!("{TWO}const K = 1.0;\nlet a = 1.0;\n(a, K) = two(1.0);");
    tuple_call_in_device_code_of_a_host_fn: "accl::device::illegal_fn" =>
        "fn two(x: f64) -> (f64, f64) {\n    println(x);\n    return (x, x);\n}\nlet o = zeros(f64, 4);\nparallel loop copyout(o) for i in 0..4 {\n    let (a, b) = two(1.0);\n    o[i] = a + b;\n}";
    tuple_missing_return: "accl::type::missing_return" =>
        "fn f(x: f64) -> (f64, f64) {\n    if x > 0.0 {\n        return (x, x);\n    }\n}";
}

#[test]
fn every_case_is_counted() {
    assert!(CASES.len() >= 25, "{} cases", CASES.len());
}
