//! The command line: the only layer that knows clap or prints.
//!
//! Each command has its file (`info`, `knobs`, `run`, `report`, `probe`): its arguments, their
//! conversion into the domain's typed options, and how the domain's answer is shown.
//! [`output::Output`] is the one sink for everything shown (stdout: results as text or
//! JSON; stderr: notes, warnings, progress, the error). [`run_output`] renders the tables
//! of `mmcab run`; `values` makes the domain's enums command-line values.
//!
//! Imports point down: cli -> runner -> (knob, workload, record, plan) -> device; report
//! reads record. Nothing below this module imports it.

mod calibrate;
mod completions;
mod dry_run;
mod export;
mod gates;
mod info;
mod info_list;
mod kernel_features;
mod knobs;
mod knobs_modes;
mod man;
pub mod output;
mod probe;
mod probe_flash;
mod probe_packed;
mod progress;
mod report;
mod run;
pub mod run_output;
mod until_ci;
mod values;

#[cfg(test)]
mod docs_claims_tests;
#[cfg(test)]
mod docs_tests;

pub use calibrate::CalibrateArgs;
pub use info::InfoArgs;
pub use knobs::KnobsArgs;
pub use probe::ProbeArgs;
pub use report::{CompareArgs, ReportArgs};
pub use run::RunArgs;

use crate::exit::{Failure, Kind};
use clap::{Parser, Subcommand};
use output::Output;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "mmcab",
    version,
    about = "A/B evaluation harness for the Linux MMC/eMMC stack",
    long_about = "mmcab answers one question with evidence: did a change (packed commands, \
                  bus width, a driver patch, a new kernel) make this eMMC faster or slower, \
                  and by how much?",
    after_help = "Manual: `man mmcab`, `man mmcab-<command>` (e.g. man mmcab-run, man \
                  mmcab-probe-packed); install the pages with `mmcab man --dir DIR`, or read \
                  one with `mmcab man > mmcab.1 && man -l mmcab.1`."
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
    /// Compare results directories from different boots or kernels (one per boot)
    Compare(CompareArgs),
    /// Store a board's boot-to-boot spread from A/A boots, for single-boot comparisons
    Calibrate(CalibrateArgs),
    /// Write a plan in another tool's format (fio job file)
    #[command(subcommand)]
    Export(export::ExportCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory
    Man(completions::ManArgs),
    /// Experiments that tell what a card does: packed writes, erase block size (align),
    /// open allocation units (open-au)
    Probe(ProbeArgs),
}

/// Run one command; its exit status is that of the kind it ended with
/// ([`crate::exit::TABLE`]), and a failure is one `mmcab: error: ...` line.
pub fn run(cli: Cli) -> ExitCode {
    let (quiet, json) = match &cli.command {
        Command::Info(a) => (false, a.json),
        Command::Knobs(a) => (false, a.json),
        Command::Run(a) => (a.quiet, a.json),
        Command::Report(a) => (false, a.output.format() == gates::Format::Json),
        Command::Compare(a) => (false, a.output.format() == gates::Format::Json),
        Command::Calibrate(a) => (false, a.json),
        Command::Export(_) => (false, false),
        Command::Completions(_) | Command::Man(_) => (false, false),
        Command::Probe(a) => (a.quiet(), a.json()),
    };
    let out = Arc::new(Output::new(quiet, json));
    let kind = match execute(&cli.command, &out) {
        Ok(kind) => kind,
        Err(failure) => {
            // One line for the common case; the chain of causes follows ": ".
            out.error(&failure.error);
            failure.kind
        }
    };
    kind.exit_code()
}

/// The command's own function: how it ended, or the failure with its kind (errors of no
/// kind of their own are [`Kind::Error`]).
fn execute(command: &Command, out: &Arc<Output>) -> Result<Kind, Failure> {
    Ok(match command {
        Command::Info(args) => info::execute(args, out)?,
        Command::Knobs(args) => knobs::execute(args, out)?,
        Command::Run(args) => run::execute(args, out)?,
        Command::Report(args) => report::report(args, out)?,
        Command::Compare(args) => report::compare(args, out)?,
        Command::Calibrate(args) => calibrate::execute(args, out)?,
        Command::Export(args) => export::execute(args, out)?,
        Command::Completions(args) => completions::completions(args, out)?,
        Command::Man(args) => completions::man(args, out)?,
        Command::Probe(args) => probe::execute(args, out)?,
    })
}

/// The command line, or clap's message for a wrong one (exit status of [`Kind::Usage`]) or
/// for `--help` and `--version` ([`Kind::Success`]).
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|err| {
        // As clap's own exit: the message (usage errors on stderr), then the status.
        let _ = err.print();
        match err.use_stderr() {
            true => Kind::Usage.exit_code(),
            false => Kind::Success.exit_code(),
        }
    })
}
