//! `mmcab report DIR` and `mmcab compare BASE... [--vs NEW...]`: the mail text (or JSON,
//! or LAVA signals) on stdout, where the report went on stderr, and the regression gate's
//! exit status (see `gates.rs`); `compare --baseline STORE` finds the base side in a
//! store of baselines per device.

use super::gates::{self, GateArgs, OutputArgs};
use super::output::Output;
use crate::exit::Kind;
use crate::report::ci::baseline;
use crate::report::{self, files, CompareOptions};
use crate::stats::multiple::Correction;
use anyhow::{bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};

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
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub gates: GateArgs,
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
    /// Baseline store: compare DIRS (the new side's boots) with the baseline kept there
    /// for their device and plan (STORE/<device>/<plan>/)
    #[arg(long, value_name = "STORE", conflicts_with = "vs")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: store DIRS as the baseline of their device, plan and
    /// --scale-down (replacing the old one) instead of comparing
    #[arg(long, requires = "baseline")]
    pub save_baseline: bool,
    /// With --save-baseline: add DIRS to the stored boots and keep the last N saved
    /// (a baseline built across jobs that measure one boot each)
    #[arg(long, value_name = "N", requires = "save_baseline",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub keep: Option<u32>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub gates: GateArgs,
}

pub fn report(args: &ReportArgs, out: &Output) -> Result<Kind> {
    let written = report::report(&args.dir, args.baseline.as_deref(), args.correction)?;
    gates::finish("report", &written, &args.output, &args.gates, out)
}

pub fn compare(args: &CompareArgs, out: &Output) -> Result<Kind> {
    if let Some(store) = &args.baseline {
        return compare_with_store(args, store, out);
    }
    if args.vs.is_empty() && args.dirs.len() < 2 {
        anyhow::bail!(
            "mmcab compare needs two sides: BASE_DIR... --vs NEW_DIR... (one results \
             directory per boot), or DIR_A DIR_B"
        );
    }
    run_compare(args, args.dirs.clone(), args.vs.clone(), None, out)
}

/// Compare `base` with `new` as the arguments say (report into `into`, default the first
/// baseline dir's report directory), then the format and the gate.
fn run_compare(
    args: &CompareArgs,
    base: Vec<PathBuf>,
    new: Vec<PathBuf>,
    into: Option<PathBuf>,
    out: &Output,
) -> Result<Kind> {
    let opts = CompareOptions {
        base,
        new,
        force: args.force,
        correction: args.correction,
        calibration: args.calibration.clone(),
        calibration_store: if args.no_calibration {
            None
        } else {
            super::calibrate::store_dir()
        },
        out: into,
    };
    let written = report::compare(&opts)?;
    gates::finish("compare", &written, &args.output, &args.gates, out)
}

/// `compare --baseline STORE DIR...`: the stored boots against DIR... (the report goes
/// into the first new directory, never into the store), or with `--save-baseline` DIR...
/// stored as the baseline.
fn compare_with_store(args: &CompareArgs, store: &Path, out: &Output) -> Result<Kind> {
    let new = baseline::load_all(&args.dirs)?;
    if args.save_baseline {
        let saved = baseline::save(store, &new, args.keep.map(|n| n as usize))?;
        out.line(&saved_line(&saved));
        return Ok(Kind::Success);
    }
    let base = baseline::find(store, &new)?;
    if base.iter().any(|b| args.dirs.contains(b)) {
        bail!(
            "--baseline {}: the new directories are the stored baseline itself",
            store.display()
        );
    }
    let name = args.dirs[0]
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "new".into());
    let into = files::report_dir(&args.dirs[0])
        .join(format!("compare-baseline-vs-{}", files::file_stem(&name)));
    run_compare(args, base, args.dirs.clone(), Some(into), out)
}

/// `mmcab: baseline stored in SLOT/ (3 boots; added 0004_b; dropped 0001_a)`.
fn saved_line(saved: &baseline::Saved) -> String {
    let mut parts = vec![format!(
        "{} boot{}",
        saved.boots.len(),
        if saved.boots.len() == 1 { "" } else { "s" }
    )];
    for (what, names) in [
        ("added", &saved.added),
        ("already stored", &saved.already),
        ("dropped", &saved.dropped),
    ] {
        if !names.is_empty() {
            parts.push(format!("{what} {}", names.join(", ")));
        }
    }
    format!(
        "mmcab: baseline stored in {}/ ({})",
        saved.slot.display(),
        parts.join("; ")
    )
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
