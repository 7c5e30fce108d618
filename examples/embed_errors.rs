//! Errors into miette: `?` on engine calls in a `miette::Result` main, and
//! the fancy report (code, source line, label, help) when a script fails.
//!
//! `cargo run --example embed_errors`

use accl::Engine;

fn run(src: &str) -> miette::Result<f64> {
    let mut e = Engine::new();
    e.eval(src)?;
    Ok(e.eval_as::<f64>("total")?)
}

fn main() -> miette::Result<()> {
    // A script that works.
    let total = run("let x = arange(f64, 5); let total = sum(x);")?;
    println!("total = {total}");
    // One that does not: the report says where and why.
    let err = run("let x = arange(f64, 5);\nlet total = x[7];").unwrap_err();
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, err.as_ref())
        .expect("a report renders");
    println!("{out}");
    assert!(out.contains("accl::run::index_out_of_bounds"));
    Ok(())
}
