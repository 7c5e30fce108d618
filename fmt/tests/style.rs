//! The canonical layout on small inputs: known answers.

use accl_fmt::format_source;

fn fmt(src: &str) -> String {
    let out = format_source(src).unwrap_or_else(|d| panic!("{src}: {d:?}"));
    assert_eq!(format_source(&out).unwrap(), out, "not idempotent");
    out
}

#[test]
fn spaces_around_operators_none_inside_brackets() {
    assert_eq!(
        fmt("let x=a[i+1,j]*f( 2,-y )-(-3);"),
        "let x = a[i + 1, j] * f(2, -y) - (-3);\n"
    );
    assert_eq!(fmt("let b=!(x<3)&&y!=2;"), "let b = !(x < 3) && y != 2;\n");
    assert_eq!(
        fmt("let t : f32[ , ] = zeros(f32,2,2);"),
        "let t: f32[,] = zeros(f32, 2, 2);\n"
    );
    assert_eq!(
        fmt("let m=i32 :: MAX;let y=x as f32-1.0;"),
        "let m = i32::MAX;\nlet y = x as f32 - 1.0;\n"
    );
}

#[test]
fn blocks_statements_and_blank_lines() {
    let src = "\n\nfn f(a:i32)->i32{\n\n  if a>0{return a;}\n  else\n  {\n return -a;}\n\n\n}\nlet x=1;let y=2;\n\n\n\nfor i in 0 .. n{}\n";
    assert_eq!(
        fmt(src),
        "fn f(a: i32) -> i32 {\n    if a > 0 {\n        return a;\n    } else {\n        return -a;\n    }\n}\nlet x = 1;\nlet y = 2;\n\nfor i in 0..n {}\n"
    );
}

#[test]
fn directives_clauses_and_sections() {
    let src = "parallel loop copyin( a[0 : n] ) reduction( + : s ) if(n>1) tile(*,2)\n  for i in 0..n { s+=a[i]; }\ndata copy(b[:n]) { update host(b[ : ]); }\n";
    assert_eq!(
        fmt(src),
        "parallel loop copyin(a[0:n]) reduction(+: s) if(n > 1) tile(*, 2)\nfor i in 0..n {\n    s += a[i];\n}\ndata copy(b[:n]) {\n    update host(b[:]);\n}\n"
    );
    assert_eq!(
        fmt("loop gang for i in 0..n { atomic x max = a[i]; }"),
        "loop gang for i in 0..n {\n    atomic x max= a[i];\n}\n"
    );
    assert_eq!(fmt("if (a) { wait (1); }"), "if (a) {\n    wait(1);\n}\n");
}

#[test]
fn continuation_lines_are_kept_and_indented() {
    let src = "parallel loop copyin(a)\nreduction(+: s)\n        for i in 0..n {\n  println(\"x\", 1,\n\"y\");\n}\n";
    assert_eq!(
        fmt(src),
        "parallel loop copyin(a)\n    reduction(+: s)\nfor i in 0..n {\n    println(\"x\", 1,\n        \"y\");\n}\n"
    );
}

#[test]
fn comments_are_kept() {
    let src = "// head\n\n\nlet a = 1; // one\nlet bb = 22;   // two\n  /* block\n     more */\nfn f() {\n\n    // only a comment\n\n}\nlet c = f(/* x */ 1);\n// tail\n";
    assert_eq!(
        fmt(src),
        "// head\n\nlet a = 1;    // one\nlet bb = 22;  // two\n/* block\n     more */\nfn f() {\n    // only a comment\n}\nlet c = f(/* x */ 1);\n// tail\n"
    );
}

#[test]
fn shebang_and_empty_input() {
    assert_eq!(
        fmt("#!/usr/bin/env accl run\nlet x=1;"),
        "#!/usr/bin/env accl run\nlet x = 1;\n"
    );
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("\n\n// c\n\n"), "// c\n");
}

#[test]
fn input_that_does_not_parse_is_refused() {
    let d = format_source("let x = ;").unwrap_err();
    assert!(d.iter().any(|d| d.is_error()));
    assert!(format_source("let s = \"open;").is_err());
}

#[test]
fn cut_or_damaged_scripts_never_panic_and_what_formats_is_stable() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut tried = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "accl") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let cuts = (0..src.len())
            .step_by(29)
            .filter(|&k| src.is_char_boundary(k));
        for k in cuts {
            let next = src[k..].chars().next().map_or(0, char::len_utf8);
            for damaged in [
                src[..k].to_string(),
                format!("{}{}", &src[..k], &src[k + next..]),
            ] {
                tried += 1;
                if let Ok(out) = format_source(&damaged) {
                    assert_eq!(
                        format_source(&out).as_ref(),
                        Ok(&out),
                        "{}: cut at {k}",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(tried > 500, "{tried}");
}

#[test]
fn tuple_types_returns_and_destructurings() {
    assert_eq!(
        fmt("fn f(x:f64)->(f64,i32){return(x,2);}\nlet(a,_)=f( 1.0 );\n(a ,b[ i ])=( b[i],a );"),
        "fn f(x: f64) -> (f64, i32) {\n    return (x, 2);\n}\nlet (a, _) = f(1.0);\n(a, b[i]) = (b[i], a);\n"
    );
}
