//! Sweeps declared in the plan (`[[sweep]]`): workloads that differ in one job key,
//! charted against that key's value (IOPS and MB/s against block size or queue depth).
//!
//! ```toml
//! [[sweep]]
//! name = "randread-depth"      # chart: sweep-randread-depth-<direction>.png
//! over = "iodepth"             # the x axis: "bs", "iodepth" or "numjobs"
//! workloads = ["rand-4k-qd1", "rand-4k-qd32"]
//! ```
//!
//! The x value of each workload is read from its jobs in the plan (all jobs of a
//! workload must agree on it), never from the workload's name. A workload may be in
//! several sweeps (4 KiB at QD1 is on the depth axis and on the block-size axis).

use super::workload::{JobSpec, WorkloadSpec};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// The job key a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepOver {
    /// Block size (bytes): a log2 axis labelled 4k, 16k, 1M.
    Bs,
    /// I/Os in flight per job thread.
    Iodepth,
    /// Job threads.
    Numjobs,
}

impl SweepOver {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepOver::Bs => "bs",
            SweepOver::Iodepth => "iodepth",
            SweepOver::Numjobs => "numjobs",
        }
    }

    /// This key's value in one job.
    fn value(self, job: &JobSpec) -> u64 {
        match self {
            SweepOver::Bs => job.bs,
            SweepOver::Iodepth => u64::from(job.iodepth),
            SweepOver::Numjobs => u64::from(job.numjobs),
        }
    }
}

/// One `[[sweep]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    pub name: String,
    pub over: SweepOver,
    pub workloads: Vec<String>,
}

/// Most workloads one sweep may name.
pub const MAX_SWEEP_POINTS: usize = 256;

impl SweepSpec {
    /// The x value of `workload`: its jobs' value of the swept key (checked equal by
    /// [`SweepSpec::validate`]).
    pub fn x_of(&self, workload: &WorkloadSpec) -> Option<u64> {
        workload.job.first().map(|j| self.over.value(j))
    }

    /// The workloads exist, there are 2..=256 of them, each workload's jobs agree on the
    /// swept key and no two workloads have the same value.
    pub fn validate(&self, workloads: &[WorkloadSpec]) -> Result<()> {
        let at = format!("[[sweep]] '{}'", self.name);
        if self.name.trim().is_empty() {
            bail!("a [[sweep]] has an empty `name`: add `name = \"...\"` (it names the chart)");
        }
        if self.workloads.len() < 2 || self.workloads.len() > MAX_SWEEP_POINTS {
            bail!(
                "{at}: `workloads` names {} workloads: list 2 to {MAX_SWEEP_POINTS} of the plan's \
                 workloads, one per point of the sweep",
                self.workloads.len()
            );
        }
        let key = self.over.as_str();
        let mut seen: Vec<(u64, &str)> = Vec::new();
        for name in &self.workloads {
            let Some(w) = workloads.iter().find(|w| &w.name == name) else {
                bail!("{at}: no workload named '{name}' in the plan");
            };
            let values: Vec<u64> = w.job.iter().map(|j| self.over.value(j)).collect();
            if values.iter().any(|v| *v != values[0]) {
                bail!(
                    "{at}: the jobs of workload '{name}' have different `{key}` ({values:?}): \
                     a sweep point needs one value"
                );
            }
            if let Some((_, other)) = seen.iter().find(|(v, _)| *v == values[0]) {
                bail!(
                    "{at}: workloads '{other}' and '{name}' have the same `{key}` = {}: \
                     each point of a sweep needs its own value",
                    values[0]
                );
            }
            seen.push((values[0], name));
        }
        Ok(())
    }
}

/// Check every sweep of a plan; names must be unique.
pub fn validate_all(sweeps: &[SweepSpec], workloads: &[WorkloadSpec]) -> Result<()> {
    for (i, s) in sweeps.iter().enumerate() {
        if sweeps[..i].iter().any(|o| o.name == s.name) {
            bail!(
                "two [[sweep]] tables are named '{}': sweep names must be unique",
                s.name
            );
        }
        s.validate(workloads)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::plan::spec::Plan;

    const WORKLOADS: &str = r#"
[[workload]]
name = "qd1"
[[workload.job]]
name = "r"
rw = "randread"
engine = "io_uring"
[[workload]]
name = "qd8"
[[workload.job]]
name = "r"
rw = "randread"
engine = "io_uring"
iodepth = 8
"#;

    fn plan(sweep: &str) -> anyhow::Result<Plan> {
        format!("name = \"p\"\n{sweep}\n{WORKLOADS}").parse()
    }

    #[test]
    fn a_sweep_without_a_name_is_refused() {
        let err = format!(
            "{:#}",
            plan("[[sweep]]\nname = \"\"\nover = \"bs\"\nworkloads = [\"qd1\", \"qd8\"]")
                .unwrap_err()
        );
        assert_eq!(
            err,
            "a [[sweep]] has an empty `name`: add `name = \"...\"` (it names the chart)"
        );
    }

    #[test]
    fn sweeps_take_x_from_the_jobs() {
        let p = plan("[[sweep]]\nname = \"d\"\nover = \"iodepth\"\nworkloads = [\"qd1\", \"qd8\"]")
            .unwrap();
        let s = &p.sweep[0];
        let xs: Vec<_> = p.workload.iter().map(|w| s.x_of(w)).collect();
        assert_eq!(xs, [Some(1), Some(8)]);
    }

    #[test]
    fn bad_sweeps_name_the_sweep_and_the_fix() {
        for (sweep, want) in [
            ("over = \"iodepth\"\nworkloads = [\"qd1\"]", "2 to"),
            (
                "over = \"iodepth\"\nworkloads = [\"qd1\", \"nope\"]",
                "'nope'",
            ),
            ("over = \"bs\"\nworkloads = [\"qd1\", \"qd8\"]", "same `bs`"),
            ("over = \"depth\"\nworkloads = [\"qd1\", \"qd8\"]", "depth"),
            ("over = \"bs\"\nworkloads = []", "list 2 to 256"),
        ] {
            let err = format!(
                "{:#}",
                plan(&format!("[[sweep]]\nname = \"s\"\n{sweep}")).unwrap_err()
            );
            assert!(err.contains(want), "{sweep}: {err}");
        }
    }
}
