//! Tables of published single values in the mail text (reference CSVs): one per
//! metric, direction and sweep, or the metrics side by side for one config.

use super::columns::{ascii, name_cell, wrap, MAX_COLUMNS, NAME_COLUMNS};
use super::numbers::format_pct;
use crate::report::model::{Block, Metric, Report};
use crate::workload::result::Direction;

/// A published value as written in the source (shortest form, no added digits).
fn published_value(v: f64) -> String {
    format!("{v}")
}

/// Published single values: one table per metric, direction and sweep (first-seen order), workloads down, configs across (split when wider than 72 columns), and
/// the plain change B vs A when there are exactly two configs.
pub(super) fn tables(out: &mut String, report: &Report) {
    type Key<'a> = (
        &'a crate::report::model::Metric,
        Option<Direction>,
        &'a Option<String>,
    );
    let mut keys: Vec<Key> = Vec::new();
    for b in report.blocks.iter().filter(|b| b.headline) {
        let key = (&b.metric, b.direction, &b.sweep);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (metric, direction, sweep) in keys {
        let group: Vec<&Block> = report
            .blocks
            .iter()
            .filter(|b| {
                b.headline && &b.metric == metric && b.direction == direction && &b.sweep == sweep
            })
            .collect();
        let configs: Vec<&String> = report
            .configs
            .iter()
            .filter(|c| group.iter().any(|b| b.rows.iter().any(|r| &r.config == *c)))
            .collect();
        // Single-config tables with companion metrics in the same unit (flashbench -a:
        // pre, on, post and diff) show them side by side, as published.
        let companions: Vec<&Block> = report
            .blocks
            .iter()
            .filter(|b| {
                sweep.is_some()
                    && (b.headline || b.metric.unit() == metric.unit())
                    && b.direction == direction
                    && &b.sweep == sweep
            })
            .collect();
        if configs.len() == 1 && companions.len() > group.len() {
            metric_columns(out, &companions);
            continue;
        }
        published_grid(out, report, &group, &configs);
    }
}

/// One table of published values of one metric and direction: workloads down and
/// configs across (or transposed when that is narrower), with the change when the two
/// configs are the baseline and one other.
fn published_grid(out: &mut String, report: &Report, group: &[&Block], configs: &[&String]) {
    let first = group[0];
    let with_change = configs.len() == 2 && configs.iter().any(|c| **c == report.baseline);
    let cell = |b: &Block, c: &str| {
        b.rows
            .iter()
            .find(|r| r.config == c)
            .map_or("-".to_string(), |r| published_value(r.summary.mean))
    };
    // Workloads down and configs across, or transposed when that is narrower.
    let transpose = !with_change && configs.len() > group.len();
    let (corner, row_names, col_names): (&str, Vec<String>, Vec<String>) = if transpose {
        (
            "config",
            configs.iter().map(|c| ascii(c)).collect(),
            group.iter().map(|b| ascii(&b.workload)).collect(),
        )
    } else {
        (
            "workload",
            group.iter().map(|b| ascii(&b.workload)).collect(),
            configs.iter().map(|c| ascii(c)).collect(),
        )
    };
    let cells: Vec<Vec<String>> = if transpose {
        configs
            .iter()
            .map(|c| group.iter().map(|b| cell(b, c)).collect())
            .collect()
    } else {
        group
            .iter()
            .map(|b| {
                let mut row: Vec<String> = configs.iter().map(|c| cell(b, c)).collect();
                if with_change {
                    let change = b.rows.iter().find_map(|r| r.change);
                    row.push(change.map_or("-".into(), |c| format_pct(c.rel)));
                }
                row
            })
            .collect()
    };
    let mut col_names = col_names;
    if with_change {
        col_names.push("change".into());
    }
    grid(
        out,
        &ascii(&published_title(first)),
        corner,
        &row_names,
        &col_names,
        &cells,
    );
}

/// `MB/s, write (higher is better)`: the title of a table of published values.
fn published_title(first: &Block) -> String {
    let better = if first.metric.higher_is_better() {
        "higher"
    } else {
        "lower"
    };
    let dir = match first.direction {
        None => String::new(),
        Some(d) => format!(", {}", d.as_str()),
    };
    let metric = &first.metric;
    let what = if metric.named_by_unit() {
        metric.unit().to_string()
    } else {
        format!("{} [{}]", metric.key(), metric.unit())
    };
    format!("{what}{dir} ({better} is better)")
}

/// One config, several metrics of one unit: workloads down, metrics across, each named
/// by what is left after the words all metric names share (`align_pre_us` -> `pre`).
fn metric_columns(out: &mut String, blocks: &[&Block]) {
    let mut metrics: Vec<&Metric> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for b in blocks {
        if !metrics.contains(&&b.metric) {
            metrics.push(&b.metric);
        }
        if !workloads.contains(&b.workload.as_str()) {
            workloads.push(&b.workload);
        }
    }
    let words: Vec<Vec<&str>> = metrics
        .iter()
        .map(|m| m.key().split('_').collect())
        .collect();
    let shortest = words.iter().map(Vec::len).min().unwrap_or(0);
    let same_at = |i: usize| words.iter().all(|w| w[i] == words[0][i]);
    let same_from_end = |i: usize| {
        words
            .iter()
            .all(|w| w[w.len() - 1 - i] == words[0][words[0].len() - 1 - i])
    };
    let mut lead = 0;
    while lead + 1 < shortest && same_at(lead) {
        lead += 1;
    }
    let mut tail = 0;
    while lead + tail + 1 < shortest && same_from_end(tail) {
        tail += 1;
    }
    let cols: Vec<String> = words
        .iter()
        .map(|w| w[lead..w.len() - tail].join("_"))
        .collect();
    let cells: Vec<Vec<String>> = workloads
        .iter()
        .map(|w| {
            metrics
                .iter()
                .map(|m| {
                    blocks
                        .iter()
                        .find(|b| b.workload == *w && b.metric == **m)
                        .and_then(|b| b.rows.first())
                        .map_or("-".to_string(), |r| published_value(r.summary.mean))
                })
                .collect()
        })
        .collect();
    let first = blocks[0];
    let better = if first.metric.higher_is_better() {
        "higher"
    } else {
        "lower"
    };
    let config = first.rows.first().map_or("", |r| r.config.as_str());
    let title = format!(
        "{}: {} [{}], {}, {config} ({better} is better)",
        first.sweep.as_deref().unwrap_or(&first.workload),
        cols.join(", "),
        first.metric.unit(),
        first.direction_text()
    );
    let rows: Vec<String> = workloads.iter().map(|w| ascii(w)).collect();
    grid(out, &ascii(&title), "workload", &rows, &cols, &cells);
}

/// A table of strings, split into several tables when wider than 72 columns.
fn grid(
    out: &mut String,
    title: &str,
    corner: &str,
    rows: &[String],
    cols: &[String],
    cells: &[Vec<String>],
) {
    let name_w = rows
        .iter()
        .map(String::len)
        .chain([corner.len()])
        .max()
        .unwrap_or(8)
        .min(NAME_COLUMNS);
    let col_w: Vec<usize> = (0..cols.len())
        .map(|j| {
            cells
                .iter()
                .filter_map(|r| r.get(j).map(String::len))
                .chain([cols[j].len(), 6])
                .max()
                .unwrap_or(6)
                + 2
        })
        .collect();
    let mut chunks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut width = 2 + name_w;
    for (j, w) in col_w.iter().enumerate() {
        if width + w > MAX_COLUMNS && chunks.last().is_some_and(|c| !c.is_empty()) {
            chunks.push(Vec::new());
            width = 2 + name_w;
        }
        width += w;
        if let Some(last) = chunks.last_mut() {
            last.push(j);
        }
    }
    for chunk in chunks {
        out.push('\n');
        wrap(out, 0, 2, title);
        let mut line = format!("  {:<name_w$}", corner);
        for &j in &chunk {
            line.push_str(&format!("{:>w$}", cols[j], w = col_w[j]));
        }
        out.push_str(line.trim_end());
        out.push('\n');
        for (i, name) in rows.iter().enumerate() {
            let mut line = format!("  {:<name_w$}", name_cell(name));
            for &j in &chunk {
                let text = cells[i].get(j).map_or("", String::as_str);
                line.push_str(&format!("{:>w$}", text, w = col_w[j]));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}
