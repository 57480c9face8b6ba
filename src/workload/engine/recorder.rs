//! The [`Recorder`] of a job clone's completed I/O and what it keeps per direction
//! ([`DirStats`]): latency into an hdrhistogram (ns), bytes per bin of time, and the
//! conversion into the shared result types.

use crate::workload::result::{Direction, DirectionResult, LatencySummary};
use hdrhistogram::Histogram;
use std::time::Instant;

/// Percentiles of the latency CDF kept in results (and latency.csv).
pub const CDF_PERCENTILES: [f64; 19] = [
    0.0, 1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
    99.99, 99.999, 100.0,
];

/// Width of the finest throughput bin: 100 ms (throughput over time of runs of a
/// second or two still shows a shape; the report coarsens longer runs).
pub const BIN_NS: u64 = 100_000_000;
const BINS_PER_SECOND: usize = (1_000_000_000 / BIN_NS) as usize;

/// Highest latency kept exactly: one hour (longer ones are recorded as one hour).
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// What one direction of one job clone (or of a whole workload) measured.
#[derive(Debug, Clone)]
pub struct DirStats {
    pub direction: Direction,
    pub hist: Histogram<u64>,
    pub bytes: u64,
    pub ops: u64,
    /// Bytes completed in each bin of [`BIN_NS`] since the measured phase began.
    pub bytes_per_bin: Vec<u64>,
    /// When this direction's clock started / stopped, ns after the measured phase began.
    pub start_ns: u64,
    pub end_ns: u64,
}

impl DirStats {
    pub fn new(direction: Direction) -> DirStats {
        DirStats {
            direction,
            hist: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds"),
            bytes: 0,
            ops: 0,
            bytes_per_bin: Vec::with_capacity(256),
            start_ns: 0,
            end_ns: 0,
        }
    }

    /// Fold another clone's numbers in (group reporting).
    pub fn merge(&mut self, other: &DirStats) {
        // Same bounds on both sides: addition cannot fail.
        let _ = self.hist.add(&other.hist);
        if self.ops == 0 {
            self.start_ns = other.start_ns;
        } else if other.ops > 0 {
            self.start_ns = self.start_ns.min(other.start_ns);
        }
        self.bytes += other.bytes;
        self.ops += other.ops;
        self.end_ns = self.end_ns.max(other.end_ns);
        if self.bytes_per_bin.len() < other.bytes_per_bin.len() {
            self.bytes_per_bin.resize(other.bytes_per_bin.len(), 0);
        }
        for (a, b) in self.bytes_per_bin.iter_mut().zip(&other.bytes_per_bin) {
            *a += b;
        }
    }

    pub fn to_result(&self) -> DirectionResult {
        let us = |ns: u64| ns as f64 / 1e3;
        let h = &self.hist;
        let empty = h.is_empty();
        let q = |p: f64| {
            if empty {
                0.0
            } else {
                us(h.value_at_quantile(p / 100.0))
            }
        };
        DirectionResult {
            direction: self.direction,
            bytes: self.bytes,
            ops: self.ops,
            seconds: self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9,
            latency: LatencySummary {
                min_us: if empty { 0.0 } else { us(h.min_nz()) },
                mean_us: if empty { 0.0 } else { h.mean() / 1e3 },
                p50_us: q(50.0),
                p90_us: q(90.0),
                p99_us: q(99.0),
                p99_9_us: q(99.9),
                max_us: if empty { 0.0 } else { us(h.max()) },
            },
            bytes_per_second: self
                .bytes_per_bin
                .chunks(BINS_PER_SECOND)
                .map(|c| c.iter().sum())
                .collect(),
            bytes_per_bin: self.bytes_per_bin.clone(),
            start_s: self.start_ns as f64 / 1e9,
            latency_cdf: if empty {
                Vec::new()
            } else {
                CDF_PERCENTILES.iter().map(|&p| (p, q(p))).collect()
            },
        }
    }
}

/// Count an I/O's `bytes` into the bins its time from `start_ns` to `end_ns` covers, in
/// proportion to the time in each: the throughput of a bin is then the rate at which
/// data moved during it, also when one I/O lasts longer than a bin (a 1 MiB write of
/// 0.3 s adds 1/3 MiB to each of three 0.1 s bins instead of 1 MiB to the one it ends
/// in, which would draw spikes and gaps).
fn spread(bins: &mut Vec<u64>, start_ns: u64, end_ns: u64, bytes: u64) {
    let (first, last) = ((start_ns / BIN_NS) as usize, (end_ns / BIN_NS) as usize);
    if last >= bins.len() {
        bins.resize(last + 1, 0);
    }
    if first == last {
        bins[last] += bytes;
        return;
    }
    let span = (end_ns - start_ns) as u128;
    let mut given = 0u64;
    for (i, bin) in bins.iter_mut().enumerate().take(last).skip(first) {
        let lo = start_ns.max(i as u64 * BIN_NS);
        let hi = end_ns.min((i as u64 + 1) * BIN_NS);
        let share = (bytes as u128 * u128::from(hi - lo) / span) as u64;
        *bin += share;
        given += share;
    }
    bins[last] += bytes - given;
}

/// Records completions of one job clone, relative to the start of the measured phase.
pub struct Recorder {
    pub measure_start: Instant,
    pub read: DirStats,
    pub write: DirStats,
    /// Passes measured on their own (iozone's write and rewrite): (name, stats).
    pub passes: Vec<(&'static str, DirStats)>,
    /// The pass being recorded; None: `read` and `write`.
    current: Option<usize>,
}

impl Recorder {
    pub fn new(measure_start: Instant) -> Recorder {
        Recorder {
            measure_start,
            read: DirStats::new(Direction::Read),
            write: DirStats::new(Direction::Write),
            passes: Vec::new(),
            current: None,
        }
    }

    /// Record what follows into a pass of its own (`Some`), or the job's own rows.
    pub fn begin_pass(&mut self, pass: Option<&'static str>, direction: Direction) {
        self.current = pass.map(|name| {
            self.passes.push((name, DirStats::new(direction)));
            self.passes.len() - 1
        });
    }

    /// One completed I/O of `bytes`, `latency_ns` long, finished at `done`. I/O that
    /// completes during ramp_time is not counted.
    #[inline]
    pub fn record(&mut self, direction: Direction, bytes: u64, latency_ns: u64, done: Instant) {
        if let Some(since_ns) = self.since_start(done) {
            self.record_at(direction, bytes, latency_ns, since_ns);
        }
    }

    /// When `done` is in the measured phase, ns after it began; None during ramp_time.
    /// An engine that reaps several I/Os at one moment converts it once, for
    /// [`Recorder::record_at`].
    #[inline]
    pub fn since_start(&self, done: Instant) -> Option<u64> {
        done.checked_duration_since(self.measure_start)
            .map(|since| since.as_nanos() as u64)
    }

    /// [`Recorder::record`] of an I/O that finished `since_ns` after the measured phase
    /// began ([`Recorder::since_start`]).
    #[inline]
    pub fn record_at(&mut self, direction: Direction, bytes: u64, latency_ns: u64, since_ns: u64) {
        let s = self.dir_mut(direction);
        s.hist.saturating_record(latency_ns.max(1));
        s.bytes += bytes;
        s.ops += 1;
        s.end_ns = since_ns;
        spread(
            &mut s.bytes_per_bin,
            since_ns.saturating_sub(latency_ns),
            since_ns,
            bytes,
        );
    }

    /// Start a direction's clock now (iozone: the write pass begins after the read pass).
    pub fn start_clock(&mut self, direction: Direction, at: Instant) {
        let ns = at.saturating_duration_since(self.measure_start).as_nanos() as u64;
        let s = self.dir_mut(direction);
        s.start_ns = ns;
        s.end_ns = s.end_ns.max(ns);
    }

    /// Stretch a direction's end to `at` (end_fsync is inside the timing).
    pub fn extend_end(&mut self, direction: Direction, at: Instant) {
        let ns = at.saturating_duration_since(self.measure_start).as_nanos() as u64;
        let s = self.dir_mut(direction);
        s.end_ns = s.end_ns.max(ns);
    }

    fn dir_mut(&mut self, direction: Direction) -> &mut DirStats {
        match (self.current, direction) {
            (Some(i), _) => &mut self.passes[i].1,
            (None, Direction::Read) => &mut self.read,
            (None, Direction::Write) => &mut self.write,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn records_series_latency_and_skips_ramp() {
        let t0 = Instant::now() + Duration::from_secs(100);
        let mut r = Recorder::new(t0);
        r.record(Direction::Read, 4096, 1000, t0 - Duration::from_secs(1)); // ramp
        r.record(Direction::Read, 4096, 1000, t0 + Duration::from_millis(500));
        r.record(
            Direction::Read,
            4096,
            3000,
            t0 + Duration::from_millis(2500),
        );
        let res = r.read.to_result();
        assert_eq!((res.bytes, res.ops), (8192, 2));
        assert_eq!(res.bytes_per_second, vec![4096, 0, 4096]);
        assert!((res.seconds - 2.5).abs() < 1e-9);
        assert!((res.latency.min_us - 1.0).abs() < 0.01);
        assert!((res.latency.max_us - 3.0).abs() < 0.01);
        assert!((res.latency.mean_us - 2.0).abs() < 0.01);
        assert_eq!(res.latency_cdf.len(), CDF_PERCENTILES.len());
        assert!((res.iops() - 0.8).abs() < 1e-9);
    }

    /// A 1 MiB write of 0.3 s from 0.05 s to 0.35 s: its bytes spread over the four
    /// 0.1 s bins it covers, in proportion (1/6, 1/3, 1/3, 1/6), all of them counted.
    #[test]
    fn a_long_io_is_spread_over_the_bins_it_covers() {
        let mut bins = Vec::new();
        spread(&mut bins, 50_000_000, 350_000_000, 6_000_000);
        assert_eq!(bins, [1_000_000, 2_000_000, 2_000_000, 1_000_000]);
        spread(&mut bins, 120_000_000, 130_000_000, 7);
        assert_eq!(bins[1], 2_000_007);
        let mut odd = Vec::new();
        spread(&mut odd, 0, 300_000_001, 1_000_001);
        assert_eq!(odd.iter().sum::<u64>(), 1_000_001);
    }

    #[test]
    fn merge_sums_bytes_and_series() {
        let t0 = Instant::now();
        let mut a = Recorder::new(t0);
        let mut b = Recorder::new(t0);
        a.record(Direction::Write, 100, 10, t0 + Duration::from_millis(10));
        b.record(Direction::Write, 50, 20, t0 + Duration::from_millis(1500));
        a.write.merge(&b.write);
        let res = a.write.to_result();
        assert_eq!(res.bytes, 150);
        assert_eq!(res.bytes_per_second, vec![100, 50]);
        assert!((res.seconds - 1.5).abs() < 1e-9);
    }
}
