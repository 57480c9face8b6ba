//! What `mmcab run --until-ci` did, as meta.json's `until_ci` records it: the rule's
//! parameters, the runs and device time used against the fixed design's, and each
//! workload's repetitions and interval.

use serde::{Deserialize, Serialize};

/// How one workload ended under `--until-ci`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadStop {
    pub workload: String,
    /// Measured repetitions of each of its configs.
    pub repetitions: u32,
    /// Repetitions per config the first stage asked for (None before the first stage
    /// has finished), at most `--max-repeat`.
    pub planned: Option<u32>,
    /// Largest 95% CI half-width (Stein's, first-stage sd) over its configs,
    /// directions and metrics, percent of the mean; None before the first stage has
    /// finished or when a mean is 0 or not a number.
    pub half_width_pct: Option<f64>,
    /// Whether the planned repetitions reach the target (false: capped at
    /// `--max-repeat`, or not known).
    pub met_target: bool,
    /// Runs of the fixed design left out.
    pub skipped_runs: u32,
}

/// What `--until-ci` did over a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntilCi {
    /// `--until-ci`: the 95% CI half-width asked for, percent of the mean.
    pub target_pct: f64,
    /// Repetitions of the first stage, whose sd sets each workload's count.
    pub first_stage: u32,
    /// `--max-repeat`.
    pub max_repeat: u32,
    /// Measured runs done and the fixed design's count (configs x workloads x
    /// `max_repeat`).
    pub runs: u32,
    pub fixed_runs: u32,
    /// Device time of the measured runs (the workloads' own time), seconds, and an
    /// estimate of the fixed design's (each config x workload's mean run time x
    /// `max_repeat`).
    pub device_seconds: f64,
    pub fixed_seconds_estimate: f64,
    pub workloads: Vec<WorkloadStop>,
}
