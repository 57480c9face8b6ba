//! docs/plans.md against the parser: every key its tables name is one the parser takes,
//! and every key the parser takes is in them. The parser's keys come from serde itself
//! (`deny_unknown_fields` lists them when it meets an unknown one), so a field added to
//! a plan struct without a line in the docs fails here.

use super::config::Expect;
use super::knob::{AttributeDecl, CommandDecl, ExtCsdDecl};
use super::spec::Plan;
use super::sweep::SweepSpec;
use super::workload::{JobSpec, WorkloadSpec};
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;

const UNKNOWN: &str = "zz_not_a_key";

/// The fields a `deny_unknown_fields` struct takes, from serde's error for an unknown one.
fn parser_keys<T: DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
    let err = toml::from_str::<T>(&format!("{UNKNOWN} = 1\n")).unwrap_err();
    let msg = err.message().to_string();
    let list = msg
        .split("expected ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of fields in {msg:?}"));
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// docs/plans.md's sections by heading (`## Job keys` -> its text).
fn section(heading: &str) -> String {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/plans.md"),
    )
    .unwrap();
    let start = text
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("docs/plans.md: no ## {heading}"));
    let body = &text[start + heading.len() + 5..];
    body[..body.find("\n## ").unwrap_or(body.len())].to_string()
}

/// The table rows of a section whose first cell is code (or `all`): their cells,
/// trimmed, without backticks.
fn rows(section: &str) -> Vec<Vec<String>> {
    section
        .lines()
        .filter(|l| l.starts_with("| `") || l.starts_with("| all |"))
        .map(|l| {
            l.split('|')
                .skip(1)
                .map(|c| c.trim().replace('`', ""))
                .collect()
        })
        .collect()
}

/// The first column's keys: `[[workload.job]]` -> `job`, `expect.ext_csd.<FIELD>` ->
/// `expect.ext_csd`.
fn keys(section: &str) -> BTreeSet<String> {
    rows(section)
        .into_iter()
        .map(|r| {
            let k = r[0].trim_start_matches("[[").trim_end_matches("]]");
            let k = k.rsplit('.').next().filter(|_| k.starts_with("workload."));
            k.unwrap_or(r[0].trim_start_matches("[[").trim_end_matches("]]"))
                .trim_end_matches(".<FIELD>")
                .to_string()
        })
        .collect()
}

fn set(words: &[&str]) -> BTreeSet<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn every_plan_key_is_documented_and_every_documented_key_is_parsed() {
    assert_eq!(
        keys(&section("Top level")),
        parser_keys::<Plan>(),
        "top level"
    );
    assert_eq!(
        keys(&section("`[[workload]]`")),
        parser_keys::<WorkloadSpec>(),
        "[[workload]]"
    );
    assert_eq!(keys(&section("Job keys")), parser_keys::<JobSpec>(), "jobs");
    assert_eq!(
        keys(&section("`[[sweep]]`")),
        parser_keys::<SweepSpec>(),
        "[[sweep]]"
    );
}

/// `[[config]]`: `name`, `packed`, the `expect.*` keys (Expect's fields) and `<knob>`,
/// every other key being a knob's name.
#[test]
fn config_keys_are_documented() {
    let documented = keys(&section("`[[config]]`"));
    let expect: BTreeSet<String> = parser_keys::<Expect>()
        .into_iter()
        .map(|k| format!("expect.{k}"))
        .collect();
    let mut want = set(&["name", "packed", "<knob>"]);
    want.extend(expect);
    assert_eq!(documented, want);
}

/// `[[knob]]`: each kind's keys, plus `kind` itself (the tag).
#[test]
fn knob_keys_are_documented_per_kind() {
    let rows = rows(&section("`[[knob]]`"));
    let of = |kind: &str| -> BTreeSet<String> {
        let mut keys: BTreeSet<String> = rows
            .iter()
            .filter(|r| r[0] == kind || r[0] == "all")
            .map(|r| r[1].clone())
            .collect();
        assert!(keys.remove("kind"), "{kind}: `kind` is documented for all");
        keys
    };
    assert_eq!(of("attribute"), parser_keys::<AttributeDecl>());
    assert_eq!(of("command"), parser_keys::<CommandDecl>());
    assert_eq!(of("ext_csd"), parser_keys::<ExtCsdDecl>());
}

#[test]
fn the_parser_keys_are_read_from_serde() {
    assert!(parser_keys::<SweepSpec>().contains("over"));
    assert!(
        keys("| `[[workload.job]]` | x |\n| `expect.ext_csd.<FIELD>` | y |")
            .is_superset(&set(&["job", "expect.ext_csd"]))
    );
}
