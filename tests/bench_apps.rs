//! The Rodinia ports of bench/apps (hotspot, srad, nw, pathfinder) and the
//! miniWeather port run at small sizes on the host reference and on the device, and
//! print what the C programs print for the same inputs (built serially with
//! the same `rand()`; each script's header says how), or pass the check
//! against a host computation they make themselves.

use crate::common;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Output of `bench/apps/<name>.accl` (default parameters) on one backend,
/// with the repository root as its file directory (hotspot reads
/// bench/apps/data), and the engine, for its variables.
fn run(name: &str, device: bool, args: &[&str]) -> (String, accl::Engine) {
    let path = root().join("bench/apps").join(format!("{name}.accl"));
    let src = std::fs::read_to_string(&path).unwrap();
    let out = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let o = out.clone();
    let mut e = common::engine(device);
    e.set_fs_access(Some(root()));
    e.set_args(args);
    e.set_print(move |s| o.borrow_mut().push_str(s));
    let backend = if device { "device" } else { "host" };
    if let Err(err) = e.eval_source(&path.display().to_string(), &src) {
        panic!("{name} failed on the {backend}:\n{}", err.render(100));
    }
    let msgs = e.take_validation_messages();
    assert!(msgs.is_empty(), "validation messages:\n{}", msgs.join("\n"));
    let s = out.borrow().clone();
    (s, e)
}

fn on_both(name: &str, args: &[&str], want: &[&str]) -> [(String, accl::Engine); 2] {
    let both = [run(name, false, args), run(name, true, args)];
    for ((out, _), backend) in both.iter().zip(["host", "device"]) {
        for w in want {
            assert!(
                out.contains(w),
                "{name} on the {backend} should print {w:?}:\n{out}"
            );
        }
    }
    both
}

/// The C prints these temperatures (sum in index order, maximum) for the
/// committed 32 x 32 inputs after 10 steps; f64 stencil arithmetic is
/// the same on both backends, bit for bit.
#[test]
fn hotspot_matches_c() {
    assert!(root().join("bench/apps/data/temp_32x32").exists());
    on_both(
        "hotspot",
        &[],
        &["temperature sum 340777.23153867107, max 342.74506306004304"],
    );
}

/// 1000 x 100: the C's first row and result sums and minimum; every
/// result equals the script's own serial sweep on the host.
#[test]
fn pathfinder_matches_c() {
    on_both(
        "pathfinder",
        &[],
        &[
            "row0 sum 4423, result sum 143114, min 116",
            "verification passed",
        ],
    );
}

/// N = 128, penalty 10: the C's score and matrix sum; every cell equals the
/// script's own row-by-row recurrence.
#[test]
fn nw_matches_c() {
    on_both(
        "nw",
        &[],
        &["score -62, matrix sum -5695922", "verification passed"],
    );
}

/// 128 x 128, 2 iterations. The ROI reduction adds in another order than
/// the C's loop (and than the host's), so J agrees with the C and across
/// backends to f32 rounding; the host's sum is pinned (it equals the C's,
/// 28109.26500606537, to 2e-10 relative; with the C's order of additions
/// the script prints the C's value exactly, see its header).
#[test]
fn srad_matches_c_to_rounding() {
    let [(host_out, mut host), (_, mut dev)] = on_both("srad", &[], &["Computation Done"]);
    assert!(
        host_out.contains("J sum 28109.26500225067, J centre 1.532584"),
        "{host_out}"
    );
    let total = |e: &mut accl::Engine| -> f64 { e.eval_as::<f64>("total").unwrap() };
    let (h, d) = (total(&mut host), total(&mut dev));
    assert!((h - 28109.26500606537).abs() / h < 1e-9, "host J sum {h}");
    assert!((h - d).abs() / h < 1e-6, "host J sum {h}, device {d}");
}

/// 40 x 20 for 2 model seconds (2 steps): the C's mass and energy checks
/// (|d_mass| < 1e-13, |d_te| < 4.5e-5) pass on both backends.
#[test]
fn miniweather_conserves_mass_and_energy() {
    on_both(
        "miniweather",
        &["40", "20", "2"],
        &["2 steps to t = 2", "checks passed"],
    );
}
