//! Which rows of each array a kernel may touch (`compiler::footprint`), as
//! the race detection between async queues works them out at launch.

mod common;
use common::Source;
use compiler::footprint::{leading_rows, rows_of};

/// The rows `[lo, hi)` kernel 0 of `src` reaches of array `a` with the
/// outer loop over `level` and the captured scalars named in `params` set
/// to their values; `None`: the whole array.
fn rows(src: &str, a: &str, level: (i128, i128), params: &[(&str, i128)]) -> Option<(i128, i128)> {
    let k = Source::new(src).kernel(0);
    let at = k
        .arrays
        .iter()
        .position(|(_, p)| p.name == a)
        .expect("array");
    let leads = leading_rows(&k)[at].clone()?;
    let value = |p: u32| {
        let name = &k.params[p as usize].name;
        params.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    };
    rows_of(&k.entry, &leads, Some(level), &value)
}

#[test]
fn loop_variable_plus_constants_and_captured_scalars() {
    let stencil = "let r = 6; let m = 8; let a = zeros(f64, r + 2, m);
        parallel loop for i in 1..m - 1 { a[r, i] = a[r - 1, i] + a[r + 1, i]; }";
    // `r` is the kernel's only captured scalar: rows r - 1 ..= r + 1.
    assert_eq!(rows(stencil, "a", (1, 7), &[("r", 6)]), Some((5, 8)));
    let shifted = "let a = zeros(f32, 100); let b = zeros(f32, 100);
        parallel loop for j in 1..99 { a[j] = b[j - 1] + b[j + 1]; }";
    assert_eq!(rows(shifted, "a", (1, 99), &[]), Some((1, 99)));
    assert_eq!(rows(shifted, "b", (1, 99), &[]), Some((0, 100)));
    // A row of a flattened 2-D array: x * n + y.
    let flat = "let n = 10; let x = 3; let c = zeros(f32, 100);
        parallel loop for y in 0..n { c[x * n + y] = 1.0; }";
    let xn = [("x", 3), ("n", 10)];
    assert_eq!(rows(flat, "c", (0, 10), &xn), Some((30, 40)));
}

#[test]
fn a_gang_loop_reaches_the_rows_of_its_gang_variable() {
    // Rows of a block, one gang per row, the columns over vector lanes.
    let block = "let w = 64; let y0 = 16; let img = zeros(u8, 128, w); let src = zeros(u8, 128, w);
        parallel loop gang vector_length(32) for y in y0..y0 + 16 {
            loop vector for x in 0..w { img[y, x] = src[y + 1, x]; }
        }";
    let p = [("w", 64), ("y0", 16)];
    assert_eq!(rows(block, "img", (16, 32), &p), Some((16, 32)));
    assert_eq!(rows(block, "src", (16, 32), &p), Some((17, 33)));
    // An index made from the vector loop's variable: anywhere.
    let transposed = "let img = zeros(u8, 64, 64);
        parallel loop gang for y in 0..8 {
            loop vector for x in 0..64 { img[x, y] = 1; }
        }";
    assert_eq!(rows(transposed, "img", (0, 8), &[]), None);
}

#[test]
fn other_indices_are_the_whole_array() {
    let gather = "let p = zeros(i32, 10); let a = zeros(f32, 10);
        parallel loop for i in 0..10 { a[p[i]] = 1.0; }";
    assert_eq!(rows(gather, "a", (0, 10), &[]), None);
    let product = "let a = zeros(f32, 100);
        parallel loop for i in 0..10 { a[i * i] = 1.0; }";
    assert_eq!(rows(product, "a", (0, 10), &[]), None);
    // A captured value the row arithmetic would overflow: anywhere.
    let big = "let k = 2147483647; let a = zeros(f32, 10);
        parallel loop for i in 0..10 { a[k + 1 - k] = 1.0; }";
    assert_eq!(rows(big, "a", (0, 10), &[("k", 2147483647)]), None);
}

#[test]
fn accesses_under_a_condition_fixed_for_the_launch() {
    // The kernel picks its array by a captured scalar: at launch, the
    // arrays of the branches not taken are not touched at all.
    let pick = "let n = 100; let i = 0; let a = zeros(f64, n); let b = zeros(f64, n); let c = zeros(f64, n);
        parallel loop for k in 0..n {
            if i == 0 { a[k] *= 2.0; } else if i == 1 { b[k] *= 3.0; } else { c[k] = 1.0; }
        }";
    let at = |i| [("i", i), ("n", 100)];
    assert_eq!(rows(pick, "a", (0, 100), &at(0)), Some((0, 100)));
    assert_eq!(rows(pick, "b", (0, 100), &at(0)), Some((0, 0)));
    assert_eq!(rows(pick, "a", (0, 100), &at(1)), Some((0, 0)));
    assert_eq!(rows(pick, "b", (0, 100), &at(1)), Some((0, 100)));
    assert_eq!(rows(pick, "c", (0, 100), &at(1)), Some((0, 0)));
    assert_eq!(rows(pick, "c", (0, 100), &at(2)), Some((0, 100)));
    // A condition that varies over the iterations guards nothing; one
    // combining fixed comparisons does.
    let mixed = "let n = 100; let i = 0; let j = 5; let a = zeros(f64, n); let b = zeros(f64, n);
        parallel loop for k in 0..n {
            if k == i { a[k] = 1.0; }
            if i > 2 && !(j == 5) || i == 7 { b[k] = 2.0; }
        }";
    let at = |i| [("i", i), ("j", 5), ("n", 100)];
    assert_eq!(rows(mixed, "a", (0, 100), &at(0)), Some((0, 100)));
    assert_eq!(rows(mixed, "b", (0, 100), &at(3)), Some((0, 0)));
    assert_eq!(rows(mixed, "b", (0, 100), &at(7)), Some((0, 100)));
}
