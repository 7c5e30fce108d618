//! Where private arrays' copies go: per lane or per gang in workgroup
//! memory (a workgroup array in the module, behind a uniform test of the
//! section's size), or the hidden array with a reason.

mod common;
use common::{spirv_val, Source};
use compiler::kir::CopySlots;

fn places(src: &str) -> Vec<(String, Result<CopySlots, String>)> {
    let s = Source::new(src);
    let k = s.kernel(0);
    let words = compiler::compile(&k, &compiler::Spec::default()).expect("compiles");
    spirv_val(&words);
    let text = compiler::disassemble(&words);
    for p in &k.private_copies {
        let name = format!("\"copies_{}\"", p.array.index());
        assert_eq!(text.contains(&name), p.place.is_ok(), "{text}");
    }
    k.private_copies
        .iter()
        .map(|p| (p.name.clone(), p.place.clone()))
        .collect()
}

#[test]
fn flat_loop_copies_are_per_lane() {
    let p = places(
        "let c = zeros(i32, 4); let o = zeros(i32, 64);
         parallel loop private(c) for i in 0..64 { c[i % 4] += i; o[i] = c[i % 4]; }",
    );
    assert_eq!(p, vec![("c".into(), Ok(CopySlots::Lane))]);
}

#[test]
fn gang_loop_copies_are_per_gang_and_vector_loop_copies_per_lane() {
    let p = places(
        "let t = zeros(f32, 2, 8); let w = zeros(i32, 3); let o = zeros(f32, 16, 8);
         parallel loop gang firstprivate(t[0:1, 0:8]) for i in 0..16 {
             loop vector private(w) for j in 0..8 { w[0] = j; t[0, j] = t[0, j] + (w[0] + i) as f32; }
             loop vector for j in 0..8 { o[i, j] = t[0, 7 - j]; }
         }",
    );
    assert_eq!(
        p,
        vec![
            ("t".into(), Ok(CopySlots::Gang)),
            ("w".into(), Ok(CopySlots::Lane)),
        ]
    );
}

#[test]
fn a_loop_run_in_order_keeps_the_hidden_array() {
    let p = places(
        "let c = zeros(i32, 4); let o = zeros(i32, 64);
         parallel loop for i in 0..8 { loop seq private(c) for j in 0..8 { c[0] = i + j; o[i * 8 + j] = c[0]; } }",
    );
    assert_eq!(p, vec![("c".into(), Err("its loop runs in order".into()))]);
}
