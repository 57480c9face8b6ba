//! Boots as the unit of replication: a comparison across boots (kernels, device trees,
//! driver patches) uses one value per boot, the mean of its runs.
//!
//! Why: every boot brings its own offset (page placement, interrupts, the emulator's
//! timing; on boards thermal state, FTL state, CPU frequency) that all runs of the boot
//! share. Model: run k of boot j on side i is `y = mu_i + u_ij + e_ijk`, boot offsets
//! `u ~ N(0, s_b^2)`, run noise `e ~ N(0, s_e^2)`. The mean of a boot of n runs varies
//! by `s_b^2 + s_e^2 / n`, and the sample variance of the boot means estimates exactly
//! that, so a t-test on the boot means is the nested (mixed-model) analysis of a
//! balanced design: with m boots of n runs per side, pooled t on the boot means has the
//! Satterthwaite df 2(m - 1) of the REML fit. Runs within a boot cannot show `s_b`:
//! treating them as replicates is what calls A/A differences between boots "slower".
//!
//! - [`boot_change`] with >= 2 boots per side: **Welch t on the boot means**
//!   ([`Model::BootMeansWelch`]; Welch-Satterthwaite df, at most 2(m - 1)), so a side
//!   whose boots vary more (a new kernel that is less stable) does not borrow the other
//!   side's spread. Unbalanced runs per boot are fine: each boot counts once.
//! - one side with a single boot: Student t on the boot means, the other side's
//!   boot-to-boot spread standing for both ([`Model::BootMeansPooled`], m - 1 df).
//! - one boot per side: no estimate of `s_b` at all; the change is shown, not tested
//!   ([`Model::OneBootPerSide`]), unless a stored calibration of the same board gives
//!   the spread ([`Model::Calibrated`], see [`CalibratedSpread`]).
//!
//! Relative numbers are against the mean of side A's boot means, as in
//! [`super::welch_change`]. [`spread`] gives the between-boot and within-boot spread of
//! one side, with the variance components (ANOVA estimators; for a balanced design
//! they equal REML's unless the boot variance is truncated at 0).
//! Pinned against scipy and statsmodels (MixedLM) in `tests/fixtures/stats/`.

use super::{mean, satterthwaite_df, summarize, t_change, t_critical, welch_change, Change};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Power [`boots_needed`] plans for.
pub const POWER: f64 = 0.80;
/// Largest answer of [`boots_needed`]; beyond it the change is too small to chase.
pub const MAX_BOOTS_NEEDED: u32 = 100;

/// One side of a comparison (one config of one kernel, say), its runs grouped by boot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Boots with at least one run.
    pub boots: usize,
    /// Runs over all boots.
    pub runs: usize,
    /// Fewest and most runs in one boot.
    pub min_runs: usize,
    pub max_runs: usize,
    /// Mean of the boot means (each boot counts once).
    pub mean: f64,
    /// Sample sd of the boot means; NaN for one boot.
    pub boot_sd: f64,
    /// Pooled sd of the runs around their boot's mean (sqrt of the within-boot mean
    /// square); NaN when no boot has two runs.
    pub run_sd: f64,
    /// 95% CI of the side's mean across boots (Student t on the boot means, boots - 1
    /// df); NaN for one boot.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Variance components of the one-way random-effects model: boot-to-boot variance
    /// beyond what the runs explain (ANOVA estimator, 0 when negative; NaN for one boot)
    /// and run-to-run variance within a boot (= `run_sd`^2).
    pub between_var: f64,
    pub within_var: f64,
}

impl Spread {
    /// sd of the boot means / mean (fraction).
    pub fn boot_cv(&self) -> f64 {
        self.boot_sd / self.mean.abs()
    }
    /// Pooled within-boot sd / mean (fraction).
    pub fn run_cv(&self) -> f64 {
        self.run_sd / self.mean.abs()
    }
    /// sqrt(between_var) / mean (fraction): the boots' own offsets.
    pub fn between_cv(&self) -> f64 {
        self.between_var.sqrt() / self.mean.abs()
    }
}

/// The boot means of the non-empty boots.
pub fn boot_means(boots: &[Vec<f64>]) -> Vec<f64> {
    boots
        .iter()
        .filter(|b| !b.is_empty())
        .map(|b| mean(b))
        .collect()
}

/// Spread of one side; empty boots are skipped.
pub fn spread(boots: &[Vec<f64>]) -> Spread {
    let groups: Vec<&Vec<f64>> = boots.iter().filter(|b| !b.is_empty()).collect();
    let means = boot_means(boots);
    let k = groups.len();
    let runs: usize = groups.iter().map(|g| g.len()).sum();
    let ss_within: f64 = groups.iter().map(|g| sum_of_squares(g)).sum();
    let df_within = runs.saturating_sub(k);
    let within_var = if df_within > 0 {
        ss_within / df_within as f64
    } else {
        f64::NAN
    };
    // The boot means as a sample: their mean, sd and t interval.
    let across = summarize(&means);
    Spread {
        boots: k,
        runs,
        min_runs: groups.iter().map(|g| g.len()).min().unwrap_or(0),
        max_runs: groups.iter().map(|g| g.len()).max().unwrap_or(0),
        mean: across.mean,
        boot_sd: across.sd,
        run_sd: within_var.sqrt(),
        ci_low: across.ci_low,
        ci_high: across.ci_high,
        between_var: between_var(&groups, within_var),
        within_var,
    }
}

/// ANOVA estimator of the boot variance: (MS_between - MS_within) / n0, with n0 the
/// usual effective group size for unequal groups (n for a balanced design), 0 when
/// negative. NaN with fewer than two boots. Without a within-boot estimate (one run per
/// boot) the boot means' variance is all there is: it is returned whole.
fn between_var(groups: &[&Vec<f64>], within_var: f64) -> f64 {
    let k = groups.len();
    if k < 2 {
        return f64::NAN;
    }
    let n: f64 = groups.iter().map(|g| g.len() as f64).sum();
    let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n;
    let ms_between = groups
        .iter()
        .map(|g| g.len() as f64 * (mean(g) - grand).powi(2))
        .sum::<f64>()
        / (k - 1) as f64;
    let n0 =
        (n - groups.iter().map(|g| (g.len() as f64).powi(2)).sum::<f64>() / n) / (k - 1) as f64;
    let within = if within_var.is_nan() { 0.0 } else { within_var };
    ((ms_between - within) / n0).max(0.0)
}

/// How a change across boots was tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// Welch t on the boot means (at least two boots per side).
    BootMeansWelch,
    /// One side has a single boot: Student t on the boot means, the other side's
    /// boot-to-boot spread standing for both.
    BootMeansPooled,
    /// One boot per side, the boot-to-boot spread from a stored calibration.
    Calibrated,
    /// One boot per side and no calibration: no interval, no test.
    OneBootPerSide,
}

impl Model {
    /// As in JSON and CSV.
    pub fn key(self) -> &'static str {
        match self {
            Model::BootMeansWelch => "boot_means_welch",
            Model::BootMeansPooled => "boot_means_pooled",
            Model::Calibrated => "calibrated",
            Model::OneBootPerSide => "one_boot_per_side",
        }
    }
}

/// A board's boot-to-boot spread for one config x workload x direction x metric, as
/// `mmcab calibrate` measured it from A/A boots.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct CalibratedSpread {
    /// A/A boots the spread comes from (boot_cv has boots - 1 degrees of freedom,
    /// run_cv boots x (runs_per_boot - 1)).
    pub boots: usize,
    /// Mean runs per boot of the calibration.
    pub runs_per_boot: f64,
    /// sd of the boot means / mean.
    pub boot_cv: f64,
    /// Pooled within-boot sd / mean (0 when unknown).
    pub run_cv: f64,
}

impl CalibratedSpread {
    /// From one side's spread (the calibration's A/A boots).
    pub fn from_spread(s: &Spread) -> CalibratedSpread {
        CalibratedSpread {
            boots: s.boots,
            runs_per_boot: s.runs as f64 / s.boots as f64,
            boot_cv: s.boot_cv(),
            run_cv: if s.run_sd.is_nan() { 0.0 } else { s.run_cv() },
        }
    }

    /// Relative variance of the mean of one boot of `runs` runs: the boots' own part
    /// (boot_cv^2 less what the calibration's runs explain, at least 0) plus the runs'
    /// part for `runs`. Equals boot_cv^2 when `runs` is the calibration's.
    pub fn boot_mean_rel_var(&self, runs: f64) -> f64 {
        let (boot, run) = self.terms(runs);
        boot.0 + run.0
    }

    /// [`Self::boot_mean_rel_var`] as its two independent terms, each (coefficient x
    /// mean square, df of the mean square): boot_cv^2 (the boot means' mean square,
    /// boots - 1 df) and run_cv^2 (the within-boot mean square, runs - boots df). The
    /// boots' own part is boot_cv^2 - run_cv^2 / runs_per_boot, so one boot of `runs`
    /// runs varies by boot_cv^2 + (1/runs - 1/runs_per_boot) run_cv^2: a difference of
    /// mean squares unless `runs` is the calibration's. With the boots' own part cut to
    /// 0 the runs' part is all: run_cv^2 / runs.
    fn terms(&self, runs: f64) -> ((f64, f64), (f64, f64)) {
        let (boot_ms, run_ms) = (self.boot_cv.powi(2), self.run_cv.powi(2));
        let boot_df = self.boots as f64 - 1.0;
        let run_df = (self.boots as f64 * self.runs_per_boot).round() - self.boots as f64;
        if boot_ms >= run_ms / self.runs_per_boot {
            (
                (boot_ms, boot_df),
                (run_ms * (1.0 / runs - 1.0 / self.runs_per_boot), run_df),
            )
        } else {
            // The boots' own part is cut to 0 because the boot means varied less than
            // their runs explain; that rests on the boot means' boots - 1 df, so the
            // runs' part keeps those (the within-boot df would assume boots never
            // differ: A/A boots on a loaded machine were then called 20% of the time).
            ((0.0, boot_df), (run_ms / runs, boot_df))
        }
    }

    /// Relative variance of the boots' own offsets: boot_cv^2 less the runs' part
    /// run_cv^2 / runs_per_boot, at least 0.
    pub fn between_rel_var(&self) -> f64 {
        (self.boot_cv.powi(2) - self.run_cv.powi(2) / self.runs_per_boot).max(0.0)
    }
}

/// The change B vs A across boots and how it was tested.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootChange {
    pub change: Change,
    pub model: Model,
    /// Relative variance of one boot mean the test used (NaN when none): what
    /// [`boots_needed`] plans with.
    pub boot_mean_rel_var: f64,
}

/// B vs A with boots as the unit (see the module doc for the model); `calibration` is
/// used only when both sides have a single boot.
pub fn boot_change(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    calibration: Option<&CalibratedSpread>,
) -> BootChange {
    let (ma, mb) = (boot_means(a), boot_means(b));
    let untested = |model| BootChange {
        change: Change {
            rel: (mean(&mb) - mean(&ma)) / mean(&ma),
            ci_low: f64::NAN,
            ci_high: f64::NAN,
            p: f64::NAN,
            df: f64::NAN,
        },
        model,
        boot_mean_rel_var: f64::NAN,
    };
    match (ma.len(), mb.len()) {
        (0, _) | (_, 0) => untested(Model::OneBootPerSide),
        (1, 1) => match calibration {
            Some(cal) => calibrated_change(a, b, cal),
            None => untested(Model::OneBootPerSide),
        },
        (1, _) | (_, 1) => {
            let change = pooled_change(&ma, &mb);
            let var = pooled_var(&ma, &mb) / mean(&ma).powi(2);
            BootChange {
                change,
                model: Model::BootMeansPooled,
                boot_mean_rel_var: var,
            }
        }
        _ => BootChange {
            change: welch_change(&ma, &mb),
            model: Model::BootMeansWelch,
            boot_mean_rel_var: pooled_var(&ma, &mb) / mean(&ma).powi(2),
        },
    }
}

/// Sum of squared deviations from the mean.
fn sum_of_squares(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m).powi(2)).sum()
}

/// Pooled sample variance of the boot means of both sides.
fn pooled_var(a: &[f64], b: &[f64]) -> f64 {
    let df = (a.len() + b.len()) as f64 - 2.0;
    (sum_of_squares(a) + sum_of_squares(b)) / df
}

/// Student t (equal variances) of mean(b) - mean(a), relative to mean(a).
pub fn pooled_change(a: &[f64], b: &[f64]) -> Change {
    let (ma, mb) = (mean(a), mean(b));
    let df = (a.len() + b.len()) as f64 - 2.0;
    let se = (pooled_var(a, b) * (1.0 / a.len() as f64 + 1.0 / b.len() as f64)).sqrt();
    t_change(ma, mb, se, df)
}

/// One boot per side, the variance of each boot mean from the calibration (for that
/// boot's number of runs, relative to its own mean). t has Satterthwaite's df for the
/// variance composed of the calibration's two mean squares
/// ([`CalibratedSpread::terms`]): the calibration's boots - 1 when both boots have its
/// runs per boot, fewer when a difference of mean squares dominates (boots with more
/// runs), more when a sum does (fewer runs), the boots - 1 df when the boots' own
/// part is cut to 0.
fn calibrated_change(a: &[Vec<f64>], b: &[Vec<f64>], cal: &CalibratedSpread) -> BootChange {
    let runs = |x: &[Vec<f64>]| x.iter().map(Vec::len).sum::<usize>() as f64;
    let (ma, mb) = (mean(&boot_means(a)), mean(&boot_means(b)));
    let ((boot_a, df_boot), (run_a, df_run)) = cal.terms(runs(a));
    let ((boot_b, _), (run_b, _)) = cal.terms(runs(b));
    // Absolute variances: each side's relative variance times its mean squared.
    let (wa, wb) = (ma * ma, mb * mb);
    let boot = boot_a * wa + boot_b * wb;
    let run = run_a * wa + run_b * wb;
    let df = satterthwaite_df(&[(boot, df_boot), (run, df_run)]);
    BootChange {
        change: t_change(ma, mb, (boot + run).sqrt(), df),
        model: Model::Calibrated,
        boot_mean_rel_var: boot_a + run_a,
    }
}

/// Boots per side for the 95% interval of a change of `rel` (a fraction) to exclude 0
/// with [`POWER`], when one boot mean varies by `boot_mean_rel_var` (relative variance)
/// and Welch's df is taken as the balanced 2(m - 1): the smallest m >= 2 with
/// (t_0.975 + t_POWER) * sqrt(2 v / m) <= |rel|. None when `rel` or the variance is not
/// usable, or more than [`MAX_BOOTS_NEEDED`] would be needed.
pub fn boots_needed(boot_mean_rel_var: f64, rel: f64) -> Option<u32> {
    let v = boot_mean_rel_var;
    if !(v.is_finite() && v >= 0.0 && rel.is_finite() && rel != 0.0) {
        return None;
    }
    (2..=MAX_BOOTS_NEEDED).find(|&m| {
        let df = 2.0 * (f64::from(m) - 1.0);
        let t_power = StudentsT::new(0.0, 1.0, df)
            .map(|t| t.inverse_cdf(POWER))
            .unwrap_or(f64::NAN);
        (t_critical(df) + t_power) * (2.0 * v / f64::from(m)).sqrt() <= rel.abs()
    })
}

#[cfg(test)]
#[path = "boots_tests.rs"]
pub(crate) mod tests;
