//! The `speed-mode` and `clock` knobs on the simulated card with every mode offered
//! (`--card sim,card_ddr52=1,card_hs200=1,card_hs400=1,host_ddr=1,host_hs200=1,
//! host_hs400=1`: it boots in HS400), one boot per kernel (Linux 6.12 and 7.x,
//! `--icount 1`, tests/fixtures/speed/modes.sh after tests/fixtures/faults/lib.sh and
//! tests/fixtures/speed/lib.sh):
//!
//! - workloads/speed-modes.toml A/Bs hs, ddr52, hs200 and hs400 at 8 bits (on 7.x also
//!   hs200 at 4 bits, through the bus-width knob) first on a card whose timing
//!   parameters are all 0, then on the module's defaults: each mode's 512 KiB
//!   sequential read and write and 4 KiB random read lies within 5% of the formula
//!   (tests/common/sim_model.rs: the model's time with the defaults, minus its time
//!   with zeros, plus what the zero card measured), mmcab's report calls every mode's
//!   difference from hs significant with the model's ratio (within 5%), and every
//!   config ran in its mode (meta.json's `ios` of each config: timing, clock, width);
//! - the clock at 26 MHz in high speed, verified;
//! - refused before any I/O with one line: DDR52 on a host whose caps lack DDR, a clock
//!   above high speed's 52 MHz, on 7.x HS400 at 4 bits (naming the core's fallback);
//! - a fallback (the card refuses CMD6 HS_TIMING=HS200, `fail_switch_timing=2`) named as
//!   such; the restore to HS400 fails the same way (exit 5) and the commands mmcab
//!   printed restore it once the fault is gone;
//! - after SIGTERM mid-run and after an I/O error the caps, caps2, ios and power/control
//!   are as they were.
//!
//! And one boot of QEMU's emulated eMMC (an HS52 card on the sdhci driver, Linux 7.x,
//! 8 bits, tests/fixtures/speed/qemu.sh): high speed at 52 and 26 MHz and legacy, each
//! verified, everything back as it was, HS200 refused (the card lacks it).
//!
//! mmcab is told nothing of the model: it measures; this test holds the truth.

use crate::common::scenario::Scenario;
use crate::common::sim_model::{Bus, Io, Mode, DEFAULTS};
use crate::common::testbed;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;
use testbed::GuestRun;

/// Every mode offered by the card and the host.
const ALL_MODES: &str =
    "sim,card_ddr52=1,card_hs200=1,card_hs400=1,host_ddr=1,host_hs200=1,host_hs400=1";

/// The guest script: lib.sh of the fault scenarios, the speed helpers, the shipped plan
/// in /tmp/modes.toml, then `script`. The plan's `min_runtime` is left out: its runs are
/// then its 8 MiB (1 MiB of 4 KiB reads), as long as the model's check needs under
/// icount, where the model's time is exact, and 45 runs of at least 1 s twice per boot
/// made this the tier's longest test (467 s).
fn script(script: &str) -> String {
    let root = testbed::repo_root();
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    let plan = read("workloads/speed-modes.toml");
    let by_amount = plan.replacen("min_runtime = \"1s\"\n", "", 1);
    assert_ne!(
        by_amount, plan,
        "workloads/speed-modes.toml sets min_runtime"
    );
    format!(
        "{}\n{}\ncat > /tmp/modes.toml <<'MMCAB_EOF'\n{}\nMMCAB_EOF\n{}",
        read("tests/fixtures/faults/lib.sh"),
        read("tests/fixtures/speed/lib.sh"),
        by_amount,
        read(script)
    )
}

/// One boot of `kernel` with every mode offered, running modes.sh.
fn boot(kernel: &'static str) -> GuestRun {
    let run = testbed::Guest::new(&format!("emmcsim_speed_{kernel}"))
        .kernel(kernel)
        .card(ALL_MODES)
        .icount(1)
        .bus_width(8)
        .timeout(Duration::from_secs(2400))
        .run(&script("tests/fixtures/speed/modes.sh"));
    run.assert_success();
    run
}

fn linux_6_12() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("6.12"))
}

fn linux_7() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| boot("7"))
}

/// The state before a scenario: the card in HS400 at 200 MHz on 8 bits.
fn in_hs400(state: &str) {
    assert!(
        state.contains("timing spec:\t10 (mmc HS400)")
            && state.contains("clock:\t\t200000000 Hz")
            && state.contains("(8 bits)"),
        "the card came up in HS400: {state}"
    );
}

/// The scenario's state after it is the state before it: caps, caps2, clock, bus
/// width, timing, power/control.
fn unchanged(s: &Scenario) {
    assert_eq!(s.text("after"), s.text("before"), "{}: {}", s.name, s.err());
}

/// The mode and width of a config of workloads/speed-modes.toml.
fn bus_of(config: &str) -> Bus {
    match config {
        "hs" => Bus::new(Mode::Hs, 8),
        "ddr52" => Bus::new(Mode::Ddr52, 8),
        "hs200" => Bus::new(Mode::Hs200, 8),
        "hs400" => Bus::new(Mode::Hs400, 8),
        "hs200-bus4" => Bus::new(Mode::Hs200, 4),
        other => panic!("config {other} is not in workloads/speed-modes.toml"),
    }
}

fn io_of(workload: &str) -> Io {
    match workload {
        "seq-read" => Io::SEQ_READ_512K,
        "seq-write" => Io::SEQ_WRITE_512K,
        "rand-read-4k" => Io::RAND_READ_4K,
        other => panic!("workload {other} is not in workloads/speed-modes.toml"),
    }
}

/// Median over the measured runs of seconds per I/O of each (workload, config).
fn per_op(dir: &Path) -> BTreeMap<(String, String), f64> {
    let path = dir.join("runs.csv");
    let mut rdr =
        csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut runs: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for row in rdr.deserialize::<mmcab::record::RunRow>() {
        let row = row.unwrap();
        if row.job != mmcab::record::GROUP_JOB || row.warmup {
            continue;
        }
        runs.entry((row.workload, row.config))
            .or_default()
            .push(row.seconds / row.ops as f64);
    }
    runs.into_iter()
        .map(|(k, v)| (k, mmcab::stats::median(&v)))
        .collect()
}

/// The model's time per I/O of (workload, config) with the defaults, from the zero
/// card's measurement, ns.
fn predicted_ns(zero: &BTreeMap<(String, String), f64>, workload: &str, config: &str) -> f64 {
    let zero_ns = zero[&(workload.to_string(), config.to_string())] * 1e9;
    DEFAULTS.predict(io_of(workload), &bus_of(config), zero_ns)
}

/// Every (workload, config) within 5% of the formula; returns the table.
fn matches_the_model(run: &GuestRun, configs: &[&str]) -> String {
    for name in ["zero", "set"] {
        let status = run.out_text(&format!("{name}.status"));
        assert_eq!(
            status.trim(),
            "0",
            "{}",
            run.out_text(&format!("{name}.err"))
        );
    }
    let zero = per_op(&run.out_dir.join("zero"));
    let set = per_op(&run.out_dir.join("set"));
    let mut table = "workload      config      measured   predicted  pred/meas\n".to_string();
    let mut bad = Vec::new();
    for ((workload, config), seconds) in &set {
        let predicted = predicted_ns(&zero, workload, config);
        let ratio = predicted / (seconds * 1e9);
        table += &format!(
            "{workload:<13} {config:<11} {:>9.1} us {:>9.1} us  {ratio:>8.4}\n",
            seconds * 1e6,
            predicted / 1e3
        );
        if !(0.95..=1.05).contains(&ratio) {
            bad.push(format!("{workload}/{config}: {ratio:.4}"));
        }
    }
    eprintln!("{table}");
    assert_eq!(set.len(), 3 * configs.len(), "{table}");
    assert!(
        bad.is_empty(),
        "measured/predicted outside 0.95..1.05 for {bad:?}:\n{table}\nstats:\n{}",
        run.out_text("stats.txt")
    );
    table
}

/// mmcab's report calls every mode different from hs (the baseline, the plan's first
/// config), significantly, with the model's sign and ratio (within 5%).
fn every_difference_is_significant(run: &GuestRun, configs: &[&str], table: &str) {
    let report = run.out_json("set/report/report.json");
    let zero = per_op(&run.out_dir.join("zero"));
    let mut compared = 0;
    for block in report["blocks"].as_array().unwrap() {
        if block["headline"] != true {
            continue;
        }
        let workload = block["workload"].as_str().unwrap();
        for row in block["rows"].as_array().unwrap() {
            let Some(baseline) = row["baseline"].as_str() else {
                continue;
            };
            let config = row["config"].as_str().unwrap();
            let model =
                predicted_ns(&zero, workload, baseline) / predicted_ns(&zero, workload, config);
            let want = if model < 1.0 { "slower" } else { "faster" };
            assert_eq!(
                row["verdict"],
                want,
                "{workload}: {config} vs {baseline} is {} (q {}), the model says x{model:.3}\n{table}",
                row["verdict"],
                row["q"]
            );
            let measured = 1.0 + row["change"]["rel"].as_f64().unwrap();
            assert!(
                (0.95..=1.05).contains(&(measured / model)),
                "{workload}: {config}/{baseline} measured x{measured:.3}, model x{model:.3}\n{table}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * (configs.len() - 1), "{table}");
}

/// Every config ran in its mode, as meta.json recorded its ios.
fn every_config_ran_in_its_mode(run: &GuestRun, configs: &[&str]) {
    let meta = run.out_json("set/meta.json");
    for &name in configs {
        let config = meta["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no config {name} in {meta}"));
        let bus = bus_of(name);
        let ios = &config["ios"];
        let timing = match bus.mode {
            Mode::Hs => "mmc high-speed",
            Mode::Ddr52 => "mmc DDR52",
            Mode::Hs200 => "mmc HS200",
            Mode::Hs400 => "mmc HS400",
            Mode::Legacy => "legacy",
        };
        assert_eq!(ios["timing"], timing, "{name}: {ios}");
        assert_eq!(ios["clock_hz"], bus.clock_hz as u64, "{name}: {ios}");
        assert_eq!(ios["bus_width_bits"], bus.width, "{name}: {ios}");
    }
}

fn the_modes_match_the_model(run: &GuestRun, configs: &[&str]) {
    let knobs = run.out_json("knobs.json");
    assert_eq!(
        testbed::knob(&knobs, "speed-mode")["value"],
        "hs400",
        "{knobs}"
    );
    assert_eq!(
        testbed::knob(&knobs, "clock")["value"],
        "200000000",
        "{knobs}"
    );
    in_hs400(&run.out_text("before"));
    assert_eq!(run.out_text("after"), run.out_text("before"));
    every_config_ran_in_its_mode(run, configs);
    let table = matches_the_model(run, configs);
    every_difference_is_significant(run, configs, &table);
}

/// Refused with one line, exit 1, no run recorded, nothing changed.
fn refused(run: &GuestRun, name: &'static str, line: &str) {
    let s = Scenario { run, name };
    let err = s.err();
    assert_eq!(s.status("run.status"), 1, "{err}");
    assert!(s.error_line().contains(line), "{err}");
    let runs = run.out_dir.join(name).join("res/runs.csv");
    assert!(!runs.exists() || s.recorded_runs().is_empty(), "{err}");
    unchanged(&s);
}

fn refusals(run: &GuestRun, bus4: bool) {
    refused(
        run,
        "refuse-host",
        "speed-mode ddr52: refused, the host came up without ddr52 (caps 0x40000343 has none \
         of MMC_CAP_1_8V_DDR, MMC_CAP_3_3V_DDR (for the card's DDR_1_8V)); setting bits the \
         host did not come up with may drive the card in a mode the board was not designed \
         for: pass --force if you know it can",
    );
    refused(
        run,
        "refuse-clock",
        "clock 100000000: refused, speed-mode hs runs at 52000000 Hz",
    );
    if bus4 {
        refused(
            run,
            "refuse-bus",
            "speed-mode hs400 at bus-width 4: refused, hs400 needs 8 data lines; at 4 bit(s) \
             the core falls back to hs200: ask for hs200, or a wider bus-width",
        );
    }
}

/// The clock knob in high speed: 26 MHz verified, then back as it was.
fn the_clock_switches(run: &GuestRun) {
    let s = Scenario { run, name: "clock" };
    assert_eq!(s.status("run.status"), 0, "{}", s.err());
    unchanged(&s);
    let meta = run.out_json("clock/res/meta.json");
    for (name, clock) in [("hs", 52_000_000), ("hs-26mhz", 26_000_000)] {
        let config = meta["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        assert_eq!(config["ios"]["timing"], "mmc high-speed", "{config}");
        assert_eq!(config["ios"]["clock_hz"], clock, "{config}");
    }
}

fn the_fallback_is_named(run: &GuestRun) {
    let s = Scenario {
        run,
        name: "fallback",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 5, "{err}");
    assert!(
        err.contains(
            "speed-mode: asked hs200, the card came up in mmc high-speed at 52 MHz: the core \
             fell back to high speed: the switch to HS200 (CMD6 HS_TIMING, then SEND_STATUS) \
             failed"
        ),
        "{err}"
    );
    assert!(
        err.contains("mmcab: restoring knob speed-mode failed: "),
        "{err}"
    );
    assert_eq!(s.status("byhand.status"), 0, "{}", s.text("byhand.log"));
    in_hs400(&s.text("before"));
    unchanged(&s);
}

fn sigterm_and_io_error_put_the_mode_back(run: &GuestRun) {
    let s = Scenario {
        run,
        name: "sigterm",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 128 + 15, "{err}");
    assert!(err.contains("SIGTERM"), "{err}");
    in_hs400(&s.text("before"));
    unchanged(&s);
    let s = Scenario {
        run,
        name: "io-error",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 4, "{err}");
    assert!(s.error_line().contains("EIO"), "{err}");
    in_hs400(&s.text("before"));
    unchanged(&s);
}

const CONFIGS_6_12: [&str; 4] = ["hs", "ddr52", "hs200", "hs400"];
const CONFIGS_7: [&str; 5] = ["hs", "ddr52", "hs200", "hs400", "hs200-bus4"];

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_speed_modes_match_the_model_and_differ_significantly() {
    the_modes_match_the_model(linux_6_12(), &CONFIGS_6_12);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_refuses_before_any_io_and_switches_the_clock() {
    refusals(linux_6_12(), false);
    the_clock_switches(linux_6_12());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_names_a_fallback_and_puts_the_mode_back_after_sigterm_and_io_errors() {
    the_fallback_is_named(linux_6_12());
    sigterm_and_io_error_put_the_mode_back(linux_6_12());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_speed_modes_and_hs200_at_4_bits_match_the_model_and_differ_significantly() {
    the_modes_match_the_model(linux_7(), &CONFIGS_7);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_refuses_before_any_io_and_switches_the_clock() {
    refusals(linux_7(), true);
    the_clock_switches(linux_7());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_names_a_fallback_and_puts_the_mode_back_after_sigterm_and_io_errors() {
    the_fallback_is_named(linux_7());
    sigterm_and_io_error_put_the_mode_back(linux_7());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn qemu_card_on_linux_7_switches_clock_and_legacy_and_refuses_hs200() {
    let run = testbed::Guest::new("emmcsim_speed_qemu")
        .kernel("7")
        .bus_width(8)
        .timeout(Duration::from_secs(900))
        .run(&script("tests/fixtures/speed/qemu.sh"));
    run.assert_success();
    let knobs = run.out_json("knobs.json");
    assert_eq!(
        testbed::knob(&knobs, "speed-mode")["value"],
        "hs",
        "{knobs}"
    );
    let s = Scenario {
        run: &run,
        name: "ab",
    };
    assert_eq!(s.status("run.status"), 0, "{}", s.err());
    assert!(s
        .text("before")
        .contains("timing spec:\t1 (mmc high-speed)"));
    unchanged(&s);
    let meta = run.out_json("ab/res/meta.json");
    for (name, timing, clock) in [
        ("hs", "mmc high-speed", Some(52_000_000)),
        ("hs-26mhz", "mmc high-speed", Some(26_000_000)),
        ("legacy", "legacy", None),
    ] {
        let config = meta["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        assert_eq!(config["ios"]["timing"], timing, "{name}: {config}");
        if let Some(clock) = clock {
            assert_eq!(config["ios"]["clock_hz"], clock, "{name}: {config}");
        }
    }
    let s = Scenario {
        run: &run,
        name: "refuse-hs200",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 1, "{err}");
    assert!(
        s.error_line().contains(
            "speed-mode hs200: refused, the card cannot do hs200: EXT_CSD CARD_TYPE 0x03 has \
             none of HS200_1_8V (bit 4), HS200_1_2V (bit 5)"
        ),
        "{err}"
    );
    unchanged(&s);
}
