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
//! Pure functions over numbers: the `speed-mode` knob ([`crate::knob::speed_mode`]) and
//! `mmcab knobs`' per-mode verdicts ([`verdicts`]) are built on them.

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
pub const SPEED_CAPS_WRITABLE_SINCE: (u32, u32) = (6, 7);
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
    /// `hs_max_dtr` (52 MHz for an HS_52 card, else 26 MHz), `hs200_max_dtr` (200 MHz);
    /// legacy takes the CSD's TRAN_SPEED (26 MHz at most for eMMC). Capped by the host's
    /// `f_max`.
    pub max_clock_hz: u64,
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
        max_clock_hz: 26_000_000,
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
        max_clock_hz: 52_000_000,
        chosen_when: "MMC_CAP_MMC_HIGHSPEED without the DDR, HS200 and HS400 bits",
    },
    ModeRow {
        mode: SpeedMode::Ddr52,
        name: "ddr52",
        ios_timing: "mmc DDR52",
        needs: &[HS_PAIRS, DDR_PAIRS],
        min_bus_width: 4,
        narrower_falls_back_to: Some(SpeedMode::Hs),
        max_clock_hz: 52_000_000,
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
        max_clock_hz: 200_000_000,
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
        max_clock_hz: 200_000_000,
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

impl std::fmt::Display for SpeedMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What decides the mode: the host's words, the card's CARD_TYPE (EXT_CSD[196]) and
/// STROBE_SUPPORT (EXT_CSD[184]), the bus width the core will select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeInputs {
    pub caps: u32,
    pub caps2: u32,
    pub card_type: u8,
    pub strobe_support: bool,
    pub bus_width: u32,
}

/// The card's modes the host's caps make available: the bits `mmc_select_card_type()`
/// puts in `card->mmc_avail_type` (a CARD_TYPE bit whose host bit is set).
pub fn available_card_type(caps: u32, caps2: u32, card_type: u8) -> u8 {
    let mut avail = 0;
    for p in [HS_PAIRS, DDR_PAIRS, HS200_PAIRS, HS400_PAIRS].concat() {
        let word = match p.word {
            Word::Caps => caps,
            Word::Caps2 => caps2,
        };
        if word & p.host_bits != 0 && card_type & p.card_bit != 0 {
            avail |= p.card_bit;
        }
    }
    avail
}

/// The mode the core ends in when nothing fails, and whether HS400 is with enhanced
/// strobe: `mmc_select_timing()` (HS400ES, else HS200, else HS), then in
/// `mmc_init_card()` HS200 tuning and `mmc_select_hs400()` (8 bits only), or for HS the
/// bus width and `mmc_select_hs_ddr()` (4 or 8 bits). HS200 on a 1-bit host: the
/// switch is skipped (`mmc_select_bus_width()` returns 0) and the card stays legacy.
pub fn chosen_mode(inputs: &ModeInputs) -> (SpeedMode, bool) {
    let avail = available_card_type(inputs.caps, inputs.caps2, inputs.card_type);
    let any = |mask: u8| avail & mask != 0;
    let hs400 = CARD_TYPE_HS400_1_8V | CARD_TYPE_HS400_1_2V;
    let hs200 = CARD_TYPE_HS200_1_8V | CARD_TYPE_HS200_1_2V;
    if inputs.caps2 & MMC_CAP2_HS400_ES != 0 && inputs.strobe_support && any(hs400) {
        return (SpeedMode::Hs400, true);
    }
    if any(hs200) {
        return match inputs.bus_width {
            8 if any(hs400) => (SpeedMode::Hs400, false),
            4 | 8 => (SpeedMode::Hs200, false),
            _ => (SpeedMode::Legacy, false),
        };
    }
    if any(CARD_TYPE_HS_26 | CARD_TYPE_HS_52) {
        let ddr = any(CARD_TYPE_DDR_1_8V | CARD_TYPE_DDR_1_2V) && inputs.bus_width > 1;
        return (if ddr { SpeedMode::Ddr52 } else { SpeedMode::Hs }, false);
    }
    (SpeedMode::Legacy, false)
}

/// Why the caps for a mode cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The card lacks every CARD_TYPE bit of a group the mode needs.
    Card {
        mode: SpeedMode,
        card_type: u8,
        lacks: &'static [Pairing],
    },
    /// The host came up without any bit of a group (for the card's bits): `--force`.
    Host {
        mode: SpeedMode,
        word: Word,
        value: u32,
        lacks: Vec<Pairing>,
    },
    /// The bus is too narrow: the core would stop at `falls_back_to`.
    Bus {
        mode: SpeedMode,
        width: u32,
        falls_back_to: SpeedMode,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Card {
                mode,
                card_type,
                lacks,
            } => write!(
                f,
                "the card cannot do {mode}: EXT_CSD CARD_TYPE 0x{card_type:02x} has none of {}",
                names(
                    lacks
                        .iter()
                        .map(|p| (p.card_name, u32::from(p.card_bit).trailing_zeros()))
                )
            ),
            Refusal::Host {
                mode,
                word,
                value,
                lacks,
            } => write!(
                f,
                "the host came up without {mode} ({} 0x{value:08x} has none of {}); setting \
                 bits the host did not come up with may drive the card in a mode the board \
                 was not designed for: pass --force if you know it can",
                match word {
                    Word::Caps => "caps",
                    Word::Caps2 => "caps2",
                },
                lacks
                    .iter()
                    .map(|p| format!("{} (for the card's {})", p.host_names, p.card_name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Refusal::Bus {
                mode,
                width,
                falls_back_to,
            } => write!(
                f,
                "{mode} needs {} data lines; at {width} bit(s) the core falls back to \
                 {falls_back_to}: ask for {falls_back_to}, or a wider bus-width",
                mode.row().min_bus_width
            ),
        }
    }
}

fn names<'a>(items: impl Iterator<Item = (&'a str, u32)>) -> String {
    items
        .map(|(name, bit)| format!("{name} (bit {bit})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// caps and caps2 that make the core choose `mode`, from the words the host came up
/// with (`original_*`) and the words now (`now_*`: bits outside the speed masks stay as
/// they are now). Per group of the mode: the host's original bits that serve the card;
/// none of them without `force` is a [`Refusal::Host`], with `force` every host bit of
/// the card's pairings. Speed bits of other groups are cleared (narrowing: always
/// allowed). The bus width is not checked here ([`check_bus_width`]).
pub fn caps_for_mode(
    mode: SpeedMode,
    original: (u32, u32),
    now: (u32, u32),
    card_type: u8,
    force: bool,
) -> Result<(u32, u32), Refusal> {
    let (mut caps, mut caps2) = (now.0 & !CAPS_SPEED, now.1 & !CAPS2_SPEED);
    let row = mode.row();
    // HS200 and HS400 keep MMC_CAP_MMC_HIGHSPEED as the host came up with it: its
    // hs_max_dtr is the switch's intermediate clock and the fallback's.
    if matches!(mode, SpeedMode::Hs200 | SpeedMode::Hs400) {
        caps |= original.0 & MMC_CAP_MMC_HIGHSPEED;
    }
    for group in row.needs {
        let card: Vec<&Pairing> = group
            .iter()
            .filter(|p| card_type & p.card_bit != 0)
            .collect();
        if card.is_empty() {
            return Err(Refusal::Card {
                mode,
                card_type,
                lacks: group,
            });
        }
        let word_of = |w: Word, pair: (u32, u32)| match w {
            Word::Caps => pair.0,
            Word::Caps2 => pair.1,
        };
        let had: u32 = card
            .iter()
            .map(|p| word_of(p.word, original) & p.host_bits)
            .fold(0, |a, b| a | b);
        let bits = if had != 0 {
            had
        } else if force {
            card.iter().map(|p| p.host_bits).fold(0, |a, b| a | b)
        } else {
            let word = card[0].word;
            return Err(Refusal::Host {
                mode,
                word,
                value: word_of(word, original),
                lacks: card.into_iter().copied().collect(),
            });
        };
        match card[0].word {
            Word::Caps => caps |= bits,
            Word::Caps2 => caps2 |= bits,
        }
    }
    Ok((caps, caps2))
}

/// A mode on a bus of `width` data lines: refused where the core would fall back (to
/// the mode it would end in: hs400 at 1 bit is legacy, through hs200).
pub fn check_bus_width(mode: SpeedMode, width: u32) -> Result<(), Refusal> {
    let mut falls_back_to = mode;
    while width < falls_back_to.row().min_bus_width {
        match falls_back_to.row().narrower_falls_back_to {
            Some(lower) => falls_back_to = lower,
            None => break,
        }
    }
    if falls_back_to == mode {
        return Ok(());
    }
    Err(Refusal::Bus {
        mode,
        width,
        falls_back_to,
    })
}

/// One mode's verdict on a device (`mmcab knobs`' per-mode lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// What the host and card are in now.
    Current,
    /// The speed-mode knob can switch to it.
    Offered,
    /// Only with `--force` (the reason is a [`Refusal::Host`]).
    NeedsForce(Refusal),
    /// Not here, with why.
    No(String),
}

/// Every mode's verdict for a host in `current` (from `ios`) with these inputs (the
/// words it came up with) on a kernel of this version.
pub fn verdicts(
    inputs: &ModeInputs,
    current: Option<SpeedMode>,
    kernel: Option<(u32, u32)>,
) -> Vec<(SpeedMode, Verdict)> {
    SpeedMode::ALL
        .iter()
        .map(|&mode| (mode, verdict(mode, inputs, current, kernel)))
        .collect()
}

fn verdict(
    mode: SpeedMode,
    inputs: &ModeInputs,
    current: Option<SpeedMode>,
    kernel: Option<(u32, u32)>,
) -> Verdict {
    if current == Some(mode) {
        return Verdict::Current;
    }
    let words = (inputs.caps, inputs.caps2);
    match caps_for_mode(mode, words, words, inputs.card_type, false) {
        Ok(_) => {}
        Err(host @ Refusal::Host { .. }) => {
            if let Err(why) = kernel_can(kernel) {
                return Verdict::No(why);
            }
            return Verdict::NeedsForce(host);
        }
        Err(other) => return Verdict::No(other.to_string()),
    }
    if let Err(bus) = check_bus_width(mode, inputs.bus_width) {
        return Verdict::No(bus.to_string());
    }
    match kernel_can(kernel) {
        Ok(()) => Verdict::Offered,
        Err(why) => Verdict::No(why),
    }
}

/// Whether HS400 on this host is HS400 with enhanced strobe: the core tries it first,
/// and `MMC_CAP2_HS400_ES` is not among the bits debugfs lets anyone clear, so `ios`
/// then reads [`IOS_HS400_ES`] for hs400.
pub fn strobe_forces_es(inputs: &ModeInputs) -> bool {
    inputs.caps2 & MMC_CAP2_HS400_ES != 0 && inputs.strobe_support
}

/// Whether this kernel lets debugfs write the speed bits, or why not.
pub fn kernel_can(kernel: Option<(u32, u32)>) -> Result<(), String> {
    let (maj, min) = SPEED_CAPS_WRITABLE_SINCE;
    match kernel {
        Some(v) if writable_masks(v).is_some() => Ok(()),
        Some((a, b)) => Err(format!(
            "Linux {a}.{b} does not let debugfs write the speed bits of caps/caps2 (writable \
             from {maj}.{min}: \"mmc: debugfs: Allow host caps to be modified\"); A/B the modes \
             across boots with --label"
        )),
        None => Err("the kernel's version is not known".to_string()),
    }
}

#[cfg(test)]
#[path = "speed_modes_tests.rs"]
mod tests;
