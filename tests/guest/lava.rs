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
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/host/lava.rs, tests/plain/lava.rs.

use crate::common::cli;
use crate::common::testbed;

use std::collections::BTreeMap;
use std::process::Command;

/// A real LAVA dispatcher (Debian's lava-dispatcher, `lava-run` without a server) boots
/// QEMU's ast2600-evb with mmcab in a busybox initramfs and runs lava/mmcab.yaml from
/// this repository's committed HEAD with the plan the job names (dd-bus-width.toml):
/// the test cases it records are mmcab-version, mmcab-run and every metric of that
/// plan, with measurements (lava/lava-run-qemu, docs/lava.md).
#[test]
#[ignore = "needs root, the QEMU testbed and LAVA's dispatcher (testbed/setup installs them)"]
fn a_real_lava_dispatcher_runs_the_definition_with_the_plan_it_names() {
    let work = tempfile::Builder::new()
        .prefix("mmcab-lava-run.")
        .tempdir_in("/var/tmp")
        .unwrap();
    // The dispatcher boots QEMU's ast2600-evb: one guest, one share (testbed::with_cores).
    let (out, _) = testbed::with_cores("lava_run_qemu", 1, || {
        Command::new(cli::root().join("lava/lava-run-qemu"))
            .arg("--mmcab")
            .arg(testbed::mmcab_armv7())
            .arg("--work")
            .arg(work.path().join("run"))
            .current_dir(cli::root())
            .output()
            .unwrap()
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // "0_mmcab CASE RESULT [MEASUREMENT UNITS]", one line per test case LAVA recorded.
    let cases: BTreeMap<&str, Vec<&str>> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("0_mmcab "))
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap_or(""), w.collect())
        })
        .collect();
    for id in ["mmcab-version", "mmcab-info", "mmcab-run"] {
        assert_eq!(cases.get(id).map(|v| v[0]), Some("pass"), "{id}\n{stdout}");
    }
    for workload in ["dd-write.write", "dd-read.read"] {
        let id = format!("{workload}.mb_per_s.as-is");
        let case = cases
            .get(id.as_str())
            .unwrap_or_else(|| panic!("no {id}\n{stdout}"));
        let mbps: f64 = case[1].parse().unwrap();
        assert!(mbps > 0.0 && case[2] == "MB/s", "{id}: {case:?}");
    }
}
