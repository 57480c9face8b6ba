//! LAVA: `--format lava` output against the dispatcher's own parsing, the test
//! definition (lava/mmcab.yaml) against LAVA's schema, and the definition's run step on a
//! loop device.
//!
//! The dispatcher (LAVA `lava_dispatcher/actions/test/shell.py`,
//! `TestShellAction._reset_patterns`, unchanged from 2017 to 2026.07 and the same in the
//! 2023.01 Debian 12 ships) matches console output with `<LAVA_SIGNAL_(\S+) ([^>]+)>`;
//! for `TESTCASE` it splits the parameters on whitespace, then each at every `=`
//! (`param.split("=")`): exactly two parts, else the whole test case is dropped
//! (`handle_testcase`: "Ignoring malformed parameter for signal"), keys are lower-cased,
//! and `SignalMatch.match` (`lava_dispatcher/connection.py`) requires `test_case_id`, a
//! `result` of pass/fail/skip/unknown, and a `measurement` that Python's float() takes.
//! [`lava_accepts`] re-implements exactly those checks.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/lava.rs, tests/guest/lava.rs.

use crate::common::cli;
use crate::common::lava::lava_accepts;
use crate::common::results;

use cli::mmcab;
use std::collections::HashSet;

#[test]
fn the_checks_refuse_what_the_dispatcher_refuses() {
    let ok = "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a.b RESULT=pass MEASUREMENT=2.5 UNITS=MB/s>";
    assert_eq!(lava_accepts(ok).unwrap()["units"], "MB/s");
    for bad in [
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a b RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=PASS>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass MEASUREMENT=2.5MB>",
        "<LAVA_SIGNAL_TESTCASE RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass UNITS=>s>",
        // A value with `=` splits into three parts: LAVA drops the test case.
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a=b RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass MEASUREMENT=1 UNITS=x=y>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=a RESULT=pass UNITS>",
    ] {
        assert!(lava_accepts(bad).is_err(), "{bad}");
    }
}

#[test]
fn report_signals_cover_every_metric_and_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = results::fixture_copy(tmp.path(), "results-loop", "r");
    results::without_series(&dir); // no per-second or latency charts: faster, same signals
                                   // max-sectors-16k at a third of its throughput: the gate fails (where the noise
                                   // lets the report call it slower).
    results::scale_config(&dir, Some("max-sectors-16k"), 1.0 / 3.0);
    let out = mmcab(&[
        "report",
        dir.to_str().unwrap(),
        "--format",
        "lava",
        "--fail-if",
        "slower",
    ]);
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut ids = HashSet::new();
    let mut measured = 0;
    let mut gate = Vec::new();
    for line in stdout.lines() {
        let data = lava_accepts(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        // The dispatcher's log marker takes the first parameter as the test case.
        assert!(
            line.starts_with("<LAVA_SIGNAL_TESTCASE TEST_CASE_ID="),
            "{line}"
        );
        let id = data["test_case_id"].clone();
        assert!(
            id.len() <= 100 && ids.insert(id.clone()),
            "id {id} repeated or too long"
        );
        if id.starts_with("gate") {
            gate.push((id, data["result"].clone()));
        } else {
            assert_eq!(data["result"], "pass", "{line}");
            assert!(data.contains_key("units"), "{line}");
            measured += 1;
        }
    }
    // The fixture: 2 configs x 5 workloads x 1 direction x 4 metrics.
    let json: serde_json::Value =
        serde_json::from_slice(&mmcab(&["report", dir.to_str().unwrap(), "--json"]).stdout)
            .unwrap();
    let rows: usize = json["report"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rows"].as_array().unwrap().len())
        .sum();
    assert_eq!(measured, rows);
    assert_eq!(measured, 2 * 5 * 4);
    assert!(
        ids.contains("seq-write.write.mb_per_s.max-sectors-16k"),
        "{ids:?}"
    );
    assert_eq!(
        gate.last().unwrap(),
        &("gate".to_string(), "fail".to_string())
    );
    assert!(gate.contains(&(
        "gate.seq-write.write.mb_per_s.max-sectors-16k".into(),
        "fail".into()
    )));
    assert_eq!(
        gate.len(),
        5 + 1,
        "one check per headline block, then the gate"
    );
}
