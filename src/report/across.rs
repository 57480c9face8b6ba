//! Comparisons across boots (`mmcab compare`): each results directory is one boot, and
//! the rows of a report built from the merged directories are regrouped by boot. Every
//! row gets its side's spread (between boots and within a boot); every compared row
//! gets its change tested with boots as the unit ([`crate::stats::boots`]), replacing
//! the runs-as-replicates test the merged report started with. A side of several boots
//! is summarised over its boot means (n = boots), replacing the summary of its pooled
//! runs; a side of one boot keeps the summary of its runs.

use super::model::{Across, Block, ConfigRow};
use crate::stats::boots::{self, CalibratedSpread, Model};
use crate::stats::{self, Verdict, Warning};
use std::collections::BTreeMap;

/// Which boot a run (its number in the merged directories) belongs to.
pub type BootOfRun<'a> = &'a dyn Fn(u32) -> Option<usize>;
/// The stored boot-to-boot spread for a row of a block, if a calibration has one.
pub type CalibrationOf<'a> = &'a dyn Fn(&Block, &ConfigRow) -> Option<CalibratedSpread>;

/// The runs of a row in one boot: run numbers and values, in run order.
#[derive(Debug, Default)]
struct BootRuns {
    runs: Vec<f64>,
    values: Vec<f64>,
}

/// A row's values grouped by boot, boots in order.
fn by_boot(row: &ConfigRow, boot_of: BootOfRun) -> Vec<BootRuns> {
    let mut groups: BTreeMap<usize, BootRuns> = BTreeMap::new();
    for (run, value) in row.runs.iter().zip(&row.values) {
        let boot = boot_of(*run as u32).unwrap_or(usize::MAX);
        let g = groups.entry(boot).or_default();
        g.runs.push(*run);
        g.values.push(*value);
    }
    groups.into_values().collect()
}

/// Regroup every block's rows by boot and test their changes across boots.
pub fn apply(blocks: &mut [Block], boot_of: BootOfRun, calibration: CalibrationOf) {
    for block in blocks.iter_mut() {
        let groups: Vec<Vec<BootRuns>> = block.rows.iter().map(|r| by_boot(r, boot_of)).collect();
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
                row.summary = stats::summarize(&boots::boot_means(&mine));
                row.warnings = side_warnings(&groups[i], &spread);
            }
            let mut across = Across {
                spread,
                model: None,
                boots_needed: None,
            };
            let base = row.baseline.as_ref().and_then(|b| index.get(b)).copied();
            if let Some(base) = base {
                let cal = calibration(block, &row);
                let tested = boots::boot_change(&values(base), &mine, cal.as_ref());
                row.change = Some(tested.change);
                row.verdict = Some(match tested.model {
                    Model::OneBootPerSide => Verdict::OneBootPerSide,
                    _ => stats::verdict(&tested.change, block.metric.higher_is_better),
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
}

/// Warnings of a side with several boots: noisy runs (pooled within-boot CV), runs
/// drifting within some of its boots. (Run order across boots is no drift: the boots'
/// own offsets are the spread the test uses.)
fn side_warnings(groups: &[BootRuns], spread: &boots::Spread) -> Vec<Warning> {
    let mut out = Vec::new();
    if spread.run_cv() > stats::HIGH_CV {
        out.push(Warning::HighCv {
            cv: spread.run_cv(),
        });
    }
    let drifting = groups
        .iter()
        .filter(|g| stats::trend(&g.runs, &g.values).is_some_and(|t| t.p < stats::DRIFT_ALPHA))
        .count();
    if drifting > 0 {
        out.push(Warning::DriftInBoots {
            boots: drifting,
            of: groups.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::compare::{build, Sides};
    use super::super::load::ResultsDir;
    use super::super::{csv, json, lava, markdown};
    use crate::record::{ConfigMeta, Meta, RunRow};
    use crate::stats::{mean, summarize};
    use crate::workload::result::Direction;

    /// One boot: a results directory of one config whose runs wrote `values` MB/s.
    fn boot(name: &str, label: &str, values: &[f64]) -> ResultsDir {
        let runs = values
            .iter()
            .enumerate()
            .map(|(i, &v)| RunRow {
                bytes: 1 << 20,
                mb_per_s: v,
                iops: v,
                ..RunRow::for_tests(i as u32 + 1, "as-is", "w", Direction::Write)
            })
            .collect();
        let meta = Meta {
            label: label.into(),
            plan_sha256: "abc".into(),
            device_summary: "dev".into(),
            configs: vec![ConfigMeta {
                name: "as-is".into(),
                ..Default::default()
            }],
            workloads: vec!["w".into()],
            ..Default::default()
        };
        ResultsDir::for_tests(name, meta, runs)
    }

    /// Sides of two boots with 4 + 2 and 3 + 1 runs: the pooled runs' mean (10.7 for
    /// A) is not the mean of the boot means (11.05). Every output gives the side's
    /// summary over its boot means, n = boots, and the change is the change of those.
    #[test]
    fn a_side_of_several_boots_is_summarised_over_its_boot_means() {
        let a = [vec![10.0, 10.2, 9.8, 10.0], vec![12.0, 12.2]];
        let b = [vec![11.0, 11.2, 10.8], vec![11.5]];
        let sides = Sides::two(
            vec![boot("a1", "v1", &a[0]), boot("a2", "v1", &a[1])],
            vec![boot("b1", "v2", &b[0]), boot("b2", "v2", &b[1])],
        );
        let (report, _) = build(&sides, false, None).expect("compare");
        let block = report
            .blocks
            .iter()
            .find(|b| b.metric.key == "mb_per_s")
            .expect("MB/s block");
        let means = |side: &[Vec<f64>; 2]| -> Vec<f64> { side.iter().map(|x| mean(x)).collect() };
        let (ra, rb) = (&block.rows[0], &block.rows[1]);
        assert_eq!((ra.config.as_str(), rb.config.as_str()), ("v1", "v2"));
        for (row, side) in [(ra, &a), (rb, &b)] {
            let want = summarize(&means(side));
            assert_eq!(row.summary, want, "{}", row.config);
            assert_eq!(row.summary.n, 2);
            let spread = row.across.as_ref().expect("across").spread;
            assert_eq!(
                (row.summary.ci_low, row.summary.ci_high),
                (spread.ci_low, spread.ci_high)
            );
        }
        assert!((ra.summary.mean - 11.05).abs() < 1e-12);
        assert_ne!(mean(&ra.values), ra.summary.mean, "runs pooled differ");
        let change = rb.change.expect("change");
        let rel = (rb.summary.mean - ra.summary.mean) / ra.summary.mean;
        assert!((change.rel - rel).abs() < 1e-12, "{change:?} vs {rel}");

        // summary.csv, report.json, report.md and LAVA say the same.
        let text = csv::render(&report).expect("csv");
        let mut reader = ::csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().expect("header").clone();
        let col = |name: &str| header.iter().position(|h| h == name).expect(name);
        let row = reader
            .records()
            .map(|r| r.expect("record"))
            .find(|r| &r[col("config")] == "v1" && &r[col("metric")] == "mb_per_s")
            .expect("v1 row");
        assert_eq!(&row[col("n")], "2");
        let csv_mean: f64 = row[col("mean")].parse().expect("mean");
        assert!((csv_mean - 11.05).abs() < 1e-12);
        let csv_sd: f64 = row[col("sd")].parse().expect("sd");
        assert!((csv_sd - ra.summary.sd).abs() < 1e-12);

        let value: serde_json::Value =
            serde_json::from_str(&json::render(&report).expect("json")).expect("parses");
        let rows = value["blocks"]
            .as_array()
            .expect("blocks")
            .iter()
            .find(|b| b["metric"]["key"] == "mb_per_s")
            .expect("block")["rows"]
            .clone();
        assert_eq!(rows[0]["summary"]["n"], 2);
        assert!((rows[0]["summary"]["mean"].as_f64().expect("mean") - 11.05).abs() < 1e-12);

        let md = markdown::render(&report, &[]);
        assert!(md.contains("| v1 | 2 | 11.05 |"), "{md}");
        let signals = lava::signals(&report, None);
        let v1 = signals
            .iter()
            .find(|l| l.contains(".mb_per_s.v1 "))
            .expect("v1 signal");
        assert!(v1.contains("MEASUREMENT=11.05 "), "{v1}");
    }
}
