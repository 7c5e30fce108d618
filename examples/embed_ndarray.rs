//! ndarray arrays in and out of an engine without copying: a field built
//! with ndarray is moved in (its buffer becomes the script's array),
//! smoothed by a script, viewed in place and moved out again. Each claim of
//! "no copy" is checked by the buffer's address.
//!
//! `cargo run --example embed_ndarray --features ndarray`

use accl::Engine;
use ndarray::{Array2, Axis, Ix2};

fn main() -> miette::Result<()> {
    let mut e = Engine::new();

    // In: a standard-layout (row-major) array moves in; no element is copied.
    let n = 32;
    let field = Array2::<f64>::from_shape_fn((n, n), |(i, j)| ((i * 7 + j * 3) % 11) as f64);
    let before = field.as_ptr();
    e.set_ndarray("u", field)?;
    let inside = e.with_ndarray::<f64, _>("u", |v| v.as_ptr());
    assert_eq!(inside, Some(before), "set_ndarray moved the buffer in");

    // The script smooths the interior in place, a few Jacobi sweeps.
    e.eval(
        "let v = clone(u);
         let rows = shape(u, 0);
         let cols = shape(u, 1);
         for step in 0..20 {
             parallel loop collapse(2) for i in 1..rows - 1 {
                 for j in 1..cols - 1 {
                     v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]);
                 }
             }
             parallel loop collapse(2) for i in 1..rows - 1 {
                 for j in 1..cols - 1 {
                     u[i, j] = v[i, j];
                 }
             }
         }",
    )?;

    // A view: ndarray reads the script's array where it is.
    let col_sums = e
        .with_ndarray::<f64, _>("u", |v| v.sum_axis(Axis(0)))
        .expect("u is an f64 array");
    println!("column sums: {:.2} .. {:.2}", col_sums[0], col_sums[n - 1]);

    // Out: the variable holds the last handle, so its buffer moves out,
    // still the one that came in.
    let u = e
        .take_ndarray::<f64>("u")
        .expect("u is an f64 array")
        .into_dimensionality::<Ix2>()
        .expect("rank 2");
    assert_eq!(u.as_ptr(), before, "take_ndarray moved the buffer out");
    println!(
        "moved in and out without a copy; u[16, 16] = {:.4}",
        u[[16, 16]]
    );

    // Another layout is copied once, in row-major order.
    let t = u.t().as_standard_layout().into_owned(); // row-major: moves
    let tp = t.as_ptr();
    e.set_ndarray("t", t)?;
    assert_eq!(e.with_ndarray::<f64, _>("t", |v| v.as_ptr()), Some(tp));
    e.set_ndarray("r", u.reversed_axes())?; // Fortran order: copied
    let same = e.eval_as::<bool>(
        "let ok = true; for i in 0..32 { for j in 0..32 { ok = ok && r[i, j] == t[i, j]; } } ok",
    )?;
    assert!(same);
    println!("a transposed array is copied into row-major order");
    Ok(())
}
