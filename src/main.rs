#![forbid(unsafe_code)]
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    mmcab::cli::run(mmcab::cli::Cli::parse())
}
