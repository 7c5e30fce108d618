//! `accl fmt` keeps meaning: every script of the repository (and of the
//! shared examples, where present) formats to a program with the same
//! syntax tree (spans aside), formatting is idempotent, a script whose white
//! space was scrambled formats to the same text, and formatted examples print
//! what the originals print on the host reference and on the device. The
//! repository's own scripts are in the canonical layout.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn accl_files(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && recursive {
            accl_files(&p, true, out);
        } else if p.extension().is_some_and(|x| x == "accl") {
            out.push(p);
        }
    }
}

/// Every script the formatter is tried on.
fn corpus() -> Vec<PathBuf> {
    let mut v = Vec::new();
    accl_files(&root().join("examples"), false, &mut v);
    accl_files(&root().join("tests"), true, &mut v);
    // The shared examples of this workspace, when the checkout has them.
    accl_files(&root().join("../shared/examples"), false, &mut v);
    v.sort();
    v
}

/// The syntax tree of `src` with every span blanked: equal trees mean the
/// same program.
fn tree(src: &str) -> String {
    let (prog, diags) = lang::parse(src);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    let text = format!("{prog:?}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Span { start: ") {
        out.push_str(&rest[..at]);
        out.push_str("Span");
        let end = rest[at..].find('}').expect("a span ends");
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

/// `src` with its white space disordered in every way the layout undoes:
/// no or two spaces between tokens, odd indentation, extra blank lines.
/// Line breaks and comments stay where they are.
fn scramble(src: &str) -> String {
    if src.starts_with("#!") {
        let end = src.find('\n').map_or(src.len(), |i| i + 1);
        return format!("{}{}", &src[..end], scramble(&src[end..]));
    }
    let lexed = lang::lexer::lex(src);
    let mut out = String::new();
    let mut at = 0;
    for (i, &(start, _, end)) in lexed.tokens.iter().enumerate() {
        let gap = &src[at..start];
        if gap.contains("//") || gap.contains("/*") {
            out.push_str(gap);
        } else if gap.contains('\n') {
            let lines = if gap.matches('\n').count() > 1 { 3 } else { 1 };
            out.push_str(&"\n".repeat(lines));
            out.push_str(&" ".repeat(i % 7));
        } else if i > 0 {
            // Dropping the space is safe only next to punctuation that no
            // token continues.
            let before = src[..at].chars().next_back().unwrap_or(' ');
            let after = src[start..].chars().next().unwrap_or(' ');
            let solid = |c: char| "()[]{},;".contains(c);
            if solid(before) || solid(after) {
                out.push_str(if i % 2 == 0 { "" } else { "  " });
            } else {
                out.push_str("  ");
            }
        }
        out.push_str(&src[start..end]);
        at = end;
    }
    out.push_str(&src[at..]);
    out
}

#[test]
fn every_script_formats_to_the_same_program_and_formatting_is_idempotent() {
    let files = corpus();
    assert!(files.len() > 100, "{} scripts", files.len());
    let mut formatted = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let (_, diags) = lang::parse(&src);
        let parses = !diags.iter().any(|d| d.is_error());
        let out = match accl_fmt::format_source(&src) {
            Ok(out) => out,
            Err(d) => {
                // Only a script that does not parse is refused.
                assert!(!parses, "{}: refused: {d:?}", f.display());
                continue;
            }
        };
        assert!(parses, "{}: formatted but does not parse", f.display());
        assert_eq!(
            tree(&out),
            tree(&src),
            "{}: formatting changed the program",
            f.display()
        );
        // The repository's own scripts are kept in the layout (the fuzzers'
        // seeds, kept byte for byte as their corpus, are not in `corpus`).
        let own = ["examples", "tests"].map(|d| root().join(d));
        if own.iter().any(|d| f.starts_with(d)) {
            if let Some((n, (a, b))) = src
                .lines()
                .zip(out.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
            {
                panic!(
                    "{}:{}: not in the canonical layout (run `accl fmt` on it)\n- {a}\n+ {b}",
                    f.display(),
                    n + 1
                );
            }
            assert_eq!(src, out, "{}: not in the canonical layout", f.display());
        }
        let again = accl_fmt::format_source(&out).unwrap();
        assert_eq!(again, out, "{}: not idempotent", f.display());
        let scrambled = scramble(&src);
        assert_eq!(
            accl_fmt::format_source(&scrambled).unwrap(),
            out,
            "{}: scrambled white space formats differently",
            f.display()
        );
        formatted += 1;
    }
    assert!(formatted > 100, "{formatted} scripts formatted");
}

#[test]
fn formatted_examples_print_what_the_originals_print_on_both_backends() {
    for name in ["saxpy", "reductions", "histogram", "sections", "spmv"] {
        let path = root().join("examples").join(format!("{name}.accl"));
        let original = scramble(&std::fs::read_to_string(path).unwrap());
        let formatted = accl_fmt::format_source(&original).unwrap();
        assert_ne!(formatted, original);
        let mut outputs = Vec::new();
        for device in [false, true] {
            for src in [&original, &formatted] {
                let r = common::run(src, device);
                if let Err(e) = &r.result {
                    panic!("{name} (device {device}):\n{}", e.render(100));
                }
                let out = r.out.borrow().clone();
                assert!(!out.is_empty(), "{name} printed nothing");
                outputs.push(out);
            }
        }
        assert!(
            outputs.iter().all(|o| *o == outputs[0]),
            "{name}: outputs differ: {outputs:#?}"
        );
    }
}

fn accl(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_accl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_fmt_command_rewrites_checks_and_refuses_what_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let ugly = dir.path().join("ugly.accl");
    let good = dir.path().join("good.accl");
    let bad = dir.path().join("bad.accl");
    std::fs::write(&ugly, "let x=1;  // one\nif x>0{println(x);}\n").unwrap();
    std::fs::write(&good, "let y = 2;\n").unwrap();
    std::fs::write(&bad, "let z = ;\n").unwrap();
    let (p, q, r) = (
        ugly.to_str().unwrap(),
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    );

    let (code, out, _) = accl(&["fmt", "--check", p, q]);
    assert_eq!(code, 1);
    assert!(out.contains("ugly.accl: not formatted"), "{out}");
    assert!(
        out.contains("line 1:\n  - let x=1;  // one\n  + let x = 1;  // one"),
        "{out}"
    );
    assert!(!out.contains("good.accl"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&ugly).unwrap(),
        "let x=1;  // one\nif x>0{println(x);}\n"
    );

    let (code, _, _) = accl(&["fmt", p]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(&ugly).unwrap(),
        "let x = 1;  // one\nif x > 0 {\n    println(x);\n}\n"
    );
    let (code, out, _) = accl(&["fmt", "--check", p, q]);
    assert_eq!((code, out.as_str()), (0, ""));

    let (code, _, err) = accl(&["fmt", r, p]);
    assert_eq!(code, 1);
    assert!(err.contains("accl::parse"), "{err}");
    assert!(err.contains("bad.accl"), "{err}");
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), "let z = ;\n");
}

#[test]
fn array_literals_get_one_space_after_commas_and_none_inside_brackets() {
    let src = "const Q=[ 0.1,0.5 ,0.9 ];\nlet m=[ [1,2],[ 3,4] ];\nlet x=Q[ 1 ]+[1.0,2.0][0]*-[3.0][0];\nprintln(f([1.0 , 2.0]));\n";
    let want = "const Q = [0.1, 0.5, 0.9];\nlet m = [[1, 2], [3, 4]];\nlet x = Q[1] + [1.0, 2.0][0] * -[3.0][0];\nprintln(f([1.0, 2.0]));\n";
    assert_eq!(accl_fmt::format_source(src).unwrap(), want);
    assert_eq!(accl_fmt::format_source(want).unwrap(), want);
}

#[test]
fn tuple_types_returns_and_destructurings_get_the_layout_of_lists() {
    let src = "fn f(x:f64)->(f64,i32){return(x,2);}\nlet(a,_)=f( 1.0 );\nlet ( x : f64 , n )=f(2.0);\n(a , x)=( x,a );\n(v[ i ],n)=f(a);\n";
    let want = "fn f(x: f64) -> (f64, i32) {\n    return (x, 2);\n}\nlet (a, _) = f(1.0);\nlet (x: f64, n) = f(2.0);\n(a, x) = (x, a);\n(v[i], n) = f(a);\n";
    assert_eq!(accl_fmt::format_source(src).unwrap(), want);
    assert_eq!(accl_fmt::format_source(want).unwrap(), want);
    assert_eq!(tree(src), tree(want));
}
