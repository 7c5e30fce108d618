//! Gangs as teams of one subgroup (`vector_length` up to the subgroup size,
//! `num_workers` teams per workgroup): every reduction operator and type of
//! `loop vector` against the host reference, and bit for bit against the
//! same kernels with subgroups turned off (whole-workgroup gangs, folding
//! through workgroup memory), which fold in the same tree order.
//!
//! lavapipe's subgroups have 8 lanes (asserted below), so the cases cover
//! a team filling a subgroup, several teams per subgroup, one lane per
//! team, a worker count that is not a multiple of the teams per subgroup,
//! and a vector length past the subgroup (no teams).

use crate::common;

use common::{run, run_without, same_as_host, same_values, Floats};

/// The reductions of one type's `loop vector`: `(operator, update of acc<n>)`.
type Reductions = &'static [(&'static str, &'static str)];

/// `(type, its reductions, value of element k)`.
const TYPES: &[(&str, Reductions, &str)] = &[
    (
        "i32",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
            ("&", "acc4 = acc4 & x[k];"),
            ("|", "acc5 = acc5 | x[k];"),
            ("^", "acc6 = acc6 ^ x[k];"),
        ],
        "(k * 7919 % 201 - 100) as i32",
    ),
    (
        "u32",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
            ("&", "acc4 = acc4 & x[k];"),
            ("|", "acc5 = acc5 | x[k];"),
            ("^", "acc6 = acc6 ^ x[k];"),
        ],
        "(k as u32) * 2654435761u32",
    ),
    (
        "i64",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
            ("&", "acc4 = acc4 & x[k];"),
            ("|", "acc5 = acc5 | x[k];"),
            ("^", "acc6 = acc6 ^ x[k];"),
        ],
        "(k as i64) * 1000000007 - 5000000000",
    ),
    (
        "u8",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
            ("^", "acc4 = acc4 ^ x[k];"),
        ],
        "(k * 37 + 1) as u8",
    ),
    (
        "f32",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
        ],
        "1.0f32 + ((k % 97) as f32 - 48.0) * 0.013",
    ),
    (
        "f64",
        &[
            ("+", "acc0 += x[k];"),
            ("*", "acc1 *= x[k];"),
            ("max", "acc2 = max(acc2, x[k]);"),
            ("min", "acc3 = min(acc3, x[k]);"),
        ],
        "1.0 + ((k % 89) as f64 - 44.0) * 0.017",
    ),
    (
        "bool",
        &[
            ("&&", "acc0 = acc0 && x[k];"),
            ("||", "acc1 = acc1 || x[k];"),
        ],
        "k % 5 != 0",
    ),
];

/// Clauses of the gang loops (see the module doc).
const SHAPES: &[&str] = &[
    "gang worker vector_length(8) num_workers(4)",
    "gang vector_length(4)",
    "gang worker vector_length(2) num_workers(3)",
    "gang vector_length(1)",
    "gang worker num_workers(2)",
    "gang worker vector_length(16) num_workers(2)",
];

const ROWS: usize = 300;

/// One gang loop per type: row `i` reduces its elements `i * 12 ..
/// i * 12 + i % 13` (0 to 12 of them) with every operator, starting from
/// element `i * 12 + 5` (so the fold is combined with a value that is not
/// the identity), and adds its row sum into a construct reduction.
fn script(clauses: &str) -> String {
    let mut s = format!("let rows = {ROWS}; let n = rows * 12 + 16;\n");
    for (t, (ty, reds, value)) in TYPES.iter().enumerate() {
        s += &format!("let x{t} = zeros({ty}, n);\nfor k in 0..n {{ x{t}[k] = {value}; }}\n");
        for r in 0..reds.len() {
            s += &format!("let out{t}_{r} = zeros({ty}, rows);\n");
        }
        let total = if *ty == "bool" {
            ""
        } else {
            "reduction(+: tot) "
        };
        if !total.is_empty() {
            s += &format!("let tot{t}: {ty} = x{t}[3];\n");
        }
        let x = format!("x{t}");
        let mut body = String::new();
        let mut clause = String::new();
        let mut stores = String::new();
        for (r, (op, _)) in reds.iter().enumerate() {
            body += &format!("let acc{r} = {x}[i * 12 + 5];\n");
            clause += &format!("reduction({op}: acc{r}) ");
            stores += &format!("out{t}_{r}[i] = acc{r};\n");
        }
        let updates: String = reds
            .iter()
            .map(|(_, u)| u.replace("x[", &format!("{x}[")))
            .collect::<Vec<_>>()
            .join(" ");
        let total_update = if total.is_empty() {
            String::new()
        } else {
            format!("tot{t} += acc0;")
        };
        s += &format!(
            "parallel loop {clauses} {} for i in 0..rows {{
                 {body}
                 loop vector {clause} for k in i * 12..i * 12 + i % 13 {{ {updates} }}
                 {stores} {total_update}
             }}\n",
            if total.is_empty() {
                String::new()
            } else {
                format!("reduction(+: tot{t})")
            }
        );
    }
    s
}

/// The arrays written by the `loop vector` reductions.
fn outputs() -> Vec<String> {
    TYPES
        .iter()
        .enumerate()
        .flat_map(|(t, (_, reds, _))| (0..reds.len()).map(move |r| format!("out{t}_{r}")))
        .collect()
}

#[test]
fn lavapipe_subgroups_have_eight_lanes() {
    // The shapes above are chosen around this size.
    let i = vk_runtime::Instance::new(&vk_runtime::InstanceOptions::default()).unwrap();
    let a = &i.adapters().unwrap()[0];
    assert_eq!(a.limits.subgroup_size, 8, "{}", a.name);
    assert!(a.features.subgroup_operations.contains(&"shuffle"));
}

#[test]
fn every_reduction_operator_and_type_matches_the_host() {
    for clauses in SHAPES {
        let src = script(clauses);
        // Float sums and products fold in another order than a loop.
        let (host, _) = same_as_host(&src, Floats::Within(1e-5));
        host.result.unwrap();
        known_answers(&host.engine);
    }
}

/// The results `script` must give whatever the shape, computed here (both
/// backends could share a bug): integers wrap as the element type does.
fn known_answers(e: &accl::Engine) {
    let n = ROWS * 12 + 16;
    let span = |i: usize| i * 12..i * 12 + i % 13;
    // Integer types as i128, with each type's wrap.
    type Ints = (usize, fn(i128) -> i128, Vec<i128>);
    let ints: [Ints; 4] = [
        (
            0,
            |v| v as i32 as i128,
            (0..n as i128).map(|k| k * 7919 % 201 - 100).collect(),
        ),
        (
            1,
            |v| v as u32 as i128,
            (0..n as i128)
                .map(|k| (k * 2654435761) as u32 as i128)
                .collect(),
        ),
        (
            2,
            |v| v as i64 as i128,
            (0..n as i128)
                .map(|k| k * 1000000007 - 5000000000)
                .collect(),
        ),
        (
            3,
            |v| v as u8 as i128,
            (0..n as i128).map(|k| (k * 37 + 1) as u8 as i128).collect(),
        ),
    ];
    for (t, wrap, x) in &ints {
        let ops: &[fn(i128, i128) -> i128] = if *t == 3 {
            &[
                |a, b| a + b,
                |a, b| a * b,
                i128::max,
                i128::min,
                |a, b| a ^ b,
            ]
        } else {
            &[
                |a, b| a + b,
                |a, b| a * b,
                i128::max,
                i128::min,
                |a, b| a & b,
                |a, b| a | b,
                |a, b| a ^ b,
            ]
        };
        let mut tot = x[3];
        for i in 0..ROWS {
            for (r, op) in ops.iter().enumerate() {
                let want = span(i).fold(x[i * 12 + 5], |a, k| wrap(op(a, x[k])));
                let got = read_int(e, *t, &format!("out{t}_{r}"), i);
                assert_eq!(got, want, "out{t}_{r}[{i}]");
                if r == 0 {
                    tot = wrap(tot + want);
                }
            }
        }
        let got = read_int(e, *t, &format!("tot{t}"), usize::MAX);
        assert_eq!(got, tot, "tot{t}");
    }
    let x4: Vec<f64> = (0..n)
        .map(|k| (1.0f32 + ((k % 97) as f32 - 48.0) * 0.013) as f64)
        .collect();
    let x5: Vec<f64> = (0..n)
        .map(|k| 1.0 + ((k % 89) as f64 - 44.0) * 0.017)
        .collect();
    for (t, x) in [(4, x4), (5, x5)] {
        let ops: [fn(f64, f64) -> f64; 4] = [|a, b| a + b, |a, b| a * b, f64::max, f64::min];
        for i in 0..ROWS {
            for (r, op) in ops.iter().enumerate() {
                let want = span(i).fold(x[i * 12 + 5], |a, k| op(a, x[k]));
                let got = if t == 4 {
                    e.get_array::<f32>(&format!("out{t}_{r}")).unwrap().0[i] as f64
                } else {
                    e.get_array::<f64>(&format!("out{t}_{r}")).unwrap().0[i]
                };
                assert!(
                    (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                    "out{t}_{r}[{i}]: {got} vs {want}"
                );
            }
        }
    }
    let (and, _) = e.get_array::<bool>("out6_0").unwrap();
    let (or, _) = e.get_array::<bool>("out6_1").unwrap();
    for i in 0..ROWS {
        let first = (i * 12 + 5) % 5 != 0;
        assert_eq!(
            and[i],
            span(i).fold(first, |a, k| a && k % 5 != 0),
            "out6_0[{i}]"
        );
        assert_eq!(
            or[i],
            span(i).fold(first, |a, k| a || k % 5 != 0),
            "out6_1[{i}]"
        );
    }
}

/// Element `i` of integer array `name` of type number `t` (a scalar when
/// `i` is `usize::MAX`), widened.
fn read_int(e: &accl::Engine, t: usize, name: &str, i: usize) -> i128 {
    fn at<T: accl::stdlib::Elem + Copy + Into<i128>>(
        e: &accl::Engine,
        name: &str,
        i: usize,
    ) -> i128 {
        if i == usize::MAX {
            e.get::<T>(name).unwrap().into()
        } else {
            e.get_array::<T>(name).unwrap().0[i].into()
        }
    }
    match t {
        0 => at::<i32>(e, name, i),
        1 => at::<u32>(e, name, i),
        2 => at::<i64>(e, name, i),
        _ => at::<u8>(e, name, i),
    }
}

#[test]
fn teams_fold_like_workgroups_bit_for_bit() {
    let names = outputs();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // Without subgroups, `num_workers` alone leaves the default vector
    // length (more lanes, another tree).
    for clauses in SHAPES.iter().filter(|c| c.contains("vector_length")) {
        eprintln!("{clauses}");
        let src = script(clauses);
        let teams = run(&src, true);
        let groups = run_without(&src, &["subgroups"]);
        same_values(&teams, &groups, &names, Floats::Exact);
        // Equal to each other, and right (both could share a fold's bug).
        known_answers(&teams.engine);
    }
}

#[test]
fn gang_redundant_stores_are_seen_by_the_team() {
    // Lane 0 stores in gang-redundant code; the team reads it back in its
    // `loop vector` (a subgroup barrier in between), rows of other teams
    // of the same subgroup running at the same time.
    let (host, _) = same_as_host(
        "let rows = 500; let a = zeros(i32, rows * 8); let b = zeros(i32, rows * 8);
         parallel loop gang worker vector_length(4) num_workers(8) for i in 0..rows {
             a[i * 8] = i * 3;
             loop vector for k in 1..8 { a[i * 8 + k] = a[i * 8] + k; }
             let s = 0;
             loop vector reduction(+: s) for k in 0..8 { s += a[i * 8 + k]; }
             b[i * 8] = s;
             loop vector for k in 1..8 { b[i * 8 + k] = b[i * 8] - k; }
         }",
        Floats::Exact,
    );
    // The known answer (both backends could share a bug).
    let (a, _) = host.engine.get_array::<i32>("a").unwrap();
    let (b, _) = host.engine.get_array::<i32>("b").unwrap();
    for i in 0..500 {
        let s = 8 * i * 3 + 28;
        for k in 0..8 {
            assert_eq!(a[(i * 8 + k) as usize], i * 3 + k, "a[{i} * 8 + {k}]");
            assert_eq!(b[(i * 8 + k) as usize], s - k, "b[{i} * 8 + {k}]");
        }
    }
}

#[test]
fn num_gangs_caps_teams_and_every_row_is_done() {
    let (host, _) = same_as_host(
        "let rows = 1000; let y = zeros(i64, rows); let hits = zeros(i32, rows); let t: i64 = 7;
         parallel loop gang worker vector_length(8) num_workers(4) num_gangs(5) reduction(+: t) for i in 0..rows {
             let s: i64 = 0;
             loop vector reduction(+: s) for k in 0..i % 37 { s += (k * i) as i64; }
             y[i] = s; hits[i] += 1; t += s;
         }",
        Floats::Exact,
    );
    let (y, _) = host.engine.get_array::<i64>("y").unwrap();
    let (hits, _) = host.engine.get_array::<i32>("hits").unwrap();
    let mut t = 7i64;
    for i in 0..1000i64 {
        let m = i % 37;
        let s = i * (m * (m - 1) / 2);
        assert_eq!(y[i as usize], s, "y[{i}]");
        t += s;
    }
    assert!(hits.iter().all(|&h| h == 1), "every row once");
    assert_eq!(host.engine.get::<i64>("t"), Some(t));
}

#[test]
fn workgroup_folds_through_subgroups_bit_for_bit() {
    // Workgroups of 2 to 8 subgroups of lavapipe's 8 lanes: flat
    // construct reductions and a region's `loop vector` reductions fold
    // by shuffles at two levels, in the same tree as workgroup memory.
    for v in [16, 32, 64] {
        let src = format!(
            "let n = 5000; let x = zeros(f32, n); let y = zeros(f64, n);
             for i in 0..n {{ x[i] = (i % 97) as f32 * 0.013 - 0.6; y[i] = (i % 89) as f64 * 0.37; }}
             let s = 0.0f32; let m = 0.0; let k = 0; let p = 1.0f32;
             parallel loop vector_length({v}) reduction(+: s) reduction(max: m) reduction(^: k) for i in 0..n {{
                 s += x[i]; m = max(m, y[i] * x[i] as f64); k = k ^ (i * 7);
             }}
             let r = zeros(f32, 4);
             parallel num_gangs(4) vector_length({v}) {{
                 let t = 0.0f32; let q = 1.0f32;
                 loop vector reduction(+: t) reduction(*: q) for i in 0..n {{ t += x[i] * x[i]; q *= 1.0f32 + x[i] * 0.001; }}
                 loop gang for g in 0..4 {{ r[g] = t + q; }}
             }}"
        );
        let (host, _) = same_as_host(&src, Floats::Within(1e-5));
        host.result.unwrap();
        // The known answers, computed here.
        let xs: Vec<f32> = (0..5000).map(|i| (i % 97) as f32 * 0.013 - 0.6).collect();
        let ys: Vec<f64> = (0..5000).map(|i| (i % 89) as f64 * 0.37).collect();
        let k = (0..5000).fold(0i32, |k, i| k ^ (i * 7));
        let m = (0..5000).fold(0.0f64, |m, i| m.max(ys[i] * xs[i] as f64));
        let s: f64 = xs.iter().map(|&x| x as f64).sum();
        assert_eq!(host.engine.get::<i32>("k"), Some(k));
        assert_eq!(host.engine.get::<f64>("m"), Some(m));
        let got = host.engine.get::<f32>("s").unwrap() as f64;
        assert!((got - s).abs() <= 1e-3 * s.abs().max(1.0), "s {got} vs {s}");
        let subgroups = run(&src, true);
        let groups = run_without(&src, &["subgroups"]);
        same_values(&subgroups, &groups, &["s", "m", "k", "r"], Floats::Exact);
    }
}
