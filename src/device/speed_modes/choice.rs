//! What the mmc core does with the table of [`super`]: the mode it chooses from a
//! host's words and a card's CARD_TYPE, the words that make it choose a mode (or why
//! they cannot be written), and each mode's verdict on a device.

use super::{writable_masks, Pairing};
use super::{
    SpeedMode, Word, CAPS2_SPEED, CAPS_SPEED, CARD_TYPE_DDR_1_2V, CARD_TYPE_DDR_1_8V,
    CARD_TYPE_HS200_1_2V, CARD_TYPE_HS200_1_8V, CARD_TYPE_HS400_1_2V, CARD_TYPE_HS400_1_8V,
    CARD_TYPE_HS_26, CARD_TYPE_HS_52, DDR_PAIRS, HS200_PAIRS, HS400_PAIRS, HS_PAIRS,
    MMC_CAP2_HS400_ES, MMC_CAP_MMC_HIGHSPEED, SPEED_CAPS_WRITABLE_SINCE,
};

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
             from {maj}.{min}: \"mmc: debugfs: Allow host caps to be modified\"); {}",
            crate::device::caps_gate::ROUTE_SPEED_MODE
        )),
        None => Err("the kernel's version is not known".to_string()),
    }
}
