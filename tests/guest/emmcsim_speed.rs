//! The simulated eMMC's speed modes (testbed/emmcsim/README.md, "Speed modes") against
//! the model, on Linux 7.x and 6.12: one boot each of a card and host that offer every
//! mode (8-bit, `--icount 1`). The guest's script switches the mode at run time the way
//! the kernel allows (the host's debugfs caps/caps2, then a runtime-PM cycle of the
//! card), checks `ios` and the card's tuning counters at each mode, and runs one plan
//! per mode on the zero card and with the defaults. For every mode and workload (512 KiB
//! sequential read and write, 4 KiB random read) mmcab's throughput must lie within 5%
//! of the formula's (`Timing::predict` of tests/common/sim_model.rs); HS200 and HS400
//! must have tuned once at their switch (40 CMD21s), legacy, HS and DDR52 not at all,
//! and the host's err_stats must stay 0. Then HS at 26 MHz through the host's debugfs
//! `clock`: the model must follow the clock. On 7.x the host then loses its 8-bit cap with HS400
//! still offered: the card must come up HS200 at 4 bits.

use crate::common::sim_model::{Bus, Io, Mode, DEFAULTS, TUNING_DEFAULTS};
use crate::common::testbed;
use crate::emmcsim_model::per_op;

use std::path::Path;

const CARD: &str =
    "sim,card_ddr52=1,card_hs200=1,card_hs400=1,host_ddr=1,host_hs200=1,host_hs400=1";

/// caps and caps2 bits (include/linux/mmc/host.h).
const CAP_MMC_HIGHSPEED: u64 = 0x2;
const CAP_8_BIT: u64 = 0x40;
const CAP_AGGRESSIVE_PM: u64 = 0x80;
const CAP_DDR: u64 = 0x800 | 0x1000; // MMC_CAP_3_3V_DDR | MMC_CAP_1_8V_DDR
const CAP2_HS200: u64 = 0x20; // MMC_CAP2_HS200_1_8V_SDR
const CAP2_HS400: u64 = 0x8000; // MMC_CAP2_HS400_1_8V

const PLAN: &str = r#"
name = "speed"
repetitions = 3
order = "interleaved"
seed = 1
[[config]]
name = "MODE"
expect.bus_width = 8
[[workload]]
name = "seq-read"
[[workload.job]]
name = "read"
rw = "read"
bs = "512KiB"
size = "4MiB"
[[workload]]
name = "seq-write"
[[workload.job]]
name = "write"
rw = "write"
bs = "512KiB"
size = "4MiB"
[[workload]]
name = "rand-read-4k"
[[workload.job]]
name = "randread"
rw = "randread"
bs = "4KiB"
size = "4MiB"
io_size = "512KiB"
"#;

/// The caps and caps2 that make the core choose `mode` on the host booted with every
/// mode (the README's table), as shell arithmetic on $C and $C2, the boot's values.
fn mode_bits(mode: Mode) -> (String, String) {
    let hs_only = format!("$(( ($C & ~{CAP_DDR}) | {CAP_AGGRESSIVE_PM} ))");
    let with_ddr = format!("$(( $C | {CAP_AGGRESSIVE_PM} ))");
    let no_hsx00 = format!("$(( $C2 & ~{} ))", CAP2_HS200 | CAP2_HS400);
    match mode {
        Mode::Hs => (hs_only, no_hsx00),
        Mode::Ddr52 => (with_ddr, no_hsx00),
        Mode::Hs200 => (with_ddr, format!("$(( $C2 & ~{CAP2_HS400} ))")),
        Mode::Hs400 => (with_ddr, "$C2".to_string()),
        Mode::Legacy => (
            format!(
                "$(( ($C & ~{}) | {CAP_AGGRESSIVE_PM} ))",
                CAP_DDR | CAP_MMC_HIGHSPEED
            ),
            no_hsx00,
        ),
    }
}

const MODES: [Mode; 5] = [
    Mode::Legacy,
    Mode::Hs,
    Mode::Ddr52,
    Mode::Hs200,
    Mode::Hs400,
];

/// The clock the host's debugfs `clock` sets in HS mode: the model must follow it.
const HS_CLOCK_HZ: f64 = 26e6;

fn script(kernel: &str) -> String {
    let mut s = String::from(
        "set -e; D=/sys/kernel/debug/mmc0; P=/sys/bus/mmc/devices/mmc0:0001/power; \
         S=/sys/module/emmcsim/parameters; C=$(cat $D/caps); C2=$(cat $D/caps2)\n\
         setmode() { echo $1 > $D/caps; echo $2 > $D/caps2; \
           echo 0 > $P/autosuspend_delay_ms; echo auto > $P/control; i=0; \
           while [ \"$(cat $P/runtime_status)\" != suspended ]; do \
             i=$((i+1)); [ $i -lt 200 ] || exit 93; sleep 0.05; done; \
           echo on > $P/control; cat $D/ios > /out/$3-ios.txt; \
           cat /sys/kernel/debug/emmcsim/stats > /out/$3-stats.txt; }\n\
         params() { echo $1 > $S/cmd_ns; echo $2 > $S/read_access_ns; \
           echo $3 > $S/read_ns_per_kib; echo $4 > $S/write_access_ns; \
           echo $5 > $S/program_ns_per_kib; }\n\
         run() { sed \"s/MODE/$1/\" /tmp/plan.toml > /tmp/$1.toml; \
           mmcab run /tmp/$1.toml --device /dev/mmcblk0 --allow-write --no-evidence \
           --quiet --out /out/$1-$2 >/dev/null || exit 91; }\n",
    );
    s += &format!("cat > /tmp/plan.toml <<'EOF'\n{PLAN}\nEOF\n");
    // The data's pages exist before the zero card's runs (the store is sparse: a first
    // write allocates them, which would count as the software's time).
    s += "dd if=/dev/zero of=/dev/mmcblk0 bs=512k count=16 2>/dev/null; sync\n";
    s += "cat /sys/kernel/debug/emmcsim/stats > /out/boot-stats.txt\n";
    let d = DEFAULTS;
    for mode in MODES {
        let (caps, caps2) = mode_bits(mode);
        let name = mode.name();
        s += &format!(
            "setmode {caps} {caps2} {name}\nparams 0 0 0 0 0; run {name} zero\n\
             params {} {} {} {} {}; run {name} set\n",
            d.cmd_ns, d.read_access_ns, d.read_ns_per_kib, d.write_access_ns, d.program_ns_per_kib
        );
    }
    // HS at another clock, set through the host's debugfs `clock` (mmc_set_clock()).
    let (caps, caps2) = mode_bits(Mode::Hs);
    s += &format!(
        "setmode {caps} {caps2} hs-clock; echo {} > $D/clock; cat $D/ios > /out/hs-clock-ios.txt\n\
         params 0 0 0 0 0; run hs-clock zero\n\
         params {} {} {} {} {}; run hs-clock set\n",
        HS_CLOCK_HZ as u64,
        d.cmd_ns,
        d.read_access_ns,
        d.read_ns_per_kib,
        d.write_access_ns,
        d.program_ns_per_kib
    );
    if kernel != "6.12" {
        // 7.x writes the bus-width caps: HS400 offered on 4 lines falls back to HS200.
        let (caps, caps2) = mode_bits(Mode::Hs400);
        s += &format!("setmode $(( {caps} & ~{CAP_8_BIT} )) {caps2} hs400-4bit\n");
    }
    s += "cat $D/err_stats > /out/err_stats.txt\n";
    s
}

fn stat(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in emmcsim/stats:\n{stats}"))
        .trim()
        .parse()
        .unwrap()
}

/// The number after the colon of a debugfs line ("clock:\t\t200000000 Hz" -> 200000000,
/// "bus width:\t3 (8 bits)" -> 3, "# Data CRC Errors Occurred:\t 0" -> 0).
fn number(text: &str, key: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .unwrap_or_else(|| panic!("no {key:?} line in:\n{text}"));
    let value = line.split_once(':').unwrap().1.split_whitespace().next();
    value
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

/// `ios`: the clock in Hz, the width in lines and the timing spec number.
fn ios(text: &str) -> (f64, u32, u32) {
    (
        number(text, "clock") as f64,
        1 << number(text, "bus width"),
        number(text, "timing spec") as u32,
    )
}

/// One plan's runs (`NAME-zero`, `NAME-set`) against the formula on `bus`: a line of
/// `report` per workload, and one in `bad` for each outside 5%.
fn check_rates(out: &Path, name: &str, bus: &Bus, report: &mut String, bad: &mut Vec<String>) {
    let zero = per_op(&out.join(format!("{name}-zero")));
    let measured = per_op(&out.join(format!("{name}-set")));
    for (workload, io) in [
        ("seq-read", Io::SEQ_READ_512K),
        ("seq-write", Io::SEQ_WRITE_512K),
        ("rand-read-4k", Io::RAND_READ_4K),
    ] {
        let key = (workload.to_string(), name.to_string());
        let predicted = DEFAULTS.predict(io, bus, zero[&key] * 1e9);
        let ratio = predicted / (measured[&key] * 1e9);
        *report += &format!(
            "{name:<8} {workload:<13} {:>9.1} us {:>9.1} us {ratio:>8.4}\n",
            measured[&key] * 1e6,
            predicted / 1e3
        );
        if !(0.95..=1.05).contains(&ratio) {
            bad.push(format!("{name}/{workload}: {ratio:.4}"));
        }
    }
}

fn check(label: &str, kernel: &str) {
    let run = testbed::Guest::new(label)
        .kernel(kernel)
        .card(CARD)
        .icount(1)
        .bus_width(8)
        .timeout(std::time::Duration::from_secs(1800))
        .run(&script(kernel));
    run.assert_success();
    let mut report = format!("{label}: mode/workload  measured  predicted  meas/pred\n");
    let mut bad = Vec::new();
    let mut stats = run.out_text("boot-stats.txt");
    for mode in MODES {
        let name = mode.name();
        let (clock, width, timing) = ios(&run.out_text(&format!("{name}-ios.txt")));
        if (clock, width, timing) != (mode.clock_hz(), 8, mode.ios_timing()) {
            bad.push(format!(
                "{name}: ios {clock} Hz, {width} bits, timing {timing}"
            ));
        }
        let after = run.out_text(&format!("{name}-stats.txt"));
        let tunings = stat(&after, "tunings") - stat(&stats, "tunings");
        let cmds = stat(&after, "tuning_cmds") - stat(&stats, "tuning_cmds");
        let want = u64::from(matches!(mode, Mode::Hs200 | Mode::Hs400));
        if tunings != want || cmds != want * TUNING_DEFAULTS.cmds as u64 {
            bad.push(format!(
                "{name}: {tunings} tunings, {cmds} CMD21s at the switch"
            ));
        }
        // the next switch's counters start after this mode's runs
        stats = run.out_text(&format!("{name}-stats.txt"));
        check_rates(
            &run.out_dir,
            name,
            &Bus::new(mode, 8),
            &mut report,
            &mut bad,
        );
    }
    let clock = ios(&run.out_text("hs-clock-ios.txt")).0;
    if clock != HS_CLOCK_HZ {
        bad.push(format!(
            "debugfs clock {HS_CLOCK_HZ} Hz: ios says {clock} Hz"
        ));
    }
    let bus = Bus::new(Mode::Hs, 8).with_clock(HS_CLOCK_HZ);
    check_rates(&run.out_dir, "hs-clock", &bus, &mut report, &mut bad);
    if kernel != "6.12" {
        let (clock, width, timing) = ios(&run.out_text("hs400-4bit-ios.txt"));
        if (clock, width, timing) != (200e6, 4, Mode::Hs200.ios_timing()) {
            bad.push(format!(
                "HS400 offered at 4 bits: {clock} Hz, {width} bits, timing {timing}"
            ));
        }
    }
    let err_stats = run.out_text("err_stats.txt");
    for line in err_stats.lines().filter(|l| l.contains(':')) {
        let key = line.split(':').next().unwrap().trim();
        if number(&err_stats, key) != 0 {
            bad.push(format!("err_stats: {line}"));
        }
    }
    eprintln!("{report}");
    assert!(bad.is_empty(), "{bad:#?}\n{report}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_speed_modes_switch_at_run_time_and_match_the_formula() {
    check("speed_7", "7");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_speed_modes_switch_at_run_time_and_match_the_formula() {
    check("speed_6_12", "6.12");
}
