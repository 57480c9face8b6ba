//! Statistics pinned against scipy (tests/fixtures/stats/scipy_reference.py and .json).

use super::*;
use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("../tests/fixtures/stats/scipy_reference.json"))
        .expect("scipy_reference.json parses")
}

fn sample(r: &Value, name: &str) -> Vec<f64> {
    r["samples"][name]
        .as_array()
        .expect("sample")
        .iter()
        .map(|v| v.as_f64().expect("number"))
        .collect()
}

fn close(got: f64, want: f64, what: &str) {
    let tol = 1e-9 * want.abs().max(1.0);
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, scipy says {want}"
    );
}

#[test]
fn summaries_match_scipy() {
    let r = reference();
    let sums = r["summaries"].as_object().expect("summaries");
    assert!(sums.len() >= 7);
    for (name, want) in sums {
        let s = summarize(&sample(&r, name));
        assert_eq!(s.n as u64, want["n"].as_u64().expect("n"));
        for (field, got) in [
            ("mean", s.mean),
            ("sd", s.sd),
            ("cv", s.cv),
            ("median", s.median),
            ("ci_low", s.ci_low),
            ("ci_high", s.ci_high),
        ] {
            close(
                got,
                want[field].as_f64().expect(field),
                &format!("{name}.{field}"),
            );
        }
    }
}

#[test]
fn welch_change_matches_scipy() {
    let r = reference();
    for want in r["changes"].as_array().expect("changes") {
        let (a, b) = (
            want["a"].as_str().expect("a"),
            want["b"].as_str().expect("b"),
        );
        let c = welch_change(&sample(&r, a), &sample(&r, b));
        for (field, got) in [
            ("rel", c.rel),
            ("ci_low", c.ci_low),
            ("ci_high", c.ci_high),
            ("p", c.p),
            ("df", c.df),
        ] {
            close(
                got,
                want[field].as_f64().expect(field),
                &format!("{a} vs {b}: {field}"),
            );
        }
    }
}

#[test]
fn trend_matches_scipy_linregress() {
    let r = reference();
    for (name, want) in r["trends"].as_object().expect("trends") {
        let ys = sample(&r, name);
        // The script regresses against run order 2, 4, 6, ...
        let xs: Vec<f64> = (1..=ys.len()).map(|i| i as f64 * 2.0).collect();
        match trend(&xs, &ys) {
            Some(t) => {
                close(t.slope, want["slope"].as_f64().expect("slope"), name);
                close(t.p, want["p"].as_f64().expect("p"), name);
            }
            None => assert!(ys.len() < 3, "{name}: trend missing"),
        }
    }
}

#[test]
fn t_critical_matches_scipy() {
    let r = reference();
    for (df, want) in r["t_critical"].as_object().expect("t_critical") {
        let df: f64 = df.parse().expect("df");
        close(
            t_critical(df),
            want.as_f64().expect("t"),
            &format!("t df={df}"),
        );
    }
}

#[test]
fn verdict_respects_interval_and_direction() {
    let r = reference();
    let (bw8, bw4) = (sample(&r, "bw8"), sample(&r, "bw4"));
    assert_eq!(verdict(&welch_change(&bw8, &bw4), true), Verdict::Slower);
    assert_eq!(verdict(&welch_change(&bw4, &bw8), true), Verdict::Faster);
    // Lower latency is better: the same drop reads as faster.
    assert_eq!(verdict(&welch_change(&bw8, &bw4), false), Verdict::Faster);
    // An interval that straddles zero is no significant change.
    let noisy = sample(&r, "noisy");
    let shifted: Vec<f64> = noisy.iter().map(|x| x * 1.02).collect();
    let c = welch_change(&noisy, &shifted);
    assert!(c.ci_low < 0.0 && c.ci_high > 0.0);
    assert_eq!(verdict(&c, true), Verdict::NoSignificantChange);
    // Single values: no interval, no verdict.
    assert_eq!(
        verdict(&welch_change(&[15.8], &[23.3]), true),
        Verdict::NotTested
    );
}

#[test]
fn a_sample_alone_is_warned_about_only_for_too_few_runs() {
    let r = reference();
    assert_eq!(
        warnings(&sample(&r, "two")),
        vec![Warning::FewSamples { n: 2 }]
    );
    // Noise and drift need the report's verdicts (report::model::warnings).
    assert!(warnings(&sample(&r, "noisy")).is_empty());
    assert!(warnings(&sample(&r, "drifting")).is_empty());
}

#[test]
fn exact_values_and_edges() {
    let s = summarize(&[4.0]);
    assert_eq!((s.n, s.mean, s.median), (1, 4.0, 4.0));
    assert!(s.sd.is_nan() && s.ci_low.is_nan());
    assert!(mean(&[]).is_nan());
    let c = welch_change(&[2.0, 2.0], &[3.0, 3.0]);
    assert_eq!((c.rel, c.ci_low, c.ci_high, c.p), (0.5, 0.5, 0.5, 0.0));
}
