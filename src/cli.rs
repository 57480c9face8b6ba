//! Command-line definitions (clap) and the dispatch to the library.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "mmcab",
    version,
    about = "A/B evaluation harness for the Linux MMC/eMMC stack",
    long_about = "mmcab answers one question with evidence: did a change (packed commands, \
                  bus width, a driver patch, a new kernel) make this eMMC faster or slower, \
                  and by how much?"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Identify an eMMC/SD card and how the host drives it (CID, ios, EXT_CSD, capabilities)
    Info(InfoArgs),
    /// List the knobs mmcab can switch on a device, with current values and availability
    Knobs(KnobsArgs),
    /// Run a plan: configs x workloads x repetitions, recorded to a results directory
    Run(RunArgs),
    /// Compare the configs inside one results directory
    Report(ReportArgs),
    /// Compare labelled results directories from different boots or kernels
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// /dev/mmcblkN, /dev/mmcblkNpM (resolved to its disk) or mmcblkN
    pub device: String,
    /// Machine-readable output (schema in README.md)
    #[arg(long, conflicts_with = "raw")]
    pub json: bool,
    /// Print the raw EXT_CSD as hex, 16 bytes per line
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, Args)]
pub struct KnobsArgs {
    /// /dev/mmcblkN or mmcblkN
    pub device: String,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Plan file (TOML), e.g. workloads/bus-width-ab.toml (not needed with --resume, which
    /// uses the plan saved in the results directory)
    #[arg(required_unless_present = "resume")]
    pub plan: Option<PathBuf>,
    /// Target: a block device, a file (created and sized by mmcab) or a directory on a
    /// mounted filesystem (for file-based jobs)
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Allow writes to a block device (refused for mounted or held devices regardless)
    #[arg(long)]
    pub allow_write: bool,
    /// Results directory (default: a new directory under results/)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Finish an interrupted run in this results directory
    #[arg(long, conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Label for this run (A/B across boots or kernels: one label per boot)
    #[arg(long)]
    pub label: Option<String>,
    /// Repetitions per config x workload (overrides the plan)
    #[arg(long)]
    pub repeat: Option<u32>,
    /// Order of runs: interleaved (ABAB..), random (seeded) or blocked (AA..BB..)
    #[arg(long)]
    pub order: Option<String>,
    /// Seed for random order and random offsets (default: from the plan, or 1)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Discard this many warm-up repetitions per config x workload
    #[arg(long)]
    pub warmup: Option<u32>,
    /// Only run these configs (comma-separated names)
    #[arg(long, value_delimiter = ',')]
    pub config: Vec<String>,
    /// Only run these workloads (comma-separated names)
    #[arg(long, value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Divide every job's size by this factor (for small or slow devices, e.g. 16)
    #[arg(long)]
    pub scale_down: Option<u32>,
    /// Allow risky knob settings (widening the bus past what the host came up with,
    /// EXT_CSD fields outside the allow-list)
    #[arg(long)]
    pub force: bool,
    /// Print the expanded matrix and exit without touching the device
    #[arg(long)]
    pub dry_run: bool,
    /// Print results as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// No progress bar even on a terminal
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directory written by `mmcab run`
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

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Info(args) => crate::device::cmd_info(&args),
        Command::Knobs(args) => crate::knob::cmd_knobs(&args),
        Command::Run(args) => crate::plan::cmd_run(&args),
        Command::Report(args) => crate::report::cmd_report(&args),
        Command::Compare(args) => crate::report::cmd_compare(&args),
    }
}
