//! Strings as values (stored, passed, returned, joined, compared,
//! formatted) and the script's parameters, on the host reference and on the
//! device backend (lavapipe, validation on): host code around device
//! constructs behaves alike on both.

use crate::common;
use accl::{Engine, Val};
use common::{run, same_as_host, Floats};

const SCRIPT: &str = r#"
    fn tag(name: str, step: i32) -> str { return format("{}_{:04}.npy", name, step); }
    fn shout(s: str) -> str { return s + "!"; }
    let name = "heat";
    let files = "";
    let a = zeros(f32, 64);
    for step in 0..3 {
        parallel loop for i in 0..64 { a[i] = a[i] + (i + step) as f32; }
        files += tag(name, step * 25) + " ";
    }
    let total = sum(a);
    let report = format("{} steps, sum {:.1}, first {:>6.2}|", 3, total, a[0]);
    let same = tag(name, 25) == "heat_0025.npy";
    let order = "abc" < "abd" && "b" > "abc" && name != "cold" && name >= "heat";
    let loud = shout(shout(name));
    let joined = join("/", 1, 2.5, true, name);
    let big = str(1.5e300) + " " + str(2.5e-7f32) + " " + str(0.001);
    assert(files == "heat_0000.npy heat_0025.npy heat_0050.npy ", files);
    assert(same && order, "comparisons");
"#;

fn ok(r: &common::Run) {
    if let Err(e) = &r.result {
        panic!("failed:\n{}", e.render(100));
    }
}

#[test]
fn strings_around_device_constructs_agree_with_the_host() {
    let (host, dev) = same_as_host(SCRIPT, Floats::Exact);
    ok(&host);
    for e in [&host.engine, &dev.engine] {
        assert_eq!(
            e.get_str("report").as_deref(),
            Some("3 steps, sum 6240.0, first   3.00|")
        );
        assert_eq!(e.get_str("loud").as_deref(), Some("heat!!"));
        assert_eq!(e.get_str("joined").as_deref(), Some("1/2.5/true/heat"));
        assert_eq!(e.get_str("big").as_deref(), Some("1.5e300 2.5e-7 0.001"));
        assert_eq!(e.get::<bool>("same"), Some(true));
    }
}

#[test]
fn println_concatenates_and_floats_switch_to_scientific_notation() {
    let r = run(
        r#"let x = 0.5; println("x=", x, " big=", 1e20, " tiny=", 1e-9f32, " n=", 7, " s=", "t");
           println(join(" ", "a", 1, 2.0));"#,
        false,
    );
    ok(&r);
    assert_eq!(*r.out.borrow(), "x=0.5 big=1e20 tiny=1e-9 n=7 s=t\na 1 2\n");
}

#[test]
fn strings_live_across_evals_and_through_the_api() {
    let mut e = Engine::new();
    e.eval(r#"let greeting = "hello"; fn twice(s: str) -> str { return s + s; }"#)
        .unwrap();
    e.eval(r#"greeting += ", world";"#).unwrap();
    assert_eq!(e.get_str("greeting").as_deref(), Some("hello, world"));
    e.set_str("who", "accl");
    let v = e.eval(r#"format("{}: {}", who, twice("ab"))"#).unwrap();
    assert!(
        matches!(&v, Some(Val::Str(s)) if &**s == "accl: abab"),
        "{v:?}"
    );
    let r = e
        .call_fn("twice", &[Val::Str(std::rc::Rc::new("xy".into()))])
        .unwrap();
    assert!(matches!(&r, Some(Val::Str(s)) if &**s == "xyxy"), "{r:?}");
    // A number is not a string.
    assert_eq!(e.get_str("nothing"), None);
    e.eval("let n = 1;").unwrap();
    assert_eq!(e.get_str("n"), None);
}

#[test]
fn parameters_parse_with_located_errors() {
    let mut e = Engine::new();
    e.set_args(["12", "0.25", "out.npy", "x"]);
    let v = e
        .eval(r#"format("{} {} {} {}", nargs(), arg_i32(0) * 2, arg_f64(1) * 4.0, arg(2))"#)
        .unwrap();
    assert_eq!(v.unwrap().to_string(), "4 24 1 out.npy");
    assert_eq!(e.eval_as::<i32>("arg_i32(9, -5)").unwrap(), -5);
    assert_eq!(e.eval_as::<f64>("arg_f64(9, 2)").unwrap(), 2.0);
    let err = e.eval("let k = arg_i32(3);").unwrap_err();
    assert_eq!(err.code(), "accl::run::bad_argument");
    assert!(err.to_string().contains("parameter 3 is `x`"), "{err}");
    let err = e.eval("let k = arg(4);").unwrap_err();
    assert_eq!(err.code(), "accl::run::missing_argument");
    assert!(err.to_string().contains("given 4 parameters"), "{err}");
}

#[test]
fn getenv_reads_the_environment_only_when_allowed() {
    // PATH is set in every test environment; nothing here sets variables.
    let path = std::env::var("PATH").unwrap();
    let mut e = Engine::new();
    let src = r#"getenv("PATH", "unset")"#;
    assert_eq!(e.eval(src).unwrap().unwrap().to_string(), "unset");
    e.set_env_access(true);
    assert_eq!(e.eval(src).unwrap().unwrap().to_string(), path);
    assert_eq!(
        e.eval(r#"getenv("ACCL_SURELY_UNSET_VARIABLE")"#)
            .unwrap()
            .unwrap()
            .to_string(),
        ""
    );
}

#[test]
fn a_bad_format_string_points_inside_the_literal() {
    let mut e = Engine::new();
    let err = e
        .eval(r#"let s = format("a {} {:.q}", 1, 2);"#)
        .unwrap_err();
    assert_eq!(err.code(), "accl::run::bad_format");
    let span = err.diags[0].span();
    assert_eq!(
        &r#"let s = format("a {} {:.q}", 1, 2);"#[span.range()],
        "{:.q}"
    );
    for (fmt, msg) in [
        (r#"format("{} {}", 1)"#, "only 1 argument"),
        (r#"format("{}", 1, 2)"#, "argument 1 is never used"),
        (r#"format("{:x}", 1.5)"#, "integers"),
    ] {
        let err = e.eval(fmt).unwrap_err();
        assert!(err.to_string().contains(msg), "{fmt}: {err}");
    }
}

#[test]
fn the_string_basics_on_both_backends() {
    // Lengths and indices count characters, not bytes ("é" is two bytes).
    let src = r#"
        let s = "  température, 42 ;  ";
        let t = trim(s);
        let n = len(t);
        let at = find(t, "42");
        let missing = find(t, "xyz");
        let csv = replace("a,b,,c", ",", ";");
        let none = replace("abc", "", "-");
        let pre = starts_with(t, "temp") && !starts_with(t, "42");
        let post = ends_with(t, ";") && !ends_with(t, "x");
        let k = parse_i32(" -17 ") * 2;
        let x = parse_f64("2.5e3") + parse_f64(" inf ") * 0.0 + 1.0;
        let c = char_at(t, 4) + char_at(t, 0);
        let total = 0;
        for i in 0..len(t) { if char_at(t, i) == "e" { total += 1; } }
        let a = zeros(f32, 4);
        parallel loop for i in 0..4 { a[i] = (i * n) as f32; }
    "#;
    for device in [false, true] {
        let r = run(src, device);
        ok(&r);
        let e = &r.engine;
        assert_eq!(
            e.get_str("t").unwrap(),
            "température, 42 ;",
            "device {device}"
        );
        assert_eq!(e.get::<i32>("n"), Some(17), "device {device}");
        assert_eq!(e.get::<i32>("at"), Some(13), "device {device}");
        assert_eq!(e.get::<i32>("missing"), Some(-1));
        assert_eq!(e.get_str("csv").unwrap(), "a;b;;c");
        assert_eq!(e.get_str("none").unwrap(), "abc");
        assert_eq!(e.get::<bool>("pre"), Some(true));
        assert_eq!(e.get::<bool>("post"), Some(true));
        assert_eq!(e.get::<i32>("k"), Some(-34));
        assert!(e.get::<f64>("x").unwrap().is_nan(), "inf * 0 is NaN");
        assert_eq!(e.get_str("c").unwrap(), "ét");
        assert_eq!(e.get::<i32>("total"), Some(2));
        assert_eq!(e.get_array::<f32>("a").unwrap().0, [0.0, 17.0, 34.0, 51.0]);
    }
}

#[test]
fn string_basics_fail_with_located_errors() {
    for (src, code, label) in [
        ("let v = parse_i32(\"12x\");", "accl::run::parse", "\"12x\""),
        (
            "let v = parse_i32(\"99999999999\");",
            "accl::run::parse",
            "\"99999999999\"",
        ),
        ("let v = parse_f64(\"\");", "accl::run::parse", "\"\""),
        (
            "let s = \"ab\"; let c = char_at(s, 2);",
            "accl::run::index_out_of_bounds",
            "2",
        ),
    ] {
        let mut e = Engine::new();
        let err = e.eval_source("t.accl", src).expect_err(src);
        assert_eq!(err.diags[0].code, code, "{src}");
        let (span, _) = &err.diags[0].labels[0];
        assert_eq!(&src[span.start as usize..span.end as usize], label, "{src}");
    }
    // What `replace` builds counts against the memory limit.
    let mut e = Engine::new();
    e.set_max_array_bytes(1 << 20);
    let err = e
        .eval("let s = \"a\"; for i in 0..19 { s = s + s; } let t = replace(s, \"a\", \"aaaa\");")
        .expect_err("over the limit");
    assert_eq!(err.diags[0].code, "accl::run::memory_limit");
}

#[test]
fn split_and_the_characters_of_a_string_on_both_backends() {
    // Characters are Unicode scalar values ("é" is one, of two bytes).
    let src = r#"
        fn count_of(s: str, x: str) -> i32 {
            let k = 0;
            for c in s { if c == x { k += 1; } }
            return k;
        }
        let csv = "x,yy,,zzz";
        let parts = "";
        let count = 0;
        for p in split(csv, ",") { parts += "[" + p + "]"; count += 1; }
        let word = "héllo";
        let rev = "";
        let vowels = 0;
        for c in word {
            rev = c + rev;
            if c == "é" || c == "o" { vowels += 1; }
        }
        let n = split_count("a::b::c", "::");
        let mid = split_part("a::b::c", "::", 1);
        let none = 0;
        for c in "" { none += 1; }
        let whole = "";
        for p in split("no separator", ";") { whole = p; }
        let first = "";
        for p in split("k=v;k2=v2;k3", ";") { if first == "" { first = p; continue; } break; }
        let ls = count_of("hello world", "l");
        let a = zeros(i32, 4);
        parallel loop for i in 0..4 { a[i] = i * count + ls; }
    "#;
    for device in [false, true] {
        let r = run(src, device);
        ok(&r);
        let e = &r.engine;
        assert_eq!(
            e.get_str("parts").unwrap(),
            "[x][yy][][zzz]",
            "device {device}"
        );
        assert_eq!(e.get::<i32>("count"), Some(4), "device {device}");
        assert_eq!(e.get_str("rev").unwrap(), "olléh", "device {device}");
        assert_eq!(e.get::<i32>("vowels"), Some(2));
        assert_eq!(e.get::<i32>("n"), Some(3));
        assert_eq!(e.get_str("mid").unwrap(), "b");
        assert_eq!(e.get::<i32>("none"), Some(0));
        assert_eq!(e.get_str("whole").unwrap(), "no separator");
        assert_eq!(e.get_str("first").unwrap(), "k=v");
        assert_eq!(e.get::<i32>("ls"), Some(3));
        assert_eq!(
            e.get_array::<i32>("a").unwrap().0,
            [3, 7, 11, 15],
            "device {device}"
        );
    }
}

#[test]
fn split_fails_with_located_errors() {
    for (src, code, label) in [
        (
            "let sep = \"\"; for p in split(\"ab\", sep) { println(p); }",
            "accl::run::empty_separator",
            "sep",
        ),
        (
            "let v = split_count(\"ab\", \"\");",
            "accl::run::empty_separator",
            "\"\"",
        ),
        (
            "let v = split_part(\"a,b\", \",\", 2);",
            "accl::run::index_out_of_bounds",
            "2",
        ),
        (
            "for p in split(\"a\", \"\") { println(p); }",
            "accl::type::empty_separator",
            "\"\"",
        ),
        (
            "let p = split(\"a,b\", \",\");",
            "accl::type::split_outside_for",
            "split(\"a,b\", \",\")",
        ),
        ("for c in 5 { }", "accl::type::not_iterable", "5"),
        (
            "let s = \"ab\"; let a = zeros(i32, 2); parallel loop for i in 0..2 { for c in s { a[i] += 1; } }",
            "accl::device::string",
            "s",
        ),
    ] {
        let mut e = Engine::new();
        let err = e.eval_source("t.accl", src).expect_err(src);
        assert_eq!(err.diags[0].code, code, "{src}");
        let (span, _) = &err.diags[0].labels[0];
        assert_eq!(&src[span.start as usize..span.end as usize], label, "{src}");
    }
}

#[test]
fn appends_grow_in_place_and_never_change_a_copy() {
    // 100,000 appends of one character (linear now; each copied the whole
    // string before). Known answers by hand: lengths, and copies taken
    // along the way keep the text they had.
    let r = run(
        r#"
        let s = "";
        let early = "";
        for i in 0..100000 {
            s += "x";
            if i == 2 { early = s; }
        }
        assert(len(s) == 100000, "length");
        assert(early == "xxx", "a copy keeps its text");
        let t = s;
        s += "y";
        assert(len(t) == 100000 && len(s) == 100001, "copy before an append");
        let d = "ab";
        d += d;
        d += d;
        assert(d == "abababab", "appending itself");
        fn tail(n: i32) -> str { let g = ""; for k in 0..n { g += str(k % 10); } return g; }
        assert(tail(12) == "012345678901", "in a function");
        let glob = "";
        fn add_z() { glob += "z"; }
        add_z();
        add_z();
        assert(glob == "zz", "a top-level string from a function");
        "#,
        false,
    );
    ok(&r);
}
