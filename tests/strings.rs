//! Strings as values (stored, passed, returned, joined, compared,
//! formatted) and the script's parameters, on the host reference and on the
//! device backend (lavapipe, validation on): host code around device
//! constructs behaves alike on both.

mod common;
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
    let r = e.call_fn("twice", &[Val::Str("xy".into())]).unwrap();
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
