//! Coarsened flat loops (several iterations per trip, stores after every
//! copy's loads) against references computed here, on sizes that end in
//! a partial trip, with 32- and 64-bit indexing and capped dispatches; and
//! the bodies that must not be coarsened.

mod common;

use common::*;
use compiler::{IndexWidth, Spec};
use lang::{Scalar, Value};
use std::collections::HashMap;

fn coarse(dev: &vk_runtime::Device) -> Spec {
    Spec {
        coarsen: 4,
        coarsen_reduction: 3,
        workgroup_size: 64,
        ..spec_for(dev)
    }
}

fn f32_arr(v: &[f32]) -> Arr {
    Arr::whole(
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        &[v.len() as u64],
    )
}

#[test]
fn saxpy_on_every_size_and_index_width() {
    for n in [1usize, 63, 255, 256, 257, 1000, 4099] {
        let src = Source::new(&format!(
            "let x = zeros(f32, {n}); let y = zeros(f32, {n}); let a = 2.5f32;
             parallel loop for i in 0..{n} {{ y[i] = a * x[i] + y[i]; }}"
        ));
        let k = src.kernel(0);
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
        with_device(|dev| {
            for width in [IndexWidth::U32, IndexWidth::U64] {
                let spec = Spec {
                    index_width: width,
                    ..coarse(dev)
                };
                assert_eq!(compiler::spirv::coarsening(&k, &spec), 4);
                let mut arrays = HashMap::new();
                arrays.insert("x", f32_arr(&x));
                arrays.insert("y", f32_arr(&y));
                for cap in [None, Some(1), Some(3)] {
                    let ran = run_capped(
                        dev,
                        &k,
                        &spec,
                        &[("a", Value::F32(2.5))],
                        &arrays,
                        src.bounds(&k),
                        None,
                        cap,
                    );
                    // A trip covers 4 x 64 lanes of each group.
                    let groups = n.div_ceil(256).min(cap.unwrap_or(u32::MAX) as usize);
                    assert_eq!(ran.groups[0] as usize, groups, "n = {n}");
                    let yi = k.arrays.iter().position(|(_, a)| a.name == "y").unwrap();
                    assert_eq!(f32s(&ran.arrays[yi], n), want, "n = {n}, cap {cap:?}");
                }
            }
        });
    }
}

#[test]
fn reductions_and_offset_bounds_coarsen() {
    // A sum and a max over `lo..hi` (not from 0), with a copy into a
    // second array; integers, so the fold order cannot change the result.
    let src = Source::new(
        "let a = zeros(i64, 3000); let b = zeros(i64, 3000); let s: i64 = 0; let m: i64 = 0;
         parallel loop reduction(+: s) reduction(max: m) for i in 17..2990 {
             let v = a[i] * 3 - 1; b[i] = v; s += v; m = max(m, a[i]);
         }",
    );
    let k = src.kernel(0);
    let a: Vec<Value> = (0..3000)
        .map(|i| Value::I64((i * 7919 % 1009) - 500))
        .collect();
    with_device(|dev| {
        // A kernel with a reduction takes its own factor.
        let spec = coarse(dev);
        assert_eq!(compiler::spirv::coarsening(&k, &spec), 3);
        let mut arrays = HashMap::new();
        arrays.insert("a", Arr::whole(bytes_of(&a), &[3000]));
        arrays.insert("b", Arr::whole(vec![0; 3000 * 8], &[3000]));
        let ran = run(dev, &src, &k, &spec, &[], &arrays);
        let av = |i: usize| match a[i] {
            Value::I64(v) => v,
            _ => unreachable!(),
        };
        let want_s: i64 = (17..2990).map(|i| av(i) * 3 - 1).sum();
        let want_m = (17..2990).map(av).max().unwrap();
        assert_eq!(ran.reduced(&k, 0), Value::I64(want_s));
        assert_eq!(ran.reduced(&k, 1), Value::I64(want_m));
        let bi = k.arrays.iter().position(|(_, a)| a.name == "b").unwrap();
        let b = values_of(Scalar::I64, &ran.arrays[bi], 3000);
        for (i, v) in b.iter().enumerate() {
            let want = if (17..2990).contains(&i) {
                av(i) * 3 - 1
            } else {
                0
            };
            assert_eq!(*v, Value::I64(want), "b[{i}]");
        }
    });
}

#[test]
fn bodies_that_read_what_they_store_are_not_coarsened() {
    let cases = [
        // A load of an array after a store to it.
        "let y = zeros(f32, 100); parallel loop for i in 0..100 { y[i] = 1.0; y[i] = y[i] + 1.0; }",
        // An update of an array another statement reads after it (the
        // drift of a leapfrog step: `x` moves by the new `v`).
        "let x = zeros(f64, 100); let v = zeros(f64, 100); let a = zeros(f64, 100);
         parallel loop for i in 0..100 { v[i] += 0.5 * a[i]; x[i] += 0.01 * v[i]; }",
        // Control flow.
        "let y = zeros(f32, 100); parallel loop for i in 0..100 { if i > 3 { y[i] = 1.0; } }",
        // An atomic.
        "let h = zeros(i32, 4); parallel loop for i in 0..100 { atomic h[i % 4] += 1; }",
        // Two loop levels.
        "let y = zeros(f32, 10, 10); parallel loop collapse(2) for i in 0..10 { for j in 0..10 { y[i, j] = 1.0; } }",
    ];
    with_device(|dev| {
        let spec = coarse(dev);
        for c in cases {
            let src = Source::new(c);
            assert_eq!(compiler::spirv::coarsening(&src.kernel(0), &spec), 1, "{c}");
        }
    });
    // And a body that stores one array and reads others is.
    let src = Source::new(
        "let x = zeros(f32, 100); let y = zeros(f32, 100);
         parallel loop for i in 0..100 { let t = x[i] * 2.0; y[i] = t; y[i] = t + x[i]; }",
    );
    with_device(|dev| assert_eq!(compiler::spirv::coarsening(&src.kernel(0), &coarse(dev)), 4));
}
