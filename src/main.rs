#![forbid(unsafe_code)]
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = mmcab::cli::Cli::parse();
    match mmcab::cli::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            // One line for the common case; the chain of causes follows ": ".
            eprintln!("mmcab: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
