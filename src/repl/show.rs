//! How the REPL shows values, variables, the present table and timings.

use crate::engine::{PresentEntry, Val};
use crate::Engine;
use lang::Type;
use std::fmt::Write;
use std::time::Duration;
use stdlib::format;

/// Arrays of more elements than this are summarised (first and last three
/// entries of each axis).
pub const PREVIEW_OVER: usize = 200;

/// Text with optional ANSI styling.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("{code}{text}{}", super::highlight::RESET)
        } else {
            text.to_string()
        }
    }
    pub fn dim(self, text: &str) -> String {
        self.paint(super::highlight::DIM, text)
    }
}

/// `[4, 3]`
pub fn shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(|n| n.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// The array's type: `f32[,]`.
pub fn array_type(a: &stdlib::Array) -> Type {
    Type::Array(a.scalar(), a.rank() as u8)
}

/// The value of a trailing expression with its type: `42 : i32`; an array
/// as a header line (type and shape) and a numpy-like preview.
pub fn value(v: &Val, st: Style) -> String {
    match v {
        Val::Scalar(x) => format!(
            "{} {}",
            format::scalar(*x),
            st.dim(&format!(": {}", x.ty()))
        ),
        Val::Array(a) => format!(
            "{}\n{}",
            st.dim(&format!("{}, shape {}", array_type(a), shape(a.shape()))),
            format::array_summarised(a, PREVIEW_OVER)
        ),
        Val::Str(s) => format!("{s:?} {}", st.dim(": str")),
        Val::Type(t) => format!("{} {}", t.name(), st.dim(": type")),
        Val::Unit => "()".to_string(),
    }
}

/// One present section: `device 0, rows 2..6 of 8 (structured 0, dynamic 1)`;
/// a box that cuts other axes: `device 0, box [0..8, 2..3] (..)`.
pub fn section(p: &PresentEntry) -> String {
    let r = &p.row;
    let rows = if !r.inner.is_empty() {
        let axes: Vec<String> = std::iter::once((r.lo, r.hi))
            .chain(r.inner.iter().copied())
            .map(|(l, h)| format!("{l}..{h}"))
            .collect();
        format!("box [{}]", axes.join(", "))
    } else if r.lo == 0 && r.hi == r.rows {
        format!("all {} rows", r.rows)
    } else {
        format!("rows {}..{} of {}", r.lo, r.hi, r.rows)
    };
    format!(
        "device {}, {rows} (structured {}, dynamic {})",
        r.device, r.structured, r.dynamic
    )
}

/// `:vars`: every variable with its type; scalars with their value,
/// arrays with their shape and where they are present.
pub fn vars(e: &Engine, st: Style) -> String {
    let vars = e.variables();
    let decls = declarations(e);
    if vars.is_empty() && decls.is_empty() {
        return "no variables yet (`let x = ...;` makes one)".to_string();
    }
    let present = e.present();
    let width = vars.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let tw = vars
        .iter()
        .map(|(_, t)| t.to_string().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (name, ty) in &vars {
        let detail = if let Some(a) = e.array(name) {
            let places: Vec<String> = present
                .iter()
                .filter(|p| p.names.iter().any(|n| n == name))
                .map(section)
                .collect();
            let place = if places.is_empty() {
                "host only".to_string()
            } else {
                format!("present: {}", places.join("; "))
            };
            format!("shape {}  {}", shape(a.shape()), st.dim(&place))
        } else if let Some(v) = e.get_value(name) {
            format!("= {}", format::scalar(v))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{name:<width$}  {}  {detail}",
            st.paint(super::highlight::TYPE, &format!("{:<tw$}", ty.to_string()))
        );
    }
    for d in decls {
        let _ = writeln!(out, "{}", st.dim(&d));
    }
    out.trim_end().to_string()
}

/// The `fn` and `const` declarations of the session: a `const` whole, a
/// `fn` by its signature.
fn declarations(e: &Engine) -> Vec<String> {
    e.decls
        .iter()
        .map(|d| {
            let text = d.text.trim();
            let head = match text.find('{') {
                Some(i) if text.starts_with("fn") => text[..i].trim_end(),
                _ => text,
            };
            head.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// `:present`: the present table of every device.
pub fn present(e: &Engine) -> String {
    let rows = e.present();
    if rows.is_empty() {
        return "nothing is present on any device".to_string();
    }
    let mut table = vec![[
        "device".to_string(),
        "array".to_string(),
        "section".to_string(),
        "structured".to_string(),
        "dynamic".to_string(),
    ]];
    for p in &rows {
        let r = &p.row;
        let name = if p.names.is_empty() {
            format!("(array #{}, no variable)", r.array)
        } else {
            p.names.join(" = ")
        };
        let section = if !r.inner.is_empty() {
            let axes: Vec<String> = std::iter::once((r.lo, r.hi))
                .chain(r.inner.iter().copied())
                .map(|(l, h)| format!("{l}:{}", h.saturating_sub(l)))
                .collect();
            format!("[{}] of {}", axes.join(", "), r.rows)
        } else if r.lo == 0 && r.hi == r.rows {
            format!("[0:{}] (whole)", r.rows)
        } else {
            format!("[{}:{}] of {}", r.lo, r.hi - r.lo, r.rows)
        };
        table.push([
            r.device.to_string(),
            name,
            section,
            r.structured.to_string(),
            r.dynamic.to_string(),
        ]);
    }
    let mut w = [0usize; 5];
    for row in &table {
        for (k, c) in row.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &table {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {:>w4$}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4]
        );
    }
    out.trim_end().to_string()
}

/// `1.234 ms`, `56.7 µs`, `2.345 s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Style = Style { color: false };

    #[test]
    fn values() {
        let mut e = Engine::new();
        let v = e.eval("1 + 2").unwrap().unwrap();
        assert_eq!(value(&v, PLAIN), "3 : i32");
        let v = e.eval("2.5f32").unwrap().unwrap();
        assert_eq!(value(&v, PLAIN), "2.5 : f32");
        let v = e.eval("arange(f32, 4)").unwrap().unwrap();
        assert_eq!(value(&v, PLAIN), "f32[], shape [4]\n[0 1 2 3]");
        let v = e.eval("zeros(i32, 30, 30)").unwrap().unwrap();
        let s = value(&v, PLAIN);
        assert!(
            s.starts_with("i32[,], shape [30, 30]\n[[0 0 0 ... 0 0 0]\n"),
            "{s}"
        );
        assert!(s.contains("\n ...\n"), "{s}");
        let v = e.eval("1 < 2").unwrap().unwrap();
        assert_eq!(value(&v, PLAIN), "true : bool");
    }

    #[test]
    fn vars_and_present() {
        let mut e = Engine::new();
        assert!(vars(&e, PLAIN).starts_with("no variables"));
        assert_eq!(present(&e), "nothing is present on any device");
        e.eval("let n = 8; let a = zeros(f32, n); let m = zeros(u8, 4, 2); enter data copyin(a[2:4]) create(m);")
            .unwrap();
        let v = vars(&e, PLAIN);
        let lines: Vec<&str> = v.lines().collect();
        assert_eq!(lines[0], "n  i32    = 8");
        assert_eq!(
            lines[1],
            "a  f32[]  shape [8]  present: device 0, rows 2..6 of 8 (structured 0, dynamic 1)"
        );
        assert_eq!(
            lines[2],
            "m  u8[,]  shape [4, 2]  present: device 0, all 4 rows (structured 0, dynamic 1)"
        );
        e.eval("const K = 2.5; fn twice(x: f32) -> f32 {\n return 2.0 * x; }")
            .unwrap();
        let v = vars(&e, PLAIN);
        assert!(
            v.ends_with("\nconst K = 2.5;\nfn twice(x: f32) -> f32"),
            "{v}"
        );
        let p = present(&e);
        assert!(p.starts_with("device  array  section"), "{p}");
        assert!(p.contains("0       a      [2:4] of 8"), "{p}");
        assert!(p.contains("0       m      [0:4] (whole)"), "{p}");
        // A box that cuts a trailing axis.
        e.eval("let b = zeros(i32, 3, 5); enter data copyin(b[:, 1:2]);")
            .unwrap();
        let p = present(&e);
        assert!(p.contains("0       b      [0:3, 1:2] of 3"), "{p}");
        let v = vars(&e, PLAIN);
        assert!(
            v.contains("present: device 0, box [0..3, 1..3] (structured 0, dynamic 1)"),
            "{v}"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(duration(Duration::from_micros(1500)), "1.500 ms");
        assert_eq!(duration(Duration::from_nanos(12_300)), "12.3 µs");
        assert_eq!(duration(Duration::from_millis(2345)), "2.345 s");
    }
}
