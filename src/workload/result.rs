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
    /// Bytes completed in each bin of [`BIN_SECONDS`] since the measured phase began
    /// (not in `--json`: [`DirectionResult::throughput_bins`] is what results keep).
    #[serde(default, skip_serializing)]
    pub bytes_per_bin: Vec<u64>,
    /// When this direction's clock started, seconds after the measured phase began (0
    /// but for iozone's later passes).
    #[serde(default)]
    pub start_s: f64,
    /// Latency distribution for CDF charts: (percentile 0..=100, latency in us).
    pub latency_cdf: Vec<(f64, f64)>,
}

/// Width of the finest throughput bin (the engine counts bytes per 100 ms).
pub const BIN_SECONDS: f64 = 0.1;
/// Throughput bins kept per run and direction: bins are widened (0.1, 0.2, 0.5, 1, 2,
/// 5 s, ...) until the run fits in this many.
pub const MAX_BINS: usize = 200;

/// One bin of throughput over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThroughputBin {
    /// Start of the bin, seconds after the measured phase began.
    pub start_s: f64,
    /// Time of the bin inside the direction's clock (a first or last bin may be
    /// partial), seconds: bytes / width_s is the throughput in it.
    pub width_s: f64,
    pub bytes: u64,
}

/// The bin width for a run of `seconds`: the finest 1-2-5 multiple of [`BIN_SECONDS`]
/// that leaves at most [`MAX_BINS`] bins.
pub fn bin_width(seconds: f64) -> f64 {
    let mut width = BIN_SECONDS;
    // 0.1, 0.2, 0.5, 1, 2, 5, ... s; 30 steps reach 10^9 s, past any bounded runtime.
    for step in [2.0, 2.5, 2.0].iter().cycle().take(30) {
        if seconds / width <= MAX_BINS as f64 {
            break;
        }
        width *= step;
    }
    width
}

impl DirectionResult {
    /// Throughput over time: the 100 ms counts merged into bins that fit the run's
    /// length ([`bin_width`]), each with the part of it inside the direction's clock.
    /// Bins outside the clock are left out.
    pub fn throughput_bins(&self) -> Vec<ThroughputBin> {
        let (start, end) = (self.start_s, self.start_s + self.seconds);
        let width = bin_width(self.seconds);
        let per = (width / BIN_SECONDS).round().max(1.0) as usize;
        self.bytes_per_bin
            .chunks(per)
            .enumerate()
            .filter_map(|(i, chunk)| {
                let lo = i as f64 * width;
                let inside = (lo + width).min(end) - lo.max(start);
                (inside > 1e-9).then(|| ThroughputBin {
                    start_s: lo,
                    width_s: inside,
                    bytes: chunk.iter().sum(),
                })
            })
            .collect()
    }

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
    /// Job name; numjobs clones are named `name.0`, `name.1`, ...; iozone's `-i 0`
    /// passes `name:write`, `name:rewrite`.
    pub job: String,
    pub directions: Vec<DirectionResult>,
    pub verify: Option<VerifyReport>,
    /// Counted in the workload's group (false for iozone's `-i 0` passes, which the
    /// group's random read and write rows do not include).
    #[serde(default = "in_group_default")]
    pub in_group: bool,
}

fn in_group_default() -> bool {
    true
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
    /// What an engine had to set up without on this machine, one line each, e.g. an
    /// io_uring ring whose buffers the kernel would not register (plain opcodes, slower
    /// than fio's fixed ones); empty when nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_fallbacks: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(start_s: f64, seconds: f64, bytes_per_bin: Vec<u64>) -> DirectionResult {
        DirectionResult {
            direction: Direction::Write,
            bytes: bytes_per_bin.iter().sum(),
            ops: 1,
            seconds,
            latency: LatencySummary::default(),
            bytes_per_second: Vec::new(),
            bytes_per_bin,
            start_s,
            latency_cdf: Vec::new(),
        }
    }

    #[test]
    fn bins_widen_with_the_run_length() {
        assert_eq!(bin_width(2.05), 0.1);
        assert_eq!(bin_width(20.0), 0.1);
        assert!((bin_width(25.0) - 0.2).abs() < 1e-12);
        assert!((bin_width(600.0) - 5.0).abs() < 1e-9);
        assert!(bin_width(f64::INFINITY).is_finite());
    }

    /// A 2.05 s write at a steady 1 MB per 0.1 s: every bin says 10 MB/s, the last one
    /// too (its 0.05 s hold half a bin's bytes), instead of a partial one-second bin.
    #[test]
    fn partial_bins_are_measured_by_their_own_width() {
        let mut counts = vec![1_000_000u64; 20];
        counts.push(500_000);
        let bins = dir(0.0, 2.05, counts).throughput_bins();
        assert_eq!(bins.len(), 21);
        for b in &bins {
            let mb_per_s = b.bytes as f64 / b.width_s / 1e6;
            assert!((mb_per_s - 10.0).abs() < 1e-6, "{b:?}");
        }
        assert!((bins[20].width_s - 0.05).abs() < 1e-9);
        // A pass that starts at 1.03 s (iozone's write after its read pass): the bin it
        // starts in counts from 1.03 s only.
        let bins = dir(1.03, 0.5, [vec![0; 10], vec![700_000; 6]].concat()).throughput_bins();
        assert_eq!(bins.len(), 6);
        assert!((bins[0].start_s - 1.0).abs() < 1e-9 && (bins[0].width_s - 0.07).abs() < 1e-9);
    }
}
