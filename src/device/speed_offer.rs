//! Which eMMC speed modes this kernel, host and card offer, and why not: the per-mode
//! part of `mmcab knobs` (`speed_modes` in its `--json`). For each mode of
//! [`super::speed_modes::TABLE`]: whether the card and the host (its debugfs `caps` and
//! `caps2` as they are now) both offer it on the host's bus, and whether the
//! `speed-mode` knob can switch to it at run time (now, yes, only with `--force`, no),
//! with the reason. The verdicts are [`verdicts`]'; this file reads the inputs from the
//! kernel's files and says what the table's verdicts leave implicit (enhanced strobe).

use super::capabilities::{kernel_version, MMC_CAP_4_BIT_DATA, MMC_CAP_8_BIT_DATA};
use super::ext_csd::read_ext_csd;
use super::ext_csd_table::{CARD_TYPE, STROBE_SUPPORT};
use super::ios::read_ios;
use super::paths::MmcPaths;
use super::speed_modes::{
    caps_for_mode, check_bus_width, strobe_forces_es, verdicts, ModeInputs, Refusal, SpeedMode,
    Verdict, Word, MMC_CAP2_HS400_ES,
};
use serde::Serialize;

/// `speed_modes` of `mmcab knobs --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedOffer {
    /// `uname -r`.
    pub kernel: String,
    /// What the verdicts were made from.
    pub inputs: OfferInputs,
    /// The bus now (debugfs `ios`).
    pub now: NowIos,
    /// One per mode, slowest first.
    pub modes: Vec<ModeOffer>,
    /// Notes that concern HS400 with enhanced strobe (empty when none applies).
    pub notes: Vec<String>,
}

/// The numbers behind the verdicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OfferInputs {
    /// debugfs `caps` / `caps2`, hex.
    pub caps: String,
    pub caps2: String,
    /// EXT_CSD CARD_TYPE [196].
    pub card_type: u8,
    /// EXT_CSD STROBE_SUPPORT [184] (0 below eMMC 5.1).
    pub strobe_support: bool,
    /// The widest bus the host's caps allow: 1, 4 or 8.
    pub host_bus_width: u32,
}

/// What `ios` says the bus runs at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NowIos {
    pub timing: String,
    /// The mode of that timing (None: a timing no eMMC mode has).
    pub mode: Option<String>,
    pub clock_hz: u64,
    pub bus_width: u8,
}

/// Whether the `speed-mode` knob can put the bus in a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    /// The bus is in it now.
    Now,
    /// At run time, as things are.
    Yes,
    /// Only with `--force`: bits the host did not come up with.
    Force,
    /// Not at run time here.
    No,
}

impl Switch {
    pub fn as_str(self) -> &'static str {
        match self {
            Switch::Now => "now",
            Switch::Yes => "yes",
            Switch::Force => "--force",
            Switch::No => "no",
        }
    }
}

/// One mode's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeOffer {
    /// The plan's word: legacy, hs, ddr52, hs200, hs400.
    pub mode: String,
    /// The card and the host (caps/caps2 as they are now) both offer it, on the host's
    /// bus: the core can run it.
    pub offered: bool,
    pub switch: Switch,
    /// Why it is not offered or not switchable (empty when it is both).
    pub reason: String,
}

/// The widest bus `caps` allows.
fn host_bus_width(caps: u32) -> u32 {
    if caps & MMC_CAP_8_BIT_DATA != 0 {
        8
    } else if caps & MMC_CAP_4_BIT_DATA != 0 {
        4
    } else {
        1
    }
}

/// Every mode's line from the inputs, what `ios` says now and the kernel release;
/// `blocker`: why the `speed-mode` knob cannot switch anything on this device (no
/// runtime PM, debugfs `caps` not writable), which makes every switch `no`.
pub fn offer(inputs: &ModeInputs, now: NowIos, kernel: &str, blocker: Option<&str>) -> SpeedOffer {
    let current = SpeedMode::from_ios_timing(&now.timing);
    let modes = verdicts(inputs, current, kernel_version(kernel))
        .into_iter()
        .map(|(mode, verdict)| {
            let mut m = mode_offer(mode, verdict, inputs);
            if let (Some(why), Switch::Yes | Switch::Force) = (blocker, m.switch) {
                m.switch = Switch::No;
                m.reason = match m.reason.is_empty() {
                    true => why.to_string(),
                    false => format!("{why}; {}", m.reason),
                };
            }
            m
        })
        .collect();
    SpeedOffer {
        kernel: kernel.to_string(),
        inputs: OfferInputs {
            caps: format!("0x{:08x}", inputs.caps),
            caps2: format!("0x{:08x}", inputs.caps2),
            card_type: inputs.card_type,
            strobe_support: inputs.strobe_support,
            host_bus_width: inputs.bus_width,
        },
        now: NowIos {
            mode: current.map(|m| m.name().to_string()),
            ..now
        },
        modes,
        notes: strobe_notes(inputs),
    }
}

/// One mode's line: offered (card, host and bus) and the verdict, with every reason
/// that applies (the verdict names only the first: the kernel before the host).
fn mode_offer(mode: SpeedMode, verdict: Verdict, inputs: &ModeInputs) -> ModeOffer {
    let words = (inputs.caps, inputs.caps2);
    let refusal = caps_for_mode(mode, words, words, inputs.card_type, false)
        .err()
        .or_else(|| check_bus_width(mode, inputs.bus_width).err());
    let mut reasons = Vec::new();
    let (switch, why) = match verdict {
        Verdict::Current => (Switch::Now, None),
        Verdict::Offered => (Switch::Yes, None),
        Verdict::NeedsForce(why) => (Switch::Force, Some(why.to_string())),
        Verdict::No(why) => (Switch::No, Some(why)),
    };
    if let Some(why) = why {
        reasons.push(why);
    }
    match &refusal {
        _ if switch == Switch::Now => {}
        // The kernel's reason came first; the host's lack, without its --force advice
        // (no flag makes this kernel write the bits).
        Some(Refusal::Host {
            word, value, lacks, ..
        }) if switch == Switch::No => reasons.push(format!(
            "the host came up without it ({} 0x{value:08x} has none of {})",
            match word {
                Word::Caps => "caps",
                Word::Caps2 => "caps2",
            },
            lacks
                .iter()
                .map(|p| p.host_names)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(other) => {
            let text = other.to_string();
            if !reasons.contains(&text) {
                reasons.push(text);
            }
        }
        None => {}
    }
    ModeOffer {
        mode: mode.name().to_string(),
        offered: refusal.is_none() || switch == Switch::Now,
        switch,
        reason: reasons.join("; "),
    }
}

/// What enhanced strobe changes: `MMC_CAP2_HS400_ES` is not among the bits any
/// kernel's debugfs lets anyone write (`mmc_caps2_set()`), so hs400 is HS400ES where
/// the host came up with it and the card has STROBE_SUPPORT, and never otherwise.
fn strobe_notes(inputs: &ModeInputs) -> Vec<String> {
    let card_hs400 = inputs.card_type & (CARD_TYPE_HS400_ANY) != 0;
    let host_es = inputs.caps2 & MMC_CAP2_HS400_ES != 0;
    if strobe_forces_es(inputs) && card_hs400 {
        vec![
            "hs400 runs with enhanced strobe here (\"mmc HS400 enhanced strobe\"): the host \
             came up with MMC_CAP2_HS400_ES and the card has STROBE_SUPPORT; debugfs never \
             lets MMC_CAP2_HS400_ES be written, so HS400 without the strobe cannot be chosen"
                .to_string(),
        ]
    } else if inputs.strobe_support && card_hs400 && !host_es {
        vec![
            "no enhanced strobe: the card has STROBE_SUPPORT but the host came up without \
             MMC_CAP2_HS400_ES, which debugfs never lets anyone set (not even with --force)"
                .to_string(),
        ]
    } else {
        Vec::new()
    }
}

/// CARD_TYPE's HS400 bits.
const CARD_TYPE_HS400_ANY: u8 =
    super::speed_modes::CARD_TYPE_HS400_1_8V | super::speed_modes::CARD_TYPE_HS400_1_2V;

fn read_hex(path: &std::path::Path) -> Result<u32, String> {
    let text = super::sysfs::read_trimmed(path)
        .map_err(|e| format!("{}: {e:#} (debugfs mounted? run as root)", path.display()))?;
    u32::from_str_radix(text.trim_start_matches("0x"), 16)
        .map_err(|e| format!("{}: '{text}' is not hex: {e}", path.display()))
}

/// The speed modes of the eMMC at `paths` on the kernel `kernel` (`uname -r`), or why
/// they cannot be told: a card that is not an eMMC, an EXT_CSD, `caps` or `ios` that
/// cannot be read.
pub fn read_offer(paths: &MmcPaths, kernel: &str) -> Result<SpeedOffer, String> {
    let card_type = super::sysfs::read_trimmed(paths.card_sysfs.join("type"))
        .unwrap_or_else(|_| "unknown".to_string());
    if card_type != "MMC" {
        return Err(format!(
            "a card of type {card_type} has no eMMC speed modes (EXT_CSD CARD_TYPE is eMMC only)"
        ));
    }
    let caps = read_hex(&paths.host_debugfs.join("caps"))?;
    let caps2 = read_hex(&paths.host_debugfs.join("caps2"))?;
    let (x, _) = read_ext_csd(paths).map_err(|e| format!("cannot read EXT_CSD: {e:#}"))?;
    let ios = read_ios(paths).map_err(|e| format!("{e:#}"))?;
    let inputs = ModeInputs {
        caps,
        caps2,
        card_type: x.get(CARD_TYPE) as u8,
        strobe_support: x.rev() >= STROBE_SUPPORT.since_rev && x.get(STROBE_SUPPORT) != 0,
        bus_width: host_bus_width(caps),
    };
    let now = NowIos {
        timing: ios.timing,
        mode: None,
        clock_hz: ios.clock_hz,
        bus_width: ios.bus_width_bits,
    };
    Ok(offer(&inputs, now, kernel, blocker(paths).as_deref()))
}

/// Why nothing can be switched here whatever the mode: the card's runtime PM (the
/// re-initialisation) or a debugfs `caps` this process cannot write.
fn blocker(paths: &MmcPaths) -> Option<String> {
    let control = paths.card_sysfs.join("power/control");
    if !control.exists() {
        return Some(format!(
            "{} does not exist: the card has no runtime PM, so it cannot be re-initialised in \
             another mode",
            control.display()
        ));
    }
    match super::info_read::caps_writable(&paths.host_debugfs.join("caps")) {
        Some(Err(why)) => Some(format!("debugfs caps not writable: {why}")),
        _ => None,
    }
}

#[cfg(test)]
#[path = "speed_offer_tests.rs"]
mod tests;
