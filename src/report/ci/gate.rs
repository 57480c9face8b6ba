//! Regression gates for CI (`--fail-if slower [--threshold 3%]` on `mmcab report` and
//! `mmcab compare`): a thin layer over the report model's changes and verdicts, so it
//! holds for whatever model produced them (one results dir, or boots compared).
//!
//! Every compared row (a config with a baseline) of every headline block (the metrics
//! of the mail text) is one check, with one of three outcomes. In "better" terms
//! (positive = faster: MB/s and IOPS up, latency down) the 95% CI of the change runs
//! from its worst to its best case; for `slower` with a threshold T (`faster` is the
//! mirror image, `changed` both sides):
//! - **fail**: the report calls the row `slower` (CI clear of zero and, where the report
//!   adjusts p-values together, q below 0.05) and the whole CI lies below -T: slower by
//!   more than T at 95% confidence;
//! - **pass**: the CI's worst case is no slower than -T: a slowdown beyond T is ruled
//!   out at 95% confidence ("no slowdown beyond 3%");
//! - **inconclusive**: neither, the CI reaches below -T without lying wholly below it
//!   (an interval of [-60%, +5%] with T = 3%), or the row has no interval at all (fewer
//!   than 2 runs on a side, single published numbers, one boot per side without a
//!   calibration).
//!
//! Without a threshold the rule is the report's verdict alone: `slower` fails, `faster`
//! and `no significant change` pass (however wide the interval: such a pass says no
//! slowdown was shown, not that there is none; its reason line gives the interval's
//! worst case), no verdict is inconclusive.
//!
//! The gate as a whole fails when any check fails, else is inconclusive when any check
//! is, else passes.

use crate::report::model::{Block, ConfigRow, Report};
use crate::report::render::wording::verdict_text;
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

    /// What the gate is about: `slowdown`, `speed-up`, `change`.
    pub fn noun(self) -> &'static str {
        match self {
            FailIf::Slower => "slowdown",
            FailIf::Faster => "speed-up",
            FailIf::Changed => "change",
        }
    }
}

/// A gate: what fails, and the smallest change that counts (a fraction, 0.03 = 3%;
/// None: the report's verdicts alone, see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateRule {
    pub fail_if: FailIf,
    pub threshold: Option<f64>,
}

impl GateRule {
    /// `fail if slower at 95% confidence` (no threshold) or `no slowdown beyond 3% at
    /// 95% confidence`.
    pub fn describe(&self) -> String {
        let confidence = format!("at {:.0}% confidence", CONFIDENCE * 100.0);
        match self.threshold {
            None => format!("fail if {} {confidence}", self.fail_if.as_str()),
            Some(t) => {
                let what = self.fail_if.noun();
                format!("no {what} beyond {}% {confidence}", trim_pct(t))
            }
        }
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
    /// Without a threshold, for a passing check: the largest change in the direction
    /// the gate asks about that the 95% CI leaves open (a fraction: 0.55 = up to 55%
    /// slower, for `slower`); null otherwise.
    pub open: Option<f64>,
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
        crate::report::render::numbers::format_pct(change),
        crate::report::render::numbers::format_pct(ci_low),
        crate::report::render::numbers::format_pct(ci_high)
    );
    // In "better" terms (positive = faster, whatever the metric's direction) the
    // interval's ends are the worst and the best case.
    let sign = if block.metric.higher_is_better() {
        1.0
    } else {
        -1.0
    };
    let interval = Interval {
        worst: (sign * ci_low).min(sign * ci_high),
        best: (sign * ci_low).max(sign * ci_high),
    };
    let mut open = None;
    let (status, why) = match row.verdict {
        Some(v @ (Verdict::Slower | Verdict::Faster | Verdict::NoSignificantChange))
            if interval.worst.is_finite() && interval.best.is_finite() =>
        {
            match rule.threshold {
                None => {
                    let (status, why, left) = by_verdict(rule.fail_if, v, interval);
                    open = left;
                    (status, why)
                }
                Some(t) => by_interval(rule.fail_if, v, interval, t),
            }
        }
        Some(v) => (GateStatus::Inconclusive, verdict_text(v).to_string()),
        None => (
            GateStatus::Inconclusive,
            "no verdict (too few runs or boots on a side)".to_string(),
        ),
    };
    let reason = if change.is_nan() {
        why
    } else {
        format!("{ci}: {why}")
    };
    Some(GateCheck {
        workload: block.workload.clone(),
        direction: block.direction_text().to_string(),
        metric: block.metric.key().to_string(),
        unit: block.metric.unit().to_string(),
        config: row.config.clone(),
        baseline,
        change,
        ci_low,
        ci_high,
        verdict: row.verdict,
        status,
        reason,
        open,
    })
}

/// A 95% CI of a change in "better" terms: positive = faster.
#[derive(Debug, Clone, Copy)]
struct Interval {
    worst: f64,
    best: f64,
}

/// Does `v` fail `fail_if` (the direction the gate asks about)?
fn asked(fail_if: FailIf, v: Verdict) -> bool {
    match fail_if {
        FailIf::Slower => v == Verdict::Slower,
        FailIf::Faster => v == Verdict::Faster,
        FailIf::Changed => matches!(v, Verdict::Slower | Verdict::Faster),
    }
}

/// No threshold: the report's verdict decides. A pass also gives the largest change in
/// the asked direction(s) that the interval leaves open, if any.
fn by_verdict(fail_if: FailIf, v: Verdict, ci: Interval) -> (GateStatus, String, Option<f64>) {
    if asked(fail_if, v) {
        return (GateStatus::Fail, verdict_text(v).to_string(), None);
    }
    let slower = (ci.worst < 0.0 && fail_if != FailIf::Faster).then_some(-ci.worst);
    let faster = (ci.best > 0.0 && fail_if != FailIf::Slower).then_some(ci.best);
    let mut reach = Vec::new();
    if let Some(x) = slower {
        reach.push(format!("a slowdown of up to {:.1}%", x * 100.0));
    }
    if let Some(x) = faster {
        reach.push(format!("a speed-up of up to {:.1}%", x * 100.0));
    }
    if reach.is_empty() {
        return (GateStatus::Pass, verdict_text(v).to_string(), None);
    }
    let why = format!(
        "{} (not ruled out: {}; --threshold asks for that)",
        verdict_text(v),
        reach.join(", ")
    );
    let open = slower.into_iter().chain(faster).fold(0.0, f64::max);
    (GateStatus::Pass, why, Some(open))
}

/// Threshold `t`: fail when the verdict is the asked one and the whole interval lies
/// beyond `t`; pass when the interval rules out a change beyond `t` in the asked
/// direction(s); else inconclusive.
fn by_interval(fail_if: FailIf, v: Verdict, ci: Interval, t: f64) -> (GateStatus, String) {
    let (check_slower, check_faster) = match fail_if {
        FailIf::Slower => (true, false),
        FailIf::Faster => (false, true),
        FailIf::Changed => (true, true),
    };
    let beyond = match v {
        Verdict::Slower => ci.best < -t,
        Verdict::Faster => ci.worst > t,
        _ => false,
    };
    if asked(fail_if, v) && beyond {
        return (
            GateStatus::Fail,
            format!("{} by more than {}", verdict_text(v), pct(t)),
        );
    }
    let what = fail_if.noun();
    let slower_ruled_out = !check_slower || ci.worst >= -t;
    let faster_ruled_out = !check_faster || ci.best <= t;
    if slower_ruled_out && faster_ruled_out {
        (
            GateStatus::Pass,
            format!("{}, a {what} beyond {} ruled out", verdict_text(v), pct(t)),
        )
    } else {
        (
            GateStatus::Inconclusive,
            format!(
                "{}, a {what} beyond {} neither ruled out nor shown (more runs or boots \
                 narrow the interval)",
                verdict_text(v),
                pct(t)
            ),
        )
    }
}

/// A threshold: `3%`, `0.5%`.
fn pct(fraction: f64) -> String {
    format!("{}%", trim_pct(fraction))
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
    let widest = outcome
        .checks
        .iter()
        .filter(|c| c.status == GateStatus::Pass)
        .filter_map(|c| c.open.map(|open| (open, c)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((open, c)) = widest {
        let what = outcome.rule.fail_if.noun();
        out.push(format!(
            "gate: note: without --threshold a pass means no significant {what} was found, \
             not that there is none: an interval still allows one of up to {:.1}% ({} {}: \
             {} vs {}); --threshold passes only what the intervals rule out",
            open * 100.0,
            c.workload,
            c.direction,
            c.config,
            c.baseline
        ));
    }
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
#[path = "gate_tests.rs"]
mod tests;
