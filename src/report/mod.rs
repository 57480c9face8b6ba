//! Reports (`mmcab report`, `mmcab compare`): statistics of a results directory turned
//! into a 72-column mail text (returned for the command line to print), markdown, a tidy
//! summary.csv, JSON and SVG/PNG charts, all written into one output directory.
//!
//! By concept, each depending only on those before it:
//! - [`model`]: the report as data (blocks of rows, verdicts, header, setup, kernel
//!   evidence, a probe's table), and the adjustment of its p-values together
//!   ([`model::correction`]);
//! - [`load`]: reading a results directory and building the model from it, from a
//!   reference CSV or a probe's record, with its setup, host and kernel evidence;
//! - [`render`]: the model in words: mail text, markdown, CSV, JSON and charts;
//! - [`across`]: results directories compared as boots ([`across::compare`]), their
//!   changes tested with boots as the unit, a board's stored boot-to-boot spread
//!   ([`across::calibration`]);
//! - [`ci`]: the model's verdicts as a CI pass/fail ([`ci::gate`]), baselines per
//!   device identity ([`ci::baseline`]), LAVA test-case signals ([`ci::lava`]).
//!
//! [`files`] names the files a report writes and where; [`probe_report`] writes the report
//! of a probe (`mmcab probe`; its model [`model::probe`], from [`load::probe`]). This
//! module runs the commands: load, build, render, write.

pub mod across;
pub mod ci;
pub mod files;
pub mod load;
pub mod model;
pub mod probe_report;
pub mod render;

use crate::stats::multiple::Correction;
use across::calibration::{self, Calibration};
use across::compare::{self, Sides};
use across::host;
use anyhow::{Context, Result};
use files::{
    report_dir, JSON_FILE, MARKDOWN_FILE, PROBE_FILES, RESULTS_FILES, SUMMARY_CSV, TEXT_FILE,
};
use load::dir::ResultsDir;
use load::{reference, results};
use model::{correction, Note, Report};
use render::chart::{self, ChartInput};
use render::{csv, json, markdown, text};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// runs.csv, series and latency rows of measured runs only (warm-ups dropped).
pub fn chart_input<'a>(report: &'a Report, dirs: &[&ResultsDir]) -> ChartInput<'a> {
    let mut input = ChartInput {
        report,
        runs: Vec::new(),
        series: Vec::new(),
        latency: Vec::new(),
    };
    for d in dirs {
        let warm: HashSet<u32> = d.runs.iter().filter(|r| r.warmup).map(|r| r.run).collect();
        input
            .runs
            .extend(d.runs.iter().filter(|r| !r.warmup).cloned());
        input
            .series
            .extend(d.series.iter().filter(|s| !warm.contains(&s.run)).cloned());
        input
            .latency
            .extend(d.latency.iter().filter(|l| !warm.contains(&l.run)).cloned());
    }
    input
}

/// Chart files of an earlier report in `out` (so a re-run leaves no stale chart).
fn remove_old_charts(out: &Path) -> Result<()> {
    for entry in std::fs::read_dir(out).with_context(|| format!("cannot list {}", out.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ours = [
            "bars-",
            "throughput-",
            "latency-cdf-",
            "sweep-",
            "request-sizes",
        ]
        .iter()
        .any(|p| name.starts_with(p))
            && (name.ends_with(".svg") || name.ends_with(".png"));
        if ours {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove old chart {}", path.display()))?;
        }
    }
    Ok(())
}

/// A report written to disk.
#[derive(Debug, Clone)]
pub struct Written {
    /// The report model every file was rendered from (for gates, LAVA and `--json`);
    /// None for a probe's report (a table, nothing to gate).
    pub report: Option<Report>,
    /// The mail text (also in `dir`/report.txt).
    pub mail: String,
    /// Where the files went.
    pub dir: PathBuf,
    /// What differs between directories compared with `--force`.
    pub forced: Vec<String>,
    /// Problems that did not stop the report.
    pub warnings: Vec<String>,
    /// What was written there, for the user.
    pub files: &'static str,
}

/// Read a reference CSV and write its report into `out`; returns the mail text.
fn reference_report(csv: &Path, out: &Path, baseline: Option<&str>) -> Result<(String, Report)> {
    let rows = reference::read(csv)?;
    let report = reference::build(&rows, baseline)?;
    let input = ChartInput {
        report: &report,
        runs: Vec::new(),
        series: Vec::new(),
        latency: Vec::new(),
    };
    let mail = write_outputs(&input, out)?;
    Ok((mail, report))
}

/// Write every output into `out`; returns the mail text.
pub fn write_outputs(input: &ChartInput, out: &Path) -> Result<String> {
    std::fs::create_dir_all(out).with_context(|| {
        format!(
            "cannot create {}: is the results dir writable? (copy it elsewhere if not)",
            out.display()
        )
    })?;
    remove_old_charts(out)?;
    // Why a chart is missing belongs to the report's notes.
    let mut report = input.report.clone();
    report
        .notes
        .extend(chart::throughput_notes(input).into_iter().map(Note::Chart));
    let report = &report;
    let mail = text::render(report);
    let charts = chart::render_all(input, out)?;
    let pngs: Vec<String> = charts
        .iter()
        .filter(|c| c.ends_with(".png"))
        .cloned()
        .collect();
    let files: [(&str, String); 4] = [
        (TEXT_FILE, mail.clone()),
        (MARKDOWN_FILE, markdown::render(report, &pngs)),
        (SUMMARY_CSV, csv::render(report)?),
        (JSON_FILE, json::render(report)?),
    ];
    for (name, body) in files {
        let path = out.join(name);
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(mail)
}

/// `mmcab report PATH`: the configs of one results directory against `baseline` (default:
/// the plan's first), the numbers of a reference CSV (results/reference/*.csv), a
/// probe's directory (`mmcab probe`), or published flashbench output (a text file).
pub fn report(path: &Path, baseline: Option<&str>, correction: Correction) -> Result<Written> {
    let (mail, dir, files, report) = if path.is_file() && probe_report::is_flashbench_text(path) {
        let (mail, dir) = probe_report::report_published(path)?;
        (mail, dir, PROBE_FILES, None)
    } else if path.is_file() {
        let out = files::default_out_dir(path);
        let (mail, report) = reference_report(path, &out, baseline)?;
        (mail, out, RESULTS_FILES, Some(report))
    } else if crate::probe::record::is_probe_dir(path) {
        (
            probe_report::report_dir(path)?,
            path.to_path_buf(),
            PROBE_FILES,
            None,
        )
    } else {
        let dir = load::dir::load(path)?;
        let mut report = results::build(&dir, baseline)?;
        correction::apply(&mut report, correction);
        let out = report_dir(path);
        let mail = write_outputs(&chart_input(&report, &[&dir]), &out)?;
        (mail, out, RESULTS_FILES, Some(report))
    };
    Ok(Written {
        report,
        mail,
        dir,
        forced: Vec::new(),
        warnings: warnings(),
        files,
    })
}

/// What `mmcab compare` was asked.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// The baseline's boots (`BASE_DIR...`), or with an empty `new`, every directory
    /// of the form `compare A B [C ...]` (each its own side of one boot).
    pub base: Vec<PathBuf>,
    /// `--vs NEW_DIR...`.
    pub new: Vec<PathBuf>,
    /// Compare different devices or plans (the differences are returned).
    pub force: bool,
    pub correction: Correction,
    /// `--calibration FILE` for sides of one boot.
    pub calibration: Option<PathBuf>,
    /// Where `mmcab calibrate` stores calibrations (looked up by device and plan).
    pub calibration_store: Option<PathBuf>,
    /// Where the report goes (default: the first baseline dir's report directory).
    pub out: Option<PathBuf>,
}

/// `mmcab compare`: results directories as boots (see [`compare`](mod@compare)).
pub fn compare(opts: &CompareOptions) -> Result<Written> {
    let load_all = |paths: &[PathBuf]| -> Result<Vec<_>> {
        paths.iter().map(|d| load::dir::load(d)).collect()
    };
    let sides = if opts.new.is_empty() {
        Sides::each_dir(load_all(&opts.base)?)
    } else {
        Sides::two(load_all(&opts.base)?, load_all(&opts.new)?)
    };
    let mut warned = warnings();
    // Other drivers or driver parameters are what an A/B of a driver is: said, not refused.
    warned.extend(host::warnings(&sides));
    // Only a pair of single boots uses a calibration.
    let single = |side: usize| sides.of(side).count() == 1;
    let wanted = single(0) && (1..sides.names.len()).any(single);
    let calibration: Option<(PathBuf, Calibration)> = if wanted {
        calibration::find(
            &sides.dirs[0],
            opts.calibration.as_deref(),
            opts.calibration_store.as_deref(),
        )?
    } else {
        if let Some(path) = &opts.calibration {
            warned.push(format!(
                "calibration {} not used: it stands in only for sides of one boot",
                path.display()
            ));
        }
        None
    };
    let lookup = |c: &str, w: &str, d: &str, m: &str| {
        calibration
            .as_ref()
            .and_then(|(_, cal)| cal.lookup(c, w, d, m))
    };
    let (mut report, renamed) = compare::build(
        &sides,
        opts.force,
        calibration
            .as_ref()
            .map(|_| &lookup as compare::CalibrationLookup),
    )?;
    if let (Some(boots), Some((path, cal))) = (report.boots.as_mut(), &calibration) {
        boots.calibration = Some(cal.describe(path));
        report.header.calibration = Some(cal.describe(path));
    }
    correction::apply(&mut report, opts.correction);
    let out = opts.out.clone().unwrap_or_else(|| compare::out_dir(&sides));
    let refs: Vec<&ResultsDir> = renamed.iter().collect();
    let mail = write_outputs(&chart_input(&report, &refs), &out)?;
    Ok(Written {
        mail,
        dir: out,
        forced: report
            .notes
            .iter()
            .map(render::wording::note_text)
            .collect(),
        warnings: warned,
        files: RESULTS_FILES,
        report: Some(report),
    })
}

/// `mmcab calibrate DIR...`: the boot-to-boot spread of A/A boots, written to `out`, or
/// into `store` under the name of the device and plan. Returns where it went.
pub fn calibrate(
    dirs: &[PathBuf],
    out: Option<&Path>,
    store: Option<&Path>,
) -> Result<(PathBuf, Calibration)> {
    let loaded = dirs
        .iter()
        .map(|d| load::dir::load(d))
        .collect::<Result<Vec<_>>>()?;
    let cal = calibration::build(&loaded)?;
    let path = match (out, store) {
        (Some(out), _) => out.to_path_buf(),
        (None, Some(store)) => store.join(calibration::file_name(&loaded[0])),
        (None, None) => anyhow::bail!(
            "no place to store the calibration: give --out FILE (or set HOME or \
             MMCAB_CALIBRATION_DIR)"
        ),
    };
    calibration::save(&cal, &path)?;
    Ok((path, cal))
}

/// Problems met while writing charts.
fn warnings() -> Vec<String> {
    chart::font_warning()
        .into_iter()
        .map(String::from)
        .collect()
}
