//! `import "file.accl";`: a file's functions, constants and variables
//! shared between scripts, each file run once, with diagnostics that quote
//! the file they are in; on both backends, through `accl run`, `accl
//! check`, the embedding API and the REPL's engine.

use crate::common;
use std::path::Path;
use std::process::Command;

/// A C-style generator on global state, and a file that uses it.
fn library(dir: &Path) {
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/rng.accl"),
        "// C's rand(): one global seed.
let seed: i64 = 1;
let loaded = 0;
loaded += 1;
const M = 2147483648;
fn rand_int() -> i32 {
    seed = (seed * 1103515245 + 12345) % M;
    return seed as i32;
}
fn scale(x: f32) -> f32 { return x * 2.0f32; }
",
    )
    .unwrap();
    std::fs::write(
        dir.join("lib/fill.accl"),
        "import \"rng.accl\";
fn fill(a: i32[]) {
    for i in 0..len(a) { a[i] = rand_int() % 100; }
}
",
    )
    .unwrap();
}

fn accl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_accl"))
}

#[test]
fn an_imported_generator_gives_cs_sequence_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    // Both imports reach rng.accl: it runs once (`loaded` is 1) and its
    // seed is shared. seed1 = 1103515245 + 12345 = 1103527590;
    // seed2 = (1103527590 * 1103515245 + 12345) mod 2^31 = 377401575.
    let main = dir.path().join("main.accl");
    std::fs::write(
        &main,
        "import \"lib/rng.accl\";
import \"lib/fill.accl\";
let first = rand_int();
let second = rand_int();
let a = zeros(i32, 3);
fill(a);
let b = zeros(f32, 4);
parallel loop for i in 0..4 { b[i] = scale(i as f32); }
println(first, \" \", second, \" \", loaded, \" \", b[3]);
",
    )
    .unwrap();
    for backend in [&["run", "--host"][..], &["run"][..]] {
        let out = accl().args(backend).arg(&main).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "1103527590 377401575 1 6\n"
        );
    }
    let out = accl().arg("check").arg(&main).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_engine_keeps_what_an_input_imported() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    for device in [false, true] {
        let mut e = common::engine(device);
        let rng = dir.path().join("lib/rng.accl");
        e.eval(&format!("import \"{}\";", rng.display())).unwrap();
        assert_eq!(
            e.eval("rand_int()").unwrap().unwrap().to_string(),
            "1103527590"
        );
        // Imported again (and through another file): not run again, so
        // the seed goes on and `loaded` stays 1.
        let fill = dir.path().join("lib/fill.accl");
        e.eval(&format!(
            "import \"{}\";\nimport \"{}\";\nlet a = zeros(i32, 1);\nfill(a);",
            rng.display(),
            fill.display()
        ))
        .unwrap();
        // 377401575 % 100 = 75.
        assert_eq!(e.eval("a[0]").unwrap().unwrap().to_string(), "75");
        assert_eq!(e.get::<i32>("loaded"), Some(1));
    }
}

#[test]
fn import_errors_are_located_in_the_file_they_are_in() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("broken.accl"),
        "fn broken() -> i32 { return 1.5; }\n",
    )
    .unwrap();
    std::fs::write(d.join("a.accl"), "import \"b.accl\";\n").unwrap();
    std::fs::write(d.join("b.accl"), "import \"a.accl\";\n").unwrap();
    let cases = [
        (
            "import \"nope.accl\";\n",
            "accl::import::not_found",
            "main.accl:1:1",
        ),
        ("import \"a.accl\";\n", "accl::import::cycle", "b.accl:1:1"),
        (
            "let x = 1;\nimport \"a.accl\";\n",
            "accl::import::placement",
            "main.accl:2:1",
        ),
        (
            "import \"broken.accl\";\nprintln(broken());\n",
            "accl::type::mismatch",
            "broken.accl:1:29",
        ),
    ];
    for (src, code, place) in cases {
        let main = d.join("main.accl");
        std::fs::write(&main, src).unwrap();
        for cmd in [&["run", "--host"][..], &["check"][..]] {
            let out = accl()
                .args(cmd)
                .arg("main.accl")
                .current_dir(d)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{src}: {err}");
            assert!(err.contains(code), "{src}: {err}");
            assert!(err.contains(place), "{src}: {err}");
        }
    }
    // The cycle names its files in order.
    std::fs::write(d.join("main.accl"), "import \"a.accl\";\n").unwrap();
    let out = accl()
        .args(["run", "--host", "main.accl"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("an import cycle: a.accl → b.accl → a.accl"),
        "{err}"
    );
}

#[test]
fn explain_reports_the_importing_files_constructs() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    let main = dir.path().join("main.accl");
    let src = "import \"lib/rng.accl\";
let b = zeros(f32, 8);
parallel loop for i in 0..8 { b[i] = scale(i as f32); }
";
    std::fs::write(&main, src).unwrap();
    let r = accl::cli::explain_text(&main.display().to_string(), src, None)
        .expect("the script checks with its import");
    assert!(r.contains("line 3"), "{r}");
}

#[test]
fn time_names_interpreted_code_in_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("lib")).unwrap();
    std::fs::write(
        d.join("lib/slow.accl"),
        "// line 1\nfn slow() -> i32 {\n  let s = 0;\n  for i in 0..3 { assert(i < 5); s += i; }\n  return s;\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("main.accl"),
        "import \"lib/slow.accl\";\nprintln(slow());\n",
    )
    .unwrap();
    let out = accl()
        .args(["run", "--host", "--time", "main.accl"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3\n");
    assert!(
        err.contains("interpreted: function `slow` at line 4 of lib/slow.accl"),
        "{err}"
    );
}
