//! What every chart kind draws with: the embedded font, the palette, the input, the
//! frame with its caption, grids of panels with a legend, and saving as SVG and PNG.

use crate::record::{LatencyRow, RunRow, SeriesRow};
use crate::report::model::Report;
use anyhow::{anyhow, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Family name the embedded font is registered under.
pub const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();
static FONT_REJECTED: AtomicBool = AtomicBool::new(false);

fn register_font() {
    REGISTER.call_once(|| {
        // The bytes are a valid TTF checked in with the source; a failure here is a
        // build problem, reported by the chart test.
        if plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_err() {
            FONT_REJECTED.store(true, Ordering::Relaxed);
        }
    });
}

/// Set when the embedded font was rejected: the charts were drawn without text.
pub fn font_warning() -> Option<&'static str> {
    FONT_REJECTED
        .load(Ordering::Relaxed)
        .then_some("the embedded font was rejected; chart text is missing")
}

/// Colours by config index (colour-blind-safe Okabe-Ito order).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(240, 228, 66),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A config's colour index: its place in the report (the same colour in every chart).
pub fn config_index(report: &Report, config: &str) -> usize {
    report.configs.iter().position(|c| c == config).unwrap_or(0)
}

/// A size on an axis or under a bar: `4k`, `512k`, `1M`, `2G`, `1.5k`, `512` (bytes).
pub fn size_label(bytes: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    if bytes >= 1024 {
        format!("{:.1}k", bytes as f64 / 1024.0)
    } else {
        bytes.to_string()
    }
}

/// What every chart kind gets: the report plus the runs.csv rows, throughput bins and
/// latency points of measured (non-warm-up) runs, config names as in the report.
pub struct ChartInput<'a> {
    pub report: &'a Report,
    pub runs: Vec<RunRow>,
    pub series: Vec<SeriesRow>,
    pub latency: Vec<LatencyRow>,
}

/// A drawable chart.
pub trait Chart {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>;
}

/// Write `<stem>.svg` and `<stem>.png` into `dir`; returns the two file names.
pub fn save(chart: &impl Chart, dir: &Path, stem: &str) -> Result<Vec<String>> {
    register_font();
    let svg = format!("{stem}.svg");
    let png = format!("{stem}.png");
    {
        let path = dir.join(&svg);
        let root = SVGBackend::new(&path, chart.size()).into_drawing_area();
        chart
            .draw(&root)
            .and_then(|_| root.present())
            .map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    }
    {
        let path = dir.join(&png);
        let (w, h) = chart.size();
        let mut rgb = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            chart
                .draw(&root)
                .and_then(|_| root.present())
                .map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
        }
        write_png(&path, (w, h), &rgb).with_context(|| {
            format!("writing {}: is {} writable?", path.display(), dir.display())
        })?;
    }
    Ok(vec![svg, png])
}

/// An 8-bit RGB image as a PNG file: default compression, adaptive filtering. The pixels
/// are those plotters' own encoder (through the image crate) wrote, in files 2-7 times
/// smaller (the reference reports' charts, results/reference/, decoded and compared).
fn write_png(path: &Path, (w, h): (u32, u32), rgb: &[u8]) -> Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Default);
    encoder.set_filter(png::FilterType::Sub);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(())
}

/// White background, a title on top and the caption (device, kernel, n) at the bottom;
/// returns the area left for the plot.
pub fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    caption: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    // About 7.5 px per character at 14 px.
    let max_chars = ((w.saturating_sub(24)) as f64 / 7.5) as usize;
    let lines = caption_lines(caption, max_chars);
    let (top, bottom) = root.split_vertically(h.saturating_sub(10 + 18 * lines.len() as u32));
    for (i, line) in lines.iter().enumerate() {
        bottom.draw_text(
            line,
            &(FONT, 14).into_font().color(&BLACK.mix(0.75)),
            (12, 6 + 18 * i as i32),
        )?;
    }
    top.titled(title, (FONT, 20))
}

/// The caption's ` | `-separated parts (device, kernel, n) on at most two lines of
/// `max_chars`; a part too long for a line of its own is cut with "...", so the parts
/// after it (kernel, n) stay visible.
fn caption_lines(caption: &str, max_chars: usize) -> Vec<String> {
    let cut = |part: &str| -> String {
        if part.chars().count() > max_chars {
            let kept: String = part.chars().take(max_chars.saturating_sub(3)).collect();
            format!("{kept}...")
        } else {
            part.to_string()
        }
    };
    let mut lines: Vec<String> = Vec::new();
    for part in caption.split(" | ") {
        let fits = lines
            .last()
            .is_some_and(|l| l.chars().count() + 3 + part.chars().count() <= max_chars);
        if fits {
            let line = lines.last_mut().expect("checked above");
            line.push_str(" | ");
            line.push_str(part);
        } else if lines.len() < 2 {
            lines.push(cut(part));
        } else {
            let last = lines.last_mut().expect("two lines");
            *last = cut(&format!("{last} | {part}"));
        }
    }
    lines
}

/// Panels laid out in a grid at most `columns` wide: (rows, columns).
pub fn grid(panels: usize, columns: usize) -> (usize, usize) {
    let n = panels.max(1);
    let cols = n.min(columns);
    (n.div_ceil(cols), cols)
}

/// Pixel size of a chart of `(rows, columns)` panels of `panel` pixels each, with room
/// for the title, the legend and the caption.
pub fn grid_size((rows, cols): (usize, usize), panel: (u32, u32)) -> (u32, u32) {
    ((panel.0 * cols as u32).max(640), panel.1 * rows as u32 + 96)
}

/// A row of colour boxes naming the configs (each colour once, in config order) above
/// the panels, one legend for all (config colours are the same everywhere); returns the
/// cells of a `(rows, columns)` grid below it.
pub fn legend_and_cells<'a, DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: impl Iterator<Item = (usize, &'a str)>,
    grid: (usize, usize),
) -> Result<Vec<DrawingArea<DB, Shift>>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (top, rest) = area.split_vertically(26);
    let mut seen: Vec<(usize, &str)> = Vec::new();
    for (i, name) in entries {
        if !seen.iter().any(|(j, _)| *j == i) {
            seen.push((i, name));
        }
    }
    seen.sort_by_key(|(i, _)| *i);
    let mut x = 70i32;
    for (i, name) in seen {
        top.draw(&Rectangle::new([(x, 6), (x + 14, 20)], color(i).filled()))?;
        top.draw_text(name, &(FONT, 14).into_font().color(&BLACK), (x + 20, 5))?;
        x += 44 + (name.chars().count() as f64 * 7.5) as i32;
    }
    Ok(rest.split_evenly(grid))
}

/// Drawing a panel of a chart into its cell.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart of panels in a grid under one legend of config colours, in a frame with its
/// title and caption: the bar charts (`bars-*`, `request-sizes`). Each says its panels
/// and draws one; its size and the rest of the drawing are this trait's [`Chart`].
pub trait PanelGrid {
    type Panel;
    /// Pixels of one panel (width, height).
    const PANEL_SIZE: (u32, u32);
    /// Panels in a row at most.
    const COLUMNS: usize;

    fn title(&self) -> &str;
    fn caption(&self) -> &str;
    fn panels(&self) -> &[Self::Panel];
    /// A panel's (colour index, config) pairs, for the legend.
    fn legend(panel: &Self::Panel) -> impl Iterator<Item = (usize, &str)>;
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Self::Panel,
    ) -> DrawResult<DB>;

    fn grid(&self) -> (usize, usize) {
        grid(self.panels().len(), Self::COLUMNS)
    }
}

impl<T: PanelGrid> Chart for T {
    fn size(&self) -> (u32, u32) {
        grid_size(self.grid(), T::PANEL_SIZE)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let area = frame(root, self.title(), self.caption())?;
        let entries = self.panels().iter().flat_map(T::legend);
        let cells = legend_and_cells(&area, entries, self.grid())?;
        for (cell, panel) in cells.iter().zip(self.panels()) {
            self.draw_panel(cell, panel)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod caption_tests {
    use super::caption_lines;

    #[test]
    fn long_captions_wrap_and_keep_n() {
        let c = "QEMU!! (manfid 0x0000aa) 64 MiB eMMC, 8-bit 52 MHz mmc high-speed | Linux 7.2.13+deb14-armmp | n = 3";
        let lines = caption_lines(c, 80);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[1].ends_with("n = 3"), "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:?}");
        assert_eq!(
            caption_lines("dev | Linux 6.12 | n = 5", 80),
            vec!["dev | Linux 6.12 | n = 5"]
        );
    }
}
