//! `mmcab probe align` and `mmcab probe open-au` end to end: the published BeagleBone
//! output reported as the post concludes (plain), the refusals (no --allow-write: plain;
//! a mounted device: root), a loop device (root: no boundary, no collapse) and the
//! emulated eMMC (root and the QEMU testbed: no boundary claimed, the card's erase sizes
//! stated).
//!
//! `UPDATE_GOLDEN=1 cargo test --test probe` rewrites the committed report of the
//! published output (results/reference/beaglebone-2013-flashbench/).

#[path = "common/charts.rs"]
mod charts;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/loop_device.rs"]
mod loop_device;
#[path = "common/testbed.rs"]
mod testbed;

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
    for kind in ["align", "open-au"] {
        let report = std::fs::read_to_string(out.join(kind).join("report.txt")).unwrap();
        let golden = committed.join(kind).join("report.txt");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            for entry in std::fs::read_dir(out.join(kind)).unwrap() {
                let p = entry.unwrap().path();
                std::fs::copy(&p, golden.with_file_name(p.file_name().unwrap())).unwrap();
            }
        } else {
            assert_eq!(
                std::fs::read_to_string(&golden).unwrap(),
                report,
                "{} (UPDATE_GOLDEN=1 to accept)",
                golden.display()
            );
        }
    }
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
    assert_eq!(v["estimate"]["erase_block"]["confidence"], "none", "{v}");
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

/// The emulated eMMC has no flash timing: probe align claims no boundary, and says so
/// against the erase sizes the card and the kernel report (HC erase group 512 KiB,
/// preferred_erase_size 1 MiB for 256 MiB).
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn on_the_emulated_emmc_align_claims_no_boundary() {
    let run = testbed::Guest::new("probe_align_emmc")
        .kernel("7")
        .bus_width(8)
        .run("mmcab probe align /dev/mmcblk0 --count 2 --out /out/align > /out/report.txt");
    run.assert_success();
    let text = run.out_text("report.txt");
    assert_mail_text(&text);
    assert!(text.contains("Erase block: none"), "{text}");
    assert!(
        text.contains("EXT_CSD HC_ERASE_GRP_SIZE: 512KiB")
            && text.contains("sysfs preferred_erase_size: 1MiB"),
        "{text}"
    );
    assert!(
        text.contains("The timing shows no boundary, so it neither confirms nor contradicts"),
        "{text}"
    );
}
