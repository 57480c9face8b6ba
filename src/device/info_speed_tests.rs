//! Tests of [`super::SpeedModes`] on the captures of real kernels.

use super::*;
use crate::device::capture::Capture;

fn hex_u32(s: &str) -> u32 {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
}

/// (EXT_CSD, caps, caps2) of a capture in tests/fixtures/qemu-emmc.
fn capture(which: &str) -> (ExtCsd, u32, u32) {
    let cap = Capture::load(which);
    (
        ExtCsd::from_hex(cap.get("ext_csd").unwrap()).unwrap(),
        hex_u32(cap.get("caps").unwrap()),
        hex_u32(cap.get("caps2").unwrap()),
    )
}

#[test]
fn host_bits_have_the_values_of_host_h() {
    let value = |name: &str| {
        HOST_SPEED_BITS
            .iter()
            .find(|b| b.name == name)
            .map(|b| (b.file, b.mask))
            .unwrap()
    };
    assert_eq!(value("MMC_CAP_MMC_HIGHSPEED"), (CapsFile::Caps, 0x2));
    assert_eq!(value("MMC_CAP_3_3V_DDR"), (CapsFile::Caps, 0x800));
    assert_eq!(value("MMC_CAP_1_8V_DDR"), (CapsFile::Caps, 0x1000));
    assert_eq!(value("MMC_CAP_1_2V_DDR"), (CapsFile::Caps, 0x2000));
    assert_eq!(value("MMC_CAP2_HS200_1_8V_SDR"), (CapsFile::Caps2, 0x20));
    assert_eq!(value("MMC_CAP2_HS200_1_2V_SDR"), (CapsFile::Caps2, 0x40));
    assert_eq!(value("MMC_CAP2_HS400_1_8V"), (CapsFile::Caps2, 0x8000));
    assert_eq!(value("MMC_CAP2_HS400_1_2V"), (CapsFile::Caps2, 0x10000));
    assert_eq!(value("MMC_CAP2_HS400_ES"), (CapsFile::Caps2, 0x100000));
}

/// QEMU's eMMC 4.3 behind sdhci-aspeed: HS26/HS52 only, set to high speed; the host
/// offers high speed and nothing faster, and the fields of eMMC 5.0/5.1 are not defined.
#[test]
fn qemu_card_offers_hs52_and_its_host_high_speed_only() {
    for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
        let (x, caps, caps2) = capture(which);
        let s = SpeedModes::new("MMC", Some(&x), Some(caps), Some(caps2)).unwrap();
        let c = s.card.as_ref().unwrap();
        assert_eq!(c.card_type_raw, 0x03, "{which}");
        assert_eq!(
            c.card_type,
            DecodedValue::Flags(vec!["HS_26".into(), "HS_52".into()])
        );
        assert_eq!(c.driver_strength, DecodedValue::NotDefined);
        assert_eq!(c.strobe_support, DecodedValue::NotDefined);
        assert_eq!(
            c.hs_timing,
            HsTiming {
                driver_strength: 0,
                raw: 1,
                timing: "high speed".into()
            }
        );
        assert_eq!(s.host.caps, Some(vec!["MMC_CAP_MMC_HIGHSPEED".to_string()]));
        assert_eq!(s.host.caps2, Some(vec![]));
    }
}

/// Every bit of CARD_TYPE and DRIVER_STRENGTH by its name, HS_TIMING's two nibbles and
/// STROBE_SUPPORT, on an eMMC 5.1 register that sets them all.
#[test]
fn every_card_type_and_driver_strength_bit_is_named() {
    let mut x = ExtCsd { raw: [0; 512] };
    x.raw[192] = 8;
    x.raw[196] = 0xff;
    x.raw[197] = 0x1f;
    x.raw[184] = 1;
    x.raw[185] = 0x13;
    let c = CardSpeed::new(&x);
    assert_eq!(
        c.card_type.to_string(),
        "HS_26 HS_52 DDR_52_1.8V_3V DDR_52_1.2V HS200_1.8V HS200_1.2V HS400_1.8V HS400_1.2V"
    );
    assert_eq!(
        c.driver_strength.to_string(),
        "type 0 type 1 type 2 type 3 type 4"
    );
    assert_eq!(c.strobe_support, DecodedValue::Bool(true));
    assert_eq!(
        (c.hs_timing.timing.as_str(), c.hs_timing.driver_strength),
        ("HS400", 1)
    );
    x.raw[185] = 0x07;
    assert_eq!(CardSpeed::new(&x).hs_timing.timing, "reserved (7)");
}

#[test]
fn host_bits_are_named_per_file_and_other_cards_have_none() {
    let s = SpeedModes::new("MMC", None, Some(0x1802), Some(0x0019_8060)).unwrap();
    assert_eq!(s.card, None);
    assert_eq!(
        s.host.caps.unwrap(),
        [
            "MMC_CAP_MMC_HIGHSPEED",
            "MMC_CAP_3_3V_DDR",
            "MMC_CAP_1_8V_DDR"
        ]
    );
    assert_eq!(
        s.host.caps2.unwrap(),
        [
            "MMC_CAP2_HS200_1_8V_SDR",
            "MMC_CAP2_HS200_1_2V_SDR",
            "MMC_CAP2_HS400_1_8V",
            "MMC_CAP2_HS400_1_2V",
            "MMC_CAP2_HS400_ES"
        ]
    );
    assert_eq!(
        SpeedModes::new("MMC", None, None, None).unwrap().host.caps,
        None
    );
    assert_eq!(SpeedModes::new("SD", None, Some(0x2), Some(0)), None);
}

/// The simulated eMMC 5.1 booted `hs200=1` at 8 bits (testbed/run --card sim,hs200=1):
/// it offers HS200 at 1.8 V beside HS52, all five driver strengths and no enhanced
/// strobe, and the core set it to HS200; the host came up with HS200 at 1.8 V only.
#[test]
fn simulated_card_booted_hs200_offers_and_runs_hs200() {
    for which in ["cap-sim-hs200-linux6.txt", "cap-sim-hs200-linux7.txt"] {
        let (x, caps, caps2) = capture(which);
        let s = SpeedModes::new("MMC", Some(&x), Some(caps), Some(caps2)).unwrap();
        let c = s.card.as_ref().unwrap();
        assert_eq!(c.card_type_raw, 0x13, "{which}");
        assert_eq!(c.card_type.to_string(), "HS_26 HS_52 HS200_1.8V");
        assert_eq!(c.driver_strength_raw, 0x1f);
        assert_eq!(
            c.driver_strength.to_string(),
            "type 0 type 1 type 2 type 3 type 4"
        );
        assert_eq!(c.strobe_support, DecodedValue::Bool(false));
        assert_eq!((c.hs_timing.raw, c.hs_timing.timing.as_str()), (2, "HS200"));
        assert_eq!(s.host.caps, Some(vec!["MMC_CAP_MMC_HIGHSPEED".to_string()]));
        assert_eq!(
            s.host.caps2,
            Some(vec!["MMC_CAP2_HS200_1_8V_SDR".to_string()])
        );
        let ios = crate::device::Ios::parse(Capture::load(which).get("ios").unwrap()).unwrap();
        assert_eq!(
            (ios.timing.as_str(), ios.clock_hz),
            ("mmc HS200", 200_000_000)
        );
        assert_eq!(ios.bus_width_bits, 8);
    }
}

/// The simulated card with every mode offered (testbed/run --card
/// sim,card_ddr52=1,card_hs200=1,card_hs400=1,host_ddr=1,host_hs200=1,host_hs400=1, 8
/// bits): HS400 on 6.12; the same with strobe_support=1,host_hs400es=1: HS400 with
/// enhanced strobe on 7.2; DDR52 only (card_ddr52=1,host_ddr=1) on 7.2.
#[test]
fn simulated_card_in_ddr52_hs400_and_hs400es() {
    for (which, card_type, strobe, hs_timing, caps, caps2, ios_timing, clock) in [
        (
            "cap-sim-hs400-linux6.txt",
            "HS_26 HS_52 DDR_52_1.8V_3V HS200_1.8V HS400_1.8V",
            false,
            (3, "HS400"),
            vec!["MMC_CAP_MMC_HIGHSPEED", "MMC_CAP_1_8V_DDR"],
            vec!["MMC_CAP2_HS200_1_8V_SDR", "MMC_CAP2_HS400_1_8V"],
            "mmc HS400",
            200_000_000,
        ),
        (
            "cap-sim-hs400es-linux7.txt",
            "HS_26 HS_52 DDR_52_1.8V_3V HS200_1.8V HS400_1.8V",
            true,
            (3, "HS400"),
            vec!["MMC_CAP_MMC_HIGHSPEED", "MMC_CAP_1_8V_DDR"],
            vec![
                "MMC_CAP2_HS200_1_8V_SDR",
                "MMC_CAP2_HS400_1_8V",
                "MMC_CAP2_HS400_ES",
            ],
            "mmc HS400 enhanced strobe",
            200_000_000,
        ),
        (
            "cap-sim-ddr52-linux7.txt",
            "HS_26 HS_52 DDR_52_1.8V_3V",
            false,
            (1, "high speed"),
            vec!["MMC_CAP_MMC_HIGHSPEED", "MMC_CAP_1_8V_DDR"],
            vec![],
            "mmc DDR52",
            52_000_000,
        ),
    ] {
        let (x, c, c2) = capture(which);
        let s = SpeedModes::new("MMC", Some(&x), Some(c), Some(c2)).unwrap();
        let card = s.card.as_ref().unwrap();
        assert_eq!(card.card_type.to_string(), card_type, "{which}");
        assert_eq!(card.strobe_support, DecodedValue::Bool(strobe), "{which}");
        assert_eq!(
            (card.hs_timing.raw & 0xf, card.hs_timing.timing.as_str()),
            hs_timing,
            "{which}"
        );
        assert_eq!(s.host.caps.unwrap(), caps, "{which}");
        assert_eq!(s.host.caps2.unwrap(), caps2, "{which}");
        let ios = crate::device::Ios::parse(Capture::load(which).get("ios").unwrap()).unwrap();
        assert_eq!(
            (ios.timing.as_str(), ios.clock_hz),
            (ios_timing, clock),
            "{which}"
        );
    }
}
