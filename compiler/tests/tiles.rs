//! `tile(a, b)`: every iteration of a two-level nest runs exactly once,
//! whatever the sizes (partial tiles at both edges) and however few
//! workgroups the dispatch has (grid-stride over tiles), with a reduction.

mod common;

use common::*;
use compiler::Spec;
use lang::Value;
use std::collections::HashMap;

#[test]
fn every_iteration_once_on_any_size() {
    for (n, m, a, b) in [
        (37, 45, 8, 4),
        (5, 3, 16, 16),
        (64, 64, 32, 8),
        (100, 1, 4, 4),
    ] {
        let src = Source::new(&format!(
            "let h = zeros(i32, {n}, {m}); let s: i64 = 0;
             parallel loop tile({a}, {b}) reduction(+: s) for i in 0..{n} {{
                 for j in 0..{m} {{ h[i, j] = h[i, j] + i * 1000 + j + 1; s += (i * {m} + j) as i64; }}
             }}"
        ));
        let k = src.kernel(0);
        assert_eq!(k.tile, Some((a, b)));
        with_device(|dev| {
            let spec = Spec { ..spec_for(dev) };
            for cap in [None, Some(1), Some(3)] {
                let mut arrays = HashMap::new();
                arrays.insert("h", Arr::whole(vec![0; n * m * 4], &[n as u64, m as u64]));
                let ran = run_capped(dev, &k, &spec, &[], &arrays, src.bounds(&k), None, cap);
                let hi = k.arrays.iter().position(|(_, x)| x.name == "h").unwrap();
                let got = values_of(lang::Scalar::I32, &ran.arrays[hi], n * m);
                for i in 0..n {
                    for j in 0..m {
                        assert_eq!(
                            got[i * m + j],
                            Value::I32((i * 1000 + j + 1) as i32),
                            "{n}x{m} tile({a}, {b}) cap {cap:?} at [{i}, {j}]"
                        );
                    }
                }
                let want: i64 = (0..(n * m) as i64).sum();
                assert_eq!(ran.reduced(&k, 0), Value::I64(want));
            }
        });
    }
}
