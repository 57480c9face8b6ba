//! `request-sizes`: what sizes the mmc driver got, one panel per workload x direction,
//! grouped bars per size with one bar per config (share of its requests, pooled over the
//! measured runs), from the report's evidence (traced runs only).

use super::draw::{color, size_label, DrawResult, PanelGrid, FONT};
use crate::report::model::evidence::EvidenceBlock;
use crate::report::model::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

/// More distinct sizes than this are grouped into powers of two.
const MAX_CLASSES: usize = 10;

struct Series {
    config: String,
    color_index: usize,
    /// Percent of the config's requests per class.
    percent: Vec<f64>,
}

pub struct Panel {
    title: String,
    /// Class labels (`4K`, `<=64K`).
    classes: Vec<String>,
    series: Vec<Series>,
}

pub struct SizeChart {
    title: String,
    caption: String,
    panels: Vec<Panel>,
}

/// Size classes of a block: every size when there are few, else powers of two (a
/// request falls into the smallest power of two it fits).
fn classes(block: &EvidenceBlock) -> (Vec<String>, impl Fn(u64) -> usize) {
    let sizes: Vec<u64> = block
        .rows
        .iter()
        .flat_map(|r| r.sizes.keys().copied())
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    let pow2 = sizes.len() > MAX_CLASSES;
    let class_of = move |b: u64| if pow2 { b.next_power_of_two() } else { b };
    let keys: Vec<u64> = sizes
        .iter()
        .map(|&b| class_of(b))
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    let labels = keys
        .iter()
        .map(|&k| {
            if pow2 {
                format!("<={}", size_label(k))
            } else {
                size_label(k)
            }
        })
        .collect();
    let index = move |b: u64| keys.iter().position(|&k| k == class_of(b)).unwrap_or(0);
    (labels, index)
}

/// The chart, when some config of some block has traced request sizes.
pub fn size_chart(report: &Report) -> Option<(String, SizeChart)> {
    let panels: Vec<Panel> = report
        .evidence
        .iter()
        .filter(|b| b.rows.iter().any(|r| !r.sizes.is_empty()))
        .map(|b| {
            let (classes, index) = classes(b);
            let series = b
                .rows
                .iter()
                .filter(|r| !r.sizes.is_empty())
                .map(|r| {
                    let total: u64 = r.sizes.values().sum();
                    let mut counts: BTreeMap<usize, u64> = BTreeMap::new();
                    for (size, n) in &r.sizes {
                        *counts.entry(index(*size)).or_insert(0) += n;
                    }
                    Series {
                        config: r.config.clone(),
                        color_index: super::draw::config_index(report, &r.config),
                        percent: (0..classes.len())
                            .map(|i| {
                                *counts.get(&i).unwrap_or(&0) as f64 * 100.0 / total.max(1) as f64
                            })
                            .collect(),
                    }
                })
                .collect();
            Panel {
                title: format!("{}, {}", b.workload, b.direction.as_str()),
                classes,
                series,
            }
        })
        .collect();
    (!panels.is_empty()).then(|| {
        (
            "request-sizes".to_string(),
            SizeChart {
                title: "Request sizes the mmc driver got (% of each config's requests)".into(),
                caption: crate::report::render::header::caption(report),
                panels,
            },
        )
    })
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // Class i spans [i, i + 1) on the x axis: the configs' bars side by side in its
    // middle 80%, its label under the middle.
    let n = panel.classes.len().max(1);
    let k = panel.series.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 16))
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..n as f64, 0.0..105.0)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("request size (bytes)")
        .y_desc("% of requests")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_label_style((FONT, 13))
        .draw()?;
    let width = 0.8 / k as f64;
    for (j, s) in panel.series.iter().enumerate() {
        chart.draw_series(s.percent.iter().enumerate().map(|(i, p)| {
            let left = i as f64 + 0.1 + j as f64 * width;
            Rectangle::new(
                [(left, 0.0), (left + width * 0.95, *p)],
                color(s.color_index).filled(),
            )
        }))?;
    }
    let base = area.get_base_pixel();
    let style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, label) in panel.classes.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        area.draw_text(label, &style, (x - base.0, y - base.1 + 4))?;
    }
    Ok(())
}

impl PanelGrid for SizeChart {
    type Panel = Panel;
    const PANEL_SIZE: (u32, u32) = (520, 340);
    const COLUMNS: usize = 2;

    fn title(&self) -> &str {
        &self.title
    }

    fn caption(&self) -> &str {
        &self.caption
    }

    fn panels(&self) -> &[Panel] {
        &self.panels
    }

    fn legend(panel: &Panel) -> impl Iterator<Item = (usize, &str)> {
        panel
            .series
            .iter()
            .map(|s| (s.color_index, s.config.as_str()))
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
    ) -> DrawResult<DB> {
        draw_panel(area, panel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_classes() {
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(512 * 1024), "512k");
        assert_eq!(size_label(1 << 20), "1M");
        assert_eq!(size_label(3 << 30), "3G");
        assert_eq!(size_label(1536), "1.5k");
        assert_eq!(size_label(512), "512");
    }
}
