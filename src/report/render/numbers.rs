//! Numbers and reasons as every output writes them: values with about four significant
//! digits, percentages, p-values and the warnings of a row. The model and
//! [`crate::stats`] hold the numbers; these are their words.

use crate::plan::length;
use crate::stats::multiple::ALPHA;
use crate::stats::{Moves, Verdict, Warning, HIGH_CV, MIN_N};
use crate::units::format_size;

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

/// A verdict in the report's words (also summary.csv's `verdict` column and the gates').
pub fn verdict_text(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoSignificantChange => "no significant change",
        Verdict::NotTested => "not tested (n < 2)",
        Verdict::OneBootPerSide => "not called (one boot per side)",
    }
}

/// A reason to distrust a verdict, worded for the mail text (and report.md,
/// summary.csv): what it is, and which verdict it moves to what.
pub fn warning_text(w: &Warning) -> String {
    match w {
        Warning::FewSamples { n } => format!("n = {n} < {MIN_N}: too few runs"),
        Warning::HighCv { cv, moves } => {
            let from = moves
                .run
                .map_or(String::new(), |r| format!(", from run {r}"));
            format!(
                "CV {:.1}% > {:.0}%{from}: it {} {}",
                cv * 100.0,
                HIGH_CV * 100.0,
                biases("biases", moves),
                enough(moves, "without it")
            )
        }
        Warning::Drift {
            slope_rel_per_run,
            q,
            moves,
            ..
        } => format!(
            "drift {:+.2}%/run (q = {}): under this run order it {} {}",
            slope_rel_per_run * 100.0,
            format_p(*q),
            biases("biases", moves),
            enough(moves, "without it")
        ),
        Warning::DriftInBoots { boots, of, moves } => format!(
            "runs drift within {boots} of {of} boots (q < {ALPHA}): they {} {}",
            biases("bias", moves),
            enough(moves, "without them")
        ),
        Warning::TooShort {
            runs,
            seconds,
            min_s,
            scale_down,
            fixed_amount,
        } => format!(
            "{} too short to trust ({} at the shortest, under {}): {}",
            runs_text(runs),
            length::seconds_text(*seconds),
            length::seconds_text(*min_s),
            if *fixed_amount {
                "mmc_test sets each size's amount itself (its test area), so each number \
                 is one short burst; read it with the block-layer rows, and raise \
                 repetitions for its spread"
                    .to_string()
            } else if *scale_down > 1 {
                format!("run without --scale-down {scale_down}")
            } else {
                format!(
                    "set min_runtime = \"{}s\" in the plan",
                    min_s.ceil().max(1.0)
                )
            }
        ),
        Warning::InsideCache {
            runs,
            bytes,
            cache_bytes,
            fixed_amount,
        } => format!(
            "{} wrote {} at most, under twice the card's {} cache (EXT_CSD CACHE_SIZE): {}",
            runs_text(runs),
            format_size(*bytes),
            format_size(*cache_bytes),
            if *fixed_amount {
                "mmc_test sets its amount itself (its test area), so these writes may have \
                 gone no further than the cache; to time the flash, run them in a config \
                 with cache = \"off\""
                    .to_string()
            } else {
                format!(
                    "write {} or more (size, io_size or min_runtime), or set cache = \"off\"",
                    format_size(length::CACHE_FACTOR * cache_bytes)
                )
            }
        ),
        Warning::WriteKnee {
            run,
            at_s,
            before_mb_s,
            after_mb_s,
        } => format!(
            "run {run}'s write rate fell from {before_mb_s:.1} to {after_mb_s:.1} MB/s at \
             {at_s:.1} s and stayed there (a write buffer filled): the mean mixes both; \
             size the runs to stay on one side of it"
        ),
    }
}

/// `run 3` or `runs 1, 3, 5`.
pub(super) fn runs_text(runs: &[u32]) -> String {
    let list: Vec<String> = runs.iter().map(u32::to_string).collect();
    match list.len() {
        1 => format!("run {}", list[0]),
        _ => format!("runs {}", list.join(", ")),
    }
}

/// `bus4 against bus8`.
fn versus(m: &Moves) -> String {
    format!("{} against {}", m.config, m.baseline)
}

/// `biases bus4 against bus8 by -2.4%,` (`verb`: biases or bias)
fn biases(verb: &str, m: &Moves) -> String {
    format!(
        "{verb} {} by {},",
        versus(m),
        format_pct(m.rel - m.rel_without)
    )
}

/// `enough to change the verdict (without it: slower)`.
fn enough(m: &Moves, without: &str) -> String {
    format!(
        "enough to change the verdict ({without}: {})",
        verdict_text(m.verdict_without)
    )
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
        let moves = Moves {
            config: "bus4".into(),
            baseline: "bus8".into(),
            rel: -0.031,
            verdict: Verdict::Slower,
            rel_without: -0.007,
            verdict_without: Verdict::NoSignificantChange,
            run: None,
        };
        let drift = Warning::Drift {
            slope_rel_per_run: -0.0123,
            p: 0.0004,
            q: 0.0031,
            moves: moves.clone(),
        };
        assert_eq!(
            warning_text(&drift),
            "drift -1.23%/run (q = 0.003): under this run order it biases bus4 \
             against bus8 by -2.4%, enough to change the verdict (without it: no \
             significant change)"
        );
        let outlier = Moves {
            run: Some(7),
            ..moves.clone()
        };
        assert_eq!(
            warning_text(&Warning::HighCv {
                cv: 0.389,
                moves: outlier
            }),
            "CV 38.9% > 5%, from run 7: it biases bus4 against bus8 by -2.4%, enough \
             to change the verdict (without it: no significant change)"
        );
        assert_eq!(
            warning_text(&Warning::DriftInBoots {
                boots: 2,
                of: 3,
                moves
            }),
            "runs drift within 2 of 3 boots (q < 0.05): they bias bus4 against bus8 \
             by -2.4%, enough to change the verdict (without them: no significant \
             change)"
        );
        assert_eq!(
            warning_text(&Warning::FewSamples { n: 2 }),
            "n = 2 < 3: too few runs"
        );
    }

    #[test]
    fn a_short_run_names_the_fix_its_engine_takes() {
        let short = |scale_down, fixed_amount| Warning::TooShort {
            runs: vec![1, 5],
            seconds: 0.016,
            min_s: 1.0,
            scale_down,
            fixed_amount,
        };
        assert_eq!(
            warning_text(&short(1, false)),
            "runs 1, 5 too short to trust (16 ms at the shortest, under 1 s): set \
             min_runtime = \"1s\" in the plan"
        );
        assert!(warning_text(&short(4, false)).ends_with("run without --scale-down 4"));
        let mmc_test = warning_text(&short(1, true));
        assert!(
            mmc_test.contains("mmc_test sets each size's amount itself")
                && !mmc_test.contains("min_runtime"),
            "{mmc_test}"
        );
        let json = |w: &Warning| serde_json::to_value(w).unwrap();
        assert_eq!(json(&short(1, true))["fixed_amount"], true);
        assert!(json(&short(1, false)).get("fixed_amount").is_none());
    }

    #[test]
    fn a_write_inside_the_cache_names_the_fix_its_engine_takes() {
        let json = |w: &Warning| serde_json::to_value(w).unwrap();
        let cache = |fixed_amount| Warning::InsideCache {
            runs: vec![3],
            bytes: 4 << 20,
            cache_bytes: 4 << 20,
            fixed_amount,
        };
        assert!(
            warning_text(&cache(false)).ends_with(
                "write 8MiB or more (size, io_size or min_runtime), or set cache = \"off\""
            ),
            "{}",
            warning_text(&cache(false))
        );
        let mmc_test = warning_text(&cache(true));
        assert!(
            mmc_test.contains("mmc_test sets its amount itself")
                && mmc_test.contains("cache = \"off\"")
                && !mmc_test.contains("min_runtime"),
            "{mmc_test}"
        );
        assert_eq!(json(&cache(true))["fixed_amount"], true);
        assert!(json(&cache(false)).get("fixed_amount").is_none());
    }
}
