//! Charts of a probe: `align-diff` (flashbench -a's diff against the alignment, log2
//! axis, the estimated erase block and page marked) and `open-au` (MB/s against the
//! write size, one line per unit count and order), one panel for the run and one for
//! each published output given to compare with.

use super::lines::{Axis, Line, LineChart, LinePanel};
use crate::probe::align;
use crate::probe::record::{ProbeKind, ProbeRecord};
use crate::units::format_size;

/// Short name of a record for a panel title: the measured run, or a published one.
fn who(record: &ProbeRecord) -> String {
    if record.started_unix_s > 0.0 {
        format!("this run ({})", record.target)
    } else {
        let source = record.source.split(',').next().unwrap_or(&record.source);
        format!("published: {source}")
    }
}

fn align_panel(record: &ProbeRecord, first: bool) -> LinePanel {
    let slow = align::disturbed(&record.align);
    let mut points: Vec<(f64, f64)> = record
        .align
        .iter()
        .zip(slow)
        .filter(|(r, slow)| r.reliable && !slow)
        .map(|(r, _)| (r.align as f64, r.diff_ns / 1e3))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let est = align::estimate(&record.align);
    let mut marks = Vec::new();
    for (b, what) in [(&est.erase_block, "erase block"), (&est.page, "page")] {
        if let Some(bytes) = b.bytes {
            marks.push((
                bytes as f64,
                format!("{what} {} ({})", format_size(bytes), b.confidence.as_str()),
            ));
        }
    }
    LinePanel {
        title: who(record),
        x_desc: "alignment [bytes, log2 scale]".into(),
        y_desc: "diff = on - (pre + post) / 2 [us]".into(),
        x_axis: Axis::LogSize,
        y_max: None,
        lines: vec![Line {
            label: None,
            color_index: usize::from(!first),
            points,
            errors: Vec::new(),
        }],
        marks,
    }
}

fn open_au_panel(record: &ProbeRecord) -> LinePanel {
    let lines = record
        .open_au
        .iter()
        .enumerate()
        .map(|(i, run)| Line {
            label: Some(format!(
                "nr={}{}",
                run.nr,
                if run.random { " random" } else { "" }
            )),
            color_index: i,
            points: {
                let mut pts: Vec<(f64, f64)> = run
                    .points
                    .iter()
                    .filter(|p| p.measured())
                    .map(|p| (p.size as f64, p.mb_per_s))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts
            },
            errors: Vec::new(),
        })
        .collect();
    LinePanel {
        title: who(record),
        x_desc: "write size [bytes, log2 scale]".into(),
        y_desc: "MB/s".into(),
        x_axis: Axis::LogSize,
        y_max: None,
        lines,
        marks: Vec::new(),
    }
}

/// The probe's chart (file stem, chart), its panels the run then the published ones of
/// the same kind.
pub fn probe_chart(record: &ProbeRecord, published: &[ProbeRecord]) -> Option<(String, LineChart)> {
    let same: Vec<&ProbeRecord> = std::iter::once(record)
        .chain(published.iter().filter(|p| p.kind == record.kind))
        .collect();
    let (stem, title) = match record.kind {
        ProbeKind::Align if !record.align.is_empty() => (
            "align-diff",
            "flashbench -a: extra time of a read across each power-of-two alignment",
        ),
        ProbeKind::OpenAu if !record.open_au.is_empty() => (
            "open-au",
            "flashbench --open-au: MB/s against write size, per number of open units",
        ),
        _ => return None,
    };
    let panels = same
        .iter()
        .enumerate()
        .map(|(i, r)| match r.kind {
            ProbeKind::Align => align_panel(r, i == 0),
            ProbeKind::OpenAu => open_au_panel(r),
        })
        .collect();
    let caption = format!(
        "{} | {} | {}",
        record.device, record.kernel_release, record.source
    );
    Some((
        stem.to_string(),
        LineChart {
            title: title.into(),
            caption,
            panels,
        },
    ))
}
