//! `mmcab report DIR` and `mmcab compare DIR_A DIR_B ...`: the mail text on stdout, where
//! the report went on stderr.

use super::output::Output;
use crate::report::{self, Written};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directory of `mmcab run` or `mmcab probe`, a reference CSV, or published
    /// flashbench output (text)
    pub dir: PathBuf,
    /// Config to compare the others against (default: the plan's first config)
    #[arg(long)]
    pub baseline: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results directories; the first is the baseline
    #[arg(required = true, num_args = 2..)]
    pub dirs: Vec<PathBuf>,
    /// Compare even when device identity or plan differ (printed as a loud warning)
    #[arg(long)]
    pub force: bool,
}

pub fn report(args: &ReportArgs, out: &Output) -> Result<ExitCode> {
    show(&report::report(&args.dir, args.baseline.as_deref())?, out)
}

pub fn compare(args: &CompareArgs, out: &Output) -> Result<ExitCode> {
    show(&report::compare(&args.dirs, args.force)?, out)
}

fn show(written: &Written, out: &Output) -> Result<ExitCode> {
    for difference in &written.forced {
        out.line(&format!("mmcab: WARNING: {difference}"));
    }
    for warning in &written.warnings {
        out.warn(warning);
    }
    out.print(&written.mail)?;
    out.line(&format!(
        "mmcab: report written to {}/ ({})",
        written.dir.display(),
        written.files
    ));
    Ok(ExitCode::SUCCESS)
}
