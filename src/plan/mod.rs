//! Plans: configs x workloads x repetitions (issues: engine, knobs and runner).
pub mod spec;

use std::process::ExitCode;

pub fn cmd_run(args: &crate::cli::RunArgs) -> anyhow::Result<ExitCode> {
    crate::workload::cmd_run_once(args)
}
