//! The mail text: plain ASCII, at most 72 columns, ready to paste into a linux-mmc mail.
//! Only headline blocks (see `results.rs`) are shown; every line is checked for width.

use super::columns::{ascii, cut, wrap, NAME_COLUMNS};
use super::numbers::{format_value, warning_text};
use crate::report::model::{Block, ConfigRow, Report};
use crate::report::render::{header, wording};

/// Widest config column of the measured table (the other columns take 38).
const MAX_NAME_COLUMNS: usize = 34;

/// "A" for the report's baseline, else the name of the config compared with.
fn versus(report: &Report, row: &ConfigRow) -> String {
    match row.baseline.as_deref() {
        Some(b) if b != report.baseline => ascii(b),
        _ => "A".to_string(),
    }
}

fn block_text(out: &mut String, report: &Report, block: &Block) {
    let better = if block.metric.higher_is_better() {
        "higher is better"
    } else {
        "lower is better"
    };
    wrap(
        out,
        0,
        2,
        &ascii(&format!(
            "{}: {} ({better})",
            wording::block_title(block),
            block.metric.unit()
        )),
    );
    // Measured blocks only: published values are rendered by `published_tables`.
    let name_w = block
        .rows
        .iter()
        .map(|r| r.config.len() + 4)
        .max()
        .unwrap_or(0)
        .clamp(NAME_COLUMNS, MAX_NAME_COLUMNS);
    if report.boots.as_ref().is_some_and(|b| b.several()) {
        crate::report::render::text_boots::table(out, report, block, name_w);
    } else {
        runs_table(out, report, block, name_w);
    }
    for row in &block.rows {
        let base = row
            .baseline
            .as_deref()
            .and_then(|b| block.rows.iter().find(|r| r.config == b));
        if let Some(line) = wording::change_line(row, &versus(report, row), base) {
            wrap(out, 2, 4, &ascii(&line));
        }
    }
    for row in &block.rows {
        for w in &row.warnings {
            wrap(
                out,
                2,
                4,
                &format!("! {}: {}", ascii(&row.config), warning_text(w)),
            );
        }
    }
    super::evidence::mail_lines(out, report, &block.workload, block.direction);
}

/// One row per config: mean, 95% CI half-width, CV and n of its runs.
fn runs_table(out: &mut String, report: &Report, block: &Block, name_w: usize) {
    out.push_str(&format!(
        "  {:<name_w$} {:>11} {:>11} {:>6} {:>4}\n",
        "config", "mean", "95% CI +-", "cv%", "n",
    ));
    for row in &block.rows {
        let mut name = cut(&ascii(&row.config), name_w);
        if report.is_baseline(&row.config) {
            name = cut(&format!("{} (A)", ascii(&row.config)), name_w);
        }
        let s = &row.summary;
        let half = (s.ci_high - s.ci_low) / 2.0;
        let cv = if s.cv.is_nan() {
            "-".to_string()
        } else {
            format!("{:.1}", s.cv * 100.0)
        };
        out.push_str(&format!(
            "  {:<name_w$} {:>11} {:>11} {:>6} {:>4}\n",
            name,
            format_value(s.mean),
            format_value(half),
            cv,
            s.n,
        ));
    }
}

/// The whole mail text.
pub fn render(report: &Report) -> String {
    if let Some(probe) = &report.probe {
        return super::probe_text::render(report, probe);
    }
    let mut out = String::new();
    wrap(&mut out, 0, 2, &ascii(&header::title(&report.title)));
    for (key, value) in header::lines(&report.header) {
        wrap(&mut out, 0, 8, &ascii(&format!("{key}: {value}")));
    }
    for section in &super::setup::sections(report.setup.as_ref()) {
        wrap(&mut out, 0, 2, &ascii(&section.title));
        for line in &section.lines {
            wrap(&mut out, 2, 4, &ascii(line));
        }
    }
    let method = format!(
        "A = {}{}. {}",
        report.baseline,
        if report.published { "" } else { " (baseline)" },
        wording::method(report)
    );
    wrap(&mut out, 0, 0, &ascii(&method));
    if report.published {
        crate::report::render::text_published::tables(&mut out, report);
    } else {
        for block in report.blocks.iter().filter(|b| b.headline) {
            out.push('\n');
            block_text(&mut out, report, block);
        }
    }
    super::mmc_test::mail(&mut out, report);
    let notes: Vec<String> = wording::notes(report)
        .into_iter()
        .chain(report.notes.iter().map(wording::note_text))
        .collect();
    if !notes.is_empty() {
        out.push('\n');
        for note in &notes {
            wrap(&mut out, 0, 2, &ascii(&format!("- {note}")));
        }
    }
    out
}
