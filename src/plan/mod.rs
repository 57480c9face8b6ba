//! Plans: configs x workloads x repetitions (issues: engine, knobs and runner).
pub mod config;
pub mod matrix;

use std::process::ExitCode;
pub fn cmd_run(_args: &crate::cli::RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab run: under construction")
}
