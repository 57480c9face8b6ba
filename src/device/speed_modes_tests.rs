use super::*;

/// An eMMC with HS200 at 1.8 V (CARD_TYPE HS_26 | HS_52 | HS200_1_8V) on an 8-bit host
/// offering HS and HS200 but no DDR, its words as Linux 6.12.95 printed them for such a
/// host (caps2: HS200_1_8V_SDR, NO_SDIO and NO_SD).
const HS200_CAPS: u32 = 0x4000_0343;
const HS200_CAPS2: u32 = 0x0028_0020;
const HS200_CARD: u8 = 0x13;
/// QEMU's emulated eMMC (CARD_TYPE 0x03) at 8 bits on Linux 7.2.13.
const QEMU_CAPS: u32 = 0x4000_014f;
const QEMU_CAPS2: u32 = 0x0002_0000;
const QEMU_CARD: u8 = 0x03;
/// A card with every mode at 1.8 V, and a host that offers them all.
const FULL_CARD: u8 = 0x57;
const FULL_CAPS: u32 = 0x4000_1343;
const FULL_CAPS2: u32 = MMC_CAP2_HS200_1_8V_SDR | MMC_CAP2_HS400_1_8V;

fn inputs(caps: u32, caps2: u32, card_type: u8, bus_width: u32) -> ModeInputs {
    ModeInputs {
        caps,
        caps2,
        card_type,
        strobe_support: false,
        bus_width,
    }
}

#[test]
fn the_bit_values_are_the_kernels() {
    // include/linux/mmc/host.h and mmc.h, Linux 6.12.118 and 7.2.13.
    assert_eq!(MMC_CAP_MMC_HIGHSPEED, 0x2);
    assert_eq!(MMC_CAP_DDR, 0x3800);
    assert_eq!(MMC_CAP2_HS200, 0x60);
    assert_eq!(MMC_CAP2_HS400, 0x18000);
    assert_eq!(MMC_CAP2_HS400_ES, 0x100000);
    assert_eq!(
        [
            CARD_TYPE_HS_26,
            CARD_TYPE_HS_52,
            CARD_TYPE_DDR_1_8V,
            CARD_TYPE_HS400_1_2V
        ],
        [1, 2, 4, 0x80]
    );
}

#[test]
fn the_testbed_hosts_come_up_in_the_mode_the_core_chose() {
    // Seen: the simulated card at 200 MHz in "mmc HS200", QEMU's at 52 MHz in
    // "mmc high-speed" (tests/fixtures/qemu-emmc/cap-linux7-bus8.txt).
    assert_eq!(
        chosen_mode(&inputs(HS200_CAPS, HS200_CAPS2, HS200_CARD, 8)).0,
        SpeedMode::Hs200
    );
    assert_eq!(
        chosen_mode(&inputs(QEMU_CAPS, QEMU_CAPS2, QEMU_CARD, 8)).0,
        SpeedMode::Hs
    );
    // Clearing the HS200 bits took 6.12 to "mmc high-speed" (0x00280020 -> 0x00280000).
    let (caps, caps2) = caps_for_mode(
        SpeedMode::Hs,
        (HS200_CAPS, HS200_CAPS2),
        (HS200_CAPS, HS200_CAPS2),
        HS200_CARD,
        false,
    )
    .unwrap();
    assert_eq!((caps, caps2), (HS200_CAPS, 0x0028_0000));
    assert_eq!(
        chosen_mode(&inputs(caps, caps2, HS200_CARD, 8)).0,
        SpeedMode::Hs
    );
}

/// Every mode's caps make the core choose that mode, on every bus it runs on, and
/// the narrower bus falls back where the table says.
#[test]
fn the_caps_of_each_mode_make_the_core_choose_it() {
    for mode in SpeedMode::ALL {
        let words = (FULL_CAPS, FULL_CAPS2);
        let (caps, caps2) = caps_for_mode(mode, words, words, FULL_CARD, false).unwrap();
        assert_eq!(
            caps & !CAPS_SPEED,
            FULL_CAPS & !CAPS_SPEED,
            "{mode}: other bits kept"
        );
        assert_eq!(caps2 & !CAPS2_SPEED, FULL_CAPS2 & !CAPS2_SPEED, "{mode}");
        for width in [1, 4, 8] {
            let chosen = chosen_mode(&inputs(caps, caps2, FULL_CARD, width)).0;
            let row = mode.row();
            match check_bus_width(mode, width) {
                Ok(()) => assert_eq!(chosen, mode, "{mode} at {width} bits"),
                Err(Refusal::Bus { falls_back_to, .. }) => {
                    assert!(width < row.min_bus_width);
                    assert_eq!(chosen, falls_back_to, "{mode} at {width} bits");
                }
                Err(other) => panic!("{other}"),
            }
        }
    }
}

#[test]
fn a_mode_is_its_bits_exactly() {
    let words = (FULL_CAPS, FULL_CAPS2);
    let bits = |mode| caps_for_mode(mode, words, words, FULL_CARD, false).unwrap();
    let hs = MMC_CAP_MMC_HIGHSPEED;
    assert_eq!(bits(SpeedMode::Legacy), (FULL_CAPS & !CAPS_SPEED, 0));
    assert_eq!(bits(SpeedMode::Hs), (FULL_CAPS & !CAPS_SPEED | hs, 0));
    assert_eq!(
        bits(SpeedMode::Ddr52),
        (FULL_CAPS & !CAPS_SPEED | hs | MMC_CAP_1_8V_DDR, 0),
        "the DDR bit the host came up with, not 3.3 V too"
    );
    // HS200 clears the HS400 bits (else the core goes on to HS400 at 8 bits) and DDR
    // (a failed HS200 switch then falls back to HS, not DDR52).
    assert_eq!(
        bits(SpeedMode::Hs200),
        (FULL_CAPS & !CAPS_SPEED | hs, MMC_CAP2_HS200_1_8V_SDR)
    );
    assert_eq!(
        bits(SpeedMode::Hs400),
        (FULL_CAPS & !CAPS_SPEED | hs, FULL_CAPS2)
    );
}

#[test]
fn setting_a_bit_the_host_did_not_come_up_with_needs_force() {
    let words = (HS200_CAPS, HS200_CAPS2);
    let card = HS200_CARD | CARD_TYPE_DDR_1_8V | CARD_TYPE_HS400_1_8V;
    let err = caps_for_mode(SpeedMode::Ddr52, words, words, card, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the host came up without ddr52 (caps 0x40000343 has none of MMC_CAP_1_8V_DDR, \
         MMC_CAP_3_3V_DDR (for the card's DDR_1_8V)); setting bits the host did not come up \
         with may drive the card in a mode the board was not designed for: pass --force if \
         you know it can"
    );
    let (caps, _) = caps_for_mode(SpeedMode::Ddr52, words, words, card, true).unwrap();
    assert_eq!(caps & MMC_CAP_DDR, MMC_CAP_1_8V_DDR | MMC_CAP_3_3V_DDR);
    let err = caps_for_mode(SpeedMode::Hs400, words, words, card, false).unwrap_err();
    assert!(
        matches!(
            err,
            Refusal::Host {
                word: Word::Caps2,
                value: HS200_CAPS2,
                ..
            }
        ),
        "{err}"
    );
    let (_, caps2) = caps_for_mode(SpeedMode::Hs400, words, words, card, true).unwrap();
    assert_eq!(
        caps2 & CAPS2_SPEED,
        MMC_CAP2_HS200_1_8V_SDR | MMC_CAP2_HS400_1_8V
    );
    // Narrowing from what the host came up with is allowed after another mode: the
    // original words decide, not those of the mode switched to before.
    let now = caps_for_mode(SpeedMode::Legacy, words, words, HS200_CARD, false).unwrap();
    assert_eq!(
        caps_for_mode(SpeedMode::Hs200, words, now, HS200_CARD, false),
        Ok(words)
    );
}

#[test]
fn a_mode_the_card_cannot_do_is_refused_even_with_force() {
    let words = (FULL_CAPS, FULL_CAPS2);
    for force in [false, true] {
        let err = caps_for_mode(SpeedMode::Hs200, words, words, QEMU_CARD, force).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the card cannot do hs200: EXT_CSD CARD_TYPE 0x03 has none of HS200_1_8V (bit 4), \
             HS200_1_2V (bit 5)"
        );
    }
    let err = caps_for_mode(SpeedMode::Hs400, words, words, HS200_CARD, true).unwrap_err();
    assert!(
        err.to_string()
            .contains("none of HS400_1_8V (bit 6), HS400_1_2V (bit 7)"),
        "{err}"
    );
    assert!(caps_for_mode(SpeedMode::Legacy, words, words, 0, false).is_ok());
}

#[test]
fn a_narrow_bus_names_the_fallback() {
    assert_eq!(
        check_bus_width(SpeedMode::Hs400, 4)
            .unwrap_err()
            .to_string(),
        "hs400 needs 8 data lines; at 4 bit(s) the core falls back to hs200: ask for hs200, \
         or a wider bus-width"
    );
    assert!(check_bus_width(SpeedMode::Hs200, 4).is_ok());
    assert!(matches!(
        check_bus_width(SpeedMode::Ddr52, 1),
        Err(Refusal::Bus {
            falls_back_to: SpeedMode::Hs,
            ..
        })
    ));
    assert!(check_bus_width(SpeedMode::Hs, 1).is_ok());
}

#[test]
fn enhanced_strobe_wins_over_hs200_and_goes_with_the_hs400_bits() {
    let mut i = inputs(FULL_CAPS, FULL_CAPS2 | MMC_CAP2_HS400_ES, FULL_CARD, 4);
    i.strobe_support = true;
    assert_eq!(chosen_mode(&i), (SpeedMode::Hs400, true));
    assert!(strobe_forces_es(&i));
    let words = (i.caps, i.caps2);
    let (_, caps2) = caps_for_mode(SpeedMode::Hs200, words, words, FULL_CARD, false).unwrap();
    assert_eq!(
        caps2 & MMC_CAP2_HS400_ES,
        MMC_CAP2_HS400_ES,
        "not writable: kept"
    );
    i.caps2 = caps2;
    assert_eq!(chosen_mode(&i), (SpeedMode::Hs200, false));
}

#[test]
fn debugfs_takes_the_speed_bits_from_6_7_and_the_bus_bits_from_6_19() {
    assert_eq!(writable_masks((6, 6)), None);
    let (caps, caps2) = writable_masks((6, 12)).unwrap();
    assert_eq!(caps & CAPS_SPEED, CAPS_SPEED);
    assert_eq!(caps2, CAPS2_SPEED);
    assert_eq!(caps & (MMC_CAP_4_BIT_DATA | MMC_CAP_8_BIT_DATA), 0);
    assert_eq!(caps2 & MMC_CAP2_HS400_ES, 0);
    // 6.12's mask, as drivers/mmc/core/debugfs.c mmc_caps_set() spells it.
    assert_eq!(caps, 0x001f_3886);
    let (caps, caps2) = writable_masks((7, 2)).unwrap();
    assert_eq!(caps, 0x401f_38c7);
    assert_eq!(caps2, 0x0181_8060);
    assert!(kernel_can(Some((6, 1)))
        .unwrap_err()
        .contains("writable from 6.7"));
}

#[test]
fn verdicts_on_the_testbed() {
    let hs200 = inputs(HS200_CAPS, HS200_CAPS2, HS200_CARD, 8);
    let v = verdicts(&hs200, Some(SpeedMode::Hs200), Some((6, 12)));
    let of = |mode| v.iter().find(|(m, _)| *m == mode).unwrap().1.clone();
    assert_eq!(of(SpeedMode::Hs200), Verdict::Current);
    assert_eq!(of(SpeedMode::Hs), Verdict::Offered);
    assert_eq!(of(SpeedMode::Legacy), Verdict::Offered);
    assert!(matches!(of(SpeedMode::Ddr52), Verdict::No(why) if why.contains("cannot do ddr52")));
    assert!(matches!(of(SpeedMode::Hs400), Verdict::No(why) if why.contains("HS400_1_8V")));
    // A DDR-capable card on a host that came up without DDR: --force.
    let ddr = inputs(HS200_CAPS, HS200_CAPS2, HS200_CARD | CARD_TYPE_DDR_1_8V, 8);
    let v = verdicts(&ddr, Some(SpeedMode::Hs200), Some((7, 2)));
    assert!(matches!(v[2].1, Verdict::NeedsForce(Refusal::Host { .. })));
    // Before 6.7 nothing but the current mode.
    let v = verdicts(&hs200, Some(SpeedMode::Hs200), Some((6, 1)));
    assert!(matches!(&v[1].1, Verdict::No(why) if why.contains("across boots")));
    // hs400 on a 4-bit bus names the fallback.
    let full4 = inputs(FULL_CAPS, FULL_CAPS2, FULL_CARD, 4);
    let v = verdicts(&full4, Some(SpeedMode::Hs200), Some((7, 2)));
    assert!(matches!(&v[4].1, Verdict::No(why) if why.contains("falls back to hs200")));
}

#[test]
fn words_and_ios_timings() {
    for mode in SpeedMode::ALL {
        assert_eq!(SpeedMode::parse(mode.name()), Some(mode));
        assert_eq!(
            SpeedMode::from_ios_timing(mode.row().ios_timing),
            Some(mode)
        );
    }
    assert_eq!(SpeedMode::parse("HS-200"), Some(SpeedMode::Hs200));
    assert_eq!(SpeedMode::parse("hs52"), Some(SpeedMode::Hs));
    assert_eq!(SpeedMode::parse("sdr104"), None);
    assert_eq!(
        SpeedMode::from_ios_timing(IOS_HS400_ES),
        Some(SpeedMode::Hs400)
    );
    assert_eq!(SpeedMode::from_ios_timing("sd uhs SDR104"), None);
}

#[test]
fn expect_timing_takes_a_mode_or_an_ios_timing() {
    assert!(timing_matches("mmc HS200", "hs200"));
    assert!(timing_matches(IOS_HS400_ES, "hs400"));
    assert!(!timing_matches("mmc high-speed", "hs200"));
    assert!(timing_matches("mmc high-speed", "mmc high-speed"));
    assert!(!timing_matches("mmc high-speed", "mmc HS200"));
    assert!(check_expected_timing("HS200").is_ok());
    assert!(check_expected_timing("sd uhs SDR104").is_ok());
    let err = check_expected_timing("mmc HS-200").unwrap_err();
    assert!(
        err.starts_with("expect.timing = \"mmc HS-200\" is neither a speed mode"),
        "{err}"
    );
}
