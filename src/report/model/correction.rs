//! One multiple-comparison correction per report: every tested change of every block
//! (all workloads, directions, metrics and config pairs, not only the headline ones)
//! is one test of the family; a verdict needs its adjusted p-value q below 0.05 (see
//! [`crate::stats::multiple`] for the choice of Benjamini-Hochberg).

use crate::report::model::Report;
use crate::stats::{self, multiple, multiple::Correction};

/// Adjust the p-values of `report` together and redo the verdicts with them.
pub fn apply(report: &mut Report, correction: Correction) {
    let p: Vec<f64> = report
        .blocks
        .iter()
        .flat_map(|b| &b.rows)
        .map(|r| r.change.map_or(f64::NAN, |c| c.p))
        .collect();
    let q = multiple::adjust(&p, correction);
    let mut q = q.into_iter();
    for block in &mut report.blocks {
        let higher = block.metric.higher_is_better();
        for row in &mut block.rows {
            let q = q.next().unwrap_or(f64::NAN);
            let Some(change) = row.change else { continue };
            if q.is_nan() {
                continue;
            }
            row.q = Some(q);
            row.verdict = Some(stats::adjusted_verdict(&change, q, higher));
        }
    }
    report.correction = Some(correction);
    report.tests = multiple::tests(&p);
    // Noise and drift are warned about where they move one of these verdicts.
    super::warnings::apply(report, correction);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::{dir, results};
    use crate::stats::Verdict;
    use std::path::Path;

    fn loop_report() -> Report {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        results::build(&dir::load(&fixture).expect("fixture"), None).expect("build")
    }

    #[test]
    fn every_tested_row_gets_q_and_only_q_below_alpha_calls() {
        let plain = loop_report();
        let mut corrected = plain.clone();
        apply(&mut corrected, Correction::BenjaminiHochberg);
        let tested = plain
            .blocks
            .iter()
            .flat_map(|b| &b.rows)
            .filter(|r| r.change.is_some_and(|c| !c.p.is_nan()))
            .count();
        assert_eq!(corrected.tests, tested);
        assert!(tested >= 20, "2 configs x 5 workloads x 4 metrics");
        let rows = plain.blocks.iter().flat_map(|b| &b.rows);
        let (mut called, mut dropped) = (0, 0);
        for (before, after) in rows.zip(corrected.blocks.iter().flat_map(|b| &b.rows)) {
            let Some(q) = after.q else {
                assert!(after.change.is_none_or(|c| c.p.is_nan()));
                continue;
            };
            let p = after.change.expect("change").p;
            assert!(q >= p, "q {q} < p {p}");
            let significant = matches!(after.verdict, Some(Verdict::Faster | Verdict::Slower));
            assert_eq!(
                significant,
                q < multiple::ALPHA && before.verdict == after.verdict
            );
            called += usize::from(significant);
            dropped += usize::from(
                !significant && matches!(before.verdict, Some(Verdict::Faster | Verdict::Slower)),
            );
        }
        // The fixture's one "slower" (seq-write, p = 0.019, CV 34%) is one small p among
        // 20 tests: after Benjamini-Hochberg (q = 0.127) it is no longer called.
        assert_eq!((called, dropped), (0, 3), "MB/s, IOPS and mean latency");
        // Holm is never less strict than BH.
        let mut holm = plain;
        apply(&mut holm, Correction::Holm);
        let q = |r: &Report| -> Vec<f64> {
            r.blocks
                .iter()
                .flat_map(|b| &b.rows)
                .filter_map(|r| r.q)
                .collect()
        };
        assert!(q(&holm).iter().zip(q(&corrected)).all(|(h, b)| *h >= b));
    }
}
