//! The warnings' rule on made-up and recorded data.

use super::*;
use crate::report::model::{against, correction, rows_for, Metric, Sample};
use crate::stats::Verdict;

/// A report of one block: configs a (baseline) and b, their values in run order.
pub(super) fn report_of(samples: Vec<Sample>) -> Report {
    report_of_blocks(vec![("w".to_string(), samples)])
}

/// A report of blocks (workload name, samples of configs a and b) of one metric.
fn report_of_blocks(blocks: Vec<(String, Vec<Sample>)>) -> Report {
    let configs = vec!["a".to_string(), "b".to_string()];
    let blocks = blocks
        .into_iter()
        .map(|(workload, samples)| Block {
            workload,
            direction: None,
            metric: Metric::MbPerS,
            headline: true,
            block_size_bytes: None,
            sweep: None,
            sweeps: Vec::new(),
            rows: rows_for(&configs, &against("a"), &Metric::MbPerS, &samples),
        })
        .collect();
    Report {
        blocks,
        baseline: "a".into(),
        configs,
        ..Report::default()
    }
}

fn sample(config: &str, run: u32, value: f64) -> Sample {
    Sample {
        config: config.to_string(),
        run,
        value,
    }
}

/// Runs 1..=2n, interleaved (a, b, a, b, ...) or blocked (n of a, then n of b), with a
/// drift of `drift` per run on both and `noise(run)` added.
fn two_configs(n: u32, blocked: bool, drift: f64, noise: &dyn Fn(u32) -> f64) -> Vec<Sample> {
    (1..=2 * n)
        .map(|run| {
            let b = if blocked { run > n } else { run % 2 == 0 };
            let value = 100.0 * (1.0 + drift * f64::from(run)) + noise(run);
            sample(if b { "b" } else { "a" }, run, value)
        })
        .collect()
}

fn kinds(r: &Report) -> Vec<(String, &'static str)> {
    r.blocks[0]
        .rows
        .iter()
        .flat_map(|row| {
            row.warnings.iter().map(move |w| {
                let kind = match w {
                    Warning::FewSamples { .. } => "few",
                    Warning::HighCv { .. } => "cv",
                    Warning::Drift { .. } => "drift",
                    Warning::DriftInBoots { .. } => "boots",
                    Warning::TooShort { .. } => "short",
                    Warning::InsideCache { .. } => "cache",
                    Warning::WriteKnee { .. } => "knee",
                };
                (row.config.clone(), kind)
            })
        })
        .collect()
}

/// A fixed wobble of +-0.3%, no drift of its own.
fn wobble(run: u32) -> f64 {
    [0.3, -0.2, 0.1, -0.3, 0.2, 0.0, -0.1, 0.25][run as usize % 8]
}

#[test]
fn a_drift_under_blocked_order_is_warned_with_its_bias() {
    // -1%/run on both configs, nothing else changed: blocked, b's runs come 8 runs
    // after a's, so its mean is 8% lower and the report calls it slower.
    let mut r = report_of(two_configs(8, true, -0.01, &wobble));
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert_eq!(r.blocks[0].rows[1].verdict, Some(Verdict::Slower));
    let w = &r.blocks[0].rows[1].warnings;
    let Some(Warning::Drift {
        slope_rel_per_run,
        q,
        moves,
        ..
    }) = w.iter().find(|w| matches!(w, Warning::Drift { .. }))
    else {
        panic!("no drift warning on b: {w:?}");
    };
    assert!(*slope_rel_per_run < -0.008 && *q < 0.05, "{w:?}");
    assert_eq!(moves.verdict_without, Verdict::NoSignificantChange);
    let bias = moves.rel - moves.rel_without;
    assert!((bias + 0.08).abs() < 0.01, "bias {bias}");
}

#[test]
fn the_same_drift_under_interleaved_order_moves_nothing() {
    let mut r = report_of(two_configs(8, false, -0.01, &wobble));
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert_eq!(
        r.blocks[0].rows[1].verdict,
        Some(Verdict::NoSignificantChange)
    );
    assert_eq!(kinds(&r), Vec::<(String, &str)>::new());
}

#[test]
fn a_small_significant_drift_next_to_a_large_change_is_not_warned() {
    // b 20% faster, both drifting -0.1%/run: the drift is significant but cannot move
    // a +20% change; the old rule warned on both configs.
    let mut samples = two_configs(8, false, -0.001, &|r| wobble(r) * 0.1);
    for s in samples.iter_mut().filter(|s| s.config == "b") {
        s.value *= 1.2;
    }
    let mut r = report_of(samples);
    let old: usize = r.blocks[0]
        .rows
        .iter()
        .filter(|row| stats::trend(&model_order(row), &row.values).is_some_and(|t| t.p < 0.05))
        .count();
    assert_eq!(old, 2);
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert_eq!(r.blocks[0].rows[1].verdict, Some(Verdict::Faster));
    assert!(kinds(&r).is_empty(), "{:?}", kinds(&r));
}

fn model_order(row: &ConfigRow) -> Vec<f64> {
    row.runs.iter().map(|&r| f64::from(r)).collect()
}

#[test]
fn noise_is_warned_when_the_one_run_it_comes_from_moves_the_verdict() {
    // b 3% slower, quiet but for one run of b at +30%: the change is not called;
    // without that run it is.
    let mut samples = two_configs(6, false, 0.0, &|r| wobble(r) * 0.5);
    for s in samples.iter_mut().filter(|s| s.config == "b") {
        s.value *= if s.run == 6 { 1.3 } else { 0.97 };
    }
    let mut r = report_of(samples);
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    let row = &r.blocks[0].rows[1];
    assert_eq!(row.verdict, Some(Verdict::NoSignificantChange));
    let Some(Warning::HighCv { moves, .. }) = row.warnings.first() else {
        panic!("{:?}", row.warnings);
    };
    assert_eq!(
        (moves.run, moves.verdict_without),
        (Some(6), Verdict::Slower)
    );
    // Noise spread over every run, nothing changed: the wide interval says it all.
    let mut r = report_of(two_configs(6, false, 0.0, &|r| wobble(r) * 60.0));
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert!(r.blocks[0]
        .rows
        .iter()
        .all(|row| row.summary.cv > stats::HIGH_CV));
    assert!(kinds(&r).is_empty(), "{:?}", kinds(&r));
    // A noisy baseline whose noise cannot hide a 50% change: no warning.
    let samples = two_configs(6, false, 0.0, &|r| wobble(r) * 30.0)
        .into_iter()
        .map(|s| {
            let v = if s.config == "b" {
                s.value * 1.5
            } else {
                s.value
            };
            sample(&s.config, s.run, v)
        })
        .collect();
    let mut r = report_of(samples);
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert!(r.blocks[0].rows[0].summary.cv > stats::HIGH_CV);
    assert_eq!(r.blocks[0].rows[1].verdict, Some(Verdict::Faster));
    assert!(kinds(&r).is_empty(), "{:?}", kinds(&r));
}

/// tests/fixtures/stats/drift_reference.py: the drift tests' q-values (statsmodels'
/// multipletests over scipy's linregress p-values) and the verdicts without a
/// significant drift (scipy's Welch test on the detrended values, adjusted again).
#[test]
fn drift_q_values_and_verdicts_without_drift_match_statsmodels() {
    let r: serde_json::Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/stats/drift_reference.json"
    ))
    .expect("drift_reference.json parses");
    let blocks = r["blocks"].as_object().expect("blocks");
    let names: Vec<String> = r["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| v["block"].as_str().expect("block").to_string())
        .collect();
    let mut report = report_of_blocks(
        names
            .iter()
            .map(|name| {
                let samples = ["a", "b"]
                    .iter()
                    .flat_map(|c| {
                        let side = &blocks[name][*c];
                        let runs = side["runs"].as_array().expect("runs").iter();
                        let values = side["values"].as_array().expect("values").iter();
                        runs.zip(values).map(move |(run, v)| {
                            sample(c, run.as_u64().expect("run") as u32, v.as_f64().expect("v"))
                        })
                    })
                    .collect();
                (name.clone(), samples)
            })
            .collect(),
    );
    let close = |got: f64, want: &serde_json::Value, what: &str| {
        let want = want.as_f64().expect(what);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{what}: got {got}, scipy/statsmodels say {want}"
        );
    };
    let drift = r["drift"].as_array().expect("drift");
    for (correction, method) in [
        (Correction::BenjaminiHochberg, "fdr_bh"),
        (Correction::Holm, "holm"),
    ] {
        let family = drift_family(&report.blocks, correction);
        assert_eq!(family.len(), drift.len());
        for ((d, q), want) in family.iter().zip(drift) {
            let what = format!("{method} {}", want["block"]);
            assert_eq!(
                report.blocks[d.block].workload,
                want["block"].as_str().unwrap()
            );
            close(d.trend.slope, &want["slope"], &what);
            close(d.trend.p, &want["p"], &what);
            close(*q, &want[method]["q"], &what);
            assert_eq!(
                *q < multiple::ALPHA,
                want[method]["reject"] == true,
                "{what}"
            );
        }
    }
    correction::apply(&mut report, Correction::BenjaminiHochberg);
    let verdict_key = |v: Option<Verdict>| serde_json::to_value(v.expect("verdict")).unwrap();
    for (block, want) in report.blocks.iter().zip(r["verdicts"].as_array().unwrap()) {
        let row = &block.rows[1];
        close(row.q.expect("q"), &want["q"], &block.workload);
        assert_eq!(
            verdict_key(row.verdict),
            want["verdict"],
            "{}",
            block.workload
        );
    }
    let without = r["without_drift"].as_array().expect("without_drift");
    assert!(without.len() >= 2, "the fixture has significant drifts");
    let mut warned = 0;
    for (bi, block) in report.blocks.iter().enumerate() {
        for row in &block.rows {
            let drift = row.warnings.iter().find_map(|w| match w {
                Warning::Drift { moves, .. } => Some(moves),
                _ => None,
            });
            let want = without
                .iter()
                .find(|w| w["block"] == names[bi].as_str() && w["config"] == row.config.as_str());
            let moved = want.filter(|w| w["verdict"] != verdict_key(block.rows[1].verdict));
            match (drift, moved) {
                (None, None) => {}
                (Some(m), Some(w)) => {
                    close(m.rel_without, &w["rel"], &block.workload);
                    assert_eq!(verdict_key(Some(m.verdict_without)), w["verdict"]);
                    warned += 1;
                }
                (d, w) => panic!(
                    "{} {}: warning {d:?}, reference {w:?}",
                    block.workload, row.config
                ),
            }
        }
    }
    assert!(warned >= 1, "the blocked drift moves its verdict");
}

/// Across boots: three boots, in each a's runs first, then b's (blocked within the
/// boot), every boot drifting -1%/run and nothing else changed. Tested on boot means,
/// b comes out slower by the drift alone; taking each boot's drift out (b's runs moved
/// to a's mean place in their boots) leaves no change, and both sides say so.
#[test]
fn drifts_within_boots_are_warned_when_they_move_the_boot_test() {
    let per_boot = 8u32;
    let samples: Vec<Sample> = (1..=3 * per_boot)
        .map(|run| {
            let place = (run - 1) % per_boot;
            let boot = (run - 1) / per_boot;
            let config = if place < per_boot / 2 { "a" } else { "b" };
            let value =
                100.0 * (1.0 - 0.01 * f64::from(place)) + f64::from(boot) * 0.7 + wobble(run) * 0.2;
            sample(config, run, value)
        })
        .collect();
    let mut r = report_of(samples);
    let boot_of = |run: u32| Some(((run - 1) / per_boot) as usize);
    crate::report::across::boots::apply(&mut r.blocks, &boot_of, &|_, _| None).expect("boots");
    correction::apply(&mut r, Correction::BenjaminiHochberg);
    assert_eq!(r.blocks[0].rows[1].verdict, Some(Verdict::Slower));
    for row in &r.blocks[0].rows {
        let Some(Warning::DriftInBoots { boots, of, moves }) = row.warnings.first() else {
            panic!("{}: {:?}", row.config, row.warnings);
        };
        assert_eq!((*boots, *of), (3, 3), "{}", row.config);
        assert_eq!(moves.verdict_without, Verdict::NoSignificantChange);
        let bias = moves.rel - moves.rel_without;
        assert!((bias + 0.04).abs() < 0.005, "{}: bias {bias}", row.config);
    }
}
