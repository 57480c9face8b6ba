//! The static aarch64 build on a real arm64 Linux MMC stack: testbed/run --arch arm64
//! (QEMU virt, an SD card on sdhci-pci, Debian's arm64 6.12 kernel). One boot runs
//! `mmcab info` (text and JSON), a one-pass `mmcab run`, a knob A/B that an SD card
//! allows (the block queue's max_sectors_kb, a custom attribute knob), and `mmcab report`
//! on the result, all with the aarch64 binary. What is and is not covered on arm64:
//! testbed/README.md, "The arm64 guest".
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/host/arm64.rs.

use crate::common::testbed;

use std::time::Duration;

/// The A/B plan: the block queue's max_sectors_kb, 128 vs 16 KiB (a fixture shared with
/// tests/host/lava.rs).
fn ab_plan() -> String {
    std::fs::read_to_string(testbed::repo_root().join("tests/fixtures/plans/max-sectors-ab.toml"))
        .unwrap()
}

const ONE_PASS_PLAN: &str = r#"
name = "arm64-sd-one-pass"
[[workload]]
name = "randread-4k"
[[workload.job]]
name = "r"
rw = "randread"
bs = "4k"
size = "1M"
io_size = "256k"
"#;

fn heredoc(path: &str, text: &str) -> String {
    assert!(!text.contains("\nMMCAB_EOF"));
    format!("cat > {path} <<'MMCAB_EOF'\n{text}\nMMCAB_EOF\n")
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn info_run_knob_ab_and_report_on_arm64_sd() {
    let script = format!(
        "{ab}{one}uname -m > /out/uname
cat /sys/block/mmcblk0/queue/max_sectors_kb > /out/max-before
mmcab info /dev/mmcblk0 > /out/info.txt || exit 11
mmcab info --json /dev/mmcblk0 > /out/info.json || exit 12
mmcab knobs --json /dev/mmcblk0 > /out/knobs.json || exit 13
mmcab run one.toml --device /dev/mmcblk0 --allow-write --json > /out/one.json || exit 14
mmcab run ab.toml --device /dev/mmcblk0 --allow-write --out /out/ab 2> /out/ab.err || exit 15
cat /sys/block/mmcblk0/queue/max_sectors_kb > /out/max-after
mmcab report /out/ab > /out/report.txt 2> /out/report.err || exit 16
rm -f /out/ab/report/*.png
",
        ab = heredoc("ab.toml", &ab_plan()),
        one = heredoc("one.toml", ONE_PASS_PLAN),
    );
    let run = testbed::Guest::new("arm64_sd")
        .arch("arm64")
        .image_size("64M")
        .timeout(Duration::from_secs(400))
        .run(&script);
    run.assert_success();
    assert_eq!(run.out_text("uname").trim(), "aarch64");

    // info: an SD card on a 4-bit bus, no EXT_CSD, and it says why.
    let info = run.out_json("info.json");
    assert_eq!(info["schema"], 1);
    assert_eq!(info["type"], "SD", "{info}");
    assert_eq!(info["ios"]["bus_width"], 4, "{info}");
    assert!(info["ext_csd"].is_null(), "{info}");
    let release = info["kernel_release"].as_str().unwrap();
    assert!(release.ends_with("-arm64"), "{release}");
    let text = run.out_text("info.txt");
    assert!(text.contains("SD") && text.contains("4-bit"), "{text}");
    // knobs: the eMMC knobs say why not, without sending eMMC commands to an SD card.
    let knobs = run.out_json("knobs.json");
    assert_eq!(knobs["schema"], 1, "{knobs}");
    let cache = knobs["knobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "cache")
        .unwrap();
    assert_eq!(cache["available"], false);
    let why = cache["reason"].as_str().unwrap();
    assert!(why.contains("SD cards have no EXT_CSD"), "{why}");

    // One-pass run: numbers came back.
    let one = run.out_json("one.json");
    let group = &one["workloads"][0]["group"][0];
    assert_eq!(group["direction"], "read", "{one}");
    assert!(group["iops"].as_f64().unwrap() > 0.0, "{one}");

    // The A/B: both configs measured twice per workload, knob put back.
    let runs = run.out_text("ab/runs.csv");
    for config in ["max128k", "max16k"] {
        let n = runs
            .lines()
            .filter(|l| l.contains(&format!(",{config},")))
            .count();
        assert!(n >= 4, "{config}: {n} rows\n{runs}");
    }
    assert_eq!(run.out_text("max-after"), run.out_text("max-before"));
    let report = run.out_text("report.txt");
    assert!(
        report.contains("max16k vs A:") && report.contains("seq-write"),
        "{report}"
    );
    assert!(run.out_dir.join("ab/report/summary.csv").is_file());
}
