//! Line charts (the type every line chart kind builds, and its drawing): latency CDF
//! per config (latency.csv) here; throughput over time in [`super::throughput`], sweeps
//! in [`super::sweep`], probes in [`super::probe_chart`].

use super::draw::{color, config_index, frame, size_label, Chart, ChartInput, FONT};
use crate::report::files::file_stem;
use crate::report::model::Report;
use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

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
    /// Log2 scale, ticks at powers of two printed as numbers (queue depth 1, 2, 4...).
    Log2,
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
    /// Vertical lines at these x values, labelled (an estimate on the axis).
    pub marks: Vec<(f64, String)>,
}

pub struct LineChart {
    pub title: String,
    pub caption: String,
    pub panels: Vec<LinePanel>,
}

/// Lines with a legend entry on the first line of each config.
pub fn label_first(lines: &mut [Line], report: &Report) {
    let mut seen = Vec::new();
    for l in lines.iter_mut() {
        if !seen.contains(&l.color_index) {
            seen.push(l.color_index);
            l.label = report.configs.get(l.color_index).cloned();
        }
    }
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
                    caption: crate::report::render::header::caption(input.report),
                    panels: vec![LinePanel {
                        title: format!("{w} {d} [us, log scale]"),
                        x_desc: "completion latency [us]".into(),
                        y_desc: "percentile [%]".into(),
                        x_axis: Axis::Log,
                        y_max: Some(100.0),
                        lines,
                        marks: Vec::new(),
                    }],
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

/// Linear ticks at multiples of 1, 2 or 5 x 10^k from `lo` to `hi`, at most `max` of
/// them (what plotters draws for a linear axis asked for `max` labels, near enough to
/// size the label area by).
pub fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() || max < 2 {
        return vec![lo];
    }
    let raw = (hi - lo) / (max - 1) as f64;
    let decade = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * decade);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Width of the y label area of line charts.
const Y_LABEL_PX: u32 = 70;

/// Pixels per character of a 13 px tick label, and the gap kept between two labels.
const TICK_CHAR_PX: f64 = 7.5;
const TICK_GAP_PX: f64 = 10.0;

/// Ticks for a log axis over `lo..hi` drawn `width_px` wide: 1-2-5 per decade, or every
/// 1..9 x 10^k when the range is too narrow for three 1-2-5 ticks, or four values rounded
/// to two significant digits when it is narrower still; then thinned so that no two
/// labels touch (powers of ten kept first, then 5s, then 2s, then the rest).
fn log_ticks(lo: f64, hi: f64, width_px: f64) -> Vec<f64> {
    let pick = |mantissas: &[f64]| -> Vec<(f64, u8)> {
        let mut out = Vec::new();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            for m in mantissas {
                let v = m * decade;
                if v >= lo && v <= hi {
                    let rank = match *m as u32 {
                        1 => 0,
                        5 => 1,
                        2 => 2,
                        _ => 3,
                    };
                    out.push((v, rank));
                }
            }
            decade *= 10.0;
        }
        out
    };
    let mut candidates = pick(&[1.0, 2.0, 5.0]);
    if candidates.len() < 3 {
        candidates = pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    if candidates.len() < 3 {
        candidates = (1..=4)
            .map(|i| {
                let v = lo * (hi / lo).powf(f64::from(i) / 5.0);
                let unit = 10f64.powf(v.log10().floor() - 1.0);
                ((v / unit).round() * unit, 3)
            })
            .collect();
    }
    thin_ticks(candidates, lo, hi, width_px)
}

/// Keeps the ticks whose labels (as [`axis_value`] prints them) do not overlap a label
/// already kept, best rank first; returns them in increasing order.
fn thin_ticks(mut candidates: Vec<(f64, u8)>, lo: f64, hi: f64, width_px: f64) -> Vec<f64> {
    let span = (hi / lo).ln();
    let extent = |v: f64| {
        let x = (v / lo).ln() / span * width_px;
        let half = axis_value(v).len() as f64 * TICK_CHAR_PX / 2.0;
        (x - half, x + half)
    };
    candidates.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)));
    let mut kept: Vec<(f64, (f64, f64))> = Vec::new();
    for (v, _) in candidates {
        let (l, r) = extent(v);
        let clear = kept
            .iter()
            .all(|(_, (kl, kr))| r + TICK_GAP_PX <= *kl || *kr + TICK_GAP_PX <= l);
        if clear {
            kept.push((v, (l, r)));
        }
    }
    let mut ticks: Vec<f64> = kept.into_iter().map(|(v, _)| v).collect();
    ticks.sort_by(f64::total_cmp);
    ticks
}

/// A tick label of the x axis at `v` (on log2 axes `v` is log2 of the value: only
/// powers of two are labelled).
fn x_label(axis: Axis, v: f64) -> String {
    let whole = (v - v.round()).abs() < 1e-6;
    match axis {
        Axis::LogSize if whole => size_label(2f64.powf(v.round()) as u64),
        Axis::Log2 if whole => axis_value(2f64.powf(v.round())),
        Axis::LogSize | Axis::Log2 => String::new(),
        _ => axis_value(v),
    }
}

type MarkLine = PathElement<(f64, f64)>;
type MarkText = Text<'static, (f64, f64), String>;

/// A vertical grey line at `x` with its label above it (a probe's estimate).
fn mark(x: f64, label: &str, (y_low, y_top): (f64, f64)) -> (MarkLine, MarkText) {
    let line = PathElement::new(
        vec![(x, y_low), (x, y_low + (y_top - y_low) * 0.86)],
        BLACK.mix(0.55).stroke_width(2),
    );
    let style = TextStyle::from((FONT, 14).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    let text = Text::new(
        label.to_string(),
        (x, y_low + (y_top - y_low) * 0.92),
        style,
    );
    (line, text)
}

fn draw_panel<DB, X>(
    area: &DrawingArea<DB, Shift>,
    panel: &LinePanel,
    x_range: X,
    x_ticks: Option<usize>,
    (y_low, y_top): (f64, f64),
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
        .y_label_area_size(Y_LABEL_PX)
        .build_cartesian_2d(x_range, y_low..y_top)?;
    let axis = panel.x_axis;
    // Log2 axes are drawn on log2(x), one tick per power of two.
    let log2 = matches!(axis, Axis::LogSize | Axis::Log2);
    let tx = |x: f64| if log2 { x.log2() } else { x };
    let mut mesh = chart.configure_mesh();
    if let Some(ticks) = x_ticks {
        mesh.x_labels(ticks);
    }
    mesh.x_desc(panel.x_desc.as_str())
        .y_desc(panel.y_desc.as_str())
        .x_label_formatter(&|v| x_label(axis, *v))
        .y_label_formatter(&|v| axis_value(*v))
        .label_style((FONT, 13))
        .draw()?;
    for line in &panel.lines {
        let c = color(line.color_index);
        let style = c.stroke_width(if line.errors.is_empty() && !log2 {
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
        if log2 {
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
    for (x, label) in &panel.marks {
        let (line, text) = mark(tx(*x), label, (y_low, y_top));
        chart.draw_series(std::iter::once(line))?;
        chart.draw_series(std::iter::once(text))?;
    }
    if panel.lines.iter().all(|l| l.label.is_none()) {
        return Ok(());
    }
    chart
        .configure_series_labels()
        .position(legend_position(panel, &tx))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}

/// Keep the legend off the data: CDFs rise to the right (legend lower right); other
/// charts take the corner (upper right, upper left, lower right, lower left, in that
/// order of preference) with the fewest points under where the legend box goes.
/// `tx` maps x to the drawn axis (log2 or as is).
fn legend_position(panel: &LinePanel, tx: &dyn Fn(f64) -> f64) -> SeriesLabelPosition {
    if panel.y_max.is_some() {
        return SeriesLabelPosition::LowerRight;
    }
    let points: Vec<(f64, f64)> = panel
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|(x, y)| (tx(*x), *y)))
        .collect();
    let (mut x_lo, mut x_hi, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (x, y) in &points {
        x_lo = x_lo.min(*x);
        x_hi = x_hi.max(*x);
        y_hi = y_hi.max(*y);
    }
    let (w, h) = ((x_hi - x_lo).max(1e-9), (y_hi * 1.15).max(1e-9));
    // The box: about a third of the width, and a line of height per legend entry.
    let entries = panel.lines.iter().filter(|l| l.label.is_some()).count() as f64;
    let box_h = (0.08 + 0.06 * entries).min(0.6);
    let under = |left: bool, top: bool| {
        points
            .iter()
            .filter(|(x, y)| {
                let fx = (x - x_lo) / w;
                let fy = y / h;
                let in_x = if left { fx <= 0.35 } else { fx >= 0.65 };
                let in_y = if top { fy >= 1.0 - box_h } else { fy <= box_h };
                in_x && in_y
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperRight, false, true),
        (SeriesLabelPosition::UpperLeft, true, true),
        (SeriesLabelPosition::LowerRight, false, false),
        (SeriesLabelPosition::LowerLeft, true, false),
    ]
    .into_iter()
    .min_by_key(|(_, left, top)| under(*left, *top))
    .map_or(SeriesLabelPosition::UpperRight, |(p, _, _)| p)
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
            // From 0, or below it for values that go negative (a probe's diff).
            let mut y_lo = 0.0f64;
            for (x, y) in pts {
                x_min = x_min.min(*x);
                x_max = x_max.max(*x);
                y_hi = y_hi.max(*y);
                y_lo = y_lo.min(*y);
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
            let y = (y_lo * 1.15, y_top);
            match panel.x_axis {
                Axis::Linear => {
                    let hi = if x_max > x_min { x_max } else { x_min + 1.0 };
                    draw_panel(cell, panel, x_min..hi, None, y)?
                }
                Axis::LogSize | Axis::Log2 => {
                    let (lo, hi) = (x_min.log2().round() - 0.5, x_max.log2().round() + 0.5);
                    let ticks = (hi - lo).round() as usize + 1;
                    draw_panel(cell, panel, lo..hi, Some(ticks), y)?
                }
                Axis::Log => {
                    let (lo, hi) = (x_min / 1.4, x_max * 1.4);
                    // Explicit ticks: plotters' own log ticks sit on powers of ten and
                    // leave a range narrower than a decade without any label.
                    // The plot is the cell less the y label area and the margins.
                    let width = f64::from(cell.dim_in_pixel().0.saturating_sub(Y_LABEL_PX + 20));
                    let ticks = log_ticks(lo, hi, width);
                    draw_panel(
                        cell,
                        panel,
                        (lo..hi).log_scale().with_key_points(ticks),
                        None,
                        y,
                    )?
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
