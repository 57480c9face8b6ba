//! What the runner reports while it works, as typed events; the command line turns them
//! into progress lines, a progress bar and warnings ([`Events`] is implemented there).

use super::Mode;
use crate::evidence::RunEvidence;
use crate::knob::guard::GuardEvent;
use crate::knob::Verified;
use crate::plan::matrix::Slot;
use crate::record::until_ci::WorkloadStop;
use crate::workload::WorkloadResult;
use std::path::Path;

/// Receives the runner's events. Shared with the signal thread and the knob guard, hence
/// `Send + Sync`; events arrive in the order they happen.
pub trait Events: Send + Sync {
    fn event(&self, event: Event<'_>);
}

/// Where a run sits and what it runs.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo<'a> {
    pub mode: Mode,
    pub slot: Slot,
    /// Runs in the whole matrix.
    pub total: u32,
    pub config: &'a str,
    pub workload: &'a str,
    pub target: &'a Path,
}

#[derive(Debug)]
pub enum Event<'a> {
    /// The runs are about to start: `pending` of `total` are left (`total - pending` were
    /// done by an interrupted run being resumed in `dir`).
    Start {
        mode: Mode,
        total: u32,
        pending: u32,
        dir: Option<&'a Path>,
    },
    /// The knobs of `run` are in place and verified; its workload starts now.
    RunStarting { run: RunInfo<'a> },
    /// A run finished and, when recording, is on disk. `verified` lists the knobs read
    /// back before it, `evidence` what the kernel did (None with `--no-evidence`).
    RunDone {
        run: RunInfo<'a>,
        verified: &'a Verified,
        result: &'a WorkloadResult,
        evidence: Option<&'a RunEvidence>,
    },
    /// `--until-ci`: a workload has had the repetitions its first stage asked for;
    /// its remaining runs are skipped.
    Converged { stop: &'a WorkloadStop },
    /// No more runs (all done, stopped or failed); the knobs are restored next.
    Finish,
    /// Stopped by a signal after `done` of `total` runs; recorded runs are in `dir`.
    Stopped {
        mode: Mode,
        done: u32,
        total: u32,
        dir: Option<&'a Path>,
        /// The run had `--allow-write`, which `--resume` needs again.
        allow_write: bool,
    },
    /// The runs ended with an error, returned next: `done` of `total` runs finished
    /// and, when recording, are in `dir` (a complete matrix is marked finished there).
    Failed {
        mode: Mode,
        done: u32,
        total: u32,
        dir: Option<&'a Path>,
        allow_write: bool,
    },
    /// Something the user should know that does not stop the run.
    Warning(String),
    /// A torn last line (`bytes` long) was cut off `path` when resuming.
    TornLine { path: &'a Path, bytes: usize },
    /// A signal arrived (from the signal thread); `again` when it is not the first.
    Signal { signal: i32, again: bool },
    /// What the knob guard says while restoring.
    Restore(GuardEvent<'a>),
}
