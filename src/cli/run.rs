//! `mmcab run`: its arguments, their conversion into [`RunOptions`], and what the
//! runner's outcome looks like (the one-pass table or JSON, the summary of a recorded
//! run, the `--dry-run` matrix) and its exit status.

use super::output::Output;
use super::{dry_run, run_output};
use crate::exit::{Failure, Kind};
use crate::plan::matrix::Order;
use crate::runner::{self, Done, Outcome, Results, RunOptions};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// With --allow-write: write even to a device that holds data (partitions, a partition
    /// table or a filesystem), which is refused otherwise
    #[arg(long, requires = "allow_write")]
    pub overwrite_data: bool,
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
    /// Repeat each workload only as often as a 95% CI half-width of PCT% of every
    /// config's mean needs: a first stage of 4 repetitions sets the count (Stein's
    /// two-stage rule; at most --max-repeat; configs stop together, interleaved order
    /// kept)
    #[arg(long, value_name = "PCT")]
    pub until_ci: Option<f64>,
    /// Most repetitions per config x workload with --until-ci (default 10)
    #[arg(long, value_name = "N")]
    pub max_repeat: Option<u32>,
    /// Order of runs: interleaved (ABAB..), random (seeded) or blocked (AA..BB..)
    #[arg(long, value_enum, ignore_case = true)]
    pub order: Option<Order>,
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
    /// Divide every job's size (and min_runtime) by this factor (for small or slow devices, e.g. 16)
    #[arg(long)]
    pub scale_down: Option<u32>,
    /// Allow risky settings (widening the bus past what the host came up with, EXT_CSD
    /// fields outside the allow-list, packed ioctl writes to a card whose EXT_CSD has none);
    /// with --resume, also another device or kernel than the run started on
    #[arg(long)]
    pub force: bool,
    /// Print the expanded matrix and exit without touching the device
    #[arg(long)]
    pub dry_run: bool,
    /// Collect no kernel evidence around the runs (block stat deltas, mmc trace events,
    /// wr_pack_stats)
    #[arg(long)]
    pub no_evidence: bool,
    /// Packed ioctl writes: take it that this kernel sends a user CMD23 as the write's
    /// SET_BLOCK_COUNT (commit 4d0c8d0aef63) when mmcab cannot check it
    #[arg(long)]
    pub assume_cmd23_passthrough: bool,
    /// Print results as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// No progress bar even on a terminal
    #[arg(long)]
    pub quiet: bool,
}

impl From<&RunArgs> for RunOptions {
    fn from(args: &RunArgs) -> RunOptions {
        RunOptions {
            plan: args.plan.clone(),
            device: args.device.clone(),
            allow_write: args.allow_write,
            overwrite_data: args.overwrite_data,
            out: args.out.clone(),
            resume: args.resume.clone(),
            label: args.label.clone(),
            repeat: args.repeat,
            order: args.order,
            seed: args.seed,
            warmup: args.warmup,
            configs: args.config.clone(),
            workloads: args.workload.clone(),
            scale_down: args.scale_down,
            until_ci: args.until_ci,
            max_repeat: args.max_repeat,
            force: args.force,
            dry_run: args.dry_run,
            no_evidence: args.no_evidence,
            assume_cmd23_passthrough: args.assume_cmd23_passthrough,
            command_line: Vec::new(),
        }
    }
}

pub fn execute(args: &RunArgs, out: &Arc<Output>) -> Result<Kind, Failure> {
    let events: Arc<dyn runner::Events> = out.clone();
    let mut opts = RunOptions::from(args);
    // Recorded in meta.json: the report's header names the command that made the results.
    opts.command_line = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match runner::run(&opts, events)? {
        Outcome::DryRun(session) => {
            // What it will write, where the target can tell (a missing device cannot).
            let writes =
                runner::planned_writes::planned_writes(&session).map_err(|e| e.to_string());
            // How long the runs will last and what they write, as far as known before.
            let lengths = runner::run_length::warnings(
                &session,
                runner::planned_writes::stated_cache_bytes(&session),
                crate::clock::monotonic_resolution_ns(),
            );
            if args.json {
                out.json(&dry_run::matrix_json(&session, &writes, &lengths))?;
            } else {
                out.stdout(|w| dry_run::write_matrix(w, &session, &writes, &lengths))?;
            }
            Ok(Kind::Success)
        }
        Outcome::Done(done) => Ok(show(args, out, &done)?),
    }
}

/// Results on stdout, verify failures on stderr; how the run ended.
fn show(args: &RunArgs, out: &Output, done: &Done) -> Result<Kind> {
    match &done.results {
        Results::OnePass(results) => {
            // After a signal, what finished is still shown.
            if args.json {
                out.json(&run_output::to_json(results))?;
            } else if !results.is_empty() || done.stopped.is_none() {
                out.stdout(|w| run_output::print_table(w, results))?;
            }
            if done.bad_blocks > 0 {
                out.line(&format!(
                    "mmcab: verify found {} bad block(s): see the table",
                    done.bad_blocks
                ));
            }
        }
        Results::Recorded { dir, rows } => {
            if done.stopped.is_none() {
                if args.json {
                    out.json(&serde_json::json!({
                        "schema": run_output::RUN_JSON_SCHEMA,
                        "results_dir": dir,
                        "runs": rows,
                    }))?;
                } else {
                    out.print(&run_output::summary_table(rows))?;
                    if let Some(summary) = &done.adaptive {
                        out.print(&super::until_ci::summary_text(summary))?;
                    }
                    out.print(&format!(
                        "results: {}\nreport:  mmcab report {}\n",
                        dir.display(),
                        dir.display()
                    ))?;
                }
            }
            if done.bad_blocks > 0 {
                out.line(&format!(
                    "mmcab: verify found {} bad block(s) in this invocation's runs: offsets \
                     and what was wrong are above and in verify_errors.csv",
                    done.bad_blocks
                ));
            }
        }
    }
    Ok(ending(done))
}

/// How a run that returned its results ended: stopped by a signal, verify found bad
/// blocks, or success.
fn ending(done: &Done) -> Kind {
    match done.stopped {
        Some(kind) => kind,
        None if done.bad_blocks > 0 => Kind::VerifyFailed,
        None => Kind::Success,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Cli;
    use super::*;
    use clap::Parser;

    fn run_args(args: &[&str]) -> RunArgs {
        let cli = Cli::try_parse_from([&["mmcab", "run"], args].concat()).unwrap();
        match cli.command {
            super::super::Command::Run(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arguments_become_typed_options() {
        let args = run_args(&[
            "plan.toml",
            "--device",
            "/dev/loop0",
            "--order",
            "ABAB",
            "--repeat",
            "5",
            "--config",
            "a,b",
            "--scale-down",
            "16",
        ]);
        let opts = RunOptions::from(&args);
        assert_eq!(opts.order, Some(Order::Interleaved));
        assert_eq!(opts.repeat, Some(5));
        assert_eq!(opts.configs, ["a", "b"]);
        assert_eq!(opts.scale_down, Some(16));
        assert_eq!(opts.device, Some(PathBuf::from("/dev/loop0")));
        assert_eq!(
            RunOptions::from(&run_args(&["--resume", "dir", "--order", "aabb"])).order,
            Some(Order::Blocked)
        );
        assert!(Cli::try_parse_from(["mmcab", "run", "p", "--order", "sideways"]).is_err());
    }

    #[test]
    fn a_run_that_returns_its_results_ends_by_signal_verify_or_success() {
        let done = |stopped, bad_blocks| Done {
            results: Results::OnePass(Vec::new()),
            bad_blocks,
            stopped,
            adaptive: None,
        };
        assert_eq!(ending(&done(None, 0)), Kind::Success);
        assert_eq!(ending(&done(None, 2)), Kind::VerifyFailed);
        let term = Some(Kind::Signal(libc::SIGTERM));
        assert_eq!(ending(&done(term, 2)), Kind::Signal(libc::SIGTERM));
        assert_eq!(ending(&done(term, 0)).status(), 143);
    }

    #[test]
    fn command_line_numbers_are_bounded_before_anything_is_read() {
        for (flags, want) in [
            (
                &["--repeat", "100000000"][..],
                "--repeat 100000000 is more than 10000",
            ),
            (&["--repeat", "0"][..], "--repeat 0 is too small"),
            (&["--warmup", "5000"][..], "--warmup 5000 is more than 1000"),
            (&["--scale-down", "0"][..], "--scale-down 0 is too small"),
            (
                &["--until-ci", "0"][..],
                "--until-ci 0: give the 95% CI half-width",
            ),
            (
                &["--until-ci", "2", "--repeat", "5"][..],
                "--until-ci stops each workload on its own",
            ),
            (
                &["--max-repeat", "5"][..],
                "--max-repeat 5 is the cap of --until-ci",
            ),
            (
                &["--until-ci", "2", "--max-repeat", "20000"][..],
                "--max-repeat 20000 is more than 10000",
            ),
        ] {
            let args = run_args(&[&["/nonexistent/plan.toml", "--dry-run"][..], flags].concat());
            let err = RunOptions::from(&args).check().unwrap_err().to_string();
            assert!(err.starts_with(want), "{err}");
        }
    }
}
