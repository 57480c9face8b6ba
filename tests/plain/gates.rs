//! Regression gates (`--fail-if`, `--threshold`, `--allow-inconclusive`), their exit
//! statuses, the baseline store (`compare --baseline STORE`) and `--json` of report and
//! compare, end to end on copies of tests/fixtures/results-loop (real fio runs on a loop
//! device, 5 measured runs per config). compare takes boots: each side is three copies
//! whose throughputs are scaled by a boot's own offset (a boot-to-boot spread: 0.98,
//! 1.00 and 1.02 for the base side), times 0.5 for "slower" and 2 for "faster"; "no
//! change" is another A/A side (offsets 0.99, 1.015, 0.995: the same mean, other boots).

use crate::common::cli;
use crate::common::results;

use cli::mmcab;
use std::path::{Path, PathBuf};
use std::process::Output;

const FIXTURE: &str = "results-loop";

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

/// The base side's boot offsets.
const OFFSETS: [f64; 3] = [0.98, 1.0, 1.02];
/// An A/A side of the base: other boots of the same mean.
const OTHER_OFFSETS: [f64; 3] = [0.99, 1.015, 0.995];
/// A side whose boots vary a lot (-15% on average): an interval too wide to decide.
const WIDE_OFFSETS: [f64; 3] = [0.6, 1.0, 0.95];

/// Three boots of one side, named `<side>-<k>`: one-config copies with every throughput
/// scaled by `factor` and the boot's own offset.
fn boots(tmp: &Path, side: &str, factor: f64) -> Vec<PathBuf> {
    boots_with(tmp, side, factor, &OFFSETS)
}

/// The same with the given boot offsets.
fn boots_with(tmp: &Path, side: &str, factor: f64, offsets: &[f64]) -> Vec<PathBuf> {
    offsets
        .iter()
        .enumerate()
        .map(|(k, offset)| {
            let dir = copy(tmp, &format!("{side}-{k}"));
            one_config(&dir);
            results::scale_throughput(&dir, factor * offset);
            dir
        })
        .collect()
}

/// The messages (stderr) of a command that must succeed.
fn out_ok(out: Output) -> String {
    assert_eq!(code(&out), 0, "{}", describe(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `mmcab compare BASE... --vs NEW... EXTRA...` (no stored calibration).
fn compare(base: &[PathBuf], new: &[PathBuf], extra: &[&str]) -> Output {
    let mut args = vec!["compare", "--no-calibration"];
    args.extend(base.iter().map(|d| path(d)));
    args.push("--vs");
    args.extend(new.iter().map(|d| path(d)));
    args.extend(extra);
    mmcab(&args)
}

#[test]
fn compare_exit_codes_for_slower_faster_and_no_change() {
    let tmp = tempfile::tempdir().unwrap();
    let base = boots(tmp.path(), "base", 1.0);
    let slower = boots(tmp.path(), "slower", 0.5);
    let faster = boots(tmp.path(), "faster", 2.0);
    let same = boots_with(tmp.path(), "same", 1.0, &OTHER_OFFSETS);
    let cases = [
        (&slower, "slower", 6),
        (&faster, "slower", 0),
        (&same, "slower", 0),
        (&faster, "faster", 6),
        (&slower, "changed", 6),
        (&same, "changed", 0),
    ];
    for (new, fail_if, want) in cases {
        let out = compare(&base, new, &["--fail-if", fail_if]);
        assert_eq!(
            code(&out),
            want,
            "{} --fail-if {fail_if}:\n{}",
            new[0].display(),
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
    assert_eq!(code(&compare(&base, &slower, &[])), 0);
}

#[test]
fn threshold_lets_small_slowdowns_through() {
    let tmp = tempfile::tempdir().unwrap();
    let base = boots(tmp.path(), "base", 1.0);
    let slower = boots(tmp.path(), "slower", 0.5);
    let gate = |t: &str| {
        code(&compare(
            &base,
            &slower,
            &["--fail-if", "slower", "--threshold", t],
        ))
    };
    // 50% slower, surely: beyond 3%, not beyond 60%.
    assert_eq!(gate("3%"), 6);
    assert_eq!(gate("60%"), 0);
    let out = compare(&base, &slower, &["--threshold", "3%"]);
    assert_eq!(
        code(&out),
        2,
        "--threshold needs --fail-if: {}",
        describe(&out)
    );
}

/// The gate's status and the widest interval of its checks (one per workload: every
/// workload of a side is scaled alike), from --json.
fn gate_json(out: &Output) -> (String, f64, f64) {
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(out)));
    let checks = json["gate"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 5, "{json}");
    let ends =
        |key: &str| -> Vec<f64> { checks.iter().map(|c| c[key].as_f64().unwrap()).collect() };
    (
        json["gate"]["status"].as_str().unwrap().to_string(),
        ends("ci_low").into_iter().fold(f64::INFINITY, f64::min),
        ends("ci_high")
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max),
    )
}

#[test]
fn threshold_gate_passes_fails_or_cannot_decide() {
    let tmp = tempfile::tempdir().unwrap();
    let base = boots(tmp.path(), "base", 1.0);
    let same = boots_with(tmp.path(), "same", 1.0, &OTHER_OFFSETS);
    let wide = boots_with(tmp.path(), "wide", 1.0, &WIDE_OFFSETS);
    let slower = boots(tmp.path(), "slower", 0.5);
    let gate = |new: &[PathBuf], threshold: &str| {
        let out = compare(
            &base,
            new,
            &["--fail-if", "slower", "--threshold", threshold, "--json"],
        );
        let (status, low, high) = gate_json(&out);
        (code(&out), status, low, high)
    };
    // No change, an interval within +-10%: a slowdown beyond 10% is ruled out.
    let (exit, status, low, high) = gate(&same, "10%");
    assert!(low > -0.1 && high < 0.1, "[{low}, {high}]");
    assert_eq!((exit, status.as_str()), (0, "pass"));
    // The same interval does not rule out a slowdown beyond 1%: inconclusive.
    let (exit, status, low, _) = gate(&same, "1%");
    assert!(low < -0.01, "{low}");
    assert_eq!((exit, status.as_str()), (7, "inconclusive"));
    // A wide interval: no verdict either way at 3%; without a threshold it passes.
    let (exit, status, low, high) = gate(&wide, "3%");
    assert!(low < -0.3 && high > 0.0, "[{low}, {high}]");
    assert_eq!((exit, status.as_str()), (7, "inconclusive"));
    let out = compare(&base, &wide, &["--fail-if", "slower"]);
    assert_eq!(code(&out), 0, "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("an interval still allows one of up to"),
        "{}",
        describe(&out)
    );
    // Half the throughput: the whole interval beyond -3%.
    let (exit, status, _, high) = gate(&slower, "3%");
    assert!(high < -0.03, "{high}");
    assert_eq!((exit, status.as_str()), (6, "fail"));
    // --allow-inconclusive lets the undecided through, never a failure.
    let allow = [
        "--fail-if",
        "slower",
        "--threshold",
        "3%",
        "--allow-inconclusive",
    ];
    assert_eq!(code(&compare(&base, &wide, &allow)), 0);
    assert_eq!(code(&compare(&base, &slower, &allow)), 6);
}

#[test]
fn one_boot_per_side_is_inconclusive_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let base = boots(tmp.path(), "base", 1.0);
    let new = boots(tmp.path(), "new", 0.5);
    // One boot per side: no estimate of the boots' own spread, no verdict.
    let args = ["--fail-if", "slower"];
    let out = compare(&base[..1], &new[..1], &args);
    assert_eq!(code(&out), 7, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("INCONCLUSIVE"));
    let out = compare(
        &base[..1],
        &new[..1],
        &[&args[..], &["--allow-inconclusive"]].concat(),
    );
    assert_eq!(code(&out), 0, "{}", describe(&out));
}

#[test]
fn compare_json_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let base = boots(tmp.path(), "base", 1.0);
    let slower = boots(tmp.path(), "slower", 0.5);
    let out = compare(&base, &slower, &["--fail-if", "slower", "--json"]);
    assert_eq!(code(&out), 6, "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["schema"], 1, "{json}");
    assert_eq!(json["command"], "compare", "{json}");
    assert_eq!(json["gate"]["status"], "fail", "{json}");
    assert!(json["report"].is_object(), "{json}");
}

#[test]
fn report_gate_and_json_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(tmp.path(), "r");
    // Without a gate: the report's own verdicts, whatever they are, exit 0.
    assert_eq!(code(&mmcab(&["report", path(&dir), "--json"])), 0);
    // max-sectors-16k at a third of its throughput: slower in every workload, surely so
    // (after the report's correction for its many tests) where the noise allows.
    results::scale_config(&dir, Some("max-sectors-16k"), 1.0 / 3.0);
    let out = mmcab(&["report", path(&dir), "--fail-if", "slower", "--json"]);
    assert_eq!(code(&out), 6, "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["schema"], 1);
    assert_eq!(json["command"], "report");
    assert_eq!(json["gate"]["status"], "fail");
    assert_eq!(json["report"]["baseline"], "max-sectors-512k");
    let checks = json["gate"]["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        5,
        "one per workload's headline metric: {json}"
    );
    // A check fails exactly where the report's verdict is "slower".
    for c in checks {
        let slower = c["verdict"] == "slower";
        assert_eq!(c["status"] == "fail", slower, "{c}");
        assert!(!slower || c["ci_high"].as_f64().unwrap() < 0.0, "{c}");
    }
    assert_eq!(checks[0]["workload"], "seq-write");
    assert_eq!(checks[0]["status"], "fail", "{json}");
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
    let base = boots(tmp.path(), "base", 1.0);
    let slower = boots(tmp.path(), "slower", 0.5);
    // mmcab compare --baseline STORE ARGS...
    let with_store = |args: &[&str]| {
        mmcab(
            &[
                &["compare", "--no-calibration", "--baseline", path(&store)],
                args,
            ]
            .concat(),
        )
    };
    let base_s: Vec<&str> = base.iter().map(|d| path(d)).collect();
    let slower_s: Vec<&str> = slower.iter().map(|d| path(d)).collect();
    // Nothing stored yet: one line saying how to store one.
    let out = with_store(&[&slower_s[..], &["--fail-if", "slower"]].concat());
    assert_eq!(code(&out), 1, "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--save-baseline"));
    // One boot per job, as in LAVA: --keep builds the baseline across saves.
    for dir in &base_s {
        let out = with_store(&["--save-baseline", "--keep", "3", dir]);
        assert_eq!(code(&out), 0, "{}", describe(&out));
    }
    let said = out_ok(with_store(&["--save-baseline", "--keep", "3", base_s[2]]));
    assert!(said.contains("(3 boots; already stored 0003_"), "{said}");
    // The boots of one new job against the stored three.
    let out = with_store(&[slower_s[0], "--fail-if", "slower"]);
    assert_eq!(code(&out), 6, "{}", describe(&out));
    // A fourth boot drops the first saved.
    let extra = boots_with(tmp.path(), "extra", 1.0, &[1.01]);
    let said = out_ok(with_store(&[
        "--save-baseline",
        "--keep",
        "3",
        path(&extra[0]),
    ]));
    assert!(
        said.contains("added 0004_") && said.contains("dropped 0001_"),
        "{said}"
    );
    // Without --keep the given boots replace the stored ones.
    let out = out_ok(with_store(&[&["--save-baseline"][..], &base_s].concat()));
    assert!(out.contains("(3 boots; added 0001_"), "{out}");
    let out = with_store(&[&slower_s[..], &["--fail-if", "slower", "--json"]].concat());
    assert_eq!(code(&out), 6, "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["command"], "compare");
    assert_eq!(json["gate"]["status"], "fail");
    let report_dir = json["report_dir"].as_str().unwrap();
    assert!(
        report_dir.starts_with(path(&slower[0])),
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

/// `calibrate --json`: the schema, where it was written, and the calibration itself
/// (the same document as the file).
#[test]
fn calibrate_json_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = boots(tmp.path(), "aa", 1.0);
    let file = tmp.path().join("cal.json");
    let mut args = vec!["calibrate"];
    args.extend(dirs.iter().map(|d| path(d)));
    args.extend(["--out", path(&file), "--json"]);
    let out = mmcab(&args);
    assert_eq!(code(&out), 0, "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["written_to"], path(&file));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["calibration"], stored);
    assert_eq!(v["calibration"]["boots"].as_array().unwrap().len(), 3);
}
