//! Knobs: snapshot, apply, verify, restore (issue: knobs and runner).
use std::process::ExitCode;
pub fn cmd_knobs(_args: &crate::cli::KnobsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab knobs: under construction")
}
