//! Results directories written by mmcab 0.1.0 stay readable: `mmcab report` and
//! `mmcab compare` on them print and write what 0.1.0 did, but for the deliberate
//! changes listed in tests/fixtures/results-v0.1-emmc.README.md.
//!
//! Fixtures: tests/fixtures/results-v0.1-emmc-boot1 and -boot2, recorded on the emulated
//! eMMC by the 0.1.0 binary, and the outputs 0.1.0 gave for them in
//! tests/fixtures/results-v0.1-emmc.expected/ (how both were made:
//! tests/fixtures/results-v0.1-emmc.README.md). The directories are never regenerated;
//! `UPDATE_GOLDEN=1 cargo test --test plain old_results::` rewrites the expected outputs
//! that differ after an intended change of the report, and fails naming them (review the
//! diff, say why in the commit, run again without it).
//!
//! In the guest, `mmcab info` prints what 0.1.0 printed there
//! (tests/fixtures/qemu-emmc/info-v0.1-*), and a directory recorded now compares with
//! one 0.1.0 recorded.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/guest/old_results.rs.

use crate::common::cli;
use crate::common::cli::mmcab_paths as mmcab;
use crate::common::golden::Goldens;
use crate::common::old_results::{copy_files, copy_fixture, fixtures, read};
use cli::ok;
use std::path::{Path, PathBuf};

fn expected(name: &str) -> PathBuf {
    fixtures().join("results-v0.1-emmc.expected").join(name)
}

/// The golden files of mmcab 0.1.0's outputs.
fn goldens() -> Goldens {
    Goldens::new(
        "the output mmcab 0.1.0 gave (tests/fixtures/results-v0.1-emmc.README.md lists the \
         deliberate changes)",
    )
}

#[test]
fn report_of_a_v0_1_results_dir_is_unchanged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut goldens = goldens();
    for boot in ["boot1", "boot2"] {
        let dir = copy_fixture(tmp.path(), boot);
        let text = ok(mmcab(&[Path::new("report"), &dir]));
        goldens.text(&expected(&format!("report-{boot}.txt")), &text);
        assert_eq!(read(&dir.join("report/report.txt")), text, "{boot}");
        goldens.text(
            &expected(&format!("summary-{boot}.csv")),
            &read(&dir.join("report/summary.csv")),
        );
    }
    goldens.finish();
}

#[test]
fn compare_of_two_v0_1_results_dirs_is_unchanged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = copy_fixture(tmp.path(), "boot1");
    let b = copy_fixture(tmp.path(), "boot2");
    let text = ok(mmcab(&[Path::new("compare"), &a, &b]));
    let mut goldens = goldens();
    goldens.text(&expected("compare-boot1-vs-boot2.txt"), &text);
    let out = a.join("report/compare-boot1-vs-boot2");
    assert_eq!(read(&out.join("report.txt")), text);
    goldens.text(
        &expected("compare-boot1-vs-boot2-summary.csv"),
        &read(&out.join("summary.csv")),
    );
    goldens.finish();
}

/// The device recorded by 0.1.0 (`meta.json` `device` = `info --json`) is still what
/// compare checks: another card serial or capacity in it is refused, naming the field.
#[test]
fn compare_still_refuses_another_card_recorded_by_v0_1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = copy_fixture(tmp.path(), "boot1");
    for (pointer, value, field) in [
        ("/device/identity/serial", serde_json::json!(1), "serial"),
        ("/device/identity/manfid", serde_json::json!(0x15), "manfid"),
        (
            "/device/capacity_bytes",
            serde_json::json!(1u64 << 33),
            "capacity_bytes",
        ),
    ] {
        let b = copy_fixture(tmp.path(), "boot2");
        let meta_path = b.join("meta.json");
        let mut meta: serde_json::Value = serde_json::from_str(&read(&meta_path)).expect("json");
        *meta.pointer_mut(pointer).expect(pointer) = value;
        std::fs::write(
            &meta_path,
            serde_json::to_string_pretty(&meta).expect("json"),
        )
        .expect("write meta.json");
        let out = mmcab(&[Path::new("compare"), &a, &b]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(&format!("device {field} differs")),
            "{pointer}: {err}"
        );
    }
}

/// The new form takes 0.1.0 directories as boots: two boots per side (copies of the
/// two 0.1.0 boots on both sides, an A/A comparison) are tested on their boot means,
/// and one boot per side is shown without a verdict.
#[test]
fn v0_1_results_dirs_compare_as_boots() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = copy_fixture(tmp.path(), "boot1");
    let b = copy_fixture(tmp.path(), "boot2");
    let (a2, b2) = (
        tmp.path().join("again-boot1"),
        tmp.path().join("again-boot2"),
    );
    copy_files(&a, &a2);
    copy_files(&b, &b2);
    let vs = Path::new("--vs");
    let text = ok(mmcab(&[Path::new("compare"), &a, &b, vs, &b2, &a2]));
    assert!(text.contains("Boots are the unit"), "{text}");
    assert!(
        text.contains("base/bus8 (A)") && text.contains("2 x 3"),
        "{text}"
    );
    assert!(
        text.contains("new/bus8 vs base/bus8: +0.0% [")
            && text.contains("2+2 boots: no significant change"),
        "{text}"
    );
    assert!(
        !text.contains("faster") && !text.contains("slower"),
        "{text}"
    );
    let out = a.join("report/compare-base-vs-new");
    assert!(read(&out.join("summary.csv")).contains(",boot_means_welch,"));

    let text = ok(mmcab(&[Path::new("compare"), &a, vs, &b]));
    assert!(
        text.contains("boot2/bus8 vs boot1/bus8: +29.6% (one boot per side: not tested)"),
        "{text}"
    );
}
