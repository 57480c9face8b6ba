//! The eMMC speed modes as the Linux mmc core chooses them, as data: for each mode the
//! card's EXT_CSD CARD_TYPE bits it needs, the host caps/caps2 bits that make the core
//! choose it (and those that must be clear so that a higher mode is not chosen first),
//! the bus width it needs and what the core falls back to on a narrower bus, and which
//! of those bits a kernel lets debugfs write. docs/kernel-facts.md ("Speed modes: what
//! the core chooses from caps, caps2 and CARD_TYPE") cites the source of each row:
//! `mmc_select_card_type()`, `mmc_select_timing()`, `mmc_select_hs200()`,
//! `mmc_select_hs400()`, `mmc_select_hs_ddr()` and `mmc_set_bus_speed()` in
//! drivers/mmc/core/mmc.c, `mmc_caps_set()`/`mmc_caps2_set()` in
//! drivers/mmc/core/debugfs.c, the bit values in include/linux/mmc/host.h and mmc.h
//! (identical in Linux 6.12.118 and 7.2.13).
//!
//! Pure functions over numbers (what the core does with the table: [`choice`]): the
//! `speed-mode` knob ([`crate::knob::speed_mode`]) and `mmcab knobs`' per-mode verdicts
//! ([`verdicts`]) are built on them.

use super::capabilities::{MMC_CAP_4_BIT_DATA, MMC_CAP_8_BIT_DATA};

// include/linux/mmc/host.h (the same values in 6.12 and 7.2).
/// `MMC_CAP_MMC_HIGHSPEED` (caps bit 1): the host can do mmc high-speed timing.
pub const MMC_CAP_MMC_HIGHSPEED: u32 = 1 << 1;
/// `MMC_CAP_3_3V_DDR`, `MMC_CAP_1_8V_DDR`, `MMC_CAP_1_2V_DDR` (caps bits 11, 12, 13).
pub const MMC_CAP_3_3V_DDR: u32 = 1 << 11;
pub const MMC_CAP_1_8V_DDR: u32 = 1 << 12;
pub const MMC_CAP_1_2V_DDR: u32 = 1 << 13;
/// `MMC_CAP_DDR`: the three.
pub const MMC_CAP_DDR: u32 = MMC_CAP_3_3V_DDR | MMC_CAP_1_8V_DDR | MMC_CAP_1_2V_DDR;
/// `MMC_CAP2_HS200_1_8V_SDR`, `MMC_CAP2_HS200_1_2V_SDR` (caps2 bits 5, 6).
pub const MMC_CAP2_HS200_1_8V_SDR: u32 = 1 << 5;
pub const MMC_CAP2_HS200_1_2V_SDR: u32 = 1 << 6;
pub const MMC_CAP2_HS200: u32 = MMC_CAP2_HS200_1_8V_SDR | MMC_CAP2_HS200_1_2V_SDR;
/// `MMC_CAP2_HS400_1_8V`, `MMC_CAP2_HS400_1_2V` (caps2 bits 15, 16).
pub const MMC_CAP2_HS400_1_8V: u32 = 1 << 15;
pub const MMC_CAP2_HS400_1_2V: u32 = 1 << 16;
pub const MMC_CAP2_HS400: u32 = MMC_CAP2_HS400_1_8V | MMC_CAP2_HS400_1_2V;
/// `MMC_CAP2_HS400_ES` (caps2 bit 20): enhanced strobe. No kernel lets debugfs write it.
pub const MMC_CAP2_HS400_ES: u32 = 1 << 20;

/// The caps bits a speed mode is made of (the rest of caps is left as it is).
pub const CAPS_SPEED: u32 = MMC_CAP_MMC_HIGHSPEED | MMC_CAP_DDR;
/// The caps2 bits a speed mode is made of (`MMC_CAP2_HS400_ES` is not writable).
pub const CAPS2_SPEED: u32 = MMC_CAP2_HS200 | MMC_CAP2_HS400;

// include/linux/mmc/mmc.h: EXT_CSD[196] CARD_TYPE.
pub const CARD_TYPE_HS_26: u8 = 1 << 0;
pub const CARD_TYPE_HS_52: u8 = 1 << 1;
pub const CARD_TYPE_DDR_1_8V: u8 = 1 << 2;
pub const CARD_TYPE_DDR_1_2V: u8 = 1 << 3;
pub const CARD_TYPE_HS200_1_8V: u8 = 1 << 4;
pub const CARD_TYPE_HS200_1_2V: u8 = 1 << 5;
pub const CARD_TYPE_HS400_1_8V: u8 = 1 << 6;
pub const CARD_TYPE_HS400_1_2V: u8 = 1 << 7;

/// Where debugfs `caps`/`caps2` became writable for the speed bits: "mmc: debugfs:
/// Allow host caps to be modified", merged for 6.7 with "mmc: core: Always reselect
/// card type" (which makes a re-init of the same card choose again from the caps).
pub const SPEED_CAPS_WRITABLE_SINCE: (u32, u32) = super::caps_gate::CAPS_WRITABLE_SINCE;
/// "mmc: debugfs: Allow more host caps to be modified": the bus-width bits, CMD23 and
/// CQE too (first release 6.19).
pub const MORE_CAPS_WRITABLE_SINCE: (u32, u32) = (6, 19);

/// The bits of `caps` and `caps2` debugfs lets this kernel change (`mmc_caps_set()` and
/// `mmc_caps2_set()` refuse a value that changes any other bit with EINVAL), or None
/// where both files are read-only.
pub fn writable_masks(kernel: (u32, u32)) -> Option<(u32, u32)> {
    const MMC_CAP_AGGRESSIVE_PM: u32 = 1 << 7;
    const MMC_CAP_SD_HIGHSPEED: u32 = 1 << 2;
    const MMC_CAP_UHS: u32 = 0x1f << 16;
    const MMC_CAP_CMD23: u32 = 1 << 30;
    const MMC_CAP2_CQE: u32 = 1 << 23;
    const MMC_CAP2_CQE_DCMD: u32 = 1 << 24;
    if kernel < SPEED_CAPS_WRITABLE_SINCE {
        return None;
    }
    let mut caps = MMC_CAP_AGGRESSIVE_PM
        | MMC_CAP_SD_HIGHSPEED
        | MMC_CAP_MMC_HIGHSPEED
        | MMC_CAP_UHS
        | MMC_CAP_DDR;
    let mut caps2 = MMC_CAP2_HS200 | MMC_CAP2_HS400;
    if kernel >= MORE_CAPS_WRITABLE_SINCE {
        caps |= MMC_CAP_4_BIT_DATA | MMC_CAP_8_BIT_DATA | MMC_CAP_CMD23;
        caps2 |= MMC_CAP2_CQE | MMC_CAP2_CQE_DCMD;
    }
    Some((caps, caps2))
}

/// A speed mode of an eMMC card, slowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpeedMode {
    Legacy,
    Hs,
    Ddr52,
    Hs200,
    Hs400,
}

/// Which word of the host's caps a bit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    Caps,
    Caps2,
}

/// A card's CARD_TYPE bit and the host bits of which one (any) makes the core take it
/// (`mmc_select_card_type()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pairing {
    pub card_bit: u8,
    pub card_name: &'static str,
    pub word: Word,
    pub host_bits: u32,
    pub host_names: &'static str,
}

const HS_PAIRS: &[Pairing] = &[
    pair(
        CARD_TYPE_HS_52,
        "HS_52",
        Word::Caps,
        MMC_CAP_MMC_HIGHSPEED,
        "MMC_CAP_MMC_HIGHSPEED",
    ),
    pair(
        CARD_TYPE_HS_26,
        "HS_26",
        Word::Caps,
        MMC_CAP_MMC_HIGHSPEED,
        "MMC_CAP_MMC_HIGHSPEED",
    ),
];
const DDR_PAIRS: &[Pairing] = &[
    pair(
        CARD_TYPE_DDR_1_8V,
        "DDR_1_8V",
        Word::Caps,
        MMC_CAP_1_8V_DDR | MMC_CAP_3_3V_DDR,
        "MMC_CAP_1_8V_DDR, MMC_CAP_3_3V_DDR",
    ),
    pair(
        CARD_TYPE_DDR_1_2V,
        "DDR_1_2V",
        Word::Caps,
        MMC_CAP_1_2V_DDR,
        "MMC_CAP_1_2V_DDR",
    ),
];
const HS200_PAIRS: &[Pairing] = &[
    pair(
        CARD_TYPE_HS200_1_8V,
        "HS200_1_8V",
        Word::Caps2,
        MMC_CAP2_HS200_1_8V_SDR,
        "MMC_CAP2_HS200_1_8V_SDR",
    ),
    pair(
        CARD_TYPE_HS200_1_2V,
        "HS200_1_2V",
        Word::Caps2,
        MMC_CAP2_HS200_1_2V_SDR,
        "MMC_CAP2_HS200_1_2V_SDR",
    ),
];
const HS400_PAIRS: &[Pairing] = &[
    pair(
        CARD_TYPE_HS400_1_8V,
        "HS400_1_8V",
        Word::Caps2,
        MMC_CAP2_HS400_1_8V,
        "MMC_CAP2_HS400_1_8V",
    ),
    pair(
        CARD_TYPE_HS400_1_2V,
        "HS400_1_2V",
        Word::Caps2,
        MMC_CAP2_HS400_1_2V,
        "MMC_CAP2_HS400_1_2V",
    ),
];

const fn pair(
    card_bit: u8,
    card_name: &'static str,
    word: Word,
    host_bits: u32,
    host_names: &'static str,
) -> Pairing {
    Pairing {
        card_bit,
        card_name,
        word,
        host_bits,
        host_names,
    }
}

/// One row of the table: what a mode needs and how the core gets to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeRow {
    pub mode: SpeedMode,
    /// The plan's word for it.
    pub name: &'static str,
    /// `timing spec:` in debugfs `ios` (`mmc_ios_show()`).
    pub ios_timing: &'static str,
    /// The groups of pairings the mode needs, each satisfied by one of its pairings
    /// (HS400 needs an HS200 pairing as well: the core reaches it from HS200 after
    /// tuning). The card must have a bit of every group.
    pub needs: &'static [&'static [Pairing]],
    /// The fewest data lines it runs on, and the mode the core ends in on fewer.
    pub min_bus_width: u32,
    pub narrower_falls_back_to: Option<SpeedMode>,
    /// The clock `mmc_set_bus_speed()` (or `mmc_select_hs400()`) sets for it, at most:
    /// `hs_max_dtr` (52 MHz for an HS_52 card, else 26 MHz), `hs200_max_dtr` (200 MHz).
    /// None for legacy: it runs at the CSD's TRAN_SPEED, whatever the card says there
    /// (QEMU's emulated eMMC says 100 MHz), see [`max_clock_hz`]. Capped by the host's
    /// `f_max`.
    pub max_clock_hz: Option<u64>,
    /// What makes the core choose it, in words (docs and messages).
    pub chosen_when: &'static str,
}

/// The table, slowest first.
pub const TABLE: [ModeRow; 5] = [
    ModeRow {
        mode: SpeedMode::Legacy,
        name: "legacy",
        ios_timing: "legacy",
        needs: &[],
        min_bus_width: 1,
        narrower_falls_back_to: None,
        max_clock_hz: None,
        chosen_when: "no speed bits: mmc_select_timing() selects nothing and mmc_set_bus_speed() \
                      takes the CSD's TRAN_SPEED",
    },
    ModeRow {
        mode: SpeedMode::Hs,
        name: "hs",
        ios_timing: "mmc high-speed",
        needs: &[HS_PAIRS],
        min_bus_width: 1,
        narrower_falls_back_to: None,
        max_clock_hz: Some(52_000_000),
        chosen_when: "MMC_CAP_MMC_HIGHSPEED without the DDR, HS200 and HS400 bits",
    },
    ModeRow {
        mode: SpeedMode::Ddr52,
        name: "ddr52",
        ios_timing: "mmc DDR52",
        needs: &[HS_PAIRS, DDR_PAIRS],
        min_bus_width: 4,
        narrower_falls_back_to: Some(SpeedMode::Hs),
        max_clock_hz: Some(52_000_000),
        chosen_when: "MMC_CAP_MMC_HIGHSPEED and a DDR bit, without the HS200 and HS400 bits \
                      (DDR52 is tried only after HS, when HS200 is not offered)",
    },
    ModeRow {
        mode: SpeedMode::Hs200,
        name: "hs200",
        ios_timing: "mmc HS200",
        needs: &[HS200_PAIRS],
        min_bus_width: 4,
        narrower_falls_back_to: Some(SpeedMode::Legacy),
        max_clock_hz: Some(200_000_000),
        chosen_when: "an HS200 bit of caps2 without the HS400 bits (MMC_CAP_MMC_HIGHSPEED \
                      too: mmc_select_hs200() switches at hs_max_dtr first, and a failed \
                      switch falls back to HS)",
    },
    ModeRow {
        mode: SpeedMode::Hs400,
        name: "hs400",
        ios_timing: "mmc HS400",
        needs: &[HS200_PAIRS, HS400_PAIRS],
        min_bus_width: 8,
        narrower_falls_back_to: Some(SpeedMode::Hs200),
        max_clock_hz: Some(200_000_000),
        chosen_when: "an HS200 and an HS400 bit of caps2 on an 8-bit bus (mmc_select_hs400() \
                      after HS200 tuning)",
    },
];

/// `ios` names HS400 with enhanced strobe this way.
pub const IOS_HS400_ES: &str = "mmc HS400 enhanced strobe";

/// Every `timing spec:` `mmc_ios_show()` prints (drivers/mmc/core/debugfs.c, 6.12 and
/// 7.2), the SD ones too.
pub const IOS_TIMINGS: [&str; 12] = [
    "legacy",
    "mmc high-speed",
    "sd high-speed",
    "sd uhs SDR12",
    "sd uhs SDR25",
    "sd uhs SDR50",
    "sd uhs SDR104",
    "sd uhs DDR50",
    "mmc DDR52",
    "mmc HS200",
    "mmc HS400",
    IOS_HS400_ES,
];

/// Whether `ios` timing `found` is what a plan's `expect.timing` asks for: a mode's
/// word (`hs200`) matches its timing (HS400 with enhanced strobe is `hs400`), anything
/// else is compared as `ios` prints it.
pub fn timing_matches(found: &str, want: &str) -> bool {
    match SpeedMode::parse(want) {
        Some(mode) => SpeedMode::from_ios_timing(found) == Some(mode),
        None => found == want,
    }
}

/// A plan's `expect.timing`, checked before any I/O: a mode's word or a timing `ios`
/// prints, else why not.
pub fn check_expected_timing(want: &str) -> Result<(), String> {
    if SpeedMode::parse(want).is_some() || IOS_TIMINGS.contains(&want) {
        return Ok(());
    }
    Err(format!(
        "expect.timing = \"{want}\" is neither a speed mode (legacy, hs, ddr52, hs200, hs400) \
         nor a timing debugfs ios prints (\"{}\")",
        IOS_TIMINGS.join("\", \"")
    ))
}

impl SpeedMode {
    pub const ALL: [SpeedMode; 5] = [
        SpeedMode::Legacy,
        SpeedMode::Hs,
        SpeedMode::Ddr52,
        SpeedMode::Hs200,
        SpeedMode::Hs400,
    ];

    pub fn row(self) -> &'static ModeRow {
        &TABLE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// A plan's word for a mode (case and `-`/`_` ignored; `hs52`, `high-speed` and
    /// `ddr` are taken too).
    pub fn parse(word: &str) -> Option<SpeedMode> {
        let w: String = word
            .trim()
            .chars()
            .filter(|c| *c != '-' && *c != '_' && *c != ' ')
            .collect::<String>()
            .to_ascii_lowercase();
        Some(match w.as_str() {
            "legacy" => SpeedMode::Legacy,
            "hs" | "hs52" | "highspeed" => SpeedMode::Hs,
            "ddr52" | "ddr" => SpeedMode::Ddr52,
            "hs200" => SpeedMode::Hs200,
            "hs400" => SpeedMode::Hs400,
            _ => return None,
        })
    }

    /// The mode whose `ios` timing this is (HS400 with enhanced strobe is HS400).
    pub fn from_ios_timing(timing: &str) -> Option<SpeedMode> {
        if timing == IOS_HS400_ES {
            return Some(SpeedMode::Hs400);
        }
        TABLE
            .iter()
            .find(|r| r.ios_timing == timing)
            .map(|r| r.mode)
    }
}

/// The most the core clocks `mode` at: the table's, or for legacy the card's CSD
/// TRAN_SPEED (`tran_speed_hz`, from sysfs `csd`), when known.
pub fn max_clock_hz(mode: SpeedMode, tran_speed_hz: Option<u64>) -> Option<u64> {
    mode.row().max_clock_hz.or(tran_speed_hz)
}

impl std::fmt::Display for SpeedMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod choice;
pub use choice::{
    available_card_type, caps_for_mode, check_bus_width, chosen_mode, kernel_can, strobe_forces_es,
    verdicts, ModeInputs, Refusal, Verdict,
};

#[cfg(test)]
#[path = "speed_modes_tests.rs"]
mod tests;
