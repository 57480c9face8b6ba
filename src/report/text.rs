//! The mail text: plain ASCII, at most 72 columns, ready to paste into a linux-mmc mail.
//! Only headline blocks (see `results.rs`) are shown; every line is checked for width.

use super::model::{format_pct, format_value, Block, Report};
use super::wording;

/// Widest line the mail text may have.
pub const MAX_COLUMNS: usize = 72;
const NAME_COLUMNS: usize = 20;

/// Words of `text`, with `a = b` kept together (`p = 0.019,`, `n = 5:`).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut tokens = text.split_whitespace().peekable();
    while let Some(token) = tokens.next() {
        match (out.last_mut(), tokens.peek()) {
            (Some(last), Some(next)) if token == "=" => {
                *last = format!("{last} = {next}");
                tokens.next();
            }
            _ => out.push(token.to_string()),
        }
    }
    out
}

/// Word-wrap `text` to [`MAX_COLUMNS`]; continuation lines get `indent` spaces more.
pub(super) fn wrap(out: &mut String, first_indent: usize, indent: usize, text: &str) {
    let mut line = " ".repeat(first_indent);
    let mut empty = true;
    for word in words(text) {
        let word = word.as_str();
        if !empty && line.len() + 1 + word.len() > MAX_COLUMNS {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(first_indent + indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// Replace anything outside printable ASCII (e.g. a "µ" in a device name).
pub fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'µ' => 'u',
            c if c.is_ascii() && !c.is_ascii_control() => c,
            _ => '?',
        })
        .collect()
}

/// Widest config column of the measured table (the other columns take 38).
const MAX_NAME_COLUMNS: usize = 34;

pub(super) fn cut(name: &str, width: usize) -> String {
    if name.len() > width {
        format!("{}~", &name[..width - 1])
    } else {
        name.to_string()
    }
}

fn name_cell(name: &str) -> String {
    cut(name, NAME_COLUMNS)
}

/// "A" for the report's baseline, else the name of the config compared with.
fn versus(report: &Report, row: &super::model::ConfigRow) -> String {
    match row.baseline.as_deref() {
        Some(b) if b != report.baseline => ascii(b),
        _ => "A".to_string(),
    }
}

fn block_text(out: &mut String, report: &Report, block: &Block) {
    let better = if block.metric.higher_is_better {
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
            block.title(),
            block.metric.unit
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
        super::text_boots::table(out, report, block, name_w);
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
                &format!("! {}: {}", ascii(&row.config), w.message()),
            );
        }
    }
    super::evidence::mail_lines(out, report, &block.workload, &block.direction);
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

/// A published value as written in the source (shortest form, no added digits).
fn published_value(v: f64) -> String {
    format!("{v}")
}

/// Published single values: one table per metric, direction and sweep (first-seen order), workloads down, configs across (split when wider than 72 columns), and
/// the plain change B vs A when there are exactly two configs.
fn published_tables(out: &mut String, report: &Report) {
    type Key<'a> = (&'a super::model::Metric, &'a str, &'a Option<String>);
    let mut keys: Vec<Key> = Vec::new();
    for b in report.blocks.iter().filter(|b| b.headline) {
        let key = (&b.metric, b.direction.as_str(), &b.sweep);
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
        let first = group[0];
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
                    && (b.headline || b.metric.unit == metric.unit)
                    && b.direction == direction
                    && &b.sweep == sweep
            })
            .collect();
        if configs.len() == 1 && companions.len() > group.len() {
            metric_columns(out, &companions);
            continue;
        }
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
        let better = if first.metric.higher_is_better {
            "higher"
        } else {
            "lower"
        };
        let dir = if first.direction.is_empty() {
            String::new()
        } else {
            format!(", {}", first.direction)
        };
        let what = match first.metric.key.as_str() {
            "mb_per_s" | "iops" | "kib_per_s" => first.metric.unit.clone(),
            key => format!("{key} [{}]", first.metric.unit),
        };
        let title = format!("{what}{dir} ({better} is better)");
        grid(out, &ascii(&title), corner, &row_names, &col_names, &cells);
    }
}

/// One config, several metrics of one unit: workloads down, metrics across, each named
/// by what is left after the words all metric names share (`align_pre_us` -> `pre`).
fn metric_columns(out: &mut String, blocks: &[&Block]) {
    let mut keys: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for b in blocks {
        if !keys.contains(&b.metric.key.as_str()) {
            keys.push(&b.metric.key);
        }
        if !workloads.contains(&b.workload.as_str()) {
            workloads.push(&b.workload);
        }
    }
    let words: Vec<Vec<&str>> = keys.iter().map(|k| k.split('_').collect()).collect();
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
            keys.iter()
                .map(|k| {
                    blocks
                        .iter()
                        .find(|b| b.workload == *w && b.metric.key == *k)
                        .and_then(|b| b.rows.first())
                        .map_or("-".to_string(), |r| published_value(r.summary.mean))
                })
                .collect()
        })
        .collect();
    let first = blocks[0];
    let better = if first.metric.higher_is_better {
        "higher"
    } else {
        "lower"
    };
    let config = first.rows.first().map_or("", |r| r.config.as_str());
    let title = format!(
        "{}: {} [{}], {}, {config} ({better} is better)",
        first.sweep.as_deref().unwrap_or(&first.workload),
        cols.join(", "),
        first.metric.unit,
        first.direction
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

/// The whole mail text.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    wrap(&mut out, 0, 2, &ascii(&report.title));
    for (key, value) in &report.header {
        wrap(&mut out, 0, 8, &ascii(&format!("{key}: {value}")));
    }
    for section in &report.setup {
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
        published_tables(&mut out, report);
    } else {
        for block in report.blocks.iter().filter(|b| b.headline) {
            out.push('\n');
            block_text(&mut out, report, block);
        }
    }
    let notes: Vec<String> = wording::notes(report)
        .into_iter()
        .chain(report.notes.iter().cloned())
        .collect();
    if !notes.is_empty() {
        out.push('\n');
        for note in &notes {
            wrap(&mut out, 0, 2, &ascii(&format!("- {note}")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_lines_short() {
        let mut out = String::new();
        let long = "word ".repeat(40);
        wrap(&mut out, 2, 4, &long);
        assert!(out.lines().all(|l| l.len() <= MAX_COLUMNS));
        assert!(out
            .lines()
            .nth(1)
            .expect("wrapped")
            .starts_with("      word"));
    }

    #[test]
    fn wrap_keeps_assignments_together() {
        let mut out = String::new();
        let text = format!("{} p = 0.019, q = 0.127, n = 5: slower", "x".repeat(50));
        wrap(&mut out, 2, 4, &text);
        assert_eq!(
            out,
            format!(
                "  {} p = 0.019,\n      q = 0.127, n = 5: slower\n",
                "x".repeat(50)
            )
        );
    }

    #[test]
    fn ascii_only() {
        assert_eq!(ascii("451µs – ok"), "451us ? ok");
    }
}
