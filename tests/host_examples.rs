//! Every `examples/*.accl` runs on the host backend, passes its own asserts
//! (files they write go to a temporary directory) and prints one summary
//! line; README.md's first code block is `examples/saxpy.accl` and prints
//! what README.md says it prints.

use std::path::PathBuf;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// An engine on the host backend whose files go to `dir` and whose printed
/// output collects in the returned string.
fn engine(dir: &std::path::Path) -> (accl::Engine, std::rc::Rc<std::cell::RefCell<String>>) {
    let out = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let o = out.clone();
    let mut e = accl::Engine::new();
    e.set_fs_access(Some(dir.to_path_buf()));
    e.set_print(move |s| o.borrow_mut().push_str(s));
    (e, out)
}

fn run(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (mut e, out) = engine(dir.path());
    if let Err(err) = e.run_file(examples_dir().join(format!("{name}.accl"))) {
        panic!("{name} failed:\n{}", err.render(100));
    }
    let s = out.borrow().clone();
    if name == "mandelbrot" {
        let png = std::fs::read(dir.path().join("mandelbrot.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(s.contains("mandelbrot.png"), "name the file written: {s:?}");
    }
    s
}

/// Every example ends by printing exactly one line, after its asserts, that
/// says what it computed: its output is that one non-empty line.
fn summary_line(name: &str, out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        out.ends_with('\n') && lines.len() == 1 && !lines[0].trim().is_empty(),
        "{name} should print exactly one summary line, printed:\n{out:?}"
    );
}

macro_rules! examples {
    ($($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                summary_line(stringify!($name), &run(stringify!($name)));
            }
        )*
        const ALL: &[&str] = &[$(stringify!($name)),*];
    };
}

examples!(
    async_join,
    column_halo,
    conv2d,
    heat,
    gram_schmidt,
    histogram,
    jacobi,
    jacobi_mpi,
    jacobi_mpi_2d,
    kmeans,
    mandelbrot,
    mandelbrot_async,
    mandelbrot_multi,
    matmul,
    nbody,
    newton,
    pi,
    reductions,
    saxpy,
    scan,
    sections,
    smoothing,
    spmv,
    unstructured,
    xsbench
);

#[test]
fn every_example_is_listed() {
    let mut found: Vec<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "accl")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    found.sort();
    let mut listed: Vec<String> = ALL.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "add new examples to tests/host_examples.rs");
}

#[test]
fn outputs() {
    assert_eq!(run("saxpy"), "saxpy: y[N-1] = 2097152 (N = 1048576)\n");
    assert_eq!(
        run("sections"),
        "sections: a[0:500] doubled, a[500:500] negated, a[N-1] = -999\n"
    );
    assert_eq!(run("pi"), "pi ~ 3.14159265 from 1000000 intervals\n");
    assert_eq!(run("smoothing"), "smoothing: y[32] = 38, norm = 16\n");
}

/// The fenced code blocks of a Markdown text, in order.
fn fenced_blocks(md: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in md.lines() {
        if line.starts_with("```") {
            match cur.take() {
                Some(b) => blocks.push(b),
                None => cur = Some(String::new()),
            }
        } else if let Some(b) = &mut cur {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
}

#[test]
fn readme_example_prints_what_readme_says() {
    let md = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .unwrap();
    let blocks = fenced_blocks(&md);
    let code = &blocks[0];
    // The block right after the code is its output; the text between the
    // two (after the code's closing fence) ends with "prints:".
    let after = &md[md.find(code.as_str()).unwrap() + code.len()..];
    let between = &after[..after[3..].find("```").unwrap() + 3];
    assert!(
        between.trim_end().ends_with("prints:"),
        "README.md: the first code block should be followed by a \"prints:\" block"
    );
    let expected = &blocks[1];
    let saxpy = std::fs::read_to_string(examples_dir().join("saxpy.accl")).unwrap();
    assert_eq!(
        code, &saxpy,
        "README.md's first code block should be examples/saxpy.accl"
    );
    let dir = tempfile::tempdir().unwrap();
    let (mut e, out) = engine(dir.path());
    if let Err(err) = e.eval_source("README.md", code) {
        panic!("README.md's example failed:\n{}", err.render(100));
    }
    let printed = out.borrow().clone();
    assert_eq!(
        &printed, expected,
        "README.md's example prints something else"
    );
}
