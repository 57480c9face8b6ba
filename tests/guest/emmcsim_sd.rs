//! The simulated card's SD personality (`--card sim,sd=1`; testbed/emmcsim/README.md,
//! "SD card") and the SanDisk Ultra A1 preset made with it (testbed/presets/
//! sandisk-ultra-a1):
//!
//! - Linux 7.x and 6.12, one boot each: the core attaches the card through its SD path
//!   (an SDHC card, SD high speed at 50 MHz on 4 lines; on 6.12 with `sd_uhs=1
//!   host_uhs=8` UHS-I SDR104 at 208 MHz after CMD11 and a tuning of CMD19s), reads,
//!   writes and discards reach the card, and `mmcab info` and `mmcab knobs` show an SD
//!   card (type SD, no EXT_CSD, the host driver emmcsim) and exit 0.
//! - Linux 7.x, one boot: each UHS-I mode switched on in debugfs caps (DDR50, SDR104,
//!   SDR50, SDR25) is what the core re-inits the card in, at 1.8 V and the mode's clock,
//!   and a 256 KiB read costs the bus time the model's formula gives for it (DDR50 two
//!   bits per clock on a line), within 0.1%.
//! - Linux 7.x with `sd_cmd23=0`: an SCR without CMD23, and the core stops its
//!   transfers with CMD12 instead.
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

/// The UHS-I modes the debugfs caps take (MMC_CAP_UHS_DDR50, _SDR104, _SDR50, _SDR25;
/// bit, ios timing label, clock, bits per clock on a line), one after the other.
const UHS_MODES: [(u32, &str, u64, u64); 4] = [
    (0x0010_0000, "sd uhs DDR50", 50_000_000, 2),
    (0x0008_0000, "sd uhs SDR104", 208_000_000, 1),
    (0x0004_0000, "sd uhs SDR50", 100_000_000, 1),
    (0x0002_0000, "sd uhs SDR25", 50_000_000, 1),
];

/// The model's ns for one 256 KiB read on 4 lines with every timing parameter 0: the
/// data (per 512-byte block its bits over the lines and the bits per clock, plus 18
/// clocks) and the bits of CMD23 and CMD18 and their responses (2 x (48 + 48)).
fn bus_ns_256k(clock_hz: u64, bits_per_clock: u64) -> f64 {
    let clocks = 512 * (4096 / (4 * bits_per_clock) + 18) + 192;
    clocks as f64 * 1e9 / clock_hz as f64
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_takes_each_uhs_mode_from_debugfs_caps_at_the_models_bus_time() {
    // Each mode as mmcab's caps knobs switch one (src/knob/caps.rs): the caps with
    // MMC_CAP_AGGRESSIVE_PM, the card runtime-suspended and resumed (a re-init with a
    // power cycle: 3.3 V, CMD11, 1.8 V), then 40 reads of 256 KiB and the card's model_ns.
    // The caps first: a card suspended without MMC_CAP_AGGRESSIVE_PM keeps its power
    // (mmc_sd_runtime_suspend(), drivers/mmc/core/sd.c), and its resume re-inits nothing.
    let mut script = String::from(
        "set -e; S=/sys/kernel/debug/emmcsim/stats; C=/sys/kernel/debug/mmc0/caps; \
         D=/sys/bus/mmc/devices/mmc0:aaaa; m() { grep '^model_ns ' $S | cut -d' ' -f2; }; \
         rd() { a=$(m); dd if=/dev/mmcblk0 of=/dev/null bs=256k count=40 iflag=direct 2>/dev/null; \
         b=$(m); echo $(( (b - a) / 40 )) > /out/$1.ns; cat /sys/kernel/debug/mmc0/ios > /out/$1.ios; }; \
         rd boot; c=$(cat $C); ",
    );
    for (bit, ..) in UHS_MODES {
        script += &format!(
            "printf 0x%08x $(( c | {bit} | 0x80 )) > $C; \
             echo 0 > $D/power/autosuspend_delay_ms; echo auto > $D/power/control; \
             while [ $(cat $D/power/runtime_status) != suspended ]; do sleep 0.1; done; \
             echo on > $D/power/control; rd {bit}; "
        );
    }
    script += "cat $S > /out/stats.txt";
    let run = testbed::Guest::new("emmcsim_sd_uhs")
        .kernel("7")
        .card("sim,sd=1,sd_uhs=1,jitter_permille=0,cmd_ns=0,read_access_ns=0,read_ns_per_kib=0")
        .timeout(Duration::from_secs(600))
        .run(&script);
    run.assert_success();
    let mut table = String::from("mode            clock       model ns/256 KiB  bus formula\n");
    let mut bad = Vec::new();
    let boot = [("boot".to_string(), "sd high-speed", 50_000_000, 1)];
    let modes = UHS_MODES.map(|(bit, label, clock, bpc)| (bit.to_string(), label, clock, bpc));
    for (file, label, clock, bpc) in boot.into_iter().chain(modes) {
        let ios = run.out_text(&format!("{file}.ios"));
        assert_eq!(testbed::ios_label(&ios, "timing spec"), label, "{ios}");
        assert!(ios.contains(&format!("clock:\t\t{clock} Hz")), "{ios}");
        let volts = if file == "boot" { "3.30 V" } else { "1.80 V" };
        assert!(ios.contains(volts), "{ios}");
        let ns: f64 = run.out_text(&format!("{file}.ns")).trim().parse().unwrap();
        let want = bus_ns_256k(clock, bpc);
        table += &format!("{label:<15} {clock:>10} {ns:>17.0} {want:>12.0}\n");
        if (ns / want - 1.0).abs() > 0.001 {
            bad.push(label);
        }
    }
    eprintln!("{table}");
    assert!(
        bad.is_empty(),
        "model_ns off the bus formula for {bad:?}:\n{table}"
    );
    // DDR50, SDR104 and SDR50 tune (mmc_sd_use_tuning(), drivers/mmc/core/sd.c), SDR25 not.
    let stats = run.out_text("stats.txt");
    assert_eq!(stat(&stats, "tunings"), 3, "{stats}");
    assert_eq!(stat(&stats, "tuning_failures"), 0, "{stats}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_stops_transfers_with_cmd12_when_the_scr_lacks_cmd23() {
    // mmc_blk_alloc_req() (drivers/mmc/core/block.c) sends CMD23 to an SD card only when
    // its SCR has CMD_SUPPORT bit 1: without it each multi-block read is CMD18 + CMD12,
    // each write CMD25 + CMD12 + CMD13 (the busy check after a write).
    let script = "set -e; S=/sys/kernel/debug/emmcsim/stats; \
         cat /sys/block/mmcblk0/device/scr > /out/scr.txt; cat $S > /out/before.txt; \
         dd if=/dev/mmcblk0 of=/dev/null bs=256k count=40 iflag=direct 2>/dev/null; \
         dd if=/dev/zero of=/dev/mmcblk0 bs=64k count=4 seek=64 oflag=direct 2>/dev/null; \
         cat $S > /out/after.txt; cat /sys/kernel/debug/mmc0/err_stats > /out/err_stats.txt";
    let run = testbed::Guest::new("emmcsim_sd_no_cmd23")
        .kernel("7")
        .card("sim,sd=1,sd_cmd23=0")
        .timeout(Duration::from_secs(600))
        .run(script);
    run.assert_success();
    assert_eq!(run.out_text("scr.txt"), "0235844100000000\n");
    let (before, after) = (run.out_text("before.txt"), run.out_text("after.txt"));
    let delta = |name: &str| stat(&after, name) - stat(&before, name);
    assert_eq!(delta("requests"), 40 + 4 + 4, "{before}\n{after}");
    assert_eq!(delta("commands"), 40 * 2 + 4 * 3, "{before}\n{after}");
    assert_eq!(delta("write_blocks"), 4 * 128, "{after}");
    let err_stats = run.out_text("err_stats.txt");
    assert!(
        err_stats.contains("Command Timeout Occurred:\t 0"),
        "{err_stats}"
    );
}
