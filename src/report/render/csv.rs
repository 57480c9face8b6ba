//! `summary.csv`: tidy, one row per config x workload x direction x metric.
//! Empty cells mean "not defined" (e.g. sd for n = 1, change for the baseline).
//! `q` is `p` adjusted over the report (the verdict needs q < 0.05); the columns from
//! `boots` on are filled across boots (`mmcab compare`): boots and runs per boot of the
//! row's side, its spread (fractions of its mean), how the change was tested and the
//! boots per side that would resolve it.

use super::numbers::warning_text;
use crate::report::model::Report;
use anyhow::Result;

pub const HEADER: [&str; 30] = [
    "config",
    "workload",
    "direction",
    "metric",
    "unit",
    "higher_is_better",
    "headline",
    "n",
    "mean",
    "sd",
    "cv",
    "median",
    "ci_low",
    "ci_high",
    "baseline",
    "change_rel",
    "change_ci_low",
    "change_ci_high",
    "p",
    "verdict",
    "warnings",
    "q",
    "boots",
    "runs_per_boot_min",
    "runs_per_boot_max",
    "boot_cv",
    "run_cv",
    "between_cv",
    "model",
    "boots_needed",
];

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

pub fn render(report: &Report) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for b in &report.blocks {
        for r in &b.rows {
            let s = &r.summary;
            let (rel, lo, hi, p) = match r.change {
                Some(c) => (num(c.rel), num(c.ci_low), num(c.ci_high), num(c.p)),
                None => Default::default(),
            };
            let warnings: Vec<String> = r.warnings.iter().map(warning_text).collect();
            let across: [String; 8] = match &r.across {
                Some(a) => [
                    a.spread.boots.to_string(),
                    a.spread.min_runs.to_string(),
                    a.spread.max_runs.to_string(),
                    num(a.spread.boot_cv()),
                    num(a.spread.run_cv()),
                    num(a.spread.between_cv()),
                    a.model.map_or(String::new(), |m| m.key().to_string()),
                    a.boots_needed.map_or(String::new(), |m| m.to_string()),
                ],
                None => Default::default(),
            };
            let mut record = vec![
                r.config.clone(),
                b.workload.clone(),
                b.direction_text().to_string(),
                b.metric.key().to_string(),
                b.metric.unit().to_string(),
                b.metric.higher_is_better().to_string(),
                b.headline.to_string(),
                s.n.to_string(),
                num(s.mean),
                num(s.sd),
                num(s.cv),
                num(s.median),
                num(s.ci_low),
                num(s.ci_high),
                r.baseline.clone().unwrap_or_default(),
                rel,
                lo,
                hi,
                p,
                r.verdict
                    .map(|v| super::wording::verdict_text(v).to_string())
                    .unwrap_or_default(),
                warnings.join("; "),
                r.q.map_or(String::new(), num),
            ];
            record.extend(across);
            w.write_record(record)?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
