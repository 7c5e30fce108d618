//! Parallelism on the device: reductions (every operator and type, collapse,
//! determinism), gang/vector regions (`parallel { .. }`, `parallel loop gang`
//! with `loop vector reduction`), private clauses, and atomics (native and
//! compare-and-swap), each compared with a reference computed here.
//!
//! Float tolerance: a device `+` reduction folds in a different order than
//! a sequential loop; the tests accept a relative error of `1e-5` (f32) or
//! `1e-12` (f64) against a sequential f64 sum. Integer, `max`/`min`, bitwise
//! and logical results are bit-exact.

mod common;

use common::*;
use compiler::{Kernel, Shape, Spec};
use lang::ast::ReductionOp as O;
use lang::value::{combine, identity};
use lang::{Scalar, Value};
use std::collections::HashMap;

fn arr_of(vals: &[Value]) -> Arr {
    Arr::whole(bytes_of(vals), &[vals.len() as u64])
}

fn launch(
    dev: &vk_runtime::Device,
    src: &Source,
    k: &Kernel,
    spec: &Spec,
    params: &[(&str, Value)],
    arrays: &HashMap<&str, Arr>,
) -> Ran {
    run_full(dev, k, spec, params, arrays, src.bounds(k), None)
}

fn array_out(k: &Kernel, ran: &Ran, name: &str, t: Scalar, n: usize) -> Vec<Value> {
    let i = k.arrays.iter().position(|(_, a)| a.name == name).unwrap();
    values_of(t, &ran.arrays[i], n)
}

fn body_for(op: O) -> &'static str {
    match op {
        O::Add => "s = s + a[i];",
        O::Mul => "s = s * a[i];",
        O::Max => "s = max(s, a[i]);",
        O::Min => "s = min(s, a[i]);",
        O::BitAnd => "s = s & a[i];",
        O::BitOr => "s = s | a[i];",
        O::BitXor => "s = s ^ a[i];",
        O::And => "s = s && a[i];",
        O::Or => "s = s || a[i];",
    }
}

fn values_for(op: O, t: Scalar, n: usize, rng: &mut Rng) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let r = rng.next_u64();
            let v = match (op, t) {
                (O::And, _) => Value::Bool(!r.is_multiple_of(50)),
                (O::Or, _) => Value::Bool(r.is_multiple_of(50)),
                (O::Mul, Scalar::F32 | Scalar::F64) => {
                    Value::F64([1.0, 2.0, 0.5, 1.0, -1.0][(r % 5) as usize])
                }
                (O::Mul, _) => Value::I64([1, 3, 1, -1, 5, 1, 1][(r % 7) as usize]),
                (_, Scalar::F32 | Scalar::F64) => {
                    if matches!(op, O::Max | O::Min) && i == n / 3 {
                        Value::F64(f64::NAN) // a NaN loses, as on the host
                    } else {
                        Value::F64((r >> 11) as f64 / (1u64 << 53) as f64 * 100.0 - 50.0)
                    }
                }
                _ => Value::I64(r as i64),
            };
            v.cast(t)
        })
        .collect()
}

/// Every operator on every type it applies to: a flat `parallel loop`
/// over several workgroups, partials folded with `reduce_partials`.
#[test]
fn reduction_every_operator_and_type() {
    use Scalar::*;
    let cases: Vec<(O, &str, Vec<Scalar>)> = vec![
        (O::Add, "+", vec![I32, U32, I64, U8, F32, F64]),
        (O::Mul, "*", vec![I32, U32, I64, U8, F32, F64]),
        (O::Max, "max", vec![I32, U32, I64, U8, F32, F64]),
        (O::Min, "min", vec![I32, U32, I64, U8, F32, F64]),
        (O::BitAnd, "&", vec![I32, U32, I64, U8]),
        (O::BitOr, "|", vec![I32, U32, I64, U8]),
        (O::BitXor, "^", vec![I32, U32, I64, U8]),
        (O::And, "&&", vec![Bool]),
        (O::Or, "||", vec![Bool]),
    ];
    let n = 1000usize;
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut rng = Rng(11);
        for (op, sym, types) in &cases {
            for &t in types {
                let src = Source::new(&format!(
                    "let a = zeros({t}, {n});
                     let s: {t} = {init};
                     parallel loop vector_length(64) reduction({sym}: s) for i in 0..{n} {{ {body} }}",
                    init = if t == Bool { "false" } else { "0" },
                    body = body_for(*op),
                ));
                let k = src.kernel(0);
                assert_eq!(k.reductions.len(), 1);
                let vals = values_for(*op, t, n, &mut rng);
                let mut arrays = HashMap::new();
                arrays.insert("a", arr_of(&vals));
                let ran = launch(dev, &src, &k, &spec, &[], &arrays);
                assert_eq!(ran.groups[0], (n as u32).div_ceil(64));
                let got = ran.reduced(&k, 0);
                let want = vals
                    .iter()
                    .fold(identity(*op, t), |acc, &v| combine(*op, acc, v));
                if t.is_float() && matches!(op, O::Add) {
                    let exact: f64 = vals.iter().map(|v| v.as_f64().unwrap()).sum();
                    let (g, tol) = (got.as_f64().unwrap(), if t == F32 { 1e-5 } else { 1e-12 });
                    assert!(
                        (g - exact).abs()
                            <= tol * vals.iter().map(|v| v.as_f64().unwrap().abs()).sum::<f64>(),
                        "{sym} on {t}: {g} vs {exact}"
                    );
                } else {
                    assert_eq!(got, want, "reduction({sym}) on {t}");
                }
            }
        }
    });
}

/// `reduce_partials`: group order, identity for no groups, widened bools.
#[test]
fn reduce_partials_folds_in_group_order() {
    let f: Vec<u8> = [1.0f32, f32::NAN, 3.0, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        compiler::reduce_partials(O::Max, Scalar::F32, &f),
        Value::F32(3.0)
    );
    assert_eq!(
        compiler::reduce_partials(O::Min, Scalar::F32, &f),
        Value::F32(-2.0)
    );
    assert_eq!(
        compiler::reduce_partials(O::Add, Scalar::F32, &[]),
        Value::F32(0.0)
    );
    assert_eq!(
        compiler::reduce_partials(O::Max, Scalar::F64, &[]),
        Value::F64(f64::NEG_INFINITY)
    );
    let b: Vec<u8> = [1u32, 1, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(
        compiler::reduce_partials(O::And, Scalar::Bool, &b),
        Value::Bool(false)
    );
    assert_eq!(
        compiler::reduce_partials(O::Or, Scalar::Bool, &b),
        Value::Bool(true)
    );
    let u: Vec<u8> = [200u32, 100].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(
        compiler::reduce_partials(O::Add, Scalar::U8, &u),
        Value::U8(44)
    );
    let i: Vec<u8> = [i64::MAX, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(
        compiler::reduce_partials(O::Add, Scalar::I64, &i),
        Value::I64(i64::MIN)
    );
}

const SUM: &str = "
const N = 1000000;
let a = zeros(f32, N);
let s = 0.0f32;
parallel loop reduction(+: s) for i in 0..N {
    s += a[i];
}
";

/// The same 10^6-element f32 sum, 20 times: identical bits every run.
#[test]
fn determinism_f32_sum_of_a_million_is_bit_identical_over_20_runs() {
    let src = Source::new(SUM);
    let k = src.kernel(0);
    let n = 1_000_000usize;
    let mut rng = Rng(5);
    let vals: Vec<Value> = (0..n).map(|_| Value::F32(rng.unit() as f32)).collect();
    let exact: f64 = vals.iter().map(|v| v.as_f64().unwrap()).sum();
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&vals));
        let mut first = None;
        for run in 0..20 {
            let ran = launch(dev, &src, &k, &spec, &[], &arrays);
            let Value::F32(got) = ran.reduced(&k, 0) else {
                panic!()
            };
            match first {
                None => {
                    assert!(
                        ((got as f64 - exact) / exact).abs() < 1e-5,
                        "{got} vs {exact}"
                    );
                    first = Some(got.to_bits());
                }
                Some(b) => assert_eq!(got.to_bits(), b, "run {run} differs"),
            }
        }
    });
}

/// The Jacobi step of `jacobi.accl`: collapse(2) with `reduction(max: err)` on f64.
#[test]
fn jacobi_collapse2_max_reduction() {
    let (n, m) = (40usize, 33usize);
    let src = Source::new(&format!(
        "
const n = {n};
const m = {m};
let A = zeros(f64, n, m);
let Anew = zeros(f64, n, m);
let err = 0.0;
parallel loop collapse(2) reduction(max: err)
for j in 1..n - 1 {{
    for i in 1..m - 1 {{
        Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i]);
        err = max(err, abs(Anew[j, i] - A[j, i]));
    }}
}}
"
    ));
    let k = src.kernel(0);
    let mut rng = Rng(9);
    let a: Vec<f64> = (0..n * m).map(|_| rng.unit()).collect();
    let mut want_new = vec![0.0; n * m];
    let mut want_err = 0.0f64;
    for j in 1..n - 1 {
        for i in 1..m - 1 {
            let v = 0.25
                * (a[j * m + i + 1] + a[j * m + i - 1] + a[(j - 1) * m + i] + a[(j + 1) * m + i]);
            want_new[j * m + i] = v;
            want_err = want_err.max((v - a[j * m + i]).abs());
        }
    }
    with_device(|dev| {
        let spec = Spec {
            workgroup_size: 64,
            ..spec_for(dev)
        };
        let mut arrays = HashMap::new();
        let dims = [n as u64, m as u64];
        arrays.insert(
            "A",
            Arr::whole(a.iter().flat_map(|v| v.to_le_bytes()).collect(), &dims),
        );
        arrays.insert("Anew", Arr::whole(vec![0; n * m * 8], &dims));
        for spec in [
            spec,
            Spec {
                index_width: compiler::IndexWidth::U64,
                spirv_version: (1, 3),
                ..spec
            },
        ] {
            let ran = launch(dev, &src, &k, &spec, &[], &arrays);
            assert!(ran.groups[0] > 1);
            assert_eq!(ran.reduced(&k, 0), Value::F64(want_err));
        }
        let ran = launch(dev, &src, &k, &spec, &[], &arrays);
        let ai = k.arrays.iter().position(|(_, a)| a.name == "Anew").unwrap();
        assert_eq!(f64s(&ran.arrays[ai], n * m), want_new);
    });
}

/// Bindings: arrays, then partials, then the argument buffer.
#[test]
fn reduction_with_the_argument_block_in_a_buffer() {
    let src = Source::new(
        "let a = zeros(i64, 300); let b = zeros(i32, 300); let s: i64 = 0; let t = 0;
         parallel loop vector_length(32) reduction(+: s) reduction(max: t) for i in 0..300 {
             s += a[i]; t = max(t, b[i]);
         }",
    );
    let k = src.kernel(0);
    with_device(|dev| {
        let spec = Spec {
            max_push_constants: 8,
            ..spec_for(dev)
        };
        let a: Vec<Value> = (0..300).map(|i| Value::I64(i * 1_000_000_007)).collect();
        let b: Vec<Value> = (0..300).map(|i| Value::I32((i * 37) % 101 - 50)).collect();
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&a));
        arrays.insert("b", arr_of(&b));
        let ran = launch(dev, &src, &k, &spec, &[], &arrays);
        assert_eq!(
            ran.layout.location,
            compiler::ArgLocation::Buffer { binding: 4 }
        );
        assert_eq!(ran.layout.num_bindings(&k), 5);
        assert_eq!(
            ran.reduced(&k, 0),
            Value::I64((0..300).map(|i| i * 1_000_000_007).sum())
        );
        assert_eq!(ran.reduced(&k, 1), Value::I32(50));
    });
}

/// A `parallel loop` with no iterations: every partial is the identity.
#[test]
fn reduction_over_nothing_is_the_identity() {
    let src = Source::new(
        "let a = zeros(f32, 10); let s = 1.0f32; let lo = 5; let hi = 5;
         parallel loop reduction(*: s) for i in lo..hi { s *= a[i]; }",
    );
    let k = src.kernel(0);
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&[Value::F32(3.0); 10]));
        let params = [("lo", Value::I32(5)), ("hi", Value::I32(5))];
        let ran = run_full(dev, &k, &spec, &params, &arrays, vec![(5, 5)], None);
        assert_eq!(ran.groups[0], 0);
        assert_eq!(ran.reduced(&k, 0), Value::F32(1.0));
    });
}

/// CSR SpMV (`spmv.accl`): one workgroup per row, `loop vector reduction`.
#[test]
fn spmv_gang_per_row_with_vector_reduction() {
    let rows = 1000usize;
    let src = Source::new(&format!(
        "
const n = {rows};
let offsets = zeros(i32, n + 1);
let cols = zeros(i32, 10);
let vals = zeros(f64, 10);
let x = zeros(f64, n);
let y = zeros(f64, n);
parallel loop gang vector_length(32) for r in 0..n {{
    let sum = 0.0;
    loop vector reduction(+: sum) for k in offsets[r]..offsets[r + 1] {{
        sum += vals[k] * x[cols[k]];
    }}
    y[r] = sum;
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.shape, Shape::Gang);
    assert!(k.reductions.is_empty());
    let mut rng = Rng(21);
    let mut offsets = vec![0i32];
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for r in 0..rows {
        // Empty rows, short rows and rows longer than the vector length.
        let len = match r % 5 {
            0 => 0,
            1 => 1,
            2 => 7,
            3 => 33,
            _ => 100,
        };
        for _ in 0..len {
            cols.push((rng.next_u64() % rows as u64) as i32);
            vals.push((rng.next_u64() % 17) as f64 - 8.0);
        }
        offsets.push(cols.len() as i32);
    }
    let x: Vec<f64> = (0..rows).map(|i| (i % 13) as f64).collect();
    let want: Vec<f64> = (0..rows)
        .map(|r| {
            (offsets[r]..offsets[r + 1])
                .map(|k| vals[k as usize] * x[cols[k as usize] as usize])
                .sum()
        })
        .collect();
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        let b = |v: Vec<Value>| arr_of(&v);
        arrays.insert(
            "offsets",
            b(offsets.iter().map(|&v| Value::I32(v)).collect()),
        );
        arrays.insert("cols", b(cols.iter().map(|&v| Value::I32(v)).collect()));
        arrays.insert("vals", b(vals.iter().map(|&v| Value::F64(v)).collect()));
        arrays.insert("x", b(x.iter().map(|&v| Value::F64(v)).collect()));
        arrays.insert("y", b(vec![Value::F64(-1.0); rows]));
        let ran = launch(dev, &src, &k, &spec, &[], &arrays);
        assert_eq!(ran.groups[0], rows as u32);
        // Integer-valued products: exact in any order.
        let got = array_out(&k, &ran, "y", Scalar::F64, rows);
        let want: Vec<Value> = want.into_iter().map(Value::F64).collect();
        assert_eq!(got, want);
        // More rows than workgroups: the gang loop strides.
        let ran = run_full(dev, &k, &spec, &[], &arrays, src.bounds(&k), Some(7));
        assert_eq!(ran.groups[0], 7);
        assert_eq!(array_out(&k, &ran, "y", Scalar::F64, rows), want);
        // 64-bit indexing and SPIR-V 1.3 (an interface of inputs only).
        let wide = Spec {
            index_width: compiler::IndexWidth::U64,
            spirv_version: (1, 3),
            ..spec
        };
        let ran = launch(dev, &src, &k, &wide, &[], &arrays);
        assert_eq!(array_out(&k, &ran, "y", Scalar::F64, rows), want);
    });
}

/// The normalisation region of `gram_schmidt.accl`: a single-gang region,
/// a `loop vector reduction` into a gang variable, a gang-redundant scalar,
/// then a second `loop vector` using it.
#[test]
fn gram_schmidt_region_normalises_a_row() {
    let (rows, cols) = (200usize, 5usize);
    let src = Source::new(&format!(
        "
const rows = {rows};
const cols = {cols};
let Qt = zeros(f32, cols, rows);
let k = 2;
parallel vector_length(128) {{
    let tmp = 0.0;
    loop vector reduction(+: tmp) for i in 0..rows {{
        tmp += Qt[k, i] as f64 * Qt[k, i] as f64;
    }}
    let norm = sqrt(tmp) as f32;
    loop vector for i in 0..rows {{
        Qt[k, i] = Qt[k, i] / norm;
    }}
}}
"
    ));
    let kern = src.kernel(0);
    assert_eq!(kern.shape, Shape::Region);
    let mut rng = Rng(4);
    let q: Vec<f32> = (0..rows * cols).map(|_| rng.unit() as f32).collect();
    let tmp: f64 = (0..rows).map(|i| (q[2 * rows + i] as f64).powi(2)).sum();
    let norm = tmp.sqrt() as f32;
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        arrays.insert(
            "Qt",
            Arr::whole(
                q.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[cols as u64, rows as u64],
            ),
        );
        let ran = run_full(
            dev,
            &kern,
            &spec,
            &[("k", Value::I32(2))],
            &arrays,
            vec![],
            None,
        );
        assert_eq!(ran.groups[0], 1);
        let got = f32s(&ran.arrays[0], rows * cols);
        for r in 0..cols {
            for i in 0..rows {
                let j = r * rows + i;
                if r == 2 {
                    let want = q[j] / norm;
                    assert!(
                        (got[j] - want).abs() <= 1e-6 * want.abs(),
                        "{i}: {} vs {want}",
                        got[j]
                    );
                } else {
                    assert_eq!(got[j], q[j]);
                }
            }
        }
    });
}

/// `num_gangs(4)`: a region reduction counts gangs, `loop gang` spreads over
/// every gang's invocations, gang-redundant stores are done once per gang,
/// and private/firstprivate variables start fresh in each gang.
#[test]
fn region_num_gangs_loop_gang_and_privates() {
    let n = 1000usize;
    let src = Source::new(&format!(
        "
const n = {n};
let a = zeros(i32, n);
let g = zeros(i32, 8);
let c = 0;
let p = 0;
let f = 10;
parallel num_gangs(4) vector_length(16) reduction(+: c) private(p) firstprivate(f) {{
    c += 1;
    p += 1;
    f += 1;
    g[c] = p + f;
    loop gang vector for i in 0..n {{
        a[i] = 2 * i;
    }}
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.shape, Shape::Region);
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&vec![Value::I32(-1); n]));
        arrays.insert("g", arr_of(&[Value::I32(0); 8]));
        {
            let ran = run_full(
                dev,
                &k,
                &spec,
                &[("f", Value::I32(10))],
                &arrays,
                vec![],
                Some(4),
            );
            assert_eq!(ran.groups[0], 4);
            assert_eq!(ran.reduced(&k, 0), Value::I32(4));
            let a = array_out(&k, &ran, "a", Scalar::I32, n);
            assert!(a
                .iter()
                .enumerate()
                .all(|(i, v)| *v == Value::I32(2 * i as i32)));
            let g = array_out(&k, &ran, "g", Scalar::I32, 8);
            assert_eq!(g[1], Value::I32(12));
        }
    });
}

/// `ArgLayout::encode`'s dispatch size for each kernel shape.
#[test]
fn encode_groups_by_shape() {
    let src = Source::new(
        "let a = zeros(f32, 10);
         parallel num_gangs(10) { loop vector for i in 0..10 { a[i] = 1.0; } }
         parallel loop gang for r in 0..1000 { loop vector for k in 0..4 { a[k] = 1.0; } }
         parallel loop seq for i in 0..1000 { a[0] = 1.0; }
         parallel loop for i in 0..1000 { a[0] = 1.0; }",
    );
    let shapes = [Shape::Region, Shape::Gang, Shape::Seq, Shape::Flat];
    let cases: [(Option<u64>, u32, u32, u64); 4] = [
        (Some(10), 3, 3, 10),
        (None, 65535, 1000, 1000),
        (None, 65535, 1, 1000),
        (None, 65535, 16, 1000),
    ];
    for (n, (shape, (gangs, max, groups, total))) in shapes.iter().zip(cases).enumerate() {
        let k = src.kernel(n);
        assert_eq!(k.shape, *shape);
        let layout = compiler::ArgLayout::new(&k, compiler::IndexWidth::U32, 128);
        let args = compiler::LaunchArgs {
            params: vec![],
            arrays: vec![compiler::ArrayArgs {
                base: 0,
                dims: vec![10].into(),
                ..Default::default()
            }],
            levels: src.bounds(&k),
            num_gangs: gangs,
            range: None,
        };
        let l = layout
            .encode(&k, &args, 64, max, compiler::PerInvocation::ONE)
            .unwrap();
        assert_eq!((l.groups[0], l.total), (groups, total), "{shape:?}");
    }
    // A region without num_gangs is one gang; num_gangs caps a gang loop.
    let k = src.kernel(0);
    let layout = compiler::ArgLayout::new(&k, compiler::IndexWidth::U32, 128);
    let mut args = compiler::LaunchArgs {
        params: vec![],
        arrays: vec![compiler::ArrayArgs {
            base: 0,
            dims: vec![10].into(),
            ..Default::default()
        }],
        levels: vec![],
        num_gangs: None,
        range: None,
    };
    assert_eq!(
        layout
            .encode(&k, &args, 64, 100, compiler::PerInvocation::ONE)
            .unwrap()
            .groups[0],
        1
    );
    args.num_gangs = Some(0);
    assert!(layout
        .encode(&k, &args, 64, 100, compiler::PerInvocation::ONE)
        .is_err());
}

/// `loop seq reduction` inside a flat `parallel loop`, and `private`.
#[test]
fn seq_loop_reduction_inside_a_parallel_loop() {
    let (n, m) = (50usize, 20usize);
    let src = Source::new(&format!(
        "
let A = zeros(i64, {n}, {m});
let out = zeros(i64, {n});
let t: i64 = 0;
parallel loop private(t) for j in 0..{n} {{
    t = 100;
    let s: i64 = 5;
    loop seq reduction(+: s) for i in 0..{m} {{
        s += A[j, i] * t;
    }}
    out[j] = s;
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.shape, Shape::Flat);
    let a: Vec<i64> = (0..n * m).map(|i| (i as i64 * 7919) % 1000 - 500).collect();
    with_device(|dev| {
        let spec = spec_for(dev);
        let mut arrays = HashMap::new();
        arrays.insert(
            "A",
            Arr::whole(
                a.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[n as u64, m as u64],
            ),
        );
        arrays.insert("out", arr_of(&vec![Value::I64(0); n]));
        let ran = launch(dev, &src, &k, &spec, &[], &arrays);
        let got = array_out(&k, &ran, "out", Scalar::I64, n);
        for j in 0..n {
            let want = 5 + (0..m).map(|i| a[j * m + i] * 100).sum::<i64>();
            assert_eq!(got[j], Value::I64(want));
        }
    });
}

/// The histogram of `histogram.accl` (`atomic h[a[i]] += 1`).
#[test]
fn histogram_atomic_add_i32() {
    let src = Source::new(
        "
const N = 1 << 16;
const HN = 100;
let a = zeros(i32, N);
let h = zeros(i32, HN);
parallel loop for i in 0..N {
    atomic h[a[i]] += 1;
}
",
    );
    let k = src.kernel(0);
    let n = 1 << 16;
    let a: Vec<Value> = (0..n).map(|i| Value::I32((i * 37) % 100)).collect();
    let mut want = vec![0i32; 100];
    for v in &a {
        if let Value::I32(x) = v {
            want[*x as usize] += 1;
        }
    }
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&a));
        arrays.insert("h", arr_of(&[Value::I32(0); 100]));
        let ran = launch(dev, &src, &k, &spec_for(dev), &[], &arrays);
        let got = array_out(&k, &ran, "h", Scalar::I32, 100);
        assert_eq!(got, want.iter().map(|&v| Value::I32(v)).collect::<Vec<_>>());
    });
}

fn atomic_fold(op: &str, old: Value, x: Value) -> Value {
    use lang::ast::BinOp as B;
    let b = |o| Value::binary(o, old, x).unwrap();
    match op {
        "+=" => b(B::Add),
        "-=" => b(B::Sub),
        "*=" => b(B::Mul),
        "&=" => b(B::BitAnd),
        "|=" => b(B::BitOr),
        "^=" => b(B::BitXor),
        "max=" => combine(O::Max, old, x),
        _ => combine(O::Min, old, x),
    }
}

/// Every update form on every atomic type, order-independent values, with
/// native float adds where the device has them and compare-and-swap
/// otherwise (forced too).
#[test]
fn atomic_update_forms_every_type() {
    use Scalar::*;
    let n = 2048usize;
    let bins = 8usize;
    with_device(|dev| {
        let native = spec_for(dev);
        let cas = Spec {
            features: compiler::Features {
                float32_atomic_add: false,
                float64_atomic_add: false,
                buffer_device_address: false,
                ..native.features
            },
            ..native
        };
        eprintln!("device atomics: {:?}", native.features);
        for t in [I32, U32, I64, F32, F64] {
            let ops: &[&str] = if t.is_int() {
                &["+=", "-=", "*=", "max=", "min=", "&=", "|=", "^="]
            } else {
                &["+=", "-=", "*=", "max=", "min="]
            };
            for op in ops {
                let src = Source::new(&format!(
                    "let v = zeros({t}, {n}); let h = zeros({t}, {bins});
                     parallel loop vector_length(64) for i in 0..{n} {{ atomic h[i % {bins}] {op} v[i]; }}"
                ));
                let k = src.kernel(0);
                let mut rng = Rng(3);
                let vals: Vec<Value> = (0..n)
                    .map(|_| {
                        let r = rng.next_u64();
                        match (*op, t.is_float()) {
                            ("*=", true) => Value::F64([1.0, 2.0, 0.5, -1.0][(r % 4) as usize]),
                            ("*=", false) => Value::I64([1, 3, -1, 1][(r % 4) as usize]),
                            (_, true) => Value::F64((r % 1000) as f64 - 500.0),
                            _ => Value::I64((r % 100000) as i64 - 50000),
                        }
                        .cast(t)
                    })
                    .collect();
                let init = Value::IntLit(if *op == "*=" { 1 } else { 7 }).cast(t);
                let mut want = vec![init; bins];
                for (i, &x) in vals.iter().enumerate() {
                    want[i % bins] = atomic_fold(op, want[i % bins], x);
                }
                for spec in [&native, &cas] {
                    let mut arrays = HashMap::new();
                    arrays.insert("v", arr_of(&vals));
                    arrays.insert("h", arr_of(&vec![init; bins]));
                    let ran = launch(dev, &src, &k, spec, &[], &arrays);
                    let got = array_out(&k, &ran, "h", t, bins);
                    assert_eq!(got, want, "atomic {op} on {t}");
                }
            }
        }
    });
}

/// The capture builtins return the old value: `atomic_add` hands out every
/// ticket once; `atomic_xchg`, `atomic_max`, `atomic_min` on floats (CAS).
#[test]
fn atomic_capture_builtins() {
    let n = 1000usize;
    with_device(|dev| {
        let spec = spec_for(dev);
        for t in [
            Scalar::I32,
            Scalar::U32,
            Scalar::I64,
            Scalar::F32,
            Scalar::F64,
        ] {
            let src = Source::new(&format!(
                "let c = zeros({t}, 4); let out = zeros({t}, {n}); let x = zeros({t}, {n});
                 parallel loop vector_length(32) for i in 0..{n} {{
                     out[i] = atomic_add(c[0], 1 as {t});
                     let e = atomic_xchg(c[1], x[i]);
                     let m = atomic_max(c[2], x[i]);
                     let l = atomic_min(c[3], x[i]);
                     if m > x[i] && l < x[i] {{ out[i] = out[i] + e - e; }}
                 }}"
            ));
            let k = src.kernel(0);
            let xs: Vec<Value> = (0..n)
                .map(|i| Value::I64(((i * 7919) % 1000) as i64 + 1).cast(t))
                .collect();
            let mut arrays = HashMap::new();
            arrays.insert("c", arr_of(&[Value::IntLit(0).cast(t); 4]));
            arrays.insert("out", arr_of(&vec![Value::IntLit(0).cast(t); n]));
            arrays.insert("x", arr_of(&xs));
            let ran = launch(dev, &src, &k, &spec, &[], &arrays);
            let c = array_out(&k, &ran, "c", t, 4);
            assert_eq!(c[0], Value::IntLit(n as i128).cast(t), "{t}");
            assert!(xs.contains(&c[1]), "{t}: xchg leaves one of the values");
            assert_eq!(c[2], Value::IntLit(1000).cast(t), "{t}: max");
            assert_eq!(c[3], Value::IntLit(0).cast(t), "{t}: min with 0 first");
            let mut tickets: Vec<i128> = array_out(&k, &ran, "out", t, n)
                .iter()
                .map(|v| v.as_i128().unwrap_or_else(|| v.as_f64().unwrap() as i128))
                .collect();
            tickets.sort();
            assert_eq!(tickets, (0..n as i128).collect::<Vec<_>>(), "{t}: tickets");
        }
    });
}

/// Every kernel construct of the shared examples lowers, compiles and passes
/// `spirv-val` (the runtime runs them; these are the compiler's half).
#[test]
fn shared_examples_compile() {
    fn walk<'a>(b: &'a lang::hir::Block, out: &mut Vec<&'a lang::hir::Construct>) {
        use lang::hir::StmtKind as K;
        for s in b {
            match &s.kind {
                K::Construct(c) => {
                    if matches!(
                        c.kind,
                        lang::hir::DirectiveKind::ParallelLoop | lang::hir::DirectiveKind::Parallel
                    ) {
                        out.push(c);
                    } else if let lang::hir::ConstructBody::Block(b) = &c.body {
                        walk(b, out);
                    }
                }
                K::If { then, els, .. } => {
                    walk(then, out);
                    walk(els, out);
                }
                K::While { body, .. } | K::Block(body) => walk(body, out),
                K::For(f) => walk(&f.body, out),
                _ => {}
            }
        }
    }
    // `shared/` sits beside the checkout (`../shared`), or beside the
    // directory of worktrees (`../../shared`).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = [
        root.join("../shared/examples"),
        root.join("../../shared/examples"),
    ]
    .into_iter()
    .find(|d| d.join("jacobi.accl").is_file())
    .unwrap_or_else(|| panic!("no shared/examples beside {}", root.display()));
    let mut seen = 0;
    for name in ["gram_schmidt", "spmv", "histogram", "jacobi"] {
        let path = dir.join(format!("{name}.accl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let before = seen;
        let src = Source::new(&text);
        let p = &src.program;
        let bodies = std::iter::once(&p.main).chain(p.functions.iter().map(|(_, f)| &f.body));
        for body in bodies {
            let mut cs = Vec::new();
            walk(&body.block, &mut cs);
            for c in cs {
                let k = compiler::lower(p, body, c, &src.builtins)
                    .unwrap_or_else(|d| panic!("{name}: {d:#?}"));
                let words = compiler::compile(&k, &Spec::default())
                    .unwrap_or_else(|d| panic!("{name}: {d:#?}"));
                spirv_val(&words);
                seen += 1;
            }
        }
        assert!(seen > before, "{name}: no kernel compiled");
    }
    eprintln!("{seen} kernels compiled");
}

/// Vector-single effects: a gang-redundant store is done by lane 0 and seen
/// by every lane after it; a value only lane 0 could compute is refused.
#[test]
fn gang_redundant_store_is_seen_by_every_lane() {
    let src = Source::new(
        "
let a = zeros(i32, 4);
let b = zeros(i32, 100);
parallel vector_length(32) {
    a[0] = a[0] + 5;
    let x = a[0];
    loop vector for i in 0..100 {
        b[i] = x + i;
    }
}
parallel {
    let old = atomic_add(a[1], 1);
    loop vector for i in 0..100 {
        b[i] = old;
    }
}
",
    );
    let k = src.kernel(0);
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert("a", arr_of(&[Value::I32(1); 4]));
        arrays.insert("b", arr_of(&[Value::I32(0); 100]));
        let ran = run_full(dev, &k, &spec_for(dev), &[], &arrays, vec![], None);
        let a = array_out(&k, &ran, "a", Scalar::I32, 4);
        assert_eq!(a[0], Value::I32(6), "stored once, not once per lane");
        let b = array_out(&k, &ran, "b", Scalar::I32, 100);
        assert!(b
            .iter()
            .enumerate()
            .all(|(i, v)| *v == Value::I32(6 + i as i32)));
    });
    let d = src.lower(1).unwrap_err();
    assert_eq!(d.code, "accl::compile::unsupported");
    assert!(d.message.contains("atomic capture"), "{}", d.message);
}
