use super::*;
use crate::knob::caps::caps_tree;
use crate::knob::speed_mode::tests::ios;

/// A clock knob over a fixture tree whose `ios` shows `timing` at what the `clock`
/// file holds, as `mmc_clock_opt_set()` leaves it.
fn knob(timing: &str, clock_hz: u64) -> (tempfile::TempDir, ClockKnob, std::path::PathBuf) {
    let (dir, paths) = caps_tree("0x40000343\n", "0x00280020\n", "on\n");
    let file = paths.host_debugfs.join("clock");
    std::fs::write(&file, format!("{clock_hz}\n")).unwrap();
    let (read, timing) = (file.clone(), timing.to_string());
    let k = ClockKnob::new(
        file.clone(),
        HostCaps::new(&paths),
        Box::new(move || {
            let hz = std::fs::read_to_string(&read)?.trim().parse()?;
            Ok(ios(&timing, hz, 8))
        }),
    );
    (dir, k, file)
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    Settings::of(pairs)
}

#[test]
fn clocks_parse_in_hz_and_zero_is_refused() {
    assert_eq!(parse_hz("26000000").unwrap(), 26_000_000);
    assert_eq!(parse_hz("26 MHz").unwrap(), 26_000_000);
    assert_eq!(parse_hz("52M").unwrap(), 52_000_000);
    assert_eq!(parse_hz("400kHz").unwrap(), 400_000);
    assert_eq!(parse_hz("0.2 GHz").unwrap(), 200_000_000);
    let err = parse_hz("0").unwrap_err().to_string();
    assert!(
        err.starts_with("clock 0: refused, 0 Hz stops the bus clock"),
        "{err}"
    );
    let err = parse_hz("fast").unwrap_err().to_string();
    assert_eq!(err, "clock 'fast': use Hz, e.g. 26000000 or \"26 MHz\"");
    assert!(parse_hz("-5").is_err());
}

#[test]
fn a_clock_above_the_modes_needs_force() {
    let (_dir, k, _) = knob("mmc high-speed", 52_000_000);
    let v = k.normalize("100 MHz").unwrap();
    let err = k.check_together(&v, &settings(&[("clock", "100000000")]), false);
    assert_eq!(
        err.unwrap_err().to_string(),
        "clock 100000000: refused, the host came up in mmc high-speed at 52000000 Hz; a faster \
         clock drives the card past its mode's timing (mmc_set_clock() checks only the host's \
         f_max): pass --force if you know it can"
    );
    k.check_together(&v, &settings(&[("clock", "100000000")]), true)
        .unwrap();
    // The config's mode decides: hs200 runs at 200 MHz.
    let with_mode = settings(&[("clock", "100000000"), ("speed-mode", "hs200")]);
    k.check_together(&v, &with_mode, false).unwrap();
    let v = k.normalize("26 MHz").unwrap();
    k.check_together(&v, &settings(&[("clock", "26000000")]), false)
        .unwrap();
}

#[test]
fn apply_verify_and_restore_go_through_the_clock_file() {
    let (_dir, mut k, file) = knob("mmc high-speed", 52_000_000);
    k.snapshot().unwrap();
    assert_eq!(k.saved().unwrap(), "52000000 timing=mmc_high-speed");
    let v = k.normalize("26 MHz").unwrap();
    k.apply(&v).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "26000000");
    k.verify(&v).unwrap();
    // A re-init put the mode's clock back: named.
    std::fs::write(&file, "52000000\n").unwrap();
    let err = k.verify(&v).unwrap_err().to_string();
    assert_eq!(
        err,
        "clock: ios shows 52000000 Hz in mmc high-speed, not 26000000 Hz: the clock did not \
         stay (a re-initialisation of the card sets the mode's clock again)"
    );
    std::fs::write(&file, "26000000\n").unwrap();
    k.restore().unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "52000000");
    assert_eq!(
        k.restore_commands(),
        [format!("echo 52000000 > {}", file.display())]
    );
}

#[test]
fn the_clock_is_not_put_back_in_another_timing() {
    let (_dir, mut k, file) = knob("mmc high-speed", 26_000_000);
    k.adopt("200000000 timing=mmc_HS200").unwrap();
    k.snapshot().unwrap();
    assert_eq!(k.original().unwrap(), "200000000");
    let err = k.restore().unwrap_err().to_string();
    assert_eq!(
        err,
        "clock: not put back to 200000000 Hz: the card is in mmc high-speed now, not mmc HS200 \
         as mmcab found it (writing the old clock there could overclock it)"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "26000000");
}

/// A config without a clock: the clock the mode's init chose, not the one mmcab found
/// at the start (which belongs to the mode found then).
#[test]
fn a_config_without_a_clock_gets_the_one_the_init_chose() {
    let (_dir, mut k, file) = knob("mmc high-speed", 52_000_000);
    k.adopt("200000000 timing=mmc_HS200").unwrap();
    k.snapshot().unwrap();
    assert_eq!(
        k.left_out().unwrap().unwrap(),
        "52000000",
        "nothing written yet"
    );
    k.apply(&k.normalize("26 MHz").unwrap()).unwrap();
    assert_eq!(
        k.left_out().unwrap().unwrap(),
        "52000000",
        "what was there before"
    );
    k.apply(&k.normalize("13 MHz").unwrap()).unwrap();
    assert_eq!(
        k.left_out().unwrap().unwrap(),
        "52000000",
        "before the first write"
    );
    // A re-initialisation set the mode's clock: that is the one.
    std::fs::write(&file, "48000000\n").unwrap();
    assert_eq!(k.left_out().unwrap().unwrap(), "48000000");
}

#[test]
fn a_clock_in_legacy_is_held_to_the_cards_tran_speed() {
    let (_dir, k, _) = knob("mmc HS200", 200_000_000);
    let legacy = settings(&[("clock", "50000000"), ("speed-mode", "legacy")]);
    let v = k.normalize("50 MHz").unwrap();
    k.check_together(&v, &legacy, false)
        .expect("no TRAN_SPEED known: no ceiling");
    let k = k.with_tran_speed(Some(25_000_000));
    let err = k
        .check_together(&v, &legacy, false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("speed-mode legacy runs at 25000000 Hz"),
        "{err}"
    );
}
