//! Words shared by the mail text and the markdown: how the report tested (the method
//! line), one line per change, and the notes a report ends with.

use crate::report::model::{format_pct, ConfigRow, Report};
use crate::stats::boots::Model;
use crate::stats::{format_p, Verdict};

/// What the numbers mean and how they were tested, in one paragraph (after the name of
/// the baseline).
pub fn method(report: &Report) -> String {
    if report.published {
        return "Single published values (n = 1): shown as published, no spread, no CI, \
                no p-value."
            .to_string();
    }
    let mut text = String::new();
    match &report.boots {
        Some(boots) if boots.several() => text.push_str(
            "Boots are the unit: each results directory is one boot, whose runs give one \
             mean. Change = (B - A) / A of the means of the boot means; 95% CI and p: \
             Welch t-test on the boot means (pooled t when a side has one boot).",
        ),
        Some(boots) => {
            text.push_str(
                "Each results directory is one boot; change = (B - A) / A. 95% CI +- of \
                 a side: its runs within its boot. ",
            );
            text.push_str(if boots.calibration.is_some() {
                "95% CI and p of a change: t with the boot-to-boot spread of the \
                 calibration (see Calibration)."
            } else {
                "One boot per side: a change is shown, not tested (see the note at the \
                 end)."
            });
        }
        None => text.push_str(
            "Change = (B - A) / A; 95% CI: Welch t interval of B - A divided by mean A; \
             p: two-sided Welch t-test.",
        ),
    }
    if let Some(c) = report.correction.filter(|_| report.tests > 0) {
        text.push_str(&format!(
            " Verdicts need q < 0.05: q = p adjusted by {} over the {} tests of this \
             report (all metrics; {}).",
            c.as_str(),
            report.tests,
            c.controls()
        ));
    }
    text
}

/// The change of `row` against `versus` (the row `base`), its interval, p, q, sample
/// and verdict; None for a row without a change (a baseline).
pub fn change_line(row: &ConfigRow, versus: &str, base: Option<&ConfigRow>) -> Option<String> {
    let change = row.change?;
    let head = format!("{} vs {versus}: {}", row.config, format_pct(change.rel));
    let across = row.across.as_ref();
    let base_boots = base.and_then(|b| b.across.as_ref()).map(|a| a.spread.boots);
    let n = match (across, base_boots) {
        (Some(a), Some(b)) => format!("{b}+{} boots", a.spread.boots),
        _ => format!("n = {}", row.summary.n),
    };
    Some(match row.verdict {
        Some(Verdict::OneBootPerSide) => format!("{head} (one boot per side: not tested)"),
        Some(Verdict::NotTested) | None => {
            format!("{head} ({n}; single values: no CI, no p)")
        }
        Some(v) => {
            let p = match format_p(change.p) {
                p if p.starts_with('<') => p,
                p => format!("= {p}"),
            };
            let q = row.q.map_or(String::new(), |q| match format_p(q) {
                q if q.starts_with('<') => format!(", q {q}"),
                q => format!(", q = {q}"),
            });
            let calibrated = across.and_then(|a| a.model) == Some(Model::Calibrated);
            let mut line = format!(
                "{head} [{}, {}], p {p}{q}, {n}{}: {}",
                format_pct(change.ci_low),
                format_pct(change.ci_high),
                if calibrated { ", calibrated" } else { "" },
                v.as_str()
            );
            if let (Verdict::NoSignificantChange, Some(a)) = (v, across) {
                match a.boots_needed {
                    Some(m) if m as usize > a.spread.boots => line.push_str(&format!(
                        "; ~{m} boots per side would resolve {}",
                        format_pct(change.rel)
                    )),
                    _ => {}
                }
            }
            line
        }
    })
}

/// Notes that explain a verdict the report could not give.
pub fn notes(report: &Report) -> Vec<String> {
    let single = report
        .blocks
        .iter()
        .flat_map(|b| &b.rows)
        .any(|r| r.verdict == Some(Verdict::OneBootPerSide));
    if !single {
        return Vec::new();
    }
    vec![
        "One boot per side: every boot brings its own offset (page placement, interrupts, \
         the emulator's timing; on boards thermal and FTL state, CPU frequency) that all \
         its runs share, so the runs of one boot cannot tell it from a real change and a \
         difference between two single boots is not called faster or slower. Compare at \
         least 2 boots per side, better 3 to 5: mmcab compare BASE_DIR... --vs \
         NEW_DIR..., or store this board's boot-to-boot spread once with mmcab calibrate \
         (A/A boots)."
            .to_string(),
    ]
}
