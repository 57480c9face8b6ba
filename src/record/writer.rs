//! Writing the results directory: rows appended and fsynced after every run, so that a
//! crash, SIGKILL or power cut loses at most the run in progress; `meta.json` replaced
//! atomically (write, fsync, rename).

use super::verify::{VerifyErrorRow, VERIFY_ERRORS_CSV};
use super::{
    EvidenceRow, LatencyRow, Meta, RequestSizeRow, RunRow, SeriesRow, EVIDENCE_CSV, GROUP_JOB,
    LATENCY_CSV, META_JSON, REQUEST_SIZES_CSV, RUNS_CSV, SERIES_CSV,
};
use crate::evidence::RunEvidence;
use crate::workload::result::{DirectionResult, WorkloadResult};
use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where one run sits in the matrix: what the rows of `runs.csv` are keyed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    pub run: u32,
    pub label: String,
    pub config: String,
    pub workload: String,
    pub repetition: u32,
    pub warmup: bool,
}

#[derive(Debug)]
pub struct ResultsWriter {
    dir: PathBuf,
}

/// An interrupted results directory opened by [`ResultsWriter::resume`].
#[derive(Debug)]
pub struct Resumed {
    pub writer: ResultsWriter,
    pub meta: Meta,
    /// Runs already in `runs.csv`.
    pub finished: BTreeSet<u32>,
    /// Torn last lines that were cut off.
    pub torn: Vec<TornLine>,
}

/// A last line without its newline (a write torn by a crash), cut off on resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornLine {
    pub path: PathBuf,
    pub bytes: usize,
}

impl ResultsWriter {
    /// Create a new results directory (it must not exist, or be empty) and write `meta.json`.
    pub fn create(dir: &Path, meta: &Meta) -> Result<ResultsWriter> {
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir)
                .with_context(|| format!("reading results directory {}", dir.display()))?;
            if entries.next().is_some() {
                bail!(
                    "results directory {} already exists and is not empty: pick another --out, \
                     or finish it with --resume {}",
                    dir.display(),
                    dir.display()
                );
            }
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating results directory {}", dir.display()))?;
        let writer = ResultsWriter {
            dir: dir.to_path_buf(),
        };
        writer.write_meta(meta)?;
        Ok(writer)
    }

    /// Open an interrupted results directory: its `meta.json` and the runs already in
    /// `runs.csv`. A torn last line is cut off, and series/latency rows of runs that did
    /// not reach `runs.csv` are dropped, so the run can be repeated cleanly.
    pub fn resume(dir: &Path) -> Result<Resumed> {
        let meta_path = dir.join(META_JSON);
        let text = std::fs::read_to_string(&meta_path).with_context(|| {
            format!(
                "reading {}: --resume needs a results directory written by `mmcab run`",
                meta_path.display()
            )
        })?;
        let meta: Meta = serde_json::from_str(&text)
            .with_context(|| format!("parsing {}", meta_path.display()))?;
        let mut torn = Vec::new();
        let runs_path = dir.join(RUNS_CSV);
        torn.extend(cut_torn_line(&runs_path)?);
        let rows: Vec<RunRow> = read_rows(&runs_path)?;
        let mut finished: BTreeSet<u32> = rows.iter().map(|r| r.run).collect();
        if let Some(partial) = partial_last_run(&rows) {
            // Its rows are dropped with the others of runs that did not finish.
            finished.remove(&partial);
            let before = file_len(&runs_path);
            keep_runs::<RunRow>(&runs_path, &finished, |r| r.run)?;
            torn.push(TornLine {
                path: runs_path.clone(),
                bytes: before.saturating_sub(file_len(&runs_path)) as usize,
            });
        }
        for name in [
            SERIES_CSV,
            LATENCY_CSV,
            VERIFY_ERRORS_CSV,
            EVIDENCE_CSV,
            REQUEST_SIZES_CSV,
        ] {
            torn.extend(cut_torn_line(&dir.join(name))?);
        }
        keep_runs::<SeriesRow>(&dir.join(SERIES_CSV), &finished, |r| r.run)?;
        keep_runs::<LatencyRow>(&dir.join(LATENCY_CSV), &finished, |r| r.run)?;
        keep_runs::<EvidenceRow>(&dir.join(EVIDENCE_CSV), &finished, |r| r.run)?;
        keep_runs::<RequestSizeRow>(&dir.join(REQUEST_SIZES_CSV), &finished, |r| r.run)?;
        keep_runs::<VerifyErrorRow>(&dir.join(VERIFY_ERRORS_CSV), &finished, |r| r.run)?;
        Ok(Resumed {
            writer: ResultsWriter {
                dir: dir.to_path_buf(),
            },
            meta,
            finished,
            torn,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Replace `meta.json` atomically.
    pub fn write_meta(&self, meta: &Meta) -> Result<()> {
        let json = serde_json::to_string_pretty(meta).context("encoding meta.json")?;
        self.write_file_atomic(META_JSON, json.as_bytes())
    }

    /// Write (or replace) a small file in the results directory atomically.
    pub fn write_file_atomic(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let mut file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        file.write_all(bytes)
            .and_then(|_| file.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("renaming to {}", path.display()))?;
        sync_dir(&self.dir)
    }

    /// Record one finished run: series, latency and evidence first, runs.csv last, each
    /// fsynced, so a run is in runs.csv only when all its rows are on disk.
    pub fn append_run(
        &self,
        key: &RunKey,
        result: &WorkloadResult,
        evidence: Option<&RunEvidence>,
    ) -> Result<()> {
        let (runs, series, latency) = rows_for(key, result);
        append_rows(&self.dir.join(SERIES_CSV), &series)?;
        append_rows(&self.dir.join(LATENCY_CSV), &latency)?;
        let bad = super::verify::rows_for(key.run, &key.config, result);
        if !bad.is_empty() {
            append_rows(&self.dir.join(VERIFY_ERRORS_CSV), &bad)?;
        }
        if let Some(evidence) = evidence {
            let (rows, sizes) = super::evidence::rows_for(key, evidence);
            append_rows(&self.dir.join(EVIDENCE_CSV), &rows)?;
            if !sizes.is_empty() {
                append_rows(&self.dir.join(REQUEST_SIZES_CSV), &sizes)?;
            }
        }
        append_rows(&self.dir.join(RUNS_CSV), &runs)
    }
}

/// The rows of one run: per job and direction, then the group ([`GROUP_JOB`]) rows.
pub fn rows_for(
    key: &RunKey,
    result: &WorkloadResult,
) -> (Vec<RunRow>, Vec<SeriesRow>, Vec<LatencyRow>) {
    let mut runs = Vec::new();
    let mut series = Vec::new();
    let mut latency = Vec::new();
    let mut add = |job: &str, d: &DirectionResult, verify_errors: u64| {
        let direction = d.direction;
        runs.push(RunRow {
            run: key.run,
            label: key.label.clone(),
            config: key.config.clone(),
            workload: key.workload.clone(),
            repetition: key.repetition,
            warmup: key.warmup,
            started_unix_s: result.started_unix_s,
            job: job.to_string(),
            direction,
            bytes: d.bytes,
            ops: d.ops,
            seconds: d.seconds,
            mb_per_s: d.mb_per_s(),
            iops: d.iops(),
            lat_min_us: d.latency.min_us,
            lat_mean_us: d.latency.mean_us,
            lat_p50_us: d.latency.p50_us,
            lat_p90_us: d.latency.p90_us,
            lat_p99_us: d.latency.p99_us,
            lat_p99_9_us: d.latency.p99_9_us,
            lat_max_us: d.latency.max_us,
            verify_errors,
        });
        let row = |second: u32, bin: Option<(f64, f64)>, mb_per_s: f64| SeriesRow {
            run: key.run,
            config: key.config.clone(),
            workload: key.workload.clone(),
            job: job.to_string(),
            direction,
            second,
            mb_per_s,
            start_s: bin.map(|b| b.0),
            width_s: bin.map(|b| b.1),
        };
        let bins = d.throughput_bins();
        if bins.is_empty() {
            // A result without the fine counts: whole seconds, as mmcab 0.1 recorded.
            for (second, bytes) in d.bytes_per_second.iter().enumerate() {
                series.push(row(second as u32, None, *bytes as f64 / 1e6));
            }
        }
        for b in bins {
            series.push(row(
                b.start_s as u32,
                Some((b.start_s, b.width_s)),
                b.bytes as f64 / b.width_s / 1e6,
            ));
        }
        for (percentile, latency_us) in &d.latency_cdf {
            latency.push(LatencyRow {
                run: key.run,
                config: key.config.clone(),
                workload: key.workload.clone(),
                job: job.to_string(),
                direction,
                percentile: *percentile,
                latency_us: *latency_us,
            });
        }
    };
    let mut verify_total = 0;
    for job in &result.jobs {
        let bad = job.verify.as_ref().map(|v| v.bad_blocks).unwrap_or(0);
        verify_total += bad;
        for d in &job.directions {
            add(&job.job, d, bad);
        }
    }
    for d in &result.group {
        add(GROUP_JOB, d, verify_total);
    }
    (runs, series, latency)
}

/// Append rows to a CSV file (header when the file is new) in one write, then fsync.
pub fn append_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {} for appending", path.display()))?;
    let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
    let mut csv = csv::WriterBuilder::new()
        .has_headers(empty)
        .from_writer(Vec::new());
    for row in rows {
        csv.serialize(row)
            .with_context(|| format!("encoding a row of {}", path.display()))?;
    }
    let bytes = csv.into_inner().context("encoding CSV")?;
    file.write_all(&bytes)
        .and_then(|_| file.sync_data())
        .with_context(|| format!("appending to {}", path.display()))
}

/// Read every row of a CSV file of the results directory (the file must exist); errors
/// name the file and the line. Used by `--resume` and by the report alike.
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut rows = Vec::new();
    for (i, row) in reader.deserialize().enumerate() {
        let row: T = row.with_context(|| {
            format!(
                "{}: line {} does not match the schema of src/record/mod.rs \
                 (was it written by another mmcab version?)",
                path.display(),
                i + 2
            )
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Read every row of a CSV file; a missing file has none.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    if path.exists() {
        read_csv(path)
    } else {
        Ok(Vec::new())
    }
}

/// Cut a last line that has no newline (a write torn by a crash); say what was cut.
fn cut_torn_line(path: &Path) -> Result<Option<TornLine>> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(None);
    }
    let keep = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.set_len(keep as u64)
        .and_then(|_| file.sync_all())
        .with_context(|| format!("truncating {}", path.display()))?;
    Ok(Some(TornLine {
        path: path.to_path_buf(),
        bytes: bytes.len() - keep,
    }))
}

/// The last run of runs.csv when not all its rows reached the file (a write torn at a
/// line's end by a power cut): a run's group rows come last, one per direction its jobs
/// have. Files without any group row (mmcab 0.1) are taken as they are.
fn partial_last_run(rows: &[RunRow]) -> Option<u32> {
    let last = rows.last()?.run;
    if !rows.iter().any(|r| r.job == GROUP_JOB) {
        return None;
    }
    let of_last = || rows.iter().rev().take_while(|r| r.run == last);
    let directions: BTreeSet<_> = of_last().map(|r| r.direction).collect();
    let grouped: BTreeSet<_> = of_last()
        .filter(|r| r.job == GROUP_JOB)
        .map(|r| r.direction)
        .collect();
    (directions != grouped).then_some(last)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Rewrite a CSV file keeping only the rows of finished runs.
fn keep_runs<T: Serialize + DeserializeOwned>(
    path: &Path,
    finished: &BTreeSet<u32>,
    run_of: impl Fn(&T) -> u32,
) -> Result<()> {
    let rows: Vec<T> = read_rows(path)?;
    let before = rows.len();
    let kept: Vec<T> = rows
        .into_iter()
        .filter(|r| finished.contains(&run_of(r)))
        .collect();
    if kept.len() == before {
        return Ok(());
    }
    let tmp = path.with_extension("csv.tmp");
    let _ = std::fs::remove_file(&tmp);
    append_rows(&tmp, &kept)?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing directory {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{Direction, JobResult, LatencySummary};

    fn result(mb: u64) -> WorkloadResult {
        let d = DirectionResult {
            direction: Direction::Read,
            bytes: mb * 1_000_000,
            ops: mb * 1000,
            seconds: 2.0,
            latency: LatencySummary {
                min_us: 10.0,
                mean_us: 20.0,
                ..Default::default()
            },
            bytes_per_second: vec![mb * 500_000, mb * 500_000],
            bytes_per_bin: Vec::new(),
            start_s: 0.0,
            latency_cdf: vec![(50.0, 20.0), (99.0, 40.0)],
        };
        WorkloadResult {
            workload: "seq-read".into(),
            started_unix_s: 1.5,
            jobs: vec![JobResult {
                job: "read".into(),
                directions: vec![d.clone()],
                verify: None,
                in_group: true,
            }],
            group: vec![d],
            cpu_seconds: 0.5,
        }
    }

    fn key(run: u32) -> RunKey {
        RunKey {
            run,
            label: "L".into(),
            config: "bus8".into(),
            workload: "seq-read".into(),
            repetition: run,
            warmup: false,
        }
    }

    #[test]
    fn rows_are_appended_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let writer = ResultsWriter::create(&out, &Meta::default()).unwrap();
        writer.append_run(&key(1), &result(4), None).unwrap();
        writer.append_run(&key(2), &result(8), None).unwrap();
        let rows: Vec<RunRow> = read_rows(&out.join(RUNS_CSV)).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2].job, "read");
        assert_eq!(rows[3].job, GROUP_JOB);
        assert!((rows[3].mb_per_s - 4.0).abs() < 1e-9);
        assert!((rows[3].iops - 4000.0).abs() < 1e-9);
        let series: Vec<SeriesRow> = read_rows(&out.join(SERIES_CSV)).unwrap();
        assert_eq!(series.len(), 8);
        assert!((series[0].mb_per_s - 2.0).abs() < 1e-9);
        let text = std::fs::read_to_string(out.join(RUNS_CSV)).unwrap();
        assert_eq!(text.matches("run,label,config").count(), 1, "one header");
        assert!(ResultsWriter::create(&out, &Meta::default())
            .unwrap_err()
            .to_string()
            .contains("--resume"));
    }

    /// A power cut tore the append of run 2 at a line's end: its job row reached
    /// runs.csv, its group row did not. Run 2 is not taken as finished: its rows (and
    /// its series) are dropped and it runs again.
    #[test]
    fn resume_drops_a_run_whose_rows_did_not_all_reach_runs_csv() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let writer = ResultsWriter::create(&out, &Meta::default()).unwrap();
        writer.append_run(&key(1), &result(4), None).unwrap();
        writer.append_run(&key(2), &result(4), None).unwrap();
        let text = std::fs::read_to_string(out.join(RUNS_CSV)).unwrap();
        let without_group = text.trim_end().rsplit_once('\n').unwrap().0.len() + 1;
        let file = OpenOptions::new()
            .write(true)
            .open(out.join(RUNS_CSV))
            .unwrap();
        file.set_len(without_group as u64).unwrap();
        let resumed = ResultsWriter::resume(&out).unwrap();
        assert_eq!(resumed.finished.into_iter().collect::<Vec<_>>(), [1]);
        assert_eq!(resumed.torn.len(), 1);
        assert!(resumed.torn[0].bytes > 0);
        let rows: Vec<RunRow> = read_rows(&out.join(RUNS_CSV)).unwrap();
        assert_eq!(rows.iter().map(|r| r.run).collect::<Vec<_>>(), [1, 1]);
        let series: Vec<SeriesRow> = read_rows(&out.join(SERIES_CSV)).unwrap();
        assert!(series.iter().all(|r| r.run == 1));
        // Whole runs are kept as they are.
        assert!(ResultsWriter::resume(&out).unwrap().torn.is_empty());
    }

    #[test]
    fn resume_cuts_torn_lines_and_orphan_rows() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let meta = Meta {
            plan_name: "p".into(),
            ..Default::default()
        };
        let writer = ResultsWriter::create(&out, &meta).unwrap();
        writer.append_run(&key(1), &result(4), None).unwrap();
        // Run 2 reached series.csv and evidence.csv but not runs.csv; runs.csv has a torn
        // line.
        let (_, series, _) = rows_for(&key(2), &result(4));
        append_rows(&out.join(SERIES_CSV), &series).unwrap();
        let evidence = |run| EvidenceRow {
            run,
            trace: "ok".into(),
            ..Default::default()
        };
        append_rows(&out.join(EVIDENCE_CSV), &[evidence(1), evidence(2)]).unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(out.join(RUNS_CSV))
            .unwrap();
        f.write_all(b"2,L,bus8,seq-re").unwrap();
        let resumed = ResultsWriter::resume(&out).unwrap();
        assert_eq!(resumed.meta.plan_name, "p");
        assert_eq!(resumed.finished.into_iter().collect::<Vec<_>>(), vec![1]);
        assert_eq!(
            resumed.torn,
            vec![TornLine {
                path: out.join(RUNS_CSV),
                bytes: "2,L,bus8,seq-re".len()
            }]
        );
        let series: Vec<SeriesRow> = read_rows(&out.join(SERIES_CSV)).unwrap();
        assert!(series.iter().all(|r| r.run == 1));
        let evidence: Vec<EvidenceRow> = read_rows(&out.join(EVIDENCE_CSV)).unwrap();
        assert_eq!(evidence.iter().map(|r| r.run).collect::<Vec<_>>(), [1]);
        let rows: Vec<RunRow> = read_rows(&out.join(RUNS_CSV)).unwrap();
        assert_eq!(rows.len(), 2);
    }
}
