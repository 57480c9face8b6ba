//! The speed modes of `mmcab info` (`speed_modes` in `--json`, the "Speed modes" part of
//! the text): what the card says it can run at and is set to (EXT_CSD CARD_TYPE [196],
//! DRIVER_STRENGTH [197], STROBE_SUPPORT [184], HS_TIMING [185], decoded with the
//! EXT_CSD table), and which speed bits the host came up with in its debugfs `caps` and
//! `caps2`. What the bus runs at now is debugfs `ios` (the `ios` part beside it).
//!
//! The host bits are those `mmc_select_card_type()` in drivers/mmc/core/mmc.c (Linux 6.12
//! and 7.2) weighs against CARD_TYPE to choose a mode; their values are those of
//! include/linux/mmc/host.h (the same in 6.12.95 and 7.2.13).

use super::ext_csd::{DecodedValue, ExtCsd};
use super::ext_csd_table::{
    hs_timing_interface, CARD_TYPE, DRIVER_STRENGTH, HS_TIMING, STROBE_SUPPORT,
};
use super::speed_modes::{
    MMC_CAP2_HS200_1_2V_SDR, MMC_CAP2_HS200_1_8V_SDR, MMC_CAP2_HS400_1_2V, MMC_CAP2_HS400_1_8V,
    MMC_CAP2_HS400_ES, MMC_CAP_1_2V_DDR, MMC_CAP_1_8V_DDR, MMC_CAP_3_3V_DDR, MMC_CAP_MMC_HIGHSPEED,
};
use serde::{Deserialize, Serialize};

/// Which debugfs file of the host a bit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapsFile {
    /// `caps` (`mmc_host.caps`).
    Caps,
    /// `caps2` (`mmc_host.caps2`).
    Caps2,
}

/// One speed bit of the host's capabilities: its name and value in
/// include/linux/mmc/host.h, and the mode it lets the core choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostSpeedBit {
    pub name: &'static str,
    pub file: CapsFile,
    pub mask: u32,
    /// What it offers, in JESD84-B51's words.
    pub offers: &'static str,
}

const fn bit(name: &'static str, file: CapsFile, mask: u32, offers: &'static str) -> HostSpeedBit {
    HostSpeedBit {
        name,
        file,
        mask,
        offers,
    }
}

/// The host's speed bits, in the order of include/linux/mmc/host.h (values: the
/// constants of [`super::speed_modes`]).
pub const HOST_SPEED_BITS: &[HostSpeedBit] = &[
    bit(
        "MMC_CAP_MMC_HIGHSPEED",
        CapsFile::Caps,
        MMC_CAP_MMC_HIGHSPEED,
        "HS26 and HS52",
    ),
    bit(
        "MMC_CAP_3_3V_DDR",
        CapsFile::Caps,
        MMC_CAP_3_3V_DDR,
        "DDR52 at 3.3 V",
    ),
    bit(
        "MMC_CAP_1_8V_DDR",
        CapsFile::Caps,
        MMC_CAP_1_8V_DDR,
        "DDR52 at 1.8 V",
    ),
    bit(
        "MMC_CAP_1_2V_DDR",
        CapsFile::Caps,
        MMC_CAP_1_2V_DDR,
        "DDR52 at 1.2 V",
    ),
    bit(
        "MMC_CAP2_HS200_1_8V_SDR",
        CapsFile::Caps2,
        MMC_CAP2_HS200_1_8V_SDR,
        "HS200 at 1.8 V",
    ),
    bit(
        "MMC_CAP2_HS200_1_2V_SDR",
        CapsFile::Caps2,
        MMC_CAP2_HS200_1_2V_SDR,
        "HS200 at 1.2 V",
    ),
    bit(
        "MMC_CAP2_HS400_1_8V",
        CapsFile::Caps2,
        MMC_CAP2_HS400_1_8V,
        "HS400 at 1.8 V",
    ),
    bit(
        "MMC_CAP2_HS400_1_2V",
        CapsFile::Caps2,
        MMC_CAP2_HS400_1_2V,
        "HS400 at 1.2 V",
    ),
    bit(
        "MMC_CAP2_HS400_ES",
        CapsFile::Caps2,
        MMC_CAP2_HS400_ES,
        "HS400 with enhanced strobe",
    ),
];

/// The names of the speed bits set in `value`, a host's `file`.
pub fn host_speed_bits(file: CapsFile, value: u32) -> Vec<String> {
    HOST_SPEED_BITS
        .iter()
        .filter(|b| b.file == file && value & b.mask != 0)
        .map(|b| b.name.to_string())
        .collect()
}

/// `speed_modes` of `mmcab info --json`. Fields in alphabetical order (the JSON's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedModes {
    /// The card's side, from EXT_CSD (None when it could not be read).
    pub card: Option<CardSpeed>,
    /// The host's side, from debugfs `caps` and `caps2`.
    pub host: HostSpeed,
}

/// The card's speed fields: each decoded by the EXT_CSD table (`null` below the
/// EXT_CSD_REV that defines it) and raw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardSpeed {
    /// CARD_TYPE [196]: the modes the card offers (HS_26 ... HS400_1.2V).
    pub card_type: DecodedValue,
    pub card_type_raw: u64,
    /// DRIVER_STRENGTH [197]: the driver strengths (types 0-4) the card supports.
    pub driver_strength: DecodedValue,
    pub driver_strength_raw: u64,
    /// HS_TIMING [185]: what the card is set to now.
    pub hs_timing: HsTiming,
    /// STROBE_SUPPORT [184]: enhanced strobe (HS400ES).
    pub strobe_support: DecodedValue,
    pub strobe_support_raw: u64,
}

/// HS_TIMING [185] in its two nibbles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HsTiming {
    /// High nibble: the driver strength type the host selected.
    pub driver_strength: u8,
    pub raw: u8,
    /// Low nibble: `backwards compatible`, `high speed`, `HS200`, `HS400`.
    pub timing: String,
}

/// The host's speed bits: the names of those set in each file (None: unreadable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSpeed {
    pub caps: Option<Vec<String>>,
    pub caps2: Option<Vec<String>>,
}

impl CardSpeed {
    pub fn new(x: &ExtCsd) -> CardSpeed {
        let hs = x.get(HS_TIMING);
        CardSpeed {
            card_type: x.decode(CARD_TYPE),
            card_type_raw: x.get(CARD_TYPE),
            driver_strength: x.decode(DRIVER_STRENGTH),
            driver_strength_raw: x.get(DRIVER_STRENGTH),
            hs_timing: HsTiming {
                driver_strength: (hs >> 4) as u8,
                raw: hs as u8,
                timing: hs_timing_interface(hs),
            },
            strobe_support: x.decode(STROBE_SUPPORT),
            strobe_support_raw: x.get(STROBE_SUPPORT),
        }
    }
}

impl SpeedModes {
    /// The speed modes of an eMMC (`card_type` `MMC`: the modes are eMMC modes; None for
    /// other cards) from its EXT_CSD and the host's `caps` / `caps2`.
    pub fn new(
        card_type: &str,
        ext_csd: Option<&ExtCsd>,
        caps: Option<u32>,
        caps2: Option<u32>,
    ) -> Option<SpeedModes> {
        (card_type == "MMC").then(|| SpeedModes {
            card: ext_csd.map(CardSpeed::new),
            host: HostSpeed {
                caps: caps.map(|v| host_speed_bits(CapsFile::Caps, v)),
                caps2: caps2.map(|v| host_speed_bits(CapsFile::Caps2, v)),
            },
        })
    }
}

#[cfg(test)]
#[path = "info_speed_tests.rs"]
mod tests;
