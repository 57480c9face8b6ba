//! Comparisons across boots (`mmcab compare`): each results directory is one boot, and
//! the rows of a report built from the merged directories are regrouped by boot. Every
//! row gets its side's spread (between boots and within a boot); every compared row
//! gets its change tested with boots as the unit ([`crate::stats::boots`]), replacing
//! the runs-as-replicates test the merged report started with. A side of several boots
//! is summarised over its boot means (n = boots), replacing the summary of its pooled
//! runs; a side of one boot keeps the summary of its runs.

use crate::report::model::{Across, Block, ConfigRow};
use crate::stats::boots::{self, CalibratedSpread, Model};
use crate::stats::{self, Verdict};
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;

/// Which boot a run (its number in the merged directories) belongs to; None for a run
/// of no boot.
pub type BootOfRun<'a> = &'a dyn Fn(u32) -> Option<usize>;
/// The stored boot-to-boot spread for a row of a block, if a calibration has one.
pub type CalibrationOf<'a> = &'a dyn Fn(&Block, &ConfigRow) -> Option<CalibratedSpread>;

/// The runs of a row in one boot: run numbers and values, in run order.
#[derive(Debug, Default)]
struct BootRuns {
    runs: Vec<u32>,
    values: Vec<f64>,
}

/// A row's values grouped by boot, boots in order; a run of no boot is an error.
fn by_boot(block: &Block, row: &ConfigRow, boot_of: BootOfRun) -> Result<Vec<BootRuns>> {
    let mut groups: BTreeMap<usize, BootRuns> = BTreeMap::new();
    for (run, value) in row.runs.iter().zip(&row.values) {
        let boot = boot_of(*run).ok_or_else(|| {
            anyhow!(
                "run {run} of {} ({}) is in no boot's runs.csv",
                row.config,
                crate::report::render::wording::block_title(block)
            )
        })?;
        let g = groups.entry(boot).or_default();
        g.runs.push(*run);
        g.values.push(*value);
    }
    Ok(groups.into_values().collect())
}

/// Regroup every block's rows by boot and test their changes across boots.
pub fn apply(blocks: &mut [Block], boot_of: BootOfRun, calibration: CalibrationOf) -> Result<()> {
    for block in blocks.iter_mut() {
        let groups = block
            .rows
            .iter()
            .map(|r| by_boot(block, r, boot_of))
            .collect::<Result<Vec<Vec<BootRuns>>>>()?;
        let starts = boot_starts(&groups, boot_of);
        let values =
            |i: usize| -> Vec<Vec<f64>> { groups[i].iter().map(|g| g.values.clone()).collect() };
        let index: BTreeMap<String, usize> = block
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.config.clone(), i))
            .collect();
        let mut updated = Vec::with_capacity(block.rows.len());
        for (i, row) in block.rows.iter().enumerate() {
            let mut row = row.clone();
            let mine = values(i);
            let spread = boots::spread(&mine);
            if spread.boots > 1 {
                // The side's summary is over its boot means, as its test: every output
                // (tables, summary.csv, report.json, LAVA) then agrees with the change.
                // Its noise and drift are warned about later, boot by boot
                // (model::warnings); the pooled runs' own warnings do not apply.
                row.summary = stats::summarize(&boots::boot_means(&mine));
                row.warnings = Vec::new();
            }
            let (boot, position) = places(&row, boot_of, &starts);
            let mut across = Across {
                spread,
                model: None,
                boots_needed: None,
                boot,
                position,
                calibration: None,
            };
            let base = row.baseline.as_ref().and_then(|b| index.get(b)).copied();
            if let Some(base) = base {
                let cal = calibration(block, &row);
                let tested = boots::boot_change(&values(base), &mine, cal.as_ref());
                across.calibration = cal;
                row.change = Some(tested.change);
                row.verdict = Some(match tested.model {
                    Model::OneBootPerSide => Verdict::OneBootPerSide,
                    _ => stats::verdict(&tested.change, block.metric.higher_is_better()),
                });
                across.model = Some(tested.model);
                across.boots_needed =
                    boots::boots_needed(tested.boot_mean_rel_var, tested.change.rel);
            }
            row.across = Some(across);
            updated.push(row);
        }
        block.rows = updated;
    }
    Ok(())
}

/// Each boot's first run in the block (of any config), by boot.
fn boot_starts(groups: &[Vec<BootRuns>], boot_of: BootOfRun) -> BTreeMap<usize, u32> {
    let mut starts: BTreeMap<usize, u32> = BTreeMap::new();
    for run in groups.iter().flatten().flat_map(|g| &g.runs) {
        if let Some(boot) = boot_of(*run) {
            let first = starts.entry(boot).or_insert(*run);
            *first = (*first).min(*run);
        }
    }
    starts
}

/// The boot (numbered within the side) and the place in its boot of each of a row's
/// values, in the row's order: what the warnings retest a change with.
fn places(
    row: &ConfigRow,
    boot_of: BootOfRun,
    starts: &BTreeMap<usize, u32>,
) -> (Vec<usize>, Vec<f64>) {
    let boots: Vec<usize> = row.runs.iter().filter_map(|r| boot_of(*r)).collect();
    let mut index: Vec<usize> = boots.clone();
    index.sort_unstable();
    index.dedup();
    row.runs
        .iter()
        .zip(&boots)
        .map(|(run, boot)| {
            let k = index.binary_search(boot).unwrap_or(0);
            let start = starts.get(boot).copied().unwrap_or(*run);
            (k, f64::from(run - start))
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{against, rows_for, Metric, Sample};
    use crate::workload::result::Direction;

    #[test]
    fn a_run_of_no_boot_is_an_error() {
        let metric = Metric::MbPerS;
        let sample = |run: u32, value: f64| Sample {
            config: "a".to_string(),
            run,
            value,
        };
        let samples = vec![sample(1, 10.0), sample(2, 11.0)];
        let rows = rows_for(&["a".to_string()], &against("a"), &metric, &samples);
        let mut blocks = vec![Block {
            workload: "w".into(),
            direction: Some(Direction::Write),
            metric,
            headline: true,
            block_size_bytes: None,
            sweep: None,
            sweeps: Vec::new(),
            rows,
        }];
        let boot_of = |run: u32| (run == 1).then_some(0);
        let err = apply(&mut blocks, &boot_of, &|_, _| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "run 2 of a (w, write) is in no boot's runs.csv"
        );
    }
}
