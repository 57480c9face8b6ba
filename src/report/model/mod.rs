//! The report as data: one block per workload x direction x metric, one row per config
//! with its summary, its change against the baseline and its warnings; its title,
//! header and caption ([`header`]), what ran ([`Setup`]), the kernel evidence
//! ([`evidence`]) and notes; a probe's table instead of blocks ([`probe`]). Names,
//! numbers and enums only: every output (text, markdown, csv, json, charts) words this
//! one structure in [`crate::report::render`].

pub mod correction;
pub mod evidence;
pub mod header;
pub mod metric;
pub mod mmc_test;
pub mod probe;
pub mod setup;
pub mod warnings;

pub use metric::Metric;
pub use setup::{Bus, ConfigSetup, Setup};

use crate::plan::sweep::SweepOver;
use crate::stats::boots::{CalibratedSpread, Model, Spread};
use crate::stats::multiple::Correction;
use crate::stats::{self, Change, Summary, Verdict, Warning};
use crate::workload::result::Direction;
use serde::{Serialize, Serializer};

/// One value of a metric: a measured run of a config, or a published number.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub config: String,
    /// The run's number in its results directory (runs.csv's `run`); for published
    /// numbers, the row's place in the source.
    pub run: u32,
    pub value: f64,
}

/// One config's samples in a block.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigRow {
    pub config: String,
    /// One value per measured (non-warm-up) repetition, in run order.
    pub values: Vec<f64>,
    /// Run number of each value (report.json writes them as it always has, `1.0`).
    #[serde(serialize_with = "runs_as_numbers")]
    pub runs: Vec<u32>,
    /// Of `values`; in a comparison across boots, of the boot means when the side has
    /// several boots (n = boots, sd and cv of the boot means, CI across boots).
    pub summary: Summary,
    /// The config this one is compared with (None for a baseline).
    pub baseline: Option<String>,
    /// Against the baseline; None for the baseline itself or when it has no values.
    pub change: Option<Change>,
    pub verdict: Option<Verdict>,
    /// The p-value of `change` adjusted over the whole report ([`Report::correction`]);
    /// None when there is no test.
    pub q: Option<f64>,
    /// Across boots (`mmcab compare`): this side's runs grouped by boot.
    pub across: Option<Across>,
    pub warnings: Vec<Warning>,
}

/// Run numbers as report.json has always written them: JSON numbers with a fraction.
fn runs_as_numbers<S: Serializer>(runs: &[u32], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(runs.iter().map(|&r| f64::from(r)))
}

/// A row of a comparison across boots: its spread, and how its change was tested.
#[derive(Debug, Clone, Serialize)]
pub struct Across {
    pub spread: Spread,
    /// None for a baseline.
    pub model: Option<Model>,
    /// Boots per side that would resolve a change of this size (95% CI clear of 0
    /// with 80% power), from the boot-to-boot spread the test used; None when unknown.
    pub boots_needed: Option<u32>,
    /// The boot of each of the row's values (0 for the side's first boot).
    #[serde(skip)]
    pub boot: Vec<usize>,
    /// Each value's place in its boot: its run number less the boot's first run (of
    /// any config) in the block, so that the sides' run orders can be compared.
    #[serde(skip)]
    pub position: Vec<f64>,
    /// The calibration the change was tested with (single boots), if any.
    #[serde(skip)]
    pub calibration: Option<CalibratedSpread>,
}

/// One workload x direction x metric.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    pub workload: String,
    /// None when the source does not say (written as empty: see [`Block::direction_text`]).
    #[serde(serialize_with = "direction_text")]
    pub direction: Option<Direction>,
    pub metric: Metric,
    /// Shown in the mail text (the headline metrics); all blocks go to csv/json/md.
    pub headline: bool,
    /// Block size of the workload when known (mean I/O size, or as published).
    pub block_size_bytes: Option<u64>,
    /// Sweep this block belongs to (charted against block size), if any.
    pub sweep: Option<String>,
    /// Every sweep this block is a point of, with its x value (what the sweep charts
    /// draw): the plan's `[[sweep]]` tables, or `sweep` at `block_size_bytes`.
    pub sweeps: Vec<SweepPoint>,
    pub rows: Vec<ConfigRow>,
}

/// A block's place in one sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    pub sweep: String,
    /// The job key on the x axis.
    pub over: SweepOver,
    pub x: f64,
}

impl Block {
    /// `read`, `write`, or empty when the source does not say.
    pub fn direction_text(&self) -> &'static str {
        self.direction.map_or("", Direction::as_str)
    }
}

/// A block's direction as its outputs write it: `read`, `write` or empty.
fn direction_text<S: Serializer>(d: &Option<Direction>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.map_or("", Direction::as_str))
}

/// The whole report (report.json: [`crate::report::render::json`]).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What the report is (the first line of the mail text).
    pub title: header::Title,
    /// The `Key: value` lines after the title (device, kernel, plan, runs).
    pub header: header::Header,
    /// The MMC host's driver as meta.json recorded it (`device.host_driver`), one per
    /// different record in a comparison; empty when none was recorded (older mmcab).
    pub hosts: Vec<RecordedHost>,
    /// What was run, after the header (None for published numbers and probes).
    pub setup: Option<Setup>,
    /// What the charts' captions say: device, kernel, n.
    pub caption: Option<header::Caption>,
    pub configs: Vec<String>,
    pub baseline: String,
    /// Single published values (results/reference): no spread, no tests.
    pub published: bool,
    pub blocks: Vec<Block>,
    /// Notes printed at the end (e.g. identity mismatches under --force).
    pub notes: Vec<Note>,
    /// What the kernel did per workload x direction and config (results directories
    /// with evidence.csv only).
    pub evidence: Vec<evidence::EvidenceBlock>,
    /// mmc_test's time per transfer beside the block-layer workloads' of the same size
    /// (results directories of plans with `engine = "mmc_test"` only).
    pub mmc_test: Vec<mmc_test::BesideRow>,
    /// How the p-values were adjusted together; None until they are (and for
    /// published values, which have none).
    pub correction: Option<Correction>,
    /// Number of tests adjusted together.
    pub tests: usize,
    /// Set when the report compares results directories as boots.
    pub boots: Option<Boots>,
    /// Set for the report of a probe, whose body is its table (no blocks).
    pub probe: Option<probe::Probe>,
}

/// A note at the end of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A published source's own note (reference CSVs).
    Published(String),
    /// What differs between the directories of a comparison made with `--force`
    /// (device identity, plan, `--scale-down`).
    Forced(String),
    /// Why a chart is missing, in the charts' words.
    Chart(String),
}

/// The MMC host and its driver as a results directory's meta.json recorded them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedHost {
    /// In a comparison: the sides (or boots) that recorded it; empty in the report of
    /// one results directory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by: Vec<String>,
    /// e.g. `mmc0`.
    pub host: String,
    pub driver: crate::device::info::HostDriver,
}

/// The boots of a comparison across boots.
#[derive(Debug, Clone)]
pub struct Boots {
    /// Each side's name and its boots (results directory names), base first.
    pub sides: Vec<(String, Vec<String>)>,
    /// The stored calibration used for one-boot sides.
    pub calibration: Option<header::CalibrationUsed>,
}

impl Boots {
    /// Whether some side has more than one boot (the report then shows boot spreads).
    pub fn several(&self) -> bool {
        self.sides.iter().any(|(_, b)| b.len() > 1)
    }
}

impl Report {
    /// Whether `config` is what some other config is compared with.
    pub fn is_baseline(&self, config: &str) -> bool {
        config == self.baseline
            || self
                .blocks
                .iter()
                .flat_map(|b| &b.rows)
                .any(|r| r.baseline.as_deref() == Some(config))
    }

    /// Smallest and largest n over all rows.
    pub fn n_range(&self) -> (usize, usize) {
        let ns = self
            .blocks
            .iter()
            .flat_map(|b| b.rows.iter().map(|r| r.summary.n));
        let min = ns.clone().min().unwrap_or(0);
        (min, ns.max().unwrap_or(0))
    }

    /// Runs per config, as the header and the captions count them.
    pub fn runs_count(&self) -> header::Count {
        let (min, max) = self.n_range();
        header::Count::Runs { min, max }
    }
}

/// Which config a config is compared with (None: it is a baseline itself).
pub type BaselineOf<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The usual case: every config against one baseline.
pub fn against(baseline: &str) -> impl Fn(&str) -> Option<String> + '_ {
    move |config: &str| {
        if config == baseline {
            None
        } else {
            Some(baseline.to_string())
        }
    }
}

/// Build the rows of a block from its samples; configs in the given order, each
/// compared with `baseline_of(config)` when that has samples.
pub fn rows_for(
    configs: &[String],
    baseline_of: BaselineOf,
    metric: &Metric,
    samples: &[Sample],
) -> Vec<ConfigRow> {
    let values_of = |config: &str| -> (Vec<u32>, Vec<f64>) {
        samples
            .iter()
            .filter(|s| s.config == config)
            .map(|s| (s.run, s.value))
            .unzip()
    };
    configs
        .iter()
        .filter_map(|config| {
            let (runs, values) = values_of(config);
            if values.is_empty() {
                return None;
            }
            let baseline = baseline_of(config).filter(|b| b != config);
            let base_values = baseline
                .as_deref()
                .map(|b| values_of(b).1)
                .unwrap_or_default();
            let (baseline, change) = if base_values.is_empty() {
                (None, None)
            } else {
                (baseline, Some(stats::welch_change(&base_values, &values)))
            };
            Some(ConfigRow {
                config: config.clone(),
                baseline,
                summary: stats::summarize(&values),
                verdict: change.map(|c| stats::verdict(&c, metric.higher_is_better())),
                q: None,
                across: None,
                // Noise and drift: [`warnings`], once the verdicts are known.
                warnings: if values.len() > 1 {
                    stats::warnings(&values)
                } else {
                    Vec::new()
                },
                change,
                values,
                runs,
            })
        })
        .collect()
}

/// Run numbers as the x of a drift fit.
pub fn run_order(runs: &[u32]) -> Vec<f64> {
    runs.iter().map(|&r| f64::from(r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_compare_against_the_baseline_only() {
        let configs = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let s = |c: &str, run: u32, value: f64| Sample {
            config: c.to_string(),
            run,
            value,
        };
        let samples = vec![
            s("a", 1, 10.0),
            s("b", 2, 12.0),
            s("a", 3, 10.2),
            s("b", 4, 12.1),
            s("a", 5, 9.9),
            s("b", 6, 11.9),
        ];
        let rows = rows_for(&configs, &against("a"), &Metric::MbPerS, &samples);
        assert_eq!(rows.len(), 2, "c has no samples and is left out");
        assert!(rows[0].change.is_none());
        assert_eq!(rows[1].verdict, Some(Verdict::Faster));
        assert_eq!(rows[1].runs, vec![2, 4, 6]);
    }
}
