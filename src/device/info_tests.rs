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

/// `info --json` without the `speed_modes` it has shown since 0.1.0 (a deliberate
/// addition, tests/fixtures/results-v0.1-emmc.README.md), which is checked to be there:
/// the rest is compared with 0.1.0's output. Keys are sorted in both, so the JSON value
/// prints as the struct does.
fn without_speed_modes(text: &str) -> String {
    let mut info: serde_json::Value = serde_json::from_str(text).unwrap();
    let speed = info.as_object_mut().unwrap().remove("speed_modes");
    let speed = speed.expect("info --json of an eMMC has speed_modes");
    assert!(speed["host"]["caps"].is_array(), "{speed}");
    serde_json::to_string_pretty(&info).unwrap() + "\n"
}

/// What 0.1.0's `info_json` built from a capture tree (tree path as `@ROOT@`), and the
/// same from today's [`DeviceInfo::read_with_kernel`] with the kernel release 0.1.0 saw
/// (but for the speed modes added since).
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
        let got =
            without_speed_modes(&printed(&info)).replace(dir.path().to_str().unwrap(), "@ROOT@");
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

/// The speed modes of the 6.12 capture, in JSON and text: the card's CARD_TYPE and
/// HS_TIMING, the eMMC 5.x fields it does not define, the host's one speed bit, and
/// what `ios` says the bus runs at.
#[test]
fn speed_modes_from_capture_tree_in_json_and_text() {
    let cap = Capture::load("cap-linux6-bus4.txt");
    let dir = tempfile::tempdir().unwrap();
    let info = DeviceInfo::read(&cap.paths_in_tree(dir.path())).unwrap();
    let json: serde_json::Value = serde_json::from_str(&printed(&info)).unwrap();
    let speed = &json["speed_modes"];
    assert_eq!(
        speed["card"]["card_type"],
        serde_json::json!(["HS_26", "HS_52"])
    );
    assert_eq!(speed["card"]["card_type_raw"], 3);
    assert!(speed["card"]["driver_strength"].is_null(), "{speed}");
    assert!(speed["card"]["strobe_support"].is_null(), "{speed}");
    assert_eq!(
        speed["card"]["hs_timing"],
        serde_json::json!({"driver_strength": 0, "raw": 1, "timing": "high speed"})
    );
    assert_eq!(
        speed["host"]["caps"],
        serde_json::json!(["MMC_CAP_MMC_HIGHSPEED"])
    );
    assert_eq!(speed["host"]["caps2"], serde_json::json!([]));
    let back: DeviceInfo = serde_json::from_value(json).unwrap();
    assert_eq!(back, info);
    let text = crate::device::render::human(&info);
    let want = "\nSpeed modes\n\
        \x20 card offers     HS_26 HS_52 (CARD_TYPE 0x03)\n\
        \x20 driver strength not defined at this EXT_CSD_REV (DRIVER_STRENGTH 0x00)\n\
        \x20 enhanced strobe not defined at this EXT_CSD_REV (STROBE_SUPPORT 0x00)\n\
        \x20 card timing     high speed, driver strength type 0 (HS_TIMING 0x01)\n\
        \x20 host caps       MMC_CAP_MMC_HIGHSPEED\n\
        \x20 host caps2      no speed bits\n\
        \x20 now             mmc high-speed, 52 MHz, 4 bits (debugfs ios)\n\
        \nEXT_CSD (rev 3";
    assert!(text.contains(want), "{text}");
}

/// The simulated card booted `hs200=1` (its 6.12 capture): the "Speed modes" part as
/// docs/board.md shows it.
#[test]
fn speed_modes_text_of_the_simulated_card_is_the_one_docs_show() {
    let cap = Capture::load("cap-sim-hs200-linux6.txt");
    let dir = tempfile::tempdir().unwrap();
    let info = DeviceInfo::read(&cap.paths_in_tree(dir.path())).unwrap();
    let text = crate::device::render::human(&info);
    let start = text.find("Speed modes\n").expect("a Speed modes part");
    let end = start + text[start..].find("\n\n").unwrap() + 1;
    let part = &text[start..end];
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/board.md"),
    )
    .unwrap();
    let shown: String = part.lines().map(|l| format!("  {l}\n")).collect();
    assert!(docs.contains(&shown), "docs/board.md lacks\n{shown}");
    assert!(part.contains("HS200_1.8V (CARD_TYPE 0x13)"), "{part}");
}
