//! The warnings of a results directory's rows about what its runs could measure
//! (docs/reading-reports.md, "Runs too short, writes inside the cache"): runs too short
//! to trust, write runs inside the card's stated cache (the rules of
//! [`crate::plan::length`]), and a knee in a direct write run's rate
//! ([`crate::stats::knee`]).

use crate::device::ext_csd::ExtCsd;
use crate::plan::length;
use crate::plan::spec::Plan;
use crate::record::{RunRow, SeriesRow};
use crate::report::load::dir::ResultsDir;
use crate::report::model::Report;
use crate::stats::{knee, Warning};
use crate::workload::result::Direction;

/// Add the run-length warnings to every row of `report`, built from `dir`.
pub fn apply(report: &mut Report, dir: &ResultsDir) {
    let measured = dir.measured();
    let min_s = length::min_seconds(dir.meta.clock_resolution_ns);
    let plan = Plan::parse(&dir.meta.plan_text).ok();
    for block in &mut report.blocks {
        let Some(direction) = block.direction else {
            continue;
        };
        let workload = plan.as_ref().and_then(|p| p.workload(&block.workload));
        let buffered = workload.is_some_and(|w| w.job.iter().any(|j| j.rw.writes() && !j.direct));
        let fixed_amount = workload.is_some_and(|w| w.uses_mmc_test());
        for row in &mut block.rows {
            let runs: Vec<&RunRow> = row
                .runs
                .iter()
                .filter_map(|&run| {
                    measured.iter().copied().find(|r| {
                        r.run == run && r.workload == block.workload && r.direction == direction
                    })
                })
                .collect();
            row.warnings
                .extend(too_short(&runs, min_s, dir, fixed_amount));
            if direction == Direction::Write {
                row.warnings.extend(inside_cache(
                    &runs,
                    cache_bytes(dir, &row.config),
                    fixed_amount,
                ));
                if !buffered {
                    row.warnings.extend(write_knee(&runs, &dir.series));
                }
            }
        }
    }
}

/// `fixed_amount`: the engine chose the amount (mmc_test), so the fix is not a plan key.
fn too_short(
    runs: &[&RunRow],
    min_s: f64,
    dir: &ResultsDir,
    fixed_amount: bool,
) -> Option<Warning> {
    let short: Vec<&RunRow> = runs.iter().copied().filter(|r| r.seconds < min_s).collect();
    let seconds = short.iter().map(|r| r.seconds).min_by(f64::total_cmp)?;
    Some(Warning::TooShort {
        runs: short.iter().map(|r| r.run).collect(),
        seconds,
        min_s,
        scale_down: dir.meta.scale_down.unwrap_or(1).max(1),
        fixed_amount,
    })
}

fn inside_cache(runs: &[&RunRow], cache_bytes: u64, fixed_amount: bool) -> Option<Warning> {
    let inside: Vec<&RunRow> = runs
        .iter()
        .copied()
        .filter(|r| length::inside_cache(r.bytes, cache_bytes))
        .collect();
    let bytes = inside.iter().map(|r| r.bytes).max()?;
    Some(Warning::InsideCache {
        runs: inside.iter().map(|r| r.run).collect(),
        bytes,
        cache_bytes,
        fixed_amount,
    })
}

/// The cache `config` ran with: its EXT_CSD as read when it was first verified, else
/// the device's as `mmcab info` read it at the start (0: none stated, off, or no eMMC).
fn cache_bytes(dir: &ResultsDir, config: &str) -> u64 {
    let meta = &dir.meta;
    let hex = meta
        .configs
        .iter()
        .find(|c| c.name == config && !c.ext_csd_hex.is_empty())
        .map(|c| c.ext_csd_hex.as_str())
        .or_else(|| {
            meta.device
                .as_ref()?
                .ext_csd
                .as_ref()
                .map(|x| x.raw.as_str())
        });
    hex.and_then(|h| ExtCsd::from_hex(h).ok())
        .map_or(0, |x| x.cache_in_use_bytes())
}

/// The first knee among `runs` (their series bins of full width, in time order).
fn write_knee(runs: &[&RunRow], series: &[SeriesRow]) -> Option<Warning> {
    runs.iter().find_map(|r| {
        let bins: Vec<&SeriesRow> = series
            .iter()
            .filter(|s| {
                s.run == r.run
                    && s.workload == r.workload
                    && s.job == r.job
                    && s.direction == Direction::Write
            })
            .collect();
        let width = bins.iter().map(|s| s.bin().1).fold(0.0, f64::max);
        let (starts, rates): (Vec<f64>, Vec<f64>) = bins
            .iter()
            .filter(|s| s.bin().1 >= 0.9 * width)
            .map(|s| (s.bin().0, s.mb_per_s))
            .unzip();
        let k = knee::knee(&rates)?;
        Some(Warning::WriteKnee {
            run: r.run,
            at_s: starts[k.at],
            before_mb_s: k.before,
            after_mb_s: k.after,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Meta;

    fn row(run: u32, seconds: f64, bytes: u64) -> RunRow {
        RunRow {
            bytes,
            seconds,
            mb_per_s: bytes as f64 / seconds / 1e6,
            ..RunRow::for_tests(run, "a", "w", Direction::Write)
        }
    }

    fn bin(run: u32, start_s: f64, mb_per_s: f64) -> SeriesRow {
        SeriesRow {
            run,
            config: "a".into(),
            workload: "w".into(),
            job: "all".into(),
            direction: Direction::Write,
            second: start_s as u32,
            mb_per_s,
            start_s: Some(start_s),
            width_s: Some(0.1),
        }
    }

    #[test]
    fn short_runs_are_named_with_the_shortest_and_the_fix() {
        let meta = Meta {
            scale_down: Some(4),
            ..Meta::default()
        };
        let dir = ResultsDir::for_tests("d", meta, Vec::new());
        let (a, b, c) = (
            row(1, 0.016, 4 << 20),
            row(3, 2.0, 1 << 30),
            row(5, 0.4, 4 << 20),
        );
        let w = too_short(&[&a, &b, &c], 1.0, &dir, false).unwrap();
        assert_eq!(
            w,
            Warning::TooShort {
                runs: vec![1, 5],
                seconds: 0.016,
                min_s: 1.0,
                scale_down: 4,
                fixed_amount: false,
            }
        );
        assert_eq!(too_short(&[&b], 1.0, &dir, false), None);
    }

    #[test]
    fn writes_under_twice_the_cache_are_named() {
        let (a, b) = (row(2, 1.0, 8 << 20), row(4, 1.0, 512 << 20));
        let w = inside_cache(&[&a, &b], 64 << 20, false).unwrap();
        assert_eq!(
            w,
            Warning::InsideCache {
                runs: vec![2],
                bytes: 8 << 20,
                cache_bytes: 64 << 20,
                fixed_amount: false,
            }
        );
        assert_eq!(inside_cache(&[&a], 0, false), None, "no cache stated");
    }

    #[test]
    fn a_knee_in_a_runs_series_is_found_where_it_falls() {
        let r = row(7, 4.0, 400 << 20);
        let mut series: Vec<SeriesRow> = (0..40)
            .map(|i| bin(7, f64::from(i) / 10.0, if i < 15 { 250.0 } else { 60.0 }))
            .collect();
        series.push(SeriesRow {
            width_s: Some(0.02),
            mb_per_s: 1.0,
            ..bin(7, 4.0, 0.0)
        });
        let w = write_knee(&[&r], &series).unwrap();
        assert_eq!(
            w,
            Warning::WriteKnee {
                run: 7,
                at_s: 1.5,
                before_mb_s: 250.0,
                after_mb_s: 60.0
            }
        );
        let flat: Vec<SeriesRow> = (0..40)
            .map(|i| bin(7, f64::from(i) / 10.0, 100.0))
            .collect();
        assert_eq!(write_knee(&[&r], &flat), None);
    }
}
