//! Reports (issue: statistics and reports).
use std::process::ExitCode;
pub fn cmd_report(_args: &crate::cli::ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab report: under construction")
}
pub fn cmd_compare(_args: &crate::cli::CompareArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab compare: under construction")
}
