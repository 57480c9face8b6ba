//! Grouped bars: one panel per workload x direction, one bar per config (mean), 95% CI
//! error bars when n > 1, the change against A written above each other bar.

use super::draw::{color, DrawResult, PanelGrid, FONT};
use crate::report::files::file_stem;
use crate::report::model::{Metric, Report};
use crate::report::render::numbers::{format_pct, format_value};
use crate::stats::Verdict;
use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub struct Bar {
    pub config: String,
    pub color_index: usize,
    pub mean: f64,
    /// 95% CI of the mean, when there is one.
    pub ci: Option<(f64, f64)>,
    /// Change vs A (and "*" when significant), for non-baseline bars.
    pub label: Option<String>,
    pub is_baseline: bool,
}

pub struct BarPanel {
    pub title: String,
    pub unit: String,
    pub bars: Vec<Bar>,
}

pub struct BarChart {
    pub title: String,
    /// Single published values: labels as published, no error bars.
    pub published: bool,
    pub caption: String,
    pub panels: Vec<BarPanel>,
}

/// One bar chart per headline metric (MB/s, IOPS, ...), panels in report order.
pub fn bar_charts(report: &Report) -> Vec<(String, BarChart)> {
    let mut metrics: Vec<&Metric> = Vec::new();
    for b in report
        .blocks
        .iter()
        .filter(|b| b.headline && !(report.published && b.sweep.is_some()))
    {
        if !metrics.contains(&&b.metric) {
            metrics.push(&b.metric);
        }
    }
    metrics
        .into_iter()
        .map(|metric| {
            let panels = report
                .blocks
                .iter()
                // Published sweeps are shown by their sweep chart only.
                .filter(|b| b.headline && b.metric == *metric)
                .filter(|b| !(report.published && b.sweep.is_some()))
                .map(|b| BarPanel {
                    title: crate::report::render::wording::block_title(b),
                    unit: b.metric.unit().to_string(),
                    bars: b
                        .rows
                        .iter()
                        .map(|r| Bar {
                            config: r.config.clone(),
                            color_index: super::draw::config_index(report, &r.config),
                            mean: r.summary.mean,
                            ci: r
                                .summary
                                .ci_low
                                .is_finite()
                                .then_some((r.summary.ci_low, r.summary.ci_high)),
                            is_baseline: report.is_baseline(&r.config),
                            label: r.change.map(|c| {
                                let sig = matches!(
                                    r.verdict,
                                    Some(Verdict::Faster) | Some(Verdict::Slower)
                                );
                                format!("{}{}", format_pct(c.rel), if sig { " *" } else { "" })
                            }),
                        })
                        .collect(),
                })
                .collect();
            let what = if report.published {
                "published single values (n = 1)".to_string()
            } else {
                "mean with 95% CI; label: change vs A, * = significant".to_string()
            };
            (
                format!("bars-{}", file_stem(metric.key())),
                BarChart {
                    published: report.published,
                    title: format!(
                        "{} per workload, A = {}: {what}",
                        metric.unit(),
                        report.baseline
                    ),
                    caption: crate::report::render::header::caption(report),
                    panels,
                },
            )
        })
        .collect()
}

/// Bars take at least this many slots of the x axis, so one or two bars stand in the
/// middle of their panel at a normal width instead of filling it or hugging the y axis.
const MIN_SLOTS: i32 = 3;
/// x units per slot (integer coordinates: bar `i` is centred on `i * SLOT`).
const SLOT: i32 = 100;
/// Half the width of a bar, in x units.
const BAR_HALF: i32 = 30;

/// x range of a panel with `n` bars: at least [`MIN_SLOTS`] slots wide, centred.
fn x_range(n: i32) -> std::ops::Range<i32> {
    let pad = (MIN_SLOTS.max(n) - n) * SLOT / 2;
    (-SLOT / 2 - pad)..((n - 1) * SLOT + SLOT / 2 + pad)
}

/// At most this many y ticks.
const Y_TICKS: usize = 6;

/// Width in pixels of the y label area: the widest tick label (about 8 px per
/// character at 13 px), plus the rotated axis title and a gap.
pub fn y_label_area(y_max: f64) -> u32 {
    let widest = super::lines::nice_ticks(0.0, y_max, Y_TICKS)
        .iter()
        .map(|v| super::lines::axis_value(*v).len())
        .max()
        .unwrap_or(1);
    (widest as u32 * 8 + 34).max(56)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &BarPanel,
    published: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let n = panel.bars.len() as i32;
    let top = panel
        .bars
        .iter()
        .map(|b| b.ci.map(|c| c.1).unwrap_or(b.mean))
        .fold(0.0f64, f64::max);
    // Room above the tallest bar (or whisker) for its label.
    let y_max = if top > 0.0 { top * 1.22 } else { 1.0 };
    let names: Vec<String> = panel.bars.iter().map(|b| b.config.clone()).collect();
    let y_area = y_label_area(y_max);
    // Config names under their bars need about 6.8 px per character in a slot; when
    // they do not fit, the legend under the title names the colours instead.
    let slots = f64::from(MIN_SLOTS.max(n));
    let slot_px = area.dim_in_pixel().0.saturating_sub(y_area + 16) as f64 / slots;
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64;
    let fits = longest * 6.8 + 4.0 <= slot_px;
    let ticks: Vec<i32> = (0..n).map(|i| i * SLOT).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{} [{}]", panel.title, panel.unit), (FONT, 16))
        .margin(8)
        .x_label_area_size(if fits { 28 } else { 8 })
        .y_label_area_size(y_area)
        .build_cartesian_2d(x_range(n).with_key_points(ticks), 0.0..y_max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&|v| match names.get((v / SLOT) as usize) {
            Some(name) if fits && v % SLOT == 0 && *v >= 0 => name.clone(),
            _ => String::new(),
        })
        .x_label_style((FONT, 13))
        .y_desc(panel.unit.as_str())
        .y_labels(Y_TICKS)
        .y_label_formatter(&|v| super::lines::axis_value(*v))
        .y_label_style((FONT, 13))
        .draw()?;
    let x = |i: usize| i as i32 * SLOT;
    chart.draw_series(panel.bars.iter().enumerate().map(|(i, b)| {
        Rectangle::new(
            [(x(i) - BAR_HALF, 0.0), (x(i) + BAR_HALF, b.mean)],
            color(b.color_index).filled(),
        )
    }))?;
    chart.draw_series(panel.bars.iter().enumerate().filter_map(|(i, b)| {
        b.ci.map(|(lo, hi)| ErrorBar::new_vertical(x(i), lo, b.mean, hi, BLACK.stroke_width(2), 12))
    }))?;
    let label_style =
        TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart.draw_series(panel.bars.iter().enumerate().map(|(i, b)| {
        let y = b.ci.map(|c| c.1).unwrap_or(b.mean) + y_max * 0.015;
        Text::new(bar_label(b, published), (x(i), y), label_style.clone())
    }))?;
    Ok(())
}

/// What is written above a bar: the change vs A, or the value (marked A for a baseline).
fn bar_label(b: &Bar, published: bool) -> String {
    match &b.label {
        Some(l) => l.clone(),
        None => {
            let v = if published {
                format!("{}", b.mean)
            } else {
                format_value(b.mean)
            };
            if b.is_baseline {
                format!("A {v}")
            } else {
                v
            }
        }
    }
}

impl PanelGrid for BarChart {
    type Panel = BarPanel;
    const PANEL_SIZE: (u32, u32) = (440, 340);
    const COLUMNS: usize = 3;

    fn title(&self) -> &str {
        &self.title
    }

    fn caption(&self) -> &str {
        &self.caption
    }

    fn panels(&self) -> &[BarPanel] {
        &self.panels
    }

    fn legend(panel: &BarPanel) -> impl Iterator<Item = (usize, &str)> {
        panel
            .bars
            .iter()
            .map(|b| (b.color_index, b.config.as_str()))
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &BarPanel,
    ) -> DrawResult<DB> {
        draw_panel(area, panel, self.published)
    }
}
