//! The test of a loop, built from checked source and evaluated at given
//! values.

use super::*;
use crate::plan::Planner;
use lang::hir::ReductionOp;
use lang::hir::{self, LocalH};
use lang::Builtins;

/// The test of the first `for` loop of function `f` in `src` (checked
/// with no builtins), and what `go` makes of it with `f` and a reader of
/// scalars `vals` by name.
fn with_test<T>(
    src: &str,
    vals: &[(&str, i128)],
    go: impl FnOnce(Result<ParTest, String>, &hir::Function, &dyn Fn(Leaf, Scalar) -> Option<i128>) -> T,
) -> T {
    crate::with_loop_of_f(src, |prog, f, fl| {
        let builtins = Builtins::new();
        let planner = Planner::new(prog, &builtins);
        let t = ParTest::of(&planner, &f.body, fl, false).map_err(|w| w.what);
        let read = |leaf: Leaf, _: Scalar| match leaf {
            Leaf::Slot(s) => vals
                .iter()
                .find(|v| v.0 == f.body.locals[LocalH::new(s)].name)
                .map(|v| v.1),
            Leaf::Global(_) => None,
        };
        go(t, f, &read)
    })
}

/// `f`'s first loop's test, or why not.
fn test_of(src: &str) -> Result<ParTest, String> {
    with_test(src, &[], |t, _, _| t)
}

/// The plan of `f`'s first loop with scalars `vals` and array shapes
/// `shapes`, by name.
fn plan(src: &str, vals: &[(&str, i128)], shapes: &[(&str, &[usize])]) -> Option<Plan> {
    plan_names(src, vals, shapes, false)
}

/// As [`plan`]; with `one`, every array name is a name of one array.
fn plan_names(
    src: &str,
    vals: &[(&str, i128)],
    shapes: &[(&str, &[usize])],
    one: bool,
) -> Option<Plan> {
    with_test(src, vals, |t, f, read| {
        let t = t.unwrap_or_else(|w| panic!("{src}: refused: {w}"));
        let shape = |slot: usize| {
            shapes
                .iter()
                .find(|v| v.0 == f.body.locals[LocalH::new(slot)].name)
                .map(|v| v.1.to_vec())
        };
        let id = |slot: usize| Some(if one { 0 } else { slot as u64 });
        t.plan(read, &shape, &id)
    })
}

fn why(src: &str) -> String {
    match test_of(src) {
        Ok(t) => panic!("{src}: not refused: {t:?}"),
        Err(w) => w,
    }
}

const ROWS: &str = "fn f(a: i32[], m: i32, n: i32, w: i32) {
    for i in 0..n {
        for j in 0..w {
            a[i * m + j] = i + j;
        }
    }
}";

#[test]
fn rows_of_a_flat_array_are_apart_when_each_fits_its_stride() {
    let p = plan(
        ROWS,
        &[("m", 100), ("n", 50), ("w", 100)],
        &[("a", &[5000])],
    );
    assert_eq!(
        p,
        Some(Plan {
            lo: 0,
            end: 49,
            work: 5000
        })
    );
    // A row one element wider than the stride overlaps the next row.
    assert_eq!(
        plan(
            ROWS,
            &[("m", 100), ("n", 50), ("w", 101)],
            &[("a", &[5100])]
        ),
        None
    );
    // One turn, or none: nothing to spread.
    assert_eq!(
        plan(ROWS, &[("m", 100), ("n", 1), ("w", 100)], &[("a", &[100])]),
        None
    );
}

#[test]
fn planes_of_fields_split_into_a_digit_per_iteration() {
    // miniWeather's initial state: field `v` of 4, row `k`, column `i`.
    let src = "fn f(s: f64[], t: f64[], nx: i32, nz: i32) {
    for k in 0..nz {
        for i in 0..nx {
            for v in 0..4 {
                let ind = v * nz * nx + k * nx + i;
                s[ind] = 0.0;
                s[ind] = s[ind] + 1.0;
                t[ind] = s[ind];
            }
            let top = 3 * nz * nx + k * nx + i;
            t[top] = t[top] * 2.0;
        }
    }
}";
    let n = [("nx", 30), ("nz", 20)];
    assert!(plan(src, &n, &[("s", &[2400]), ("t", &[2400])]).is_some());
    // The planes picked by constants instead (miniWeather's fluxes, one
    // more row than the loop has turns).
    let src = "fn f(s: f64[], nx: i32, nz: i32) {
    for k in 0..nz {
        for i in 0..nx {
            s[0 * (nz + 1) * nx + k * nx + i] = 1.0;
            s[3 * (nz + 1) * nx + k * nx + i] = s[1 * (nz + 1) * nx + k * nx + i];
        }
    }
}";
    assert!(plan(src, &n, &[("s", &[2520])]).is_some());
    // Planes one row apart overlap the next iteration's row.
    let src = "fn f(s: f64[], nx: i32, nz: i32) {
    for k in 0..nz {
        for i in 0..nx {
            s[k * nx + i] = s[nx + k * nx + i];
        }
    }
}";
    assert!(plan(src, &n, &[("s", &[2400])]).is_none());
}

#[test]
fn a_read_of_the_row_before_is_a_dependence() {
    let src = "fn f(a: f64[], m: i32, n: i32) {
    for i in 1..n {
        for j in 0..m {
            a[i * m + j] = a[(i - 1) * m + j] + 1.0;
        }
    }
}";
    assert_eq!(plan(src, &[("m", 8), ("n", 8)], &[("a", &[64])]), None);
}

#[test]
fn a_column_of_a_matrix_is_an_iteration_of_its_own() {
    let src = "fn f(a: f64[,], n: i32) {
    for j in 0..n {
        for i in 0..n {
            a[i, j] = 1.0;
        }
    }
}";
    assert!(plan(src, &[("n", 16)], &[("a", &[16, 16])]).is_some());
    // A wider matrix: columns stay apart (their stride is a multiple).
    assert!(plan(src, &[("n", 16)], &[("a", &[16, 32])]).is_some());
}

#[test]
fn index_values_outside_their_type_run_in_order() {
    let src = "fn f(a: f64[], m: i32, n: i32) {
    for i in 0..n {
        a[i * m] = 1.0;
    }
}";
    assert!(plan(src, &[("m", 1 << 21), ("n", 2000)], &[("a", &[1 << 32])]).is_none());
    assert!(plan(src, &[("m", 1 << 10), ("n", 2000)], &[("a", &[1 << 21])]).is_some());
}

#[test]
fn integer_accumulations_are_reductions() {
    let t = test_of(
        "fn f(a: i32[], n: i32) -> i64 {
    let s: i64 = 0;
    let x: u32 = 0;
    for i in 0..n {
        s += a[i] as i64;
        s -= 1;
        x = x ^ (a[i] as u32);
    }
    return s;
}",
    );
    let t = t.unwrap();
    let ops: Vec<ReductionOp> = t.reductions.iter().map(|r| r.0).collect();
    assert_eq!(ops, [ReductionOp::Add, ReductionOp::BitXor]);
}

#[test]
fn what_iterations_share_keeps_them_in_order() {
    assert!(why("fn f(a: f64[], n: i32) -> f64 {
    let s = 0.0;
    for i in 0..n { s += a[i]; }
    return s;
}")
    .contains("declared outside the loop"));
    assert!(why("fn f(a: i32[], n: i32) -> i32 {
    let s = 0;
    for i in 0..n { s += a[i]; a[i] = s; }
    return s;
}")
    .contains("a reduction of the loop"));
    assert!(why("fn f(a: i32[], n: i32) {
    for i in 0..n { if a[i] < 0 { break; } a[i] = 1; }
}")
    .contains("`break`"));
    assert!(why("let seed: u32 = 1;
let calls = 0;
fn next() -> u32 { seed = seed * 1103515245 + 12345; calls += 1; return seed; }
fn f(a: u32[], n: i32) {
    for i in 0..n { a[i] = next(); }
}")
    .contains("assigns top-level variables"));
    assert!(why("fn f(a: f64[], n: i32) {
    for i in 0..n { a[i * i] = 1.0; }
}")
    .contains("not affine"));
    assert!(why("fn f(a: f64[], b: i32[], n: i32) {
    for i in 0..n { a[b[i]] = 1.0; }
}")
    .contains("not affine"));
}

/// The generator `g` of `src`'s loop in `f`: (ty, steps per turn at
/// `vals`) and the test.
fn generator(src: &str, vals: &[(&str, i128)]) -> (Recurrence, u128) {
    with_test(src, vals, |t, _, read| {
        let t = t.unwrap_or_else(|w| panic!("{src}: refused: {w}"));
        let steps = t.steps(read).expect("steps");
        assert_eq!(t.recurrences.len(), 1, "{t:?}");
        (t.recurrences[0].clone(), steps[0])
    })
}

#[test]
fn a_c_rand_jumps_to_the_value_its_steps_in_order_reach() {
    let (r, per) = generator(
        "let next: u32 = 1;
fn rnd() -> i32 {
    next = next * 1103515245 + 12345;
    return ((next / 65536) % 32768) as i32;
}
fn f(a: i32[], rows: i32, cols: i32) {
    for i in 0..rows {
        for j in 0..cols {
            a[i * cols + j] = rnd() % 10 + rnd() % 3;
        }
        a[i * cols] = rnd();
    }
}",
        &[("rows", 5), ("cols", 7)],
    );
    // Two calls per inner turn and one per row.
    assert_eq!(per, 2 * 7 + 1);
    let mut x: u32 = 9;
    for n in 0..300u128 {
        assert_eq!(r.jump(9, n), Some(x as i128), "after {n} steps");
        x = x.wrapping_mul(1103515245).wrapping_add(12345);
    }
}

#[test]
fn a_signed_generator_modulo_a_power_of_two_stays_exact_from_a_value_below_it() {
    let (r, per) = generator(
        "let seed: i64 = 42;
fn lcg() -> i64 {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
}
fn f(a: i64[], n: i32) {
    for i in 0..n {
        a[i] = lcg();
    }
}",
        &[("n", 10)],
    );
    assert_eq!(per, 1);
    let mut x: i64 = 42;
    for n in 0..300u128 {
        assert_eq!(r.jump(42, n), Some(x as i128));
        x = (x * 1103515245 + 12345) % 2147483648;
    }
    // A negative state or one past the modulus would not stay so.
    assert_eq!(r.jump(-1, 3), None);
    assert_eq!(r.jump(1 << 31, 3), None);
    // A signed step that could wrap is not a generator the test takes.
    assert!(why("let seed: i64 = 42;
fn lcg() -> i64 { seed = (seed * 4611686018427387904 + 1) % 2147483648; return seed; }
fn f(a: i64[], n: i32) {
    for i in 0..n { a[i] = lcg(); }
}")
    .contains("assigns top-level variables"));
}

#[test]
fn a_generator_stepped_on_some_turns_or_read_by_the_loop_stays_in_order() {
    let gen = "let seed: u32 = 1;
fn rnd() -> u32 { seed = seed * 1103515245 + 12345; return seed; }
";
    assert!(why(&format!(
        "{gen}fn f(a: u32[], n: i32) {{
    for i in 0..n {{ if i % 2 == 0 {{ a[i] = rnd(); }} }}
}}"
    ))
    .contains("on some turns only"));
    assert!(why(&format!(
        "{gen}fn f(a: u32[], n: i32) {{
    for i in 0..n {{ a[i] = rnd() + seed; }}
}}"
    ))
    .contains("names `seed`"));
    assert!(why(&format!(
        "{gen}fn f(a: u32[], n: i32) {{
    for i in 0..n {{ a[i] = 1; let k = 0; while k < i {{ a[i] = rnd(); k += 1; }} }}
}}"
    ))
    .contains("on some turns only"));
}

#[test]
fn two_names_of_one_array_are_tested_as_one() {
    // miniWeather's `semi_discrete_step(state, state_tmp, state_tmp, ..)`:
    // the array read and the one written are one, at one element a turn.
    let same = "fn f(o: f64[], a: f64[], m: i32, n: i32) {
    for i in 0..n {
        for j in 0..m {
            o[i * m + j] = a[i * m + j] * 0.5;
        }
    }
}";
    let v = [("m", 10), ("n", 10)];
    let sh: &[(&str, &[usize])] = &[("o", &[100]), ("a", &[100])];
    assert!(plan_names(same, &v, sh, true).is_some());
    // Reading the next row of the array written is a dependence when the
    // two names are one array, and none when they are two.
    let next = "fn f(o: f64[], a: f64[], m: i32, n: i32) {
    for i in 0..n {
        for j in 0..m {
            o[i * m + j] = a[(i + 1) * m + j];
        }
    }
}";
    let sh: &[(&str, &[usize])] = &[("o", &[110]), ("a", &[110])];
    assert!(plan_names(next, &v, sh, true).is_none());
    assert!(plan_names(next, &v, sh, false).is_some());
    // An index not affine is fine in an array only read, unless that array
    // is the one written.
    let gather = "fn f(o: f64[], a: f64[], m: i32, n: i32) {
    for i in 0..n {
        o[i] = a[i * i];
    }
}";
    let sh: &[(&str, &[usize])] = &[("o", &[100]), ("a", &[100])];
    assert!(plan_names(gather, &v, sh, false).is_some());
    assert!(plan_names(gather, &v, sh, true).is_none());
}
