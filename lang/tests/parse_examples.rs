use std::path::PathBuf;

fn example_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "accl"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_parses() {
    let files = example_files();
    assert!(files.len() >= 10);
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let (prog, diags) = lang::parse(&src);
        let source = lang::Source::new(f.display().to_string(), src.clone());
        assert!(
            diags.is_empty(),
            "{}",
            lang::diag::render_plain(&source, &diags, 80)
        );
        assert!(!prog.stmts.is_empty());
    }
}
