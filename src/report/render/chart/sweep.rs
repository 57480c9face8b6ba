//! Sweeps against block size, queue depth or job threads (log2 axis): one chart per
//! sweep x direction, a panel per throughput metric, a line per config.

use super::lines::{Axis, Line, LineChart, LinePanel};
use crate::plan::sweep::SweepOver;
use crate::report::files::file_stem;
use crate::report::model::{Block, Metric, Report};
use crate::workload::result::Direction;

/// One chart per sweep x direction; one panel per throughput metric (not latency),
/// against the sweep's key (block size, queue depth or job threads; log2 axis).
pub fn sweep_charts(report: &Report) -> Vec<(String, LineChart)> {
    let mut groups: Vec<(String, SweepOver, Option<Direction>)> = Vec::new();
    for b in &report.blocks {
        for p in &b.sweeps {
            let k = (p.sweep.clone(), p.over, b.direction);
            if !groups.contains(&k) {
                groups.push(k);
            }
        }
    }
    groups
        .into_iter()
        .map(|(sweep, over, dir)| {
            let direction = dir.map_or("", Direction::as_str);
            // (block, x) of every point of this sweep and direction.
            let points: Vec<(&Block, f64)> = report
                .blocks
                .iter()
                .filter(|b| b.direction == dir)
                .filter_map(|b| b.sweeps.iter().find(|p| p.sweep == sweep).map(|p| (b, p.x)))
                .collect();
            // Panels: MB/s, IOPS and whatever else is a headline metric in the sweep.
            let shown = |metric: &Metric| {
                matches!(metric, Metric::MbPerS | Metric::Iops)
                    || points
                        .iter()
                        .any(|(b, _)| b.headline && b.metric == *metric)
            };
            let mut metrics: Vec<&Metric> = Vec::new();
            for (b, _) in points.iter().filter(|(b, _)| shown(&b.metric)) {
                if !metrics.contains(&&b.metric) {
                    metrics.push(&b.metric);
                }
            }
            let (x_desc, x_axis) = match over {
                SweepOver::Bs => ("block size [bytes, log2 scale]", Axis::LogSize),
                SweepOver::Iodepth => (
                    "queue depth (iodepth per job thread), log2 scale",
                    Axis::Log2,
                ),
                SweepOver::Numjobs => ("job threads (numjobs), log2 scale", Axis::Log2),
            };
            let panels = metrics
                .into_iter()
                .map(|metric| {
                    let lines = sweep_lines(report, &points, metric);
                    let unit = metric.unit().to_string();
                    let what = if metric.named_by_unit() {
                        unit.clone()
                    } else {
                        format!("{}, {unit}", metric.key())
                    };
                    LinePanel {
                        title: format!("{sweep} {direction} [{what}]"),
                        x_desc: x_desc.into(),
                        y_desc: unit,
                        x_axis,
                        y_max: None,
                        lines,
                        marks: Vec::new(),
                    }
                })
                .collect();
            let what = if report.published {
                "published values"
            } else {
                "mean with 95% CI"
            };
            (
                format!("sweep-{}-{}", file_stem(&sweep), file_stem(direction)),
                LineChart {
                    title: format!("{sweep} {direction}: against {}, {what}", over.as_str()),
                    caption: crate::report::render::header::caption(report),
                    panels,
                },
            )
        })
        .collect()
}

/// One line per config through the sweep's points of one metric.
fn sweep_lines(report: &Report, points: &[(&Block, f64)], metric: &Metric) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let k = report.configs.len() as f64;
    for (ci, config) in report.configs.iter().enumerate() {
        // Spread configs a little along x so their error bars do not cover each other
        // (at most +-0.1 of a power of two).
        let nudge = if report.published {
            1.0 // no error bars to keep apart
        } else {
            2f64.powf((ci as f64 - (k - 1.0) / 2.0) * 0.2 / k.max(2.0))
        };
        let mut line = Line {
            label: Some(config.clone()),
            color_index: ci,
            points: Vec::new(),
            errors: Vec::new(),
        };
        for (b, x) in points.iter().filter(|(b, _)| b.metric == *metric) {
            let x = x * nudge;
            for r in b.rows.iter().filter(|r| &r.config == config) {
                let (mean, low, high) = (r.summary.mean, r.summary.ci_low, r.summary.ci_high);
                line.points.push((x, mean));
                if low.is_finite() {
                    line.errors.push((x, low, high));
                }
            }
        }
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !line.points.is_empty() {
            lines.push(line);
        }
    }
    lines
}
