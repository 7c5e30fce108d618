//! Which inner loops of a `parallel loop` the compiler makes vector loops
//! by itself, which reductions it finds, and why it leaves a loop
//! sequential (the device results are tested in the workspace's
//! `tests/auto_mapping.rs`).

mod common;

use common::Source;
use compiler::Shape;

/// The kernel's shape and, per inner loop, `Ok(reductions)` or `Err(reason)`.
fn mapped(src: &str) -> (Shape, Vec<Result<Vec<String>, String>>) {
    let k = Source::new(src).kernel(0);
    let notes = k
        .notes
        .iter()
        .map(|n| match &n.vector {
            Some(r) => Ok(r
                .iter()
                .map(|(op, v)| format!("{}:{v}", op.symbol()))
                .collect()),
            None => Err(n.reason.clone()),
        })
        .collect();
    (k.shape, notes)
}

const ARRAYS: &str = "let n = 100; let m = 100; let a = zeros(f32, n, m); let b = zeros(f32, n, m);
    let x = zeros(f32, m); let y = zeros(f32, n); let idx = zeros(i32, m); let c = zeros(i32, n);";

fn with_arrays(kernel: &str) -> String {
    format!("{ARRAYS}\n{kernel}")
}

#[test]
fn gram_schmidt_and_spmv_shapes_become_vector_loops() {
    let (shape, notes) = mapped(&with_arrays(
        "parallel loop vector_length(128) for j in 1..n {
             let tmp = 0.0;
             for i in 0..m { tmp += a[0, i] as f64 * a[j, i] as f64; }
             for i in 0..m { a[j, i] = a[j, i] - tmp as f32 * a[0, i]; }
         }",
    ));
    assert_eq!(shape, Shape::Gang);
    assert_eq!(notes, vec![Ok(vec!["+:tmp".to_string()]), Ok(vec![])]);

    let (shape, notes) = mapped(&with_arrays(
        "parallel loop for r in 0..n {
             let s = 0.0f32;
             for k in c[r]..c[r] + 7 * r { s += x[k] * y[idx[k]]; }
             y[r] = s;
         }",
    ));
    assert_eq!(shape, Shape::Gang);
    assert_eq!(notes, vec![Ok(vec!["+:s".to_string()])]);
}

#[test]
fn every_reduction_form_is_recognised() {
    for (init, update, want) in [
        ("0.0f32", "s += x[i];", "+:s"),
        ("0.0f32", "s -= x[i];", "+:s"),
        ("0.0f32", "s = s + x[i];", "+:s"),
        ("0.0f32", "s = x[i] + s;", "+:s"),
        ("1.0f32", "s *= x[i];", "*:s"),
        ("0.0f32", "s = max(s, x[i]);", "max:s"),
        ("0.0f32", "s = min(x[i], s);", "min:s"),
        ("0", "s &= idx[i];", "&:s"),
        ("0", "s = s | idx[i];", "|:s"),
        ("0", "s ^= idx[i];", "^:s"),
        ("true", "s = s && x[i] > 0.0;", "&&:s"),
        ("false", "s = s || x[i] > 0.0;", "||:s"),
    ] {
        let (shape, notes) = mapped(&with_arrays(&format!(
            "parallel loop for r in 0..n {{ let s = {init}; for i in 0..m {{ {update} }} c[r] = s as i32; }}"
        )));
        assert_eq!(shape, Shape::Gang, "{update}");
        assert_eq!(notes, vec![Ok(vec![want.to_string()])], "{update}");
    }
}

#[test]
fn loops_that_must_stay_sequential_say_why() {
    for (body, why) in [
        // A loop-carried dependence through an array.
        (
            "for i in 1..m { a[r, i] = a[r, i - 1] + 1.0; }",
            "written at elements another iteration",
        ),
        // An indirect write.
        (
            "for i in 0..m { b[r, idx[i]] = x[i]; }",
            "written at elements another iteration",
        ),
        // A scalar written in one iteration and read in the next.
        (
            "let t = 0.0f32; for i in 0..m { b[r, i] = t; t = x[i]; }",
            "assigned in one iteration",
        ),
        // A reduction variable read inside the loop.
        (
            "let s = 0.0f32; for i in 0..m { s += x[i]; b[r, i] = s; }",
            "updated and also read",
        ),
        // Two operators on one variable.
        (
            "let s = 0.0f32; for i in 0..m { s += x[i]; s = max(s, x[i]); }",
            "combined with both",
        ),
        // `break` leaves the loop.
        (
            "for i in 0..m { if x[i] > 0.0 { break; } b[r, i] = 1.0; }",
            "`break`",
        ),
        // An atomic.
        ("for i in 0..m { atomic c[idx[i]] += 1; }", "atomic"),
        // A short constant loop.
        ("y[r] = 0.0; for i in 0..8 { b[r, i] = x[i]; }", "below 16"),
        // Column walks: lanes would read far apart elements.
        (
            "let s = 0.0f32; for i in 0..n { s += a[i, r]; } y[r] = s;",
            "contiguous dimension",
        ),
        // ... and here one lane per outer iteration reads neighbours already.
        (
            "let s = 0.0f32; for i in 0..n { s += a[r, i] + b[i, r]; } y[r] = s;",
            "outer loop walks",
        ),
    ] {
        let (shape, notes) = mapped(&with_arrays(&format!(
            "parallel loop for r in 0..n {{ {body} }}"
        )));
        assert_eq!(shape, Shape::Flat, "{body}");
        match notes.as_slice() {
            [Err(reason)] => assert!(reason.contains(why), "{body}: {reason}"),
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn explicit_levels_and_inner_loop_directives_are_obeyed() {
    // `gang vector` on the construct: the inner loop stays in its lane.
    let (shape, notes) = mapped(&with_arrays(
        "parallel loop gang vector for r in 0..n { let s = 0.0f32; for i in 0..m { s += a[r, i]; } y[r] = s; }",
    ));
    assert_eq!(shape, Shape::Flat);
    assert!(matches!(notes.as_slice(), [Err(r)] if r.contains("sets the levels")));
    // `loop seq` keeps a loop sequential; the construct is a gang loop of its own.
    let (shape, notes) = mapped(&with_arrays(
        "parallel loop for r in 0..n { let s = 0.0f32; loop seq reduction(+: s) for i in 0..m { s += a[r, i]; } y[r] = s; }",
    ));
    assert_eq!(shape, Shape::Flat);
    assert!(notes.is_empty());
    // An independent perfect nest collapses instead.
    let (shape, notes) = mapped(&with_arrays(
        "parallel loop for r in 0..n { for i in 0..m { b[r, i] = a[r, i] * 2.0; } }",
    ));
    assert_eq!(shape, Shape::Flat);
    assert!(notes.is_empty());
    assert_eq!(
        Source::new(&with_arrays(
            "parallel loop for r in 0..n { for i in 0..m { b[r, i] = a[r, i] * 2.0; } }"
        ))
        .kernel(0)
        .levels
        .len(),
        2
    );
}
