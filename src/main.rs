//! The `accl` command line.

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "accl",
    disable_version_flag = true,
    about = "An OpenACC-style array language: host code interpreted, parallel constructs run on Vulkan compute"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Print the version, the git commit it was built from and the Vulkan
    /// driver of device 0.
    #[arg(short = 'V', long)]
    version: bool,
    /// Start the interactive session on the host reference backend.
    #[arg(long)]
    host: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and type-check scripts; print every diagnostic. Exit status 1 if any error.
    Check {
        /// Also print how each compute construct maps onto gangs, workers
        /// and vector lanes, its reductions and data, and why an inner
        /// loop stayed sequential.
        #[arg(long)]
        explain: bool,
        /// The .accl files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a script; device constructs run on Vulkan device 0 (or --device N).
    /// Exit status 1 on an error.
    Run {
        /// Run every construct on the host reference backend.
        #[arg(long, conflicts_with = "device")]
        host: bool,
        /// The device constructs start on (numbered as `accl devices` lists them).
        #[arg(long)]
        device: Option<usize>,
        /// Print the mapping report of each compute construct (as `accl
        /// check --explain`, with what the device does) to stderr first.
        #[arg(long)]
        explain: bool,
        /// At exit, print where the time went to stderr: per kernel and per
        /// copy kind (count, total, mean, share of device time), compile,
        /// launch and wait time, and the wall time.
        #[arg(long)]
        time: bool,
        /// Write a timeline trace of the run (Chrome/Perfetto JSON): a host
        /// track and one track per device queue.
        #[arg(long, value_name = "OUT.json", conflicts_with = "host")]
        trace: Option<PathBuf>,
        #[command(flatten)]
        kernels: accl::cli::KernelFlags,
        #[command(flatten)]
        limits: accl::cli::LimitFlags,
        /// The .accl script (`-` reads it from stdin).
        file: PathBuf,
        /// Parameters for the script, read by `nargs()`, `arg(i)`,
        /// `arg_i32(i)` and `arg_f64(i)` (after `--` when one starts with `-`).
        #[arg(trailing_var_arg = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// Rewrite scripts in the canonical layout (docs/tooling.md); comments
    /// and meaning are kept. A file that does not parse is left unchanged
    /// (exit status 1).
    Fmt {
        /// Change nothing: list the files that are not formatted, with
        /// their first differing line; exit status 1 if there is any.
        #[arg(long)]
        check: bool,
        /// The .accl files to format.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the Vulkan devices: name, type, memory, queue families, limits
    /// and the features accl uses.
    Devices,
    /// Print the SPIR-V disassembly of every kernel of a script.
    Spirv {
        /// Specialise for this device (default: a generic Vulkan 1.2 device).
        #[arg(long)]
        device: Option<usize>,
        /// The .accl script.
        file: PathBuf,
    },
    /// Measure throughput.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
    /// Serve the Language Server Protocol on stdin/stdout for editors:
    /// diagnostics, hover, go to definition, references, completion,
    /// document symbols and semantic tokens (docs/editor.md).
    Lsp {
        /// Accepted for clients that pass it (stdio is the only transport).
        #[arg(long)]
        stdio: bool,
    },
    /// Print a shell completion script for accl (e.g. `accl completions
    /// bash > ~/.local/share/bash-completion/completions/accl`).
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Vulkan device figures: copy ceiling, saxpy and sum GB/s, Jacobi,
    /// Mandelbrot, histogram, CSR SpMV, JIT latency (device timestamps).
    Device {
        /// The device (numbered as `accl devices` lists them).
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Timed runs per figure (the median is reported).
        #[arg(long, default_value_t = 7)]
        runs: usize,
        /// Problem sizes: `gpu` (full) or `cpu` (small); by
        /// default from the device type.
        #[arg(long)]
        sizes: Option<String>,
        /// How the kernels are compiled (to measure what checks and the
        /// watchdog cost).
        #[command(flatten)]
        kernels: accl::cli::KernelFlags,
        /// Run only these workloads (comma-separated): jit, streams, large,
        /// jacobi, mandelbrot, math, histogram, spmv.
        #[arg(long)]
        only: Option<String>,
    },
    /// Async queues and devices (wall clock): the pipelined Mandelbrot
    /// against the same blocks without async, the launch cost of a chain of
    /// 10,000 tiny async kernels, and Mandelbrot over every device against
    /// one device. Each figure times a program compiled once and run again
    /// and again (the script's own clock around it).
    Async {
        /// The first device (numbered as `accl devices` lists them).
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Timed runs per figure (the median is reported).
        #[arg(long, default_value_t = 7)]
        runs: usize,
        /// Mandelbrot image side (default: 8192 on a GPU, 1024 on a CPU device).
        #[arg(long)]
        side: Option<usize>,
        /// How many devices the multi-device figure spreads over, from
        /// the first (default: every GPU, or every CPU device where there
        /// is no GPU).
        #[arg(long)]
        devices: Option<usize>,
    },
    /// Latency of single constructs (wall clock): a tiny synchronous
    /// kernel and reduction, small copies, Jacobi reading its error every
    /// iteration, host work overlapping an async kernel, and the compile
    /// wait of a 3-kernel script (cold pipeline cache).
    Latency {
        /// The device (numbered as `accl devices` lists them).
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Timed runs per figure (the median is reported).
        #[arg(long, default_value_t = 7)]
        runs: usize,
    },
    /// MB/s of load_csv, save_csv, load_npy and save_npy on files written
    /// to a temporary folder, beside NumPy's loadtxt/savetxt/load/save and
    /// pandas' read_csv on the same files when Python imports them
    /// (ACCL_BENCH_PYTHON, else .venv/bin/python, else python3).
    Io {
        /// Timed runs per figure (the median is reported).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Size of the .npy file in MB (f32 elements).
        #[arg(long, default_value_t = 256)]
        npy_mb: usize,
    },
    /// Host-code iterations per second of `for i in 0..n { a[i] = a[i] * 2.0 + 1.0; }` (compiled once, then timed runs).
    Host {
        /// Loop length.
        #[arg(long, default_value_t = 10_000_000)]
        n: usize,
        /// Number of timed runs (the median is reported).
        #[arg(long, default_value_t = 7)]
        runs: usize,
    },
}

/// `eprintln!` that drops a write error instead of panicking on a closed
/// stderr, as the library's messages do.
macro_rules! errln {
    ($($a:tt)*) => { accl::interp::machine::write_stderr(&format!("{}\n", format_args!($($a)*))) };
}

fn main() -> ExitCode {
    accl::cli::mark_start();
    let cli = Cli::parse();
    if cli.version {
        accl::interp::machine::write_stdout(&accl::cli::version_text());
        return ExitCode::SUCCESS;
    }
    let Some(cmd) = cli.cmd else {
        let choice = if cli.host {
            accl::cli::BackendChoice::Host
        } else {
            accl::cli::BackendChoice::Auto
        };
        return match accl::cli::new_engine(choice) {
            Ok(e) => {
                let code = accl::repl::run(e);
                // A session under mpirun that used the MPI builtins.
                accl::mpi::finalize();
                code
            }
            Err(msg) => {
                errln!("error: {msg}");
                ExitCode::FAILURE
            }
        };
    };
    match cmd {
        Cmd::Check { files, explain } => accl::cli::check_files(&files, explain),
        Cmd::Run {
            host,
            device,
            explain,
            time,
            trace,
            kernels,
            limits,
            file,
            args,
        } => accl::cli::run_file(
            &file,
            match (host, device) {
                (true, _) => accl::cli::BackendChoice::Host,
                (false, Some(d)) => accl::cli::BackendChoice::Device(d),
                (false, None) => accl::cli::BackendChoice::Auto,
            },
            accl::cli::RunOptions {
                trace: trace.as_deref(),
                kernels,
                explain,
                time,
                args: &args,
                limits,
            },
        ),
        Cmd::Fmt { files, check } => accl::cli::fmt_files(&files, check),
        Cmd::Devices => accl::cli::list_devices(),
        Cmd::Lsp { stdio: _ } => match accl_lsp::run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                errln!("error: accl lsp: {e}");
                ExitCode::FAILURE
            }
        },
        Cmd::Completions { shell } => {
            // Into memory first: `generate` panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "accl", &mut script);
            accl::interp::machine::write_stdout(&String::from_utf8_lossy(&script));
            ExitCode::SUCCESS
        }
        Cmd::Spirv { device, file } => accl::cli::spirv_file(&file, device),
        Cmd::Bench {
            what: BenchWhat::Host { n, runs },
        } => accl::cli::bench_host(n, runs),
        Cmd::Bench {
            what: BenchWhat::Io { runs, npy_mb },
        } => accl::bench::io::bench_io(runs, npy_mb),
        Cmd::Bench {
            what: BenchWhat::Latency { device, runs },
        } => accl::bench::bench_latency(device, runs),
        Cmd::Bench {
            what:
                BenchWhat::Async {
                    device,
                    runs,
                    side,
                    devices,
                },
        } => accl::bench::bench_async(device, runs, side, devices),
        Cmd::Bench {
            what:
                BenchWhat::Device {
                    device,
                    runs,
                    sizes,
                    kernels,
                    only,
                },
        } => {
            let only = match accl::bench::Only::parse(only.as_deref()) {
                Ok(o) => o,
                Err(m) => {
                    errln!("error: {m}");
                    return ExitCode::FAILURE;
                }
            };
            let sizes = match sizes.as_deref() {
                None => None,
                Some("gpu") => Some(accl::bench::Sizes::GPU),
                Some("cpu") => Some(accl::bench::Sizes::CPU),
                Some(other) => {
                    errln!("error: --sizes is `gpu` or `cpu`, not `{other}`");
                    return ExitCode::FAILURE;
                }
            };
            accl::bench::bench_device(device, runs, sizes, kernels, only)
        }
    }
}
