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
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/guest/lava.rs, tests/plain/lava.rs.

use crate::common::cli;
use crate::common::lava::lava_accepts;
use crate::common::loop_device;

use std::collections::BTreeMap;
use std::process::Command;

#[test]
#[ignore = "needs LAVA's schema: Debian's lava-common (testbed/setup installs it)"]
fn test_definition_passes_lavas_schema_and_test_definitions_rules() {
    // LAVA's own validator (lava_common/schemas/test/testdef.py, what the server's
    // validate_testdef endpoint runs), then the stricter metadata rules of Linaro's
    // test-definitions (automated/utils/validate.py: these metadata keys non-empty, a
    // name without spaces, run.steps present).
    let lint = r#"
import sys, yaml
from lava_common.schemas.test.testdef import validate
data = yaml.safe_load(open(sys.argv[1]))
validate(data)
meta = data["metadata"]
for key in ["name", "format", "description", "maintainer", "os", "devices"]:
    assert meta.get(key), "metadata." + key + " missing or empty"
assert " " not in meta["name"], "metadata.name has a space"
assert data["run"]["steps"], "run.steps empty"
for key in data.get("params", {}):
    assert all(("${" + key + "}") in s for s in data["run"]["steps"]), "param " + key + " unused"
print("ok")
"#;
    let yaml = cli::root().join("lava/mmcab.yaml");
    let out = Command::new("/usr/bin/python3")
        .args(["-c", lint])
        .arg(&yaml)
        .output()
        .expect("run /usr/bin/python3");
    assert!(
        out.status.success() && out.stdout == b"ok\n",
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let script = cli::root().join("lava/mmcab-lava.sh");
    let out = Command::new("sh").arg("-n").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// lava/mmcab.yaml's run step, as the test shell runs it: PLAN and GATE as given,
/// RUN_ARGS as LAVA hands it over (unexpanded; the board's shell expands it).
fn run_step(
    dev: &std::path::Path,
    plan: &std::path::Path,
    gate: &str,
    out: &std::path::Path,
) -> std::process::Output {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_mmcab"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg(cli::root().join("lava/mmcab-lava.sh"))
        .current_dir(cli::root())
        .env("PATH", path)
        .env("DEVICE", dev)
        .env("PLAN", plan)
        .env("RUN_ARGS", "--quiet --label $(uname -r)")
        .env("GATE", gate)
        .env("OUT", out)
        .output()
        .unwrap()
}

/// The test cases of a run step's output, each as the dispatcher takes it.
fn signals_of(stdout: &str) -> Vec<BTreeMap<String, String>> {
    stdout
        .lines()
        .filter(|l| l.contains("<LAVA_SIGNAL_"))
        .map(|l| lava_accepts(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A gate on a one-config plan (the shipped dd-bus-width.toml) without a baseline has
/// nothing to compare: the run step fails a test case saying so before it runs
/// anything, instead of running and ending with neither metrics nor a failure.
#[test]
#[ignore = "needs root: loop devices"]
fn run_step_refuses_a_gate_on_a_one_config_plan_before_the_run() {
    let dev = loop_device::LoopDevice::new(64 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let plan = cli::root().join("workloads/dd-bus-width.toml");
    let out = run_step(&dev.dev, &plan, "--fail-if slower", &tmp.path().join("out"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let ids: Vec<(String, String)> = signals_of(&stdout)
        .into_iter()
        .map(|s| (s["test_case_id"].clone(), s["result"].clone()))
        .collect();
    assert_eq!(
        ids.last(),
        Some(&("mmcab-gate".to_string(), "fail".to_string())),
        "{stdout}"
    );
    assert!(!ids.iter().any(|(id, _)| id == "mmcab-run"), "{stdout}");
    assert!(
        stdout.contains("has 1:") && stdout.contains("BASELINE_DIR"),
        "{stdout}"
    );
    assert!(dev.contents().iter().all(|&b| b == 0), "nothing written");
}

#[test]
#[ignore = "needs root: loop devices"]
fn run_step_on_a_loop_device_prints_valid_signals_and_keeps_the_results() {
    let dev = loop_device::LoopDevice::new(64 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let plan = cli::root().join("tests/fixtures/plans/max-sectors-ab.toml");
    let out = run_step(
        &dev.dev,
        &plan,
        "--fail-if slower --threshold 50% --allow-inconclusive",
        &tmp.path().join("out"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let signals = signals_of(&stdout);
    assert!(
        !signals.iter().any(|s| s["test_case_id"] == "mmcab-report"),
        "the report ran: {stdout}"
    );
    let result = |id: &str| {
        signals
            .iter()
            .find(|s| s["test_case_id"] == id)
            .unwrap_or_else(|| panic!("no test case {id}:\n{stdout}"))["result"]
            .clone()
    };
    for id in ["mmcab-version", "mmcab-info", "mmcab-run"] {
        // info fails on a loop device (not an MMC card), as it says; the rest pass.
        let want = if id == "mmcab-info" { "fail" } else { "pass" };
        assert_eq!(result(id), want, "{id}\n{stdout}");
    }
    assert_eq!(result("seq-read.read.mb_per_s.max16k"), "pass");
    let gate = result("gate");
    assert!(
        ["pass", "fail", "unknown"].contains(&gate.as_str()),
        "{gate}"
    );
    assert!(signals.len() >= 2 * 2 * 4 + 3, "{stdout}");
    assert!(tmp.path().join("out/mmcab-results.tar.gz").is_file());
    // --label $(uname -r) named the running kernel.
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/results/meta.json")).unwrap(),
    )
    .unwrap();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(meta["label"], release.trim(), "{stdout}");
    assert!(
        stdout.contains("summary.csv") && stdout.contains("config,workload"),
        "{stdout}"
    );
}
