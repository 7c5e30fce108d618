//! The subcommands of the `accl` binary, as functions the tests can call.

use lang::{diag::render_plain, Diag, Source};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

/// Print diagnostics to stderr: coloured on a terminal, plain otherwise.
/// Under an MPI launcher every line starts with `rank r: `, so the lines
/// of ranks that fail at once stay apart.
pub fn print_diags(src: &Source, diags: &[Diag]) {
    let prefix = crate::mpi::rank_prefix();
    if !prefix.is_empty() {
        for line in render_plain(src, diags, 100).lines() {
            errln!("{prefix}{line}");
        }
    } else if std::io::stderr().is_terminal() {
        for d in diags {
            errln!("{:?}", d.clone().with_source(src));
        }
    } else {
        err!("{}", render_plain(src, diags, 100));
    }
}

/// `text` of the file `name` with the files it imports in front (relative
/// paths start at `name`'s folder): one joined source, and where the file
/// itself starts in it; or the import's error, in the source it is in.
pub fn with_imports(name: &str, text: &str) -> Result<(Source, usize), (Source, Vec<Diag>)> {
    let main = Source::new(name, text);
    let dir = Path::new(name).parent().unwrap_or(Path::new(""));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    lang::imports::with_imports(&main, dir).map_err(|e| (e.source, e.diags))
}

/// The text a run of `file` checks: its imports in front of `text` (as the
/// engine reads them), or `text` alone when they cannot be read.
fn checked_text(file: &Path, text: &str) -> Source {
    let name = file.display().to_string();
    match with_imports(&name, text) {
        Ok((src, _)) => src,
        Err(_) => Source::new(name, text),
    }
}

/// Check a file (with what it imports): the source its diagnostics point
/// into, and the diagnostics.
pub fn check_source_text(name: &str, text: &str) -> (Source, Vec<Diag>) {
    let (src, _) = match with_imports(name, text) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let builtins = stdlib::builtins();
    let diags = match lang::check_source(&src.text, &builtins) {
        Ok(c) => c.warnings,
        Err(d) => d,
    };
    (src, diags)
}

/// The mapping report of `text` (`crate::explain`), for a device's
/// kernel specialisation when given; `None` when the script has errors.
pub fn explain_text(name: &str, text: &str, spec: Option<&compiler::Spec>) -> Option<String> {
    let (src, at) = with_imports(name, text).ok()?;
    let builtins = stdlib::builtins();
    let prog = lang::check_source(&src.text, &builtins).ok()?.program;
    Some(crate::explain::report(
        name, &src.text, at, &prog, &builtins, spec,
    ))
}

/// `accl check FILE...`; with `explain`, the mapping report of each file
/// that checks.
pub fn check_files(files: &[impl AsRef<Path>], explain: bool) -> ExitCode {
    let mut errors = 0usize;
    for f in files {
        let f = f.as_ref();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                errln!("error: cannot read {}: {e}", f.display());
                errors += 1;
                continue;
            }
        };
        let (src, diags) = check_source_text(&f.display().to_string(), &text);
        print_diags(&src, &diags);
        errors += diags.iter().filter(|d| d.is_error()).count();
        if explain {
            if let Some(r) = explain_text(&f.display().to_string(), &text, None) {
                out!("{r}");
            }
        }
    }
    if errors > 0 {
        errln!("{errors} error{} found", if errors == 1 { "" } else { "s" });
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `accl fmt [--check] FILE...`: rewrite each file in the canonical layout
/// (accl_fmt); with `check`, only list the files that would change, with
/// their first differing line, and fail if any would. A file that does not
/// parse gets its diagnostics and is left unchanged.
pub fn fmt_files(files: &[impl AsRef<Path>], check: bool) -> ExitCode {
    let mut failed = false;
    for f in files {
        let f = f.as_ref();
        let name = f.display().to_string();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                errln!("error: cannot read {name}: {e}");
                failed = true;
                continue;
            }
        };
        let formatted = match accl_fmt::format_source(&text) {
            Ok(t) => t,
            Err(diags) => {
                print_diags(&Source::new(name, text), &diags);
                failed = true;
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if check {
            outln!("{name}: not formatted (`accl fmt {name}` rewrites it)");
            if let Some((line, old, new)) = accl_fmt::first_difference(&text, &formatted) {
                outln!("  line {line}:\n  - {old}\n  + {new}");
            }
            failed = true;
        } else if let Err(e) = std::fs::write(f, formatted) {
            errln!("error: cannot write {name}: {e}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Which backend runs device constructs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// The Vulkan backend, starting on device 0.
    Auto,
    /// The Vulkan backend, starting on this device.
    Device(usize),
    /// The host reference backend (`--host`).
    Host,
}

/// A fresh engine on the chosen backend, with file access relative to the
/// current directory.
pub fn new_engine(backend: BackendChoice) -> Result<crate::Engine, String> {
    let mut engine = match backend {
        BackendChoice::Host => crate::Engine::new(),
        BackendChoice::Auto | BackendChoice::Device(_) => {
            let d = if let BackendChoice::Device(d) = backend {
                d
            } else {
                0
            };
            let mut e = crate::Engine::vulkan(d).map_err(|e| {
                format!(
                    "{}\n  help: `accl devices` lists the devices; `--host` runs on the host reference backend",
                    e.render(100).trim_end()
                )
            })?;
            // Under an MPI launcher, rank r (on its host) starts on device
            // r % devices unless a device was chosen.
            if backend == BackendChoice::Auto {
                e.set_device(crate::mpi::default_device(e.devices().len()))?;
            }
            e
        }
    };
    engine.set_fs_access(Some(std::path::PathBuf::from(".")));
    engine
        .set_max_array_bytes(default_memory_limit())
        .set_max_call_depth(DEFAULT_CALL_DEPTH);
    Ok(engine)
}

/// The command line's call depth (the library's default is 128): calls run
/// on a stack that grows on demand (docs/reliability.md).
pub const DEFAULT_CALL_DEPTH: usize = 10_000;

/// The command line's memory limit, so one value cannot take the machine
/// (or the job) down: the least of half the machine's RAM (`MemTotal` of
/// `/proc/meminfo`), half the cgroup's `memory.max` (batch systems set it
/// per job) and a quarter of the address-space limit (`ulimit -v`, which
/// counts every mapping: a value being built is held next to the one it
/// came from, and a string once more as it is shared). No limit but the
/// host's 16 GiB guard where none of them is known.
pub fn default_memory_limit() -> usize {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let ram = read("/proc/meminfo").and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb.saturating_mul(1024))
    });
    let cgroup = read("/proc/self/cgroup").and_then(|c| cgroup_memory_max(&c, read));
    let address = read("/proc/self/limits").and_then(|l| address_space_limit(&l));
    let limit = [
        ram.map(|r| r / 2),
        cgroup.map(|c| c / 2),
        address.map(|a| a / 4),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(0);
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The soft address-space limit (`Max address space`) of a
/// `/proc/self/limits` text, in bytes; None when unlimited.
pub fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The least `memory.max` (cgroup v2) or `memory.limit_in_bytes` (v1) of
/// this process's cgroup and the ones above it, given the text of
/// `/proc/self/cgroup` and a reader of files; None when none is set.
pub fn cgroup_memory_max(cgroup: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    let mut least: Option<u64> = None;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (root, file) = match controllers {
            "" => ("/sys/fs/cgroup", "memory.max"),
            c if c.split(',').any(|c| c == "memory") => {
                ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
            }
            _ => continue,
        };
        let mut dir = path.trim_end_matches('/').to_string();
        loop {
            let v = read(&format!("{root}{dir}/{file}"))
                .and_then(|t| t.trim().parse::<u64>().ok())
                // cgroup v1 writes "no limit" as a huge page-aligned number.
                .filter(|&v| v < 1 << 60);
            if let Some(v) = v {
                least = Some(least.map_or(v, |l| l.min(v)));
            }
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
            if dir.is_empty() {
                // The root's own file (v1 has one; v2 does not).
                if let Some(v) = read(&format!("{root}/{file}"))
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .filter(|&v| v < 1 << 60)
                {
                    least = Some(least.map_or(v, |l| l.min(v)));
                }
                break;
            }
        }
    }
    least
}

/// `--max-memory`: bytes, with an optional `K`, `M`, `G` or `T` suffix
/// (powers of 1024; `KiB`, `MB` and the like read the same).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: usize = n
        .parse()
        .map_err(|_| format!("`{s}` is not a size (bytes, or a number with K, M, G or T)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "`{s}` is not a size (bytes, or a number with K, M, G or T)"
            ))
        }
    };
    n.checked_mul(1usize << shift)
        .ok_or_else(|| format!("`{s}` is too large"))
}

/// Limits of `accl run` on what a script may take.
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct LimitFlags {
    /// The largest array or string the script may make (bytes; K, M, G
    /// suffixes); default: half the machine's memory.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", value_parser = parse_bytes))]
    pub max_memory: Option<usize>,
    /// The deepest nesting of calls (default 10,000).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_call_depth: Option<usize>,
}

impl LimitFlags {
    /// Set them on `engine` (unset: the engine's stay).
    pub fn apply(&self, engine: &mut crate::Engine) {
        if let Some(n) = self.max_memory {
            engine.set_max_array_bytes(n);
        }
        if let Some(n) = self.max_call_depth {
            engine.set_max_call_depth(n);
        }
    }
}

/// How device kernels are compiled (`accl run`, `accl bench device`).
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct KernelFlags {
    /// Bounds-check mode: every device array index and integer divisor is
    /// checked; a violation is an error at its source span and the kernel's
    /// results are not copied back (slower; see docs/reliability.md).
    #[cfg_attr(feature = "cli", arg(long = "check"))]
    pub checks: bool,
    /// The loop watchdog: loop iterations one kernel invocation may run
    /// before it is stopped and reported (0: off; default 2^31).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub loop_budget: Option<u32>,
}

impl KernelFlags {
    /// Set them on `engine` (an unset budget keeps the engine's).
    pub fn apply(&self, engine: &mut crate::Engine) {
        engine.set_checks(self.checks);
        if let Some(n) = self.loop_budget {
            engine.set_loop_budget(n);
        }
    }
}

/// Options of `accl run` beyond the backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Write a timeline trace here.
    pub trace: Option<&'a Path>,
    pub kernels: KernelFlags,
    /// Print the mapping report (for the device) to stderr first.
    pub explain: bool,
    /// Print where the time went to stderr at exit.
    pub time: bool,
    /// The script's parameters.
    pub args: &'a [String],
    pub limits: LimitFlags,
}

/// `accl run [--host] [--check] [--loop-budget N] [--trace OUT] FILE`: run a
/// script; exit status 1 on any error. File access is on, relative to the
/// current directory. The trace is written whether the script succeeds or
/// fails.
///
/// Under an MPI launcher MPI is initialised first and finalised after a
/// run that succeeds; a rank that fails prints its diagnostic (each line
/// prefixed `rank r: `) and ends the whole job with `MPI_Abort`, so the
/// other ranks do not wait for it forever.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Note when the command line's `main` began (for `--time`'s account of
/// the time outside the wall).
pub fn mark_start() {
    STARTED.get_or_init(std::time::Instant::now);
}

pub fn run_file(file: &Path, backend: BackendChoice, opts: RunOptions<'_>) -> ExitCode {
    if !crate::mpi::launched() {
        return run_file_once(file, backend, opts);
    }
    if let Err(m) = crate::mpi::init() {
        errln!("{}error: cannot start MPI: {m}", crate::mpi::rank_prefix());
        return ExitCode::FAILURE;
    }
    let code = run_file_once(file, backend, opts);
    if code != ExitCode::SUCCESS {
        crate::mpi::abort(1);
    }
    crate::mpi::finalize();
    code
}

fn run_file_once(file: &Path, backend: BackendChoice, opts: RunOptions<'_>) -> ExitCode {
    let trace = opts.trace;
    // `-`: the script comes from stdin.
    let text = if file == Path::new("-") {
        let mut t = String::new();
        match std::io::Read::read_to_string(&mut std::io::stdin(), &mut t) {
            Ok(_) => t,
            Err(e) => {
                errln!("error: cannot read the script from stdin: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                errln!("error: cannot read {}: {e}", file.display());
                return ExitCode::FAILURE;
            }
        }
    };
    // A bad trace path is refused before the run, not after it.
    if let Some(out) = trace {
        if let Err(e) = std::fs::write(out, b"") {
            errln!("error: cannot write the trace to {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    if backend == BackendChoice::Host && opts.kernels.loop_budget.is_some() {
        errln!(
            "error: --loop-budget is the device kernels' watchdog, and --host runs every construct on the host"
        );
        errln!("  help: leave out --loop-budget, or run on a device");
        return ExitCode::FAILURE;
    }
    let t_engine = std::time::Instant::now();
    let before = STARTED.get().map(|t| t_engine.duration_since(*t));
    let mut engine = match new_engine(backend) {
        Ok(e) => e,
        Err(m) => {
            errln!("error: {m}");
            return ExitCode::FAILURE;
        }
    };
    let engine_start = t_engine.elapsed();
    // It runs this one program.
    engine.whole_program = true;
    opts.kernels.apply(&mut engine);
    opts.limits.apply(&mut engine);
    engine.set_args(opts.args).set_env_access(true);
    if opts.explain {
        let spec = match backend {
            BackendChoice::Host => None,
            BackendChoice::Auto => device_spec(0).ok(),
            BackendChoice::Device(d) => device_spec(d).ok(),
        };
        if let Some(r) = explain_text(&file.display().to_string(), &text, spec.as_ref()) {
            err!("{r}");
        }
    }
    let traced = trace.is_some() || (opts.time && backend != BackendChoice::Host);
    if traced {
        if let Err(m) = engine.start_trace() {
            errln!("error: --trace: {m}");
            return ExitCode::FAILURE;
        }
    }
    if opts.time {
        crate::interp::phases::start();
    }
    let started = std::time::Instant::now();
    let r = engine.eval_source(&file.display().to_string(), &text);
    let wall = started.elapsed().as_secs_f64();
    let phases = opts.time.then(crate::interp::phases::stop);
    let timings = engine.last_timings();
    let phases = |json: Option<&str>| {
        let p = phases.unwrap_or_default();
        crate::timing::phases(json, &timings, &p, wall)
    };
    if traced {
        match engine.stop_trace() {
            Ok(json) => {
                if opts.time {
                    err!("{}", crate::timing::table(&json, wall));
                    err!("{}", phases(Some(&json)));
                    err!("{}", crate::timing::host_code(&checked_text(file, &text)));
                }
                if let Some(out) = trace {
                    if let Err(e) = std::fs::write(out, json) {
                        errln!("error: cannot write the trace to {}: {e}", out.display());
                        return ExitCode::FAILURE;
                    }
                }
            }
            Err(m) => {
                errln!("error: --trace: {m}");
                return ExitCode::FAILURE;
            }
        }
    } else if opts.time {
        err!("{}", phases(None));
        err!("{}", crate::timing::host_line(wall));
        err!("{}", crate::timing::host_code(&checked_text(file, &text)));
    }
    let messages = engine.take_validation_messages();
    for m in &messages {
        errln!("validation: {m}");
    }
    if opts.time {
        // Outside the wall time: the engine's start (the Vulkan instance)
        // before it, and its end (every device's memory and objects
        // released) after.
        let t_end = std::time::Instant::now();
        drop(engine);
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let end = t_end.elapsed();
        errln!(
            "outside the wall: {}engine start {:.3} ms{}, engine end {:.3} ms{}",
            before.map_or(String::new(), |b| format!(
                "reading the script {:.3} ms, ",
                ms(b)
            )),
            ms(engine_start),
            crate::interp::phases::backend_start()
                .filter(|_| backend != BackendChoice::Host)
                .map_or(String::new(), |s| format!(
                    " (Vulkan loader {:.3} ms, vkCreateInstance {:.3} ms, adapters {:.3} ms)",
                    ms(s.loader),
                    ms(s.instance),
                    ms(s.adapters)
                )),
            ms(end),
            crate::interp::phases::backend_end().map_or(String::new(), |e| format!(
                " (arrays present on devices {:.3} ms, devices {:.3} ms, the rest: the instance, the host's arrays {:.3} ms)",
                ms(e.present),
                ms(e.devices),
                ms(end.saturating_sub(e.present + e.devices))
            ))
        );
    }
    match r {
        Ok(_) if messages.is_empty() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            // `exit(code)` ends the run with its status, quietly. The shell
            // sees the low byte, as C's `exit` gives it: `exit(-1)` is 255
            // (a failure), `exit(300)` is 44.
            if let Some(code) = e.diags.first().and_then(crate::interp::error::exit_code) {
                let status = (code & 255) as u8;
                if status != 0 && crate::mpi::launched() {
                    crate::mpi::abort(i32::from(status));
                }
                return ExitCode::from(status);
            }
            print_diags(&e.source, &e.diags);
            ExitCode::FAILURE
        }
    }
}

/// The loop that `accl bench host` times.
pub const BENCH_SRC: &str = "for i in 0..n { a[i] = a[i] * 2.0 + 1.0; }";

/// `accl bench host`: host-code throughput of [`BENCH_SRC`] (compiled once, run `runs` times) with
/// `a: f32[n]`; prints every run and the median in iterations per second.
pub fn bench_host(n: usize, runs: usize) -> ExitCode {
    let mut engine = crate::Engine::new();
    if let Err(e) = engine.set_array("a", vec![0.0f32; n], &[n]) {
        errln!("{e}");
        return ExitCode::FAILURE;
    }
    engine.set("n", n as i64);
    // Compiled once (checked, closures, native code), then run: the runs
    // time the loop, not the compile, which is printed on its own.
    let t = std::time::Instant::now();
    let program = match engine.compile(BENCH_SRC) {
        Ok(p) => p,
        Err(e) => {
            err!("{}", e.render(100));
            return ExitCode::FAILURE;
        }
    };
    outln!("compile: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    let mut rates = Vec::new();
    let mut cpu_rates = Vec::new();
    for r in 0..runs.max(1) {
        let cpu0 = thread_cpu_seconds();
        let t = std::time::Instant::now();
        if let Err(e) = engine.run(&program) {
            err!("{}", e.render(100));
            return ExitCode::FAILURE;
        }
        let s = t.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let rate = n as f64 / s;
        rates.push(rate);
        match cpu {
            Some(c) if c > 0.0 => {
                cpu_rates.push(n as f64 / c);
                outln!("run {}: {s:.3} s wall, {c:.3} s cpu, {:.1} M iterations/s (wall), {:.1} M/s (cpu)", r + 1, rate / 1e6, n as f64 / c / 1e6)
            }
            _ => outln!("run {}: {s:.3} s, {:.1} M iterations/s", r + 1, rate / 1e6),
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    outln!(
        "host code ({}): `{BENCH_SRC}` n = {n}: median {:.1} M iterations/s (wall clock) over {} runs",
        if crate::interp::native::enabled() { "compiled" } else { "interpreted: ACCL_JIT=0" },
        median(&mut rates) / 1e6,
        rates.len()
    );
    if !cpu_rates.is_empty() {
        outln!(
            "                  median {:.1} M iterations/s per CPU-second of this thread (one core, unaffected by other load)",
            median(&mut cpu_rates) / 1e6
        );
    }
    if let Err(e) = crate::bench::host::extras(runs.max(1)) {
        errln!("{e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// CPU time of the calling thread in seconds (Linux `schedstat`), if known.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// `accl spirv FILE`: the SPIR-V disassembly of every kernel, specialised
/// for device `device` when given (else for a Vulkan 1.2 device with every
/// feature, 256-invocation work groups and 32-bit indexing).
pub fn spirv_file(file: &Path, device: Option<usize>) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: cannot read {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let (src, _) = match with_imports(&file.display().to_string(), &text) {
        Ok(s) => s,
        Err((src, d)) => {
            print_diags(&src, &d);
            return ExitCode::FAILURE;
        }
    };
    let builtins = stdlib::builtins();
    let prog = match lang::check_source(&src.text, &builtins) {
        Ok(c) => c.program,
        Err(d) => {
            print_diags(&src, &d);
            return ExitCode::FAILURE;
        }
    };
    let spec = match device {
        None => compiler::Spec::default(),
        Some(d) => match device_spec(d) {
            Ok(s) => s,
            Err(m) => {
                errln!("error: {m}");
                return ExitCode::FAILURE;
            }
        },
    };
    let mut failed = false;
    for (body, c) in crate::explain::kernel_constructs(&prog) {
        let (part, line, _) = src.locate(c.span.start as usize);
        let line = if part == &*src.name {
            format!("{line}")
        } else {
            format!("{line} of {part}")
        };
        let r = compiler::lower(&prog, body, c, &builtins).and_then(|k| {
            let words = compiler::compile(&k, &spec)?;
            Ok((k.name.clone(), words))
        });
        match r {
            Ok((name, words)) => {
                outln!("; {name}: `{}` at line {line}", c.kind.name());
                outln!("{}", compiler::disassemble(&words));
            }
            Err(d) => {
                print_diags(&src, &[d]);
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The kernel specialisation of device `d` (opens it).
fn device_spec(d: usize) -> Result<compiler::Spec, String> {
    let b = crate::vulkan::VulkanBackend::new()?;
    b.spec(d)
}

/// `accl --version`: the version and the git commit the binary was built
/// from, then the Vulkan driver of device 0 (the device `accl run` starts
/// on, `ACCL_DEVICES` honoured) or why there is none. Never fails.
pub fn version_text() -> String {
    let vulkan = match std::panic::catch_unwind(device0_driver) {
        Ok(Ok(line)) => line,
        Ok(Err(m)) => format!("no Vulkan device: {m}"),
        Err(_) => "no Vulkan device: the driver query failed".to_string(),
    };
    format!(
        "accl {} (commit {})\n{}\n",
        env!("CARGO_PKG_VERSION"),
        env!("ACCL_GIT_COMMIT"),
        vulkan.trim_end()
    )
}

/// `device 0: NAME, driver DRIVER (version X.Y.Z), Vulkan A.B.C`.
fn device0_driver() -> Result<String, String> {
    let instance = vk_runtime::Instance::new(&vk_runtime::InstanceOptions {
        validation: false,
        app_name: "accl".into(),
    })
    .map_err(|e| e.to_string())?;
    let all = crate::vulkan::ordered_adapters(&instance)?;
    if all.is_empty() {
        return Err("the driver lists no device with a compute queue".into());
    }
    let env = std::env::var("ACCL_DEVICES").ok();
    let chosen = crate::vulkan::select_devices(env.as_deref().unwrap_or(""), &all)?;
    let Some(a) = chosen.first() else {
        return Err("no device is selected".into());
    };
    let (ma, mi, pa) = a.api_version;
    let version = driver_version(a.vendor_id, a.driver_version);
    let driver = if a.driver.is_empty() {
        format!("driver version {version}")
    } else {
        format!("driver {} (version {version})", a.driver)
    };
    Ok(format!(
        "device 0: {}, {driver}, Vulkan {ma}.{mi}.{pa}",
        a.name
    ))
}

/// A driver's version number as its vendor encodes it.
fn driver_version(vendor: u32, v: u32) -> String {
    match vendor {
        // NVIDIA: 10.8.8.6 bits.
        0x10de => format!(
            "{}.{}.{}.{}",
            v >> 22,
            (v >> 14) & 0xff,
            (v >> 6) & 0xff,
            v & 0x3f
        ),
        // Everyone else (Mesa, AMD's drivers, MoltenVK): Vulkan's own 10.10.12 bits.
        _ => format!("{}.{}.{}", v >> 22, (v >> 12) & 0x3ff, v & 0xfff),
    }
}

/// `accl devices`: every Vulkan device accl can use, in device-number order.
pub fn list_devices() -> ExitCode {
    let instance = match vk_runtime::Instance::new(&vk_runtime::InstanceOptions::default()) {
        Ok(i) => i,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match crate::vulkan::ordered_adapters(&instance) {
        Ok(v) if v.is_empty() => {
            errln!(
                "no Vulkan device with a compute queue (install lavapipe: `. scripts/setup.sh`)"
            );
            ExitCode::FAILURE
        }
        Ok(v) => {
            for (i, a) in v.iter().enumerate() {
                outln!("device {i}: {a}");
                use compiler::ExactF32;
                let how = match (
                    crate::vulkan::device::exact_f32(a),
                    a.features.shader_float64,
                ) {
                    (ExactF32::Fma, true) => "the driver's refined with fma, correctly rounded",
                    (ExactF32::FmaByF64, true) => {
                        "the driver's refined with fma (computed in f64), correctly rounded"
                    }
                    (ExactF32::InF64, true) => "computed in f64, correctly rounded",
                    (ExactF32::Off, _) => "the driver's instructions",
                    (_, false) => "the driver's (no f64, which the exact routes need)",
                };
                outln!("    f32 `/` and `sqrt` in kernels: {how}");
            }
            let used = crate::vulkan::default_devices(&v).len();
            if used < v.len() {
                outln!(
                    "devices {used}.. (CPU drivers) are used only when ACCL_DEVICES selects them \
                     (`all`, `cpu` or their numbers); by default accl runs on the GPUs"
                );
            }
            ExitCode::SUCCESS
        }
        Err(m) => {
            errln!("error: {m}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_space_limit_reads_from_proc_limits() {
        let head = "Limit                     Soft Limit           Hard Limit           Units\n";
        let set = format!(
            "{head}Max address space         8192000000           unlimited            bytes\n"
        );
        assert_eq!(address_space_limit(&set), Some(8_192_000_000));
        let unset = format!(
            "{head}Max address space         unlimited            unlimited            bytes\n"
        );
        assert_eq!(address_space_limit(&unset), None);
    }

    #[test]
    fn the_least_cgroup_memory_max_up_the_tree() {
        let files = |p: &str| -> Option<String> {
            match p {
                "/sys/fs/cgroup/slurm/job_1/step_0/memory.max" => Some("max\n".into()),
                "/sys/fs/cgroup/slurm/job_1/memory.max" => Some("4294967296\n".into()),
                "/sys/fs/cgroup/slurm/memory.max" => Some("8589934592\n".into()),
                "/sys/fs/cgroup/memory/job/memory.limit_in_bytes" => {
                    Some("9223372036854771712\n".into())
                }
                "/sys/fs/cgroup/memory/memory.limit_in_bytes" => Some("1073741824\n".into()),
                _ => None,
            }
        };
        assert_eq!(
            cgroup_memory_max("0::/slurm/job_1/step_0\n", files),
            Some(4_294_967_296)
        );
        // cgroup v1: the job's "no limit", the root's 1 GiB.
        assert_eq!(
            cgroup_memory_max("4:memory:/job\n3:cpu,cpuacct:/job\n", files),
            Some(1_073_741_824)
        );
        assert_eq!(cgroup_memory_max("0::/\n", files), None);
    }
}
