//! The code of README.md and docs/*.md does what the text says. Each Rust
//! snippet is written here as Rust, so the compiler checks it against the
//! public API, and must match its block in the doc token for token
//! (comments and white space aside); the snippets run. The accl code
//! blocks of docs/language.md run on the host reference and the device,
//! and the error codes of docs/embedding.md's table come out where it
//! says.

use std::path::PathBuf;

fn doc(name: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The fenced code blocks of `md` with their info string (`rust`, `toml`,
/// or empty), indented ones included (their indentation removed).
fn fenced_blocks(md: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut cur: Option<(String, usize, String)> = None;
    for line in md.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some(info) = t.strip_prefix("```") {
            match cur.take() {
                Some((info, _, body)) => blocks.push((info, body)),
                None => cur = Some((info.trim().to_string(), indent, String::new())),
            }
        } else if let Some((_, ind, body)) = &mut cur {
            body.push_str(line.get(*ind..).unwrap_or(""));
            body.push('\n');
        }
    }
    blocks
}

/// Rust text without `//` comments and white space, for comparing a doc's
/// block with `stringify!` of the same code.
fn tokens(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            // No snippet has `//` inside a string literal.
            Some(i) => &l[..i],
            None => l,
        })
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Assert that one of the `rust` blocks of `file` is `code`.
fn in_doc(file: &str, code: &str) {
    let md = doc(file);
    let want = tokens(code);
    let found = fenced_blocks(&md)
        .iter()
        .any(|(info, body)| info == "rust" && tokens(body) == want);
    assert!(
        found,
        "{file} has no `rust` block with this code (update the doc or this test):\n{code}"
    );
}

/// The code and its text: `snippet!(name, |params| { code } then { more })`
/// defines `fn name(params) -> Result<(), accl::Error>` running `code`
/// then `more` (which sees `code`'s variables), and the constant
/// `name::TEXT`, the text of `code` alone.
macro_rules! snippet {
    ($name:ident, |$($p:ident: $t:ty),*| { $($body:tt)* } $(then { $($more:tt)* })?) => {
        mod $name {
            pub const TEXT: &str = stringify!($($body)*);
        }
        #[allow(unused_variables, clippy::unnecessary_wraps)]
        fn $name($($p: $t),*) -> Result<(), accl::Error> {
            $($body)*
            $($($more)*)?
            Ok(())
        }
    };
}

snippet! { readme_embedding, |out: &mut Vec<f32>| {
    let mut e = accl::Engine::vulkan(0)?; // or Engine::new() for the host backend
    e.set_array("x", vec![1.0f32, 2.0, 3.0], &[3])?;
    e.eval("parallel loop for i in 0..3 { x[i] = x[i] * 2.0; }")?;
    let (x, shape) = e.get_array::<f32>("x").unwrap();
} then {
    assert_eq!(shape, [3]);
    *out = x;
}}

#[test]
fn readme_embedding_snippet_compiles_and_runs() {
    in_doc("README.md", readme_embedding::TEXT);
    // A device engine as the tests open them (validation on), held while
    // the snippet opens its own.
    let _held = crate::common::device_engine();
    let mut x = Vec::new();
    readme_embedding(&mut x).unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(x, [2.0, 4.0, 6.0]);
}

snippet! { compile_once, |engine: &mut accl::Engine| {
    engine.set_array("u", vec![0.0f64; 100], &[100])?;
    engine.eval("fn relax(u: f64[], i: i32) -> f64 { return 0.5 * (u[i - 1] + u[i + 1]); } u[99] = 1.0; let iters = 0;")?;
    let step = engine.compile("for i in 1..len(u) - 1 { u[i] = relax(u, i); } iters += 1;")?;
    for _ in 0..100 {
        engine.run(&step)?;
    }
}}

#[test]
fn embedding_compile_snippet_compiles_and_runs() {
    in_doc("docs/embedding.md", compile_once::TEXT);
    let mut e = accl::Engine::new();
    compile_once(&mut e).unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(e.get::<i32>("iters"), Some(100));
    let (u, _) = e.get_array::<f64>("u").unwrap();
    assert!(u[98] > 0.5 && u[1] > 0.0, "the relaxation ran: {u:?}");
}

snippet! { foreign_array, |e: &mut accl::Engine| {
    let mut mem = vec![1.0f32, 2.0, 3.0, 4.0];
    // SAFETY: `mem` outlives the array (the engine `e` lets go of it with the
    // variable), and is read only between engine calls.
    let a = unsafe { accl::Array::from_foreign(mem.as_mut_ptr(), vec![2, 2], Box::new(())) }.unwrap();
    e.set_array_handle("m", a);
    e.eval("m[1, 0] = m[0, 1] * 10.0;")?;
    e.remove("m");
    assert_eq!(mem, [1.0, 2.0, 20.0, 4.0]);
}}

#[test]
fn embedding_foreign_array_snippet_compiles_and_runs() {
    in_doc("docs/embedding.md", foreign_array::TEXT);
    foreign_array(&mut accl::Engine::new()).unwrap_or_else(|e| panic!("{}", e.render(100)));
    // What the snippet's SAFETY comment relies on: removing the variable
    // drops the engine's last handle, and with it the owner.
    let owner = std::sync::Arc::new(());
    let mut mem = vec![0i32; 3];
    // SAFETY: `mem` outlives the engine, which holds the array.
    let a =
        unsafe { accl::Array::from_foreign(mem.as_mut_ptr(), vec![3], Box::new(owner.clone())) }
            .unwrap();
    let mut e = accl::Engine::new();
    e.set_array_handle("m", a);
    e.eval("m[2] = len(m) as i32 * 7;").unwrap();
    assert_eq!(std::sync::Arc::strong_count(&owner), 2);
    e.remove("m");
    assert_eq!(std::sync::Arc::strong_count(&owner), 1);
    drop(e);
    assert_eq!(mem, [0, 0, 21]);
}

snippet! { register, |engine: &mut accl::Engine| {
    engine.register_fn("tag", |s: &str, n: i32| format!("{s}_{n:04}"));
    engine.register_fn("scale", |x: &mut [f32], k: f32| x.iter_mut().for_each(|v| *v *= k));
    engine.register_fn("squares", |n: i32| (0..n).map(|i| i * i).collect::<Vec<i32>>());
    engine.register_fn("checked_sqrt", |x: f64| if x < 0.0 { Err("negative") } else { Ok(x.sqrt()) });
}}

#[test]
fn embedding_register_snippet_compiles_and_runs() {
    in_doc("docs/embedding.md", register::TEXT);
    let mut e = accl::Engine::new();
    register(&mut e).unwrap();
    e.eval(
        "let t = tag(\"heat\", 7); let a = ones(f32, 3); scale(a, 2.5); \
         let q = squares(4); let r = checked_sqrt(16.0);",
    )
    .unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert_eq!(e.get_str("t").as_deref(), Some("heat_0007"));
    assert_eq!(e.get_array::<f32>("a").unwrap().0, [2.5; 3]);
    assert_eq!(e.get_array::<i32>("q").unwrap().0, [0, 1, 4, 9]);
    assert_eq!(e.get::<f64>("r"), Some(4.0));
    let err = e.eval("checked_sqrt(-1.0)").unwrap_err();
    assert_eq!(err.code(), "accl::run::host_function");
}

snippet! { host_data, |e: &mut accl::Engine| {
    e.register_fn("fill_device", move |b: accl::DeviceBuffer, x: f32| {
        // record work on b.buffer with your own Vulkan code, on vd's queue, and wait
    });
    e.eval("data copyin(a) { host_data use_device(a) { fill_device(a, 2.5); } update self(a); }")?;
}}

#[test]
fn embedding_host_data_snippet_compiles_and_runs() {
    in_doc("docs/embedding.md", host_data::TEXT);
    let mut e = crate::common::device_engine();
    e.set_array("a", vec![1.0f32; 16], &[16]).unwrap();
    host_data(&mut e).unwrap_or_else(|e| panic!("{}", e.render(100)));
    assert!(e.take_validation_messages().is_empty());
}

/// The error codes of embedding.md's table of the API's own codes, each
/// from the case the table gives.
#[test]
fn embedding_error_codes_come_where_the_table_says() {
    let md = doc("docs/embedding.md");
    let mut e = accl::Engine::new();
    e.eval("let x = 1.5; fn f(n: i64) -> i64 { return n; }")
        .unwrap();
    let cases: Vec<(&str, accl::Error)> = vec![
        ("accl::api::type", e.eval_as::<i32>("x").unwrap_err()),
        (
            "accl::api::argument",
            e.call_fn("f", &[accl::Val::Scalar(accl::lang::Value::IntLit(1))])
                .unwrap_err(),
        ),
        (
            "accl::engine::bad_shape",
            e.set_array("m", vec![1.0f32; 5], &[2, 3]).unwrap_err(),
        ),
        (
            "accl::run::io",
            e.run_file("/nonexistent/dir/script.accl").unwrap_err(),
        ),
        (
            "accl::type::not_an_expression",
            e.type_of("let y = 1;").unwrap_err(),
        ),
        ("accl::api::vulkan", e.vulkan_device().unwrap_err()),
    ];
    for (code, err) in cases {
        assert_eq!(err.code(), code, "{}", err.render(100));
        assert!(md.contains(&format!("`{code}`")), "{code} is in the doc");
    }
    // A program whose variable changed type.
    let p = e.compile("x += 1.0;").unwrap();
    e.eval("let x = 1;").unwrap();
    assert_eq!(e.run(&p).unwrap_err().code(), "accl::api::stale_program");
    // `Display` is `code: message at file:line:col`.
    let err = e.eval("let z = 1;\nlet w = 1 / 0;").unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}: ", err.code())) && shown.contains(" at <input "),
        "{shown}"
    );
}

/// The accl blocks of language.md (the tuple example and the CSR SpMV),
/// with the declarations they assume, run on both backends alike.
#[test]
fn language_reference_blocks_run() {
    let md = doc("docs/language.md");
    let blocks: Vec<String> = fenced_blocks(&md)
        .into_iter()
        .filter(|(info, body)| info.is_empty() && (body.contains("fn ") || body.contains("for ")))
        .map(|(_, body)| body)
        .collect();
    let tuples = blocks
        .iter()
        .find(|b| b.contains("fn divmod"))
        .expect("the tuple example");
    let spmv = blocks
        .iter()
        .find(|b| b.contains("rowptr[i + 1]"))
        .expect("the SpMV example");
    let tuples = format!(
        "fn minmax(a: f32, b: f32) -> (f32, f32) {{ return (min(a, b), max(a, b)); }}\n\
         let lo = zeros(f32, 2); let hi = zeros(f32, 2);\n\
         let a = [1.0f32, 5.0]; let b = [3.0f32, 2.0]; let i = 1;\n\
         {tuples}\
         assert(q == 2 && r == 3 && ok && q2 == 4 && x == 0.5 && n == 7, \"tuples\");\n\
         assert(lo[1] == 2.0 && hi[1] == 5.0, \"minmax\");\n"
    );
    let spmv = format!(
        "let nrows = 100;\n\
         let rowptr = zeros(i32, nrows + 1);\n\
         for r in 0..nrows {{ rowptr[r + 1] = rowptr[r] + 3; }}\n\
         let cols = zeros(i32, 3 * nrows);\n\
         for k in 0..3 * nrows {{ cols[k] = k % nrows; }}\n\
         let vals = full(f32, 1.0, 3 * nrows);\n\
         let x = full(f32, 2.0, nrows);\n\
         let y = zeros(f32, nrows);\n\
         {spmv}\
         for r in 0..nrows {{ assert(y[r] == 6.0, \"y\"); }}\n"
    );
    for src in [tuples, spmv] {
        crate::common::same_as_host(&src, crate::common::Floats::Exact);
    }
}

/// The import example of language.md: its library block saved as
/// `lib/rng.accl`, its script beside it, run on both backends; the
/// script's ten values are C's `rand() % 10` for seed 1.
#[test]
fn language_import_example_runs() {
    let md = doc("docs/language.md");
    let blocks: Vec<String> = fenced_blocks(&md)
        .into_iter()
        .filter(|(info, _)| info == "accl")
        .map(|(_, body)| body)
        .collect();
    let lib = blocks
        .iter()
        .find(|b| b.starts_with("// lib/rng.accl"))
        .expect("the library block");
    let main = blocks
        .iter()
        .find(|b| b.starts_with("import \"lib/rng.accl\";"))
        .expect("the importing block");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("lib/rng.accl"), lib).unwrap();
    let script = dir.path().join("main.accl");
    std::fs::write(&script, main).unwrap();
    // seed1 = 1103527590, seed2 = 377401575: 0 and 5.
    for device in [false, true] {
        let mut e = crate::common::engine(device);
        let out = e.run_file(&script);
        assert!(out.is_ok(), "{:?}", out.err().map(|e| e.render(100)));
        assert_eq!(
            e.eval("a[0] * 10 + a[1]").unwrap().unwrap().to_string(),
            "5"
        );
    }
}
