//! Diagnostics snapshot suite: one small bad program per case, each named,
//! rendered as the user sees it (miette, unicode, no colour, width 80) and
//! kept as an insta snapshot so that wording, labelled spans and help lines
//! are reviewed. Each case also pins the primary diagnostic's `code`, so a
//! wording change cannot hide a wrong error.
//!
//! It lives in `stdlib` because it needs the real builtin table (`lang`
//! cannot depend on `stdlib`).

mod common;
use common::*;

#[test]
fn there_are_enough_cases() {
    assert!(CASES.len() >= 45, "{} cases", CASES.len());
}

cases! {
    // ------------------------------------------------------------ syntax
    syntax_missing_semicolon: "accl::parse::unexpected_token" =>
        "let x = 1\nlet y = 2;\n";
    syntax_unbalanced_brace: "accl::parse::unexpected_eof" =>
        "fn f() {\n    let x = 1;\n";
    syntax_extra_close_brace: "accl::parse::unexpected_token" =>
        "let x = 1;\n}\nlet y = 2;\n";
    syntax_bad_character: "accl::lex::bad_character" =>
        "let x = 1 $ 2;\n";
    syntax_single_quote_string: "accl::lex::bad_character" =>
        "print('hello');\n";
    syntax_unterminated_string: "accl::lex::unterminated_string" =>
        "print(\"hello);\nlet x = 1;\n";
    syntax_unterminated_comment: "accl::lex::unterminated_comment" =>
        "let x = 1;\n/* a /* nested */ comment\nlet y = 2;\n";
    syntax_bad_escape: "accl::lex::bad_escape" =>
        "print(\"a\\qb\");\n";
    syntax_bad_literal_suffix: "accl::lex::bad_suffix" =>
        "let x = 10i65;\n";
    syntax_int_suffix_on_float: "accl::lex::bad_suffix" =>
        "let x = 1.5i32;\n";
    syntax_int_literal_too_large: "accl::lex::int_too_large" =>
        "let x = 99999999999999999999;\n";
    syntax_chained_comparison: "accl::parse::unexpected_token" =>
        "let a = 1;\nlet b = 2;\nlet c = 3;\nlet ok = a < b < c;\n";
    syntax_elif: "accl::parse::unexpected_token" =>
        "let x = 1;\nif x > 0 {\n    x = 0;\n} elif x < 0 {\n    x = 1;\n}\n";
    reserved_word_as_variable: "accl::parse::reserved_word" =>
        "let n = 4;\nlet loop = n * 2;\n";
    reserved_word_as_function: "accl::parse::reserved_word" =>
        "fn data() {\n    println(\"hi\");\n}\n";
    reserved_type_name_as_variable: "accl::parse::reserved_word" =>
        "let f32 = 2;\n";
    reserved_word_as_parameter: "accl::parse::reserved_word" =>
        "fn scale(x: f32, update: f32) -> f32 {\n    return x * update;\n}\n";
    syntax_bad_reduction_operator: "accl::parse::bad_reduction_op" =>
        "let s = 0.0;\nparallel loop reduction(sum: s) for i in 0..10 {\n    s += 1.0;\n}\n";
    syntax_bad_atomic_operator: "accl::parse::bad_atomic_op" =>
        "let h = zeros(i32, 10);\nparallel loop for i in 0..10 {\n    atomic h[i] avg= 1;\n}\n";
    atomic_read_of_a_scalar: "accl::type::atomic_target" =>
        "let x = 1;\nlet v = 0;\natomic read v = x;\n";
    atomic_write_of_a_bool_element: "accl::type::builtin_args" =>
        "let b = zeros(bool, 4);\natomic write b[0] = true;\n";

    // ------------------------------------------------------------ names
    unknown_variable: "accl::name::unknown" =>
        "let count = 1;\nlet y = coutn + 1;\n";
    unknown_function: "accl::name::unknown_fn" =>
        "let x = sqrtt(2.0);\n";
    unknown_user_function: "accl::name::unknown_fn" =>
        "fn square(x: f32) -> f32 {\n    return x * x;\n}\nlet y = sqare(2.0);\n";
    unknown_clause: "accl::device::unknown_clause" =>
        "let a = zeros(f32, 10);\nparallel loop copyinn(a) for i in 0..10 {\n    a[i] = 1.0;\n}\n";
    unknown_clause_lists_what_may_be_written: "accl::device::unknown_clause" =>
        "let a = zeros(f32, 10);\nparallel loop nope for i in 0..10 {\n    a[i] = 1.0;\n}\n";
    unknown_constant: "accl::name::unknown_const" =>
        "let x = f32::MAXX;\n";
    duplicate_function: "accl::name::duplicate_fn" =>
        "fn f(x: i32) -> i32 {\n    return x;\n}\nfn f(x: f32) -> f32 {\n    return x;\n}\n";
    duplicate_parameter: "accl::name::duplicate_param" =>
        "fn f(x: i32, x: i32) -> i32 {\n    return x;\n}\n";

    // ------------------------------------------------------------ types
    type_int_plus_float: "accl::type::mismatch" =>
        "let i = 1;\nlet x = 2.0f32;\nlet y = i + x;\n";
    type_assignment_mismatch: "accl::type::mismatch" =>
        "let x = 1.0f32;\nx = true;\n";
    type_let_annotation_mismatch: "accl::type::mismatch" =>
        "let n: i32 = 2.5f32;\n";
    type_return_mismatch: "accl::type::mismatch" =>
        "fn f(x: f32) -> i32 {\n    return x;\n}\n";
    type_condition_not_bool: "accl::type::mismatch" =>
        "let n = 3;\nif n {\n    n = 0;\n}\n";
    type_while_condition_not_bool: "accl::type::mismatch" =>
        "let n = 3;\nwhile n - 1 {\n    n -= 1;\n}\n";
    type_float_literal_to_int: "accl::type::mismatch" =>
        "let n: i32 = 1.5;\n";
    type_float_literal_times_int: "accl::type::mismatch" =>
        "let i = 3;\nlet s = 2.5 * i;\n";
    type_literal_out_of_range: "accl::type::literal_out_of_range" =>
        "let q: u8 = 300;\n";
    type_arity_user_fn: "accl::type::arity" =>
        "fn add(a: i32, b: i32) -> i32 {\n    return a + b;\n}\nlet s = add(1, 2, 3);\n";
    type_arity_builtin: "accl::type::builtin_args" =>
        "let x = sqrt(2.0, 3.0);\n";
    type_argument_mismatch: "accl::type::mismatch" =>
        "fn half(x: f32) -> f32 {\n    return x / 2.0;\n}\nlet n = 4;\nlet h = half(n);\n";
    type_cast_bool_to_float: "accl::type::bad_cast" =>
        "let b = true;\nlet x = b as f32;\n";
    type_cast_float_to_bool: "accl::type::bad_cast" =>
        "let x = 1.5;\nlet b = x as bool;\n";
    type_index_arity: "accl::type::index_arity" =>
        "let a = zeros(f32, 4, 4);\nlet x = a[1];\n";
    type_index_scalar: "accl::type::index_non_array" =>
        "let x = 1.0;\nlet y = x[0];\n";
    type_index_not_integer: "accl::type::index_not_integer" =>
        "let a = zeros(f32, 4);\nlet x = a[1.5];\n";
    type_assign_to_constant: "accl::type::assign_to_const" =>
        "const N = 10;\nN = 20;\n";
    type_assign_to_loop_variable: "accl::type::assign_to_loop_var" =>
        "for i in 0..10 {\n    i = i + 1;\n}\n";
    type_missing_return: "accl::type::missing_return" =>
        "fn sign(x: f32) -> f32 {\n    if x < 0.0 {\n        return -1.0;\n    }\n}\n";
    type_const_not_constant: "accl::type::not_constant" =>
        "let n = 10;\nconst M = n * 2;\n";
    type_const_division_by_zero: "accl::type::const_div_by_zero" =>
        "const N = 10;\nconst M = N / (N - 10);\n";
    type_section_outside_clause: "accl::type::section_outside_clause" =>
        "let a = zeros(f32, 10);\nlet b = a[2:4];\n";
    type_range_not_integer: "accl::type::range_not_integer" =>
        "for i in 0.0..10.0 {\n    print(i);\n}\n";
    type_negate_bool: "accl::type::bad_operand" =>
        "let b = true;\nlet m = -b;\n";

    // ------------------------------------------------------------ control flow
    syntax_break_outside_loop: "accl::syntax::break_outside_loop" =>
        "let x = 1;\nbreak;\n";
    syntax_return_at_top_level: "accl::syntax::return_outside_fn" =>
        "let x = 1;\nreturn x;\n";
    syntax_nested_fn: "accl::syntax::nested_fn" =>
        "fn outer() {\n    fn inner() {\n    }\n}\n";

    // ------------------------------------------------------------ clauses
    clause_reduction_on_data: "accl::device::clause_not_allowed" =>
        "let s = 0.0;\nlet a = zeros(f64, 8);\ndata copy(a) reduction(+: s) {\n}\n";
    clause_finalize_on_enter_data: "accl::device::clause_not_allowed" =>
        "let a = zeros(f32, 8);\nenter data copyin(a) finalize;\n";
    clause_duplicate: "accl::device::duplicate_clause" =>
        "let a = zeros(f32, 8);\nparallel loop num_gangs(4) num_gangs(8) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    // `serial` is one gang of one worker with vector length 1: its sizes
    // are refused where written, not reported as a second `num_gangs`.
    clause_num_gangs_on_serial: "accl::device::clause_not_allowed" =>
        "let a = zeros(f32, 8);\nserial num_gangs(2) {\n    a[0] = 1.0;\n}\n";
    clause_sizes_on_serial_loop: "accl::device::clause_not_allowed" =>
        "let a = zeros(f32, 8);\nserial loop num_workers(2) vector_length(4) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    clause_vector_length_out_of_range: "accl::device::vector_length" =>
        "let a = zeros(f32, 8);\nparallel loop vector_length(2048) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    clause_num_gangs_dimension_zero: "accl::device::num_gangs" =>
        "let a = zeros(f32, 8);\nparallel num_gangs(2, 0) {\n    a[0] = 0.0;\n}\n";
    clause_wrong_arguments: "accl::device::clause_arguments" =>
        "let a = zeros(f32, 8);\nparallel loop collapse for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    clause_collapse_too_deep: "accl::device::collapse_depth" =>
        "let a = zeros(f32, 8, 8);\nparallel loop collapse(3) for j in 0..8 {\n    for i in 0..8 {\n        a[j, i] = 0.0;\n    }\n}\n";
    clause_collapse_not_rectangular: "accl::device::collapse_not_rectangular" =>
        "let a = zeros(f32, 8, 8);\nparallel loop collapse(2) for j in 0..8 {\n    for i in 0..j {\n        a[j, i] = 1.0;\n    }\n}\n";
    clause_collapse_not_constant: "accl::device::not_constant" =>
        "let n = 2;\nlet a = zeros(f32, 8, 8);\nparallel loop collapse(n) for j in 0..8 {\n    for i in 0..8 {\n        a[j, i] = 1.0;\n    }\n}\n";
    clause_default_shared: "accl::device::bad_default" =>
        "let a = zeros(f32, 8);\nparallel loop default(shared) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    clause_expression_in_data_clause: "accl::device::data_not_array" =>
        "let s = 1.0;\nenter data copyin(s + 1.0);\n";
    clause_async_float: "accl::type::queue_not_integer" =>
        "let a = zeros(f32, 8);\nparallel loop async(1.5) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    clause_wait_float: "accl::type::queue_not_integer" =>
        "let x = 1.0;\nwait(x);\n";
    clause_if_not_bool: "accl::type::mismatch" =>
        "let a = zeros(f32, 8);\nparallel loop if(1) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    update_without_self_or_device: "accl::device::missing_clause" =>
        "let a = zeros(f32, 8);\nupdate if_present;\n";
    private_array: "accl::device::private_array" =>
        "routine vector fn fill(t: f32[]) {\n    loop vector private(t) for k in 0..8 {\n        t[k] = 1.0;\n    }\n}\n";
    private_array_whole_use: "accl::device::private_array_use" =>
        "fn first(a: f32[]) -> f32 {\n    return a[0];\n}\nlet c = zeros(f32, 8);\nlet s = 0.0f32;\nparallel loop private(c) reduction(+: s) for i in 0..8 {\n    c[0] = 1.0;\n    s += first(c);\n}\n";
    private_array_several_gangs: "accl::device::private_array" =>
        "let c = zeros(f32, 8);\nlet a = zeros(f32, 8);\nparallel num_gangs(4) private(c) {\n    c[0] = 1.0;\n    loop gang for i in 0..8 {\n        a[i] = c[0];\n    }\n}\n";
    reduction_element_of_a_scalar: "accl::device::reduction_element" =>
        "let s = 0.0;\nparallel loop reduction(+: s[0]) for i in 0..8 {\n    s += 1.0;\n}\n";

    global_before_let: "accl::name::global_before_let" =>
        "fn twice() -> i32 {\n    return n * 2;\n}\nlet m = twice();\nlet n = 4;\n";
    global_in_construct_in_fn: "accl::device::global_in_construct" =>
        "let scale = 2.0f32;\nfn grow(a: f32[]) {\n    parallel loop for i in 0..len(a) {\n        scale = a[i];\n    }\n}\n";
    global_in_device_function: "accl::device::illegal_fn" =>
        "let scale = 2.0f32;\nfn times(x: f32) -> f32 {\n    return x * scale;\n}\nlet a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    a[i] = times(a[i]);\n}\n";
    global_in_clause_in_fn: "accl::name::unknown" =>
        "let a = zeros(f32, 8);\nfn push() {\n    enter data copyin(a);\n}\n";

    // ------------------------------------------------------------ constructs
    loop_outside_parallel: "accl::device::loop_outside_parallel" =>
        "let a = zeros(f32, 8);\nloop vector for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    routine_vector_inside_loop_vector: "accl::device::routine_level" =>
        "routine vector fn total(a: f32[], n: i32) -> f32 {\n    let s = 0.0f32;\n    loop vector reduction(+: s) for k in 0..n {\n        s += a[k];\n    }\n    return s;\n}\nlet a = zeros(f32, 8);\nparallel loop gang copy(a) for i in 0..8 {\n    loop vector for j in 0..8 {\n        a[j] = total(a, j);\n    }\n}\n";
    routine_worker_from_gang_worker_loop: "accl::device::routine_level" =>
        "routine worker fn fill(a: f32[]) {\n    loop worker for k in 0..8 {\n        a[k] = 1.0;\n    }\n}\nlet a = zeros(f32, 8);\nparallel loop gang worker copy(a) for i in 0..8 {\n    fill(a);\n}\n";
    loop_vector_in_plain_fn: "accl::device::routine_level" =>
        "fn total(a: f32[], n: i32) -> f32 {\n    let s = 0.0f32;\n    loop vector reduction(+: s) for k in 0..n {\n        s += a[k];\n    }\n    return s;\n}\n";
    routine_unknown_level: "accl::device::routine_level" =>
        "routine vectr fn id(n: i32) -> i32 {\n    return n;\n}\n";
    routine_misspelt: "accl::parse::routine" =>
        "rutine vector fn id(n: i32) -> i32 {\n    return n;\n}\n";
    routine_nohost_called_from_host: "accl::device::nohost" =>
        "routine seq nohost fn twice(x: f32) -> f32 {\n    return 2.0 * x;\n}\nlet y = twice(1.0);\n";
    routine_bind_mismatch: "accl::device::bind" =>
        "fn dev(x: f32) -> f32 {\n    return x;\n}\nroutine seq bind(dev) fn f(x: i32) -> i32 {\n    return x;\n}\n";
    routine_bind_unknown: "accl::device::bind" =>
        "routine seq bind(nothere) fn f(x: i32) -> i32 {\n    return x;\n}\n";
    declare_clause_not_allowed: "accl::device::clause_not_allowed" =>
        "let a = zeros(f32, 8);\ndeclare copyin(a) async(1);\n";
    declare_inside_kernel: "accl::device::nested_construct" =>
        "let a = zeros(f32, 8);\nparallel {\n    declare create(a);\n}\n";
    present_and_copyin_of_one_array: "accl::device::conflicting_data" =>
        "let a = zeros(f32, 8);\nparallel loop present(a) copyin(a) for i in 0..8 {\n    a[i] = 1.0;\n}\n";
    on_device_argument_from_device_code: "accl::device::on_device_arg" =>
        "let r = zeros(bool, 4);\nparallel loop for i in 0..4 {\n    r[i] = acc_on_device(acc_get_device_type());\n}\n";
    nested_parallel_loop: "accl::device::nested_construct" =>
        "let a = zeros(f32, 8, 8);\nparallel loop for j in 0..8 {\n    parallel loop for i in 0..8 {\n        a[j, i] = 0.0;\n    }\n}\n";
    data_inside_kernel: "accl::device::nested_construct" =>
        "let a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    data copy(a) {\n        a[i] = 0.0;\n    }\n}\n";
    race_on_outer_scalar: "accl::device::race" =>
        "let a = zeros(f32, 100);\nlet total = 0.0f32;\nparallel loop for i in 0..100 {\n    total += a[i];\n}\n";
    reduction_bitand_on_float: "accl::device::reduction_type" =>
        "let f = 1.0f32;\nparallel loop reduction(&: f) for i in 0..8 {\n    f = f * 2.0;\n}\n";
    reduction_logical_and_on_int: "accl::device::reduction_type" =>
        "let i = 1;\nparallel loop reduction(&&: i) for k in 0..8 {\n    i = i * 2;\n}\n";
    default_none_without_a_clause: "accl::device::default_none" =>
        "let a = zeros(f32, 8);\nlet b = zeros(f32, 8);\ndata copyin(a) {\n    parallel loop default(none) copyout(b) for i in 0..8 {\n        b[i] = a[i];\n    }\n    parallel loop default(none) for i in 0..8 {\n        b[i] = a[i];\n    }\n}\n";
    cache_outside_a_construct: "accl::device::cache_outside" =>
        "let x = zeros(f32, 8);\ncache(x[0:4]);\n";
    cache_of_a_variable_length: "accl::device::not_constant" =>
        "let x = zeros(f32, 8);\nlet n = 4;\nparallel loop gang for r in 0..2 {\n    cache(x[r:n]);\n    loop vector for k in 0..4 { x[k] = 1.0; }\n}\n";
    auto_with_seq: "accl::device::conflicting_clauses" =>
        "let a = zeros(f32, 8);\nparallel loop auto seq for i in 0..8 {\n    a[i] = 1.0;\n}\n";
    reduction_on_bool_array: "accl::device::reduction_array" =>
        "let a = zeros(bool, 8);\nparallel loop reduction(||: a) for i in 0..8 {\n    a[i] = a[i] || i > 3;\n}\n";
    reduction_array_read: "accl::device::reduction_array_use" =>
        "let h = zeros(i32, 8);\nlet t = zeros(i32, 8);\nparallel loop reduction(+: h) for i in 0..8 {\n    h[i % 4] += 1;\n    t[i] = h[i];\n}\n";
    reduction_array_other_operator: "accl::device::reduction_array_update" =>
        "let h = zeros(f32, 8);\nparallel loop reduction(max: h) for i in 0..8 {\n    h[i % 4] += 1.0;\n}\n";
    atomic_on_scalar: "accl::device::atomic_target" =>
        "let a = zeros(i32, 8);\nparallel loop for i in 0..8 {\n    let n = 0;\n    atomic n += 1;\n    a[i] = n;\n}\n";
    atomic_on_u8_array: "accl::device::atomic_type" =>
        "let h = zeros(u8, 8);\nparallel loop for i in 0..8 {\n    atomic h[i] += 1;\n}\n";
    atomic_bitand_on_float: "accl::device::atomic_type" =>
        "let f = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    atomic f[i] &= 1;\n}\n";
    atomic_capture_on_scalar: "accl::type::atomic_target" =>
        "let x = 0;\nparallel loop for i in 0..8 {\n    let old = atomic_add(x, 1);\n}\n";

    // ------------------------------------------------------------ device functions
    device_fn_prints: "accl::device::illegal_fn" =>
        "fn f(x: f32) -> f32 {\n    println(\"x = \", x);\n    return x * 2.0;\n}\nlet a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    a[i] = f(a[i]);\n}\n";
    device_fn_allocates: "accl::device::illegal_fn" =>
        "fn g(n: i32) -> f32 {\n    let t = zeros(f32, n);\n    return t[0];\n}\nlet a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    a[i] = g(4);\n}\n";
    device_fn_recurses: "accl::device::illegal_fn" =>
        "fn fact(n: i32) -> i32 {\n    if n <= 1 {\n        return 1;\n    }\n    return n * fact(n - 1);\n}\nlet a = zeros(i32, 8);\nparallel loop for i in 0..8 {\n    a[i] = fact(i);\n}\n";
    device_fn_transitive: "accl::device::illegal_fn" =>
        "fn log_value(x: f32) {\n    print(x);\n}\nfn scale(x: f32) -> f32 {\n    log_value(x);\n    return x * 2.0;\n}\nlet a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    a[i] = scale(a[i]);\n}\n";
    print_in_kernel: "accl::device::host_builtin" =>
        "let a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    print(a[i]);\n}\n";
    return_in_kernel: "accl::device::return_in_construct" =>
        "fn f(a: f32[]) {\n    parallel loop for i in 0..8 {\n        if a[i] < 0.0 {\n            return;\n        }\n    }\n}\n";
    break_in_kernel: "accl::device::break_out_of_construct" =>
        "let a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    if a[i] < 0.0 {\n        break;\n    }\n}\n";
    array_let_in_kernel: "accl::device::array_let" =>
        "let a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    let b = a;\n    b[i] = 1.0;\n}\n";
    continue_in_kernel_is_fine_but_race_is_not: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet last = 0;\nparallel loop for i in 0..8 {\n    if a[i] < 0.0 {\n        continue;\n    }\n    last = i;\n}\n";
    enter_data_without_clauses: "accl::device::missing_clause" =>
        "enter data;\n";
    exit_data_with_copyin: "accl::device::clause_not_allowed" =>
        "let a = zeros(f32, 8);\nexit data copyin(a);\n";
    set_without_device_num: "accl::device::missing_clause" =>
        "set;\n";
    seq_with_gang: "accl::device::conflicting_clauses" =>
        "let a = zeros(f32, 8);\nparallel loop seq gang for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    collapse_zero: "accl::device::collapse_value" =>
        "let a = zeros(f32, 8);\nparallel loop collapse(0) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    wait_async_float: "accl::type::queue_not_integer" =>
        "wait(1) async(2.5);\n";
    function_shadows_builtin: "accl::name::shadows_builtin" =>
        "fn sqrt(x: f32) -> f32 {\n    return x;\n}\n";
    reduction_on_constant: "accl::device::reduction_const" =>
        "const N = 4;\nparallel loop reduction(+: N) for i in 0..8 {\n}\n";
    loop_vector_race_in_parallel: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet s = 0.0f32;\nparallel {\n    loop vector for i in 0..8 {\n        s += a[i];\n    }\n}\n";
    host_builtin_in_kernel: "accl::device::host_builtin" =>
        "let a = zeros(f32, 8);\nlet b = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    b[i] = sum(a);\n}\n";
    compound_assign_whole_array: "accl::type::array_compound_assign" =>
        "let a = zeros(f32, 8);\na += 1.0;\n";
    return_value_in_unit_fn: "accl::type::return_value_in_unit_fn" =>
        "fn f(x: i32) {\n    return x;\n}\n";
    data_clause_on_expression: "accl::device::data_not_array" =>
        "let a = zeros(f32, 8);\ndata copy(a[0] + 1.0) {\n}\n";
    // ----------------------------------- clause forms still refused
    firstprivate_default_assigned_in_parallel_loop: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet last = 0.0f32;\nparallel {\n    loop gang for i in 0..8 {\n        last = a[i];\n    }\n}\n";
    kernels_scalar_assigned_in_independent_loop: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet last = 0.0f32;\nkernels loop independent for i in 0..8 {\n    a[i] = last;\n    last = a[i];\n}\n";
    tile_star_outside_tile: "accl::device::clause_arguments" =>
        "let a = zeros(f32, 8);\nparallel loop collapse(*) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    gang_dim_out_of_range: "accl::device::gang_dim" =>
        "let a = zeros(f32, 8);\nparallel num_gangs(2, 2) {\n    loop gang(dim: 4) for i in 0..8 {\n        a[i] = 0.0;\n    }\n}\n";
    num_gangs_of_four_dimensions: "accl::device::clause_arguments" =>
        "let a = zeros(f32, 8);\nparallel loop num_gangs(2, 2, 2, 2) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    collapse_force_with_a_statement_after: "accl::device::collapse_depth" =>
        "let a = zeros(f32, 8, 8);\nparallel loop collapse(force: 2) for i in 0..8 {\n    for j in 0..8 {\n        a[i, j] = 0.0;\n    }\n    a[i, 0] = 1.0;\n}\n";
    private_array_section: "accl::device::private_array" =>
        "let n = 8;\nlet c = zeros(f32, n);\nlet a = zeros(f32, n, n);\nparallel loop gang for i in 0..n {\n    loop vector private(c[0:n]) for j in 0..i {\n        c[j] = 1.0;\n        a[i, j] = c[j];\n    }\n}\n";
    tile_of_nine_loops: "accl::device::tile_value" =>
        "let a = zeros(f32, 8);\nparallel loop tile(1, 1, 1, 1, 1, 1, 1, 1, 1) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    routine_missing_queue: "accl::type::builtin_args" =>
        "let a = zeros(f32, 8);\nacc_copyin_async(a);\n";
    routine_used_as_value: "accl::type::routine_value" =>
        "let a = zeros(f32, 8);\nlet p = acc_create(a);\n";
    // ------------------------------------------------------------ strings
    string_plus_number: "accl::type::bad_operands" =>
        "let step = 50;\nlet file = \"heat_\" + step;\n";
    string_times_number: "accl::type::bad_operands" =>
        "let s = \"ab\" * 2;\n";
    string_in_kernel: "accl::device::string" =>
        "let tag = \"x\";\nlet a = zeros(f32, 8);\nparallel loop for i in 0..8 {\n    if tag == \"x\" { a[i] = 1.0; }\n}\n";
    string_type_misspelt: "accl::parse::unknown_type" =>
        "fn greet(who: string) -> str {\n    return \"hi \" + who;\n}\n";
    string_stored_in_number: "accl::type::mismatch" =>
        "let n: i32 = \"5\";\n";
    string_walked_in_kernel: "accl::device::string" =>
        "let word = \"abc\";\nlet a = zeros(i32, 8);\nparallel loop for i in 0..8 {\n    for c in word {\n        a[i] += 1;\n    }\n}\n";
    for_over_a_number: "accl::type::not_iterable" =>
        "let n = 3;\nfor c in n {\n    println(c);\n}\n";
    split_empty_separator: "accl::type::empty_separator" =>
        "for part in split(\"a,b\", \"\") {\n    println(part);\n}\n";
    split_outside_for: "accl::type::split_outside_for" =>
        "let parts = split(\"a,b\", \",\");\n";
    set_bad_device_type: "accl::device::bad_device_type" =>
        "set device_type(nvidia);\n";
    string_format_needs_a_string: "accl::type::builtin_args" =>
        "let s = format(3, 4);\n";
}

/// A file with several independent errors reports all of them.
#[test]
fn several_errors_are_all_reported() {
    let src = "let x: i32 = 1.5;\n\
               let y = undefined_name + 1;\n\
               fn f(a: i32) -> i32 {\n    return a;\n}\n\
               let z = f(1, 2);\n\
               let b = true as f32;\n\
               let a = zeros(f32, 8);\n\
               parallel loop copyinn(a) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    let diags = diagnose(src);
    let rendered = render(src, &diags);
    let errors = diags.iter().filter(|d| d.is_error()).count();
    assert!(errors >= 4, "only {errors} errors:\n{rendered}");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("several_errors", rendered));
}

/// Several syntax errors in one file are all reported too.
#[test]
fn several_syntax_errors_are_all_reported() {
    let src = "let x = 1\nlet y = 2 $ 3;\nlet z = (1 + ;\nlet w = 4;\nprint(\"a\\qb\");\n";
    let diags = diagnose(src);
    let rendered = render(src, &diags);
    assert!(diags.len() >= 3, "only {} errors:\n{rendered}", diags.len());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("several_syntax_errors", rendered));
}
