//! Every example type-checks against the real builtin table: the
//! repository's `examples/` and, where it exists (dev machines and CI), the
//! shared `../shared/examples/` beside the repository.
use std::path::{Path, PathBuf};

fn check_dir(dir: &Path) -> usize {
    let b = stdlib::builtins();
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|e| e != "accl") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let source = lang::Source::new(p.display().to_string(), src.clone());
        match lang::check_source(&src, &b) {
            Ok(c) => assert!(
                c.warnings.is_empty(),
                "{}",
                lang::diag::render_plain(&source, &c.warnings, 80)
            ),
            Err(d) => panic!("{}", lang::diag::render_plain(&source, &d, 80)),
        }
        n += 1;
    }
    n
}

#[test]
fn every_example_checks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    assert!(check_dir(&dir) >= 10);
}

#[test]
fn every_shared_example_checks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/examples");
    if !dir.is_dir() {
        eprintln!("{} not found: skipped", dir.display());
        return;
    }
    assert!(check_dir(&dir) >= 1);
}
