//! Diagnostics snapshots of the clause forms and default data attributes
//! that are still refused (see diagnostics.rs for the harness this copies).

use lang::diag::render_plain;
use lang::{Diag, Source};

fn diagnose(src: &str) -> Vec<Diag> {
    let (ast, mut diags) = lang::parse(src);
    if diags.is_empty() {
        diags = match lang::check(&ast, src, &stdlib::builtins(), &[]) {
            Ok(c) => c.warnings,
            Err(d) => d,
        };
    }
    diags
}

/// Check `src`, assert its first error has `code`, snapshot the rendering.
fn case(name: &str, code: &str, src: &str) {
    let diags = diagnose(src);
    let rendered = render_plain(&Source::new("test.accl", src), &diags, 80);
    let first = diags.iter().find(|d| d.is_error()).unwrap_or_else(|| {
        panic!("{name}: expected an error `{code}`, got none:\n{rendered}");
    });
    assert_eq!(
        first.code, code,
        "{name}: wrong primary diagnostic:\n{rendered}"
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_description(src);
    settings.bind(|| insta::assert_snapshot!(name, rendered));
}

macro_rules! cases {
    ($( $name:ident : $code:literal => $src:expr ;)*) => {
        $(
            #[test]
            fn $name() {
                case(stringify!($name), $code, $src);
            }
        )*
    };
}

cases! {
    firstprivate_default_assigned_in_parallel_loop: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet last = 0.0f32;\nparallel {\n    loop gang for i in 0..8 {\n        last = a[i];\n    }\n}\n";
    kernels_scalar_assigned_in_independent_loop: "accl::device::race" =>
        "let a = zeros(f32, 8);\nlet last = 0.0f32;\nkernels loop independent for i in 0..8 {\n    last = a[i];\n}\n";
    tile_star_outside_tile: "accl::device::clause_arguments" =>
        "let a = zeros(f32, 8);\nparallel loop collapse(*) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    gang_dim_out_of_range: "accl::device::gang_dim" =>
        "let a = zeros(f32, 8);\nparallel num_gangs(2, 2) {\n    loop gang(dim: 4) for i in 0..8 {\n        a[i] = 0.0;\n    }\n}\n";
    num_gangs_of_four_dimensions: "accl::device::clause_arguments" =>
        "let a = zeros(f32, 8);\nparallel loop num_gangs(2, 2, 2, 2) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
    collapse_force_with_a_statement_after: "accl::device::collapse_depth" =>
        "let a = zeros(f32, 8, 8);\nparallel loop collapse(force: 2) for i in 0..8 {\n    for j in 0..8 {\n        a[i, j] = 0.0;\n    }\n    a[i, 0] = 1.0;\n}\n";
    private_array_section: "accl::device::private_array" =>
        "let n = 8;\nlet c = zeros(f32, n);\nparallel loop private(c[0:n]) for i in 0..n {\n    c[0] = 1.0;\n}\n";
    tile_of_nine_loops: "accl::device::tile_value" =>
        "let a = zeros(f32, 8);\nparallel loop tile(1, 1, 1, 1, 1, 1, 1, 1, 1) for i in 0..8 {\n    a[i] = 0.0;\n}\n";
}
