//! `mmcab probe align` and `mmcab probe open-au` end to end: the published BeagleBone
//! output reported as the post concludes (plain), the refusals (no --allow-write: plain;
//! a mounted device: root), a loop device (root: no boundary, no collapse) and the
//! emulated eMMC (root and the QEMU testbed: no boundary claimed, the card's erase sizes
//! stated).
//!
//! `UPDATE_GOLDEN=1 cargo test --test plain probe::` rewrites the committed report of the
//! published output (results/reference/beaglebone-2013-flashbench/).
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/guest/probe.rs, tests/plain/probe.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::loop_device;

use cli::{assert_mail_text, mmcab, ok, root};
use loop_device::LoopDevice;
use std::path::Path;
use std::process::{Command, Output};

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

#[test]
#[ignore = "needs root: loop devices and an ext4 mount"]
fn open_au_refuses_a_mounted_device() {
    let dev = LoopDevice::new(64 << 20);
    assert!(Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&dev.dev)
        .status()
        .unwrap()
        .success());
    let mnt = tempfile::tempdir_in("/dev/shm").unwrap();
    assert!(Command::new("mount")
        .arg(&dev.dev)
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p");
    let result = mmcab(&[
        "probe",
        "open-au",
        dev.dev.to_str().unwrap(),
        "--erase-size",
        "1M",
        "--allow-write",
        "--out",
        out.to_str().unwrap(),
    ]);
    let _ = Command::new("umount").arg(mnt.path()).status();
    let err = refused(result);
    assert!(
        err.contains("in use") && err.contains(mnt.path().to_str().unwrap()),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

fn probe_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("probe.json")).unwrap()).unwrap()
}

/// A loop device over RAM has no flash: align claims no boundary, open-au finds no
/// collapse; both write their directory, report and chart.
#[test]
#[ignore = "needs root: loop devices"]
fn on_a_loop_device_no_boundary_and_no_collapse() {
    let dev = LoopDevice::new(64 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("align");
    let text = ok(mmcab(&[
        "probe",
        "align",
        dev.dev.to_str().unwrap(),
        "--out",
        a.to_str().unwrap(),
        "--published",
        root().join(PUBLISHED).to_str().unwrap(),
    ]));
    assert_mail_text(&text);
    assert!(text.contains("Erase block: none"), "{text}");
    assert!(
        text.contains("Published, for comparison") && text.contains("Erase block: 2MiB"),
        "the published run sits next to this one: {text}"
    );
    let json = probe_json(&a);
    assert_eq!(json["kind"], "align");
    assert_eq!(
        json["align"].as_array().unwrap().len(),
        10,
        "16M down to 32k"
    );
    charts::check_png(&a.join("align-diff.png"));
    assert!(std::fs::read_to_string(a.join("align.csv"))
        .unwrap()
        .starts_with("align_bytes,pre_us,on_us,post_us,diff_us"));
    // `mmcab report DIR` renders it again, the same.
    assert_eq!(ok(mmcab(&["report", a.to_str().unwrap()])), text);

    let o = tmp.path().join("open-au");
    let text = ok(mmcab(&[
        "probe",
        "open-au",
        dev.dev.to_str().unwrap(),
        "--erase-size",
        "1M",
        "--blocksize",
        "128k",
        "--find",
        "--max-nr",
        "3",
        "--allow-write",
        "--out",
        o.to_str().unwrap(),
    ]));
    assert_mail_text(&text);
    assert!(text.contains("no collapse up to 3 units"), "{text}");
    let json = probe_json(&o);
    let nrs: Vec<u64> = json["open_au"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["nr"].as_u64().unwrap())
        .collect();
    assert_eq!(nrs, [1, 2, 3]);
    charts::check_png(&o.join("open-au.png"));
    // Written only inside the units: 16 MiB + 2 x 12 MiB + 1 MiB = 41 MiB.
    let data = dev.contents();
    assert!(data[..16 << 20].iter().all(|&b| b == 0));
    assert!(data[16 << 20..17 << 20].iter().all(|&b| b == 0x5a));
    assert!(data[17 << 20..28 << 20].iter().all(|&b| b == 0));
    assert!(data[41 << 20..].iter().all(|&b| b == 0));

    // --json: the record as probe.json holds it, and the estimate.
    let j = tmp.path().join("align-json");
    let stdout = ok(mmcab(&[
        "probe",
        "align",
        dev.dev.to_str().unwrap(),
        "--count",
        "2",
        "--quiet",
        "--json",
        "--out",
        j.to_str().unwrap(),
    ]));
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], 1, "{v}");
    assert_eq!(v["dir"], j.to_str().unwrap());
    assert_eq!(v["record"], probe_json(&j));
    // The estimate is there in full. Whether a loop device shows no boundary is the
    // first probe's claim above (default tries); two tries at each alignment, beside the
    // other tier-2 tests on 2 cores, once made a 4 MiB step of 1 us out of noise.
    let erase_block = &v["estimate"]["erase_block"];
    assert!(
        ["none", "low", "medium", "high"]
            .contains(&erase_block["confidence"].as_str().unwrap_or("")),
        "{v}"
    );
    assert!(
        erase_block["score"].is_number() && v["estimate"]["read_ns"].is_number(),
        "{v}"
    );
    let j = tmp.path().join("open-au-json");
    let stdout = ok(mmcab(&[
        "probe",
        "open-au",
        dev.dev.to_str().unwrap(),
        "--erase-size",
        "1M",
        "--blocksize",
        "256k",
        "--nr",
        "2",
        "--allow-write",
        "--json",
        "--out",
        j.to_str().unwrap(),
    ]));
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], 1, "{v}");
    assert_eq!(v["record"], probe_json(&j));
    assert_eq!(v["estimate"][0]["random"], false, "{v}");
}
