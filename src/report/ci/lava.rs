//! `--format lava`: the report as LAVA test-case signals, one line each, for a LAVA test
//! definition's run steps (see `lava/` and docs/labs-ci.md, "LAVA and KernelCI").
//!
//! LAVA's dispatcher reads the serial console with the pattern
//! `<LAVA_SIGNAL_(\S+) ([^>]+)>` (`lava_dispatcher/actions/test/shell.py`,
//! `TestShellAction._reset_patterns`; the same in LAVA 2023.01 and 2026.07), splits the
//! parameters of a `TESTCASE` signal on whitespace, each at every `=` into exactly
//! `KEY` and `VALUE` (a second `=` drops the test case), and requires `TEST_CASE_ID`
//! and a `RESULT` of `pass`, `fail`, `skip` or `unknown`; `MEASUREMENT` must parse as a
//! Python float (`lava_dispatcher/connection.py`, `SignalMatch.match`). That is the
//! line `lava-test-case ID --result R --measurement M --units U` prints. So ids and
//! units here contain no whitespace, no `=` and no `>`.
//!
//! Lines:
//! - one per block (workload x direction x metric) x config:
//!   `<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=<workload>.<direction>.<metric>.<config> RESULT=pass MEASUREMENT=<mean> UNITS=<unit>>`
//!   (`RESULT=unknown` without a measurement when the mean is not a number);
//! - with a gate, one per check, `TEST_CASE_ID=gate.<workload>.<direction>.<metric>.<config>`
//!   with `RESULT=pass|fail|unknown` (unknown = inconclusive) and the change in percent
//!   as the measurement, then `TEST_CASE_ID=gate RESULT=...` for the whole gate.

use crate::report::ci::gate::{GateOutcome, GateStatus};
use crate::report::model::Report;
use std::collections::HashSet;

/// Longest test case id LAVA's result pages take (the model's help text says 100).
const MAX_ID: usize = 100;

/// A test case id or unit made safe for the signal: characters other than
/// `A-Za-z0-9._-/%` become `_` (`/` only in units), never empty, at most 100 characters.
pub fn sanitize(text: &str, allow_slash: bool) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            let ok = c.is_ascii_alphanumeric()
                || matches!(c, '.' | '_' | '-')
                || (allow_slash && matches!(c, '/' | '%'));
            if ok {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s.push('_');
    }
    s.truncate(MAX_ID);
    s
}

/// A measurement as LAVA stores it (decimal, at most 10 decimal places, no exponent).
fn measurement(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Makes ids unique: a repeated id gets `-2`, `-3`, ... in place of its last characters
/// when it would otherwise grow beyond [`MAX_ID`] (ids are ASCII: see [`sanitize`]).
#[derive(Default)]
struct Ids(HashSet<String>);

impl Ids {
    fn take(&mut self, id: String) -> String {
        let mut candidate = id.clone();
        let mut k = 2;
        while !self.0.insert(candidate.clone()) {
            let suffix = format!("-{k}");
            let keep = id.len().min(MAX_ID.saturating_sub(suffix.len()));
            candidate = format!("{}{suffix}", &id[..keep]);
            k += 1;
        }
        candidate
    }
}

fn testcase(id: &str, result: &str, value: Option<(f64, &str)>) -> String {
    match value {
        Some((v, unit)) if v.is_finite() => format!(
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={id} RESULT={result} MEASUREMENT={} UNITS={}>",
            measurement(v),
            sanitize(unit, true)
        ),
        _ => format!("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={id} RESULT={result}>"),
    }
}

/// The signal lines of `report` (and of `gate`, when one was asked for).
pub fn signals(report: &Report, gate: Option<&GateOutcome>) -> Vec<String> {
    let mut ids = Ids::default();
    let mut out = Vec::new();
    for block in &report.blocks {
        for row in &block.rows {
            let id = ids.take(sanitize(
                &format!(
                    "{}.{}.{}.{}",
                    block.workload,
                    block.direction_text(),
                    block.metric.key(),
                    row.config
                ),
                false,
            ));
            let mean = row.summary.mean;
            let result = if mean.is_finite() { "pass" } else { "unknown" };
            out.push(testcase(&id, result, Some((mean, block.metric.unit()))));
        }
    }
    if let Some(gate) = gate {
        for c in &gate.checks {
            let id = ids.take(sanitize(
                &format!(
                    "gate.{}.{}.{}.{}",
                    c.workload, c.direction, c.metric, c.config
                ),
                false,
            ));
            out.push(testcase(
                &id,
                result(c.status),
                Some((c.change * 100.0, "%")),
            ));
        }
        let id = ids.take("gate".to_string());
        out.push(testcase(&id, result(gate.status), None));
    }
    out
}

fn result(status: GateStatus) -> &'static str {
    match status {
        GateStatus::Pass => "pass",
        GateStatus::Fail => "fail",
        GateStatus::Inconclusive => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_units_keep_to_safe_characters() {
        assert_eq!(sanitize("v7.2/bw8 x>y", false), "v7.2_bw8_x_y");
        assert_eq!(sanitize("MB/s", true), "MB/s");
        assert_eq!(sanitize("", false), "_");
        assert_eq!(sanitize(&"a".repeat(150), false).len(), 100);
        let mut ids = Ids::default();
        assert_eq!(ids.take("a".into()), "a");
        assert_eq!(ids.take("a".into()), "a-2");
    }

    #[test]
    fn long_ids_stay_within_the_limit_and_unique() {
        // Two ids that differ only after character 100 are cut to the same prefix: the
        // second one's suffix must replace its end, not lengthen it.
        let long_a = sanitize(&format!("{}a", "w".repeat(100)), false);
        let long_b = sanitize(&format!("{}b", "w".repeat(100)), false);
        assert_eq!(long_a, long_b);
        let mut ids = Ids::default();
        let first = ids.take(long_a);
        let second = ids.take(long_b.clone());
        let third = ids.take(long_b);
        for id in [&first, &second, &third] {
            assert!(id.len() <= MAX_ID, "{} characters: {id}", id.len());
        }
        assert_ne!(first, second);
        assert_ne!(second, third);
        assert!(
            second.ends_with("-2") && third.ends_with("-3"),
            "{second} {third}"
        );
        // Ten and more repeats: the suffix grows, the id does not.
        let mut ids = Ids::default();
        let taken: Vec<String> = (0..12).map(|_| ids.take("x".repeat(MAX_ID))).collect();
        assert!(taken.iter().all(|id| id.len() <= MAX_ID));
        assert_eq!(taken[11], format!("{}-12", "x".repeat(MAX_ID - 3)));
    }

    #[test]
    fn measurements_are_plain_decimals() {
        assert_eq!(measurement(2.5), "2.5");
        assert_eq!(measurement(3034.0), "3034");
        assert_eq!(measurement(1e-7), "0");
        assert_eq!(measurement(-12.25), "-12.25");
        assert_eq!(
            testcase("x", "unknown", Some((f64::NAN, "us"))),
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=x RESULT=unknown>"
        );
    }
}
