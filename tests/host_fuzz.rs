//! No input makes the interpreter panic: every example with its integer
//! literals replaced by awkward values (0, -1, huge, ...) either runs or
//! fails with a diagnostic, under an operation limit.

use std::panic::{catch_unwind, AssertUnwindSafe};

// (No huge values: an 8 GiB array would be legal, and slow to copy in a test.)
const VALUES: &[&str] = &["0", "1", "-1", "2", "3", "7", "255", "4096", "100000"];

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Byte ranges of the decimal integer literals of `src`.
fn int_literals(src: &str) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.'))
        {
            let s = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'.' || b[i].is_ascii_alphabetic()) {
                continue;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn mutated_examples_never_panic() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut runs = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.extension().is_none_or(|e| e != "accl") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let lits = int_literals(&src);
        for _ in 0..25 {
            let mut m = src.clone();
            // Replace two literals (from the back so that offsets stay valid).
            let mut picks: Vec<(usize, usize)> = (0..2)
                .map(|_| lits[rng.next() as usize % lits.len()])
                .collect();
            picks.sort();
            picks.dedup();
            for &(s, e) in picks.iter().rev() {
                m.replace_range(s..e, VALUES[rng.next() as usize % VALUES.len()]);
            }
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut e = accl::Engine::new();
                e.set_max_operations(200_000);
                e.set_print(|_| {});
                let _ = e.eval(&m);
            }));
            assert!(r.is_ok(), "panicked on a mutation of {}:\n{m}", p.display());
            runs += 1;
        }
    }
    assert!(runs >= 250);
}
