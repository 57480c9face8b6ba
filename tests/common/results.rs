//! Writable copies of results-dir fixtures for the report, gate and LAVA tests.
//!
//! ```ignore
//! use crate::common::results;
//! ```
use mmcab::record::RunRow;
use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of `tests/fixtures/<fixture>` (its files, not its report/) as `tmp/<name>`.
pub fn fixture_copy(tmp: &Path, fixture: &str, name: &str) -> PathBuf {
    let from = repo_root().join("tests/fixtures").join(fixture);
    let to = tmp.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    for entry in std::fs::read_dir(&from).expect("read fixture") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
    to
}

/// Rewrite `dir`'s runs.csv row by row.
pub fn edit_runs(dir: &Path, mut edit: impl FnMut(&mut RunRow) -> bool) {
    let path = dir.join("runs.csv");
    let mut reader = csv::Reader::from_path(&path).expect("runs.csv");
    let rows: Vec<RunRow> = reader
        .deserialize::<RunRow>()
        .map(|r| r.expect("row"))
        .collect();
    let mut writer = csv::Writer::from_path(&path).expect("write runs.csv");
    for mut row in rows {
        if edit(&mut row) {
            writer.serialize(&row).expect("row");
        }
    }
    writer.flush().expect("flush");
}

/// Multiply every throughput (MB/s, IOPS) of `dir` by `factor`: the same measurements,
/// as if the device had become that much faster (> 1) or slower (< 1).
pub fn scale_throughput(dir: &Path, factor: f64) {
    scale_config(dir, None, factor);
}

/// The same for one config's rows only (all with None).
pub fn scale_config(dir: &Path, config: Option<&str>, factor: f64) {
    edit_runs(dir, |row| {
        if config.is_none_or(|c| row.config == c) {
            row.mb_per_s *= factor;
            row.iops *= factor;
        }
        true
    });
}

/// Keep only the header of `dir`'s series.csv and latency.csv: the report then draws no
/// throughput or latency charts (the slow part of a debug build's report), and nothing
/// else changes.
pub fn without_series(dir: &Path) {
    for name in ["series.csv", "latency.csv"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).expect(name);
        let header = text.lines().next().unwrap_or_default();
        std::fs::write(&path, format!("{header}\n")).expect(name);
    }
}
