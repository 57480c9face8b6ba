//! What `mmcab report` and `mmcab compare` share beyond the report: the output format
//! (`--format text|json|lava`, `--json`), the regression gate (`--fail-if`,
//! `--threshold`, `--allow-inconclusive`) and the exit status it sets.

use super::output::Output;
use crate::exit::Kind;
use crate::report::ci::gate::{self, FailIf, GateOutcome, GateRule, GateStatus};
use crate::report::ci::lava;
use crate::report::{model::Report, Written};
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

/// Version of the JSON document `report --json` and `compare --json` print.
pub const REPORT_JSON_SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The mail text (also in report.txt)
    Text,
    /// One JSON document: the report model, the gate, where the files went
    Json,
    /// LAVA test-case signals, one per workload x direction x metric x config, and per gate check
    Lava,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailIfArg {
    /// A significant slowdown (lower MB/s or IOPS, higher latency)
    Slower,
    /// A significant speed-up (for changes that should change nothing, or the opposite gate)
    Faster,
    /// Either
    Changed,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// What goes to stdout (the files in the report directory are written either way)
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    pub format: Format,
    /// Same as --format json
    #[arg(long)]
    pub json: bool,
}

impl OutputArgs {
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Regression gate: exit 6 when a headline metric of a compared config is
    /// significantly (95% CI) slower/faster/either than its baseline. Alone it passes
    /// any other result, however wide its interval; add --threshold to pass only what
    /// the interval rules out
    #[arg(long, value_enum)]
    pub fail_if: Option<FailIfArg>,
    /// With --fail-if, e.g. 3%: "no slowdown beyond 3% at 95% confidence": fail (exit 6)
    /// when the change is significant and its whole CI lies beyond it, pass when the CI
    /// rules it out, else inconclusive (exit 7)
    #[arg(long, requires = "fail_if", value_parser = parse_threshold)]
    pub threshold: Option<f64>,
    /// With --fail-if: exit 0 instead of 7 when some check is inconclusive (no
    /// interval: too few runs or boots on a side; with --threshold, an interval too
    /// wide to decide)
    #[arg(long, requires = "fail_if")]
    pub allow_inconclusive: bool,
}

/// `3%`, `3` (percent) or `0.5%`, as a fraction.
fn parse_threshold(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<f64>() {
        Ok(v) if (0.0..100.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!(
            "'{text}' is not a percentage from 0 to 100 (e.g. 3% or 0.5%)"
        )),
    }
}

impl GateArgs {
    pub fn rule(&self) -> Option<GateRule> {
        let fail_if = match self.fail_if? {
            FailIfArg::Slower => FailIf::Slower,
            FailIfArg::Faster => FailIf::Faster,
            FailIfArg::Changed => FailIf::Changed,
        };
        Some(GateRule {
            fail_if,
            threshold: self.threshold,
        })
    }
}

/// Show a written report in the asked format, apply the gate, and say how it ended.
pub fn finish(
    command: &str,
    written: &Written,
    output: &OutputArgs,
    gates: &GateArgs,
    out: &Output,
) -> Result<Kind> {
    let model = model_for(written, output, gates)?;
    for difference in &written.forced {
        out.line(&format!("mmcab: WARNING: {difference}"));
    }
    for warning in &written.warnings {
        out.warn(warning);
    }
    let outcome = gates
        .rule()
        .zip(model)
        .map(|(rule, model)| gate::evaluate(model, rule));
    match (output.format(), model) {
        (Format::Lava, Some(model)) => {
            let lines = lava::signals(model, outcome.as_ref());
            out.print(&format!("{}\n", lines.join("\n")))?;
            if let Some(o) = &outcome {
                for line in gate::summary_lines(o) {
                    out.line(&format!("mmcab: {line}"));
                }
            }
        }
        (Format::Json, _) => out.json(&serde_json::json!({
            "schema": REPORT_JSON_SCHEMA,
            "command": command,
            "report_dir": written.dir,
            "report": model.map(crate::report::render::json::view),
            "gate": outcome,
            "forced": written.forced,
            "warnings": written.warnings,
        }))?,
        _ => {
            out.print(&written.mail)?;
            if let Some(o) = &outcome {
                out.print(&format!("\n{}\n", gate::summary_lines(o).join("\n")))?;
            }
        }
    }
    out.line(&format!(
        "mmcab: report written to {}/ ({})",
        written.dir.display(),
        written.files
    ));
    Ok(ending(outcome.as_ref(), gates.allow_inconclusive))
}

/// How the command ends after the gate: failed (a significant change of the kind
/// `--fail-if` names), inconclusive (some check without a confidence interval, or with
/// --threshold one too wide; not with `--allow-inconclusive`), or success.
fn ending(outcome: Option<&GateOutcome>, allow_inconclusive: bool) -> Kind {
    match outcome.map(|o| o.status) {
        Some(GateStatus::Fail) => Kind::GateFailed,
        Some(GateStatus::Inconclusive) if !allow_inconclusive => Kind::Inconclusive,
        _ => Kind::Success,
    }
}

/// The report model, refusing what cannot be done without one (a probe's report has
/// its own) and a gate that could never fail (nothing compared). `--threshold` without
/// a gate is refused by clap.
fn model_for<'a>(
    written: &'a Written,
    output: &OutputArgs,
    gates: &GateArgs,
) -> Result<Option<&'a Report>> {
    let model = written.report.as_ref();
    let Some(report) = model else {
        if gates.fail_if.is_some() || output.format() == Format::Lava {
            bail!(
                "{}: a probe's report has no per-config metrics for --fail-if or \
                 --format lava (they apply to results of mmcab run)",
                written.dir.display()
            );
        }
        return Ok(None);
    };
    if gates.fail_if.is_some() && report.configs.len() < 2 {
        bail!(
            "--fail-if: the report has one config ({}), nothing is compared: run a plan \
             with two configs, or compare two results directories",
            report.configs.join(", ")
        );
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_percentages() {
        assert_eq!(parse_threshold("3%"), Ok(0.03));
        assert_eq!(parse_threshold("0.5"), Ok(0.005));
        assert!(parse_threshold("150%").is_err());
        assert!(parse_threshold("fast").unwrap_err().contains("e.g. 3%"));
    }
}
