//! Updates of one array element from several parallel iterations (the
//! checker's `accl::device::race` for arrays): a `collapse(3)` nest whose
//! update leaves out its innermost index, a plain parallel loop updating
//! one element, and an inner `loop vector`'s iterations; then the ways to
//! write them that are no race (an `atomic update`, a scalar reduction
//! stored once, the innermost loop run in order, every index used), each
//! run on both backends with its known answer.

use crate::common;
use common::{rendered_failure, same_failure, values_on_both};

const NEST: &str = "let tend = zeros(f32, 4, 8, 8);
let src = zeros(f32, 4, 8, 8);
for k in 0..4 { for i in 0..8 { for j in 0..8 { src[k, i, j] = (j + 1) as f32; } } }
";

#[test]
fn collapsed_update_missing_an_index_is_a_race() {
    let src = format!(
        "{NEST}parallel loop collapse(3) for k in 0..4 {{
    for i in 0..8 {{
        for j in 0..8 {{
            tend[k, i, 0] += src[k, i, j];
        }}
    }}
}}
let t = tend[1, 2, 0];"
    );
    same_failure(&src, "accl::device::race");
    let text = rendered_failure(&src);
    assert!(
        text.contains("every iteration over `j` updates the same element of `tend`"),
        "{text}"
    );
    assert!(text.contains("these indices do not use `j`"), "{text}");
    assert!(text.contains("`atomic update`"), "{text}");
}

#[test]
fn one_element_updated_by_every_iteration_is_a_race() {
    same_failure(
        "let a = zeros(i32, 4); let b = zeros(i32, 64);
         parallel loop for i in 0..64 { a[0] = a[0] + b[i]; }",
        "accl::device::race",
    );
    // The gang loop's index is used, the vector loop's is not.
    let text = rendered_failure(
        "let a = zeros(i32, 8); let b = zeros(i32, 8, 32);
         parallel loop gang for i in 0..8 { loop vector for j in 0..32 { a[i] += b[i, j]; } }",
    );
    assert!(
        text.contains("every iteration over `j` updates the same element of `a`"),
        "{text}"
    );
}

#[test]
fn the_race_free_spellings_give_the_sum() {
    // tend[k, i, 0] = 1 + 2 + .. + 8 = 36 in each (k, i); 32 of them.
    values_on_both(
        &format!(
            "{NEST}parallel loop collapse(3) for k in 0..4 {{
    for i in 0..8 {{
        for j in 0..8 {{
            atomic update tend[k, i, 0] += src[k, i, j];
        }}
    }}
}}
let atomic_total = sum(tend);
tend = zeros(f32, 4, 8, 8);
parallel loop collapse(2) for k in 0..4 {{
    for i in 0..8 {{
        for j in 0..8 {{
            tend[k, i, 0] += src[k, i, j];
        }}
    }}
}}
let in_order_total = sum(tend);
tend = zeros(f32, 4, 8, 8);
parallel loop collapse(2) for k in 0..4 {{
    for i in 0..8 {{
        let s = 0.0f32;
        loop vector reduction(+: s) for j in 0..8 {{ s += src[k, i, j]; }}
        tend[k, i, 0] += s;
    }}
}}
let reduced_total = sum(tend);
tend = zeros(f32, 4, 8, 8);
parallel loop collapse(3) for k in 0..4 {{
    for i in 0..8 {{
        for j in 0..8 {{
            tend[k, i, j] += src[k, i, j];
        }}
    }}
}}
let every_index_total = sum(tend);"
        ),
        &[
            ("atomic_total", "1152.0"),
            ("in_order_total", "1152.0"),
            ("reduced_total", "1152.0"),
            ("every_index_total", "1152.0"),
        ],
    );
}
