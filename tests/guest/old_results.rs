//! Results directories written by mmcab 0.1.0 stay readable: `mmcab report` and
//! `mmcab compare` on them print and write what 0.1.0 did, but for the deliberate
//! changes listed in tests/fixtures/results-v0.1-emmc.README.md.
//!
//! Fixtures: tests/fixtures/results-v0.1-emmc-boot1 and -boot2, recorded on the emulated
//! eMMC by the 0.1.0 binary, and the outputs 0.1.0 gave for them in
//! tests/fixtures/results-v0.1-emmc.expected/ (how both were made:
//! tests/fixtures/results-v0.1-emmc.README.md). The directories are never regenerated;
//! `UPDATE_GOLDEN=1 cargo test --test plain old_results::` rewrites the expected outputs
//! after an intended change of the report (review the diff and say why in the commit).
//!
//! In the guest, `mmcab info` prints what 0.1.0 printed there
//! (tests/fixtures/qemu-emmc/info-v0.1-*), and a directory recorded now compares with
//! one 0.1.0 recorded.
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/plain/old_results.rs.

use crate::common::cli;
use crate::common::cli::mmcab_paths as mmcab;
use crate::common::old_results::{copy_files, copy_fixture, fixtures, read};
use crate::common::testbed;

use cli::ok;
use std::path::Path;

/// What the guest runs: 0.1.0's fixtures were made the same way (Linux 7.x, bus width
/// 8, fresh image), plus a short recorded run of the same plan: bus-width-ab.toml as
/// 0.1.0 shipped it (tests/fixtures/plans/bus-width-ab-0.1.toml, the plan_sha256 of
/// 0.1.0's meta.json; the shipped plan has since gained min_runtime, and `compare`
/// refuses two plans), written to /tmp/bus-width-ab.toml before this.
const IN_GUEST: &str = "set -e
uname -r > /out/uname
mmcab info --json /dev/mmcblk0 > /out/info.json
mmcab info /dev/mmcblk0 > /out/info.txt
mmcab info --raw /dev/mmcblk0 > /out/info.raw
mmcab run /tmp/bus-width-ab.toml --device /dev/mmcblk0 --allow-write \
    --scale-down 16 --repeat 2 --workload seq-read --out /out/ab --label now --quiet
";

/// The kernel release the info-v0.1-linux7-bus8 fixtures were made on; a newer 7.x in
/// the testbed's cache differs only in this text.
const FIXTURE_RELEASE: &str = "7.2.13+deb14-armmp";

/// The "Speed modes" part of `mmcab info` on the guest's card (QEMU's eMMC 4.3 at HS52,
/// 8 bits, behind sdhci-aspeed).
const SPEED_MODES_TEXT: &str = "\nSpeed modes\n\
    \x20 card offers     HS_26 HS_52 (CARD_TYPE 0x03)\n\
    \x20 driver strength not defined at this EXT_CSD_REV (DRIVER_STRENGTH 0x00)\n\
    \x20 enhanced strobe not defined at this EXT_CSD_REV (STROBE_SUPPORT 0x00)\n\
    \x20 card timing     high speed, driver strength type 0 (HS_TIMING 0x01)\n\
    \x20 host caps       MMC_CAP_MMC_HIGHSPEED\n\
    \x20 host caps2      no speed bits\n\
    \x20 now             mmc high-speed, 52 MHz, 8 bits (debugfs ios)\n";

/// `mmcab info` output (`ext`: json, txt, raw) without what it has shown since 0.1.0
/// (deliberate additions, tests/fixtures/results-v0.1-emmc.README.md): the host driver
/// (the JSON's `host_driver` key, the text's `host driver` line; both name the guest's
/// host driver, sdhci-aspeed), the speed modes (the JSON's `speed_modes`, the text's
/// "Speed modes" part; both checked here) and the kernel features (the JSON's
/// `kernel_features`, the text's closing "Kernel features" block: the guest's kernel
/// has every feature mmcab needs).
fn without_additions(ext: &str, text: &str) -> String {
    match ext {
        "json" => {
            let mut info: serde_json::Value = serde_json::from_str(text).expect("info --json");
            let o = info.as_object_mut().expect("info --json is an object");
            let driver = o
                .remove("host_driver")
                .expect("info --json has host_driver");
            assert_eq!(driver["driver"], "sdhci-aspeed", "{driver}");
            let speed = o
                .remove("speed_modes")
                .expect("info --json has speed_modes");
            assert_eq!(speed["card"]["card_type_raw"], 3, "{speed}");
            assert_eq!(
                speed["host"]["caps"],
                serde_json::json!(["MMC_CAP_MMC_HIGHSPEED"]),
                "{speed}"
            );
            let kernel = o
                .remove("kernel_features")
                .expect("info --json has kernel_features");
            let features = kernel["features"].as_array().expect("features");
            assert!(
                !features.is_empty() && features.iter().all(|f| f["available"] == true),
                "{kernel}"
            );
            serde_json::to_string_pretty(&info).expect("json") + "\n"
        }
        "txt" => {
            assert!(text.contains("\n  host driver sdhci-aspeed ("), "{text}");
            assert!(text.contains(SPEED_MODES_TEXT), "{text}");
            let (text, kernel) = text
                .split_once("\nKernel features (")
                .expect("info ends with the Kernel features block");
            assert!(kernel.contains("\n  all there: "), "{kernel}");
            text.replacen(SPEED_MODES_TEXT, "", 1)
                .lines()
                .filter(|l| !l.starts_with("  host driver "))
                .map(|l| format!("{l}\n"))
                .collect()
        }
        _ => text.to_string(),
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn in_the_guest_info_is_what_v0_1_printed_and_new_results_compare_with_old() {
    let run = testbed::Guest::new("old-results")
        .kernel("7")
        .bus_width(8)
        .run(&format!(
            "cat > /tmp/bus-width-ab.toml <<'MMCAB_EOF'\n{}MMCAB_EOF\n{IN_GUEST}",
            read(&fixtures().join("plans/bus-width-ab-0.1.toml"))
        ));
    run.assert_success();
    let release = run.out_text("uname").trim().to_string();
    for ext in ["json", "txt", "raw"] {
        let want = read(&fixtures().join(format!("qemu-emmc/info-v0.1-linux7-bus8.{ext}")));
        let got = run
            .out_text(&format!("info.{ext}"))
            .replace(&release, FIXTURE_RELEASE);
        let got = without_additions(ext, &got);
        assert!(
            got == want,
            "info ({ext}) differs from what 0.1.0 printed in the guest\n--- 0.1.0\n{want}\n--- now\n{got}"
        );
    }
    // The directory recorded now and the one 0.1.0 recorded: same card, same plan.
    let tmp = tempfile::tempdir().expect("tempdir");
    let old = copy_fixture(tmp.path(), "boot1");
    let now = tmp.path().join("now");
    // Recorded now: the 0.1.0 files plus the kernel evidence.
    assert_eq!(copy_files(&run.out_dir.join("ab"), &now), 7);
    assert!(now.join("evidence.csv").is_file() && now.join("request_sizes.csv").is_file());
    let text = ok(mmcab(&[Path::new("compare"), &old, &now]));
    assert!(
        text.contains("now/bus8 vs boot1/bus8:") && text.contains("now/bus4 vs boot1/bus4:"),
        "{text}"
    );
}
