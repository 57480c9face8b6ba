//! Words shared by the mail text, the markdown and the charts: a block's title, how the
//! report tested (the method line), one line per change, and the notes a report ends
//! with.

pub use super::numbers::verdict_text;
use super::numbers::{format_p, format_pct};
use crate::report::model::{Block, ConfigRow, Note, Report};
use crate::stats::boots::Model;
use crate::stats::Verdict;
use crate::workload::result::Direction;

/// The workload's name, then its direction unless the name already says it: a name
/// that says both (`long-read-long-write`, whose read and write blocks would read
/// alike) or neither gets it.
pub fn block_title(block: &Block) -> String {
    let mut t = block.workload.clone();
    let says = |d: Direction| block.workload.contains(d.as_str());
    let said = match block.direction {
        Some(Direction::Read) => says(Direction::Read) && !says(Direction::Write),
        Some(Direction::Write) => says(Direction::Write) && !says(Direction::Read),
        None => true,
    };
    if !said {
        t.push_str(", ");
        t.push_str(block.direction_text());
    }
    t
}

/// How a change across boots was tested, for report.md.
pub fn model_text(m: Model) -> &'static str {
    match m {
        Model::BootMeansWelch => "boot means, Welch t",
        Model::BootMeansPooled => "boot means, pooled t",
        Model::Calibrated => "calibrated boot-to-boot spread",
        Model::OneBootPerSide => "one boot per side: not tested",
    }
}

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
                verdict_text(v)
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

/// A note of the model as the report ends with it.
pub fn note_text(note: &Note) -> String {
    match note {
        Note::Published(text) | Note::Chart(text) => text.clone(),
        Note::Forced(difference) => format!("COMPARED WITH --force: {difference}"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Metric;

    /// Read and write blocks of a workload named for both (packed-2012's mixed
    /// workloads) are told apart; a name that says its direction is not repeated.
    #[test]
    fn titles_say_the_direction_a_name_leaves_open() {
        let block = |workload: &str, direction: Option<Direction>| Block {
            workload: workload.to_string(),
            direction,
            metric: Metric::MbPerS,
            headline: true,
            block_size_bytes: None,
            sweep: None,
            sweeps: Vec::new(),
            rows: Vec::new(),
        };
        let title = |w: &str, d: Option<Direction>| block_title(&block(w, d));
        let mixed = "long-read-long-write";
        assert_eq!(
            title(mixed, Some(Direction::Read)),
            "long-read-long-write, read"
        );
        assert_eq!(
            title(mixed, Some(Direction::Write)),
            "long-read-long-write, write"
        );
        assert_eq!(title("seq-write", Some(Direction::Write)), "seq-write");
        assert_eq!(title("seq-read", Some(Direction::Read)), "seq-read");
        assert_eq!(title("randrw", Some(Direction::Read)), "randrw, read");
        assert_eq!(title("long write", None), "long write");
    }
}
