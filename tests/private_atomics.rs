//! Privatised atomics (the histogram pattern): in a flat kernel, an integer
//! array only updated by atomics of one kind gets a workgroup copy when it
//! fits, folded into the device array at the end. Every case against the
//! host reference, on lavapipe with the validation layer and `spirv-val`.

use crate::common;
use common::{device_engine, same_as_host, Floats};

fn ok(src: &str) {
    let (_, dev) = same_as_host(src, Floats::Exact);
    if let Err(e) = &dev.result {
        panic!("failed:\n{}", e.render(100));
    }
}

/// Whether the module of the last kernel of `src` has a workgroup copy.
fn privatised(src: &str) -> bool {
    let mut e = device_engine();
    e.eval(src)
        .unwrap_or_else(|err| panic!("{}", err.render(100)));
    let dis = e.last_spirv().expect("a kernel ran");
    dis.contains("private_")
}

const KEYS: &str = "let n = 100000;
    let keys = zeros(i32, n);
    for i in 0..n { keys[i] = ((i * 7919) % 1000) % 256; }";

#[test]
fn a_histogram_is_privatised_and_equals_the_host() {
    let src = format!(
        "{KEYS}
         let bins = zeros(i32, 256);
         parallel loop for i in 0..n {{ atomic bins[keys[i]] += 1; }}
         // Keys 0..232 come from 4 of every 1000 items, 232..256 from 3.
         assert(bins[0] == 400 && bins[231] == 400 && bins[232] == 300 && bins[255] == 300, \"counts\");"
    );
    assert!(privatised(&src));
    ok(&src);
}

#[test]
fn adds_and_subtracts_mix_on_one_copy() {
    let src = format!(
        "{KEYS}
         let bins = full(i32, 5, 256);
         parallel loop for i in 0..n {{
             if i % 3 == 0 {{ atomic bins[keys[i]] -= 2; }} else {{ atomic bins[keys[i]] += 1; }}
         }}
         // Computed independently (Python, the same formulas).
         assert(bins[0] == 3 && bins[1] == 6 && bins[231] == 3 && bins[232] == 5 && bins[255] == 5, \"bins\");"
    );
    assert!(privatised(&src));
    ok(&src);
}

#[test]
fn every_update_kind_on_signed_and_unsigned_bins() {
    // The last item is h[0], h[1], h[31] and h[63], computed independently
    // (Python, the same formulas); `&=` clears bits 0 to 30 only, so bit 31
    // stays.
    for (ty, init, op, v, want) in [
        (
            "i32",
            "-7",
            "max=",
            "(i % 1000) - 500",
            [428, 459, 477, 469],
        ),
        (
            "i32",
            "7",
            "min=",
            "(i % 1000) - 500",
            [-500, -453, -451, -443],
        ),
        (
            "u32",
            "3u32",
            "max=",
            "(i as u32) % 977u32",
            [975, 975, 974, 974],
        ),
        (
            "u32",
            "4000000000u32",
            "min=",
            "(i as u32) % 977u32 + 1u32",
            [1, 2, 1, 1],
        ),
        (
            "u32",
            "4294967295u32",
            "&=",
            "4294967295u32 ^ (1u32 << ((i as u32) % 31u32))",
            [1 << 31; 4],
        ),
        (
            "u32",
            "0u32",
            "|=",
            "1u32 << ((i as u32) % 32u32)",
            [16843009, 2155905152, 33686018, 33686018],
        ),
        (
            "u32",
            "0u32",
            "^=",
            "(i as u32) * 2654435761u32",
            [1493301792, 2356024256, 3953601376, 329176512],
        ),
    ] {
        let src = format!(
            "{KEYS}
             let h = full({ty}, {init}, 64);
             parallel loop for i in 0..n {{ atomic h[keys[i] % 64] {op} {v}; }}"
        );
        assert!(privatised(&src), "{src}");
        let [a, b, c, d]: [i64; 4] = want;
        ok(&format!(
            "{src}
             assert(h[0] as i64 == {a}i64 && h[1] as i64 == {b}i64, \"h[0], h[1]\");
             assert(h[31] as i64 == {c}i64 && h[63] as i64 == {d}i64, \"h[31], h[63]\");"
        ));
    }
}

#[test]
fn bins_past_the_workgroup_copy_take_the_device_atomics() {
    // 5000 bins: more than a workgroup copy holds; the same kernel runs the
    // plain path (decided at run time), with the same result.
    let src = format!(
        "{KEYS}
         let bins = zeros(i32, 5000);
         parallel loop for i in 0..n {{ atomic bins[(keys[i] * 19 + i) % 5000] += 1; }}
         // Computed independently (Python, the same formulas): keys[i] has
         // the parity of i (7919 odd, 1000 and 256 even), so only even bins
         // are hit.
         let total = 0; for b in 0..5000 {{ total += bins[b]; }}
         assert(total == n && bins[0] == 60 && bins[2] == 20 && bins[4] == 40 && bins[4998] == 40, \"hit\");
         assert(bins[1] == 0 && bins[2501] == 0 && bins[4999] == 0, \"odd bins\");"
    );
    ok(&src);
}

#[test]
fn a_section_of_the_bins_is_privatised_with_its_offset() {
    let src = format!(
        "{KEYS}
         let bins = zeros(i32, 1000);
         data copy(bins[300:256]) {{
             parallel loop present(bins[300:256]) for i in 0..n {{ atomic bins[300 + keys[i]] += 2; }}
         }}
         // Keys 0..232 come from 4 of every 1000 items, 232..256 from 3:
         // 400 and 300 items, two each.
         assert(bins[300] == 800 && bins[531] == 800 && bins[532] == 600 && bins[555] == 600, \"section\");
         assert(bins[0] == 0 && bins[299] == 0 && bins[556] == 0 && bins[999] == 0, \"outside\");"
    );
    ok(&src);
}

#[test]
fn arrays_used_otherwise_keep_the_device_atomics() {
    // Read in the kernel, mixed operators, the old value used: not
    // privatised, and still right.
    for body in [
        "atomic h[keys[i] % 64] += 1; if h[0] < 0 { atomic h[1] += 1; }",
        // `max= 0` on counts commutes with `+= 1`, so any order of the two
        // gives the host's result (`max= 3` would not: a race).
        "atomic h[keys[i] % 64] += 1; atomic h[keys[i] % 32] max= 0;",
        "let old = atomic_add(h[keys[i] % 64], 1);",
    ] {
        let src = format!(
            "{KEYS}
             let h = zeros(i32, 64);
             parallel loop for i in 0..n {{ {body} }}"
        );
        assert!(!privatised(&src), "{body}");
        if !body.contains("h[0] < 0") {
            // Keys % 64 of 0..40 come from 16 of every 1000 items, of
            // 40..64 from 15 (keys 232..256 from 3, the others from 4).
            ok(&format!(
                "{src}
                 assert(h[0] == 1600 && h[39] == 1600 && h[40] == 1500 && h[63] == 1500, \"counts\");"
            ));
        }
    }
}

#[test]
fn f32_sums_maxima_and_minima_are_privatised_too() {
    let src = "let n = 100000; let keys = zeros(i32, n); let w = zeros(f32, n);
        for i in 0..n { keys[i] = (((i as u32) * 2654435761u32) >> 26u32) as i32; w[i] = (i % 17) as f32 * 0.25 - 1.0; }
        let s = zeros(f32, 64); let hi = full(f32, -5.0, 64); let lo = full(f32, 5.0, 64); let d = zeros(f32, 64);
        parallel loop reduction(+: s) reduction(max: hi) for i in 0..n {
            s[keys[i]] += 0.5; hi[keys[i]] = max(hi[keys[i]], w[i]);
        }
        parallel loop for i in 0..n { atomic lo[keys[i]] min= w[i]; atomic d[keys[i]] -= w[i]; }
        // Computed independently (Python, the same formulas); w runs
        // from -1 to 3 in every bin.
        assert(s[0] == 781.0 && s[32] == 781.5 && s[63] == 781.0, \"counts of halves\");
        assert(hi[0] == 3.0 && hi[63] == 3.0 && lo[0] == -1.0 && lo[63] == -1.0, \"extremes\");
        assert(d[0] == -1572.75 && d[1] == -1558.5 && d[32] == -1578.5 && d[63] == -1547.5, \"d\");";
    // Sums of quarters and halves are exact in f32 in any order here.
    let (_, dev) = same_as_host(src, Floats::Exact);
    if let Err(e) = &dev.result {
        panic!("failed:\n{}", e.render(100));
    }
    assert!(privatised(src));
    // A float `*=` is not privatised (and still right).
    let mul = "let f = full(f32, 1.0, 4); parallel loop for i in 0..64 { atomic f[i % 4] *= 1.5; }";
    assert!(!privatised(mul));
    // 1.5^16 = 656.84082..., rounded in f32 at the last step.
    ok(&format!(
        "{mul} for k in 0..4 {{ assert(abs(f[k] - 656.8408) < 1e-3, \"1.5^16\"); }}"
    ));
}
