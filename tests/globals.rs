//! Top-level variables seen from functions, on both backends: reads,
//! assignments (scalars, strings, compound), element writes to a top-level
//! array, calls through other functions, a function called from inside a
//! loop of the top level, and values an embedder reads back afterwards.

use crate::common;
use common::run;

const SRC: &str = r#"let nx = 4;
let dx = 0.5;
let a = zeros(f64, nx);
let calls = 0;
let label = "grid";
fn area() -> f64 { calls += 1; return nx as f64 * dx; }
fn fill(v: f64) { for i in 0..nx { a[i] = v * i as f64; } calls += 1; }
fn tag() -> str { label += "!"; return label; }
fn doubled() -> f64 { return area() * 2.0; }
let first = area();
let second = doubled();
fill(1.5);
parallel loop for i in 0..nx { a[i] = a[i] + 1.0; }
let tagged = tag();
nx = 2;
let third = area();
let sum = 0.0;
for k in 0..3 { sum += area(); }
let last = a[3];
"#;

#[test]
fn functions_read_and_write_top_level_variables_on_both_backends() {
    for device in [false, true] {
        let r = run(SRC, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        let v = |n: &str| r.engine.get_value(n).unwrap().to_string();
        assert_eq!(v("first"), "2.0", "device {device}");
        assert_eq!(v("second"), "4.0", "device {device}");
        assert_eq!(v("third"), "1.0", "device {device}");
        assert_eq!(v("sum"), "3.0", "device {device}");
        // area() ran 1 + 1 + 1 + 3 times, fill() once.
        assert_eq!(v("calls"), "7", "device {device}");
        let text = |n: &str| r.engine.get_str(n).unwrap();
        assert_eq!(text("tagged"), "grid!", "device {device}");
        assert_eq!(text("label"), "grid!", "device {device}");
        // fill wrote 1.5 * i, then the kernel added 1.
        assert_eq!(v("last"), "5.5", "device {device}");
        let a = r.engine.get_array::<f64>("a").unwrap().0;
        assert_eq!(a, vec![1.0, 2.5, 4.0, 5.5], "device {device}");
    }
}

#[test]
fn a_function_that_fails_while_it_holds_the_top_level_frame() {
    // The error is located; the engine keeps working (an input that fails
    // keeps none of its variables) and lends the frame again next time.
    let src = "let n = 3; let a = zeros(i32, 2);
fn poke() { n = 5; a[n] = 1; }
poke();";
    for device in [false, true] {
        let mut r = run(src, device);
        let err = r.result.as_ref().expect_err("index out of bounds");
        assert_eq!(err.diags[0].code, "accl::run::index_out_of_bounds");
        r.engine
            .eval("let q = 1; fn get() -> i32 { q += 1; return q; } let got = get() + get();")
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        assert_eq!(
            r.engine.get_value("got").unwrap().to_string(),
            "5",
            "device {device}"
        );
        assert_eq!(
            r.engine.get_value("q").unwrap().to_string(),
            "3",
            "device {device}"
        );
    }
}

#[test]
fn functions_declared_in_an_earlier_input_see_later_top_level_variables() {
    // In a session (the REPL, an embedder's successive `eval`s), top-level
    // variables of earlier inputs are top-level variables of the next one.
    for device in [false, true] {
        let mut r = run("let total = 10;", device);
        r.result.as_ref().unwrap();
        r.engine
            .eval("fn bump(k: i32) { total += k; }\nbump(5);")
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        assert_eq!(r.engine.get_value("total").unwrap().to_string(), "15");
    }
}
