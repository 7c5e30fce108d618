//! The `accl` command line.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "accl",
    version,
    about = "An OpenACC-style array language: host code interpreted, parallel constructs run on Vulkan compute"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Start the interactive session on the host reference backend.
    #[arg(long)]
    host: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and type-check scripts; print every diagnostic. Exit status 1 if any error.
    Check {
        /// The .accl files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a script. Device constructs run on the best backend available
    /// (the host until the Vulkan backend lands). Exit status 1 on an error.
    Run {
        /// Run every construct on the host reference backend.
        #[arg(long)]
        host: bool,
        /// The .accl script.
        file: PathBuf,
    },
    /// Measure throughput.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Host-interpreter iterations per second of `for i in 0..n { a[i] = a[i] * 2.0 + 1.0; }`.
    Host {
        /// Loop length.
        #[arg(long, default_value_t = 10_000_000)]
        n: usize,
        /// Number of timed runs (the median is reported).
        #[arg(long, default_value_t = 7)]
        runs: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(cmd) = cli.cmd else {
        let choice = if cli.host {
            accl::cli::BackendChoice::Host
        } else {
            accl::cli::BackendChoice::Auto
        };
        return match accl::cli::new_engine(choice) {
            Ok(e) => accl::repl::run(e),
            Err(msg) => {
                eprintln!("error: {msg}");
                ExitCode::FAILURE
            }
        };
    };
    match cmd {
        Cmd::Check { files } => accl::cli::check_files(&files),
        Cmd::Run { host, file } => accl::cli::run_file(
            &file,
            if host {
                accl::cli::BackendChoice::Host
            } else {
                accl::cli::BackendChoice::Auto
            },
        ),
        Cmd::Bench {
            what: BenchWhat::Host { n, runs },
        } => accl::cli::bench_host(n, runs),
    }
}
