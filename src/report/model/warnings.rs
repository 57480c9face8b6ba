//! Noise and drift warnings held to the standard of the verdicts (docs/statistics.md,
//! "Warnings"). A drift is warned about when its slope is significant after the same
//! correction as the verdicts, over the report's drift tests (one per config x block,
//! or per boot across boots), and taking it out of the config's runs moves the verdict
//! of a comparison the config is in; a CV above [`stats::HIGH_CV`] when it comes from
//! one run (the rest is quiet without it) and leaving that run out moves one. "Moves":
//! the change retested with the changed values, its p-value adjusted with the rest of
//! the report's unchanged, gives another verdict (called <-> not, or the direction).

use crate::report::model::{Block, ConfigRow, Report};
use crate::stats::counterfactual::{detrend, outlier, within_cv};
use crate::stats::multiple::{self, Correction};
use crate::stats::{self, boots, Change, Moves, Trend, Warning};

/// A config's values as the warnings take them apart: each value's place in the run
/// order (the run number; across boots, its place in its boot) and its boot.
#[derive(Debug, Clone)]
struct Side {
    values: Vec<f64>,
    order: Vec<f64>,
    boot: Vec<usize>,
    runs: Vec<u32>,
}

impl Side {
    fn of(row: &ConfigRow) -> Side {
        let (order, boot) = match &row.across {
            Some(a) => (a.position.clone(), a.boot.clone()),
            None => (
                row.runs.iter().map(|&r| f64::from(r)).collect(),
                vec![0; row.values.len()],
            ),
        };
        Side {
            values: row.values.clone(),
            order,
            boot,
            runs: row.runs.clone(),
        }
    }

    fn boots(&self) -> usize {
        self.boot.iter().max().map_or(0, |b| b + 1)
    }

    /// The values of one boot, with their order.
    fn boot_part(&self, b: usize) -> (Vec<f64>, Vec<f64>) {
        self.values
            .iter()
            .zip(&self.order)
            .zip(&self.boot)
            .filter(|(_, k)| **k == b)
            .map(|((v, x), _)| (*v, *x))
            .unzip()
    }

    fn grouped(&self) -> Vec<Vec<f64>> {
        (0..self.boots()).map(|b| self.boot_part(b).0).collect()
    }

    fn with_values(&self, values: Vec<f64>) -> Side {
        Side {
            values,
            ..self.clone()
        }
    }

    fn without(&self, i: usize) -> Side {
        let keep = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .enumerate()
                .filter(|(k, _)| *k != i)
                .map(|(_, x)| *x)
                .collect()
        };
        let mut boot = self.boot.clone();
        boot.remove(i);
        let mut runs = self.runs.clone();
        runs.remove(i);
        Side {
            values: keep(&self.values),
            order: keep(&self.order),
            boot,
            runs,
        }
    }
}

/// One drift test: a config's runs (in one boot) against their run order.
struct DriftTest {
    block: usize,
    row: usize,
    boot: usize,
    trend: Trend,
    mean: f64,
}

/// The report's tests as the correction saw them, to retest one change at a time.
struct Family<'a> {
    p: Vec<f64>,
    /// Index in `p` of each block's first row.
    first: Vec<usize>,
    correction: Correction,
    blocks: &'a [Block],
}

impl Family<'_> {
    fn of(blocks: &[Block], correction: Correction) -> Family<'_> {
        let mut first = Vec::with_capacity(blocks.len());
        let mut p = Vec::new();
        for b in blocks {
            first.push(p.len());
            p.extend(b.rows.iter().map(|r| r.change.map_or(f64::NAN, |c| c.p)));
        }
        Family {
            p,
            first,
            correction,
            blocks,
        }
    }

    /// The verdict of `new` against `base` in `block` had their values been these,
    /// the rest of the report as it is; None when the row has no tested verdict.
    fn moves(&self, block: usize, new: usize, base: usize, sides: (&Side, &Side)) -> Option<Moves> {
        let b = &self.blocks[block];
        let row = &b.rows[new];
        let (change, verdict) = (row.change?, row.verdict?);
        row.q?;
        let (base_side, new_side) = sides;
        let retested = retest(row, base_side, new_side)?;
        let i = self.first[block] + new;
        let mut p = self.p.clone();
        p[i] = retested.p;
        let q = multiple::adjust(&p, self.correction)[i];
        let without = stats::adjusted_verdict(&retested, q, b.metric.higher_is_better());
        (without != verdict).then(|| Moves {
            config: row.config.clone(),
            baseline: b.rows[base].config.clone(),
            rel: change.rel,
            verdict,
            rel_without: retested.rel,
            verdict_without: without,
            run: None,
        })
    }
}

/// The change of `row` tested as the report tested it, with other values.
fn retest(row: &ConfigRow, base: &Side, new: &Side) -> Option<Change> {
    match &row.across {
        Some(a) => {
            let tested =
                boots::boot_change(&base.grouped(), &new.grouped(), a.calibration.as_ref());
            (tested.model != boots::Model::OneBootPerSide).then_some(tested.change)
        }
        None => Some(stats::welch_change(&base.values, &new.values)),
    }
}

/// The comparisons row `i` of a block is in: (new, baseline) pairs of row indexes.
fn comparisons(block: &Block, i: usize) -> Vec<(usize, usize)> {
    let index = |name: &str| block.rows.iter().position(|r| r.config == name);
    let mut out = Vec::new();
    if let Some(base) = block.rows[i].baseline.as_deref().and_then(index) {
        out.push((i, base));
    }
    for (j, r) in block.rows.iter().enumerate() {
        if j != i && r.baseline.as_deref() == Some(block.rows[i].config.as_str()) {
            out.push((j, i));
        }
    }
    out
}

/// Put this row's changed side into a comparison and retest it.
fn retest_with(
    family: &Family,
    block: usize,
    (new, base): (usize, usize),
    mine: usize,
    changed: &Side,
) -> Option<Moves> {
    let rows = &family.blocks[block].rows;
    let (base_side, new_side) = if mine == new {
        (Side::of(&rows[base]), changed.clone())
    } else {
        (changed.clone(), Side::of(&rows[new]))
    };
    family.moves(block, new, base, (&base_side, &new_side))
}

/// Make the noise and drift warnings of `report`, whose verdicts are adjusted by
/// `correction` (called by [`super::correction::apply`]).
pub fn apply(report: &mut Report, correction: Correction) {
    let drifts = drift_family(&report.blocks, correction);
    let family = Family::of(&report.blocks, correction);
    let mut found: Vec<(usize, usize, Warning)> = Vec::new();
    for (bi, block) in report.blocks.iter().enumerate() {
        for i in 0..block.rows.len() {
            let mine: Vec<(&DriftTest, f64)> = drifts
                .iter()
                .filter(|(d, q)| d.block == bi && d.row == i && *q < multiple::ALPHA)
                .map(|(d, q)| (d, *q))
                .collect();
            if let Some(w) = noise(&family, bi, i) {
                found.push((bi, i, w));
            }
            if let Some(w) = drift(&family, bi, i, &mine) {
                found.push((bi, i, w));
            }
        }
    }
    for (bi, i, w) in found {
        report.blocks[bi].rows[i].warnings.push(w);
    }
}

/// Every drift test of the report (each row's runs against run order, boot by boot)
/// with its p-value adjusted over them all by `correction`: q.
fn drift_family(blocks: &[Block], correction: Correction) -> Vec<(DriftTest, f64)> {
    let tests = drift_tests(blocks);
    let p: Vec<f64> = tests.iter().map(|d| d.trend.p).collect();
    tests
        .into_iter()
        .zip(multiple::adjust(&p, correction))
        .collect()
}

/// Every drift test of the report.
fn drift_tests(blocks: &[Block]) -> Vec<DriftTest> {
    let mut out = Vec::new();
    for (bi, block) in blocks.iter().enumerate() {
        for (i, row) in block.rows.iter().enumerate() {
            if row.values.len() < 2 {
                continue;
            }
            let side = Side::of(row);
            for boot in 0..side.boots() {
                let (values, order) = side.boot_part(boot);
                if let Some(trend) = stats::trend(&order, &values) {
                    out.push(DriftTest {
                        block: bi,
                        row: i,
                        boot,
                        trend,
                        mean: stats::mean(&values),
                    });
                }
            }
        }
    }
    out
}

/// The drift warning of row `i`, whose significant drifts (q below alpha) are `mine`.
fn drift(family: &Family, block: usize, i: usize, mine: &[(&DriftTest, f64)]) -> Option<Warning> {
    if mine.is_empty() {
        return None;
    }
    let rows = &family.blocks[block].rows;
    let side = Side::of(&rows[i]);
    for pair in comparisons(&family.blocks[block], i) {
        let other = Side::of(&rows[if pair.0 == i { pair.1 } else { pair.0 }]);
        let to = stats::mean(&other.order);
        let mut values = side.values.clone();
        for (d, _) in mine {
            for k in (0..values.len()).filter(|&k| side.boot[k] == d.boot) {
                values[k] = detrend(&[values[k]], &[side.order[k]], d.trend.slope, to)[0];
            }
        }
        let Some(moves) = retest_with(family, block, pair, i, &side.with_values(values)) else {
            continue;
        };
        return Some(if side.boots() > 1 {
            Warning::DriftInBoots {
                boots: mine.len(),
                of: side.boots(),
                moves,
            }
        } else {
            let (d, q) = mine[0];
            Warning::Drift {
                slope_rel_per_run: d.trend.slope / d.mean,
                p: d.trend.p,
                q,
                moves,
            }
        });
    }
    None
}

/// The noise warning of row `i`: a CV above [`stats::HIGH_CV`] (of its runs within
/// their boots) that comes from one run (the rest is quiet without it) whose removal
/// moves a verdict. A CV spread over all runs is in the interval already.
fn noise(family: &Family, block: usize, i: usize) -> Option<Warning> {
    let rows = &family.blocks[block].rows;
    let side = Side::of(&rows[i]);
    let cv = within_cv(&side.values, &side.boot);
    if cv.is_nan() || cv <= stats::HIGH_CV {
        return None;
    }
    let k = outlier(&side.values, &side.boot)?;
    let rest = side.without(k);
    if within_cv(&rest.values, &rest.boot) > stats::HIGH_CV {
        return None;
    }
    comparisons(&family.blocks[block], i)
        .into_iter()
        .find_map(|pair| retest_with(family, block, pair, i, &rest))
        .map(|mut moves| {
            moves.run = Some(side.runs[k]);
            Warning::HighCv { cv, moves }
        })
}

#[cfg(test)]
#[path = "warnings_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "warnings_experiments.rs"]
mod experiments;
