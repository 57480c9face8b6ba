//! The simulated card's SD personality (`--card sim,sd=1`; testbed/emmcsim/README.md,
//! "SD card") and the SanDisk Ultra A1 preset made with it (testbed/presets/
//! sandisk-ultra-a1):
//!
//! - Linux 7.x and 6.12, one boot each: the core attaches the card through its SD path
//!   (an SDHC card, SD high speed at 50 MHz on 4 lines; on 6.12 with `sd_uhs=1
//!   host_uhs=8` UHS-I SDR104 at 208 MHz after CMD11 and a tuning of CMD19s), reads,
//!   writes and discards reach the card, and `mmcab info` and `mmcab knobs` show an SD
//!   card (type SD, no EXT_CSD, the host driver emmcsim) and exit 0.
//! - The preset on Linux 7.x: the PinePhone post's uSD lines (4, 16, 64 and 256 KiB
//!   random reads at QD1, tests/fixtures/sdcard/pinephone-usd-qd1.toml) run by `mmcab
//!   run`; the preset was fitted on 4 and 256 KiB, so those come out within 5% of the
//!   post's mean of the four phones (results/reference/pinephone-2021-randread.csv), and
//!   16 and 64 KiB, which it predicts, within 10%.
//!
//! mmcab is told nothing of the card: it measures; this test holds the post's numbers.

use crate::common::testbed;
use crate::emmcsim_model::per_op;

use std::time::Duration;

/// The block sizes of the post's uSD lines, KiB.
const SIZES_KIB: [u32; 4] = [4, 16, 64, 256];

/// The published QD1 random-read IOPS of the SanDisk Ultra A1 uSD card of PinePhones 1
/// to 4 at `kib` KiB (results/reference/pinephone-2021-randread.csv, configs "PPn uSD").
fn seed_iops(kib: u32) -> Vec<f64> {
    let path = testbed::repo_root().join("results/reference/pinephone-2021-randread.csv");
    let mut rdr = csv::Reader::from_path(&path).unwrap();
    let head = rdr.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (c_config, c_workload, c_metric, c_value) =
        (col("config"), col("workload"), col("metric"), col("value"));
    let values: Vec<f64> = rdr
        .records()
        .map(|r| r.unwrap())
        .filter(|r| {
            r[c_config].ends_with(" uSD")
                && r[c_workload] == format!("{kib}k QD1")
                && &r[c_metric] == "iops"
        })
        .map(|r| r[c_value].parse().unwrap())
        .collect();
    assert_eq!(
        values.len(),
        4,
        "four phones' uSD at {kib} KiB in {}",
        path.display()
    );
    values
}

/// The block sizes the preset was fitted on (the others it predicts).
const FITTED_KIB: [u32; 2] = [4, 256];

/// The preset's module parameters (`--card sim,...`) and its `icount`, read from its
/// file in the format of testbed/presets/ (PARAM=VALUE lines, `#` comments).
fn preset(name: &str) -> (String, u8) {
    let path = testbed::repo_root().join("testbed/presets").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut card = String::from("sim");
    let mut icount = None;
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{}: not PARAM=VALUE: {line:?}", path.display()));
        if key == "icount" {
            icount = Some(value.parse().expect("icount: a shift"));
        } else {
            card += &format!(",{key}={value}");
        }
    }
    (card, icount.expect("the preset names its icount"))
}

/// One boot of the SD card: dmesg, sysfs, ios and the card's counters, a read, a write
/// and a discard, `mmcab info` and `mmcab knobs`, in /out.
fn boot_sd(label: &str, kernel: &str, card: &str) -> testbed::GuestRun {
    let script = "set -e; D=/sys/block/mmcblk0/device; \
         dmesg | grep -e mmc0 -e emmcsim > /out/dmesg.txt; \
         for f in type name scr ssr ocr; do echo \"$f $(cat $D/$f)\"; done > /out/sysfs.txt; \
         cat /sys/kernel/debug/mmc0/ios > /out/ios.txt; \
         dd if=/dev/mmcblk0 of=/dev/null bs=256k count=8 iflag=direct 2>/dev/null; \
         dd if=/dev/zero of=/dev/mmcblk0 bs=64k count=4 seek=64 oflag=direct 2>/dev/null; \
         blkdiscard -o 8388608 -l 4194304 /dev/mmcblk0; \
         cat /sys/kernel/debug/emmcsim/stats > /out/stats.txt; \
         mmcab info /dev/mmcblk0 > /out/info.txt; \
         mmcab knobs /dev/mmcblk0 > /out/knobs.txt";
    let run = testbed::Guest::new(label)
        .kernel(kernel)
        .card(card)
        .timeout(Duration::from_secs(600))
        .run(script);
    run.assert_success();
    run
}

fn stat(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in the card's stats:\n{stats}"))
        .trim()
        .parse()
        .unwrap()
}

/// What both kernels must show of an SD card that came up: the SD attributes, a read, a
/// write and a discard at the card, and mmcab's view of it.
fn check_sd_card(run: &testbed::GuestRun, timing: &str, clock_hz: u64) {
    let sysfs = run.out_text("sysfs.txt");
    assert!(sysfs.contains("type SD\n"), "{sysfs}");
    assert!(sysfs.contains("name SIMSD\n"), "{sysfs}");
    assert!(sysfs.contains("scr 0235844300000000\n"), "{sysfs}");
    let ios = run.out_text("ios.txt");
    assert_eq!(testbed::ios_label(&ios, "timing spec"), timing, "{ios}");
    assert!(ios.contains("bus width:\t2 (4 bits)"), "{ios}");
    assert!(ios.contains(&format!("clock:\t\t{clock_hz} Hz")), "{ios}");
    let stats = run.out_text("stats.txt");
    assert!(stat(&stats, "read_blocks") >= 8 * 512, "{stats}");
    assert_eq!(stat(&stats, "write_blocks"), 4 * 128, "{stats}");
    assert!(stat(&stats, "erases") >= 1, "{stats}");
    let info = run.out_text("info.txt");
    assert!(info.contains(" SD, 4-bit "), "{info}");
    assert!(info.contains("SD cards have no EXT_CSD"), "{info}");
    assert!(
        info.contains("host driver emmcsim (module emmcsim "),
        "the report must say the card is simulated:\n{info}"
    );
    let knobs = run.out_text("knobs.txt");
    assert!(knobs.contains("\nbus-width "), "{knobs}");
    assert!(
        knobs.contains("a card of type SD has no eMMC speed modes"),
        "{knobs}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_attaches_the_sd_card_in_high_speed_and_mmcab_shows_an_sd_card() {
    let run = boot_sd("emmcsim_sd_7", "7", "sim,sd=1");
    let dmesg = run.out_text("dmesg.txt");
    assert!(
        dmesg.contains("mmc0: new high speed SDHC card at address aaaa"),
        "{dmesg}"
    );
    check_sd_card(&run, "sd high-speed", 50_000_000);
    let stats = run.out_text("stats.txt");
    assert_eq!(stat(&stats, "tunings"), 0, "{stats}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_switches_the_sd_card_to_sdr104_with_a_tuning() {
    let run = boot_sd("emmcsim_sd_6_12", "6.12", "sim,sd=1,sd_uhs=1,host_uhs=8");
    let dmesg = run.out_text("dmesg.txt");
    // mmc_add_card() (drivers/mmc/core/bus.c) says "ultra high speed" on 6.12 and
    // "UHS-I speed" on 7.x.
    assert!(
        dmesg.contains("mmc0: new ultra high speed SDR104 SDHC card at address aaaa"),
        "{dmesg}"
    );
    check_sd_card(&run, "sd uhs SDR104", 208_000_000);
    let ios = run.out_text("ios.txt");
    assert!(ios.contains("signal voltage:\t1 (1.80 V)"), "{ios}");
    let stats = run.out_text("stats.txt");
    assert_eq!(stat(&stats, "tunings"), 1, "{stats}");
    assert_eq!(stat(&stats, "tuning_cmds"), 40, "{stats}");
    assert_eq!(stat(&stats, "tuning_failures"), 0, "{stats}");
    // The SD status after ACMD6: 4 lines (DAT_BUS_WIDTH 2), speed class 10, AU 4 MiB,
    // U1 and a UHS AU of 4 MiB, A1, DISCARD_SUPPORT.
    let sysfs = run.out_text("sysfs.txt");
    let ssr = sysfs
        .lines()
        .find_map(|l| l.strip_prefix("ssr "))
        .expect("ssr");
    assert!(
        ssr.starts_with("00000000000000000400900000001900000000000001000002"),
        "{sysfs}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn sandisk_ultra_a1_preset_predicts_the_pinephone_post_from_two_block_sizes() {
    let (card, icount) = preset("sandisk-ultra-a1");
    let plan_path = testbed::repo_root().join("tests/fixtures/sdcard/pinephone-usd-qd1.toml");
    let plan = std::fs::read_to_string(&plan_path).unwrap();
    let script = format!(
        "set -e\ncat > /tmp/seed.toml <<'MMCAB_EOF'\n{plan}\nMMCAB_EOF\n\
         mmcab run /tmp/seed.toml --device /dev/mmcblk0 --no-evidence --quiet --out /out/seed >/dev/null\n\
         cat /sys/kernel/debug/mmc0/ios > /out/ios.txt\n\
         cat /sys/kernel/debug/emmcsim/stats > /out/stats.txt\n"
    );
    let run = testbed::Guest::new("emmcsim_sd_preset")
        .kernel("7")
        .card(&card)
        .icount(icount)
        .timeout(Duration::from_secs(1800))
        .run(&script);
    run.assert_success();
    let ios = run.out_text("ios.txt");
    assert_eq!(
        testbed::ios_label(&ios, "timing spec"),
        "sd high-speed",
        "{ios}"
    );
    let measured = per_op(&run.out_dir.join("seed"));
    let mut table = String::from("size    post IOPS (mean)  measured IOPS  measured/post\n");
    let mut bad = Vec::new();
    for kib in SIZES_KIB {
        let phones = seed_iops(kib);
        let seed = phones.iter().sum::<f64>() / phones.len() as f64;
        let key = (format!("rand-{kib}k-qd1"), "as-is".to_string());
        let iops = 1.0 / measured[&key];
        let ratio = iops / seed;
        let fitted = FITTED_KIB.contains(&kib);
        let limit = if fitted { 0.05 } else { 0.10 };
        table += &format!(
            "{kib:>4} KiB {seed:>12.1} {iops:>16.1} {ratio:>13.3}{}\n",
            if fitted { "  (fitted)" } else { "" }
        );
        if (ratio - 1.0).abs() > limit {
            bad.push(format!("{kib} KiB: {ratio:.3} (limit {limit})"));
        }
    }
    eprintln!("{table}");
    assert!(
        bad.is_empty(),
        "measured/post outside the limits for {bad:?}:\n{table}\nstats:\n{}",
        run.out_text("stats.txt")
    );
}
