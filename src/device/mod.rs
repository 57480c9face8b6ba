//! Device discovery and introspection (issue: foundation).
use std::process::ExitCode;
pub fn cmd_info(_args: &crate::cli::InfoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab info: under construction")
}
