//! `accl run --time`: at exit, where the time went, from the run's trace
//! (the same events `--trace` writes): per kernel and per copy kind, the
//! count, total, mean and share of the device's busy time (device
//! timestamps), then the compile time, the host time spent launching and
//! waiting, and the wall time; then the wall time split by host phase
//! ([`phases`]: parse and check, compile, compiled host code, interpreted
//! host code, file I/O, launches, waits, copies, other), and what of the
//! host code runs as native code and what stays interpreted, and why
//! ([`host_code`]).

use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Default)]
struct Row {
    count: u64,
    total_us: f64,
}

fn by_total(m: &BTreeMap<String, Row>) -> Vec<(String, &Row)> {
    let mut v: Vec<(String, &Row)> = m.iter().map(|(k, r)| (k.clone(), r)).collect();
    v.sort_by(|a, b| b.1.total_us.total_cmp(&a.1.total_us).then(a.0.cmp(&b.0)));
    v
}

/// The row of `name` in `m`. A run of many launches has as many events:
/// each name is copied once, not once per event.
fn named<'m>(m: &'m mut BTreeMap<String, Row>, name: &str) -> &'m mut Row {
    if !m.contains_key(name) {
        m.insert(name.to_string(), Row::default());
    }
    m.get_mut(name).expect("inserted above")
}

/// The table for the Chrome trace `json` of a run that took `wall_s`.
pub fn table(json: &str, wall_s: f64) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return "time: the trace could not be read\n".into();
    };
    let events = v["traceEvents"].as_array().map_or(&[][..], |a| &a[..]);
    let mut kernels: BTreeMap<String, Row> = BTreeMap::new();
    let mut copies: BTreeMap<String, Row> = BTreeMap::new();
    let mut other: BTreeMap<&'static str, Row> = BTreeMap::new();
    for e in events {
        if e["ph"] != "X" {
            continue;
        }
        let name = e["name"].as_str().unwrap_or("?");
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        let row = match e["cat"].as_str().unwrap_or("") {
            "kernel" => named(&mut kernels, name),
            "copy" => named(&mut copies, name),
            "compile" => other.entry("compile (host, JIT)").or_default(),
            "launch" => other.entry("launch (host)").or_default(),
            "host copy" => other.entry("copies (host)").or_default(),
            "wait" => other.entry("wait (host)").or_default(),
            _ => continue,
        };
        row.count += 1;
        row.total_us += dur;
    }
    let busy: f64 = kernels
        .values()
        .chain(copies.values())
        .map(|r| r.total_us)
        .sum::<f64>()
        + 0.0; // (an empty sum is -0.0)
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<40} {:>7} {:>12} {:>12} {:>7}",
        "time", "count", "total ms", "mean us", "share"
    );
    let section = |out: &mut String, title: &str, rows: Vec<(String, &Row)>, share: bool| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "{title}");
        for (name, r) in rows {
            let _ = writeln!(
                out,
                "  {:<38} {:>7} {:>12.3} {:>12.1} {:>7}",
                name,
                r.count,
                r.total_us / 1e3,
                r.total_us / r.count.max(1) as f64,
                if share && busy > 0.0 {
                    format!("{:.1}%", 100.0 * r.total_us / busy)
                } else {
                    String::new()
                }
            );
        }
    };
    let k = by_total(&kernels);
    let c = by_total(&copies);
    section(&mut out, "kernels (device)", k, true);
    section(&mut out, "copies (device)", c, true);
    let o: Vec<(String, &Row)> = other.iter().map(|(k, r)| (k.to_string(), r)).collect();
    section(&mut out, "host", o, false);
    let _ = writeln!(
        out,
        "device busy {:.3} ms; wall {:.3} ms",
        busy / 1e3,
        wall_s * 1e3
    );
    out
}

/// Host time of one kind from the trace: calls and microseconds.
#[derive(Default, Clone, Copy)]
struct Sum {
    count: u64,
    us: f64,
}

/// The trace's host-side sums: launches, waits, host copies, and the
/// kernel compiles done inside a launch (which the compile row counts).
fn trace_sums(json: &str) -> [Sum; 4] {
    let mut out = [Sum::default(); 4];
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return out;
    };
    for e in v["traceEvents"].as_array().into_iter().flatten() {
        if e["ph"] != "X" {
            continue;
        }
        let k = match e["cat"].as_str().unwrap_or("") {
            "launch" => 0,
            "wait" => 1,
            "host copy" => 2,
            "compile" if e["name"].as_str().is_some_and(|n| n.ends_with("at launch")) => 3,
            _ => continue,
        };
        out[k].count += 1;
        out[k].us += e["dur"].as_f64().unwrap_or(0.0);
    }
    out
}

/// The wall time `wall_s` of a run split by host phase, so that the rows
/// add up to it: the engine's own parse-and-check, compile and run times
/// (`t`), the calls into compiled code and file builtins counted while it
/// ran (`p`), and the launches, waits and host copies of its trace
/// (`json`, None on the host backend). Interpreted host code is the run's
/// time less the rest; other is the wall time outside the engine's three.
pub fn phases(
    json: Option<&str>,
    t: &crate::engine::Timings,
    p: &crate::interp::phases::Phases,
    wall_s: f64,
) -> String {
    let [launch, wait, copies, at_launch] = json.map(trace_sums).unwrap_or_default();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let launch_ms = ((launch.us - at_launch.us) / 1e3).max(0.0);
    let (native, io) = (ms(p.native.time), ms(p.io.time));
    let (wait_ms, copies_ms) = (wait.us / 1e3, copies.us / 1e3);
    let run = ms(t.run);
    // The program waits for a device at its first use, in the run (a
    // device opens on a thread of its own from the program's compile on,
    // or at that use; a thread done by the time the compile hands it the
    // kernels is joined then, without a wait).
    let open = ms(p.open.time);
    let compile = ms(t.compile);
    let interpreted = (run - open - native - io - launch_ms - wait_ms - copies_ms).max(0.0);
    let wall = wall_s * 1e3;
    let other = (wall - ms(t.check) - ms(t.compile) - run).max(0.0);
    let rows: [(&str, Option<u64>, f64); 10] = [
        ("parse and check", None, ms(t.check)),
        ("open the device", Some(p.open.count), open),
        ("compile (host code, kernels)", None, compile),
        ("compiled host code", Some(p.native.count), native),
        ("interpreted host code", None, interpreted),
        ("file I/O", Some(p.io.count), io),
        ("launches", Some(launch.count), launch_ms),
        ("waits", Some(wait.count), wait_ms),
        ("copies", Some(copies.count), copies_ms),
        ("other", None, other),
    ];
    let mut out = format!(
        "{:<40} {:>7} {:>12} {:>12} {:>7}\n",
        "host phases (of the wall time)", "count", "total ms", "", "share"
    );
    for (name, count, total) in rows {
        let _ = writeln!(
            out,
            "  {:<38} {:>7} {:>12.3} {:>12} {:>6.1}%",
            name,
            count.map_or("-".into(), |c| c.to_string()),
            total,
            "",
            if wall > 0.0 {
                100.0 * total / wall
            } else {
                0.0
            }
        );
    }
    if p.spread.count > 0 {
        let _ = writeln!(
            out,
            "host loops on {} threads: {} run(s) in {:.3} ms of the compiled host code",
            crate::interp::native::threads(),
            p.spread.count,
            ms(p.spread.time)
        );
    }
    if p.import.count > 0 {
        let _ = writeln!(
            out,
            "host memory imported for direct copies: {} range(s), {:.1} MB in {:.3} ms",
            p.import.count,
            p.import_bytes as f64 / 1e6,
            ms(p.import.time)
        );
    }
    if p.open_behind.count > 0 {
        let _ = writeln!(
            out,
            "opened on a thread of their own: {} device(s) in {:.3} ms, {:.3} ms of it beside the program's work",
            p.open_behind.count,
            ms(p.open_behind.time),
            ms(p.open_hidden)
        );
    }
    if p.open.count > 0 {
        let o = &p.open_parts;
        let _ = writeln!(
            out,
            "opening the device(s): adapters {:.3} ms, vkCreateDevice {:.3} ms ({} queue(s)), allocator and queues {:.3} ms, pipeline cache {:.3} ms",
            ms(o.adapters),
            ms(o.create),
            o.queues,
            ms(o.setup),
            ms(o.cache)
        );
    }
    out
}

/// What of the host code of program `text` runs as native code: the
/// counts, then each function and outermost loop that stays interpreted
/// (with its line and why), so a slow run says where the interpreter is.
/// Empty when the program does not check (its errors say why).
///
/// `src` is the checked text: the script with the files it imports in
/// front (a joined source), so a line is named in its own file.
pub fn host_code(src: &lang::Source) -> String {
    let text = &*src.text;
    let builtins = stdlib::builtins();
    let Ok(c) = lang::check_source(text, &builtins) else {
        return String::new();
    };
    if !crate::interp::native::enabled() {
        return "host code: all interpreted (ACCL_JIT=0)\n".into();
    }
    let j = match host_jit::compile(&c.program, &builtins, false) {
        Ok(j) => j,
        Err(e) => return format!("host code: all interpreted ({e})\n"),
    };
    let (f, l) = j.counts();
    let mut out = format!("host code: {f} function(s) and {l} loop(s) compiled to native code\n");
    for r in &j.refused {
        let (file, line, _) = src.locate(r.why.span.start as usize);
        let line = if file == &*src.name {
            line.to_string()
        } else {
            format!("{line} of {file}")
        };
        let _ = writeln!(
            out,
            "  interpreted: {} at line {line}: {}",
            r.unit, r.why.what
        );
    }
    out
}

/// What `--time` says on the host backend, for a run that took `wall_s`.
pub fn host_line(wall_s: f64) -> String {
    format!(
        "wall {:.3} ms (host backend: every construct ran on the host)\n",
        wall_s * 1e3
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_add_up_per_name_and_kind() {
        let json = r#"{"traceEvents":[
            {"name":"kernel_0 line 1","cat":"kernel","ph":"X","dur":300.0},
            {"name":"kernel_0 line 1","cat":"kernel","ph":"X","dur":100.0},
            {"name":"kernel_1 line 5","cat":"kernel","ph":"X","dur":500.0},
            {"name":"upload","cat":"copy","ph":"X","dur":100.0},
            {"name":"compile kernel_0","cat":"compile","ph":"X","dur":2000.0},
            {"name":"submit","cat":"submit","ph":"i"}
        ]}"#;
        let t = table(json, 0.5);
        let line = |name: &str| {
            t.lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("no `{name}` in\n{t}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        // kernel_1 first (largest total); shares of the 1 ms busy time.
        assert!(
            t.find("kernel_1").unwrap() < t.find("kernel_0").unwrap(),
            "{t}"
        );
        assert_eq!(line("kernel_0"), "kernel_0 line 1 2 0.400 200.0 40.0%");
        assert_eq!(line("kernel_1"), "kernel_1 line 5 1 0.500 500.0 50.0%");
        assert_eq!(line("upload"), "upload 1 0.100 100.0 10.0%");
        assert_eq!(line("compile"), "compile (host, JIT) 1 2.000 2000.0");
        assert!(t.contains("device busy 1.000 ms; wall 500.000 ms"), "{t}");
        // No device work: zero busy time, not `-0.000`.
        let t = table(r#"{"traceEvents":[]}"#, 0.001);
        assert!(t.ends_with("device busy 0.000 ms; wall 1.000 ms\n"), "{t}");
    }

    #[test]
    fn host_phases_add_up_to_the_wall_time() {
        let json = r#"{"traceEvents":[
            {"name":"launch k","cat":"launch","ph":"X","dur":3000.0},
            {"name":"compile k on device 0 at launch","cat":"compile","ph":"X","dur":1000.0},
            {"name":"compile j on device 0 ahead","cat":"compile","ph":"X","dur":9000.0},
            {"name":"wait","cat":"wait","ph":"X","dur":1000.0},
            {"name":"copy x","cat":"host copy","ph":"X","dur":500.0}
        ]}"#;
        let ms = std::time::Duration::from_micros;
        let t = crate::engine::Timings {
            check: ms(1000),
            compile: ms(2000),
            run: ms(10_000),
        };
        let spent = |count, us| crate::interp::phases::Spent {
            count,
            time: ms(us),
        };
        let p = crate::interp::phases::Phases {
            native: spent(4, 2000),
            spread: spent(1, 1500),
            io: spent(2, 1000),
            open: spent(1, 500),
            open_behind: spent(1, 8000),
            open_hidden: ms(7500),
            open_parts: crate::interp::phases::OpenParts {
                adapters: ms(100),
                create: ms(7000),
                setup: ms(200),
                cache: ms(300),
                queues: 3,
            },
            import: spent(2, 1200),
            import_bytes: 400_000_000,
        };
        let text = phases(Some(json), &t, &p, 0.014);
        let row_of = |out: &str, name: &str| {
            out.lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("no `{name}` in\n{out}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let row = |name: &str| row_of(&text, name);
        assert_eq!(row("parse"), "parse and check - 1.000 7.1%");
        // The program waited 0.5 ms for the device, in its run.
        assert_eq!(row("open"), "open the device 1 0.500 3.6%");
        assert_eq!(row("compile"), "compile (host code, kernels) - 2.000 14.3%");
        assert_eq!(row("compiled host"), "compiled host code 4 2.000 14.3%");
        // 10 ms run less 0.5 opening, 2 native, 1 file, 2 launching (3
        // less the compile inside it), 1 waiting and 0.5 copying.
        assert_eq!(row("interpreted"), "interpreted host code - 3.000 21.4%");
        assert_eq!(row("file"), "file I/O 2 1.000 7.1%");
        assert_eq!(row("launches"), "launches 1 2.000 14.3%");
        assert_eq!(row("waits"), "waits 1 1.000 7.1%");
        assert_eq!(row("copies"), "copies 1 0.500 3.6%");
        assert_eq!(row("other"), "other - 1.000 7.1%");
        // The rows add up to the wall time; the open on its thread is told
        // apart, with the time the program did not wait for.
        let total: f64 = text
            .lines()
            .skip(1)
            .take(10)
            .map(|l| {
                l.split_whitespace()
                    .rev()
                    .nth(1)
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            })
            .sum();
        assert!((total - 14.0).abs() < 1e-9, "{text}");
        // Of the compiled host code, one loop ran on threads.
        assert!(
            text.contains(" threads: 1 run(s) in 1.500 ms of the compiled host code\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nhost memory imported for direct copies: 2 range(s), 400.0 MB in 1.200 ms\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("opened on a thread of their own: 1 device(s) in 8.000 ms, 7.500 ms of it beside the program's work\nopening the device(s): adapters 0.100 ms, vkCreateDevice 7.000 ms (3 queue(s)), allocator and queues 0.200 ms, pipeline cache 0.300 ms\n"),
            "{text}"
        );
        // The host backend: no trace, no launches.
        let host = phases(None, &t, &p, 0.014);
        assert_eq!(
            row_of(&host, "interpreted"),
            "interpreted host code - 6.500 46.4%"
        );
        assert_eq!(row_of(&host, "launches"), "launches 0 0.000 0.0%");
    }
}
