//! A board that boots from its eMMC, on the emulated eMMC (Linux 7.x, whose debugfs
//! takes the bus-width and CMD23 bits): a 64 MiB card with an MBR, ext4 on the first
//! partition mounted in the guest as a stand-in for the root filesystem, the second
//! spare. `mmcab info` without a device lists the card and what is mounted from it;
//! before any I/O the whole card is refused naming the spare partition, the knobs that
//! re-initialise the card or rebind its block driver are refused on the spare partition,
//! and so is a results directory on the card; a plan without knobs runs on the spare
//! partition with its kernel evidence. The same on loop devices: tests/host/boot_card.rs.

use crate::common::loop_device::LoopDevice;
use crate::common::testbed;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// The card's image: p1 1-17 MiB (ext4), p2 17-64 MiB (nothing).
fn card_image(dir: &std::path::Path) -> std::path::PathBuf {
    let card = LoopDevice::partitioned(64 * MIB, &[(2048, 32768), (34816, 96256)]);
    let p1 = format!("{}p1", card.dev.display());
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F", &p1])
        .status()
        .expect("run mkfs.ext4");
    assert!(ok.success(), "mkfs.ext4 {p1}");
    let image = dir.join("card.img");
    std::fs::write(&image, card.contents()).unwrap();
    image
}

/// One line of the guest's stderr that starts with `prefix`.
fn line<'a>(stderr: &'a str, prefix: &str) -> &'a str {
    stderr
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line '{prefix}...' in:\n{stderr}"))
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_card_the_board_runs_from_is_measured_on_its_spare_partition_only() {
    testbed::require_setup();
    let dir = tempfile::tempdir().unwrap();
    let image = card_image(dir.path());
    let run = testbed::Guest::new("boot_card")
        .kernel("7")
        .bus_width(8)
        .image(&image)
        .modules(&["ext4"])
        .run(
            "set -u; mkdir -p /mnt/root && mount /dev/mmcblk0p1 /mnt/root || exit 99; \
             mmcab info --json > /out/list.json || exit 98; \
             s() { echo \"== $1 status $2\" >&2; }; \
             mmcab run /workloads/dd-bus-width.toml --device /dev/mmcblk0 --allow-write \
               --scale-down 16 --out /out/whole; s whole $?; \
             mmcab run /workloads/bus-width-ab.toml --device /dev/mmcblk0p2 --allow-write \
               --out /out/bw; s bus-width $?; \
             mmcab run /workloads/cmd23-ab.toml --device /dev/mmcblk0p2 --allow-write \
               --out /out/cmd23; s cmd23 $?; \
             mmcab run /workloads/dd-bus-width.toml --device /dev/mmcblk0p2 --allow-write \
               --scale-down 16 --out /mnt/root/r; s results $?; \
             ls /mnt/root/r >/dev/null 2>&1 && s results-created 1; \
             mmcab run /workloads/dd-bus-width.toml --device /dev/mmcblk0p2 --allow-write \
               --scale-down 16 --repeat 2 --out /out/spare; s spare $?",
        );
    run.assert_success();
    let err = &run.stderr;
    for (what, status) in [
        ("whole", 1),
        ("bus-width", 1),
        ("cmd23", 1),
        ("results", 1),
        ("spare", 0),
    ] {
        assert!(
            err.contains(&format!("== {what} status {status}\n")),
            "{what}: {}",
            run.report()
        );
    }
    assert!(!err.contains("results-created"), "{}", run.report());

    let list = run.out_json("list.json");
    let card = &list["devices"][0];
    assert_eq!(card["node"], "/dev/mmcblk0", "{list}");
    assert_eq!(
        (&card["type"], &card["area"]),
        (&"MMC".into(), &"main".into())
    );
    let parts = card["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{list}");
    assert_eq!(
        parts[0]["in_use"], "/dev/mmcblk0p1 is mounted at /mnt/root",
        "{list}"
    );
    assert!(parts[1]["in_use"].is_null(), "{list}");
    assert_eq!(parts[1]["start_bytes"], 17 * MIB, "{list}");

    let whole = line(
        err,
        "mmcab: error: refusing to write to /dev/mmcblk0: it is in use",
    );
    assert!(
        whole.contains("(/dev/mmcblk0p1 is mounted at /mnt/root)")
            && whole.contains("--device /dev/mmcblk0p2 (a partition nothing uses)"),
        "{whole}"
    );
    let bw = line(
        err,
        "mmcab: error: refusing knob bus-width on /dev/mmcblk0p2:",
    );
    assert!(
        bw.contains("re-initialises the card") && bw.contains("--force"),
        "{bw}"
    );
    let cmd23 = line(err, "mmcab: error: refusing knob cmd23 on /dev/mmcblk0p2:");
    assert!(cmd23.contains("rebinds the card's block driver"), "{cmd23}");
    line(
        err,
        "mmcab: error: refusing to keep the results in /mnt/root/r: it is on /dev/mmcblk0p1",
    );
    for refused in ["whole", "bw", "cmd23"] {
        assert!(
            !run.out_dir.join(refused).join("runs.csv").exists(),
            "{refused}: no run before the refusal"
        );
    }
    // The spare partition: every run, with the mmc trace of the card.
    let evidence = run.out_text("spare/evidence.csv");
    let header: Vec<&str> = evidence.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = evidence
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // A row per run and direction, and one of the requests without data (CMD13) when
    // the trace saw any.
    let data_rows = rows
        .iter()
        .filter(|r| r[col("direction")] != "none")
        .count();
    assert_eq!(data_rows, 2 * 2 * 2, "runs x directions: {evidence}");
    let writes: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|r| r[col("workload")] == "dd-write" && r[col("direction")] == "write")
        .collect();
    assert_eq!(writes.len(), 2, "{evidence}");
    for r in writes {
        assert_eq!(r[col("trace")], "ok", "{evidence}");
        assert!(r[col("stat_ios")].parse::<u64>().unwrap() > 0, "{evidence}");
        assert!(r[col("requests")].parse::<u64>().unwrap() > 0, "{evidence}");
    }
}
