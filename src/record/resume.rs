//! Opening an interrupted results directory for `--resume` ([`resume`]: the runs to
//! skip, the torn ends cut off, the directory locked for this process) or only to look
//! at it ([`inspect`], `--resume --dry-run`: the same answer, nothing changed and no
//! lock taken).
//!
//! Rows are appended and fsynced run after run, so only the end of a file can be torn
//! (a power cut): a last line without its newline, or in runs.csv a last run whose
//! rows did not all get there. A run is finished when all its rows are in runs.csv;
//! rows of other files of runs that are not are dropped, so the run can be repeated.

use super::verify::{VerifyErrorRow, VERIFY_ERRORS_CSV};
use super::writer::{append_rows, read_rows, DirLock, ResultsWriter};
use super::{
    EvidenceRow, LatencyRow, Meta, RequestSizeRow, RunRow, SeriesRow, EVIDENCE_CSV, GROUP_JOB,
    LATENCY_CSV, META_JSON, REQUEST_SIZES_CSV, RUNS_CSV, SERIES_CSV,
};
use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// An interrupted results directory opened by [`resume`], locked for this process.
#[derive(Debug)]
pub struct Resumed {
    pub writer: ResultsWriter,
    pub meta: Meta,
    /// Runs already in `runs.csv`.
    pub finished: BTreeSet<u32>,
    /// Torn last lines that were cut off.
    pub torn: Vec<TornLine>,
}

/// What an interrupted results directory holds, as [`inspect`] reads it.
#[derive(Debug)]
pub struct Inspected {
    pub meta: Meta,
    /// Runs wholly in `runs.csv`.
    pub finished: BTreeSet<u32>,
}

/// A last line without its newline (a write torn by a crash), cut off on resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornLine {
    pub path: PathBuf,
    pub bytes: usize,
}

fn read_meta(dir: &Path) -> Result<Meta> {
    let meta_path = dir.join(META_JSON);
    let text = std::fs::read_to_string(&meta_path).with_context(|| {
        format!(
            "reading {}: --resume needs a results directory written by `mmcab run`",
            meta_path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", meta_path.display()))
}

/// Read an interrupted results directory without changing anything in it and without
/// its lock (`--resume --dry-run`): its meta.json and the runs a resume would skip.
pub fn inspect(dir: &Path) -> Result<Inspected> {
    let meta = read_meta(dir)?;
    let runs_path = dir.join(RUNS_CSV);
    let mut rows: Vec<RunRow> = Vec::new();
    if runs_path.exists() {
        let bytes = std::fs::read(&runs_path)
            .with_context(|| format!("reading {}", runs_path.display()))?;
        let whole = bytes.len() - torn_len(&bytes);
        rows = super::writer::parse_csv(&bytes[..whole], &runs_path)?;
    }
    let mut finished: BTreeSet<u32> = rows.iter().map(|r| r.run).collect();
    if let Some(partial) = partial_last_run(&rows) {
        finished.remove(&partial);
    }
    Ok(Inspected { meta, finished })
}

/// Open an interrupted results directory to finish it: lock it (another mmcab writing
/// it is refused), read its `meta.json` and the runs already in `runs.csv`. Torn ends
/// are cut off, and rows of runs that are not wholly in `runs.csv` are dropped, so the
/// run can be repeated cleanly.
pub fn resume(dir: &Path) -> Result<Resumed> {
    let lock = DirLock::exclusive(dir)?;
    let meta = read_meta(dir)?;
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
        writer: ResultsWriter::locked(dir, lock),
        meta,
        finished,
        torn,
    })
}

/// Bytes after the last newline: a last line torn by a crash.
fn torn_len(bytes: &[u8]) -> usize {
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return 0;
    }
    let keep = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    bytes.len() - keep
}

/// Cut a last line that has no newline (a write torn by a crash); say what was cut.
fn cut_torn_line(path: &Path) -> Result<Option<TornLine>> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let torn = torn_len(&bytes);
    if torn == 0 {
        return Ok(None);
    }
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.set_len((bytes.len() - torn) as u64)
        .and_then(|_| file.sync_all())
        .with_context(|| format!("truncating {}", path.display()))?;
    Ok(Some(TornLine {
        path: path.to_path_buf(),
        bytes: torn,
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

/// Rewrite a CSV file keeping only the rows of finished runs, and with this mmcab's
/// header when it was written before a column was added (`trace_lost_events` of
/// evidence.csv): the rows the resumed runs append have every column.
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
    let header_current = match kept.first() {
        Some(row) => first_line(path)? == header_of(row)?,
        // No rows: a header alone is written again, this mmcab's, with the next row.
        None => file_len(path) == 0,
    };
    if kept.len() == before && header_current {
        return Ok(());
    }
    let tmp = path.with_extension("csv.tmp");
    let _ = std::fs::remove_file(&tmp);
    append_rows(&tmp, &kept)?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

/// The first line of a file, without its newline (read alone, not the whole file).
fn first_line(path: &Path) -> Result<Vec<u8>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut line)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(line_one(&line).to_vec())
}

/// The header line this mmcab writes above rows like `row`, without its newline.
fn header_of<T: Serialize>(row: &T) -> Result<Vec<u8>> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.serialize(row).context("encoding CSV")?;
    let bytes = csv.into_inner().context("encoding CSV")?;
    Ok(line_one(&bytes).to_vec())
}

/// The bytes before the first newline.
fn line_one(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == b'\n').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::writer::rows_for;
    use crate::record::writer::tests::{key, result};
    use std::io::Write;

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
        drop(writer);
        let resumed = resume(&out).unwrap();
        assert_eq!(resumed.finished.into_iter().collect::<Vec<_>>(), [1]);
        assert_eq!(resumed.torn.len(), 1);
        assert!(resumed.torn[0].bytes > 0);
        let rows: Vec<RunRow> = read_rows(&out.join(RUNS_CSV)).unwrap();
        assert_eq!(rows.iter().map(|r| r.run).collect::<Vec<_>>(), [1, 1]);
        let series: Vec<SeriesRow> = read_rows(&out.join(SERIES_CSV)).unwrap();
        assert!(series.iter().all(|r| r.run == 1));
        // Whole runs are kept as they are.
        drop(resumed.writer);
        assert!(resume(&out).unwrap().torn.is_empty());
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
        drop(writer);
        let resumed = resume(&out).unwrap();
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

    /// A results directory recorded before evidence.csv's last column: resuming it
    /// rewrites the file with the whole header (its rows keep their values, the new
    /// column empty), so the rows the resumed runs append match it.
    #[test]
    fn resume_gives_an_older_evidence_csv_the_new_column() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let writer = ResultsWriter::create(&out, &Meta::default()).unwrap();
        writer.append_run(&key(1), &result(4), None).unwrap();
        drop(writer);
        let row = EvidenceRow {
            run: 1,
            trace: "lost 3 events".into(),
            trace_lost_events: Some(3),
            ..Default::default()
        };
        let mut text = String::from_utf8(header_of(&row).unwrap()).unwrap();
        // Written before trace_lost_events and err_stats (the last two columns).
        let old_header = text
            .strip_suffix(",trace_lost_events,err_stats")
            .unwrap()
            .to_string();
        text = format!("{old_header}\n");
        let mut line = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        line.serialize(&row).unwrap();
        let line = String::from_utf8(line.into_inner().unwrap()).unwrap();
        text.push_str(line.strip_suffix(",3,\n").unwrap());
        text.push('\n');
        std::fs::write(out.join(EVIDENCE_CSV), &text).unwrap();

        resume(&out).unwrap();
        append_rows(
            &out.join(EVIDENCE_CSV),
            &[EvidenceRow {
                run: 2,
                ..row.clone()
            }],
        )
        .unwrap();
        let rows: Vec<EvidenceRow> = read_rows(&out.join(EVIDENCE_CSV)).unwrap();
        let lost: Vec<_> = rows.iter().map(|r| (r.run, r.trace_lost_events)).collect();
        assert_eq!(lost, [(1, None), (2, Some(3))]);
        assert_eq!(rows[0].trace, "lost 3 events");
    }

    /// Every file of a directory and its bytes.
    fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                (path, bytes)
            })
            .collect();
        files.sort();
        files
    }

    /// `--resume --dry-run` reads what a resume would skip without changing a byte and
    /// without the lock (also while another mmcab holds it); a second resume is refused
    /// while the first holds the directory.
    #[test]
    fn inspect_changes_nothing_and_a_held_directory_refuses_a_second_resume() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let writer = ResultsWriter::create(&out, &Meta::default()).unwrap();
        writer.append_run(&key(1), &result(4), None).unwrap();
        let (_, series, _) = rows_for(&key(2), &result(4));
        append_rows(&out.join(SERIES_CSV), &series).unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(out.join(RUNS_CSV))
            .unwrap();
        f.write_all(b"2,L,bus8,seq-re").unwrap();
        let before = contents(&out);
        let seen = inspect(&out).unwrap();
        assert_eq!(seen.finished.into_iter().collect::<Vec<_>>(), [1]);
        assert_eq!(contents(&out), before, "inspect changed the directory");
        let err = resume(&out).unwrap_err().to_string();
        assert!(err.contains("being written by another mmcab"), "{err}");
        assert_eq!(contents(&out), before);
        drop(writer);
        let resumed = resume(&out).unwrap();
        assert_eq!(resumed.finished.into_iter().collect::<Vec<_>>(), [1]);
        assert_ne!(contents(&out), before, "resume cut the torn line");
    }
}
