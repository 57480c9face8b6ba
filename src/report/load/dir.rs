//! Reading a results directory written by `mmcab run` back into memory.

use crate::record::writer::{read_csv, read_rows};
use crate::record::{
    EvidenceRow, LatencyRow, Meta, RequestSizeRow, RunRow, SeriesRow, EVIDENCE_CSV, GROUP_JOB,
    LATENCY_CSV, META_JSON, REQUEST_SIZES_CSV, RUNS_CSV, SERIES_CSV,
};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Everything in one results directory.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    pub dir: PathBuf,
    pub meta: Meta,
    pub runs: Vec<RunRow>,
    /// Empty when `series.csv` is absent (older or interrupted runs).
    pub series: Vec<SeriesRow>,
    /// Empty when `latency.csv` is absent.
    pub latency: Vec<LatencyRow>,
    /// Kernel evidence; empty when `evidence.csv` is absent (mmcab 0.1, `--no-evidence`).
    pub evidence: Vec<EvidenceRow>,
    pub request_sizes: Vec<RequestSizeRow>,
}

impl ResultsDir {
    /// Measured rows (no warm-ups) that stand for a whole run x direction: the group row
    /// (job "all"), or the only job's row when a run has no group row for that direction.
    pub fn measured(&self) -> Vec<&RunRow> {
        let rows: Vec<&RunRow> = self.runs.iter().filter(|r| !r.warmup).collect();
        // Per run x direction: (group rows, all rows).
        let mut counts: HashMap<(u32, &str), (usize, usize)> = HashMap::new();
        for r in &rows {
            let c = counts.entry((r.run, r.direction.as_str())).or_default();
            c.0 += usize::from(r.job == GROUP_JOB);
            c.1 += 1;
        }
        rows.into_iter()
            .filter(|r| r.job == GROUP_JOB || counts[&(r.run, r.direction.as_str())] == (0, 1))
            .collect()
    }

    /// A directory `name` with `meta` and `runs` and no other files, for tests.
    #[cfg(test)]
    pub fn for_tests(name: &str, meta: Meta, runs: Vec<RunRow>) -> ResultsDir {
        ResultsDir {
            dir: PathBuf::from(name),
            meta,
            runs,
            series: Vec::new(),
            latency: Vec::new(),
            evidence: Vec::new(),
            request_sizes: Vec::new(),
        }
    }

    /// Name that stands for this directory in `mmcab compare`: its label, else its
    /// directory name.
    pub fn display_label(&self) -> String {
        if !self.meta.label.is_empty() {
            return self.meta.label.clone();
        }
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string())
    }
}

/// Load `meta.json`, `runs.csv` and, when present, `series.csv`, `latency.csv`,
/// `evidence.csv` and `request_sizes.csv`.
pub fn load(dir: &Path) -> Result<ResultsDir> {
    if !dir.is_dir() {
        bail!(
            "{} is not a directory: give the results directory that `mmcab run` wrote \
             (it holds runs.csv and meta.json)",
            dir.display()
        );
    }
    let meta_path = dir.join(META_JSON);
    let meta_text = std::fs::read_to_string(&meta_path).with_context(|| {
        format!(
            "cannot read {}: is {} a results directory of `mmcab run`?",
            meta_path.display(),
            dir.display()
        )
    })?;
    let meta: Meta = serde_json::from_str(&meta_text)
        .with_context(|| format!("{} is not valid meta.json", meta_path.display()))?;
    let runs: Vec<RunRow> = read_csv(&dir.join(RUNS_CSV))?;
    if runs.is_empty() {
        bail!(
            "{} has no runs yet: let `mmcab run` finish (or `mmcab run --resume {}`)",
            dir.join(RUNS_CSV).display(),
            dir.display()
        );
    }
    let loaded = ResultsDir {
        dir: dir.to_path_buf(),
        meta,
        runs,
        series: read_rows(&dir.join(SERIES_CSV))?,
        latency: read_rows(&dir.join(LATENCY_CSV))?,
        evidence: read_rows(&dir.join(EVIDENCE_CSV))?,
        request_sizes: read_rows(&dir.join(REQUEST_SIZES_CSV))?,
    };
    if loaded.measured().is_empty() {
        bail!(
            "{} has no measured runs (only warm-ups, warmup = true): finish it with \
             `mmcab run --resume {}`, or run more repetitions than warm-ups",
            dir.join(RUNS_CSV).display(),
            dir.display()
        );
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_the_loop_fixture() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let r = load(&dir).expect("fixture loads");
        assert!(r.runs.len() >= 20);
        assert!(!r.series.is_empty() && !r.latency.is_empty());
        assert_eq!(r.display_label(), "results-loop");
    }

    /// meta.json written by mmcab 0.1.0 on the emulated eMMC (device and per-config ios
    /// as untyped JSON then) reads into the typed Meta and writes back byte for byte.
    #[test]
    fn v0_1_meta_json_reads_typed_and_writes_back_unchanged() {
        for boot in ["boot1", "boot2"] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/fixtures/results-v0.1-emmc-{boot}"));
            let r = load(&dir).expect("fixture loads");
            let device = r.meta.device.as_ref().expect("device recorded");
            let id = device.identity.as_ref().expect("identity recorded");
            assert_eq!((id.manfid, id.serial), (0xaa, 0xdead_beef));
            assert_eq!(device.summary, r.meta.device_summary);
            let widths: Vec<u8> = r
                .meta
                .configs
                .iter()
                .map(|c| c.ios.as_ref().expect("ios recorded").bus_width_bits)
                .collect();
            assert_eq!(widths, [8, 4]);
            let written = serde_json::to_string_pretty(&r.meta).expect("encode");
            let text = std::fs::read_to_string(dir.join(META_JSON)).expect("meta.json");
            assert!(written == text, "{boot}: meta.json does not round-trip");
        }
    }

    /// A directory whose runs are all warm-ups (a run stopped during its warm-up
    /// rounds) is refused by name: nothing of it can be reported or compared.
    #[test]
    fn only_warmups_is_refused_naming_the_dir() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("warm");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::copy(src.join(META_JSON), dir.join(META_JSON)).expect("meta.json");
        let text = std::fs::read_to_string(src.join(RUNS_CSV)).expect("runs.csv");
        let mut lines = text.lines();
        let header = lines.next().expect("header");
        let warm = header
            .split(',')
            .position(|c| c == "warmup")
            .expect("warmup column");
        let mut out = vec![header.to_string()];
        for line in lines.take(5) {
            let mut cells: Vec<&str> = line.split(',').collect();
            cells[warm] = "true";
            out.push(cells.join(","));
        }
        std::fs::write(dir.join(RUNS_CSV), out.join("\n") + "\n").expect("write");
        let err = format!("{:#}", load(&dir).unwrap_err());
        assert!(
            err.contains(&dir.display().to_string())
                && err.contains("only warm-ups")
                && !err.contains('\n'),
            "{err}"
        );
    }

    #[test]
    fn missing_dir_names_the_path_and_the_fix() {
        let err = load(Path::new("/nonexistent/mmcab"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/mmcab") && err.contains("mmcab run"),
            "{err}"
        );
        let tmp = tempfile::tempdir().expect("tempdir");
        let err = format!("{:#}", load(tmp.path()).unwrap_err());
        assert!(err.contains("meta.json"), "{err}");
    }
}
