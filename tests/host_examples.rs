//! Every `examples/*.accl` runs on the host backend and passes its own
//! asserts (files they write go to a temporary directory).

use std::path::PathBuf;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn run(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let o = out.clone();
    let mut e = accl::Engine::new();
    e.set_fs_access(Some(dir.path().to_path_buf()));
    e.set_print(move |s| o.borrow_mut().push_str(s));
    if let Err(err) = e.run_file(examples_dir().join(format!("{name}.accl"))) {
        panic!("{name} failed:\n{}", err.render(100));
    }
    if name == "mandelbrot" {
        let png = std::fs::read(dir.path().join("mandelbrot.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
    let s = out.borrow().clone();
    s
}

macro_rules! examples {
    ($($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                run(stringify!($name));
            }
        )*
        const ALL: &[&str] = &[$(stringify!($name)),*];
    };
}

examples!(
    async_join,
    gram_schmidt,
    histogram,
    jacobi,
    mandelbrot,
    mandelbrot_async,
    mandelbrot_multi,
    matmul,
    pi,
    reductions,
    saxpy,
    sections,
    spmv,
    unstructured
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
    assert_eq!(run("saxpy"), "saxpy ok: y[N-1] = 2097152\n");
    assert_eq!(run("sections"), "sections ok\n");
    assert!(run("pi").starts_with("pi ~ 3.14159265"));
}
