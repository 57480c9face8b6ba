//! The results directory: `runs.csv` (one row per run x job x direction, appended and
//! fsynced after every run), `series.csv` (per-second throughput), `latency.csv`
//! (latency CDF points), `evidence.csv` and `request_sizes.csv` (what the kernel did
//! during each run, see [`evidence`]), `verify_errors.csv` (the bad blocks verify found,
//! [`verify`]), `meta.json` and `restore.sh`.
//!
//! Column names carry their units. The report reads these files back, so this module is
//! the schema both sides share.

use crate::knob::KnobName;
use crate::plan::matrix::Order;
use crate::workload::result::Direction;
use serde::{Deserialize, Serialize};

pub mod evidence;
pub mod resume;
pub mod run_key;
pub mod until_ci;
pub mod verify;
pub mod writer;

pub use evidence::{EvidenceMeta, EvidenceRow, RequestSizeRow, EVIDENCE_CSV, REQUEST_SIZES_CSV};

/// The job name of the rows that aggregate all jobs of a workload (reserved by the
/// plan's validation, which defines it).
pub use crate::plan::workload::GROUP_JOB;

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
    pub direction: Direction,
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

#[cfg(test)]
impl RunRow {
    /// For tests: the group row of `run` (one I/O of one byte in one second, no
    /// latencies, repetition = run); set what a test needs with `..`.
    pub fn for_tests(run: u32, config: &str, workload: &str, direction: Direction) -> RunRow {
        RunRow {
            run,
            label: String::new(),
            config: config.into(),
            workload: workload.into(),
            repetition: run,
            warmup: false,
            started_unix_s: 0.0,
            job: GROUP_JOB.into(),
            direction,
            bytes: 1,
            ops: 1,
            seconds: 1.0,
            mb_per_s: 0.0,
            iops: 0.0,
            lat_min_us: 0.0,
            lat_mean_us: 0.0,
            lat_p50_us: 0.0,
            lat_p90_us: 0.0,
            lat_p99_us: 0.0,
            lat_p99_9_us: 0.0,
            lat_max_us: 0.0,
            verify_errors: 0,
        }
    }
}

/// One row of `series.csv`: throughput in one bin of time of one run. Bins are 0.1 s
/// and wider, as the run's length needs (at most 200 per run and direction); mmcab 0.1
/// wrote whole seconds and no `start_s`/`width_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub job: String,
    pub direction: Direction,
    /// The whole second the bin starts in.
    pub second: u32,
    /// Bytes of the bin / its width_s (whole seconds: / 1 s), in 10^6 B/s.
    pub mb_per_s: f64,
    /// Start of the bin, seconds after the measured phase began.
    #[serde(default)]
    pub start_s: Option<f64>,
    /// Time of the bin inside the direction's clock, seconds (a first or last bin may be
    /// partial).
    #[serde(default)]
    pub width_s: Option<f64>,
}

impl SeriesRow {
    /// (start, width) of the bin in seconds: whole seconds for rows without them.
    pub fn bin(&self) -> (f64, f64) {
        (
            self.start_s.unwrap_or(f64::from(self.second)),
            self.width_s.unwrap_or(1.0),
        )
    }
}

/// One row of `latency.csv`: a point of the latency CDF of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub job: String,
    pub direction: Direction,
    pub percentile: f64,
    pub latency_us: f64,
}

pub const RUNS_CSV: &str = "runs.csv";
pub const SERIES_CSV: &str = "series.csv";
pub const LATENCY_CSV: &str = "latency.csv";
pub const META_JSON: &str = "meta.json";
/// Shell commands that put every knob back by hand, written before the first change.
pub const RESTORE_SH: &str = "restore.sh";

/// Version of the results format this mmcab writes (`meta.json`'s `format_version`).
/// 0.2.0: the plan's sweeps are recorded in `meta.json` (`sweeps`) and are the only
/// sweeps the report draws. Absent (0.1): sweeps come from the plan text's
/// `[[sweep]]` tables, or, without any, from workload names (`randread-4k`), the rule
/// mmcab 0.1 reported with.
pub const RESULTS_FORMAT: &str = "0.2.0";

/// One sweep of the plan as recorded: the swept key and each workload's value of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepMeta {
    pub name: String,
    pub over: crate::plan::sweep::SweepOver,
    pub points: Vec<SweepMetaPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepMetaPoint {
    pub workload: String,
    /// The swept key's value in the workload's jobs (bytes for `bs`).
    pub x: u64,
}

impl SweepMeta {
    /// The sweeps of `plan` (each workload's x from its jobs, as [`SweepSpec::x_of`]).
    ///
    /// [`SweepSpec::x_of`]: crate::plan::sweep::SweepSpec::x_of
    pub fn of_plan(plan: &crate::plan::spec::Plan) -> Vec<SweepMeta> {
        plan.sweep
            .iter()
            .map(|s| SweepMeta {
                name: s.name.clone(),
                over: s.over,
                points: s
                    .workloads
                    .iter()
                    .filter_map(|w| {
                        let x = plan.workload(w).and_then(|spec| s.x_of(spec))?;
                        Some(SweepMetaPoint {
                            workload: w.clone(),
                            x,
                        })
                    })
                    .collect(),
            })
            .collect()
    }
}

/// `meta.json`: everything needed to know what was measured and to refuse comparing
/// unlike with unlike. Written by the runner at the start of a run and updated at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub tool_version: String,
    /// [`RESULTS_FORMAT`] when written; absent in results directories of format 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<String>,
    /// The plan's `[[sweep]]` tables, resolved (format 0.2.0 on; empty: no sweeps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<SweepMeta>,
    /// `--label` of this run (e.g. the kernel or patch under test); empty when none.
    pub label: String,
    /// `uname -r` and `/proc/cmdline` of the machine that ran the plan.
    pub kernel_release: String,
    pub kernel_cmdline: String,
    pub hostname: String,
    /// The target as given (`/dev/mmcblk0`, a file, a directory).
    pub target: String,
    /// Everything `mmcab info --json` shows about the device when it is an MMC/SD card
    /// (identity, ios, EXT_CSD, capabilities: compare checks the identity); null for
    /// other targets.
    pub device: Option<crate::device::DeviceInfo>,
    /// Size and model of a block device target (absent for files and directories, and
    /// in results directories of older mmcab versions): `--resume` checks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_device: Option<BlockDeviceId>,
    /// A one-line human description of the device, e.g. "QEMU!! (manfid 0x0000aa) 256 MiB eMMC".
    pub device_summary: String,
    pub plan_name: String,
    /// SHA-256 of the plan file's bytes, hex.
    pub plan_sha256: String,
    /// The plan file as it was when the run started.
    pub plan_text: String,
    /// Configs in plan order, with what was observed when each was applied.
    pub configs: Vec<ConfigMeta>,
    /// Workload names in plan order.
    pub workloads: Vec<String>,
    pub repetitions: u32,
    pub warmup: u32,
    /// `interleaved`, `random` or `blocked`.
    pub order: Order,
    pub seed: u64,
    /// `--scale-down` the sizes were divided by (None: 1, as written in the plan).
    #[serde(default)]
    pub scale_down: Option<u32>,
    /// Resolution of the clock that timed the runs (CLOCK_MONOTONIC's `clock_getres`),
    /// ns: a run must last 1000 of its ticks (plan::length). Absent in results of older
    /// mmcab versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_resolution_ns: Option<u64>,
    /// `--until-ci`: each workload got the repetitions its first stage said a 95% CI
    /// half-width of this percentage of the mean needs (`repetitions` is then
    /// `--max-repeat`, the most); absent for a fixed number of repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ci_pct: Option<f64>,
    /// What `--until-ci` did (its parameters, device time, each workload's
    /// repetitions), written when the run ends or stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ci: Option<until_ci::UntilCi>,
    /// Every knob the run uses as it was before the first start changed anything (the
    /// knob's saved snapshot: its value in the plan's words, then `key=value` for what
    /// else its restore puts back, e.g. `8 caps=0x4000014f control=auto`). `--resume`
    /// restores to these, not to what an interrupted run left. Absent in results
    /// directories of older mmcab versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knob_originals: Option<std::collections::BTreeMap<KnobName, String>>,
    pub started_unix_s: f64,
    /// Set when every run of the matrix has finished.
    pub finished_unix_s: Option<f64>,
    /// Where the kernel evidence of the runs came from, or why there is none (absent
    /// in results directories of mmcab 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceMeta>,
    /// What an engine set up without on this machine, once per distinct line (e.g. an
    /// io_uring ring without registered buffers, which then uses plain opcodes): the
    /// runs' numbers are not those of the engine as it is meant to run. Absent: nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_fallbacks: Vec<String>,
    /// The command line that started the run (`mmcab run ...`, each argument as given;
    /// a resumed run keeps its first start's). Absent in results of older mmcab versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line: Option<Vec<String>>,
    /// Every switch between configs: the knobs applied before a run, the bus as it was
    /// afterwards and the tuning the kernel did meanwhile (also a run whose verification
    /// found `ios` changed without a switch). Absent in results of older mmcab versions
    /// and when no knob was ever applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<SwitchMeta>,
}

/// One switch to a config (meta.json `switches[]`), recorded with the run it served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwitchMeta {
    pub config: String,
    /// The run that came right after it.
    pub run: u32,
    /// The knobs applied (the ones that differed), in the order they were; empty: none
    /// was, and `ios` differed from what was recorded for the config before.
    pub knobs: Vec<KnobName>,
    /// debugfs `ios` after the knobs were applied and verified (None: not read).
    pub ios: Option<crate::device::Ios>,
    /// The host's requests during the switch, its tuning above all; None when there is
    /// no trace (`trace_unavailable` says why).
    pub trace: Option<crate::evidence::tuning::SwitchTrace>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub trace_unavailable: String,
    /// The host's `err_stats` counters that counted up during the switch (evidence.csv's
    /// words; `none`), empty when not read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub err_stats: String,
}

/// What identifies a block device target besides an MMC card's CID: its size, the
/// model its driver reports, and for a loop device its backing file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDeviceId {
    pub size_bytes: u64,
    /// sysfs `device/model` of the disk (absent for loop, dm and others without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// sysfs `loop/backing_file` of a loop device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigMeta {
    pub name: String,
    /// Knob settings as written in the plan, e.g. {"bus-width": "8"}.
    pub knobs: std::collections::BTreeMap<KnobName, String>,
    /// `ios` as parsed when the config was first verified (clock, bus width, timing), if any.
    pub ios: Option<crate::device::Ios>,
    /// EXT_CSD (hex, byte 0 first) read when the config was first verified, if any.
    pub ext_csd_hex: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config's knobs in meta.json as written before they were keyed by `KnobName`:
    /// read and written back byte for byte, looked up by the name as text.
    #[test]
    fn config_knobs_read_and_write_as_before() {
        let json = r#"{"name":"bus8","knobs":{"bus-width":"8","packing":"on"},"ios":null,"ext_csd_hex":""}"#;
        let config: ConfigMeta = serde_json::from_str(json).unwrap();
        assert_eq!(config.knobs["bus-width"], "8");
        assert_eq!(config.knobs["packing"], "on");
        assert_eq!(serde_json::to_string(&config).unwrap(), json);
    }
}
