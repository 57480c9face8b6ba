//! Reports (`mmcab report`, `mmcab compare`): statistics of a results directory turned
//! into a 72-column mail text (returned for the command line to print), markdown, a tidy
//! summary.csv, JSON and SVG/PNG charts, all written into one output directory.
//!
//! Module per output: [`text`] (mail), [`markdown`], [`csv`], [`json`], [`chart`];
//! [`load`] reads a results dir, [`results`] and [`reference`](mod@reference) build the [`model`];
//! [`evidence`] is the kernel evidence beside the numbers (mail lines, markdown section).

pub mod chart;
pub mod compare;
pub mod csv;
pub mod evidence;
pub mod json;
pub mod load;
pub mod markdown;
pub mod model;
pub mod reference;
pub mod results;
pub mod text;

use anyhow::{Context, Result};
use chart::ChartInput;
use load::ResultsDir;
use model::Report;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Name of the report directory inside a results dir.
pub const REPORT_DIR: &str = "report";
pub const TEXT_FILE: &str = "report.txt";
pub const MARKDOWN_FILE: &str = "report.md";
pub const SUMMARY_CSV: &str = "summary.csv";
pub const JSON_FILE: &str = "report.json";

/// Series and latency rows of measured runs only (warm-ups dropped).
pub fn chart_input<'a>(report: &'a Report, dirs: &[&ResultsDir]) -> ChartInput<'a> {
    let mut input = ChartInput {
        report,
        series: Vec::new(),
        latency: Vec::new(),
    };
    for d in dirs {
        let warm: HashSet<u32> = d.runs.iter().filter(|r| r.warmup).map(|r| r.run).collect();
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
    /// The mail text (also in `dir`/report.txt).
    pub mail: String,
    /// Where the files went.
    pub dir: PathBuf,
    /// What differs between directories compared with `--force`.
    pub forced: Vec<String>,
    /// Problems that did not stop the report.
    pub warnings: Vec<String>,
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
    let report = input.report;
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

/// Output directory for a report of `dir`.
pub fn report_dir(dir: &Path) -> PathBuf {
    dir.join(REPORT_DIR)
}

/// `mmcab report PATH`: the configs of one results directory against `baseline` (default:
/// the plan's first), or the numbers of a reference CSV (results/reference/*.csv).
pub fn report(path: &Path, baseline: Option<&str>) -> Result<Written> {
    let (mail, dir) = if path.is_file() {
        let out = reference::default_out_dir(path);
        (reference::generate(path, &out, baseline)?, out)
    } else {
        let dir = load::load(path)?;
        let report = results::build(&dir, baseline)?;
        let out = report_dir(path);
        (write_outputs(&chart_input(&report, &[&dir]), &out)?, out)
    };
    Ok(Written {
        mail,
        dir,
        forced: Vec::new(),
        warnings: warnings(),
    })
}

/// `mmcab compare DIR_A DIR_B ...`: labelled results directories against the first;
/// `force` compares different devices or plans (the differences are returned).
pub fn compare(paths: &[PathBuf], force: bool) -> Result<Written> {
    let dirs = paths
        .iter()
        .map(|d| load::load(d))
        .collect::<Result<Vec<_>>>()?;
    let (report, renamed) = compare::build(&dirs, force)?;
    let out = compare::out_dir(&dirs);
    let refs: Vec<&ResultsDir> = renamed.iter().collect();
    let mail = write_outputs(&chart_input(&report, &refs), &out)?;
    Ok(Written {
        mail,
        dir: out,
        forced: report.notes.clone(),
        warnings: warnings(),
    })
}

/// Problems met while writing charts.
fn warnings() -> Vec<String> {
    chart::font_warning()
        .into_iter()
        .map(String::from)
        .collect()
}
