//! Regression gates for CI (`--fail-if slower [--threshold 3%]` on `mmcab report` and
//! `mmcab compare`): a thin layer over the report model's changes and verdicts, so it
//! holds for whatever model produced them (one results dir, or boots compared).
//!
//! Every compared row (a config with a baseline) of every headline block (the metrics
//! of the mail text) is one check:
//! - `slower`: fails when the report's verdict for the row is `slower` (its 95% CI clear
//!   of zero and, where the report adjusts p-values together, its q below 0.05) and the
//!   whole CI of the change lies beyond `-threshold` (for MB/s and IOPS; beyond
//!   `+threshold` for latencies): slower by more than the threshold at 95% confidence.
//! - `faster`: the mirror image (a change that should not speed anything up).
//! - `changed`: either.
//!
//! A row without a verdict (fewer than 2 runs on a side, single published numbers, one
//! boot per side without a calibration) cannot pass or fail: it is inconclusive. The gate as a
//! whole fails when any check fails, else is inconclusive when any check is, else passes.

use super::model::{Block, ConfigRow, Report};
use crate::stats::{Verdict, CONFIDENCE};
use serde::Serialize;

/// What makes a check fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailIf {
    Slower,
    Faster,
    Changed,
}

impl FailIf {
    pub fn as_str(self) -> &'static str {
        match self {
            FailIf::Slower => "slower",
            FailIf::Faster => "faster",
            FailIf::Changed => "changed",
        }
    }
}

/// A gate: what fails, and the smallest change that counts (a fraction, 0.03 = 3%).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateRule {
    pub fail_if: FailIf,
    pub threshold: f64,
}

impl GateRule {
    /// `slower by more than 3% at 95% confidence`.
    pub fn describe(&self) -> String {
        let by = if self.threshold > 0.0 {
            format!(" by more than {}%", trim_pct(self.threshold))
        } else {
            String::new()
        };
        format!(
            "fail if {}{by} at {:.0}% confidence",
            self.fail_if.as_str(),
            CONFIDENCE * 100.0
        )
    }
}

fn trim_pct(fraction: f64) -> String {
    let s = format!("{:.3}", fraction * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Result of a check or of the whole gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    Pass,
    Inconclusive,
    Fail,
}

impl GateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GateStatus::Pass => "pass",
            GateStatus::Inconclusive => "inconclusive",
            GateStatus::Fail => "fail",
        }
    }
}

/// One compared row of one headline block.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub workload: String,
    pub direction: String,
    /// Metric key (`mb_per_s`, `iops`, ...) and unit.
    pub metric: String,
    pub unit: String,
    pub config: String,
    pub baseline: String,
    /// The change and its 95% CI (fractions; NaN, written as null, without an interval).
    pub change: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub verdict: Option<Verdict>,
    pub status: GateStatus,
    /// One line for people: why this status.
    pub reason: String,
}

/// Every check of a report and the overall status.
#[derive(Debug, Clone, Serialize)]
pub struct GateOutcome {
    pub rule: GateRule,
    /// [`GateRule::describe`].
    pub description: String,
    pub status: GateStatus,
    pub checks: Vec<GateCheck>,
}

impl GateOutcome {
    pub fn count(&self, status: GateStatus) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }
}

/// Apply `rule` to every compared row of the report's headline blocks.
pub fn evaluate(report: &Report, rule: GateRule) -> GateOutcome {
    let checks: Vec<GateCheck> = report
        .blocks
        .iter()
        .filter(|b| b.headline)
        .flat_map(|b| b.rows.iter().filter_map(move |r| check(b, r, rule)))
        .collect();
    let status = checks
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(GateStatus::Inconclusive);
    GateOutcome {
        description: rule.describe(),
        rule,
        status,
        checks,
    }
}

fn check(block: &Block, row: &ConfigRow, rule: GateRule) -> Option<GateCheck> {
    let baseline = row.baseline.clone()?;
    let (change, ci_low, ci_high) = match &row.change {
        Some(c) => (c.rel, c.ci_low, c.ci_high),
        None => (f64::NAN, f64::NAN, f64::NAN),
    };
    let ci = format!(
        "change {} [{}, {}]",
        super::model::format_pct(change),
        super::model::format_pct(ci_low),
        super::model::format_pct(ci_high)
    );
    // The report's verdict decides the direction (with its adjusted p-value); the
    // threshold asks the interval to lie beyond it too. In "better" terms (positive =
    // faster, whatever the metric's direction) the interval's ends are the worst and the
    // best case.
    let sign = if block.metric.higher_is_better {
        1.0
    } else {
        -1.0
    };
    let (worst, best) = {
        let (a, b) = (sign * ci_low, sign * ci_high);
        (a.min(b), a.max(b))
    };
    let (status, reason) = match row.verdict {
        Some(v @ (Verdict::Slower | Verdict::Faster)) => {
            let beyond = match v {
                Verdict::Slower => best < -rule.threshold,
                _ => worst > rule.threshold,
            };
            let asked = match rule.fail_if {
                FailIf::Slower => v == Verdict::Slower,
                FailIf::Faster => v == Verdict::Faster,
                FailIf::Changed => true,
            };
            if asked && beyond {
                (GateStatus::Fail, format!("{ci}: {}", v.as_str()))
            } else if asked {
                (
                    GateStatus::Pass,
                    format!("{ci}: {}, not beyond the threshold", v.as_str()),
                )
            } else {
                (GateStatus::Pass, format!("{ci}: {}", v.as_str()))
            }
        }
        Some(Verdict::NoSignificantChange) => (GateStatus::Pass, ci),
        Some(v) => (GateStatus::Inconclusive, format!("{ci}: {}", v.as_str())),
        None => (
            GateStatus::Inconclusive,
            "no verdict (too few runs or boots on a side)".to_string(),
        ),
    };
    Some(GateCheck {
        workload: block.workload.clone(),
        direction: block.direction.clone(),
        metric: block.metric.key.clone(),
        unit: block.metric.unit.clone(),
        config: row.config.clone(),
        baseline,
        change,
        ci_low,
        ci_high,
        verdict: row.verdict,
        status,
        reason,
    })
}

/// The gate's lines for the end of the mail text / stderr: the rule, the count, and
/// every check that did not pass.
pub fn summary_lines(outcome: &GateOutcome) -> Vec<String> {
    let mut out = vec![format!(
        "gate: {}: {} ({} checks: {} pass, {} fail, {} inconclusive)",
        outcome.description,
        outcome.status.as_str().to_uppercase(),
        outcome.checks.len(),
        outcome.count(GateStatus::Pass),
        outcome.count(GateStatus::Fail),
        outcome.count(GateStatus::Inconclusive)
    )];
    for c in outcome
        .checks
        .iter()
        .filter(|c| c.status != GateStatus::Pass)
    {
        out.push(format!(
            "gate: {} {}: {} {} vs {}: {}",
            c.status.as_str().to_uppercase(),
            c.workload,
            c.direction,
            c.config,
            c.baseline,
            c.reason
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{against, rows_for, Metric};

    /// A report with one headline block: A (baseline) and B at the given values.
    fn report(metric: Metric, a: &[f64], b: &[f64]) -> Report {
        let configs = vec!["A".to_string(), "B".to_string()];
        let mut samples = Vec::new();
        for (i, v) in a.iter().enumerate() {
            samples.push(("A".to_string(), (2 * i) as f64, *v));
        }
        for (i, v) in b.iter().enumerate() {
            samples.push(("B".to_string(), (2 * i + 1) as f64, *v));
        }
        let rows = rows_for(&configs, &against("A"), &metric, &samples);
        Report {
            title: String::new(),
            header: Vec::new(),
            setup: Vec::new(),
            caption: String::new(),
            configs,
            baseline: "A".into(),
            published: false,
            blocks: vec![Block {
                workload: "w".into(),
                direction: "read".into(),
                metric,
                headline: true,
                block_size_bytes: None,
                sweep: None,
                sweeps: Vec::new(),
                rows,
            }],
            notes: Vec::new(),
            correction: None,
            tests: 1,
            boots: None,
            evidence: Vec::new(),
        }
    }

    fn mbps() -> Metric {
        Metric::new("mb_per_s", "MB/s", true)
    }

    const A: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];

    fn status(a: &[f64], b: &[f64], fail_if: FailIf, threshold: f64) -> GateStatus {
        evaluate(&report(mbps(), a, b), GateRule { fail_if, threshold }).status
    }

    #[test]
    fn slower_fails_faster_and_unchanged_pass() {
        let slower = A.map(|v| v * 0.9);
        let faster = A.map(|v| v * 1.1);
        let same = [100.2, 99.8, 100.4, 99.9, 100.1];
        assert_eq!(status(&A, &slower, FailIf::Slower, 0.0), GateStatus::Fail);
        assert_eq!(status(&A, &faster, FailIf::Slower, 0.0), GateStatus::Pass);
        assert_eq!(status(&A, &same, FailIf::Slower, 0.0), GateStatus::Pass);
        assert_eq!(status(&A, &faster, FailIf::Faster, 0.0), GateStatus::Fail);
        assert_eq!(status(&A, &slower, FailIf::Changed, 0.0), GateStatus::Fail);
        assert_eq!(status(&A, &same, FailIf::Changed, 0.0), GateStatus::Pass);
    }

    #[test]
    fn threshold_ignores_small_sure_slowdowns() {
        // 2% slower, surely: fails at 0%, passes at 3%; 10% slower fails at 3%.
        let two = A.map(|v| v * 0.98);
        assert_eq!(status(&A, &two, FailIf::Slower, 0.0), GateStatus::Fail);
        assert_eq!(status(&A, &two, FailIf::Slower, 0.03), GateStatus::Pass);
        assert_eq!(
            status(&A, &A.map(|v| v * 0.9), FailIf::Slower, 0.03),
            GateStatus::Fail
        );
        let rule = GateRule {
            fail_if: FailIf::Slower,
            threshold: 0.03,
        };
        assert_eq!(
            rule.describe(),
            "fail if slower by more than 3% at 95% confidence"
        );
    }

    #[test]
    fn latency_is_slower_when_it_grows() {
        let lat = Metric::new("lat_mean_us", "us", false);
        let higher = A.map(|v| v * 1.2);
        let r = report(lat, &A, &higher);
        let out = evaluate(
            &r,
            GateRule {
                fail_if: FailIf::Slower,
                threshold: 0.0,
            },
        );
        assert_eq!(out.status, GateStatus::Fail);
        assert!(
            out.checks[0].reason.ends_with(": slower"),
            "{:?}",
            out.checks
        );
    }

    #[test]
    fn one_run_per_side_is_inconclusive_and_non_headline_blocks_are_skipped() {
        assert_eq!(
            status(&[100.0], &[50.0], FailIf::Slower, 0.0),
            GateStatus::Inconclusive
        );
        let mut r = report(mbps(), &A, &A.map(|v| v * 0.5));
        r.blocks[0].headline = false;
        let out = evaluate(
            &r,
            GateRule {
                fail_if: FailIf::Slower,
                threshold: 0.0,
            },
        );
        assert!(out.checks.is_empty());
        assert_eq!(out.status, GateStatus::Inconclusive, "nothing was checked");
        let lines = summary_lines(&out);
        assert!(lines[0].contains("INCONCLUSIVE (0 checks"), "{lines:?}");
    }
}
