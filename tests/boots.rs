//! Verdicts across boots.
//!
//! - On committed boots of the emulated eMMC (tests/fixtures/boots/, how they were made:
//!   tests/fixtures/boots.README.md): A/A boots compared with boots as the unit are not
//!   called, a throttle change across boots is, single boots are shown but not tested,
//!   and a calibration from A/A boots stands in for single boots.
//! - In the guest (root, testbed): `CARD=sim bench/boots all` in a small form on the
//!   simulated eMMC, end to end: A/A boots, a change across boots (three a side) and
//!   within each boot.

#[path = "common/testbed.rs"]
mod testbed;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

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

fn mmcab(args: &[&Path], store: &Path) -> Output {
    Command::new(MMCAB)
        .args(args)
        .env("MMCAB_CALIBRATION_DIR", store)
        .output()
        .unwrap()
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

/// `CARD=sim bench/boots all` in a small form on the simulated eMMC, the boots kept in
/// `work`: 4 A/A boots (each also running the within-boot plan: a1, a2 the same, slow
/// with `program_ns_per_kib` 10% more) and 3 boots a side of that change across boots.
/// The card's guest time runs on QEMU's instruction counter, so a loaded machine slows
/// the boots down but not what they measure. Under load a boot may still take far
/// longer than on a quiet machine: each gets 30 min before testbed/run gives up, and
/// bench/boots boots a failed one once more (a boot that fails twice makes it exit 3,
/// naming the boot and the tail of its log on stderr).
fn bench_boots(work: &Path, out: &Path) -> Output {
    Command::new(testbed::repo_root().join("bench/boots"))
        .arg("all")
        .env("CARD", "sim")
        .env("WORK", work)
        .env("OUT", out)
        .env("MMCAB", MMCAB)
        .env("GUEST_MMCAB", testbed::mmcab_armv7())
        .env("JOBS", "2")
        .env("BOOT_TIMEOUT", "1800")
        .envs([("AA_BOOTS", "4"), ("AA_SIDE", "2"), ("AA_COMPARISONS", "1")])
        .envs([("AA_CAL", "3"), ("AA_REPEAT", "3"), ("AA_SCALE", "4")])
        .envs([("WI_REPEAT", "5"), ("TH_BOOTS", "3"), ("TH_TRIALS", "1")])
        .envs([
            ("TH_REPEAT", "5"),
            ("TH_CHANGE", "10"),
            ("TH_UNTIL_CI", "1"),
        ])
        .output()
        .unwrap()
}

/// bench/boots end to end on the simulated card (boots two at a time, compare, report,
/// the markdown table). The change is large (10%, 6% of the write's MB/s) so that
/// three boots a side find it every time: with the model's per-boot offset (uniform
/// within +-1%) the sd of three boot means is at most 1.2%, Welch t then has at least
/// 2 df (critical value 4.3) and the change is over 4 sd. Two a side are not enough:
/// at 1 df the critical value is 12.7, and one such trial missed it.
/// bench/BOOTS-SIM.md shows a 3% change needs four. This proves the script and the
/// model's effect; bench/BOOTS-SIM.md holds the measurements.
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn bench_boots_finds_a_change_of_the_simulated_card_across_and_within_boots() {
    testbed::require_setup();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("BOOTS-SIM.md");
    let run = bench_boots(work.path(), &out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "bench/boots failed:\n{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("3 boots with `program_ns_per_kib=42000` (base) and 3 with 46200"),
        "{text}\n{stderr}"
    );
    assert!(!text.contains("failed twice"), "{text}\n{stderr}");
    // Three boots per side, one trial: found by both designs, nothing called faster.
    assert!(
        text.contains("| 3 | 1 | 1 (100.0%) | 0 | 1 (100.0%) |"),
        "{text}\n{stderr}"
    );
    // Within the A/A boots the slow config is found, never called faster. Its runs sit
    // about 9 sd of a run from a1's (seq-write, 5 runs a side, 0.2-0.9% cv), so a miss
    // needs a run far off the model; one such boot was seen once in CI (3 of 4, no data
    // kept), so one miss is allowed and the report names it with its runs.
    let found = text
        .lines()
        .find_map(|l| l.strip_prefix("slow vs a1: found in "))
        .and_then(|l| l.split(' ').next()?.parse::<u32>().ok());
    assert!(
        found >= Some(3) && text.contains(" of 4 boots (") && text.contains("), wrong in 0."),
        "{text}\n{stderr}"
    );
    assert!(text.contains("| 2 vs 2 boots (`--vs`) | 1 |"), "{text}");
    assert!(
        text.contains("Device time over all base and slow boots"),
        "{text}\n{stderr}"
    );
    // The boots are kept: a second call boots nothing and compares again.
    let again = bench_boots(work.path(), &out);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(!stderr.contains("booting for"), "{stderr}");
}
