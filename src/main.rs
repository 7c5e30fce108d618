//! The `accl` command line.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "accl", version, about = "An OpenACC-style array language: host code interpreted, parallel constructs run on Vulkan compute")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and type-check scripts; print every diagnostic. Exit status 1 if any error.
    Check {
        /// The .accl files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Check { files } => accl::cli::check_files(&files),
    }
}
