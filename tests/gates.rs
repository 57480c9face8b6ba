//! Regression gates (`--fail-if`, `--threshold`, `--allow-inconclusive`), their exit
//! statuses, the baseline store (`compare --baseline STORE`) and `--json` of report and
//! compare, end to end on copies of tests/fixtures/results-loop (real fio runs on a loop
//! device, 5 measured runs per config). "Slower" and "faster" copies scale every
//! throughput of the copy; the identical copy is "no change".

#[path = "common/results.rs"]
mod results;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FIXTURE: &str = "results-loop";

fn mmcab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .output()
        .expect("run mmcab")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exit status")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Keep only the fixture's max-sectors-512k runs: one config, so compare pairs it
/// label against label.
fn one_config(dir: &Path) {
    results::edit_runs(dir, |row| row.config == "max-sectors-512k");
}

/// A copy of the fixture without its per-second and latency rows: the reports then draw
/// only the bar charts (the other charts are most of a debug build's time here).
fn copy(tmp: &Path, name: &str) -> PathBuf {
    let dir = results::fixture_copy(tmp, FIXTURE, name);
    results::without_series(&dir);
    dir
}

#[test]
fn compare_exit_codes_for_slower_faster_and_no_change() {
    let tmp = tempfile::tempdir().unwrap();
    let base = copy(tmp.path(), "base");
    let slower = copy(tmp.path(), "slower");
    let faster = copy(tmp.path(), "faster");
    let same = copy(tmp.path(), "same");
    for d in [&base, &slower, &faster, &same] {
        one_config(d);
    }
    results::scale_throughput(&slower, 0.5);
    results::scale_throughput(&faster, 2.0);
    let cases = [
        (&slower, "slower", 6),
        (&faster, "slower", 0),
        (&same, "slower", 0),
        (&faster, "faster", 6),
        (&slower, "changed", 6),
        (&same, "changed", 0),
    ];
    for (dir, fail_if, want) in cases {
        let out = mmcab(&["compare", path(&base), path(dir), "--fail-if", fail_if]);
        assert_eq!(
            code(&out),
            want,
            "{} --fail-if {fail_if}:\n{}",
            dir.display(),
            describe(&out)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let verdict = if want == 6 { "FAIL" } else { "PASS" };
        assert!(
            stdout.contains(&format!("at 95% confidence: {verdict}")),
            "{stdout}"
        );
    }
    // Without a gate, compare reports and exits 0 whatever it found.
    assert_eq!(code(&mmcab(&["compare", path(&base), path(&slower)])), 0);
}

#[test]
fn threshold_lets_small_slowdowns_through() {
    let tmp = tempfile::tempdir().unwrap();
    let base = copy(tmp.path(), "base");
    let slower = copy(tmp.path(), "slower");
    one_config(&base);
    one_config(&slower);
    results::scale_throughput(&slower, 0.5);
    let gate = |t: &str| {
        code(&mmcab(&[
            "compare",
            path(&base),
            path(&slower),
            "--fail-if",
            "slower",
            "--threshold",
            t,
        ]))
    };
    // 50% slower, and the noisy fixture (CV ~30%) puts the CI's near end at ~-25%.
    assert_eq!(gate("3%"), 6);
    assert_eq!(gate("60%"), 0);
    let out = mmcab(&["compare", path(&base), path(&slower), "--threshold", "3%"]);
    assert_eq!(
        code(&out),
        2,
        "--threshold needs --fail-if: {}",
        describe(&out)
    );
}

#[test]
fn too_few_runs_are_inconclusive_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let base = copy(tmp.path(), "base");
    let new = copy(tmp.path(), "new");
    for d in [&base, &new] {
        // One measured run per side: no interval, no verdict.
        results::edit_runs(d, |row| {
            row.config == "max-sectors-512k" && (row.warmup || row.repetition == 2)
        });
    }
    results::scale_throughput(&new, 0.5);
    let args = ["compare", path(&base), path(&new), "--fail-if", "slower"];
    let out = mmcab(&args);
    assert_eq!(code(&out), 7, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("INCONCLUSIVE"));
    let out = mmcab(&[&args[..], &["--allow-inconclusive"]].concat());
    assert_eq!(code(&out), 0, "{}", describe(&out));
}

#[test]
fn report_gate_and_json_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(tmp.path(), "r");
    // The fixture's max-sectors-16k writes are significantly slower than 512k.
    let out = mmcab(&["report", path(&dir), "--fail-if", "slower", "--json"]);
    assert_eq!(code(&out), 6, "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["schema"], 1);
    assert_eq!(json["command"], "report");
    assert_eq!(json["gate"]["status"], "fail");
    assert_eq!(json["report"]["baseline"], "max-sectors-512k");
    let failing: Vec<&serde_json::Value> = json["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert_eq!(failing.len(), 1, "{json}");
    assert_eq!(failing[0]["workload"], "seq-write");
    assert!(failing[0]["ci_high"].as_f64().unwrap() < 0.0);
    // A report with a single config has nothing to gate.
    let one = copy(tmp.path(), "one");
    one_config(&one);
    let out = mmcab(&["report", path(&one), "--fail-if", "slower"]);
    assert_eq!(code(&out), 1, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing is compared"));
}

#[test]
fn baseline_store_per_device_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let base = copy(tmp.path(), "base");
    let slower = copy(tmp.path(), "slower");
    one_config(&base);
    one_config(&slower);
    results::scale_throughput(&slower, 0.5);
    // mmcab compare --baseline STORE ARGS...
    let with_store =
        |args: &[&str]| mmcab(&[&["compare", "--baseline", path(&store)], args].concat());
    // Nothing stored yet: one line saying how to store one.
    let out = with_store(&[path(&slower), "--fail-if", "slower"]);
    assert_eq!(code(&out), 1, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--save-baseline"));
    let out = with_store(&["--save-baseline", path(&base)]);
    assert_eq!(code(&out), 0, "{}", describe(&out));
    let out = with_store(&[path(&slower), "--fail-if", "slower", "--json"]);
    assert_eq!(code(&out), 6, "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["command"], "compare");
    let report_dir = json["report_dir"].as_str().unwrap();
    assert!(
        report_dir.starts_with(path(&slower)),
        "the report goes to the new dir: {report_dir}"
    );
    assert!(!store.join("report").exists());
    // Another device (a loop device: its identity is the device summary) has none.
    let other = copy(tmp.path(), "other");
    let meta = other.join("meta.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["device_summary"] = "another card".into();
    std::fs::write(&meta, v.to_string()).unwrap();
    let out = with_store(&[path(&other)]);
    assert_eq!(code(&out), 1, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no baseline for this device"));
}
