//! `mmcab report DIR` and `mmcab compare BASE... [--vs NEW...]`: the mail text on stdout,
//! where the report went on stderr.

use super::output::Output;
use crate::report::{self, CompareOptions, Written};
use crate::stats::multiple::Correction;
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
    /// How the p-values of the report are adjusted together
    #[arg(long, value_enum, default_value_t = Correction::BenjaminiHochberg)]
    pub correction: Correction,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Each results directory is one boot. With --vs, the directories \
    before it are the baseline's boots and those after it the new side's: changes are \
    tested on the boot means (at least 2 boots per side; 3-5 recommended). Without --vs, \
    each directory is its own side of one boot, compared with the first: the change is \
    shown but not called faster or slower, unless `mmcab calibrate` stored this board's \
    boot-to-boot spread."
)]
pub struct CompareArgs {
    /// Results directories (one per boot): the baseline's boots, or with no --vs, one
    /// directory per side (the first is the baseline)
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The new side's results directories (one per boot)
    #[arg(long, num_args = 1.., value_name = "NEW_DIR")]
    pub vs: Vec<PathBuf>,
    /// Compare even when device identity or plan differ (printed as a loud warning)
    #[arg(long)]
    pub force: bool,
    /// How the p-values of the report are adjusted together
    #[arg(long, value_enum, default_value_t = Correction::BenjaminiHochberg)]
    pub correction: Correction,
    /// Calibration file for sides of one boot (default: the one `mmcab calibrate`
    /// stored for this device and plan, if any)
    #[arg(long, value_name = "FILE", conflicts_with = "no_calibration")]
    pub calibration: Option<PathBuf>,
    /// Do not use a stored calibration
    #[arg(long)]
    pub no_calibration: bool,
}

pub fn report(args: &ReportArgs, out: &Output) -> Result<ExitCode> {
    show(
        &report::report(&args.dir, args.baseline.as_deref(), args.correction)?,
        out,
    )
}

pub fn compare(args: &CompareArgs, out: &Output) -> Result<ExitCode> {
    if args.vs.is_empty() && args.dirs.len() < 2 {
        anyhow::bail!(
            "mmcab compare needs two sides: BASE_DIR... --vs NEW_DIR... (one results \
             directory per boot), or DIR_A DIR_B"
        );
    }
    let opts = CompareOptions {
        base: args.dirs.clone(),
        new: args.vs.clone(),
        force: args.force,
        correction: args.correction,
        calibration: args.calibration.clone(),
        calibration_store: if args.no_calibration {
            None
        } else {
            super::calibrate::store_dir()
        },
    };
    show(&report::compare(&opts)?, out)
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

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command};
    use clap::Parser;

    fn compare_args(args: &[&str]) -> super::CompareArgs {
        let cli = Cli::try_parse_from([&["mmcab", "compare"], args].concat()).unwrap();
        match cli.command {
            Command::Compare(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn boots_before_and_after_vs() {
        let a = compare_args(&["a1", "a2", "a3", "--vs", "b1", "b2"]);
        assert_eq!(a.dirs.len(), 3);
        assert_eq!(a.vs.len(), 2);
        let old = compare_args(&["a", "b", "c"]);
        assert_eq!((old.dirs.len(), old.vs.len()), (3, 0));
        assert!(Cli::try_parse_from(["mmcab", "compare", "a", "--vs"]).is_err());
        assert!(Cli::try_parse_from([
            "mmcab",
            "compare",
            "a",
            "b",
            "--calibration",
            "f",
            "--no-calibration"
        ])
        .is_err());
    }
}
