//! `mmcab run --until-ci PCT --max-repeat N` on a regular file (no root): workloads stop
//! after the repetitions their first stage says PCT% needs, configs together and in
//! interleaved order; the results directory records the rule and the device time used
//! and reads back into a report.

use mmcab::record::{Meta, RunRow, GROUP_JOB};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

/// Two configs (a command knob keeping its value in a file) and two short time-based
/// workloads on a file. The file is in /dev/shm ([`scratch`]): on a disk-backed /tmp the
/// buffered writes met the machine's other writeback and a loaded run's CV went past
/// what the first stage stops at (a test saw all 24 runs).
fn plan(dir: &Path) -> std::path::PathBuf {
    let marker = dir.join("marker");
    std::fs::write(&marker, "a\n").unwrap();
    let m = marker.display();
    let text = format!(
        r#"
name = "until-ci"
seed = 3

[[knob]]
name = "marker"
kind = "command"
read = "cat {m}"
apply = "echo {{value}} > {m}"

[[config]]
name = "A"
marker = "a"

[[config]]
name = "B"
marker = "b"

[[workload]]
name = "read"
[[workload.job]]
name = "r"
rw = "read"
bs = "64KiB"
size = "4MiB"
direct = false
runtime = "250ms"
time_based = true

[[workload]]
name = "write"
[[workload.job]]
name = "w"
rw = "write"
bs = "64KiB"
size = "4MiB"
direct = false
runtime = "250ms"
time_based = true
"#
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A scratch directory in /dev/shm (tmpfs: no writeback, so the runs vary with the CPU
/// only).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

/// `mmcab run PLAN --device DIR/target.img ARGS... --out OUT`.
fn run_plan(dir: &Path, plan: &Path, args: &[&str], out_dir: &Path) -> std::process::Output {
    Command::new(MMCAB)
        .arg("run")
        .arg(plan)
        .arg("--device")
        .arg(dir.join("target.img"))
        .args(args)
        .arg("--out")
        .arg(out_dir)
        .output()
        .unwrap()
}

#[test]
fn workloads_stop_together_once_their_ci_is_narrow_enough() {
    let dir = scratch();
    let plan = plan(dir.path());
    let out_dir = dir.path().join("res");
    let out = run_plan(
        dir.path(),
        &plan,
        &["--until-ci", "100", "--max-repeat", "6"],
        &out_dir,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("until-ci 100% (first stage 4 repetitions):")
            && stdout.contains("of 24 runs"),
        "{stdout}"
    );

    let meta: Meta =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!((meta.until_ci_pct, meta.repetitions), (Some(100.0), 6));
    assert!(meta.finished_unix_s.is_some());
    let until = meta
        .until_ci
        .expect("meta.json records what --until-ci did");
    assert_eq!((until.first_stage, until.max_repeat), (4, 6));
    assert!(until.device_seconds > 0.0, "{until:?}");
    assert_eq!(until.workloads.len(), 2, "{until:?}");

    let rows: Vec<RunRow> = csv::Reader::from_path(out_dir.join("runs.csv"))
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .filter(|r: &RunRow| r.job == GROUP_JOB)
        .collect();
    // Per workload: the runs of A and B, in order.
    let mut per: BTreeMap<&str, Vec<(&str, u32, u32)>> = BTreeMap::new();
    for r in &rows {
        per.entry(&r.workload)
            .or_default()
            .push((&r.config, r.repetition, r.run));
    }
    assert_eq!(per.len(), 2);
    let mut stopped_early = 0;
    for (workload, runs) in &per {
        let count = |c: &str| runs.iter().filter(|(x, _, _)| *x == c).count();
        assert_eq!(count("A"), count("B"), "{workload}: configs stop together");
        let reps = count("A");
        assert!((4..=6).contains(&reps), "{workload}: {reps} repetitions");
        // The first rounds of the fixed design, interleaved: A B A B ...
        let configs: Vec<&str> = runs.iter().map(|(c, _, _)| *c).collect();
        assert_eq!(configs, ["A", "B"].repeat(reps), "{workload}");
        let repetitions: Vec<u32> = runs.iter().map(|(_, r, _)| *r).collect();
        let rounds: Vec<u32> = (1..=reps as u32).flat_map(|r| [r, r]).collect();
        assert_eq!(repetitions, rounds, "{workload}");
        if reps < 6 {
            stopped_early += 1;
            assert!(
                stderr.contains(&format!("mmcab: {workload}: 95% CI")),
                "{stderr}"
            );
        }
    }
    // The first stage (4) is enough for a 95% CI within 100% of the mean when the CV is
    // under about 63% (t(3) = 3.18): both workloads are far steadier than that.
    assert!(stopped_early >= 1, "{stdout}\n{stderr}");

    let report = Command::new(MMCAB)
        .arg("report")
        .arg(&out_dir)
        .env("MMCAB_CALIBRATION_DIR", "/nonexistent/mmcab-calibration")
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
}

#[test]
fn until_ci_refuses_the_blocked_order() {
    let dir = scratch();
    let plan = plan(dir.path());
    let out = Command::new(MMCAB)
        .arg("run")
        .arg(&plan)
        .args(["--dry-run", "--until-ci", "2", "--order", "blocked"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("use --order interleaved or random"),
        "{stderr}"
    );
}

/// A run that `--until-ci` ended early is finished, also when a knob's restore then
/// fails (exit 5): meta.json says so and `--resume` has nothing to do.
#[test]
fn a_run_until_ci_ended_is_finished_even_when_the_restore_fails() {
    let dir = scratch();
    let plan = plan(dir.path());
    let text = std::fs::read_to_string(&plan).unwrap();
    let failing = text.replacen(
        "apply = \"echo {value} >",
        "restore = \"exit 1\"\napply = \"echo {value} >",
        1,
    );
    assert_ne!(failing, text);
    std::fs::write(&plan, failing).unwrap();
    let out_dir = dir.path().join("res");
    let out = run_plan(
        dir.path(),
        &plan,
        &["--until-ci", "100", "--max-repeat", "6"],
        &out_dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let groups = std::fs::read_to_string(out_dir.join("runs.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.contains(",all,"))
        .count();
    assert!(groups < 24, "until-ci left runs out: {groups} of 24");
    let meta: Meta =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("meta.json")).unwrap()).unwrap();
    assert!(meta.finished_unix_s.is_some(), "{stderr}");
    let resumed = Command::new(MMCAB)
        .arg("run")
        .arg("--resume")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(
        !resumed.status.success() && stderr.contains("is a finished run: nothing to resume"),
        "{stderr}"
    );
}

/// `mmcab run --json` of a plan with configs: one document with its schema number, the
/// results directory and the recorded rows.
#[test]
fn run_json_is_one_document_with_its_schema() {
    let dir = scratch();
    let plan = plan(dir.path());
    let out_dir = dir.path().join("res");
    let out = run_plan(dir.path(), &plan, &["--repeat", "1", "--json"], &out_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["schema"], 1, "{json}");
    assert_eq!(json["results_dir"], out_dir.to_str().unwrap(), "{json}");
    let runs = json["runs"].as_array().expect("runs");
    let group: Vec<_> = runs.iter().filter(|r| r["job"] == GROUP_JOB).collect();
    assert_eq!(
        group.len(),
        2 * 2,
        "2 configs x 2 workloads x 1 repetition: {json}"
    );
    assert!(group.iter().all(|r| r["mb_per_s"].as_f64().unwrap() > 0.0));
}
