//! The between-boot model pinned against scipy and statsmodels
//! (tests/fixtures/stats/boots_reference.py and .json).

use super::*;
use crate::stats::{satterthwaite_df, Change};
use serde_json::Value;

pub(crate) fn reference() -> Value {
    serde_json::from_str(include_str!(
        "../../tests/fixtures/stats/boots_reference.json"
    ))
    .expect("boots_reference.json parses")
}

fn side(r: &Value, name: &str) -> Vec<Vec<f64>> {
    r["sides"][name]
        .as_array()
        .expect("side")
        .iter()
        .map(|boot| {
            boot.as_array()
                .expect("boot")
                .iter()
                .map(|v| v.as_f64().expect("number"))
                .collect()
        })
        .collect()
}

fn num(v: &Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

fn close_to(got: f64, want: f64, rel_tol: f64, what: &str) {
    let tol = rel_tol * want.abs().max(1e-12);
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, the reference says {want}"
    );
}

fn close(got: f64, want: f64, what: &str) {
    close_to(got, want, 1e-9, what)
}

/// Each (field, value) equals the reference's field.
fn same_fields(fields: &[(&str, f64)], want: &Value, what: &str) {
    for (field, value) in fields {
        close(*value, num(want, field), &format!("{what}: {field}"));
    }
}

/// Every field of `got` equals the reference's.
fn same_change(got: &Change, want: &Value, what: &str) {
    let fields = [
        ("rel", got.rel),
        ("ci_low", got.ci_low),
        ("ci_high", got.ci_high),
        ("p", got.p),
        ("df", got.df),
    ];
    same_fields(&fields, want, what);
}

#[test]
fn spread_matches_scipy_and_the_anova_table() {
    let r = reference();
    let spreads = r["spreads"].as_object().expect("spreads");
    assert!(spreads.len() >= 8);
    for (name, want) in spreads {
        let s = spread(&side(&r, name));
        assert_eq!(s.boots as u64, want["boots"].as_u64().expect("boots"));
        close(s.mean, num(want, "mean"), &format!("{name}.mean"));
        if s.boots < 2 {
            assert!(s.boot_sd.is_nan() && s.ci_low.is_nan() && s.between_var.is_nan());
            continue;
        }
        let fields = [
            ("boot_sd", s.boot_sd),
            ("ci_low", s.ci_low),
            ("ci_high", s.ci_high),
            ("run_sd", s.run_sd),
            ("between_var", s.between_var),
            ("within_var", s.within_var),
        ];
        same_fields(&fields, want, name);
    }
}

/// REML (statsmodels MixedLM, random intercept per boot) on balanced sides with a boot
/// effect: the variance components equal the ANOVA estimators mmcab computes (to the
/// optimizer's precision).
#[test]
fn variance_components_match_statsmodels_mixedlm() {
    let r = reference();
    let fits = r["components_mixedlm"].as_object().expect("mixedlm");
    assert!(fits.len() >= 4);
    for (name, want) in fits {
        let s = spread(&side(&r, name));
        close_to(s.between_var, num(want, "between_var"), 1e-3, name);
        close_to(s.within_var, num(want, "within_var"), 1e-3, name);
    }
}

#[test]
fn boot_change_matches_scipy_ttest_on_boot_means() {
    let r = reference();
    for want in r["changes"].as_array().expect("changes") {
        let (a, b) = (
            want["a"].as_str().expect("a"),
            want["b"].as_str().expect("b"),
        );
        let got = boot_change(&side(&r, a), &side(&r, b), None);
        let model = serde_json::to_value(got.model).expect("model");
        assert_eq!(model, got.model.key());
        assert_eq!(model, want["model"], "{a} vs {b}");
        same_change(&got.change, want, &format!("{a} vs {b}"));
    }
}

/// Single boots with a calibration: the composed variance and its Satterthwaite df
/// against the reference's linear combination of mean squares, for boots with the
/// calibration's runs (df = boots - 1), fewer, more, and a calibration whose boots' own
/// part is cut to 0 (df of the runs).
#[test]
fn calibrated_single_boots_match_the_formula_under_scipy() {
    let r = reference();
    let calibrated = r["calibrated"].as_array().expect("calibrated");
    assert!(calibrated.len() >= 8);
    let mut dfs = Vec::new();
    for want in calibrated {
        let name = want["calibration"].as_str().expect("calibration");
        let cal: CalibratedSpread =
            serde_json::from_value(r["calibrations"][name].clone()).expect("calibration");
        let (a, b) = (
            want["a"].as_str().expect("a"),
            want["b"].as_str().expect("b"),
        );
        let what = format!("{name}: {a} vs {b}");
        let got = boot_change(&side(&r, a), &side(&r, b), Some(&cal));
        assert_eq!(got.model, Model::Calibrated);
        same_change(&got.change, want, &what);
        dfs.push((what, got.change.df, cal.boots as f64 - 1.0));
        // Without the calibration the same pair is shown, not tested.
        let bare = boot_change(&side(&r, a), &side(&r, b), None);
        assert_eq!(bare.model, Model::OneBootPerSide);
        close(bare.change.rel, got.change.rel, "rel");
        assert!(bare.change.ci_low.is_nan() && bare.change.p.is_nan());
    }
    // The df are not always the calibration's boots - 1.
    assert!(
        dfs.iter().any(|(_, df, boots)| (df - boots).abs() < 1e-9),
        "{dfs:?}"
    );
    assert!(
        dfs.iter().any(|(_, df, boots)| *df < boots - 0.1),
        "{dfs:?}"
    );
    // A boot of fewer runs than the calibration's: a sum, a little more df.
    assert!(
        dfs.iter().any(|(_, df, boots)| *df > boots + 0.01),
        "{dfs:?}"
    );
    // The boots' own part cut to 0 ("quiet"): the runs' part keeps boots - 1 df.
    assert!(
        dfs.iter()
            .filter(|(what, _, _)| what.starts_with("quiet"))
            .all(|(_, df, boots)| (df - boots).abs() < 1e-9),
        "{dfs:?}"
    );
}

#[test]
fn satterthwaite_df_of_a_sum_and_a_difference() {
    // Two equal terms of 4 df: 8 df. One term alone: its own df. Nothing: infinite.
    assert_eq!(satterthwaite_df(&[(1.0, 4.0), (1.0, 4.0)]), 8.0);
    assert_eq!(satterthwaite_df(&[(2.0, 5.0), (0.0, 0.0)]), 5.0);
    assert_eq!(satterthwaite_df(&[(0.0, 3.0)]), f64::INFINITY);
    // A difference is known less well than either part: 1^2 / (4/4 + 1/4) = 0.8.
    assert!((satterthwaite_df(&[(2.0, 4.0), (-1.0, 4.0)]) - 0.8).abs() < 1e-12);
}

#[test]
fn boots_needed_matches_scipy() {
    let r = reference();
    for want in r["needed"].as_array().expect("needed") {
        let got = boots_needed(num(want, "var"), num(want, "rel"));
        assert_eq!(
            got.map(u64::from),
            want["boots"].as_u64(),
            "{want}: got {got:?}"
        );
    }
    assert_eq!(boots_needed(f64::NAN, 0.1), None);
    assert_eq!(boots_needed(0.001, 0.0), None);
}

#[test]
fn a_calibration_with_the_same_runs_gives_its_boot_cv() {
    let cal = CalibratedSpread {
        boots: 6,
        runs_per_boot: 5.0,
        boot_cv: 0.03,
        run_cv: 0.01,
    };
    assert!((cal.boot_mean_rel_var(5.0) - 0.03f64.powi(2)).abs() < 1e-15);
    // More runs per boot shrink only the runs' part.
    let more = cal.boot_mean_rel_var(20.0);
    assert!(more < 0.03f64.powi(2) && more > 0.03f64.powi(2) - 0.01f64.powi(2) / 5.0);
    // Boot means that vary less than the runs explain: the boots' own part is 0.
    let quiet = CalibratedSpread {
        boot_cv: 0.001,
        ..cal
    };
    assert!((quiet.boot_mean_rel_var(5.0) - 0.01f64.powi(2) / 5.0).abs() < 1e-15);
}

#[test]
fn one_run_per_boot_and_empty_boots() {
    // One run per boot: no within-boot estimate, the boot means' variance is all.
    let s = spread(&[vec![1.0], vec![3.0], vec![]]);
    assert_eq!((s.boots, s.runs, s.min_runs, s.max_runs), (2, 2, 1, 1));
    assert!(s.run_sd.is_nan());
    assert!((s.between_var - 2.0).abs() < 1e-12);
    let c = boot_change(&[vec![2.0, 2.0], vec![2.0]], &[vec![3.0], vec![3.0]], None);
    assert_eq!(c.model, Model::BootMeansWelch);
    assert_eq!((c.change.rel, c.change.p), (0.5, 0.0));
}
