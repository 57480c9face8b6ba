//! The warnings' rule measured against the rule it replaced (docs/statistics.md,
//! "How often they warn"): A/A boots recorded on the testbed, and simulated reports with
//! a drift and a change of known size under interleaved and blocked run order. Each
//! test prints its table (`cargo test --lib warnings::experiments -- --nocapture`) and
//! holds the numbers the docs quote.

use super::*;
use crate::report::model::{against, correction, rows_for, Metric, Sample};
use crate::report::{self as reports, CompareOptions};
use crate::stats::Verdict;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::{Path, PathBuf};

/// What each rule said about the blocks of some reports.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    blocks: usize,
    /// The old rule: some config's CV above 5%, or its drift p (of a boot) below 0.05.
    old: usize,
    /// The rule of [`super::apply`]: some noise or drift warning.
    new: usize,
    /// A CV above 5% whose runs, brought down to a 5% CV, would move a verdict (the
    /// rule docs/statistics.md explains not taking).
    quieter: usize,
    /// Verdicts called (faster or slower).
    called: usize,
}

impl Tally {
    fn add(&mut self, report: &Report) {
        let family = Family::of(&report.blocks, report.correction.unwrap_or_default());
        for (bi, block) in report.blocks.iter().enumerate() {
            self.blocks += 1;
            let sides: Vec<Side> = block.rows.iter().map(Side::of).collect();
            let old = sides.iter().any(|s| {
                within_cv(&s.values, &s.boot) > stats::HIGH_CV
                    || (0..s.boots()).any(|b| {
                        let (v, x) = s.boot_part(b);
                        stats::trend(&x, &v).is_some_and(|t| t.p < 0.05)
                    })
            });
            let new = block.rows.iter().flat_map(|r| &r.warnings).any(|w| {
                matches!(
                    w,
                    Warning::HighCv { .. } | Warning::Drift { .. } | Warning::DriftInBoots { .. }
                )
            });
            let quieter = sides.iter().enumerate().any(|(i, s)| {
                let cv = within_cv(&s.values, &s.boot);
                cv > stats::HIGH_CV && {
                    let quiet = s.with_values(quieten(s, stats::HIGH_CV / cv));
                    comparisons(block, i)
                        .into_iter()
                        .any(|pair| retest_with(&family, bi, pair, i, &quiet).is_some())
                }
            });
            let called = block
                .rows
                .iter()
                .any(|r| matches!(r.verdict, Some(Verdict::Faster | Verdict::Slower)));
            self.old += usize::from(old);
            self.new += usize::from(new);
            self.quieter += usize::from(quieter);
            self.called += usize::from(called);
        }
    }
}

/// The side's runs with their spread around each boot's mean scaled by `factor`.
fn quieten(s: &Side, factor: f64) -> Vec<f64> {
    let means: Vec<f64> = (0..s.boots())
        .map(|b| stats::mean(&s.boot_part(b).0))
        .collect();
    s.values
        .iter()
        .zip(&s.boot)
        .map(|(v, b)| means[*b] + (v - means[*b]) * factor)
        .collect()
}

fn percent(k: usize, of: usize) -> String {
    format!("{:.1}%", 100.0 * k as f64 / of.max(1) as f64)
}

fn boots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/boots")
}

/// The five A/A boots of tests/fixtures/boots compared as boots, every split into 2
/// against 3 boots (10 reports), and every pair of single boots with a calibration
/// from the other three (10 reports); 12 blocks each.
#[test]
fn aa_boots_recorded_on_the_testbed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let aa: Vec<PathBuf> = (1..=5)
        .map(|k| boots_dir().join(format!("aa-{k}")))
        .collect();
    let (mut splits, mut singles) = (Tally::default(), Tally::default());
    let mut out = 0;
    let mut compare = |base: Vec<PathBuf>, new: Vec<PathBuf>, calibration: Option<PathBuf>| {
        out += 1;
        let written = reports::compare(&CompareOptions {
            base,
            new,
            calibration,
            out: Some(tmp.path().join(format!("r{out}"))),
            ..CompareOptions::default()
        })
        .expect("compare");
        written.report.expect("report")
    };
    for a in 0..5 {
        for b in a + 1..5 {
            let pair = vec![aa[a].clone(), aa[b].clone()];
            let rest: Vec<PathBuf> = (0..5)
                .filter(|k| *k != a && *k != b)
                .map(|k| aa[k].clone())
                .collect();
            splits.add(&compare(pair, rest.clone(), None));
            let cal = tmp.path().join(format!("cal-{a}-{b}.json"));
            reports::calibrate(&rest, Some(&cal), None).expect("calibrate");
            let report = compare(vec![aa[a].clone()], vec![aa[b].clone()], Some(cal));
            assert!(report.header.calibration.is_some());
            singles.add(&report);
        }
    }
    println!("A/A boots          blocks  old rule  new rule  quieter  called");
    for (name, t) in [("2 vs 3 boots", &splits), ("1 vs 1, calibrated", &singles)] {
        println!(
            "{name:<18} {:>6}  {:>8}  {:>8}  {:>7}  {:>6}",
            t.blocks,
            percent(t.old, t.blocks),
            percent(t.new, t.blocks),
            percent(t.quieter, t.blocks),
            percent(t.called, t.blocks)
        );
    }
    // The numbers of docs/statistics.md.
    assert_eq!(
        (splits.blocks, splits.old, splits.new, splits.called),
        (120, 120, 0, 0)
    );
    assert_eq!(
        (singles.blocks, singles.old, singles.new, singles.called),
        (120, 120, 0, 0)
    );
}

/// One simulated setting: two configs of `n` runs each, in interleaved or blocked
/// order, normal noise of CV `cv`, a drift of `drift` per run (a fraction of the mean)
/// on both, config b changed by `change`.
struct Setting {
    name: &'static str,
    blocked: bool,
    cv: f64,
    drift: f64,
    change: f64,
}

const N: u32 = 10;
const BLOCKS: usize = 12;
const REPORTS: usize = 100;

fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u =
        |rng: &mut Xoshiro256PlusPlus| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u1, u2) = (u(rng), u(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A report of [`BLOCKS`] blocks of the setting, and the same noise without the drift.
fn simulated(s: &Setting, rng: &mut Xoshiro256PlusPlus) -> (Report, Report) {
    let configs = vec!["a".to_string(), "b".to_string()];
    let mut with = Vec::new();
    let mut without = Vec::new();
    for k in 0..BLOCKS {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for run in 1..=2 * N {
            let is_b = if s.blocked { run > N } else { run % 2 == 0 };
            let config = if is_b { "b" } else { "a" };
            let level = 100.0 * if is_b { 1.0 + s.change } else { 1.0 };
            let noise = 100.0 * s.cv * normal(rng);
            let drift = 100.0 * s.drift * f64::from(run);
            let sample = |value: f64| Sample {
                config: config.to_string(),
                run,
                value,
            };
            a.push(sample(level + noise + drift));
            b.push(sample(level + noise));
        }
        let block = |samples: &[Sample]| Block {
            workload: format!("w{k}"),
            direction: None,
            metric: Metric::MbPerS,
            headline: true,
            block_size_bytes: None,
            sweep: None,
            sweeps: Vec::new(),
            rows: rows_for(&configs, &against("a"), &Metric::MbPerS, samples),
        };
        with.push(block(&a));
        without.push(block(&b));
    }
    let report = |blocks: Vec<Block>| {
        let mut r = Report {
            blocks,
            baseline: "a".into(),
            configs: configs.clone(),
            ..Report::default()
        };
        correction::apply(&mut r, Correction::BenjaminiHochberg);
        r
    };
    (report(with), report(without))
}

/// Per setting: the tally, blocks whose verdict the drift moved (against the same noise
/// without it), and of those the ones the new rule warned about.
#[test]
fn simulated_drift_and_change_of_known_size() {
    let settings = [
        ("A/A, CV 1%", false, 0.01, 0.0, 0.0),
        ("A/A, CV 10%", false, 0.10, 0.0, 0.0),
        (
            "A/A, drift -0.1%/run, interleaved",
            false,
            0.01,
            -0.001,
            0.0,
        ),
        ("A/A, drift -0.1%/run, blocked", true, 0.01, -0.001, 0.0),
        ("A/A, drift -1%/run, interleaved", false, 0.01, -0.01, 0.0),
        ("A/A, drift -1%/run, blocked", true, 0.01, -0.01, 0.0),
        ("+3%, drift -0.1%/run, blocked", true, 0.01, -0.001, 0.03),
        (
            "+3%, drift -0.3%/run, interleaved",
            false,
            0.01,
            -0.003,
            0.03,
        ),
        ("+3%, drift -0.3%/run, blocked", true, 0.01, -0.003, 0.03),
    ]
    .map(|(name, blocked, cv, drift, change)| Setting {
        name,
        blocked,
        cv,
        drift,
        change,
    });
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20261207);
    println!(
        "setting (n = {N} per config, {} blocks)     old    new  quieter  moved  moved+warned  unmoved+warned",
        BLOCKS * REPORTS
    );
    let mut rows = Vec::new();
    for s in &settings {
        let mut t = Tally::default();
        let (mut moved, mut caught, mut false_alarms) = (0, 0, 0);
        for _ in 0..REPORTS {
            let (with, without) = simulated(s, &mut rng);
            t.add(&with);
            for (b, c) in with.blocks.iter().zip(&without.blocks) {
                let warned = b
                    .rows
                    .iter()
                    .flat_map(|r| &r.warnings)
                    .any(|w| matches!(w, Warning::Drift { .. } | Warning::HighCv { .. }));
                let m = b.rows[1].verdict != c.rows[1].verdict;
                moved += usize::from(m);
                caught += usize::from(m && warned);
                false_alarms += usize::from(!m && warned);
            }
        }
        println!(
            "{:<40} {:>6} {:>6} {:>8} {:>6} {:>13} {:>15}",
            s.name,
            percent(t.old, t.blocks),
            percent(t.new, t.blocks),
            percent(t.quieter, t.blocks),
            percent(moved, t.blocks),
            percent(caught, moved),
            percent(false_alarms, t.blocks - moved)
        );
        rows.push((t.old, t.new, t.quieter, moved, caught, false_alarms));
    }
    // The numbers of docs/statistics.md (1200 blocks per setting).
    let want: [(usize, usize, usize, usize, usize, usize); 9] = [
        (113, 0, 0, 0, 0, 0),
        (1199, 3, 39, 0, 0, 3),
        (694, 3, 0, 9, 2, 1),
        (260, 22, 0, 457, 9, 13),
        (1200, 0, 0, 3, 0, 0),
        (1200, 1196, 0, 1198, 1194, 2),
        (302, 0, 0, 15, 0, 0),
        (1200, 85, 0, 86, 85, 0),
        (1033, 861, 0, 1200, 861, 0),
    ];
    assert_eq!(rows, want);
}
