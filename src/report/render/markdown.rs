//! `report.md`: the header, then one table per workload x direction x metric (all
//! metrics, not only the headline ones), change and verdict per config.

use super::numbers::{format_p, format_pct, format_value, warning_text};
use crate::report::model::{Block, ConfigRow, Report};

pub fn render(report: &Report, charts: &[String]) -> String {
    let mut out = format!("# {}\n\n", super::header::title(&report.title));
    header(&mut out, report);
    for b in &report.blocks {
        block(&mut out, b, report.correction.is_some());
    }
    out.push_str(&super::evidence::markdown(report));
    out.push_str(&super::mmc_test::markdown(report));
    if let Some(boots) = report.boots.as_ref().filter(|b| b.several()) {
        crate::report::render::text_boots::markdown(&mut out, report, boots);
    }
    let notes: Vec<String> = crate::report::render::wording::notes(report)
        .into_iter()
        .chain(
            report
                .notes
                .iter()
                .map(crate::report::render::wording::note_text),
        )
        .collect();
    if !notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for n in &notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    if !charts.is_empty() {
        out.push_str("\n## Charts\n\n");
        for c in charts {
            out.push_str(&format!("![{c}]({c})\n"));
        }
    }
    out
}

/// The header list: the report's header fields, its setup, baseline and method.
fn header(out: &mut String, report: &Report) {
    for (key, value) in super::header::lines(&report.header) {
        out.push_str(&format!("- **{key}:** {value}\n"));
    }
    host_parameters(out, report);
    for section in &super::setup::sections(report.setup.as_ref()) {
        out.push_str(&format!("- **{}**\n", section.title.trim_end_matches(':')));
        for line in &section.lines {
            out.push_str(&format!("  - {line}\n"));
        }
    }
    out.push_str(&format!("- **Baseline (A):** {}\n", report.baseline));
    out.push_str(&format!(
        "- {}\n",
        crate::report::render::wording::method(report)
    ));
}

/// One block's table (q only when the p-values were `adjusted`, not for published
/// values) and its warnings.
fn block(out: &mut String, b: &Block, adjusted: bool) {
    let better = if b.metric.higher_is_better() {
        "higher"
    } else {
        "lower"
    };
    out.push_str(&format!(
        "\n## {}: {} ({better} is better)\n\n",
        crate::report::render::wording::block_title(b),
        b.metric.unit()
    ));
    let (q_head, q_rule) = if adjusted {
        (" q |", "---:|")
    } else {
        ("", "")
    };
    out.push_str(&format!(
        "| config | n | mean | 95% CI | cv | change | 95% CI of change | p |{q_head} verdict |\n"
    ));
    out.push_str(&format!(
        "|---|---:|---:|---|---:|---:|---|---:|{q_rule}---|\n"
    ));
    for r in &b.rows {
        out.push_str(&row(r, adjusted));
    }
    for r in &b.rows {
        for w in &r.warnings {
            out.push_str(&format!("\n> warning: {}: {}\n", r.config, warning_text(w)));
        }
    }
}

/// One config's line of a block's table.
fn row(r: &ConfigRow, adjusted: bool) -> String {
    let s = &r.summary;
    let ci = if s.ci_low.is_nan() {
        "-".to_string()
    } else {
        format!("{} .. {}", format_value(s.ci_low), format_value(s.ci_high))
    };
    let cv = if s.cv.is_nan() {
        "-".to_string()
    } else {
        format!("{:.1}%", s.cv * 100.0)
    };
    let q = if adjusted {
        format!(" {} |", r.q.map_or(String::new(), format_p))
    } else {
        String::new()
    };
    let (change, change_ci, p, verdict) = match (r.change, r.verdict) {
        (Some(c), Some(v)) => (
            format_pct(c.rel),
            if c.ci_low.is_nan() {
                "-".to_string()
            } else {
                format!("{} .. {}", format_pct(c.ci_low), format_pct(c.ci_high))
            },
            format_p(c.p),
            crate::report::render::wording::verdict_text(v).to_string(),
        ),
        _ => ("(A)".into(), String::new(), String::new(), String::new()),
    };
    format!(
        "| {} | {} | {} | {ci} | {cv} | {change} | {change_ci} | {p} |{q} {verdict} |\n",
        r.config,
        s.n,
        format_value(s.mean)
    )
}

/// report.md: the module parameters of each recorded host driver, in full.
pub fn host_parameters(out: &mut String, report: &Report) {
    for h in &report.hosts {
        let d = &h.driver;
        let by = if h.by.is_empty() {
            String::new()
        } else {
            format!(" of {}", h.by.join(", "))
        };
        let mut origin = format!("{}, {}", d.driver, d.origin());
        if let Some(s) = &d.srcversion {
            origin.push_str(&format!(", srcversion {s}"));
        }
        if d.parameters.is_empty() {
            out.push_str(&format!(
                "- **Host driver parameters{by}** ({origin}): none\n"
            ));
            continue;
        }
        out.push_str(&format!("- **Host driver parameters{by}** ({origin}):\n"));
        for (name, value) in &d.parameters {
            out.push_str(&format!("  - `{name}` = {value}\n"));
        }
    }
}
