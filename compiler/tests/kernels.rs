//! Kernels from accl source, run on the Vulkan device and compared with a
//! reference computed here: saxpy, the Jacobi stencil (collapse(2), f64),
//! mandelbrot (a device function returning u8), control flow, a grid-stride
//! launch, array sections, and the diagnostics for what is not supported.

mod common;

use common::*;
use compiler::{ArgLocation, IndexWidth, Spec};
use lang::Value;
use std::collections::HashMap;

const SAXPY: &str = "
const N = 10007;
let a = 2.5f32;
let x = zeros(f32, N);
let y = zeros(f32, N);
parallel loop for i in 0..N {
    y[i] = a * x[i] + y[i];
}
";

fn saxpy_run(spec: &Spec) -> ArgLocation {
    let src = Source::new(SAXPY);
    let k = src.kernel(0);
    let n = 10007usize;
    let mut rng = Rng(7);
    let x: Vec<f32> = (0..n).map(|_| (rng.unit() * 1000.0) as f32 / 7.0).collect();
    let y: Vec<f32> = (0..n).map(|_| (rng.unit() * 1000.0) as f32 / 3.0).collect();
    let mut loc = ArgLocation::PushConstants;
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert(
            "x",
            Arr::whole(
                x.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[n as u64],
            ),
        );
        arrays.insert(
            "y",
            Arr::whole(
                y.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[n as u64],
            ),
        );
        let ran = run(dev, &src, &k, spec, &[("a", Value::F32(2.5))], &arrays);
        loc = ran.layout.location;
        let yi = k.arrays.iter().position(|(_, p)| p.name == "y").unwrap();
        let got = f32s(&ran.arrays[yi], n);
        for i in 0..n {
            let want = 2.5f32 * x[i] + y[i];
            assert_eq!(
                got[i].to_bits(),
                want.to_bits(),
                "y[{i}]: {} != {want}",
                got[i]
            );
        }
        // x is only read.
        assert_eq!(f32s(&ran.arrays[1 - yi], n), x);
    });
    loc
}

#[test]
fn saxpy_f32_matches_cpu() {
    assert_eq!(saxpy_run(&Spec::default()), ArgLocation::PushConstants);
}

#[test]
fn saxpy_with_arrays_reached_by_address() {
    // Both arrays through their device addresses, at both index widths
    // (32-bit element indices are widened before the byte offset).
    for index_width in [IndexWidth::U32, IndexWidth::U64] {
        let spec = Spec {
            by_address: !0,
            index_width,
            ..Spec::default()
        };
        saxpy_run(&spec);
        let k = Source::new(SAXPY).kernel(0);
        let text = compiler::disassemble(&compiler::compile(&k, &spec).unwrap());
        assert!(text.contains("OpMemoryModel PhysicalStorageBuffer64 GLSL450"));
        assert!(text.contains("OpConvertUToPtr"), "{text}");
        assert!(text.contains("Aligned 4"), "{text}");
        assert!(!text.contains("Binding"), "{text}");
    }
    // Only the arrays named: x bound, y by address.
    let k = Source::new(SAXPY).kernel(0);
    let yi = k.arrays.iter().position(|(_, p)| p.name == "y").unwrap();
    let spec = Spec {
        by_address: 1 << yi,
        ..Spec::default()
    };
    saxpy_run(&spec);
    let text = compiler::disassemble(&compiler::compile(&k, &spec).unwrap());
    let x = text
        .lines()
        .find_map(|l| l.strip_suffix(" \"x\"")?.strip_prefix("OpName "))
        .expect("x is declared");
    assert!(text.contains(&format!("OpDecorate {x} Binding")), "{text}");
    assert!(!text.contains("\"y\""), "y has no variable: {text}");
}

#[test]
fn saxpy_reading_x_through_a_texel_buffer() {
    // Only `x` qualifies (`y` is written), at either index width; 64-bit
    // indexing and bounds-check mode keep the storage buffer.
    let k = Source::new(SAXPY).kernel(0);
    let xi = k.arrays.iter().position(|(_, p)| p.name == "x").unwrap();
    assert_eq!(Spec::texel_candidates(&k), 1 << xi);
    let spec = Spec {
        texels: 1 << xi,
        ..Spec::default()
    };
    saxpy_run(&spec);
    let text = compiler::disassemble(&compiler::compile(&k, &spec).unwrap());
    assert!(text.contains("OpImageFetch"), "{text}");
    assert!(text.contains("Buffer 0 0 0 1 Unknown"), "{text}");
    assert!(text.contains("OpCapability SampledBuffer"), "{text}");
    let x = text
        .lines()
        .find_map(|l| l.strip_suffix(" \"x\"")?.strip_prefix("OpName "))
        .expect("x is declared");
    let decl = text
        .lines()
        .find(|l| l.starts_with(&format!("{x} = OpVariable")))
        .expect("x has a variable");
    assert!(decl.ends_with("UniformConstant"), "{decl}");
    for off in [
        Spec {
            index_width: IndexWidth::U64,
            ..spec
        },
        Spec {
            checks: true,
            ..spec
        },
    ] {
        let text = compiler::disassemble(&compiler::compile(&k, &off).unwrap());
        assert!(!text.contains("OpImageFetch"), "{text}");
    }
}

#[test]
fn saxpy_with_the_argument_block_in_a_buffer() {
    let spec = Spec {
        max_push_constants: 8,
        ..Spec::default()
    };
    assert_eq!(saxpy_run(&spec), ArgLocation::Buffer { binding: 2 });
}

#[test]
fn saxpy_with_64_bit_indexing_and_spirv_1_3() {
    let spec = Spec {
        index_width: IndexWidth::U64,
        spirv_version: (1, 3),
        workgroup_size: 64,
        ..Spec::default()
    };
    saxpy_run(&spec);
}

#[test]
fn saxpy_disassembly_snapshot() {
    let src = Source::new(SAXPY);
    let k = src.kernel(0);
    let words = compiler::compile(&k, &Spec::default()).unwrap();
    spirv_val(&words);
    insta::assert_snapshot!("saxpy_spirv", compiler::disassemble(&words));
}

#[test]
fn jacobi_collapse2_f64() {
    let (n, m) = (67usize, 45usize);
    let src = Source::new(&format!(
        "
const n = {n};
const m = {m};
let A = zeros(f64, n, m);
let Anew = zeros(f64, n, m);
parallel loop collapse(2)
for j in 1..n - 1 {{
    for i in 1..m - 1 {{
        Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i]);
    }}
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.levels.len(), 2);
    let mut rng = Rng(3);
    let a: Vec<f64> = (0..n * m).map(|_| rng.unit()).collect();
    let anew0: Vec<f64> = vec![-1.0; n * m];
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert(
            "A",
            Arr::whole(
                a.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[n as u64, m as u64],
            ),
        );
        arrays.insert(
            "Anew",
            Arr::whole(
                anew0.iter().flat_map(|v| v.to_le_bytes()).collect(),
                &[n as u64, m as u64],
            ),
        );
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        let ai = k.arrays.iter().position(|(_, p)| p.name == "Anew").unwrap();
        let got = f64s(&ran.arrays[ai], n * m);
        for j in 0..n {
            for i in 0..m {
                let want = if j == 0 || i == 0 || j == n - 1 || i == m - 1 {
                    -1.0
                } else {
                    0.25 * (a[j * m + i + 1]
                        + a[j * m + i - 1]
                        + a[(j - 1) * m + i]
                        + a[(j + 1) * m + i])
                };
                assert_eq!(got[j * m + i].to_bits(), want.to_bits(), "Anew[{j}, {i}]");
            }
        }
    });
}

fn mandelbrot_cpu(px: i32, py: i32, w: i32, h: i32, max: i32) -> u8 {
    let x0 = -2.0 + px as f64 * (3.0 / w as f64);
    let y0 = -1.5 + py as f64 * (3.0 / h as f64);
    let (mut x, mut y, mut i) = (0.0f64, 0.0f64, 0i32);
    while x * x + y * y < 4.0 && i < max {
        let xt = x * x - y * y + x0;
        y = 2.0 * x * y + y0;
        x = xt;
        i += 1;
    }
    (255 * i / max) as u8
}

#[test]
fn mandelbrot_device_function_u8_image_bit_exact() {
    let (w, h) = (192i32, 128i32);
    let src = Source::new(&format!(
        "
const W = {w};
const H = {h};
const MAX_ITERS = 255;

fn mandelbrot(px: i32, py: i32) -> u8 {{
    let x0 = -2.0 + px as f64 * (3.0 / W as f64);
    let y0 = -1.5 + py as f64 * (3.0 / H as f64);
    let x = 0.0;
    let y = 0.0;
    let i = 0;
    while x * x + y * y < 4.0 && i < MAX_ITERS {{
        let xt = x * x - y * y + x0;
        y = 2.0 * x * y + y0;
        x = xt;
        i += 1;
    }}
    return (255 * i / MAX_ITERS) as u8;
}}

let image = zeros(u8, H, W);
parallel loop copyout(image) for y in 0..H {{
    for x in 0..W {{
        image[y, x] = mandelbrot(x, y);
    }}
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.functions.len(), 1);
    assert!(k.features.storage_buffer_8bit && k.features.float64);
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert(
            "image",
            Arr::whole(vec![7u8; (w * h) as usize], &[h as u64, w as u64]),
        );
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        let img = &ran.arrays[0];
        let mut diffs = 0;
        for y in 0..h {
            for x in 0..w {
                let want = mandelbrot_cpu(x, y, w, h, 255);
                if img[(y * w + x) as usize] != want {
                    diffs += 1;
                }
            }
        }
        assert_eq!(diffs, 0, "pixels differing from the CPU");
        assert_eq!(img[(h / 2 * w + w / 3) as usize], 255);
    });
}

/// A collapsed level whose bounds are constants splits the flat index by
/// its constant trip count (the driver makes that shifts and multiplies);
/// a level with a bound known only at launch divides by the count passed
/// in (here through the `f64` reciprocal, as on llvmpipe).
#[test]
fn collapsed_levels_with_constant_bounds_split_by_a_constant() {
    const W: usize = 37;
    let src = Source::new(&format!(
        "
const W = {W};
let out = zeros(i32, W, W);
parallel loop collapse(2) for j in 2..W + 2 {{
    for i in 0..W {{ out[j - 2, i] = j * 100 + i; }}
}}
let w = W;
parallel loop collapse(2) for j in 0..w {{
    for i in 0..w {{ out[j, i] = j + i; }}
}}
"
    ));
    let spec = Spec {
        split_by_reciprocal: true,
        features: compiler::Features {
            float64: true,
            ..Spec::default().features
        },
        ..Spec::default()
    };
    let text = |n: usize| compiler::disassemble(&compiler::compile(&src.kernel(n), &spec).unwrap());
    let (fixed, runtime) = (text(0), text(1));
    assert!(src
        .kernel(0)
        .levels
        .iter()
        .all(|l| l.count == Some(W as u64)));
    assert!(src.kernel(1).levels.iter().all(|l| l.count.is_none()));
    assert!(
        !fixed.contains("OpConvertUToF") && fixed.contains("OpUDiv"),
        "{fixed}"
    );
    assert!(runtime.contains("OpConvertUToF"), "{runtime}");
    let k = src.kernel(0);
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert(
            "out",
            Arr::whole(vec![0u8; W * W * 4], &[W as u64, W as u64]),
        );
        let ran = run(
            dev,
            &src,
            &k,
            &Spec {
                split_by_reciprocal: true,
                ..spec_for(dev)
            },
            &[],
            &arrays,
        );
        for j in 0..W {
            for i in 0..W {
                let at = (j * W + i) * 4;
                let got = i32::from_le_bytes(ran.arrays[0][at..at + 4].try_into().unwrap());
                assert_eq!(got, ((j + 2) * 100 + i) as i32, "out[{j}, {i}]");
            }
        }
    });
}

/// `&&` and `||` whose right side cannot fault and is short are one
/// `OpLogicalAnd`/`OpLogicalOr` (a loop condition stays in one block); a
/// right side that loads an element keeps the selection that skips it, so
/// a guard such as `i + 1 < n && a[i + 1] > 0` never reads past the end.
#[test]
fn logical_operators_are_flat_only_where_the_right_side_cannot_fault() {
    let src = Source::new(
        "
const N = 1000;
let a = zeros(i32, N);
let out = zeros(i32, N);
parallel loop for i in 0..N {
    let k = 0;
    while k < 40 && (k * k < i || k == 3) { k += 1; }
    let next = 0;
    if i + 1 < N && a[i + 1] > 0 { next = 1; }
    out[i] = k * 10 + next;
}
",
    );
    let k = src.kernel(0);
    let spec = Spec {
        checks: true,
        ..Spec::default()
    };
    for spec in [Spec::default(), spec] {
        let words = compiler::compile(&k, &spec).unwrap();
        spirv_val(&words);
        let text = compiler::disassemble(&words);
        // The loop condition: `k < 40 && (k * k < i || k == 3)`, one flat
        // expression (the module has no other `OpLogicalOr`).
        let or = text
            .lines()
            .find(|l| l.contains("OpLogicalOr"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no OpLogicalOr: {text}"));
        assert!(
            text.lines()
                .any(|l| l.contains("OpLogicalAnd") && l.ends_with(&format!(" {or}"))),
            "the && of the loop condition is not flat: {text}"
        );
        assert_eq!(text.matches("OpLogicalOr").count(), 1, "{text}");
        assert_eq!(
            text.matches("OpPhi").count(),
            1,
            "the guarded load keeps its branch: {text}"
        );
    }
    with_device(|dev| {
        let mut arrays = HashMap::new();
        let a: Vec<i32> = (0..1000).map(|i| i % 3 - 1).collect();
        let bytes = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        arrays.insert("a", Arr::whole(bytes, &[1000]));
        arrays.insert("out", Arr::whole(vec![0u8; 4000], &[1000]));
        {
            let spec = spec_for(dev);
            let ran = run(dev, &src, &k, &spec, &[], &arrays);
            let out = &ran.arrays[1];
            for i in 0..1000i32 {
                let mut k = 0;
                while k < 40 && (k * k < i || k == 3) {
                    k += 1;
                }
                let next = (i + 1 < 1000 && a[(i + 1) as usize] > 0) as i32;
                let got = i32::from_le_bytes(out[i as usize * 4..][..4].try_into().unwrap());
                assert_eq!(got, k * 10 + next, "out[{i}]");
            }
        }
    });
}

#[test]
fn control_flow_while_break_continue_if() {
    let src = Source::new(
        "
const N = 3000;
let limit = 100;
let out = zeros(i32, N);
let flags = zeros(bool, N);
parallel loop for i in 0..N {
    // Collatz steps, capped: while + break.
    let n = i as i64 + 1;
    let steps = 0;
    while n != 1 {
        if steps >= limit {
            break;
        }
        if n % 2 == 0 { n = n / 2; } else { n = 3 * n + 1; }
        steps += 1;
    }
    // continue in a for; inclusive range; else-if chain.
    let odd_sum = 0;
    for k in 0..=i % 17 {
        if k % 2 == 0 { continue; }
        odd_sum += k;
    }
    let d = i % 5;
    let cls = 0;
    if d != 0 && 100 / d > 30 { cls = 1; } else if d == 0 || i > 2000 { cls = 2; } else { cls = 3; }
    out[i] = steps * 1000 + odd_sum * 10 + cls;
    flags[i] = steps == limit;
    if i % 7 == 3 {
        continue;
    }
    flags[i] = !flags[i];
}
",
    );
    let k = src.kernel(0);
    let n = 3000;
    with_device(|dev| {
        let mut arrays = HashMap::new();
        arrays.insert("out", Arr::whole(vec![0; 4 * n], &[n as u64]));
        arrays.insert("flags", Arr::whole(vec![9; n], &[n as u64]));
        let ran = run(
            dev,
            &src,
            &k,
            &Spec::default(),
            &[("limit", Value::I32(100))],
            &arrays,
        );
        let oi = k.arrays.iter().position(|(_, p)| p.name == "out").unwrap();
        let out = values_of(lang::Scalar::I32, &ran.arrays[oi], n);
        let flags = &ran.arrays[1 - oi];
        for i in 0..n as i32 {
            let mut m = i as i64 + 1;
            let mut steps = 0;
            while m != 1 {
                if steps >= 100 {
                    break;
                }
                m = if m % 2 == 0 { m / 2 } else { 3 * m + 1 };
                steps += 1;
            }
            let odd_sum: i32 = (0..=i % 17).filter(|k| k % 2 == 1).sum();
            let d = i % 5;
            let cls = if d != 0 && 100 / d > 30 {
                1
            } else if d == 0 || i > 2000 {
                2
            } else {
                3
            };
            assert_eq!(
                out[i as usize],
                Value::I32(steps * 1000 + odd_sum * 10 + cls),
                "out[{i}]"
            );
            let f = steps == 100;
            let f = if i % 7 == 3 { f } else { !f };
            assert_eq!(flags[i as usize], f as u8, "flags[{i}]");
        }
    });
}

#[test]
fn grid_stride_covers_more_than_max_groups_times_workgroup() {
    // 64 invocations x 65535 groups = 4_194_240 < N.
    let n: usize = 4_500_001;
    let src = Source::new(&format!(
        "
const N = {n};
let out = zeros(u32, N);
parallel loop vector_length(64) for i in 0..N {{
    out[i] = (i as u32) * 2654435761u32;
}}
"
    ));
    let k = src.kernel(0);
    assert_eq!(k.vector_length, Some(64));
    with_device(|dev| {
        let max = dev.info().limits.max_compute_work_group_count[0];
        let mut arrays = HashMap::new();
        arrays.insert("out", Arr::whole(vec![0; 4 * n], &[n as u64]));
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        assert_eq!(ran.groups[0], max.min(n.div_ceil(64) as u32));
        assert!(
            (ran.groups[0] as usize) * 64 < n,
            "the launch must need the grid-stride loop"
        );
        let out = u32s(&ran.arrays[0], n);
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, (i as u32).wrapping_mul(2654435761), "out[{i}]");
        }
    });
}

#[test]
fn section_base_offsets_1d_and_2d() {
    let src = Source::new(
        "
const N = 1000;
const H = N / 2;
let a = zeros(f64, N);
let B = zeros(i32, 40, 30);
parallel loop present(a[H:H]) for i in H..N {
    a[i] = -a[i];
}
parallel loop collapse(2) present(B[10:20]) for j in 10..30 {
    for i in 0..30 {
        B[j, i] = B[j, i] + j * 100 + i;
    }
}
",
    );
    with_device(|dev| {
        // 1-D: the buffer holds a[500..1000] only.
        let k = src.kernel(0);
        let sec: Vec<f64> = (500..1000).map(|i| i as f64).collect();
        let mut arrays = HashMap::new();
        arrays.insert(
            "a",
            Arr {
                bytes: sec.iter().flat_map(|v| v.to_le_bytes()).collect(),
                dims: vec![1000],
                base: 500,
            },
        );
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        let got = f64s(&ran.arrays[0], 500);
        for (j, v) in got.iter().enumerate() {
            assert_eq!(*v, -((500 + j) as f64));
        }
        // 2-D: rows 10..30 of a 40 x 30 array.
        let k = src.kernel(1);
        let rows: Vec<i32> = (0..20 * 30).map(|x| x * 3).collect();
        let mut arrays = HashMap::new();
        arrays.insert(
            "B",
            Arr {
                bytes: rows.iter().flat_map(|v| v.to_le_bytes()).collect(),
                dims: vec![40, 30],
                base: 10 * 30,
            },
        );
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        let got = values_of(lang::Scalar::I32, &ran.arrays[0], 600);
        for r in 0..20 {
            for i in 0..30 {
                let want = rows[r * 30 + i] + (r as i32 + 10) * 100 + i as i32;
                assert_eq!(got[r * 30 + i], Value::I32(want), "B[{}, {i}]", r + 10);
            }
        }
    });
}

const SRC_NESTED_VECTOR: &str = "
let a = zeros(f64, 100);
parallel {
    loop vector for i in 0..10 {
        loop vector for j in 0..10 {
            a[i * 10 + j] = 1.0;
        }
    }
}
";

#[test]
fn nested_vector_loops_are_refused_by_the_checker() {
    // OpenACC forbids a vector loop inside a vector loop: the checker
    // says so, with both loops labelled.
    let builtins = stdlib::builtins();
    let diags = match lang::check_source(SRC_NESTED_VECTOR, &builtins) {
        Ok(_) => panic!("accepted"),
        Err(d) => d,
    };
    let text =
        lang::diag::render_plain(&lang::Source::new("t.accl", SRC_NESTED_VECTOR), &diags, 80);
    assert!(text.contains("accl::device::loop_nesting"), "{text}");
    assert!(text.contains("this `vector` loop"), "{text}");
}

#[test]
fn reductions_atomics_and_regions_lower() {
    let src = Source::new(
        "
let h = zeros(i32, 10);
let s = 0.0;
parallel loop reduction(+: s) for i in 0..100 {
    atomic h[i % 10] += 1;
    s += 1.0;
}
parallel num_gangs(2) {
    loop vector for i in 0..10 {
        h[i] = 1;
    }
}
",
    );
    let k = src.kernel(0);
    assert_eq!(k.shape, compiler::Shape::Flat);
    assert_eq!(k.reductions.len(), 1);
    assert_eq!(k.reductions[0].name, "s");
    let k = src.kernel(1);
    assert_eq!(k.shape, compiler::Shape::Region);
    assert!(k.num_gangs_expr.is_some());
}

#[test]
fn missing_device_feature_is_named() {
    let src = Source::new(SAXPY.replace("f32", "f64").as_str());
    let k = src.kernel(0);
    let spec = Spec {
        features: compiler::Features {
            float64: false,
            ..Spec::default().features
        },
        ..Spec::default()
    };
    let d = compiler::compile(&k, &spec).unwrap_err();
    assert_eq!(d.code, "accl::compile::missing_feature");
    assert!(d.message.contains("shaderFloat64"), "{}", d.message);
    // And the cache hands back the same module for the same spec.
    let mut cache = compiler::Cache::new();
    let a = cache.get(0, &k, &Spec::default()).unwrap();
    let b = cache.get(0, &k, &Spec::default()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(cache.len(), 1);
}

#[test]
fn device_function_with_array_parameters_is_specialised_per_binding() {
    let src = Source::new(
        "
const N = 300;
fn dot3(v: f32[], k: i64, w: f32) -> f32 {
    let s = 0.0f32;
    for d in 0..3i64 {
        s += v[k + d] * w;
    }
    return s;
}
fn bump(v: u8[], k: i64) {
    v[k] = v[k] + 250u8;
}
let p = zeros(f32, N + 3);
let q = zeros(f32, N + 3);
let out = zeros(f32, N + 1);
let c = zeros(u8, N + 1);
parallel loop for i in 0i64..=N {
    out[i] = dot3(p, i, 2.0f32) - dot3(q, i, 1.0f32) + dot3(p, i, 1.0f32);
    bump(c, i);
}
",
    );
    let k = src.kernel(0);
    // dot3<p>, dot3<q> and bump<c>.
    assert_eq!(
        k.functions.len(),
        3,
        "{:?}",
        k.functions.iter().map(|(_, f)| &f.name).collect::<Vec<_>>()
    );
    assert!(k.levels[0].inclusive && k.levels[0].ty == lang::Scalar::I64);
    let n = 300usize;
    let p: Vec<f32> = (0..n + 3).map(|i| i as f32 * 0.5).collect();
    let q: Vec<f32> = (0..n + 3).map(|i| (i % 7) as f32).collect();
    let c: Vec<u8> = (0..n + 1).map(|i| (i * 37 % 256) as u8).collect();
    with_device(|dev| {
        let mut arrays = HashMap::new();
        let f32b = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        arrays.insert("p", Arr::whole(f32b(&p), &[n as u64 + 3]));
        arrays.insert("q", Arr::whole(f32b(&q), &[n as u64 + 3]));
        arrays.insert("out", Arr::whole(vec![0; 4 * (n + 1)], &[n as u64 + 1]));
        arrays.insert("c", Arr::whole(c.clone(), &[n as u64 + 1]));
        let ran = run(dev, &src, &k, &Spec::default(), &[], &arrays);
        let pos = |name: &str| k.arrays.iter().position(|(_, a)| a.name == name).unwrap();
        let out = f32s(&ran.arrays[pos("out")], n + 1);
        let cc = &ran.arrays[pos("c")];
        for i in 0..=n {
            let dot = |v: &[f32], w: f32| {
                let mut s = 0.0f32;
                for d in 0..3 {
                    s += v[i + d] * w;
                }
                s
            };
            let want = dot(&p, 2.0) - dot(&q, 1.0) + dot(&p, 1.0);
            assert_eq!(out[i].to_bits(), want.to_bits(), "out[{i}]");
            assert_eq!(cc[i], c[i].wrapping_add(250), "c[{i}]");
        }
    });
}

#[test]
fn the_validator_refuses_broken_kernel_ir() {
    let src = Source::new(SAXPY);
    let mut k = src.kernel(0);
    assert!(compiler::validate(&k).is_ok());
    // Make one expression claim a type it does not have.
    let last = k.entry.types.len() - 1;
    k.entry.types[last] = lang::Scalar::I64;
    let d = compiler::compile(&k, &Spec::default()).unwrap_err();
    assert_eq!(d.code, "accl::compile::invalid_kir");
}

/// With `sext_by_words` an `i32` widens to `i64` from its two words, not
/// by `OpSConvert`: llvmpipe (Mesa 22.3) compared `(i as i64) < 2i64`
/// against the constant's high word, false for every `i` >= 0. The values
/// are the host's either way.
#[test]
fn sign_extension_by_words_gives_the_same_values() {
    let src = Source::new(
        "
let v = [-3, -1, 0, 1, 2, 5, 2147483647, -2147483648];
let s = zeros(i32, 8, 4);
let w = zeros(i64, 8);
parallel loop for i in 0..8 {
    let x = v[i] as i64;
    s[i, 0] = (x < 2i64) as i32;
    s[i, 1] = (x >= 2147483647i64) as i32;
    s[i, 2] = (x <= -2147483648i64) as i32;
    s[i, 3] = ((i as i64) > 3i64) as i32;
    w[i] = x * 3i64;
}
",
    );
    let k = src.kernel(0);
    let spec = |by_words| Spec {
        sext_by_words: by_words,
        ..Spec::default()
    };
    let text = |by_words| compiler::disassemble(&compiler::compile(&k, &spec(by_words)).unwrap());
    let (words, convert) = (text(true), text(false));
    assert!(
        !words.contains("OpSConvert") && words.contains("OpShiftRightArithmetic"),
        "{words}"
    );
    assert!(convert.contains("OpSConvert"), "{convert}");
    let v: [i32; 8] = [-3, -1, 0, 1, 2, 5, 2147483647, -2147483648];
    with_device(|dev| {
        let mut arrays = HashMap::new();
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        arrays.insert("v", Arr::whole(bytes, &[8]));
        arrays.insert("s", Arr::whole(vec![0u8; 8 * 4 * 4], &[8, 4]));
        arrays.insert("w", Arr::whole(vec![0u8; 8 * 8], &[8]));
        let ran = run(
            dev,
            &src,
            &k,
            &Spec {
                sext_by_words: true,
                ..spec_for(dev)
            },
            &[],
            &arrays,
        );
        let at = |name: &str| k.arrays.iter().position(|(_, a)| a.name == name).unwrap();
        let (s, w) = (&ran.arrays[at("s")], &ran.arrays[at("w")]);
        for (i, &x) in v.iter().enumerate() {
            let x = x as i64;
            let want = [x < 2, x >= 2147483647, x <= -2147483648, i > 3];
            for (c, &b) in want.iter().enumerate() {
                let o = (i * 4 + c) * 4;
                let got = i32::from_le_bytes(s[o..o + 4].try_into().unwrap());
                assert_eq!(got, b as i32, "s[{i}, {c}] for {x}");
            }
            let got = i64::from_le_bytes(w[i * 8..i * 8 + 8].try_into().unwrap());
            assert_eq!(got, x * 3, "w[{i}]");
        }
    });
}

#[test]
fn atomic_shift_counts_wrap_at_the_bit_width() {
    // SPIR-V leaves a shift by the bit width or more undefined (NVIDIA
    // gives 0, x86 wraps); the host's `<<` wraps the count, so every
    // atomic shift masks its count first, in both operand orders.
    let src = Source::new(
        "
let a = full(i32, 3, 8);
let b = full(i64, 5, 8);
let s = 33;
parallel loop for i in 0..8 {
    atomic a[i] <<= s + i;
    atomic a[i] = (1 + i) >> a[i];
    atomic b[i] = (7 as i64) << b[i];
    atomic b[i] >>= s as i64;
}
",
    );
    let k = src.kernel(0);
    let text = compiler::disassemble(&compiler::compile(&k, &Spec::default()).unwrap());
    let ands: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("= OpBitwiseAnd"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let shifts: Vec<&str> = text.lines().filter(|l| l.contains("= OpShift")).collect();
    assert_eq!(shifts.len(), 4, "{text}");
    for l in shifts {
        let count = l.split_whitespace().last().unwrap();
        assert!(ands.contains(&count), "unmasked count in `{l}`:\n{text}");
    }
}

#[test]
fn buffers_loops_update_are_coherent_where_the_spec_asks() {
    // NVIDIA's driver gave stale loads of an element a loop updates after
    // another loop wrote a second array (`compiler::Spec::coherent_writes`).
    let src = Source::new(
        "let a = zeros(f64, 40); let c = zeros(f64, 4, 10); let d = zeros(f64, 4);
         parallel loop for x in 0..4 {
             for y in 0..10 { c[x, y] = a[x * 10 + y]; }
             for y in 0..10 { d[x] += c[x, y]; }
         }",
    );
    let k = src.kernel(0);
    let text = |coherent_writes| {
        let spec = Spec {
            coherent_writes,
            ..Spec::default()
        };
        compiler::disassemble(&compiler::compile(&k, &spec).unwrap())
    };
    let on = text(true);
    assert_eq!(on.matches(" Coherent").count(), 2, "c and d:\n{on}");
    // A kernel without sequential loops that update memory keeps its
    // buffers as they were (the Jacobi sweep, 1.9x slower all `Coherent`).
    let sweep = Source::new(
        "let a = zeros(f32, 8, 8); let b = zeros(f32, 8, 8); let err = 0.0f32;
         parallel loop collapse(2) reduction(max: err) for i in 1..7 { for j in 1..7 {
             b[i, j] = 0.25 * (a[i, j + 1] + a[i, j - 1] + a[i - 1, j] + a[i + 1, j]);
             err = max(err, abs(b[i, j] - a[i, j]));
         } }",
    );
    let spec = Spec {
        coherent_writes: true,
        ..Spec::default()
    };
    let sweep = compiler::disassemble(&compiler::compile(&sweep.kernel(0), &spec).unwrap());
    assert_eq!(sweep.matches(" Coherent").count(), 0, "{sweep}");
    // An update in a function that a loop calls counts as the loop's.
    let called = Source::new(
        "fn add(d: f64[], x: i32, v: f64) { d[x] += v; }
         let a = zeros(f64, 40); let d = zeros(f64, 4);
         parallel loop for x in 0..4 { for y in 0..10 { add(d, x, a[x * 10 + y]); } }",
    );
    let called = compiler::disassemble(&compiler::compile(&called.kernel(0), &spec).unwrap());
    assert_eq!(called.matches(" Coherent").count(), 1, "d:\n{called}");
    // So does a load after a store outside loops: on an H100 a leapfrog
    // drift read `v` from before its own update when `y` was updated in
    // between, unless `v` was `Coherent` (or reached by address).
    let drift = Source::new(
        "let x = zeros(f64, 9); let y = zeros(f64, 9); let v = zeros(f64, 9); let w = zeros(f64, 9);
         parallel loop for i in 0..9 { v[i] += 0.5 * x[i]; w[i] += 1.0; y[i] += v[i]; x[i] += 0.1 * w[i]; }",
    );
    let drift = compiler::disassemble(&compiler::compile(&drift.kernel(0), &spec).unwrap());
    assert_eq!(drift.matches(" Coherent").count(), 2, "v and w:\n{drift}");
    assert_eq!(
        on.matches(" NonWritable").count(),
        1,
        "a, which it only reads:\n{on}"
    );
    assert_eq!(text(false).matches(" Coherent").count(), 0);
}

#[test]
fn signed_remainders_avoid_opsrem() {
    // Vulkan leaves `OpSRem` and `OpSMod` undefined for negative operands
    // (NVIDIA's driver gave the unsigned remainder), so a signed `%` is
    // built from `OpSDiv`, which is defined for them.
    let src = Source::new(
        "let a = zeros(i32, 64); let b = zeros(i64, 64); let d = zeros(i32, 64);
         parallel loop for i in 0..64 {
             a[i] = (i - 40) % 7 + (i - 40) % d[i];
             b[i] = ((i - 40) as i64) % (d[i] as i64);
         }",
    );
    let text = compiler::disassemble(&compiler::compile(&src.kernel(0), &Spec::default()).unwrap());
    assert!(
        !text.contains("OpSRem") && !text.contains("OpSMod"),
        "{text}"
    );
    assert_eq!(text.matches("OpSDiv").count(), 3, "{text}");
}
