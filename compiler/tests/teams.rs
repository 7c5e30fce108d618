//! Which gang loops become teams of a subgroup, how many share a
//! workgroup, and which barriers they keep (the results are tested on the
//! device in the workspace's `tests/device_teams.rs`).

mod common;

use common::Source;
use compiler::spirv::{teams, Teams};
use compiler::Spec;

fn spec(subgroup: u32) -> Spec {
    Spec {
        subgroup_size: subgroup,
        ..Spec::default()
    }
}

const SPMV: &str =
    "let rowptr = zeros(i32, 101); let cols = zeros(i32, 1600); let vals = zeros(f32, 1600);
    let v = zeros(f32, 100); let out = zeros(f32, 100);
    parallel loop gang worker CLAUSES for i in 0..100 {
        let s = 0.0f32;
        loop vector reduction(+: s) for k in rowptr[i]..rowptr[i + 1] { s += vals[k] * v[cols[k]]; }
        out[i] = s;
    }";

fn spmv(clauses: &str) -> compiler::Kernel {
    Source::new(&SPMV.replace("CLAUSES", clauses)).kernel(0)
}

#[test]
fn teams_follow_vector_length_workers_and_the_subgroup() {
    let t = |lanes, per_gang, per_group| {
        Some(Teams {
            lanes,
            per_gang,
            per_group,
        })
    };
    // Teams are packed 256 lanes to a workgroup, whatever the workers.
    let cases = [
        ("vector_length(32) num_workers(32)", 32, t(32, 32, 8)),
        ("vector_length(32)", 32, t(32, 1, 8)),
        ("num_workers(4)", 32, t(32, 4, 8)),
        ("vector_length(8) num_workers(3)", 32, t(8, 3, 32)),
        ("vector_length(8) num_workers(3)", 8, t(8, 3, 32)),
        ("vector_length(1)", 8, t(1, 1, 256)),
        ("vector_length(32) num_workers(64)", 32, t(32, 64, 8)),
        // Past the subgroup, not a power of two, no subgroups, no clause.
        ("vector_length(64) num_workers(4)", 32, None),
        ("vector_length(24)", 32, None),
        ("vector_length(32) num_workers(4)", 0, None),
        ("", 32, None),
    ];
    for (clauses, subgroup, want) in cases {
        assert_eq!(teams(&spmv(clauses), &spec(subgroup)), want, "{clauses}");
    }
}

#[test]
fn teams_reduce_by_shuffles_and_keep_barriers_only_for_shared_arrays() {
    let k = spmv("vector_length(32) num_workers(8)");
    // Four rows side by side per team, each folded in 5 shuffle steps, and
    // the same four one after the other for the last trip.
    assert_eq!(compiler::spirv::coarsening(&k, &spec(32)), 4);
    let dis = compiler::disassemble(&compiler::compile(&k, &spec(32)).unwrap());
    assert_eq!(
        dis.matches("OpGroupNonUniformShuffleXor").count(),
        2 * 4 * 5,
        "{dis}"
    );
    // Nothing is read that the gang writes: no barrier at all.
    assert!(!dis.contains("OpControlBarrier"), "{dis}");

    // A gang that reads back what it stored synchronises its subgroup
    // (scope 3), never the workgroup (2).
    let k = Source::new(
        "let a = zeros(i32, 800);
         parallel loop gang vector_length(8) for i in 0..100 {
             a[i * 8] = i;
             loop vector for k in 1..8 { a[i * 8 + k] = a[i * 8] + k; }
         }",
    )
    .kernel(0);
    // Lanes pass values through `a`: one row at a time.
    assert_eq!(compiler::spirv::coarsening(&k, &spec(32)), 1);
    // Lanes pass values through `a`: one row at a time.
    assert_eq!(compiler::spirv::coarsening(&k, &spec(32)), 1);
    let dis = compiler::disassemble(&compiler::compile(&k, &spec(32)).unwrap());
    assert!(dis.contains("OpControlBarrier"), "{dis}");
    for l in dis.lines().filter(|l| l.contains("OpControlBarrier")) {
        let scope = l.split_whitespace().nth(1).unwrap();
        assert!(
            dis.lines()
                .any(|d| d.starts_with(&format!("{scope} = OpConstant")) && d.ends_with(" 3")),
            "a barrier wider than the subgroup: {l}\n{dis}"
        );
    }
}

#[test]
fn each_construct_reduction_waits_for_its_team_slots_to_be_read() {
    // Two reductions fold the teams' copies through the same workgroup
    // slots: the second may write them only after invocation 0 read the
    // first's (on an H100 a u8 `max` folded after a u8 `+` read the `+`'s
    // partial sums without the barrier).
    let k = Source::new(
        "let a = zeros(u8, 32, 7); let m: u8 = 0u8; let s: u8 = 0u8;
         parallel num_gangs(1) reduction(max: m) reduction(+: s) {
             loop gang reduction(max: m) reduction(+: s) for i in 0..32 {
                 loop worker vector reduction(max: m) reduction(+: s) for j in 0..7 {
                     m = max(m, a[i, j]); s += a[i, j];
                 }
             }
         }",
    )
    .kernel(0);
    assert!(teams(&k, &spec(32)).is_some());
    let dis = compiler::disassemble(&compiler::compile(&k, &spec(32)).unwrap());
    let workgroup_scope = |l: &&str| {
        let scope = l.split_whitespace().nth(1).unwrap();
        dis.lines()
            .any(|d| d.starts_with(&format!("{scope} = OpConstant")) && d.ends_with(" 2"))
    };
    let barriers = dis
        .lines()
        .filter(|l| l.contains("OpControlBarrier"))
        .filter(workgroup_scope)
        .count();
    // Per reduction: one after the slots are written, one after they are read.
    assert_eq!(barriers, 4, "{dis}");
}
