//! A probe's results directory: `probe.json` (everything: device, options, rows, runs,
//! geometry), `align.csv` or `open_au.csv` (the table), and `published.txt` when a
//! published flashbench output was given to compare with. `mmcab report DIR` reads it
//! back (the report goes into the same directory).

use super::align::{AlignOptions, AlignRow};
use super::geometry::Geometry;
use super::open_au::{OpenAuOptions, OpenAuRun};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const PROBE_JSON: &str = "probe.json";
pub const ALIGN_CSV: &str = "align.csv";
pub const OPEN_AU_CSV: &str = "open_au.csv";
/// A copy of the `--published` flashbench output.
pub const PUBLISHED_TXT: &str = "published.txt";
/// Version of probe.json's layout.
pub const PROBE_SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    Align,
    OpenAu,
}

impl ProbeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeKind::Align => "align",
            ProbeKind::OpenAu => "open-au",
        }
    }
}

/// One probe run (measured by mmcab, or a published flashbench output read back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub schema: u32,
    pub kind: ProbeKind,
    /// `mmcab 0.1.0`, or the post a published run comes from.
    pub source: String,
    /// The device as given (`/dev/mmcblk0`), or the published command.
    pub target: String,
    /// One line: the card (as `mmcab info` says) or what the target is.
    pub device: String,
    pub kernel_release: String,
    pub started_unix_s: f64,
    /// The scheduling the timing ran under (SCHED_FIFO, or why not).
    pub scheduling: String,
    pub align_options: Option<AlignOptions>,
    pub open_au_options: Option<OpenAuOptions>,
    pub align: Vec<AlignRow>,
    pub open_au: Vec<OpenAuRun>,
    /// open-au `--find`: the most units that fit on the device, when fewer than
    /// `--max-nr` did (the runs stopped there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units_fit: Option<u32>,
    pub geometry: Geometry,
}

#[derive(Serialize)]
struct AlignCsvRow {
    align_bytes: u64,
    pre_us: f64,
    on_us: f64,
    post_us: f64,
    diff_us: f64,
}

#[derive(Serialize)]
struct OpenAuCsvRow {
    nr: u32,
    random: bool,
    size_bytes: u64,
    mb_per_s: f64,
}

/// Write probe.json and the table's CSV into `dir` (created).
pub fn write(dir: &Path, record: &ProbeRecord) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = serde_json::to_string_pretty(record)?;
    let path = dir.join(PROBE_JSON);
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    let mut csv = csv::Writer::from_path(dir.join(match record.kind {
        ProbeKind::Align => ALIGN_CSV,
        ProbeKind::OpenAu => OPEN_AU_CSV,
    }))?;
    for r in &record.align {
        csv.serialize(AlignCsvRow {
            align_bytes: r.align,
            pre_us: r.pre_ns / 1e3,
            on_us: r.on_ns / 1e3,
            post_us: r.post_ns / 1e3,
            diff_us: r.diff_ns / 1e3,
        })?;
    }
    for run in &record.open_au {
        for p in &run.points {
            csv.serialize(OpenAuCsvRow {
                nr: run.nr,
                random: run.random,
                size_bytes: p.size,
                mb_per_s: p.mb_per_s,
            })?;
        }
    }
    csv.flush()?;
    Ok(())
}

/// Read probe.json back.
pub fn read(dir: &Path) -> Result<ProbeRecord> {
    let path = dir.join(PROBE_JSON);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let record: ProbeRecord = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a probe.json of mmcab", path.display()))?;
    if record.schema > PROBE_SCHEMA {
        bail!(
            "{}: schema {} is newer than this mmcab reads ({PROBE_SCHEMA}): use a newer mmcab",
            path.display(),
            record.schema
        );
    }
    Ok(record)
}

/// Whether `dir` holds a probe's results.
pub fn is_probe_dir(dir: &Path) -> bool {
    dir.join(PROBE_JSON).is_file()
}
