//! The results directory: `runs.csv` (one row per run x job x direction, appended and
//! fsynced after every run), `series.csv` (per-second throughput), `latency.csv`
//! (latency CDF points) and `meta.json`.
//!
//! Column names carry their units. The report reads these files back, so this module is
//! the schema both sides share.

use serde::{Deserialize, Serialize};

/// Job name used for the rows that aggregate all jobs of a workload (group reporting).
pub const GROUP_JOB: &str = "all";

/// One row of `runs.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// 1-based position of the run in the expanded matrix.
    pub run: u32,
    pub label: String,
    pub config: String,
    pub workload: String,
    /// 1-based repetition of this config x workload.
    pub repetition: u32,
    /// Warm-up repetitions are recorded but left out of statistics.
    pub warmup: bool,
    pub started_unix_s: f64,
    /// Job name, or [`GROUP_JOB`] for all jobs of the workload together.
    pub job: String,
    /// `read` or `write`.
    pub direction: String,
    pub bytes: u64,
    pub ops: u64,
    pub seconds: f64,
    pub mb_per_s: f64,
    pub iops: f64,
    pub lat_min_us: f64,
    pub lat_mean_us: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p99_9_us: f64,
    pub lat_max_us: f64,
    /// Blocks that failed verification (0 when verify is off).
    pub verify_errors: u64,
}

/// One row of `series.csv`: bytes moved in one second of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub job: String,
    pub direction: String,
    pub second: u32,
    pub mb_per_s: f64,
}

/// One row of `latency.csv`: a point of the latency CDF of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub job: String,
    pub direction: String,
    pub percentile: f64,
    pub latency_us: f64,
}

pub const RUNS_CSV: &str = "runs.csv";
pub const SERIES_CSV: &str = "series.csv";
pub const LATENCY_CSV: &str = "latency.csv";
pub const META_JSON: &str = "meta.json";
