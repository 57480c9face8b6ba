//! Multiple comparisons: a report tests every workload x direction x metric x config
//! pair; at 5% per test, a report of a dozen independent tests calls something faster
//! or slower in 46% of A/A comparisons (1 - 0.95^12). The p-values of one report are adjusted
//! together and a verdict needs the adjusted p-value (q) below 0.05.
//!
//! - [`Correction::BenjaminiHochberg`] (the default): controls the false discovery
//!   rate, the expected share of wrong calls among the calls, at 5%. When nothing
//!   changed (A/A) every call is wrong, so it then bounds the chance of any call in the
//!   report by 5%, like Holm; when a change is real it usually moves several workloads
//!   and metrics at once, and BH keeps finding those where Holm drops them. BH is
//!   proven for independent and for positively dependent tests (Benjamini and
//!   Yekutieli 2001); the metrics of one report come from the same runs and move
//!   together.
//! - [`Correction::Holm`]: controls the chance of any wrong call (family-wise error
//!   rate) under any dependence; more conservative (`--correction holm`).
//!
//! Both as statsmodels' `multipletests(method="fdr_bh" | "holm")`, pinned against it in
//! `tests/fixtures/stats/`. NaN p-values (no test) stay NaN and do not count.

use serde::Serialize;

/// Significance level of an adjusted p-value.
pub const ALPHA: f64 = 0.05;

/// How the p-values of one report are adjusted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Correction {
    #[default]
    BenjaminiHochberg,
    Holm,
}

impl Correction {
    pub const ALL: [Correction; 2] = [Correction::BenjaminiHochberg, Correction::Holm];

    /// Short name, as on the command line.
    pub fn key(self) -> &'static str {
        match self {
            Correction::BenjaminiHochberg => "bh",
            Correction::Holm => "holm",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Correction::BenjaminiHochberg => "Benjamini-Hochberg",
            Correction::Holm => "Holm",
        }
    }

    /// What is controlled, for the report's method line.
    pub fn controls(self) -> &'static str {
        match self {
            Correction::BenjaminiHochberg => "false discovery rate 5%",
            Correction::Holm => "family-wise error rate 5%",
        }
    }
}

/// Adjusted p-values, in the order given; NaN in, NaN out.
pub fn adjust(p: &[f64], correction: Correction) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len();
    let mut out = vec![f64::NAN; p.len()];
    match correction {
        Correction::BenjaminiHochberg => {
            // p_(k) * m / k, made monotone from the largest down.
            let mut running = f64::INFINITY;
            for (rank, &i) in order.iter().enumerate().rev() {
                running = running.min(p[i] * m as f64 / (rank + 1) as f64);
                out[i] = running.min(1.0);
            }
        }
        Correction::Holm => {
            // p_(k) * (m - k + 1), made monotone from the smallest up.
            let mut running: f64 = 0.0;
            for (rank, &i) in order.iter().enumerate() {
                running = running.max(p[i] * (m - rank) as f64);
                out[i] = running.min(1.0);
            }
        }
    }
    out
}

/// Number of p-values that take part (not NaN).
pub fn tests(p: &[f64]) -> usize {
    p.iter().filter(|v| !v.is_nan()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// statsmodels' multipletests(method="fdr_bh" | "holm"), from
    /// tests/fixtures/stats/boots_reference.json.
    #[test]
    fn adjusted_p_values_match_statsmodels() {
        let r = super::super::boots::tests::reference();
        let vectors = r["multiple"].as_array().expect("multiple");
        assert!(vectors.len() >= 4);
        for v in vectors {
            let p: Vec<f64> = serde_json::from_value(v["p"].clone()).expect("p");
            for (method, correction) in [
                ("fdr_bh", Correction::BenjaminiHochberg),
                ("holm", Correction::Holm),
            ] {
                let want: Vec<f64> =
                    serde_json::from_value(v[method]["adjusted"].clone()).expect("adjusted");
                let reject: Vec<bool> =
                    serde_json::from_value(v[method]["reject"].clone()).expect("reject");
                let got = adjust(&p, correction);
                for i in 0..p.len() {
                    assert!(
                        (got[i] - want[i]).abs() <= 1e-12,
                        "{method} {p:?}: got {got:?}, statsmodels says {want:?}"
                    );
                    assert_eq!(got[i] < ALPHA, reject[i], "{method} {p:?} #{i}");
                }
            }
        }
    }

    #[test]
    fn missing_p_values_stay_missing_and_do_not_count() {
        let p = [0.01, f64::NAN, 0.04];
        let q = adjust(&p, Correction::BenjaminiHochberg);
        assert!(q[1].is_nan());
        assert_eq!((q[0], q[2]), (0.02, 0.04));
        assert_eq!(tests(&p), 2);
        assert!(adjust(&[], Correction::Holm).is_empty());
    }
}
