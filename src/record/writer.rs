//! Writing the results directory: rows appended and fsynced after every run, so that a
//! crash, SIGKILL or power cut loses at most the run in progress; `meta.json` replaced
//! atomically (write, fsync, rename). The directory is locked while a process writes
//! it ([`DirLock`]); opening one to resume is [`super::resume`].

use super::run_key::RunKey;
use super::verify::VERIFY_ERRORS_CSV;
use super::{
    LatencyRow, Meta, RunRow, SeriesRow, EVIDENCE_CSV, GROUP_JOB, LATENCY_CSV, META_JSON,
    REQUEST_SIZES_CSV, RUNS_CSV, SERIES_CSV,
};
use crate::evidence::RunEvidence;
use crate::workload::result::{DirectionResult, WorkloadResult};
use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct ResultsWriter {
    dir: PathBuf,
    /// The exclusive lock on the directory while this process writes it.
    _lock: DirLock,
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
        let writer = ResultsWriter::locked(dir, DirLock::exclusive(dir)?);
        writer.write_meta(meta)?;
        Ok(writer)
    }

    /// The writer of `dir`, whose lock this process holds.
    pub(super) fn locked(dir: &Path, lock: DirLock) -> ResultsWriter {
        ResultsWriter {
            dir: dir.to_path_buf(),
            _lock: lock,
        }
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

/// An flock(2) on a results directory, held while a process writes it (a run or a
/// resume): a second mmcab on the same directory is refused instead of mixing rows.
/// Released when the process ends, also by SIGKILL. On a filesystem without flock
/// (some network and 9p mounts) the directory is written unlocked.
#[derive(Debug)]
pub struct DirLock(#[allow(dead_code)] Option<nix::fcntl::Flock<File>>);

impl DirLock {
    pub fn exclusive(dir: &Path) -> Result<DirLock> {
        let file = File::open(dir)
            .with_context(|| format!("opening results directory {}", dir.display()))?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(DirLock(Some(lock))),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => bail!(
                "results directory {} is being written by another mmcab: wait for it to end, \
                 or pick another --out",
                dir.display()
            ),
            // ENOLCK, EOPNOTSUPP...: no locks on this filesystem.
            Err(_) => Ok(DirLock(None)),
        }
    }
}

/// Read every row of a CSV file of the results directory (the file must exist); errors
/// name the file and the line. Used by `--resume` and by the report alike.
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    rows_of(reader, path)
}

/// The rows of CSV text read from `path` (named in errors).
pub fn parse_csv<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<Vec<T>> {
    rows_of(csv::Reader::from_reader(bytes), path)
}

fn rows_of<T: DeserializeOwned, R: std::io::Read>(
    mut reader: csv::Reader<R>,
    path: &Path,
) -> Result<Vec<T>> {
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

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing directory {}", dir.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::workload::result::{Direction, JobResult, LatencySummary};

    pub(crate) fn result(mb: u64) -> WorkloadResult {
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
            engine_fallbacks: Vec::new(),
        }
    }

    pub(crate) fn key(run: u32) -> RunKey {
        RunKey {
            run,
            label: "L".into(),
            config: "bus8".into(),
            workload: "seq-read".into(),
            repetition: run,
            warmup: false,
        }
    }

    /// meta.json says what an engine did without, and only then: older results
    /// directories (no key) read back as "nothing".
    #[test]
    fn meta_records_engine_fallbacks_only_when_there_are_some() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let writer = ResultsWriter::create(&out, &Meta::default()).unwrap();
        let text = std::fs::read_to_string(out.join(META_JSON)).unwrap();
        assert!(!text.contains("engine_fallbacks"), "{text}");
        let back: Meta = serde_json::from_str(&text).unwrap();
        assert!(back.engine_fallbacks.is_empty());
        let meta = Meta {
            engine_fallbacks: vec!["io_uring ring without registered buffers".into()],
            ..Meta::default()
        };
        writer.write_meta(&meta).unwrap();
        let text = std::fs::read_to_string(out.join(META_JSON)).unwrap();
        let back: Meta = serde_json::from_str(&text).unwrap();
        assert_eq!(back.engine_fallbacks, meta.engine_fallbacks);
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
}
