//! Tests of [`super::DeviceInfo`]: built from the capture trees, and read back from the
//! JSON that mmcab 0.1.0 printed (tests/fixtures/qemu-emmc/info-v0.1-*, see its README).

use super::*;
use crate::device::capture::{fixture, Capture};

/// The JSON exactly as `mmcab info --json` prints it (println!: a final newline).
fn printed(info: &DeviceInfo) -> String {
    serde_json::to_string_pretty(info).unwrap() + "\n"
}

fn guest_info(which: &str) -> (DeviceInfo, String) {
    let text = fixture(&format!("info-v0.1-{which}.json"));
    let info: DeviceInfo = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("info-v0.1-{which}.json does not read back: {e}"));
    (info, text)
}

/// What 0.1.0's `info_json` built from a capture tree (tree path as `@ROOT@`), and the
/// same from today's [`DeviceInfo::read_with_kernel`] with the kernel release 0.1.0 saw.
#[test]
fn json_from_capture_trees_is_byte_identical_to_v0_1() {
    for which in ["linux7-bus8", "linux6-bus4"] {
        let want = fixture(&format!("info-v0.1-capture-{which}.json"));
        let release = serde_json::from_str::<serde_json::Value>(&want).unwrap()["kernel_release"]
            .as_str()
            .unwrap()
            .to_string();
        let dir = tempfile::tempdir().unwrap();
        let paths = Capture::load(&format!("cap-{which}.txt")).paths_in_tree(dir.path());
        let info = DeviceInfo::read_with_kernel(&paths, release).unwrap();
        let got = printed(&info).replace(dir.path().to_str().unwrap(), "@ROOT@");
        assert!(
            got == want,
            "{which}: info --json differs from 0.1.0's\n--- 0.1.0\n{want}\n--- now\n{got}"
        );
    }
}

/// The guest's `info --json` of 0.1.0 (EXT_CSD via the ioctl, the real kernel's files)
/// reads into the typed struct and prints back byte for byte; its summary is recomputed
/// the same.
#[test]
fn json_printed_in_the_guest_by_v0_1_reads_back_byte_identical() {
    for which in ["linux7-bus8", "linux6-bus4"] {
        let (info, text) = guest_info(which);
        assert!(printed(&info) == text, "{which}: typed round trip differs");
        assert_eq!(info.summary_line(), info.summary, "{which}");
        // Field order is key order: the typed struct prints like the sorted JSON value.
        let value = serde_json::to_value(&info).unwrap();
        assert_eq!(serde_json::to_string_pretty(&value).unwrap() + "\n", text);
    }
    let (info, _) = guest_info("linux7-bus8");
    assert_eq!(info.ext_csd.as_ref().unwrap().source, ExtCsdVia::Ioctl);
    assert_eq!(info.ios.as_ref().unwrap().bus_width, 8);
    assert_eq!(guest_info("linux6-bus4").0.ios.unwrap().bus_width, 4);
}

/// A renamed or missing key is an error naming it, not a default.
#[test]
fn a_missing_key_is_refused_by_name() {
    let (_, text) = guest_info("linux7-bus8");
    let renamed = text.replacen("\"serial\": 3735928559", "\"serial_number\": 3735928559", 1);
    assert_ne!(renamed, text);
    let err = serde_json::from_str::<DeviceInfo>(&renamed)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `serial`"), "{err}");
}

#[test]
fn summary_reads_like_the_design_example() {
    let (mut info, _) = guest_info("linux7-bus8");
    assert_eq!(
        info.summary_line(),
        "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed"
    );
    info.card_type = "SD".into();
    info.capacity_bytes = Some(1_920_991_232);
    info.identity = None;
    info.ios = None;
    assert_eq!(info.summary_line(), "unknown card 1.8 GiB SD, bus unknown");
}

/// The whole struct from the tree of the 7.2 capture: each part agrees with the
/// capture's own sysfs and debugfs files.
#[test]
fn info_from_capture_tree_agrees_with_its_sysfs_and_debugfs() {
    let cap = Capture::load("cap-linux7-bus8.txt");
    let dir = tempfile::tempdir().unwrap();
    let info = DeviceInfo::read(&cap.paths_in_tree(dir.path())).unwrap();
    assert_eq!(info.schema, 1);
    assert_eq!(
        (info.host.as_str(), info.card.as_str()),
        ("mmc0", "mmc0:0001")
    );
    assert_eq!(info.card_type, "MMC");
    assert_eq!(info.capacity_bytes, Some(268_435_456));
    let id = info.identity.as_ref().unwrap();
    assert_eq!((id.manfid, id.oemid), (0xaa, 0x158));
    assert_eq!((id.name.as_str(), id.date.as_str()), ("QEMU!!", "02/2006"));
    assert_eq!(id.serial, 0xdead_beef);
    let ios = info.ios.as_ref().unwrap();
    assert_eq!((ios.bus_width, ios.clock_hz), (8, 52_000_000));
    assert_eq!(ios.timing, "mmc high-speed");
    let x = info.ext_csd.as_ref().unwrap();
    assert_eq!(x.source, ExtCsdVia::Debugfs);
    assert!(x
        .source_note
        .as_deref()
        .unwrap()
        .contains("not an MMC block device"));
    assert_eq!(x.raw, cap.get("ext_csd").unwrap().trim());
    assert_eq!(x.fields_raw["SEC_COUNT"], 524_288);
    assert_eq!(
        x.fields["SEC_COUNT"],
        DecodedValue::Bytes { bytes: 268_435_456 }
    );
    assert_eq!(x.field_layout["SEC_COUNT"].offset, 212);
    assert!(!info.capabilities.packed.supported);
    assert_eq!(info.host_caps.caps.as_deref(), Some("0x4000014f"));
    for (name, body) in cap.device_attrs() {
        assert_eq!(info.sysfs[name], body.trim(), "sysfs {name}");
    }
    assert_eq!(
        info.summary,
        "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed"
    );
    assert!(info.ext_csd_error.is_none() && info.ios_error.is_none());
    let text = crate::device::render::human(&info);
    assert!(text.contains("read via debugfs"), "{text}");
    assert!(text.contains("[212] SEC_COUNT"), "{text}");
}

/// The capture's tree with its host device bound to a driver loaded as a module with
/// two parameters (a fixture tree: the links laid out as the kernel lays them out).
#[test]
fn host_driver_from_capture_tree_goes_into_json_and_text() {
    use std::os::unix::fs::symlink;
    let cap = Capture::load("cap-linux7-bus8.txt");
    let dir = tempfile::tempdir().unwrap();
    let paths = cap.paths_in_tree(dir.path());
    let without = DeviceInfo::read(&paths).unwrap();
    assert_eq!(without.host_driver, None);
    assert!(!printed(&without).contains("host_driver"));
    let host = paths.card_sysfs.parent().unwrap();
    let device = host.parent().unwrap().parent().unwrap();
    let sys = dir.path().join("sys");
    symlink("../..", host.join("device")).unwrap();
    let drv = sys.join("bus/platform/drivers/simhost");
    std::fs::create_dir_all(&drv).unwrap();
    symlink(&drv, device.join("driver")).unwrap();
    let module = sys.join("module/simhost");
    std::fs::create_dir_all(module.join("parameters")).unwrap();
    std::fs::write(module.join("initstate"), "live\n").unwrap();
    std::fs::write(module.join("version"), "1.0\n").unwrap();
    std::fs::write(module.join("parameters/cmd_ns"), "500\n").unwrap();
    std::fs::write(module.join("parameters/seed"), "7\n").unwrap();
    symlink(&module, drv.join("module")).unwrap();

    let info = DeviceInfo::read(&paths).unwrap();
    let hd = info.host_driver.as_ref().expect("host driver read");
    assert_eq!(hd.device, "1e750100.sdhci");
    assert_eq!(
        (hd.driver.as_str(), hd.module.as_deref()),
        ("simhost", Some("simhost"))
    );
    assert_eq!(hd.parameters.len(), 2);
    let json: serde_json::Value = serde_json::from_str(&printed(&info)).unwrap();
    assert_eq!(json["host_driver"]["parameters"]["cmd_ns"], "500");
    assert_eq!(json["host_driver"]["version"], "1.0");
    assert_eq!(json["host_driver"]["builtin"], false);
    let back: DeviceInfo = serde_json::from_value(json).unwrap();
    assert_eq!(back, info);
    let text = crate::device::render::human(&info);
    assert!(
        text.contains("\n  host driver simhost (module simhost 1.0, 2 parameters)\n"),
        "{text}"
    );
}
