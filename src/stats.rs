//! Statistics for the report: pure functions over the samples of one config x workload x
//! metric (one value per measured repetition; warm-ups are dropped before this point).
//!
//! - Spread: sample standard deviation (n - 1), CV = sd / mean.
//! - 95% CI of a mean: Student t with n - 1 degrees of freedom.
//! - A vs B: relative change (mean_b - mean_a) / mean_a. Its 95% CI is the Welch CI of
//!   the difference of the means (Welch-Satterthwaite degrees of freedom) divided by
//!   mean_a (mean_a is treated as exact: simple, and close to Fieller's interval while
//!   the CV of A is small, which the table's cv% shows). The p-value is the
//!   two-sided Welch t-test of the same difference, so "CI excludes 0" and "p < 0.05"
//!   always agree.
//! - Drift: least-squares slope of the values against their run order, tested with
//!   t = slope / se (n - 2 degrees of freedom), as scipy.stats.linregress does; the
//!   drift tests of a report are adjusted together as its verdicts are ([`multiple`]),
//!   and what would move a verdict is in [`counterfactual`].
//!
//! Pinned against scipy in `tests/fixtures/stats/` (see the script there).
//!
//! Across boots the unit of replication is the boot: [`boots`]. The p-values of one
//! report are adjusted together: [`multiple`].

pub mod boots;
pub mod counterfactual;
pub mod knee;
pub mod multiple;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence level used everywhere in the report.
pub const CONFIDENCE: f64 = 0.95;
/// CV above which a result is flagged as noisy.
pub const HIGH_CV: f64 = 0.05;
/// Below this many samples a result is flagged (and no test is trusted).
pub const MIN_N: usize = 3;

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (divides by n - 1); NaN for n < 2.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// Coefficient of variation, sd / |mean| (a fraction, not percent).
pub fn cv(xs: &[f64]) -> f64 {
    sample_sd(xs) / mean(xs).abs()
}

pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Two-sided critical value of Student t for [`CONFIDENCE`] and `df` degrees of freedom.
pub fn t_critical(df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0),
        Err(_) => f64::NAN,
    }
}

/// Two-sided p-value of a t statistic with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// Everything the report says about one sample.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation; NaN when n < 2.
    pub sd: f64,
    /// sd / mean (fraction); NaN when n < 2.
    pub cv: f64,
    pub median: f64,
    /// 95% CI of the mean (Student t); NaN when n < 2.
    pub ci_low: f64,
    pub ci_high: f64,
}

pub fn summarize(xs: &[f64]) -> Summary {
    let n = xs.len();
    let m = mean(xs);
    let sd = sample_sd(xs);
    let half = if n >= 2 {
        t_critical((n - 1) as f64) * sd / (n as f64).sqrt()
    } else {
        f64::NAN
    };
    Summary {
        n,
        mean: m,
        sd,
        cv: cv(xs),
        median: median(xs),
        ci_low: m - half,
        ci_high: m + half,
    }
}

/// B relative to A.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Change {
    /// (mean_b - mean_a) / mean_a (fraction).
    pub rel: f64,
    /// 95% CI of `rel` (Welch CI of the difference / mean_a); NaN without spread.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Two-sided Welch t-test p-value; NaN when either side has n < 2.
    pub p: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
}

/// Relative change of B against A with its Welch 95% CI and p-value.
pub fn welch_change(a: &[f64], b: &[f64]) -> Change {
    let (ma, mb) = (mean(a), mean(b));
    if a.len() < 2 || b.len() < 2 {
        return t_change(ma, mb, f64::NAN, f64::NAN);
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (sample_sd(a).powi(2) / na, sample_sd(b).powi(2) / nb);
    let se = (va + vb).sqrt();
    t_change(
        ma,
        mb,
        se,
        satterthwaite_df(&[(va, na - 1.0), (vb, nb - 1.0)]),
    )
}

/// Satterthwaite's degrees of freedom of a variance made of independent terms, each
/// (term, its df), a term being a coefficient (of either sign) times a mean square:
/// (sum of terms)^2 / sum(term^2 / df). A term of 0 adds nothing (its df may be 0);
/// infinite when every term is 0 (no spread: nothing is estimated).
pub fn satterthwaite_df(terms: &[(f64, f64)]) -> f64 {
    let used = terms.iter().filter(|(v, _)| *v != 0.0);
    let total: f64 = used.clone().map(|(v, _)| v).sum();
    let spread: f64 = used.map(|(v, df)| v * v / df).sum();
    if spread == 0.0 {
        f64::INFINITY
    } else {
        total * total / spread
    }
}

/// The change (mean_b - mean_a) / mean_a with the 95% interval and two-sided p of the
/// t statistic (mean_b - mean_a) / `se` on `df` degrees of freedom, both relative to
/// mean_a. No spread (`se` = 0): the difference is exact (p 0 or 1). No `se` or `df`:
/// the change alone, interval and p NaN.
pub fn t_change(ma: f64, mb: f64, se: f64, df: f64) -> Change {
    let (rel, diff) = ((mb - ma) / ma, mb - ma);
    let nan = f64::NAN;
    if se.is_nan() || df.is_nan() || df <= 0.0 {
        return Change {
            rel,
            ci_low: nan,
            ci_high: nan,
            p: nan,
            df,
        };
    }
    if se == 0.0 {
        return Change {
            rel,
            ci_low: rel,
            ci_high: rel,
            p: if diff == 0.0 { 1.0 } else { 0.0 },
            df,
        };
    }
    let half = t_critical(df) * se;
    Change {
        rel,
        ci_low: (diff - half) / ma,
        ci_high: (diff + half) / ma,
        p: t_two_sided_p(diff / se, df),
        df,
    }
}

/// What the change means for the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    NoSignificantChange,
    /// Not enough samples for an interval (e.g. single published values).
    NotTested,
    /// One boot per side: the change between two boots includes their own offsets,
    /// which the runs of one boot cannot show (see [`boots`]).
    OneBootPerSide,
}

/// Faster/slower only when the whole 95% CI of the change lies on one side of zero;
/// `higher_is_better` is false for latencies.
pub fn verdict(change: &Change, higher_is_better: bool) -> Verdict {
    if change.ci_low.is_nan() || change.ci_high.is_nan() {
        return Verdict::NotTested;
    }
    let up = change.ci_low > 0.0;
    let down = change.ci_high < 0.0;
    match (up, down, higher_is_better) {
        (true, _, true) | (_, true, false) => Verdict::Faster,
        (true, _, false) | (_, true, true) => Verdict::Slower,
        _ => Verdict::NoSignificantChange,
    }
}

/// The verdict once the report's p-values are adjusted together ([`multiple`]):
/// faster or slower only when the 95% CI lies on one side of zero and the adjusted
/// p-value `q` is below [`multiple::ALPHA`] (a NaN `q`: no adjustment).
pub fn adjusted_verdict(change: &Change, q: f64, higher_is_better: bool) -> Verdict {
    match verdict(change, higher_is_better) {
        v @ (Verdict::Faster | Verdict::Slower) if q.is_nan() || q < multiple::ALPHA => v,
        Verdict::Faster | Verdict::Slower => Verdict::NoSignificantChange,
        other => other,
    }
}

/// Least-squares trend of values against their run order.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Trend {
    /// Change per step of `order`, in the unit of the values.
    pub slope: f64,
    /// Two-sided p-value of slope != 0 (t with n - 2 df).
    pub p: f64,
}

/// Trend of `values` against `order` (e.g. run numbers); None for n < 3 or constant order.
pub fn trend(order: &[f64], values: &[f64]) -> Option<Trend> {
    let n = order.len().min(values.len());
    if n < 3 {
        return None;
    }
    let (mx, my) = (mean(&order[..n]), mean(&values[..n]));
    let sxx: f64 = order[..n].iter().map(|x| (x - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = (0..n).map(|i| (order[i] - mx) * (values[i] - my)).sum();
    let slope = sxy / sxx;
    let sse: f64 = (0..n)
        .map(|i| (values[i] - my - slope * (order[i] - mx)).powi(2))
        .sum();
    let df = (n - 2) as f64;
    let se = (sse / df / sxx).sqrt();
    let p = if se == 0.0 {
        if slope == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        t_two_sided_p(slope / se, df)
    };
    Some(Trend { slope, p })
}

/// A reason to distrust a verdict (worded by `report::render::numbers::warning_text`).
/// Noise and drift are warned about only where they could move a verdict
/// ([`Moves`]; found by `report::model::warnings` once the report's p-values are
/// adjusted together, see docs/statistics.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    FewSamples {
        n: usize,
    },
    /// The runs vary by more than [`HIGH_CV`] because of one run, and that run moves a
    /// verdict.
    HighCv {
        cv: f64,
        moves: Moves,
    },
    /// The runs drift along run order (the slope's p adjusted with the report's other
    /// drift tests: `q`) and that drift moves a verdict.
    Drift {
        slope_rel_per_run: f64,
        p: f64,
        q: f64,
        moves: Moves,
    },
    /// Runs drifted (as [`Warning::Drift`]) within `boots` of the `of` boots of a side,
    /// and those drifts move a verdict.
    DriftInBoots {
        boots: usize,
        of: usize,
        moves: Moves,
    },
    /// Runs measured for less than the shortest run trusted (`plan::length`):
    /// `seconds` is the shortest, `min_s` the bound; `scale_down` the `--scale-down`
    /// the runs were made with (1: none), which the fix names; `fixed_amount` when
    /// the engine sets the amount itself (mmc_test), so no plan key makes it longer.
    TooShort {
        runs: Vec<u32>,
        seconds: f64,
        min_s: f64,
        scale_down: u32,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        fixed_amount: bool,
    },
    /// Write runs that wrote less than twice the card's stated volatile cache
    /// (`plan::length`): `bytes` the most any of them wrote; `fixed_amount` as for
    /// [`Warning::TooShort`].
    InsideCache {
        runs: Vec<u32>,
        bytes: u64,
        cache_bytes: u64,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        fixed_amount: bool,
    },
    /// A write run's rate fell to a lower level part-way and stayed there (a write
    /// buffer, pSLC or cache, filled): found in its series.csv bins.
    WriteKnee {
        run: u32,
        at_s: f64,
        before_mb_s: f64,
        after_mb_s: f64,
    },
}

/// A verdict that moves once the cause of a warning is taken out of the data: the
/// drift (the config's runs detrended to the other side's mean run order), or the
/// noise (the one run it comes from left out).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Moves {
    /// The comparison: `config` against `baseline`.
    pub config: String,
    pub baseline: String,
    /// Its change and verdict as reported.
    pub rel: f64,
    pub verdict: Verdict,
    /// Its change and verdict without the cause (`rel - rel_without` is the bias the
    /// cause puts on the change).
    pub rel_without: f64,
    pub verdict_without: Verdict,
    /// For noise: the run left out (None for a drift).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
}

/// Warnings one sample earns alone: too few runs. Noise and drift need the report's
/// verdicts (whether they move one) and its other tests (the correction).
pub fn warnings(values: &[f64]) -> Vec<Warning> {
    if values.len() < MIN_N {
        vec![Warning::FewSamples { n: values.len() }]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
