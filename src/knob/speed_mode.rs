//! The built-in `speed-mode` knob: legacy, hs, ddr52, hs200 or hs400, switched by
//! writing the speed bits of the host's debugfs `caps` and `caps2` (the table of
//! [`crate::device::speed_modes`]) and re-initialising the card through runtime PM
//! ([`super::caps`], as `bus-width` does), verified in `ios` (timing spec and clock).

use super::attribute::{read_attribute, write_attribute};
use super::bus_width::caps_bus_width;
use super::caps::{parse_caps, CapsRefused, HostCaps};
use super::env::{unavailable, KnobEnv};
use super::{shell_quote, Knob, Saved, Settings, Value};
use crate::device::capabilities::{kernel_version, MMC_CAP_AGGRESSIVE_PM};
use crate::device::caps_gate::{read_only_refusal, ROUTE_SPEED_MODE};
use crate::device::ext_csd_table::{CARD_TYPE, STROBE_SUPPORT};
use crate::device::ios::Ios;
use crate::device::speed_modes::{
    caps_for_mode, check_bus_width, kernel_can, max_clock_hz, Refusal, SpeedMode, IOS_HS400_ES,
};
use anyhow::{bail, Context, Result};

/// The identification clock's ceiling: a card whose re-init failed stays at it.
const IDENTIFICATION_HZ: u64 = 400_000;

/// What the knob remembers of the host and card when mmcab found them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    caps: u32,
    caps2: u32,
    /// The mode `ios` showed (its timing spec when it is none of the five).
    mode: String,
    control: String,
}

/// The built-in `speed-mode` knob.
pub struct SpeedModeKnob {
    host: HostCaps,
    /// EXT_CSD[196] CARD_TYPE of the card.
    card_type: u8,
    /// Reads `ios` (card must be active).
    read_ios: Box<dyn Fn() -> Result<Ios> + Send>,
    original: Option<Found>,
    /// The card's CSD TRAN_SPEED: the clock of legacy.
    tran_speed_hz: Option<u64>,
}

/// The mode `ios` shows, in the plan's words, or its timing spec when it is none of them.
pub fn mode_word(ios: &Ios) -> String {
    match SpeedMode::from_ios_timing(&ios.timing) {
        Some(mode) => mode.name().to_string(),
        None => ios.timing.clone(),
    }
}

/// A clock in MHz as people say it (52, 0.4, 199.5).
fn mhz(hz: u64) -> String {
    let text = format!("{:.3}", hz as f64 / 1e6);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl SpeedModeKnob {
    pub fn new(
        host: HostCaps,
        card_type: u8,
        read_ios: Box<dyn Fn() -> Result<Ios> + Send>,
    ) -> Self {
        SpeedModeKnob {
            host,
            card_type,
            read_ios,
            original: None,
            tran_speed_hz: None,
        }
    }

    /// The card's CSD TRAN_SPEED, the most legacy is clocked at.
    pub fn with_tran_speed(mut self, hz: Option<u64>) -> Self {
        self.tran_speed_hz = hz;
        self
    }

    /// caps and caps2 the host came up with: the snapshot's, or as they read now.
    fn original_words(&self) -> Result<(u32, u32)> {
        match &self.original {
            Some(f) => Ok((f.caps, f.caps2)),
            None => Ok((self.host.read_caps()?, self.host.read_caps2()?)),
        }
    }

    fn ios(&self) -> Result<Ios> {
        self.host.while_active(|| (self.read_ios)())
    }

    fn mode(value: &Value) -> Result<SpeedMode> {
        SpeedMode::parse(value.as_str())
            .with_context(|| format!("speed-mode '{value}' is not a mode"))
    }

    fn refused(mode: SpeedMode, why: Refusal) -> anyhow::Error {
        anyhow::anyhow!("speed-mode {mode}: refused, {why}")
    }

    fn not_switchable(err: anyhow::Error) -> anyhow::Error {
        if err.downcast_ref::<CapsRefused>().is_some() {
            err.context(format!(
                "speed-mode is not switchable at run time on this kernel (debugfs takes the \
                 speed bits from 6.7 on); {ROUTE_SPEED_MODE}"
            ))
        } else {
            err
        }
    }

    /// Write the words and re-initialise the card with them.
    fn switch_to(&self, caps: u32, caps2: u32) -> Result<()> {
        self.host
            .write_caps(caps | MMC_CAP_AGGRESSIVE_PM)
            .map_err(Self::not_switchable)?;
        self.host.write_caps2(caps2).map_err(Self::not_switchable)?;
        self.host.reinit()
    }
}

/// Why a card that was asked for `want` runs in `ios` instead, named as what the core
/// did (`mmc_select_timing()` and `mmc_init_card()`, docs/kernel-facts.md).
pub fn fallback_line(want: SpeedMode, ios: &Ios) -> String {
    let found = SpeedMode::from_ios_timing(&ios.timing);
    let why = match (want, found) {
        (SpeedMode::Hs200 | SpeedMode::Hs400, Some(SpeedMode::Hs)) => {
            "the core fell back to high speed: the switch to HS200 (CMD6 HS_TIMING, then \
             SEND_STATUS) failed and mmc_select_timing() dropped HS200 for this card; dmesg \
             has 'mmc_select_hs200 failed'"
                .to_string()
        }
        (SpeedMode::Hs400, Some(SpeedMode::Hs200)) => format!(
            "the core stopped at HS200: mmc_select_hs400() takes HS200 on to HS400 only on an \
             8-bit bus (this one has {} bit(s)) after tuning",
            ios.bus_width_bits
        ),
        (SpeedMode::Ddr52, Some(SpeedMode::Hs)) => format!(
            "the core stopped at high speed: mmc_select_hs_ddr() needs a 4- or 8-bit bus \
             (this one has {} bit(s))",
            ios.bus_width_bits
        ),
        (_, Some(SpeedMode::Legacy)) => {
            "the core selected no speed mode (an HS200 switch is skipped on a 1-bit bus; \
             see dmesg)"
                .to_string()
        }
        _ => {
            "the mmc core chose another mode than the caps were written for; see dmesg".to_string()
        }
    };
    format!(
        "asked {want}, the card came up in {} at {} MHz: {why}",
        ios.timing,
        mhz(ios.clock_hz)
    )
}

impl Knob for SpeedModeKnob {
    fn name(&self) -> &str {
        "speed-mode"
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        match SpeedMode::parse(value) {
            Some(mode) => Ok(Value::canonical(mode.name())),
            None => bail!(
                "speed-mode '{}': use legacy, hs, ddr52, hs200 or hs400",
                value.trim()
            ),
        }
    }

    fn check(&self, value: &Value, force: bool) -> Result<()> {
        let mode = Self::mode(value)?;
        let words = self.original_words()?;
        caps_for_mode(mode, words, words, self.card_type, force)
            .map(|_| ())
            .map_err(|why| Self::refused(mode, why))
    }

    fn check_together(&self, value: &Value, config: &Settings, _force: bool) -> Result<()> {
        let mode = Self::mode(value)?;
        let width = match config.get("bus-width") {
            Some(width) => width.as_str().parse()?,
            None => caps_bus_width(self.original_words()?.0),
        };
        check_bus_width(mode, width).map_err(|why| {
            anyhow::anyhow!("speed-mode {mode} at bus-width {width}: refused, {why}")
        })
    }

    fn read(&self) -> Result<String> {
        self.ios().map(|ios| mode_word(&ios))
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.original.is_none() {
            let (caps, caps2) = (self.host.read_caps()?, self.host.read_caps2()?);
            let mode = self.read()?;
            let control = read_attribute(&self.host.power_control)?;
            self.original = Some(Found {
                caps,
                caps2,
                mode,
                control,
            });
        }
        Ok(())
    }

    fn original(&self) -> Option<Value> {
        self.original
            .as_ref()
            .map(|f| Value::canonical(f.mode.clone()))
    }

    fn saved(&self) -> Option<String> {
        let f = self.original.as_ref()?;
        // A timing with spaces ("sd uhs SDR104") is saved with '_' for them.
        Some(format!(
            "{} caps=0x{:08x} caps2=0x{:08x} control={}",
            f.mode.replace(' ', "_"),
            f.caps,
            f.caps2,
            f.control
        ))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse("speed-mode", saved);
        self.original = Some(Found {
            mode: saved.value.replace('_', " "),
            caps: parse_caps(saved.field("caps")?)?,
            caps2: parse_caps(saved.field("caps2")?)?,
            control: saved.field("control")?.to_string(),
        });
        Ok(())
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        let mode = Self::mode(value)?;
        let original = self.original_words()?;
        // From the words as they are now: bits other knobs changed (the bus width) stay.
        // `check` refused what needs --force before any I/O; what is left is allowed.
        let now = (self.host.read_caps()?, self.host.read_caps2()?);
        let (caps, caps2) = caps_for_mode(mode, original, now, self.card_type, true)
            .map_err(|why| Self::refused(mode, why))?;
        self.switch_to(caps, caps2)
            .with_context(|| format!("speed-mode {mode}: re-initialising the card"))
    }

    fn verify(&self, value: &Value) -> Result<()> {
        let ios = self.ios()?;
        if ios.clock_hz <= IDENTIFICATION_HZ {
            bail!(
                "speed-mode: the card did not come back from its re-initialisation: ios shows \
                 '{}' at {} Hz, the identification clock, where {value} was asked for; the card \
                 stopped answering (dmesg: 'error -110 doing runtime resume') or failed its \
                 init: check the card and dmesg",
                ios.timing,
                ios.clock_hz
            );
        }
        let Some(want) = SpeedMode::parse(value.as_str()) else {
            // An original timing that is none of the five (restore): as it was.
            if ios.timing == value.as_str() {
                return Ok(());
            }
            bail!("speed-mode: ios shows '{}', not '{value}'", ios.timing);
        };
        if SpeedMode::from_ios_timing(&ios.timing) != Some(want) {
            bail!("speed-mode: {}", fallback_line(want, &ios));
        }
        let Some(max) = max_clock_hz(want, self.tran_speed_hz) else {
            return Ok(());
        };
        if ios.clock_hz > max {
            bail!(
                "speed-mode: ios shows {} at {} Hz, above the {} Hz the mode runs at: the clock \
                 was raised past the mode's (debugfs clock?)",
                ios.timing,
                ios.clock_hz,
                max
            );
        }
        Ok(())
    }

    fn restore(&mut self) -> Result<()> {
        let Some(found) = self.original.clone() else {
            return Ok(());
        };
        let now = (self.host.read_caps()?, self.host.read_caps2()?);
        if now != (found.caps, found.caps2) || self.read()? != found.mode {
            self.switch_to(found.caps, found.caps2)?;
            self.host.write_caps(found.caps)?;
        }
        write_attribute(&self.host.power_control, &found.control)?;
        self.verify(&Value::canonical(found.mode))
    }

    fn restore_preconditions(&self) -> Vec<String> {
        match self.original {
            Some(_) => vec![self.host.clear_error_command(), self.host.bind_command()],
            None => Vec::new(),
        }
    }

    fn restore_commands(&self) -> Vec<String> {
        let Some(found) = &self.original else {
            return Vec::new();
        };
        let mut commands = vec![format!(
            "echo 0x{:08x} > {}",
            found.caps2,
            shell_quote(&self.host.caps2.to_string_lossy())
        )];
        commands.extend(
            self.host
                .reinit_commands(found.caps | MMC_CAP_AGGRESSIVE_PM),
        );
        commands.push(format!(
            "echo 0x{:08x} > {}",
            found.caps,
            shell_quote(&self.host.caps.to_string_lossy())
        ));
        commands.push(format!(
            "echo {} > {}",
            shell_quote(&found.control),
            shell_quote(&self.host.power_control.to_string_lossy())
        ));
        commands
    }

    fn stage(&self) -> super::Stage {
        super::Stage::Reinit
    }
}

/// The knob on this device, or why not.
pub(super) fn resolve(env: &KnobEnv, force: bool) -> Result<Box<dyn Knob>> {
    let host = HostCaps::new(&env.paths);
    let mut reasons = Vec::new();
    if !host.caps.exists() || !host.caps2.exists() {
        reasons.push(format!(
            "{} does not exist: mount debugfs (mount -t debugfs none /sys/kernel/debug) and run \
             as root",
            host.caps2.display()
        ));
    }
    if !host.power_control.exists() {
        reasons.push(format!(
            "{} does not exist: the card has no runtime PM, so it cannot be re-initialised in \
             another mode; A/B the modes across boots with --label",
            host.power_control.display()
        ));
    }
    if let Some(why) = read_only_refusal(&host.caps, &env.kernel_release, ROUTE_SPEED_MODE) {
        reasons.push(why);
    } else if let Err(why) = kernel_can(kernel_version(&env.kernel_release)) {
        if !force {
            reasons.push(format!("{why} (--force tries anyway)"));
        }
    }
    let ext_csd = crate::device::ext_csd::read_ext_csd(&env.paths).map(|(x, _)| x);
    let card_type = match &ext_csd {
        Ok(x) => x.get(CARD_TYPE) as u8,
        Err(err) => {
            reasons.push(format!(
                "cannot read EXT_CSD for the card's speed modes (CARD_TYPE): {err:#}"
            ));
            0
        }
    };
    if !reasons.is_empty() {
        return Err(unavailable("speed-mode", reasons.join("; ")));
    }
    let paths = env.paths.clone();
    Ok(Box::new(
        SpeedModeKnob::new(
            host,
            card_type,
            Box::new(move || crate::device::ios::read_ios(&paths)),
        )
        .with_tran_speed(tran_speed_hz(env)),
    ))
}

/// The card's CSD TRAN_SPEED from sysfs `csd`, when it can be read.
pub(super) fn tran_speed_hz(env: &KnobEnv) -> Option<u64> {
    let csd = read_attribute(&env.paths.card_sysfs.join("csd")).ok()?;
    crate::device::cid::decode_csd(&csd)
        .ok()
        .map(|c| c.tran_speed_hz)
}

/// Whether the card has STROBE_SUPPORT (HS400 is then HS400 with enhanced strobe on a
/// host with `MMC_CAP2_HS400_ES`).
pub(super) fn note(env: &KnobEnv) -> String {
    let host = HostCaps::new(&env.paths);
    let strobe = crate::device::ext_csd::read_ext_csd(&env.paths)
        .map(|(x, _)| x.get(STROBE_SUPPORT) != 0)
        .unwrap_or(false);
    let es = host
        .read_caps2()
        .map(|c| c & crate::device::speed_modes::MMC_CAP2_HS400_ES != 0)
        .unwrap_or(false);
    let mut note =
        "switched via debugfs caps/caps2 + runtime-PM re-init, verified in ios (timing, \
                    clock)"
            .to_string();
    if strobe && es {
        note.push_str(&format!(
            "; hs400 is HS400 with enhanced strobe here ({IOS_HS400_ES})"
        ));
    }
    note
}

/// The mode in ios, when the knob is unavailable.
pub(super) fn current(env: &KnobEnv) -> Option<String> {
    HostCaps::new(&env.paths)
        .while_active(|| crate::device::ios::read_ios(&env.paths))
        .ok()
        .map(|ios| mode_word(&ios))
}

#[cfg(test)]
#[path = "speed_mode_tests.rs"]
pub(crate) mod tests;
