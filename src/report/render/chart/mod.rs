//! Charts (plotters), each written as SVG and PNG.
//!
//! The font is DejaVu Sans, embedded in the binary (assets/fonts/) and registered with
//! plotters' ab_glyph backend: no font file is opened at run time, and PNGs look the
//! same on every machine. SVG files name the font family ("sans-serif") and leave the
//! glyphs to the viewer.
//!
//! Kinds (file stems): `bars-<metric>` grouped bars per workload with 95% CI error bars
//! and the change vs A labelled (`bars.rs`); `throughput-<workload>` MB/s over time of
//! writes (`throughput.rs`); `latency-cdf-<workload>-<direction>` (`lines.rs`, which also
//! draws every line chart); `sweep-<name>-<direction>` against block size, queue depth
//! or job threads (`sweep.rs`); `align-diff` and `open-au` of probes ([`probe_chart`]);
//! `request-sizes` the sizes the mmc driver got per config (kernel evidence, `sizes.rs`).

mod bars;
pub mod draw;
mod lines;
pub mod probe_chart;
mod sizes;
mod sweep;
mod throughput;

use anyhow::Result;
use std::path::Path;

pub use bars::bar_charts;
pub use draw::{font_warning, save, ChartInput};
pub use lines::{latency_charts, Axis, Line, LineChart, LinePanel};
pub use sizes::size_chart;
pub use sweep::sweep_charts;
pub use throughput::{throughput_charts, throughput_notes};

/// Render every chart kind that has data; returns the file names written.
pub fn render_all(input: &ChartInput, dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for (stem, chart) in bar_charts(input.report) {
        files.extend(save(&chart, dir, &stem)?);
    }
    for (stem, chart) in throughput_charts(input) {
        files.extend(save(&chart, dir, &stem)?);
    }
    for (stem, chart) in latency_charts(input) {
        files.extend(save(&chart, dir, &stem)?);
    }
    for (stem, chart) in sweep_charts(input.report) {
        files.extend(save(&chart, dir, &stem)?);
    }
    if let Some((stem, chart)) = size_chart(input.report) {
        files.extend(save(&chart, dir, &stem)?);
    }
    Ok(files)
}
