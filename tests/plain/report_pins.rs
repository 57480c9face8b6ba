//! Every output of `mmcab report` and `mmcab compare`, pinned byte for byte, for every
//! results directory under tests/fixtures: a restructure of src/report/ must leave all
//! of them as they are, and a deliberate change shows in the diff of the pins.
//!
//! Per case, tests/fixtures/pins/<case>/ holds:
//! - `stdout.txt`, `stdout.json`, `stdout.lava`: stdout of `--format text`, `json` and
//!   `lava` (the text is also checked to be `report.txt`); `stdout-gate.txt` where the
//!   case runs the regression gate too (`--fail-if slower`);
//! - `status.txt`: each form's exit status and stderr;
//! - the files of the report directory: `report.txt`, `report.md`, `summary.csv`,
//!   `report.json` and the SVG charts as written;
//! - `png.sha256`: the PNG charts by their SHA-256 (`sha256sum -c png.sha256` in a
//!   report directory checks them), which keeps megabytes of bitmaps out of the
//!   repository and still fails on any byte change.
//!
//! The one thing that differs between runs is where the copies of the fixtures are (the
//! report is written into the results directory, so the test works on copies in a
//! temporary directory): that path is written `$TMP` in every pinned file (`stdout.json`
//! has it in `report_dir`, stderr and the calibration line of a compare name it). No
//! output carries a version, a date or a host name. Charts are rendered with the
//! embedded font, so they do not depend on the fonts installed; they are pinned as the
//! x86-64 host build draws them (floating point is not promised to match on other
//! architectures).
//!
//! `UPDATE_GOLDEN=1 cargo test --test plain report_pins::` rewrites the pins that differ
//! from what the current code writes, and fails naming them (tests/common/golden.rs); review
//! the diff, say why in the commit, and run again without it. A failing case leaves what
//! it got under target/tmp/report-pins/<case>/ for a diff against the pins.

use crate::common::cli;
use crate::common::cli::mmcab_code_bytes as mmcab;
use crate::common::golden::{updating, Goldens};

use cli::root;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One invocation to pin.
struct Case {
    /// Directory under tests/fixtures/pins.
    pin: &'static str,
    /// Before it: `mmcab calibrate DIRS --out $TMP/calibration.json` (empty = none).
    calibrate: &'static [&'static str],
    /// The command and its arguments. A word naming a directory under tests/fixtures
    /// (`results-loop`, `boots/aa-1`) stands for a copy of it under $TMP; `$TMP/` starts
    /// a path in the temporary directory.
    args: &'static [&'static str],
    /// Also pin the output of the regression gate (`--fail-if slower`).
    gate: bool,
}

/// The stdout forms: pinned file, extra arguments.
const FORMS: [(&str, &[&str]); 3] = [
    ("stdout.txt", &[]),
    ("stdout.json", &["--format", "json"]),
    ("stdout.lava", &["--format", "lava"]),
];
const GATE: (&str, &[&str]) = ("stdout-gate.txt", &["--fail-if", "slower"]);

const TMP: &str = "$TMP";

fn fixtures() -> PathBuf {
    root().join("tests/fixtures")
}

fn pins() -> PathBuf {
    fixtures().join("pins")
}

/// Copies the files (not the report subdirectory) of fixture `name` to `tmp`/`name`.
fn copy_fixture(tmp: &Path, name: &str) -> PathBuf {
    let to = tmp.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    for entry in std::fs::read_dir(fixtures().join(name)).expect("read fixture") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
    to
}

/// The arguments with fixture names and `$TMP/` made paths under `tmp`.
fn resolve(tmp: &Path, words: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            if let Some(rest) = w.strip_prefix("$TMP/") {
                tmp.join(rest).display().to_string()
            } else if !w.starts_with('-') && fixtures().join(w).is_dir() {
                copy_fixture(tmp, w).display().to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// `bytes` with the temporary directory written `$TMP` (text only).
fn placeholder(tmp: &Path, bytes: Vec<u8>) -> Vec<u8> {
    match String::from_utf8(bytes) {
        Ok(text) => text.replace(&tmp.display().to_string(), TMP).into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The report directory named on stderr (`mmcab: report written to DIR/ (...)`).
fn report_dir(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("mmcab: report written to "))
        .unwrap_or_else(|| panic!("no 'report written to' line: {stderr}"));
    let (dir, _) = line.split_once("/ (").expect("DIR/ (files)");
    PathBuf::from(dir)
}

/// The files of a report directory as pinned: PNGs by their hash in `png.sha256`.
fn report_files(tmp: &Path, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pngs = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("read report dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            entry.file_type().expect("type").is_file(),
            "{name}: a report directory of a fresh copy has only files"
        );
        let bytes = std::fs::read(entry.path()).expect("read report file");
        if name.ends_with(".png") {
            pngs.insert(name, sha256_hex(&bytes));
        } else {
            files.insert(name, placeholder(tmp, bytes));
        }
    }
    if !pngs.is_empty() {
        let list: String = pngs.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
        files.insert("png.sha256".into(), list.into_bytes());
    }
    files
}

/// Runs a case; every pinned file, by name.
fn outputs(case: &Case) -> BTreeMap<String, Vec<u8>> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tmp = tmp.path();
    if !case.calibrate.is_empty() {
        let mut args = resolve(tmp, &["calibrate"]);
        args.extend(resolve(tmp, case.calibrate));
        args.extend(resolve(tmp, &["--out", "$TMP/calibration.json"]));
        let (code, _, stderr) = mmcab(&args);
        assert_eq!(code, 0, "calibrate: {stderr}");
    }
    let args = resolve(tmp, case.args);
    let forms = FORMS.iter().chain(case.gate.then_some(&GATE));
    let mut files = BTreeMap::new();
    let mut status = String::new();
    let mut dir = None;
    for (name, extra) in forms {
        let mut full = args.clone();
        full.extend(extra.iter().map(|s| s.to_string()));
        let (code, stdout, stderr) = mmcab(&full);
        status.push_str(&format!("{name}: exit {code}\n"));
        for line in stderr.lines() {
            status.push_str(&format!("  {line}\n"));
        }
        if dir.is_none() {
            assert_eq!(code, 0, "{}: {stderr}", case.pin);
            let d = report_dir(&stderr);
            let report_txt = std::fs::read(d.join("report.txt")).expect("report.txt");
            assert!(report_txt == stdout, "{}: stdout is report.txt", case.pin);
            files.extend(report_files(tmp, &d));
            dir = Some(d);
        }
        files.insert(name.to_string(), placeholder(tmp, stdout));
    }
    files.insert("status.txt".into(), placeholder(tmp, status.into_bytes()));
    files
}

/// Runs `case` and compares every output with its pin (with `UPDATE_GOLDEN`: rewrites
/// the pins that differ, and fails naming them).
fn check(case: &Case) {
    let got = outputs(case);
    let kept = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("report-pins")
        .join(case.pin);
    let what = match updating() {
        true => format!("case {}", case.pin),
        false => format!("case {} (what it writes now: {})", case.pin, kept.display()),
    };
    let mut goldens = Goldens::new(&what);
    if !goldens.dir(&pins().join(case.pin), &got).is_empty() && !updating() {
        if kept.exists() {
            std::fs::remove_dir_all(&kept).expect("remove old outputs");
        }
        std::fs::create_dir_all(&kept).expect("mkdir");
        for (name, bytes) in &got {
            std::fs::write(kept.join(name), bytes).expect("write output");
        }
    }
    goldens.finish();
}

/// `mmcab report DIR` (`args` = `["report", DIR]`).
fn report(pin: &'static str, args: &'static [&'static str], gate: bool) -> Case {
    Case {
        pin,
        calibrate: &[],
        args,
        gate,
    }
}

#[test]
fn report_results_loop() {
    check(&report(
        "report-results-loop",
        &["report", "results-loop"],
        true,
    ));
}

#[test]
fn report_results_quickstart() {
    check(&report(
        "report-results-quickstart",
        &["report", "results-quickstart"],
        false,
    ));
}

#[test]
fn report_results_emmc_cmd23() {
    check(&report(
        "report-results-emmc-cmd23",
        &["report", "results-emmc-cmd23"],
        false,
    ));
}

/// A workload with a read and a write job whose name says both directions
/// (`long-read-long-write`): each block is headed with its own direction.
#[test]
fn report_results_mixed() {
    check(&report(
        "report-results-mixed",
        &["report", "results-mixed"],
        false,
    ));
}

#[test]
fn report_results_v0_1_boot1() {
    check(&report(
        "report-results-v0.1-emmc-boot1",
        &["report", "results-v0.1-emmc-boot1"],
        false,
    ));
}

#[test]
fn report_results_v0_1_boot2() {
    check(&report(
        "report-results-v0.1-emmc-boot2",
        &["report", "results-v0.1-emmc-boot2"],
        false,
    ));
}

/// Two directories, each its own side of one boot.
#[test]
fn compare_v0_1_boot1_with_boot2() {
    check(&Case {
        pin: "compare-v0.1-emmc-boot1-boot2",
        calibrate: &[],
        args: &[
            "compare",
            "results-v0.1-emmc-boot1",
            "results-v0.1-emmc-boot2",
        ],
        gate: false,
    });
}

/// Boots as the unit: a throttle change, three boots per side.
#[test]
fn compare_boots_base_vs_slow() {
    check(&Case {
        pin: "compare-boots-base-vs-slow",
        calibrate: &[],
        args: &[
            "compare",
            "boots/base-1",
            "boots/base-2",
            "boots/base-3",
            "--vs",
            "boots/slow-1",
            "boots/slow-2",
            "boots/slow-3",
        ],
        gate: true,
    });
}

/// Boots as the unit: A/A boots.
#[test]
fn compare_boots_aa() {
    check(&Case {
        pin: "compare-boots-aa",
        calibrate: &[],
        args: &[
            "compare",
            "boots/aa-1",
            "boots/aa-2",
            "boots/aa-3",
            "--vs",
            "boots/aa-4",
            "boots/aa-5",
        ],
        gate: false,
    });
}

/// One boot per side, no calibration: shown, not tested.
#[test]
fn compare_single_boots() {
    check(&Case {
        pin: "compare-boots-single",
        calibrate: &[],
        args: &["compare", "boots/base-1", "--vs", "boots/slow-1"],
        gate: false,
    });
}

/// One boot per side with a calibration from three A/A boots.
#[test]
fn compare_single_boots_calibrated() {
    check(&Case {
        pin: "compare-boots-calibrated",
        calibrate: &["boots/aa-1", "boots/aa-2", "boots/aa-3"],
        args: &[
            "compare",
            "boots/aa-4",
            "boots/aa-5",
            "--calibration",
            "$TMP/calibration.json",
        ],
        gate: false,
    });
}
