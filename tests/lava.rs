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

#[path = "common/cli.rs"]
mod cli;
#[path = "common/loop_device.rs"]
mod loop_device;
#[path = "common/results.rs"]
mod results;
#[path = "common/testbed.rs"]
mod testbed;

use cli::mmcab;
use regex::Regex;
use std::collections::{BTreeMap, HashSet};
use std::process::Command;

/// The dispatcher's pattern, verbatim.
const SIGNAL_PATTERN: &str = r"<LAVA_SIGNAL_(\S+) ([^>]+)>";

/// A TESTCASE line as LAVA's dispatcher would take it: its parameters by lower-case key,
/// or why the dispatcher would drop it.
fn lava_accepts(line: &str) -> Result<BTreeMap<String, String>, String> {
    let re = Regex::new(SIGNAL_PATTERN).unwrap();
    let m = re.captures(line).ok_or("no LAVA signal in the line")?;
    if m.get(0).unwrap().as_str() != line {
        return Err("the signal is not the whole line".into());
    }
    if &m[1] != "TESTCASE" {
        return Err(format!("signal {} is not TESTCASE", &m[1]));
    }
    let mut data = BTreeMap::new();
    for param in m[2].split_whitespace() {
        // LAVA: `parts = param.split("=")`, `if len(parts) == 2`: one `=`, no more.
        let parts: Vec<&str> = param.split('=').collect();
        let [key, value] = parts[..] else {
            return Err(format!("malformed parameter {param:?}"));
        };
        data.insert(key.to_lowercase(), value.to_string());
    }
    if !data.contains_key("test_case_id") {
        return Err("no test_case_id".into());
    }
    match data.get("result").map(String::as_str) {
        Some("pass" | "fail" | "skip" | "unknown") => {}
        other => return Err(format!("bad result {other:?}")),
    }
    if let Some(m) = data.get("measurement") {
        // Python float() syntax for what mmcab prints: optional sign, digits, one dot.
        let plain = Regex::new(r"^-?[0-9]+(\.[0-9]+)?$").unwrap();
        if !plain.is_match(m) || m.parse::<f64>().is_err() {
            return Err(format!("measurement {m:?} is not a plain decimal"));
        }
    }
    Ok(data)
}

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
    let out = Command::new(cli::root().join("lava/lava-run-qemu"))
        .arg("--mmcab")
        .arg(testbed::mmcab_armv7())
        .arg("--work")
        .arg(work.path().join("run"))
        .current_dir(cli::root())
        .output()
        .unwrap();
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
