//! The `speed-mode` and `clock` knobs on the simulated card booted with HS200
//! (`--card sim,hs200=1`), one boot per kernel (Linux 6.12 and 7.x, `--icount 1`,
//! tests/fixtures/speed/sim.sh after tests/fixtures/faults/lib.sh):
//!
//! - `mmcab knobs` offers the speed mode (hs200 now) and the clock (200 MHz);
//! - an A/B of HS200, high speed and high speed at 26 MHz (and on 7.x HS200 at 4 bits,
//!   with the bus-width knob) runs with every config verified in `ios` (meta.json's
//!   `ios` of each config: its timing, clock and width), and everything back as it was;
//! - DDR52 and HS400 (the card's CARD_TYPE lacks them) and a clock above high speed's
//!   52 MHz are refused before any I/O with one line saying why;
//! - after SIGTERM mid-run (in the legacy config) and after an I/O error (a bad spot with
//!   data CRC errors, in the high-speed config) the caps, caps2, ios and power/control
//!   are as they were.
//!
//! And one boot of QEMU's emulated eMMC (an HS52 card on the sdhci driver, Linux 7.x,
//! 8 bits, tests/fixtures/speed/qemu.sh): high speed at 52 and 26 MHz and legacy, each
//! verified, everything back as it was, HS200 refused before any I/O.

use crate::common::scenario::Scenario;
use crate::common::testbed;

use std::sync::OnceLock;
use std::time::Duration;
use testbed::GuestRun;

/// The guest script: lib.sh of the fault scenarios, the speed helpers, then `script`.
fn script(script: &str) -> String {
    let root = testbed::repo_root().join("tests/fixtures");
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    format!(
        "{}\n{}\n{}",
        read("faults/lib.sh"),
        read("speed/lib.sh"),
        read(script)
    )
}

/// One boot of `kernel` with the simulated card at HS200 running sim.sh.
fn boot(kernel: &'static str) -> GuestRun {
    let run = testbed::Guest::new(&format!("emmcsim_speed_{kernel}"))
        .kernel(kernel)
        .card("sim,hs200=1")
        .icount(1)
        .timeout(Duration::from_secs(1500))
        .run(&script("speed/sim.sh"));
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

/// The scenario's state after it is the state before it: caps, caps2, clock, bus
/// width, timing, power/control.
fn back_as_it_was(s: &Scenario) {
    let before = s.text("before");
    assert!(
        before.contains("timing spec:\t9 (mmc HS200)") && before.contains("200000000 Hz"),
        "{}: the card came up in HS200: {before}",
        s.name
    );
    unchanged(s);
}

fn unchanged(s: &Scenario) {
    assert_eq!(s.text("after"), s.text("before"), "{}: {}", s.name, s.err());
}

fn knobs_offer_the_mode_and_the_clock(run: &GuestRun) {
    let knobs = run.out_json("knobs.json");
    let speed = testbed::knob(&knobs, "speed-mode");
    assert_eq!(speed["available"], true, "{knobs}");
    assert_eq!(speed["value"], "hs200", "{knobs}");
    let clock = testbed::knob(&knobs, "clock");
    assert_eq!(clock["value"], "200000000", "{knobs}");
}

/// Every config verified in ios, as meta.json recorded it; the restore script puts the
/// speed mode back before the clock.
fn every_config_ran_in_its_mode(run: &GuestRun, bus4: bool) {
    let s = Scenario { run, name: "ab" };
    let err = s.err();
    assert_eq!(s.status("run.status"), 0, "{err}");
    back_as_it_was(&s);
    let meta = run.out_json("ab/res/meta.json");
    let mut want = vec![
        ("hs200", "mmc HS200", 200_000_000, 8),
        ("hs", "mmc high-speed", 52_000_000, 8),
        ("hs-26mhz", "mmc high-speed", 26_000_000, 8),
    ];
    if bus4 {
        want.push(("hs200-bus4", "mmc HS200", 200_000_000, 4));
    }
    let configs = meta["configs"].as_array().unwrap();
    assert_eq!(configs.len(), want.len(), "{meta}");
    for (name, timing, clock, width) in want {
        let config = configs.iter().find(|c| c["name"] == name).unwrap();
        let ios = &config["ios"];
        assert_eq!(ios["timing"], timing, "{name}: {ios}");
        assert_eq!(ios["clock_hz"], clock, "{name}: {ios}");
        assert_eq!(ios["bus_width_bits"], width, "{name}: {ios}");
    }
    let script = run.out_text("ab/res/restore.sh");
    let (speed, clock) = (
        script.find("# speed-mode was hs200").unwrap(),
        script.find("# clock was 200000000").unwrap(),
    );
    assert!(speed < clock, "{script}");
}

/// Refused with one line, exit 1, no run recorded, nothing changed.
fn refused(run: &GuestRun, name: &'static str, line: &str) {
    let s = Scenario { run, name };
    let err = s.err();
    assert_eq!(s.status("run.status"), 1, "{err}");
    assert!(s.error_line().contains(line), "{err}");
    let runs = run.out_dir.join(name).join("res/runs.csv");
    assert!(!runs.exists() || s.recorded_runs().is_empty(), "{err}");
    back_as_it_was(&s);
}

fn refusals(run: &GuestRun) {
    refused(
        run,
        "refuse-ddr52",
        "speed-mode ddr52: refused, the card cannot do ddr52: EXT_CSD CARD_TYPE 0x13 has none \
         of DDR_1_8V (bit 2), DDR_1_2V (bit 3)",
    );
    refused(
        run,
        "refuse-hs400",
        "speed-mode hs400: refused, the card cannot do hs400: EXT_CSD CARD_TYPE 0x13 has none \
         of HS400_1_8V (bit 6), HS400_1_2V (bit 7)",
    );
    refused(
        run,
        "refuse-clock",
        "clock 100000000: refused, speed-mode hs runs at 52000000 Hz",
    );
}

fn sigterm_and_io_error_put_the_mode_back(run: &GuestRun) {
    let s = Scenario {
        run,
        name: "sigterm",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 128 + 15, "{err}");
    assert!(err.contains("SIGTERM"), "{err}");
    back_as_it_was(&s);
    let s = Scenario {
        run,
        name: "io-error",
    };
    let err = s.err();
    assert_eq!(s.status("run.status"), 4, "{err}");
    assert!(s.error_line().contains("EIO"), "{err}");
    back_as_it_was(&s);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_switches_hs200_and_hs_at_run_time() {
    let run = linux_6_12();
    knobs_offer_the_mode_and_the_clock(run);
    every_config_ran_in_its_mode(run, false);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_refuses_what_the_card_cannot_do_before_any_io() {
    refusals(linux_6_12());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_puts_the_mode_back_after_sigterm_and_an_io_error() {
    sigterm_and_io_error_put_the_mode_back(linux_6_12());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_switches_hs200_hs_and_hs200_at_4_bits_at_run_time() {
    let run = linux_7();
    knobs_offer_the_mode_and_the_clock(run);
    every_config_ran_in_its_mode(run, true);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_refuses_what_the_card_cannot_do_before_any_io() {
    refusals(linux_7());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_puts_the_mode_back_after_sigterm_and_an_io_error() {
    sigterm_and_io_error_put_the_mode_back(linux_7());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn qemu_card_on_linux_7_switches_clock_and_legacy_and_refuses_hs200() {
    let run = testbed::Guest::new("emmcsim_speed_qemu")
        .kernel("7")
        .bus_width(8)
        .timeout(Duration::from_secs(900))
        .run(&script("speed/qemu.sh"));
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
