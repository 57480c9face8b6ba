//! Throughput over time of long writes (series.csv): one line per measured run, bins
//! as recorded (0.1 s and wider), and a note for write workloads whose runs are too
//! short to show a trend.

use super::draw::config_index;
use super::draw::ChartInput;
use super::lines::{label_first, Axis, Line, LineChart, LinePanel};
use crate::record::{SeriesRow, GROUP_JOB};
use crate::report::files::file_stem;
use crate::workload::result::Direction;
use std::collections::BTreeMap;

/// A write run gets a throughput-over-time line when it lasted at least this long and
/// has at least [`MIN_BINS`] full bins (0.1 s bins: half a second; mmcab 0.1 recorded
/// whole seconds, so its runs need 5 s).
pub const MIN_RUN_SECONDS: f64 = 0.5;
pub const MIN_BINS: usize = 5;

/// The points of one run's throughput over time, at the middle of each bin; bins of
/// half the run's bin width or less (a partial first or last bin) are left out.
fn run_points(rows: &[&SeriesRow]) -> Vec<(f64, f64)> {
    let nominal = rows.iter().map(|r| r.bin().1).fold(0.0, f64::max);
    let mut points: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.bin().1 > nominal / 2.0)
        .map(|r| {
            let (start, width) = r.bin();
            (start + width / 2.0, r.mb_per_s)
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// Write series rows per (workload, run) that stand for the whole run: the group rows
/// (job "all"), or the rows of the run's only job.
fn write_series<'a>(input: &'a ChartInput) -> BTreeMap<(String, u32), Vec<&'a SeriesRow>> {
    let mut by_run: BTreeMap<(String, u32), Vec<&SeriesRow>> = BTreeMap::new();
    for s in input
        .series
        .iter()
        .filter(|s| s.direction == Direction::Write)
    {
        by_run
            .entry((s.workload.clone(), s.run))
            .or_default()
            .push(s);
    }
    for rows in by_run.values_mut() {
        if rows.iter().any(|r| r.job == GROUP_JOB) {
            rows.retain(|r| r.job == GROUP_JOB);
        } else if rows.iter().any(|r| r.job != rows[0].job) {
            rows.clear();
        }
    }
    by_run.retain(|_, rows| !rows.is_empty());
    by_run
}

/// Whether a run's write lasted long enough, with enough bins, to show a trend.
fn long_enough(input: &ChartInput, workload: &str, run: u32, points: usize) -> bool {
    let seconds = input
        .runs
        .iter()
        .filter(|r| r.run == run && r.workload == workload && r.direction == Direction::Write)
        .map(|r| r.seconds)
        .fold(0.0, f64::max);
    seconds >= MIN_RUN_SECONDS && points >= MIN_BINS
}

/// Why a write workload has no throughput-over-time chart, one note per workload whose
/// runs are all too short (for the notes at the end of the report).
pub fn throughput_notes(input: &ChartInput) -> Vec<String> {
    let mut longest: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    let series = write_series(input);
    for r in input
        .runs
        .iter()
        .filter(|r| r.direction == Direction::Write)
    {
        let points = series
            .get(&(r.workload.clone(), r.run))
            .map_or(0, |rows| run_points(rows).len());
        let e = longest.entry(&r.workload).or_insert_with(|| {
            order.push(&r.workload);
            (0.0, 0)
        });
        e.0 = e.0.max(r.seconds);
        if long_enough(input, &r.workload, r.run, points) {
            e.1 += 1;
        }
    }
    order
        .into_iter()
        .filter_map(|w| {
            let (seconds, charted) = longest[w];
            (charted == 0).then(|| {
                if seconds < MIN_RUN_SECONDS {
                    format!(
                        "{w}: no throughput-over-time chart: its write runs last {seconds:.2} s \
                         at most, too short to show a trend ({MIN_RUN_SECONDS} s needed)"
                    )
                } else {
                    format!(
                        "{w}: no throughput-over-time chart: its runs have fewer than \
                         {MIN_BINS} throughput bins (results of mmcab 0.1 count whole seconds)"
                    )
                }
            })
        })
        .collect()
}

/// MB/s over time of every measured write run long enough to show a trend (see
/// `MIN_RUN_SECONDS`), one line per run, bins as recorded (0.1 s and wider).
pub fn throughput_charts(input: &ChartInput) -> Vec<(String, LineChart)> {
    let mut by_workload: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for ((workload, run), rows) in write_series(input) {
        let points = run_points(&rows);
        if !long_enough(input, &workload, run, points.len()) {
            continue;
        }
        if !order.contains(&workload) {
            order.push(workload.clone());
        }
        by_workload.entry(workload).or_default().push(Line {
            label: None,
            color_index: config_index(input.report, &rows[0].config),
            points,
            errors: Vec::new(),
        });
    }
    order
        .into_iter()
        .map(|w| {
            let mut lines = by_workload.remove(&w).unwrap_or_default();
            lines.sort_by_key(|l| l.color_index);
            label_first(&mut lines, input.report);
            (
                format!("throughput-{}", file_stem(&w)),
                LineChart {
                    title: format!("{w}: write throughput over time, one line per run"),
                    caption: crate::report::render::header::caption(input.report),
                    panels: vec![LinePanel {
                        title: format!("{w} [MB/s in each time bin]"),
                        x_desc: "time since start of run [s] (middle of each bin)".into(),
                        y_desc: "MB/s".into(),
                        x_axis: Axis::Linear,
                        y_max: None,
                        lines,
                        marks: Vec::new(),
                    }],
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(job: &str, start_s: f64, width_s: f64, mb_per_s: f64) -> SeriesRow {
        SeriesRow {
            run: 1,
            config: "a".into(),
            workload: "w".into(),
            job: job.into(),
            direction: Direction::Write,
            second: start_s as u32,
            mb_per_s,
            start_s: Some(start_s),
            width_s: Some(width_s),
        }
    }

    /// A steady 2.05 s write is a flat line of 20 points (the partial last bin left
    /// out), from the group rows only, not a triangle of one-second bins.
    #[test]
    fn a_steady_short_write_is_a_flat_line() {
        let mut rows: Vec<SeriesRow> = (0..20)
            .map(|i| series("all", f64::from(i) * 0.1, 0.1, 10.0))
            .collect();
        rows.push(series("all", 2.0, 0.05, 10.0));
        rows.extend((0..20).map(|i| series("w.0", f64::from(i) * 0.1, 0.1, 5.0)));
        let report = crate::report::model::Report {
            configs: vec!["a".into()],
            baseline: "a".into(),
            ..Default::default()
        };
        let run = |seconds: f64| crate::record::RunRow {
            seconds,
            ..crate::record::RunRow::for_tests(1, "a", "w", Direction::Write)
        };
        let mut input = ChartInput {
            report: &report,
            runs: vec![run(2.05)],
            series: rows,
            latency: Vec::new(),
        };
        let charts = throughput_charts(&input);
        assert_eq!(charts.len(), 1);
        let points = &charts[0].1.panels[0].lines[0].points;
        assert_eq!(points.len(), 20);
        assert!(points.iter().all(|p| p.1 == 10.0), "{points:?}");
        assert!((points[0].0 - 0.05).abs() < 1e-9);
        assert!(throughput_notes(&input).is_empty());
        // The same run lasting 0.4 s: no chart, and a note that says why.
        input.runs = vec![run(0.4)];
        assert!(throughput_charts(&input).is_empty());
        let notes = throughput_notes(&input);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("0.40 s") && notes[0].contains("too short"),
            "{notes:?}"
        );
    }
}
