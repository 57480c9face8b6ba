//! Numbers and reasons as every output writes them: values with about four significant
//! digits, percentages, p-values and the warnings of a row. The model and
//! [`crate::stats`] hold the numbers; these are their words.

use crate::stats::{Warning, DRIFT_ALPHA, HIGH_CV, MIN_N};

/// Format a value with about four significant digits, no exponent.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        return "-".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}")
}

/// A fraction as a percentage with one decimal and no sign (`12.3`), `-` when not a
/// number.
pub fn format_percent(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}", v * 100.0)
    } else {
        "-".to_string()
    }
}

/// A relative change as a signed percentage; `from 0` for a change from a value of 0
/// (a published 0, say), which no percentage describes.
pub fn format_pct(rel: f64) -> String {
    if rel.is_nan() {
        "-".to_string()
    } else if rel.is_infinite() {
        "from 0".to_string()
    } else {
        format!("{:+.1}%", rel * 100.0)
    }
}

/// p-value as printed: `<0.001` or three decimals.
pub fn format_p(p: f64) -> String {
    if p.is_nan() {
        "-".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// A reason to distrust a summary, worded for the mail text (and report.md, summary.csv).
pub fn warning_text(w: &Warning) -> String {
    match w {
        Warning::FewSamples { n } => format!("n = {n} < {MIN_N}: too few runs"),
        Warning::HighCv { cv } => {
            format!("CV {:.1}% > {:.0}%: noisy", cv * 100.0, HIGH_CV * 100.0)
        }
        Warning::Drift {
            slope_rel_per_run,
            p,
        } => format!(
            "drift {:+.2}%/run over run order (p = {})",
            slope_rel_per_run * 100.0,
            format_p(*p)
        ),
        Warning::DriftInBoots { boots, of } => {
            format!("runs drift within {boots} of {of} boots (p < {DRIFT_ALPHA})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_about_four_digits() {
        assert_eq!(format_value(3034.44), "3034");
        assert_eq!(format_value(22.514), "22.51");
        assert_eq!(format_value(5.8), "5.800");
        assert_eq!(format_pct(-0.2314), "-23.1%");
        assert_eq!(
            format_pct(5.0 / 0.0),
            "from 0",
            "a change from a published 0"
        );
        assert_eq!(format_pct(-5.0 / 0.0), "from 0");
    }

    #[test]
    fn p_values_and_warnings_are_worded() {
        assert_eq!(format_p(0.0004), "<0.001");
        assert_eq!(format_p(0.0449), "0.045");
        assert_eq!(format_p(f64::NAN), "-");
        let drift = Warning::Drift {
            slope_rel_per_run: -0.0123,
            p: 0.0004,
        };
        assert_eq!(
            warning_text(&drift),
            "drift -1.23%/run over run order (p = <0.001)"
        );
        assert_eq!(
            warning_text(&Warning::HighCv { cv: 0.074 }),
            "CV 7.4% > 5%: noisy"
        );
        assert_eq!(
            warning_text(&Warning::FewSamples { n: 2 }),
            "n = 2 < 3: too few runs"
        );
    }
}
