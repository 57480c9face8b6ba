//! `mmcab run --until-ci PCT --max-repeat N`: give each workload the repetitions its
//! mean needs, fixed in advance by Stein's two-stage procedure.
//!
//! Why not "stop once the CI is narrow enough": that rule stops preferentially when the
//! sample sd happens to be low, and the interval then covers the true mean less often
//! than it says (optional stopping). Stein (1945) fixes the count from a first stage
//! instead: after n0 = [`FIRST_STAGE`] measured repetitions (fewer when `--max-repeat`
//! is lower) every config x direction x metric (MB/s, IOPS) of a workload has its sd
//! s0 and mean m0; the workload then gets
//! N = max(n0, ceil((t(n0 - 1) * s0 / d)^2)) repetitions per config, d = PCT% of m0,
//! the largest over its configs, directions and metrics, at most `--max-repeat`. N
//! depends on the first stage only, so the interval mean_N +- t(n0 - 1) s0 / sqrt(N)
//! covers the true mean with 95% for normal runs, whatever N (capped or not), and its
//! half-width is at most d unless capped. (d relative to m0 makes N depend a little on
//! m0 too; at the CVs of device runs that does not move the coverage, see the
//! simulation test.) The summary and meta.json report that interval.
//!
//! The matrix is the fixed design of `--max-repeat` repetitions, walked in its order;
//! a workload's runs after N rounds are skipped. The configs of a workload get the same
//! N, so the runs stay interleaved (A B A B) and balanced and drift still hits every
//! config alike. Warm-up runs do not count. A mean of 0 or not a number, a run without
//! measurements, or n0 < 2 leave the sd unknown: the workload runs to `--max-repeat`.
//!
//! Memory: one running mean and variance (Welford) per config x workload x direction x
//! metric and its first-stage copy, nothing per run. A resumed run replays runs.csv to
//! the same state.

use super::session::Session;
use crate::plan::matrix::Slot;
use crate::record::writer::read_rows;
use crate::record::{RunRow, GROUP_JOB, RUNS_CSV};
use crate::stats::t_critical;
use crate::workload::result::{Direction, WorkloadResult};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::record::until_ci::{UntilCi as Summary, WorkloadStop};

/// Repetitions of the first stage (n0), the least any workload runs. Four: a quiet
/// workload (runs varying by at most 0.63 x the target, as device runs mostly do)
/// stops there, at 40% of `--max-repeat`'s default, where five made half of it the
/// floor of every saving. The price is t(3) = 3.18 instead of t(4) = 2.78: a workload
/// that needs a second stage asks for (3.18 / 2.78)^2 = 1.31 x the runs, and one
/// noisy enough hits `--max-repeat` either way. The sd of 4 runs is rougher than of 5,
/// but Stein's interval accounts for that exactly (the t of n0 - 1 df).
pub const FIRST_STAGE: u32 = 4;
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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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

    /// Sample sd relative to |mean|: None below two values, for a mean of 0 or values
    /// that are not numbers.
    fn rel_sd(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let rel = (self.m2 / f64::from(self.n - 1)).sqrt() / self.mean.abs();
        rel.is_finite().then_some(rel)
    }
}

/// One config x workload: its measured repetitions and the running statistics of each
/// direction x metric (MB/s, IOPS), and their copy at the end of the first stage.
#[derive(Debug, Clone, Default)]
struct Cell {
    repetitions: u32,
    /// Device time of its measured runs, seconds.
    seconds: f64,
    metrics: BTreeMap<(Direction, bool), Running>,
    first: Option<BTreeMap<(Direction, bool), Running>>,
}

impl Cell {
    /// Repetitions this cell needs for a half-width of `target` x the first-stage mean
    /// (Stein); None when an sd is unknown.
    fn needed(&self, target: f64) -> Option<f64> {
        let first = self.first.as_ref().filter(|f| !f.is_empty())?;
        let mut most: f64 = 0.0;
        for r in first.values() {
            let sd = r.rel_sd()?;
            let t = t_critical(f64::from(r.n - 1));
            most = most.max((t * sd / target).powi(2).ceil());
        }
        Some(most)
    }

    /// Stein's 95% half-width of the mean of all its runs, relative to that mean: the
    /// largest over directions and metrics; None when unknown.
    fn half_width(&self) -> Option<f64> {
        let first = self.first.as_ref().filter(|f| !f.is_empty())?;
        let mut most: f64 = 0.0;
        for (key, r) in first {
            let now = self.metrics.get(key)?;
            let sd = r.rel_sd()? * r.mean.abs();
            let t = t_critical(f64::from(r.n - 1));
            let half = t * sd / f64::from(now.n).sqrt() / now.mean.abs();
            if !half.is_finite() {
                return None;
            }
            most = most.max(half);
        }
        Some(most)
    }
}

/// Index in the session of the workload named `name`.
fn rule_workload(session: &Session, name: &str) -> Option<usize> {
    session
        .workloads
        .iter()
        .position(|&w| session.plan.workload[w].name == name)
}

/// The rule's state over one session.
pub struct Adaptive {
    target: f64,
    max_repeat: u32,
    first_stage: u32,
    configs: usize,
    names: Vec<String>,
    /// Per (config, workload) index of the session.
    cells: BTreeMap<(usize, usize), Cell>,
    /// Per workload: repetitions per config, once its first stage has finished, and
    /// whether the count reaches the target (false: capped at `--max-repeat`).
    planned: Vec<Option<(u32, bool)>>,
    /// Workloads whose remaining runs are skipped.
    done: Vec<bool>,
}

impl Adaptive {
    /// A rule for `pct`% with at most `max_repeat` repetitions.
    fn with(pct: f64, max_repeat: u32, configs: usize, names: Vec<String>) -> Adaptive {
        let workloads = names.len();
        Adaptive {
            target: pct / 100.0,
            max_repeat,
            first_stage: FIRST_STAGE.min(max_repeat),
            configs,
            names,
            cells: BTreeMap::new(),
            planned: vec![None; workloads],
            done: vec![false; workloads],
        }
    }

    /// The rule for `session`, or None when it has no `--until-ci`.
    pub fn new(session: &Session) -> Option<Adaptive> {
        let pct = session.until_ci?;
        let names = (0..session.workloads.len())
            .map(|w| session.plan.workload[session.workloads[w]].name.clone())
            .collect();
        Some(Adaptive::with(
            pct,
            session.matrix.repetitions(),
            session.configs.len(),
            names,
        ))
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

    /// Whether `slot` is skipped: its workload has had its planned repetitions.
    pub fn skips(&self, slot: &Slot) -> bool {
        self.done.get(slot.workload).copied().unwrap_or(false)
    }

    /// Account a finished run; returns how its workload stopped when this run was the
    /// last it needed, before `--max-repeat`.
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
        let first_stage = self.first_stage;
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
        if cell.repetitions == first_stage {
            cell.first = Some(cell.metrics.clone());
        }
        self.check(workload)
    }

    /// The cells of `workload`'s configs, once every config has run it.
    fn cells_of(&self, workload: usize) -> Option<Vec<&Cell>> {
        (0..self.configs)
            .map(|c| self.cells.get(&(c, workload)))
            .collect()
    }

    /// Plan `workload` once every config has finished the first stage; mark it done
    /// once every config has its planned repetitions, returning how it stopped when
    /// that leaves runs out.
    fn check(&mut self, workload: usize) -> Option<WorkloadStop> {
        if self.done[workload] {
            return None;
        }
        let cells = self.cells_of(workload)?;
        if self.planned[workload].is_none() {
            if cells.iter().any(|c| c.repetitions < self.first_stage) {
                return None;
            }
            let plan = self.plan(&cells);
            self.planned[workload] = Some(plan);
        }
        let (planned, _) = self.planned[workload]?;
        let cells = self.cells_of(workload)?;
        if cells.iter().any(|c| c.repetitions < planned) {
            return None;
        }
        self.done[workload] = true;
        let stop = self.stop_of(workload)?;
        (planned < self.max_repeat).then_some(stop)
    }

    /// Stein's count for a workload whose configs have finished the first stage, and
    /// whether it reaches the target (`--max-repeat` when an sd is unknown).
    fn plan(&self, cells: &[&Cell]) -> (u32, bool) {
        let needed = cells
            .iter()
            .map(|c| c.needed(self.target))
            .collect::<Option<Vec<f64>>>()
            .filter(|_| self.first_stage >= 2);
        let Some(needed) = needed else {
            return (self.max_repeat, false);
        };
        let most = needed
            .into_iter()
            .fold(f64::from(self.first_stage), f64::max);
        if most <= f64::from(self.max_repeat) {
            (most as u32, true)
        } else {
            (self.max_repeat, false)
        }
    }

    /// Where `workload` stands: None until every config has the same number of runs.
    fn stop_of(&self, workload: usize) -> Option<WorkloadStop> {
        let cells = self.cells_of(workload)?;
        let repetitions = cells[0].repetitions;
        if cells.iter().any(|c| c.repetitions != repetitions) {
            return None;
        }
        let half = cells
            .iter()
            .map(|c| c.half_width())
            .collect::<Option<Vec<f64>>>()
            .map(|h| h.into_iter().fold(0.0, f64::max) * 100.0);
        let planned = self.planned[workload];
        Some(WorkloadStop {
            workload: self.names[workload].clone(),
            repetitions,
            planned: planned.map(|(n, _)| n),
            half_width_pct: half,
            met_target: planned.is_some_and(|(_, met)| met),
            skipped_runs: self.max_repeat.saturating_sub(repetitions) * self.configs as u32,
        })
    }

    /// What the rule did over the whole session.
    pub fn summary(&self) -> Summary {
        let runs: u32 = self.cells.values().map(|c| c.repetitions).sum();
        let device_seconds: f64 = self.cells.values().map(|c| c.seconds).sum();
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
            first_stage: self.first_stage,
            max_repeat: self.max_repeat,
            runs,
            fixed_runs: (self.configs * self.names.len()) as u32 * self.max_repeat,
            device_seconds,
            fixed_seconds_estimate,
            workloads,
        }
    }
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
