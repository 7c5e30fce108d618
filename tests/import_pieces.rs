//! Direct copies of host arrays imported in pieces.
//!
//! A host array larger than one import (past the device's
//! `maxMemoryAllocationSize`, 4 GiB on NVIDIA) is imported piece by piece,
//! so its copies go straight too. This binary sets `ACCL_IMPORT_PIECE` to
//! 64 KiB, so arrays of a few hundred KiB take that path on lavapipe: whole
//! arrays, sections that start and end inside pieces, and async copies,
//! checked against known answers and the host reference.

mod common;
use common::{same_as_host, Floats};

fn small_pieces() {
    common::set_env_once(&[("ACCL_IMPORT_PIECE", "65536")]);
}

const SRC: &str = "
const N = 200003;
let x = rand(f32, 5, N);
let want = clone(x);
let y = zeros(f32, N);
enter data copyin(x) create(y);
parallel loop present(x, y) for i in 0..N { y[i] = 2.0f32 * x[i]; }
update self(y);
for i in 0..N { assert(y[i] == 2.0f32 * want[i], \"whole array up and down\"); }
// Sections that start and end inside pieces.
for i in 0..N { x[i] = i as f32; }
update device(x[1001:150000]);
parallel loop present(x) for i in 0..N { x[i] = x[i] + 1.0f32; }
update self(x[5:190000]);
for i in 0..5 { assert(x[i] == i as f32, \"rows before the section stay\"); }
for i in 5..190005 {
    let dev = want[i];
    if i >= 1001 && i < 151001 { dev = i as f32; }
    assert(x[i] == dev + 1.0f32, \"section copied through pieces\");
}
// Async copies through pieces.
for i in 0..N { x[i] = (i % 97) as f32; }
update device(x) async(1);
parallel loop present(x, y) async(1) for i in 0..N { y[i] = x[i] * 3.0f32; }
update self(y) async(1);
wait(1);
for i in 0..N { assert(y[i] == ((i % 97) * 3) as f32, \"async through pieces\"); }
exit data delete(x, y);
println(\"pieces ok\");
";

#[test]
fn copies_through_imported_pieces_equal_the_host_reference() {
    small_pieces();
    let (host, dev) = same_as_host(SRC, Floats::Exact);
    for r in [&host, &dev] {
        assert!(r.out.borrow().contains("pieces ok"));
    }
}

#[test]
fn large_copies_of_the_pieces_go_straight() {
    small_pieces();
    let names: Vec<String> = common::trace_events(SRC)
        .iter()
        .filter(|x| x["cat"] == "copy")
        .map(|x| x["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(names.iter().any(|n| n == "upload direct"), "{names:?}");
    assert!(names.iter().any(|n| n == "download direct"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "upload" || n == "download"),
        "a large copy was staged: {names:?}"
    );
}
