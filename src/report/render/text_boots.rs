//! Tables of a comparison across boots. Mail text: per side, the mean of its boot
//! means with the 95% CI across boots, the between-boot spread (sd of the boot means)
//! and the within-boot spread (pooled sd of the runs in a boot), and boots x runs.

use super::columns::{ascii, cut};
use super::numbers::{format_percent, format_value};
use crate::report::model::{Block, Boots, Report};
use crate::stats::boots::Spread;

/// `3 x 5`, or `3 x 4-5` when boots have different numbers of runs.
fn boots_x_runs(s: &Spread) -> String {
    if s.min_runs == s.max_runs {
        format!("{} x {}", s.boots, s.min_runs)
    } else {
        format!("{} x {}-{}", s.boots, s.min_runs, s.max_runs)
    }
}

/// One row per side; `name_w` is the width of the name column.
pub fn table(out: &mut String, report: &Report, block: &Block, name_w: usize) {
    // 2 + name_w + 47 columns: at most 72.
    let name_w = name_w.min(23);
    out.push_str(&format!(
        "  {:<name_w$} {:>9} {:>9} {:>8} {:>7} {:>9}\n",
        "side", "mean", "95% CI +-", "boot cv%", "run cv%", "boots x n",
    ));
    for row in &block.rows {
        let mut name = cut(&ascii(&row.config), name_w);
        if report.is_baseline(&row.config) {
            name = cut(&format!("{} (A)", ascii(&row.config)), name_w);
        }
        let Some(across) = &row.across else { continue };
        let s = &across.spread;
        out.push_str(&format!(
            "  {:<name_w$} {:>9} {:>9} {:>8} {:>7} {:>9}\n",
            name,
            format_value(s.mean),
            format_value((s.ci_high - s.ci_low) / 2.0),
            format_percent(s.boot_cv()),
            format_percent(s.run_cv()),
            boots_x_runs(s),
        ));
    }
}

/// report.md: every block's sides with their spread, the model of each test and the
/// boots per side that would resolve its change.
pub fn markdown(out: &mut String, report: &Report, boots: &Boots) {
    out.push_str("\n## Spread across boots\n\n");
    for (side, dirs) in &boots.sides {
        out.push_str(&format!(
            "- **{side}:** {} boot(s): {}\n",
            dirs.len(),
            dirs.join(", ")
        ));
    }
    out.push_str(
        "\nboot cv: sd of the boot means / mean; run cv: pooled sd of the runs within a \
         boot / mean; between cv: the boots' own offsets (variance component) / mean.\n\n",
    );
    out.push_str(
        "| workload | metric | side | boots x runs | mean | 95% CI across boots | boot cv | \
         run cv | between cv | test | boots per side to resolve |\n",
    );
    out.push_str("|---|---|---|---|---:|---|---:|---:|---:|---|---:|\n");
    for block in &report.blocks {
        for row in &block.rows {
            let Some(a) = &row.across else { continue };
            let s = &a.spread;
            let ci = if s.ci_low.is_nan() {
                "-".to_string()
            } else {
                format!("{} .. {}", format_value(s.ci_low), format_value(s.ci_high))
            };
            out.push_str(&format!(
                "| {} | {} [{}] | {} | {} | {} | {ci} | {}% | {}% | {}% | {} | {} |\n",
                crate::report::render::wording::block_title(block),
                block.metric.key(),
                block.metric.unit(),
                row.config,
                boots_x_runs(s),
                format_value(s.mean),
                format_percent(s.boot_cv()),
                format_percent(s.run_cv()),
                format_percent(s.between_cv()),
                a.model.map_or("(A)", super::wording::model_text),
                a.boots_needed.map_or(String::new(), |m| m.to_string()),
            ));
        }
    }
}
