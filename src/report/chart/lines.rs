//! Line charts: throughput over time of long writes (series.csv), latency CDF per
//! config (latency.csv), and sweeps against block size (MB/s and IOPS panels).

use super::{color, file_stem, frame, Chart, ChartInput, FONT};
use crate::report::model::Report;
use crate::workload::result::Direction;
use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// A run is a "long write" worth a throughput-over-time chart from this many seconds.
pub const LONG_WRITE_SECONDS: usize = 5;

pub struct Line {
    /// Legend entry (only the first line of each config carries one).
    pub label: Option<String>,
    pub color_index: usize,
    pub points: Vec<(f64, f64)>,
    /// (x, low, high) error bars.
    pub errors: Vec<(f64, f64, f64)>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Axis {
    Linear,
    /// Log scale, ticks printed as sizes (4k, 1M).
    LogSize,
    /// Log scale, ticks printed as numbers.
    Log,
}

pub struct LinePanel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_axis: Axis,
    /// y axis from 0 (throughput) or fixed 0..100 (percentiles).
    pub y_max: Option<f64>,
    pub lines: Vec<Line>,
}

pub struct LineChart {
    pub title: String,
    pub caption: String,
    pub panels: Vec<LinePanel>,
}

fn config_index(report: &Report, config: &str) -> usize {
    report.configs.iter().position(|c| c == config).unwrap_or(0)
}

/// Lines with a legend entry on the first line of each config.
fn label_first(lines: &mut [Line], report: &Report) {
    let mut seen = Vec::new();
    for l in lines.iter_mut() {
        if !seen.contains(&l.color_index) {
            seen.push(l.color_index);
            l.label = report.configs.get(l.color_index).cloned();
        }
    }
}

/// MB/s per second of every measured run of each long write workload.
pub fn throughput_charts(input: &ChartInput) -> Vec<(String, LineChart)> {
    let mut by_workload: BTreeMap<(String, u32), Vec<(f64, f64)>> = BTreeMap::new();
    let mut configs: BTreeMap<u32, String> = BTreeMap::new();
    for s in input
        .series
        .iter()
        .filter(|s| s.direction == Direction::Write)
    {
        by_workload
            .entry((s.workload.clone(), s.run))
            .or_default()
            .push((s.second as f64, s.mb_per_s));
        configs.insert(s.run, s.config.clone());
    }
    let mut workloads: Vec<String> = Vec::new();
    for ((w, _), points) in &by_workload {
        if points.len() >= LONG_WRITE_SECONDS && !workloads.contains(w) {
            workloads.push(w.clone());
        }
    }
    workloads
        .into_iter()
        .map(|w| {
            let mut lines: Vec<Line> = by_workload
                .iter()
                .filter(|((wl, _), p)| wl == &w && p.len() >= LONG_WRITE_SECONDS)
                .map(|((_, run), points)| {
                    let mut points = points.clone();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Line {
                        label: None,
                        color_index: config_index(input.report, &configs[run]),
                        points,
                        errors: Vec::new(),
                    }
                })
                .collect();
            lines.sort_by_key(|l| l.color_index);
            label_first(&mut lines, input.report);
            (
                format!("throughput-{}", file_stem(&w)),
                LineChart {
                    title: format!("{w}: write throughput over time, one line per run"),
                    caption: input.report.caption.clone(),
                    panels: vec![LinePanel {
                        title: format!("{w} [MB/s per second]"),
                        x_desc: "time since start of run [s]".into(),
                        y_desc: "MB/s".into(),
                        x_axis: Axis::Linear,
                        y_max: None,
                        lines,
                    }],
                },
            )
        })
        .collect()
}

/// (x, y) points per run number.
type RunPoints = BTreeMap<u32, Vec<(f64, f64)>>;

/// Completion latency CDF, one line per measured run, coloured by config.
pub fn latency_charts(input: &ChartInput) -> Vec<(String, LineChart)> {
    let mut groups: BTreeMap<(String, String), RunPoints> = BTreeMap::new();
    let mut configs: BTreeMap<u32, String> = BTreeMap::new();
    for l in input.latency.iter().filter(|l| l.latency_us > 0.0) {
        groups
            .entry((l.workload.clone(), l.direction.as_str().to_string()))
            .or_default()
            .entry(l.run)
            .or_default()
            .push((l.latency_us, l.percentile));
        configs.insert(l.run, l.config.clone());
    }
    groups
        .into_iter()
        .map(|((w, d), runs)| {
            let mut lines: Vec<Line> = runs
                .into_iter()
                .map(|(run, mut points)| {
                    points.sort_by(|a, b| a.1.total_cmp(&b.1));
                    Line {
                        label: None,
                        color_index: config_index(input.report, &configs[&run]),
                        points,
                        errors: Vec::new(),
                    }
                })
                .collect();
            lines.sort_by_key(|l| l.color_index);
            label_first(&mut lines, input.report);
            (
                format!("latency-cdf-{}-{}", file_stem(&w), file_stem(&d)),
                LineChart {
                    title: format!("{w}, {d}: completion latency CDF, one line per run"),
                    caption: input.report.caption.clone(),
                    panels: vec![LinePanel {
                        title: format!("{w} {d} [us, log scale]"),
                        x_desc: "completion latency [us]".into(),
                        y_desc: "percentile [%]".into(),
                        x_axis: Axis::Log,
                        y_max: Some(100.0),
                        lines,
                    }],
                },
            )
        })
        .collect()
}

/// One chart per sweep x direction; one panel per throughput metric (not latency).
pub fn sweep_charts(report: &Report) -> Vec<(String, LineChart)> {
    let mut groups: Vec<(String, String)> = Vec::new();
    for b in &report.blocks {
        if let Some(s) = &b.sweep {
            let k = (s.clone(), b.direction.clone());
            if !groups.contains(&k) {
                groups.push(k);
            }
        }
    }
    groups
        .into_iter()
        .map(|(sweep, direction)| {
            let blocks: Vec<_> = report
                .blocks
                .iter()
                .filter(|b| {
                    b.sweep.as_ref() == Some(&sweep)
                        && b.direction == direction
                        && b.block_size_bytes.is_some()
                })
                .collect();
            // Panels: MB/s, IOPS and whatever else is a headline metric in the sweep.
            let shown = |key: &str| {
                key == "mb_per_s"
                    || key == "iops"
                    || blocks.iter().any(|b| b.headline && b.metric.key == key)
            };
            let blocks: Vec<_> = blocks
                .iter()
                .filter(|b| shown(&b.metric.key))
                .copied()
                .collect();
            let mut metrics: Vec<(String, String)> = Vec::new();
            for b in &blocks {
                let k = (b.metric.key.clone(), b.metric.unit.clone());
                if !metrics.contains(&k) {
                    metrics.push(k);
                }
            }
            let panels = metrics
                .into_iter()
                .map(|(key, unit)| {
                    let mut lines: Vec<Line> = Vec::new();
                    let k = report.configs.len() as f64;
                    for (ci, config) in report.configs.iter().enumerate() {
                        // Spread configs a little along x so their error bars do not
                        // cover each other (at most +-0.1 of a power of two).
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
                        for b in blocks.iter().filter(|b| b.metric.key == key) {
                            let x = b.block_size_bytes.unwrap_or(0) as f64 * nudge;
                            for r in b.rows.iter().filter(|r| &r.config == config) {
                                let (mean, low, high) = r.mean_ci();
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
                    let what = match key.as_str() {
                        "mb_per_s" | "iops" | "kib_per_s" => unit.clone(),
                        other => format!("{other}, {unit}"),
                    };
                    LinePanel {
                        title: format!("{sweep} {direction} [{what}]"),
                        x_desc: "block size [bytes, log2 scale]".into(),
                        y_desc: unit,
                        x_axis: Axis::LogSize,
                        y_max: None,
                        lines,
                    }
                })
                .collect();
            let what = if report.published {
                "published values"
            } else {
                "mean with 95% CI"
            };
            (
                format!("sweep-{}-{}", file_stem(&sweep), file_stem(&direction)),
                LineChart {
                    title: format!("{sweep} {direction}: against block size, {what}"),
                    caption: report.caption.clone(),
                    panels,
                },
            )
        })
        .collect()
}

/// Tick label: whole numbers without decimals, others with up to three.
pub fn axis_value(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        let t = format!("{v:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn size_label(bytes: f64) -> String {
    let b = bytes.round() as u64;
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b % 1024 == 0 {
        format!("{}k", b >> 10)
    } else {
        format!("{b}")
    }
}

/// Ticks for a log axis over `lo..hi`: 1-2-5 per decade, or every 1..9 x 10^k when the
/// range is too narrow for three 1-2-5 ticks, or four values rounded to two significant
/// digits when it is narrower still.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let pick = |mantissas: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            for m in mantissas {
                let v = m * decade;
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
            decade *= 10.0;
        }
        out
    };
    let coarse = pick(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        return coarse;
    }
    let fine = pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    if fine.len() >= 3 {
        return fine;
    }
    (1..=4)
        .map(|i| {
            let v = lo * (hi / lo).powf(f64::from(i) / 5.0);
            let unit = 10f64.powf(v.log10().floor() - 1.0);
            (v / unit).round() * unit
        })
        .collect()
}

fn draw_panel<DB, X>(
    area: &DrawingArea<DB, Shift>,
    panel: &LinePanel,
    x_range: X,
    x_ticks: Option<usize>,
    y_top: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 16))
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, 0.0..y_top)?;
    let axis = panel.x_axis;
    // Log-size axes are drawn on log2(bytes), one tick per power of two.
    let tx = |x: f64| if axis == Axis::LogSize { x.log2() } else { x };
    let mut mesh = chart.configure_mesh();
    if let Some(ticks) = x_ticks {
        mesh.x_labels(ticks);
    }
    mesh.x_desc(panel.x_desc.as_str())
        .y_desc(panel.y_desc.as_str())
        .x_label_formatter(&|v| match axis {
            Axis::LogSize if (v - v.round()).abs() < 1e-6 => size_label(2f64.powf(v.round())),
            Axis::LogSize => String::new(),
            _ => axis_value(*v),
        })
        .y_label_formatter(&|v| axis_value(*v))
        .label_style((FONT, 13))
        .draw()?;
    for line in &panel.lines {
        let c = color(line.color_index);
        let style = c.stroke_width(if line.errors.is_empty() && panel.x_axis != Axis::LogSize {
            1
        } else {
            2
        });
        let series = chart.draw_series(LineSeries::new(
            line.points.iter().map(|(x, y)| (tx(*x), *y)),
            style,
        ))?;
        if let Some(label) = &line.label {
            series.label(label.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3))
            });
        }
        if panel.x_axis == Axis::LogSize {
            chart.draw_series(
                line.points
                    .iter()
                    .map(|(x, y)| Circle::new((tx(*x), *y), 4, c.filled())),
            )?;
        }
        chart.draw_series(line.errors.iter().map(|(x, lo, hi)| {
            ErrorBar::new_vertical(tx(*x), *lo, (lo + hi) / 2.0, *hi, c.stroke_width(2), 10)
        }))?;
    }
    chart
        .configure_series_labels()
        .position(legend_position(panel))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}

/// Keep the legend off the data: CDFs rise to the right (legend lower right); falling
/// curves (IOPS against block size) leave the upper right free, rising ones the upper left.
fn legend_position(panel: &LinePanel) -> SeriesLabelPosition {
    if panel.y_max.is_some() {
        return SeriesLabelPosition::LowerRight;
    }
    let (mut first, mut last) = (0.0, 0.0);
    for l in &panel.lines {
        if let (Some(a), Some(b)) = (l.points.first(), l.points.last()) {
            first += a.1;
            last += b.1;
        }
    }
    if first > last {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::UpperLeft
    }
}

impl Chart for LineChart {
    fn size(&self) -> (u32, u32) {
        (760 * self.panels.len().max(1) as u32, 500)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let area = frame(root, &self.title, &self.caption)?;
        let cells = area.split_evenly((1, self.panels.len().max(1)));
        for (cell, panel) in cells.iter().zip(&self.panels) {
            let pts = panel.lines.iter().flat_map(|l| l.points.iter());
            let (mut x_min, mut x_max, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
            for (x, y) in pts {
                x_min = x_min.min(*x);
                x_max = x_max.max(*x);
                y_hi = y_hi.max(*y);
            }
            for (_, _, hi) in panel.lines.iter().flat_map(|l| l.errors.iter()) {
                y_hi = y_hi.max(*hi);
            }
            if !x_min.is_finite() {
                continue;
            }
            let y_top = panel
                .y_max
                .unwrap_or(if y_hi > 0.0 { y_hi * 1.15 } else { 1.0 });
            match panel.x_axis {
                Axis::Linear => {
                    let hi = if x_max > x_min { x_max } else { x_min + 1.0 };
                    draw_panel(cell, panel, x_min..hi, None, y_top)?
                }
                Axis::LogSize => {
                    let (lo, hi) = (x_min.log2().round() - 0.5, x_max.log2().round() + 0.5);
                    let ticks = (hi - lo).round() as usize + 1;
                    draw_panel(cell, panel, lo..hi, Some(ticks), y_top)?
                }
                Axis::Log => {
                    let (lo, hi) = (x_min / 1.4, x_max * 1.4);
                    // Explicit ticks: plotters' own log ticks sit on powers of ten and
                    // leave a range narrower than a decade without any label.
                    let ticks = log_ticks(lo, hi);
                    draw_panel(
                        cell,
                        panel,
                        (lo..hi).log_scale().with_key_points(ticks),
                        None,
                        y_top,
                    )?
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::log_ticks;

    #[test]
    fn log_ticks_label_narrow_and_wide_ranges() {
        assert_eq!(
            log_ticks(3.0, 600.0),
            vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        assert_eq!(
            log_ticks(700.0, 3500.0),
            vec![700.0, 800.0, 900.0, 1000.0, 2000.0, 3000.0]
        );
        let narrow = log_ticks(1100.0, 1900.0);
        assert_eq!(narrow.len(), 4);
        assert!(
            narrow.iter().all(|v| (1100.0..=1900.0).contains(v)),
            "{narrow:?}"
        );
        assert!(narrow.windows(2).all(|w| w[0] < w[1]), "{narrow:?}");
    }
}
