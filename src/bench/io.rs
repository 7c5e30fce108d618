//! `accl bench io`: the throughput of `load_csv`, `save_csv`, `load_npy`
//! and `save_npy` (MB of file per second, medians) on files it writes to a
//! temporary folder: one f32 a line (4M lines, as Rodinia's hotspot reads
//! its temperature and power), a 1000 x 1000 table separated by commas and
//! the same by spaces, and a large `.npy`. In the same run, the same files
//! through NumPy's `loadtxt` / `savetxt` / `load` / `save` and pandas'
//! `read_csv`, in a Python subprocess (`ACCL_BENCH_PYTHON`, else the
//! checkout's `.venv/bin/python`, else `python3`), when it imports NumPy.
//!
//! accl's figures time a compiled program run again and again (the builtin
//! called from a script, its glue included); Python's time the call alone.

use crate::Engine;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// One row of the table: the file, and the accl and Python statements.
struct Case {
    name: &'static str,
    file: &'static str,
    accl: &'static str,
    numpy: &'static str,
    pandas: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "load_csv, 1 column, 4M lines",
        file: "col.txt",
        accl: "let a = load_csv(f32, \"col.txt\");",
        numpy: "np.loadtxt(p('col.txt'), dtype=np.float32)",
        pandas: Some("pd.read_csv(p('col.txt'), header=None, dtype=np.float32)"),
    },
    Case {
        name: "load_csv, 1000x1000, commas",
        file: "mat.csv",
        accl: "let a = load_csv(f32, \"mat.csv\");",
        numpy: "np.loadtxt(p('mat.csv'), delimiter=',', dtype=np.float32)",
        pandas: Some("pd.read_csv(p('mat.csv'), header=None, dtype=np.float32)"),
    },
    Case {
        name: "load_csv, 1000x1000, spaces",
        file: "mat.txt",
        accl: "let a = load_csv(f32, \"mat.txt\");",
        numpy: "np.loadtxt(p('mat.txt'), dtype=np.float32)",
        pandas: Some("pd.read_csv(p('mat.txt'), sep=r'\\s+', header=None, dtype=np.float32)"),
    },
    Case {
        name: "save_csv, 1000x1000 (savetxt)",
        file: "out.csv",
        accl: "save_csv(m, \"out.csv\");",
        numpy: "np.savetxt(p('out.csv'), m, delimiter=',', fmt='%.8g')",
        pandas: None,
    },
    Case {
        name: "load_npy",
        file: "big.npy",
        accl: "let b = load_npy(f32, \"big.npy\");",
        numpy: "np.load(p('big.npy'))",
        pandas: None,
    },
    Case {
        name: "save_npy",
        file: "out.npy",
        accl: "save_npy(big, \"out.npy\");",
        numpy: "np.save(p('out.npy'), big)",
        pandas: None,
    },
];

/// The Python side: times each statement `runs` times after one untimed
/// call, and prints `index seconds` (the median) per case it ran.
const PY: &str = r#"
import sys, time, os
d, runs = sys.argv[1], int(sys.argv[2])
p = lambda f: os.path.join(d, f)
import numpy as np
try:
    import pandas as pd
except ImportError:
    pd = None
    print('nopandas', flush=True)
m = np.loadtxt(p('mat.csv'), delimiter=',', dtype=np.float32)
big = np.load(p('big.npy'))
for line in sys.stdin:
    k, lib, stmt = line.rstrip('\n').split('\t')
    if lib == 'pandas' and pd is None:
        continue
    eval(stmt)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        eval(stmt)
        t.append(time.perf_counter() - t0)
    t.sort()
    print(k, lib, t[len(t) // 2], flush=True)
"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// A value in [0, 100) from a counter (a fixed sequence, so runs compare).
fn value(i: u64) -> f32 {
    let x = i
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((x >> 40) as f32 / (1u64 << 24) as f32) * 100.0
}

/// Writes the input files into `dir`; `npy_mb` MB of f32 in the `.npy`.
fn write_inputs(dir: &Path, npy_mb: usize) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let mut col = String::with_capacity(40 << 20);
    for i in 0..4_000_000u64 {
        let _ = writeln!(col, "{:.6}", value(i));
    }
    std::fs::write(dir.join("col.txt"), col).map_err(io)?;
    for (file, sep) in [("mat.csv", ","), ("mat.txt", " ")] {
        let mut s = String::with_capacity(10 << 20);
        for r in 0..1000u64 {
            for c in 0..1000u64 {
                if c > 0 {
                    s.push_str(sep);
                }
                let _ = write!(s, "{:.6}", value(r * 1000 + c));
            }
            s.push('\n');
        }
        std::fs::write(dir.join(file), s).map_err(io)?;
    }
    let n = npy_mb * 1_000_000 / 4;
    let big = stdlib::Array::from_vec((0..n as u64).map(value).collect::<Vec<f32>>(), vec![n])
        .map_err(|e| e.to_string())?;
    stdlib::npy::save(&big, &dir.join("big.npy")).map_err(|e| e.to_string())
}

/// Seconds per run of `stmt` (median of `runs`, after one untimed run), in
/// an engine that already holds `m` (the 1000 x 1000 table) and `big`.
fn time_accl(e: &mut Engine, stmt: &str, runs: usize) -> Result<f64, String> {
    let p = e.compile(stmt).map_err(|e| e.render(100))?;
    e.run(&p).map_err(|e| e.render(100))?;
    let mut t = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        e.run(&p).map_err(|e| e.render(100))?;
        t.push(t0.elapsed().as_secs_f64());
    }
    Ok(median(t))
}

/// The Python to run: `ACCL_BENCH_PYTHON`, the checkout's `.venv`, or
/// `python3`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ACCL_BENCH_PYTHON") {
        return p.into();
    }
    let venv = Path::new(".venv/bin/python");
    if venv.exists() {
        return venv.into();
    }
    "python3".into()
}

/// One figure from Python: the case's index, the library, the seconds.
type PyTime = (usize, String, f64);

/// Python's figures and whether pandas was there, or why there are none.
fn time_python(dir: &Path, runs: usize) -> Result<(Vec<PyTime>, bool), String> {
    let py = python();
    let ok = Command::new(&py)
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Err(format!("numpy not installed (for {})", py.display()));
    }
    let mut input = String::new();
    for (k, c) in CASES.iter().enumerate() {
        let _ = writeln!(input, "{k}\tnumpy\t{}", c.numpy);
        if let Some(s) = c.pandas {
            let _ = writeln!(input, "{k}\tpandas\t{s}");
        }
    }
    let mut child = Command::new(&py)
        .args(["-c", PY])
        .arg(dir)
        .arg(runs.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
    if let Some(mut w) = child.stdin.take() {
        std::io::Write::write_all(&mut w, input.as_bytes()).map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", py.display(), out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let pandas = !text.lines().any(|l| l == "nopandas");
    let rows = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let k = w.next()?.parse().ok()?;
            let lib = w.next()?.to_string();
            let s = w.next()?.parse().ok()?;
            Some((k, lib, s))
        })
        .collect();
    Ok((rows, pandas))
}

/// `accl bench io`: the table described at the top of this file.
pub fn bench_io(runs: usize, npy_mb: usize) -> ExitCode {
    let dir = std::env::temp_dir().join(format!("accl-bench-io-{}", std::process::id()));
    let r = run(&dir, runs.max(1), npy_mb.max(1));
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            errln!("error: {m}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &Path, runs: usize, npy_mb: usize) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    write_inputs(dir, npy_mb)?;
    let mut e = Engine::new();
    e.set_fs_access(Some(dir.to_path_buf()));
    e.eval("let m = load_csv(f32, \"mat.csv\"); let big = load_npy(f32, \"big.npy\");")
        .map_err(|e| e.render(100))?;
    let mut accl = Vec::new();
    for c in CASES {
        let s = time_accl(&mut e, c.accl, runs)?;
        let bytes = std::fs::metadata(dir.join(c.file)).map_or(0, |m| m.len());
        accl.push((s, bytes));
    }
    let python = time_python(dir, runs);
    let threads = rayon::current_num_threads();
    outln!("io: MB of file per second, median of {runs} runs ({threads} threads for accl)");
    outln!(
        "{:<34} {:>9} {:>10} {:>10} {:>10}",
        "case",
        "file MB",
        "accl",
        "numpy",
        "pandas"
    );
    let (rows, pandas) = match &python {
        Ok((rows, pandas)) => (rows.as_slice(), *pandas),
        Err(_) => (&[][..], false),
    };
    for (k, (c, &(s, bytes))) in CASES.iter().zip(&accl).enumerate() {
        let mb = bytes as f64 / 1e6;
        let rate = |lib: &str| {
            rows.iter()
                .find(|(i, l, _)| *i == k && l == lib)
                .map_or("-".to_string(), |(_, _, s)| format!("{:.0}", mb / s))
        };
        outln!(
            "{:<34} {:>9.1} {:>10.0} {:>10} {:>10}",
            c.name,
            mb,
            mb / s,
            rate("numpy"),
            rate("pandas")
        );
    }
    match python {
        Err(m) => outln!("{m}"),
        Ok(_) if !pandas => outln!("pandas not installed"),
        Ok(_) => {}
    }
    Ok(())
}
