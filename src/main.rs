#![forbid(unsafe_code)]
use std::process::ExitCode;

fn main() -> ExitCode {
    match mmcab::cli::parse() {
        Ok(cli) => mmcab::cli::run(cli),
        Err(code) => code,
    }
}
