//! What the engine measured: the contract between the workload engine, the runner that
//! records it, and the reports that read it back.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// Latency summary of completed I/Os, in microseconds (from an hdrhistogram in ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
}

/// One direction (read or write) of one job, or of all jobs of a workload together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionResult {
    pub direction: Direction,
    pub bytes: u64,
    pub ops: u64,
    /// Wall time over which these bytes moved (ramp time excluded).
    pub seconds: f64,
    pub latency: LatencySummary,
    /// Bytes completed in each whole second since the measured phase began.
    pub bytes_per_second: Vec<u64>,
    /// Latency distribution for CDF charts: (percentile 0..=100, latency in us).
    pub latency_cdf: Vec<(f64, f64)>,
}

impl DirectionResult {
    /// Throughput in MB/s (10^6 bytes per second), as dd prints.
    pub fn mb_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1e6
        } else {
            0.0
        }
    }

    pub fn iops(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Verification outcome of a job run with `verify = true`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    pub blocks_checked: u64,
    pub bad_blocks: u64,
    /// The first bad blocks: (byte offset on the target, what was wrong).
    pub first_bad: Vec<(u64, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// Job name; numjobs clones are named `name.0`, `name.1`, ...
    pub job: String,
    pub directions: Vec<DirectionResult>,
    pub verify: Option<VerifyReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub workload: String,
    /// Start of the measured phase, seconds since the Unix epoch.
    pub started_unix_s: f64,
    pub jobs: Vec<JobResult>,
    /// All jobs together per direction (fio's group reporting): bytes and ops summed,
    /// seconds from the first start to the last finish, latencies merged.
    pub group: Vec<DirectionResult>,
    /// CPU time (user + system) the job threads used while running, in seconds
    /// (CLOCK_THREAD_CPUTIME_ID; fio's usr_cpu + sys_cpu).
    #[serde(default)]
    pub cpu_seconds: f64,
}
