//! `mmcab probe align` and `mmcab probe open-au` end to end: the published BeagleBone
//! output reported as the post concludes (plain), the refusals (no --allow-write: plain;
//! a mounted device: root), a loop device (root: no boundary, no collapse) and the
//! emulated eMMC (root and the QEMU testbed: no boundary claimed, the card's erase sizes
//! stated).
//!
//! `UPDATE_GOLDEN=1 cargo test --test plain probe::` rewrites the committed report of the
//! published output (results/reference/beaglebone-2013-flashbench/).
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/probe.rs, tests/guest/probe.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::golden::{read_dir, Goldens};

use cli::{assert_mail_text, mmcab, ok, root};
use std::process::Output;

/// The one line a refusal prints, and a failing status.
fn refused(out: Output) -> String {
    assert!(!out.status.success(), "not refused");
    let err = String::from_utf8(out.stderr).expect("utf-8");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].starts_with("mmcab: error: "), "{err}");
    err
}

const PUBLISHED: &str = "results/reference/beaglebone-2013-flashbench.txt";

/// The post's flashbench output reported: 2 MiB erase blocks and 5 open units (linear
/// and random), as the post concludes; the disagreement with the sysfs erase sizes the
/// post quotes is stated; the charts render. The committed report is this one.
#[test]
fn the_published_beaglebone_output_reports_as_the_post_concludes() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("beaglebone-2013-flashbench.txt");
    std::fs::copy(root().join(PUBLISHED), &copy).unwrap();
    let text = ok(mmcab(&["report", copy.to_str().unwrap()]));
    assert_mail_text(&text);
    assert!(
        text.contains("Erase block: 2MiB (high confidence)"),
        "{text}"
    );
    assert!(
        text.contains("Disagreement: the timing says 2MiB, sysfs erase_size says 512KiB"),
        "{text}"
    );
    assert!(
        text.contains("Open units, linear order: 5 (high confidence)"),
        "{text}"
    );
    assert!(
        text.contains("Open units, random order: 5 (high confidence)"),
        "{text}"
    );
    let out = tmp.path().join("beaglebone-2013-flashbench");
    let committed = root().join("results/reference/beaglebone-2013-flashbench");
    let mut goldens = Goldens::new("the report of the published output");
    for kind in ["align", "open-au"] {
        goldens.dir(&committed.join(kind), &read_dir(&out.join(kind)));
    }
    goldens.finish();
    charts::check_png(&out.join("align/align-diff.png"));
    charts::check_png(&out.join("open-au/open-au.png"));
}

/// Without --allow-write, open-au stops before opening anything, in one line.
#[test]
fn open_au_refuses_without_allow_write() {
    let err = refused(mmcab(&[
        "probe",
        "open-au",
        "/dev/mmcblk9",
        "--erase-size",
        "2M",
        "--nr",
        "5",
    ]));
    assert!(
        err.contains("/dev/mmcblk9") && err.contains("--allow-write"),
        "{err}"
    );
}
