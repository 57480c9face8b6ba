use super::*;
use crate::knob::caps::{caps_tree, runtime_pm};

/// The simulated card booted `hs200=1` on Linux 6.12.95 (docs/kernel-facts.md).
const SIM_CAPS: &str = "0x40000343\n";
const SIM_CAPS2: &str = "0x00280020\n";
const SIM_CARD: u8 = 0x13;

/// `ios` in `timing` at `clock_hz` on `width` lines.
pub(crate) fn ios(timing: &str, clock_hz: u64, width: u8) -> Ios {
    Ios {
        actual_clock_hz: None,
        bus_mode: "push-pull".into(),
        bus_width_bits: width,
        clock_hz,
        driver_type: Some("driver type B".into()),
        power_mode: "on".into(),
        signal_voltage: "1.80 V".into(),
        timing: timing.into(),
        vdd: "3.3 ~ 3.4 V".into(),
    }
}

fn knob(paths: &crate::device::MmcPaths, card_type: u8, found: Ios) -> SpeedModeKnob {
    SpeedModeKnob::new(
        HostCaps::new(paths),
        card_type,
        Box::new(move || Ok(found.clone())),
    )
}

fn value(k: &SpeedModeKnob, word: &str) -> Value {
    k.normalize(word).unwrap()
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    Settings::of(pairs)
}

#[test]
fn words_normalize_to_the_five_modes() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    let k = knob(&paths, SIM_CARD, ios("mmc HS200", 200_000_000, 8));
    assert_eq!(value(&k, "HS200"), "hs200");
    assert_eq!(value(&k, "hs52"), "hs");
    assert_eq!(value(&k, " ddr "), "ddr52");
    let err = k.normalize("sdr104").unwrap_err().to_string();
    assert_eq!(
        err,
        "speed-mode 'sdr104': use legacy, hs, ddr52, hs200 or hs400"
    );
    assert_eq!(k.read().unwrap(), "hs200");
}

#[test]
fn narrowing_is_allowed_and_what_the_card_or_host_lacks_is_refused() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    let k = knob(&paths, SIM_CARD, ios("mmc HS200", 200_000_000, 8));
    for word in ["legacy", "hs", "hs200"] {
        k.check(&value(&k, word), false).unwrap();
    }
    let err = k.check(&value(&k, "ddr52"), true).unwrap_err().to_string();
    assert_eq!(
        err,
        "speed-mode ddr52: refused, the card cannot do ddr52: EXT_CSD CARD_TYPE 0x13 has none \
         of DDR_1_8V (bit 2), DDR_1_2V (bit 3)"
    );
    // A card with DDR on a host that came up without it: --force.
    let k = knob(&paths, SIM_CARD | 0x04, ios("mmc HS200", 200_000_000, 8));
    let err = k.check(&value(&k, "ddr52"), false).unwrap_err().to_string();
    assert!(
        err.starts_with(
            "speed-mode ddr52: refused, the host came up without ddr52 (caps 0x40000343"
        ) && err.ends_with("pass --force if you know it can"),
        "{err}"
    );
    k.check(&value(&k, "ddr52"), true).unwrap();
}

#[test]
fn a_mode_the_bus_is_too_narrow_for_names_the_fallback() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    let k = knob(&paths, 0xd3, ios("mmc HS200", 200_000_000, 8));
    let hs400 = value(&k, "hs400");
    let four = settings(&[("bus-width", "4"), ("speed-mode", "hs400")]);
    let err = k
        .check_together(&hs400, &four, false)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "speed-mode hs400 at bus-width 4: refused, hs400 needs 8 data lines; at 4 bit(s) the \
         core falls back to hs200: ask for hs200, or a wider bus-width"
    );
    // Without a bus-width in the config: the width the host came up with (8 bits).
    k.check_together(&hs400, &settings(&[("speed-mode", "hs400")]), false)
        .unwrap();
    let (_dir, four_bit) = caps_tree("0x40000303\n", SIM_CAPS2, "on\n");
    let k = knob(&four_bit, 0xd3, ios("mmc HS200", 200_000_000, 4));
    assert!(k
        .check_together(&hs400, &Settings::default(), false)
        .is_err());
}

#[test]
fn a_switch_that_lands_in_another_mode_is_named_as_the_fallback() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    let fell = knob(&paths, SIM_CARD, ios("mmc high-speed", 52_000_000, 8));
    let err = fell.verify(&value(&fell, "hs200")).unwrap_err().to_string();
    assert_eq!(
        err,
        "speed-mode: asked hs200, the card came up in mmc high-speed at 52 MHz: the core fell \
         back to high speed: the switch to HS200 (CMD6 HS_TIMING, then SEND_STATUS) failed and \
         mmc_select_timing() dropped HS200 for this card; dmesg has 'mmc_select_hs200 failed'"
    );
    let stopped = knob(&paths, 0xd3, ios("mmc HS200", 200_000_000, 4));
    let err = stopped
        .verify(&value(&stopped, "hs400"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "asked hs400, the card came up in mmc HS200 at 200 MHz: the core stopped at HS200"
        ),
        "{err}"
    );
    let gone = knob(&paths, SIM_CARD, ios("legacy", 400_000, 1));
    let err = gone.verify(&value(&gone, "hs")).unwrap_err().to_string();
    assert!(err.contains("did not come back"), "{err}");
    let over = knob(&paths, SIM_CARD, ios("mmc high-speed", 100_000_000, 8));
    let err = over.verify(&value(&over, "hs")).unwrap_err().to_string();
    assert!(err.contains("above the 52000000 Hz"), "{err}");
    let es = knob(&paths, 0xd3, ios(IOS_HS400_ES, 200_000_000, 8));
    es.verify(&value(&es, "hs400")).unwrap();
    let lower = knob(&paths, SIM_CARD, ios("mmc HS200", 100_000_000, 8));
    lower.verify(&value(&lower, "hs200")).unwrap();
}

/// The 6.12 sequence of the testbed: caps2 0x00280020 -> 0x00280000 with aggressive PM,
/// one runtime-PM cycle; the restore puts both words back with one cycle more.
#[test]
fn apply_and_restore_write_the_words_and_cycle_the_card() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    std::fs::write(
        paths.card_sysfs.join("power/autosuspend_delay_ms"),
        "3000\n",
    )
    .unwrap();
    let timing = std::sync::Arc::new(std::sync::Mutex::new("mmc HS200".to_string()));
    let now = timing.clone();
    let mut k = SpeedModeKnob::new(
        HostCaps::new(&paths),
        SIM_CARD,
        Box::new(move || {
            let t = now.lock().unwrap().clone();
            let clock = if t == "mmc HS200" {
                200_000_000
            } else {
                52_000_000
            };
            Ok(ios(&t, clock, 8))
        }),
    );
    k.snapshot().unwrap();
    assert_eq!(
        k.saved().unwrap(),
        "hs200 caps=0x40000343 caps2=0x00280020 control=on"
    );
    let pm = runtime_pm(&paths);
    k.apply(&value(&k, "hs")).unwrap();
    let host = HostCaps::new(&paths);
    assert_eq!(
        host.read_caps().unwrap(),
        0x4000_03c3,
        "aggressive PM for the cycle"
    );
    assert_eq!(host.read_caps2().unwrap(), 0x0028_0000);
    *timing.lock().unwrap() = "mmc high-speed".into();
    k.verify(&value(&k, "hs")).unwrap();
    k.restore().unwrap_err(); // the fake ios stays in HS: named, not hidden
    *timing.lock().unwrap() = "mmc HS200".into();
    k.restore().unwrap();
    std::fs::write(&host.power_control, "end\n").unwrap();
    let seen = pm.join().unwrap();
    assert_eq!(
        seen,
        ["auto (delay 0)", "on", "auto (delay 0)", "on", "on", "on"],
        "apply: one cycle; a restore that cycles and finds the mode not back; one that finds \
         it back and only writes power/control"
    );
    assert_eq!(host.read_caps().unwrap(), 0x4000_0343);
    assert_eq!(host.read_caps2().unwrap(), 0x0028_0020);
}

#[test]
fn restore_commands_put_caps2_back_before_the_cycle() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "auto\n");
    let mut k = knob(&paths, SIM_CARD, ios("mmc HS200", 200_000_000, 8));
    k.snapshot().unwrap();
    let commands = k.restore_commands();
    let caps2 = paths.host_debugfs.join("caps2");
    let caps = paths.host_debugfs.join("caps");
    let control = paths.card_sysfs.join("power/control");
    assert_eq!(
        commands,
        [
            format!("echo 0x00280020 > {}", caps2.display()),
            format!("echo 0x400003c3 > {}", caps.display()),
            format!("echo auto > {}", control.display()),
            "sleep 4".to_string(),
            format!("echo on > {}", control.display()),
            format!("echo 0x40000343 > {}", caps.display()),
            format!("echo auto > {}", control.display()),
        ]
    );
    assert_eq!(k.restore_preconditions().len(), 2);
}

/// A resume after a run killed in HS: the saved snapshot of the first start wins.
#[test]
fn an_adopted_snapshot_wins_over_the_words_found_now() {
    let (_dir, paths) = caps_tree("0x400003c3\n", "0x00280000\n", "on\n");
    let mut k = knob(&paths, SIM_CARD, ios("mmc high-speed", 52_000_000, 8));
    k.adopt("hs200 caps=0x40000343 caps2=0x00280020 control=auto")
        .unwrap();
    k.snapshot().unwrap();
    assert_eq!(k.original().unwrap(), "hs200");
    // hs200 is narrowing from what the host came up with, not widening from now.
    k.check(&value(&k, "hs200"), false).unwrap();
    let err = k.adopt("hs200 caps=0x40000343").unwrap_err().to_string();
    assert!(err.contains("no caps2="), "{err}");
}

/// Legacy runs at the CSD's TRAN_SPEED, whatever the card says there: QEMU's emulated
/// eMMC says 100 MHz, and the core clocks legacy at 100 MHz on it.
#[test]
fn legacy_is_checked_against_the_cards_tran_speed() {
    let (_dir, paths) = caps_tree(SIM_CAPS, SIM_CAPS2, "on\n");
    let qemu = knob(&paths, 0x03, ios("legacy", 100_000_000, 8)).with_tran_speed(Some(100_000_000));
    qemu.verify(&value(&qemu, "legacy")).unwrap();
    let unknown = knob(&paths, 0x03, ios("legacy", 100_000_000, 8));
    unknown.verify(&value(&unknown, "legacy")).unwrap();
    let sim = knob(&paths, 0x03, ios("legacy", 100_000_000, 8)).with_tran_speed(Some(25_000_000));
    let err = sim.verify(&value(&sim, "legacy")).unwrap_err().to_string();
    assert!(
        err.contains("above the 25000000 Hz the mode runs at"),
        "{err}"
    );
}
