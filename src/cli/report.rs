//! `mmcab report DIR` and `mmcab compare DIR_A DIR_B ...`: the mail text (or JSON, or
//! LAVA signals) on stdout, where the report went on stderr, and the regression gate's
//! exit status (see `gates.rs`).

use super::gates::{self, GateArgs, OutputArgs};
use super::output::Output;
use crate::report::{self, baseline};
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directory written by `mmcab run`
    pub dir: PathBuf,
    /// Config to compare the others against (default: the plan's first config)
    #[arg(long)]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub gates: GateArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results directories; the first is the baseline (with --baseline: all are new)
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Compare even when device identity or plan differ (printed as a loud warning)
    #[arg(long)]
    pub force: bool,
    /// Baseline store: compare DIRS with the baseline kept there for their device and plan
    /// (STORE/<device>/<plan>/)
    #[arg(long, value_name = "STORE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: store DIRS as the baseline of their device and plan (replacing the
    /// old one) instead of comparing
    #[arg(long, requires = "baseline")]
    pub save_baseline: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub gates: GateArgs,
}

pub fn report(args: &ReportArgs, out: &Output) -> Result<ExitCode> {
    let written = report::report(&args.dir, args.baseline.as_deref())?;
    gates::check_gate_applies(&written, &args.gates)?;
    gates::finish("report", &written, &args.output, &args.gates, out)
}

pub fn compare(args: &CompareArgs, out: &Output) -> Result<ExitCode> {
    let Some(store) = &args.baseline else {
        if args.dirs.len() < 2 {
            bail!("compare needs at least two results directories (or --baseline STORE and one)");
        }
        let written = report::compare(&args.dirs, args.force, None)?;
        return gates::finish("compare", &written, &args.output, &args.gates, out);
    };
    let new = baseline::load_all(&args.dirs)?;
    if args.save_baseline {
        let slot = baseline::save(store, &new)?;
        out.line(&format!("mmcab: baseline stored in {}/", slot.display()));
        return Ok(ExitCode::SUCCESS);
    }
    let base = baseline::find(store, &new)?;
    if base.len() > 1 {
        bail!(
            "{} holds {} results directories: compare one baseline directory with the new \
             ones (keep one per device and plan)",
            baseline::slot(store, &new[0]).display(),
            base.len()
        );
    }
    let dirs: Vec<PathBuf> = base.into_iter().chain(args.dirs.iter().cloned()).collect();
    // The report goes into the (first) new directory, never into the store.
    let labels = report::compare::labels(&new);
    let into = report::report_dir(&args.dirs[0]).join(format!(
        "compare-baseline-vs-{}",
        labels
            .iter()
            .map(|l| report::chart::file_stem(l))
            .collect::<Vec<_>>()
            .join("-vs-")
    ));
    let written = report::compare(&dirs, args.force, Some(&into))?;
    gates::finish("compare", &written, &args.output, &args.gates, out)
}
