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
//! `UPDATE_GOLDEN=1 cargo test --test plain report_pins::` rewrites the pins from the
//! current code (review the diff and say why in the commit). A failing case leaves what it got
//! under target/tmp/report-pins/<case>/ for a diff against the pins.

use crate::common::cli;
use crate::common::cli::mmcab_code_bytes as mmcab;

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

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

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

/// The pinned files of `pin`, by name.
fn pinned(pin: &str) -> BTreeMap<String, Vec<u8>> {
    let dir = pins().join(pin);
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return files;
    };
    for entry in entries {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        files.insert(name, std::fs::read(entry.path()).expect("read pin"));
    }
    files
}

fn write_all(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("remove old pins");
    }
    std::fs::create_dir_all(dir).expect("mkdir pins");
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("write pin");
    }
}

/// The first line where two texts differ, for the failure message.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (want, got) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let mut lines = want.lines().zip(got.lines()).enumerate();
    match lines.find(|(_, (w, g))| w != g) {
        Some((i, (w, g))) => format!("line {}:\n    pinned: {w}\n    now:    {g}", i + 1),
        None => format!(
            "the end: {} lines ({} bytes) pinned, {} lines ({} bytes) now",
            want.lines().count(),
            want.len(),
            got.lines().count(),
            got.len()
        ),
    }
}

/// Runs `case` and compares every output with its pin (or rewrites the pins).
fn check(case: &Case) {
    let got = outputs(case);
    if updating() {
        write_all(&pins().join(case.pin), &got);
        return;
    }
    let want = pinned(case.pin);
    let mut problems = Vec::new();
    for name in want.keys().filter(|n| !got.contains_key(*n)) {
        problems.push(format!("{name}: pinned, no longer written"));
    }
    for (name, bytes) in &got {
        match want.get(name) {
            None => problems.push(format!("{name}: written, not pinned")),
            Some(w) if w != bytes => {
                problems.push(format!("{name}: differs at {}", first_difference(w, bytes)))
            }
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        let kept = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("report-pins")
            .join(case.pin);
        write_all(&kept, &got);
        panic!(
            "{}: outputs differ from tests/fixtures/pins/{} (what they are now: {}; \
             UPDATE_GOLDEN=1 to accept an intended change):\n{}",
            case.pin,
            case.pin,
            kept.display(),
            problems.join("\n")
        );
    }
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
