//! Spellings brought from OpenACC C and NumPy: each syntax error names
//! accl's spelling, and a syntax error does not hide the type errors after
//! it.

use lang::parse;

/// The one diagnostic of `src`: (code, help).
fn one(src: &str) -> (String, String) {
    let (_, d) = parse(src);
    assert_eq!(d.len(), 1, "{src}: {d:#?}");
    (d[0].code.to_string(), d[0].help.clone().unwrap_or_default())
}

#[test]
fn each_habit_names_the_accl_spelling() {
    let cases = [
        ("let x = 0;\nx++;\n", "x += 1"),
        ("let x = 0;\nx--;\n", "x -= 1"),
        ("let x = 3;\nlet y = x ** 2;\n", "pow(x, 2.0)"),
        ("int x = 3;\n", "let x: i32 = ..;"),
        ("double y = 3.0;\n", "let y: f64 = ..;"),
        ("let y = 2.5;\nlet x = (int) y;\n", "x as i32"),
        ("let y = 2;\nlet x = (f64) y;\n", "x as f64"),
        ("let a = [1, 2];\nlet s = a.sum();\n", "`sum(a)`"),
        ("let a = [1, 2];\nlet s = a.max();\n", "`maxval(a)`"),
        (
            "let a = [1, 2];\nlet s = a.reshape(2, 1);\n",
            "`reshape(a, ..)`",
        ),
        ("let a = [1, 2];\nlet s = a.size;\n", "`len(a)`"),
        (
            "let n = 3;\nfor (let i = 0; i < n; i = i + 1) { println(i); }\nprintln(n);\n",
            "for i in lo..hi",
        ),
    ];
    for (src, want) in cases {
        let (_, help) = one(src);
        assert!(help.contains(want), "{src}: help {help:?} lacks {want:?}");
    }
}

#[test]
fn a_pragma_is_one_error_and_the_construct_after_it_parses() {
    let src = "let a = zeros(f32, 4);\n#pragma acc parallel loop\nfor i in 0..4 { a[i] = 1.0; }\n";
    let (p, d) = parse(src);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].code, "accl::parse::pragma");
    assert!(d[0]
        .help
        .as_deref()
        .unwrap_or("")
        .contains("parallel loop for"));
    // The construct after the pragma is in the tree: two statements.
    assert_eq!(p.stmts.len(), 2);
}

#[test]
fn type_errors_after_a_syntax_error_are_reported() {
    let b = lang::Builtins::default();
    // Line 2 does not parse; line 3 is an i32 given a float, line 4 a
    // use of the name line 2 would have declared (not reported).
    let src = "let x = 3;\nint y = x ** 2;\nlet z: i32 = 1.5;\nlet w = y + 1;\n";
    let d = lang::check_source(src, &b).unwrap_err();
    let codes: Vec<&str> = d.iter().map(|d| d.code).collect();
    assert_eq!(codes.len(), 2, "{d:#?}");
    assert_eq!(codes[0], "accl::parse::unexpected_token");
    assert!(codes[1].starts_with("accl::type::"), "{codes:?}");
    assert_eq!(d[1].span().start as usize, src.find("1.5").unwrap());
}
