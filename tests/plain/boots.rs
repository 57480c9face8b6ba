//! Verdicts across boots.
//!
//! - On committed boots of the emulated eMMC (tests/fixtures/boots/, how they were made:
//!   tests/fixtures/boots.README.md): A/A boots compared with boots as the unit are not
//!   called, a throttle change across boots is, single boots are shown but not tested,
//!   and a calibration from A/A boots stands in for single boots.
//! - In the guest (root, testbed): `CARD=sim bench/boots all` in a small form on the
//!   simulated eMMC, end to end: A/A boots, a change across boots (three a side) and
//!   within each boot.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/guest/boots.rs.

use crate::common::cli::mmcab_store as mmcab;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/boots")
}

/// Writable copies of the fixture boots `names` under `tmp` (reports are written into
/// the first directory).
fn boots(tmp: &Path, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| {
            let to = tmp.join(name);
            std::fs::create_dir_all(&to).unwrap();
            for entry in std::fs::read_dir(fixtures().join(name)).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_file() {
                    std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
                }
            }
            to
        })
        .collect()
}

fn stdout(out: Output) -> String {
    assert!(
        out.status.success(),
        "mmcab failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The mail text with wrapped lines joined again (continuations are indented 4 more).
fn unwrapped(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("      ") && !out.is_empty() {
            out.pop();
            out.push(' ');
            out.push_str(line.trim_start());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `compare BASE... --vs NEW...`, its mail text unwrapped.
fn compare(base: &[PathBuf], new: &[PathBuf], store: &Path) -> String {
    let mut args: Vec<&Path> = vec![Path::new("compare")];
    args.extend(base.iter().map(PathBuf::as_path));
    if !new.is_empty() {
        args.push(Path::new("--vs"));
        args.extend(new.iter().map(PathBuf::as_path));
    }
    unwrapped(&stdout(mmcab(&args, store)))
}

fn verdict_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains(" vs ")).collect()
}

/// Two A/A boots per side (unthrottled, noisy): tested on the boot means, not called;
/// the table shows both spreads.
#[test]
fn aa_boots_compared_as_boots_are_not_called() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let dirs = boots(tmp.path(), &["aa-1", "aa-2", "aa-3", "aa-4"]);
    let text = compare(&dirs[..2], &dirs[2..], &store);
    assert!(text.contains("Boots are the unit"), "{text}");
    assert!(text.contains("boot cv% run cv% boots x n"), "{text}");
    assert!(
        text.contains("Boots: base = aa-1, aa-2; new = aa-3, aa-4"),
        "{text}"
    );
    let lines = verdict_lines(&text);
    assert_eq!(lines.len(), 3, "one per workload: {text}");
    for line in lines {
        assert!(
            line.contains("2+2 boots") || text.contains("2+2 boots"),
            "{text}"
        );
        assert!(
            !line.contains("faster") && !line.contains("slower"),
            "{text}"
        );
    }
}

/// A throttle change of 10% across boots: called slower with three boots per side
/// (-8.1% and -9.1%), not yet with two (the intervals are wide at 2 df).
#[test]
fn a_throttle_change_across_boots_is_called_slower() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let names = ["base-1", "base-2", "base-3", "slow-1", "slow-2", "slow-3"];
    let dirs = boots(tmp.path(), &names);
    let two = compare(&[dirs[0].clone(), dirs[1].clone()], &dirs[3..5], &store);
    assert!(
        !two.contains(": slower") && two.contains("2+2 boots"),
        "{two}"
    );
    let text = compare(&dirs[..3], &dirs[3..], &store);
    assert!(
        text.contains("Boots: base = base-1, base-2, base-3; slow = slow-1, slow-2, slow-3"),
        "{text}"
    );
    assert!(text.contains("3+3 boots"), "{text}");
    let slower = text.matches(": slower").count();
    assert_eq!(slower, 2, "seq-write and seq-read: {text}");
    assert!(!text.contains(": faster"), "{text}");
    let csv =
        std::fs::read_to_string(dirs[0].join("report/compare-base-vs-slow/summary.csv")).unwrap();
    assert!(csv.contains(",boot_means_welch,"), "{csv}");
}

/// One boot per side (the old form): the change is shown, not tested, and the note
/// says why and what to run.
#[test]
fn single_boots_are_shown_not_tested() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let dirs = boots(tmp.path(), &["base-1", "slow-1"]);
    let mut args: Vec<&Path> = vec![Path::new("compare")];
    args.extend(dirs.iter().map(PathBuf::as_path));
    let text = stdout(mmcab(&args, &store));
    assert_eq!(
        text.matches("(one boot per side: not tested)").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("Compare at least 2 boots per side") && text.contains("mmcab calibrate"),
        "{text}"
    );
}

/// `mmcab calibrate` on three A/A boots stores the spread where compare finds it; two
/// other single boots are then tested with it, and the header says so.
#[test]
fn a_calibration_stands_in_for_single_boots() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let dirs = boots(tmp.path(), &["aa-1", "aa-2", "aa-3", "aa-4", "aa-5"]);
    let mut args: Vec<&Path> = vec![Path::new("calibrate")];
    args.extend(dirs[..3].iter().map(PathBuf::as_path));
    let out = mmcab(&args, &store);
    let table = stdout(out);
    assert!(
        table.contains("3 A/A boots") && table.contains("as-is/seq-write write, MB/s"),
        "{table}"
    );
    let stored: Vec<_> = std::fs::read_dir(&store).unwrap().collect();
    assert_eq!(stored.len(), 1, "one file per device and plan");

    let text = compare(&dirs[3..4], &dirs[4..], &store);
    assert!(text.contains("Calibration: "), "{text}");
    assert!(text.contains("(3 A/A boots"), "{text}");
    assert_eq!(text.matches("1+1 boots, calibrated: ").count(), 3, "{text}");
    // --no-calibration: back to not tested.
    let out = mmcab(
        &[
            Path::new("compare"),
            &dirs[3],
            &dirs[4],
            Path::new("--no-calibration"),
        ],
        &store,
    );
    assert!(stdout(out).contains("(one boot per side: not tested)"));
    // A calibration of other sizes (--scale-down 4) for the throttle boots (8): refused.
    let others = boots(tmp.path(), &["base-1", "slow-1"]);
    let file = std::fs::read_dir(&store)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = mmcab(
        &[
            Path::new("compare"),
            &others[0],
            &others[1],
            Path::new("--calibration"),
            &file,
        ],
        &store,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("--scale-down differs")
            && err.contains("ran 4")
            && err.contains("same sizes"),
        "{err}"
    );
    // Boots of other sizes are not compared either, unless forced (and then said).
    let out = mmcab(&[Path::new("compare"), &dirs[3], &others[0]], &store);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--scale-down differs") && err.contains("--force"),
        "{err}"
    );
    let forced = mmcab(
        &[
            Path::new("compare"),
            &dirs[3],
            &others[0],
            Path::new("--force"),
        ],
        &store,
    );
    assert!(
        stdout(forced).contains("COMPARED WITH --force: --scale-down differs"),
        "the report names the difference"
    );
    // Too few boots for a calibration.
    let out = mmcab(&[Path::new("calibrate"), &dirs[0], &dirs[1]], &store);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("at least 3 results directories"),
        "{err}"
    );
}
