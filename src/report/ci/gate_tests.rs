//! Tests of [`super`]: every outcome of a gate with and without a threshold, on reports
//! built from run values (Welch on the runs, as `mmcab report` of one results dir).

use super::*;
use crate::report::model::{against, rows_for, Metric, Sample};

/// A report with one headline block: A (baseline) and B at the given values.
fn report(metric: Metric, a: &[f64], b: &[f64]) -> Report {
    let configs = vec!["A".to_string(), "B".to_string()];
    let sample = |config: &str, run: usize, value: f64| Sample {
        config: config.to_string(),
        run: run as u32,
        value,
    };
    let mut samples = Vec::new();
    for (i, v) in a.iter().enumerate() {
        samples.push(sample("A", 2 * i, *v));
    }
    for (i, v) in b.iter().enumerate() {
        samples.push(sample("B", 2 * i + 1, *v));
    }
    let rows = rows_for(&configs, &against("A"), &metric, &samples);
    Report {
        configs,
        baseline: "A".into(),
        blocks: vec![Block {
            workload: "w".into(),
            direction: Some(crate::workload::result::Direction::Read),
            metric,
            headline: true,
            block_size_bytes: None,
            sweep: None,
            sweeps: Vec::new(),
            rows,
        }],
        tests: 1,
        ..Default::default()
    }
}

fn mbps() -> Metric {
    Metric::MbPerS
}

/// Runs of a steady device: sd 0.8% of the mean.
const A: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];
/// Runs of a very steady device: sd 0.08%.
const QUIET: [f64; 5] = [100.0, 100.1, 99.9, 100.05, 99.95];
/// An A/A side of A: other runs, the same mean.
const SAME: [f64; 5] = [100.2, 99.8, 100.4, 99.9, 100.1];
/// A noisy new side: -21% on average, an interval of about [-55%, +13%].
const WIDE: [f64; 5] = [40.0, 105.0, 60.0, 100.0, 90.0];

fn rule(fail_if: FailIf, threshold: Option<f64>) -> GateRule {
    GateRule { fail_if, threshold }
}

fn outcome(a: &[f64], b: &[f64], fail_if: FailIf, threshold: Option<f64>) -> GateOutcome {
    evaluate(&report(mbps(), a, b), rule(fail_if, threshold))
}

fn status(a: &[f64], b: &[f64], fail_if: FailIf, threshold: Option<f64>) -> GateStatus {
    outcome(a, b, fail_if, threshold).status
}

/// The one check's interval, in percent.
fn interval(out: &GateOutcome) -> (f64, f64) {
    let c = &out.checks[0];
    (c.ci_low * 100.0, c.ci_high * 100.0)
}

#[test]
fn without_a_threshold_the_verdict_decides() {
    let slower = A.map(|v| v * 0.9);
    let faster = A.map(|v| v * 1.1);
    assert_eq!(status(&A, &slower, FailIf::Slower, None), GateStatus::Fail);
    assert_eq!(status(&A, &faster, FailIf::Slower, None), GateStatus::Pass);
    assert_eq!(status(&A, &SAME, FailIf::Slower, None), GateStatus::Pass);
    assert_eq!(status(&A, &faster, FailIf::Faster, None), GateStatus::Fail);
    assert_eq!(status(&A, &slower, FailIf::Changed, None), GateStatus::Fail);
    assert_eq!(status(&A, &faster, FailIf::Changed, None), GateStatus::Fail);
    assert_eq!(status(&A, &SAME, FailIf::Changed, None), GateStatus::Pass);
    assert_eq!(
        rule(FailIf::Slower, None).describe(),
        "fail if slower at 95% confidence"
    );
}

#[test]
fn without_a_threshold_a_wide_interval_passes_and_says_what_it_leaves_open() {
    let out = outcome(&A, &WIDE, FailIf::Slower, None);
    let (low, high) = interval(&out);
    assert!(
        low < -40.0 && high > 0.0,
        "a wide interval: [{low}, {high}]"
    );
    assert_eq!(out.checks[0].verdict, Some(Verdict::NoSignificantChange));
    assert_eq!(out.status, GateStatus::Pass);
    let reason = &out.checks[0].reason;
    assert!(
        reason.contains("not ruled out: a slowdown of up to") && reason.contains("--threshold"),
        "{reason}"
    );
}

#[test]
fn with_a_threshold_a_wide_interval_is_inconclusive() {
    let out = outcome(&A, &WIDE, FailIf::Slower, Some(0.03));
    assert_eq!(out.status, GateStatus::Inconclusive, "{:?}", out.checks);
    assert!(
        out.checks[0]
            .reason
            .contains("a slowdown beyond 3% neither ruled out nor shown"),
        "{}",
        out.checks[0].reason
    );
    assert_eq!(
        status(&A, &WIDE, FailIf::Changed, Some(0.03)),
        GateStatus::Inconclusive
    );
    // A threshold beyond the interval's worst case rules the slowdown out.
    assert_eq!(
        status(&A, &WIDE, FailIf::Slower, Some(0.9)),
        GateStatus::Pass
    );
}

#[test]
fn with_a_threshold_pass_needs_the_interval_to_rule_the_change_out() {
    // No change, interval within +-3%: pass.
    let out = outcome(&A, &SAME, FailIf::Slower, Some(0.03));
    let (low, high) = interval(&out);
    assert!(low > -3.0 && high < 3.0, "[{low}, {high}]");
    assert_eq!(out.status, GateStatus::Pass, "{:?}", out.checks);
    assert!(out.checks[0]
        .reason
        .contains("a slowdown beyond 3% ruled out"));
    assert_eq!(
        status(&A, &SAME, FailIf::Changed, Some(0.03)),
        GateStatus::Pass
    );
    // 2% slower, surely, and surely not by 3%: fails at no threshold, passes at 3%.
    let two = QUIET.map(|v| v * 0.98);
    assert_eq!(status(&QUIET, &two, FailIf::Slower, None), GateStatus::Fail);
    assert_eq!(
        status(&QUIET, &two, FailIf::Slower, Some(0.03)),
        GateStatus::Pass
    );
    // A speed-up passes a slower gate at any threshold; 0% asks for exactly that.
    let faster = A.map(|v| v * 1.1);
    assert_eq!(
        status(&A, &faster, FailIf::Slower, Some(0.0)),
        GateStatus::Pass
    );
    assert_eq!(
        status(&A, &SAME, FailIf::Slower, Some(0.0)),
        GateStatus::Inconclusive,
        "no change cannot rule out every slowdown"
    );
}

#[test]
fn with_a_threshold_fail_needs_the_whole_interval_beyond_it() {
    // 10% slower, surely: beyond 3%.
    let out = outcome(&A, &A.map(|v| v * 0.9), FailIf::Slower, Some(0.03));
    assert_eq!(out.status, GateStatus::Fail);
    assert!(
        out.checks[0].reason.ends_with("slower by more than 3%"),
        "{}",
        out.checks[0].reason
    );
    // Slower, surely, but the interval (about [-9%, -1%]) straddles -3%: inconclusive.
    let noisy = [91.0, 99.0, 95.0, 97.0, 93.0];
    let out = outcome(&A, &noisy, FailIf::Slower, Some(0.03));
    let (low, high) = interval(&out);
    assert!(low < -3.0 && high > -3.0 && high < 0.0, "[{low}, {high}]");
    assert_eq!(out.checks[0].verdict, Some(Verdict::Slower));
    assert_eq!(out.status, GateStatus::Inconclusive, "{:?}", out.checks);
    // The mirror image and either side.
    let faster = A.map(|v| v * 1.1);
    assert_eq!(
        status(&A, &faster, FailIf::Faster, Some(0.03)),
        GateStatus::Fail
    );
    assert_eq!(
        status(&A, &faster, FailIf::Changed, Some(0.03)),
        GateStatus::Fail
    );
    assert_eq!(
        status(&A, &A.map(|v| v * 0.9), FailIf::Faster, Some(0.03)),
        GateStatus::Pass
    );
    assert_eq!(
        rule(FailIf::Slower, Some(0.03)).describe(),
        "no slowdown beyond 3% at 95% confidence"
    );
    assert_eq!(
        rule(FailIf::Changed, Some(0.005)).describe(),
        "no change beyond 0.5% at 95% confidence"
    );
}

#[test]
fn latency_is_slower_when_it_grows() {
    let lat = Metric::LatMeanUs;
    let higher = A.map(|v| v * 1.2);
    for threshold in [None, Some(0.03)] {
        let out = evaluate(
            &report(lat.clone(), &A, &higher),
            rule(FailIf::Slower, threshold),
        );
        assert_eq!(out.status, GateStatus::Fail, "{threshold:?}");
        assert!(
            out.checks[0].reason.contains(": slower"),
            "{:?}",
            out.checks
        );
    }
    // Lower latency: a speed-up, ruled out as a slowdown.
    let out = evaluate(
        &report(lat, &A, &A.map(|v| v * 0.8)),
        rule(FailIf::Slower, Some(0.03)),
    );
    assert_eq!(out.status, GateStatus::Pass, "{:?}", out.checks);
}

#[test]
fn one_run_per_side_is_inconclusive_and_non_headline_blocks_are_skipped() {
    for threshold in [None, Some(0.03)] {
        assert_eq!(
            status(&[100.0], &[50.0], FailIf::Slower, threshold),
            GateStatus::Inconclusive
        );
    }
    let mut r = report(mbps(), &A, &A.map(|v| v * 0.5));
    r.blocks[0].headline = false;
    let out = evaluate(&r, rule(FailIf::Slower, None));
    assert!(out.checks.is_empty());
    assert_eq!(out.status, GateStatus::Inconclusive, "nothing was checked");
    let lines = summary_lines(&out);
    assert!(lines[0].contains("INCONCLUSIVE (0 checks"), "{lines:?}");
}
