//! `mmcab run --until-ci PCT --max-repeat N`: repeat each config x workload only until
//! its mean is known well enough.
//!
//! The matrix is the fixed design of N repetitions, walked in its order; a workload's
//! remaining runs are skipped once every config of it has the 95% CI half-width of its
//! mean at or below PCT% of the mean, for every direction and for both MB/s and IOPS
//! (Student t, at least [`MIN_REPETITIONS`] measured repetitions). The configs of a
//! workload stop together and only at the end of a round, when each has the same
//! number of runs: the runs left stay interleaved (A B A B) and balanced, so drift
//! still hits every config alike. Warm-up runs do not count.
//!
//! Memory: one running mean and variance (Welford) per config x workload x direction x
//! metric, nothing per run. A resumed run replays runs.csv to the same state.

use super::session::Session;
use crate::plan::matrix::Slot;
use crate::record::writer::read_rows;
use crate::record::{RunRow, GROUP_JOB, RUNS_CSV};
use crate::stats::t_critical;
use crate::workload::result::{Direction, WorkloadResult};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Fewest measured repetitions before a config x workload may stop.
pub const MIN_REPETITIONS: u32 = 3;
/// `--max-repeat` when `--until-ci` is given without it.
pub const DEFAULT_MAX_REPEAT: u32 = 10;

/// `--until-ci` and `--max-repeat` make sense together: a percentage in (0, 100],
/// `--max-repeat` only with `--until-ci`, and not with `--repeat` (which it replaces).
pub fn check_options(
    until_ci: Option<f64>,
    max_repeat: Option<u32>,
    repeat: Option<u32>,
) -> Result<()> {
    match (until_ci, max_repeat, repeat) {
        (Some(pct), _, _) if !(pct > 0.0 && pct <= 100.0) => bail!(
            "--until-ci {pct}: give the 95% CI half-width to stop at as a percentage of the \
             mean, more than 0 and at most 100 (e.g. --until-ci 2)"
        ),
        (Some(_), _, Some(_)) => bail!(
            "--until-ci stops each workload on its own: give the most repetitions with \
             --max-repeat N instead of --repeat"
        ),
        (None, Some(n), _) => bail!(
            "--max-repeat {n} is the cap of --until-ci: give --until-ci PCT too, or use \
             --repeat {n} for a fixed number of repetitions"
        ),
        _ => Ok(()),
    }
}

/// Running mean and variance (Welford).
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    n: u32,
    mean: f64,
    m2: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / f64::from(self.n);
        self.m2 += delta * (x - self.mean);
    }

    /// 95% CI half-width of the mean / |mean| (infinite below two values).
    fn rel_half_width(&self) -> f64 {
        if self.n < 2 || self.mean == 0.0 {
            return f64::INFINITY;
        }
        let sd = (self.m2 / f64::from(self.n - 1)).sqrt();
        t_critical(f64::from(self.n - 1)) * sd / f64::from(self.n).sqrt() / self.mean.abs()
    }
}

/// One config x workload: its measured repetitions and the running statistics of each
/// direction x metric (MB/s, IOPS).
#[derive(Debug, Clone, Default)]
struct Cell {
    repetitions: u32,
    /// Device time of its measured runs, seconds.
    seconds: f64,
    metrics: BTreeMap<(Direction, bool), Running>,
}

impl Cell {
    /// Largest relative half-width over its directions and metrics.
    fn rel_half_width(&self) -> f64 {
        self.metrics
            .values()
            .map(Running::rel_half_width)
            .fold(0.0, f64::max)
    }
}

/// How one workload ended.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadStop {
    pub workload: String,
    /// Measured repetitions of each of its configs.
    pub repetitions: u32,
    /// Largest 95% CI half-width over its configs, directions and metrics, percent of
    /// the mean.
    pub half_width_pct: f64,
    /// Whether it met the target (false: it ran to `--max-repeat`).
    pub converged: bool,
    /// Runs of the fixed design left out.
    pub skipped_runs: u32,
}

/// What `--until-ci` saved, for the command line to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub target_pct: f64,
    pub max_repeat: u32,
    /// Measured runs done and the fixed design's count (configs x workloads x N).
    pub runs: u32,
    pub fixed_runs: u32,
    /// Device time of the measured runs, and an estimate of the fixed design's (each
    /// config x workload's mean run time x N).
    pub seconds: f64,
    pub fixed_seconds_estimate: f64,
    pub workloads: Vec<WorkloadStop>,
}

/// Index in the session of the workload named `name`.
fn rule_workload(session: &Session, name: &str) -> Option<usize> {
    session
        .workloads
        .iter()
        .position(|&w| session.plan.workload[w].name == name)
}

/// The stopping rule's state over one session.
pub struct Adaptive {
    target: f64,
    max_repeat: u32,
    configs: usize,
    names: Vec<String>,
    /// Per (config, workload) index of the session.
    cells: BTreeMap<(usize, usize), Cell>,
    /// Workloads whose remaining runs are skipped.
    done: Vec<bool>,
}

impl Adaptive {
    /// The rule for `session`, or None when it has no `--until-ci`.
    pub fn new(session: &Session) -> Option<Adaptive> {
        let pct = session.until_ci?;
        let names = (0..session.workloads.len())
            .map(|w| session.plan.workload[session.workloads[w]].name.clone())
            .collect();
        Some(Adaptive {
            target: pct / 100.0,
            max_repeat: session.matrix.repetitions(),
            configs: session.configs.len(),
            names,
            cells: BTreeMap::new(),
            done: vec![false; session.workloads.len()],
        })
    }

    /// The rule for `session` with the runs an interrupted run recorded in `dir`
    /// replayed (resume); None without `--until-ci`.
    pub fn for_session(session: &Session, dir: Option<&Path>) -> Result<Option<Adaptive>> {
        let Some(mut rule) = Adaptive::new(session) else {
            return Ok(None);
        };
        if let (Some(dir), false) = (dir, session.finished.is_empty()) {
            let rows: Vec<RunRow> = read_rows(&dir.join(RUNS_CSV))?;
            rule.replay(
                &rows,
                |c| session.configs.iter().position(|x| x.name == c),
                |w| rule_workload(session, w),
            );
        }
        Ok(Some(rule))
    }

    /// Whether `slot` is skipped: its workload has met the target.
    pub fn skips(&self, slot: &Slot) -> bool {
        self.done.get(slot.workload).copied().unwrap_or(false)
    }

    /// Account a finished run; returns how its workload stopped when this run made it
    /// meet the target.
    pub fn record(&mut self, slot: &Slot, result: &WorkloadResult) -> Option<WorkloadStop> {
        if slot.warmup {
            return None;
        }
        let rows = result
            .group
            .iter()
            .map(|d| (d.direction, d.seconds, d.mb_per_s(), d.iops()));
        self.add(slot.config, slot.workload, rows)
    }

    /// Replay the measured runs of an interrupted run (runs.csv rows in run order) to
    /// the state they left; `config_index` and `workload_index` map names to indices.
    pub fn replay(
        &mut self,
        rows: &[RunRow],
        config_index: impl Fn(&str) -> Option<usize>,
        workload_index: impl Fn(&str) -> Option<usize>,
    ) {
        let mut i = 0;
        while i < rows.len() {
            let same: Vec<&RunRow> = rows[i..]
                .iter()
                .take_while(|r| r.run == rows[i].run)
                .collect();
            i += same.len();
            let first = same[0];
            let (Some(c), Some(w)) = (config_index(&first.config), workload_index(&first.workload))
            else {
                continue;
            };
            if first.warmup {
                continue;
            }
            // Group rows, or the only job's rows when a run has none.
            let group: Vec<&&RunRow> = same.iter().filter(|r| r.job == GROUP_JOB).collect();
            let picked: Vec<&&RunRow> = if group.is_empty() {
                same.iter().collect()
            } else {
                group
            };
            let directions = picked
                .iter()
                .map(|r| (r.direction, r.seconds, r.mb_per_s, r.iops));
            self.add(c, w, directions);
        }
    }

    fn add(
        &mut self,
        config: usize,
        workload: usize,
        directions: impl Iterator<Item = (Direction, f64, f64, f64)>,
    ) -> Option<WorkloadStop> {
        let cell = self.cells.entry((config, workload)).or_default();
        cell.repetitions += 1;
        let mut seconds: f64 = 0.0;
        for (direction, secs, mb_per_s, iops) in directions {
            seconds = seconds.max(secs);
            cell.metrics
                .entry((direction, false))
                .or_default()
                .push(mb_per_s);
            cell.metrics
                .entry((direction, true))
                .or_default()
                .push(iops);
        }
        cell.seconds += seconds;
        self.check(workload)
    }

    /// Mark `workload` done when all its configs have the same number of measured
    /// repetitions, at least [`MIN_REPETITIONS`], and meet the target.
    fn check(&mut self, workload: usize) -> Option<WorkloadStop> {
        if self.done[workload] {
            return None;
        }
        let stop = self.stop_of(workload)?;
        if stop.converged && stop.repetitions < self.max_repeat {
            self.done[workload] = true;
            return Some(stop);
        }
        None
    }

    /// Where `workload` stands: None until every config has the same number of runs.
    fn stop_of(&self, workload: usize) -> Option<WorkloadStop> {
        let cells: Vec<&Cell> = (0..self.configs)
            .map(|c| self.cells.get(&(c, workload)))
            .collect::<Option<_>>()?;
        let repetitions = cells[0].repetitions;
        if cells.iter().any(|c| c.repetitions != repetitions) {
            return None;
        }
        let half = cells.iter().map(|c| c.rel_half_width()).fold(0.0, f64::max);
        Some(WorkloadStop {
            workload: self.names[workload].clone(),
            repetitions,
            half_width_pct: half * 100.0,
            converged: repetitions >= MIN_REPETITIONS && half <= self.target,
            skipped_runs: self.max_repeat.saturating_sub(repetitions) * self.configs as u32,
        })
    }

    /// What the rule did over the whole session.
    pub fn summary(&self) -> Summary {
        let runs: u32 = self.cells.values().map(|c| c.repetitions).sum();
        let seconds: f64 = self.cells.values().map(|c| c.seconds).sum();
        let fixed_seconds_estimate: f64 = self
            .cells
            .values()
            .filter(|c| c.repetitions > 0)
            .map(|c| c.seconds / f64::from(c.repetitions) * f64::from(self.max_repeat))
            .sum();
        let workloads = (0..self.names.len())
            .filter_map(|w| self.stop_of(w))
            .collect();
        Summary {
            target_pct: self.target * 100.0,
            max_repeat: self.max_repeat,
            runs,
            fixed_runs: (self.configs * self.names.len()) as u32 * self.max_repeat,
            seconds,
            fixed_seconds_estimate,
            workloads,
        }
    }
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
