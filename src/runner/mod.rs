//! The one runner behind every form of `mmcab run`: one pass over the workloads, a
//! recorded matrix of configs x workloads x repetitions, `--dry-run` and `--resume`.
//!
//! - [`session`]: what a run is made of (plan or saved meta.json, selection, matrix);
//!   `resume`: the session of an interrupted run, from its meta.json;
//! - `run_loop`: for every run, put the knobs in place and verify them, check the
//!   config's expectations, run the workload, record it;
//! - [`results`]: the results directory of a recorded run; [`device_state`]: what the runner
//!   reads from the device; `knobs`: which knobs a session uses and their values;
//!   `reopen`: the target closed and opened again around knobs that rebind the disk;
//! - [`signals`]: SIGINT, SIGTERM and SIGHUP as one stop flag; the knobs are restored on
//!   one path after the loop (finished, failed or stopped) and by the guard on panic;
//! - [`events`]: progress as typed events for the command line to show;
//! - `evidence`: the kernel evidence collected around every run ([`crate::evidence`]);
//! - `identity`: `--resume` only on the device and kernel the run started on;
//! - [`shared_card`]: a target on a card in use besides (a board booting from it).
//!
//! It takes typed [`RunOptions`] (the command line converts its arguments), prints
//! nothing, and returns an [`Outcome`] for the caller to show, or a [`RunError`] whose
//! variant is the exit status's kind ([`error`]).

pub mod adaptive;
pub mod device_state;
pub mod error;
pub mod events;
mod evidence;
mod identity;
mod knobs;
mod mmc_test;
pub mod planned_writes;
mod reopen;
pub mod results;
mod resume;
pub mod run_length;
mod run_loop;
pub mod session;
pub mod shared_card;
pub mod signals;

pub use error::RunError;
pub use events::{Event, Events, RunInfo};
pub use session::Session;

use crate::plan::limits;
use crate::plan::matrix::Order;
use crate::record::RunRow;
use crate::workload::WorkloadResult;
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Arc;

/// What `mmcab run` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The plan file (not needed with `resume`, which uses the copy in meta.json).
    pub plan: Option<PathBuf>,
    /// Block device, file or directory to run against.
    pub device: Option<PathBuf>,
    /// Writes to a block device are allowed (mounted or held devices are refused anyway).
    pub allow_write: bool,
    /// ... even to one that holds data: partitions, a partition table or filesystem
    /// signature (`--overwrite-data`, [`crate::workload::target::signatures`]).
    pub overwrite_data: bool,
    /// Results directory of a recorded run (default: a new one under `results/`).
    pub out: Option<PathBuf>,
    /// Finish the interrupted run in this results directory.
    pub resume: Option<PathBuf>,
    pub label: Option<String>,
    /// Repetitions per config x workload (overrides the plan's `repetitions`).
    pub repeat: Option<u32>,
    pub order: Option<Order>,
    pub seed: Option<u64>,
    pub warmup: Option<u32>,
    /// Only these configs / workloads (empty: all).
    pub configs: Vec<String>,
    pub workloads: Vec<String>,
    /// Divide every job's sizes by this.
    pub scale_down: Option<u32>,
    /// `--until-ci PCT`: give each workload the repetitions its first stage says a 95%
    /// CI half-width of PCT% of each config's mean needs ([`adaptive`], Stein).
    pub until_ci: Option<f64>,
    /// `--max-repeat N`: repetitions at most with `until_ci` (default
    /// [`adaptive::DEFAULT_MAX_REPEAT`]).
    pub max_repeat: Option<u32>,
    /// Allow risky knob settings.
    pub force: bool,
    /// Only work out the matrix; touch no device.
    pub dry_run: bool,
    /// Collect no kernel evidence (block stat, mmc trace) around the runs.
    pub no_evidence: bool,
    /// Take the kernel's CMD23 pass-through for granted (packed ioctl writes).
    pub assume_cmd23_passthrough: bool,
    /// The command line as given (`mmcab run ...`), recorded in meta.json.
    pub command_line: Vec<String>,
}

impl RunOptions {
    /// Every number given on the command line within its bounds ([`limits`]).
    pub fn check(&self) -> Result<()> {
        if let Some(n) = self.repeat {
            limits::repetitions(&format!("--repeat {n}"), n)?;
        }
        if let Some(n) = self.warmup {
            limits::warmup(&format!("--warmup {n}"), n)?;
        }
        if let Some(n) = self.scale_down {
            limits::scale_down(&format!("--scale-down {n}"), n)?;
        }
        if let Some(n) = self.max_repeat {
            limits::repetitions(&format!("--max-repeat {n}"), n)?;
        }
        adaptive::check_options(self.until_ci, self.max_repeat, self.repeat)?;
        Ok(())
    }

    /// Repetitions per config x workload: with `--until-ci` the most it may run
    /// (`--max-repeat`, [`adaptive::DEFAULT_MAX_REPEAT`] by default), else `--repeat`, the
    /// plan's (`plan`) or [`session::DEFAULT_REPETITIONS`].
    fn repetitions(&self, plan: Option<u32>) -> u32 {
        match self.until_ci {
            Some(_) => self.max_repeat.unwrap_or(adaptive::DEFAULT_MAX_REPEAT),
            None => self.repeat.or(plan).unwrap_or(session::DEFAULT_REPETITIONS),
        }
    }

    /// Options that only a recorded run has.
    fn asks_to_record(&self) -> bool {
        self.dry_run
            || self.resume.is_some()
            || self.out.is_some()
            || self.label.is_some()
            || self.repeat.is_some()
            || self.warmup.is_some()
            || self.order.is_some()
            || self.until_ci.is_some()
            || self.max_repeat.is_some()
            || !self.configs.is_empty()
    }
}

/// The two forms of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A plan without `[[config]]` and none of the recording options: every workload
    /// once, as the device is now; the results are returned, nothing is written.
    OnePass,
    /// configs x workloads x repetitions, each run recorded in a results directory.
    Recorded,
}

/// What a run ended with (errors are returned as errors).
pub enum Outcome {
    /// `--dry-run`: the session, whose matrix the caller walks.
    DryRun(Box<Session>),
    Done(Done),
}

/// A run that ended, finished or stopped by a signal.
pub struct Done {
    pub results: Results,
    /// Blocks that failed verification in this invocation's runs.
    pub bad_blocks: u64,
    /// How the runs were stopped ([`signals::Interrupts::kind`]: by a signal);
    /// `None` when every run finished.
    pub stopped: Option<crate::exit::Kind>,
    /// What `--until-ci` did (None without it).
    pub adaptive: Option<adaptive::Summary>,
}

pub enum Results {
    /// What each workload measured, in order (only those that finished).
    OnePass(Vec<WorkloadResult>),
    /// The results directory; `rows` holds its runs.csv once every run has finished
    /// (empty when stopped).
    Recorded { dir: PathBuf, rows: Vec<RunRow> },
}

/// The session `opts` ask for: a new run's from its plan file, or with `--resume` the
/// interrupted run's from its meta.json. `require_device`: false for `--dry-run`, which
/// touches no device.
pub fn open_session(opts: &RunOptions, require_device: bool) -> Result<Session> {
    match &opts.resume {
        Some(dir) => resume::session(opts, dir, require_device),
        None => Session::fresh(opts, require_device),
    }
}

/// Run `opts`, reporting progress to `events`.
pub fn run(opts: &RunOptions, events: Arc<dyn Events>) -> Result<Outcome, RunError> {
    opts.check()?;
    if opts.dry_run {
        let session = open_session(opts, false)?;
        session.report_torn_lines(&*events);
        for line in shared_card::dry_run_warnings(&session, opts) {
            events.event(Event::Warning(line));
        }
        return Ok(Outcome::DryRun(Box::new(session)));
    }
    // Signals first: from here on they stop the run instead of killing the process.
    let interrupts = signals::Interrupts::install(events.clone())?;
    let session = open_session(opts, true)?;
    session.report_torn_lines(&*events);
    run_loop::run(session, opts, &interrupts, events).map(Outcome::Done)
}
