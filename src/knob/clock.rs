//! The built-in `clock` knob: the bus clock in Hz, written to the host's debugfs `clock`
//! (`mmc_clock_opt_set()`: `mmc_set_clock()` at once, no re-initialisation), verified
//! in `ios`. A re-initialisation of the card sets the mode's clock again, so the runner
//! applies it after the knobs that re-initialise ([`super::Stage`]) and the
//! guard restores it after them (docs/kernel-facts.md, "debugfs clock").

use super::attribute::write_attribute;
use super::caps::HostCaps;
use super::env::{unavailable, KnobEnv};
use super::{shell_quote, Knob, Saved, Settings, Value};
use crate::device::ios::Ios;
use crate::device::speed_modes::{max_clock_hz, SpeedMode};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// What the knob remembers: the clock and the timing it ran at.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    clock_hz: u64,
    timing: String,
}

/// mmcab's last write of the clock: in which timing, the clock written, and the one
/// there before it (what that timing's init had chosen).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    timing: String,
    clock_hz: u64,
    before_hz: u64,
}

/// The built-in `clock` knob.
pub struct ClockKnob {
    /// The host's debugfs `clock`.
    file: PathBuf,
    host: HostCaps,
    read_ios: Box<dyn Fn() -> Result<Ios> + Send>,
    original: Option<Found>,
    last: Option<Written>,
    /// The card's CSD TRAN_SPEED: the clock of legacy.
    tran_speed_hz: Option<u64>,
}

impl ClockKnob {
    /// The clock before mmcab's last write, when that write is still in effect (same
    /// timing, same clock: no re-initialisation since).
    fn ours_before(&self, ios: &Ios) -> Option<u64> {
        self.last
            .as_ref()
            .filter(|w| w.timing == ios.timing && w.clock_hz == ios.clock_hz)
            .map(|w| w.before_hz)
    }
}

/// Hz from a plan's words: `26000000`, `26 MHz`, `26MHz`, `400 kHz`, `52M`.
pub fn parse_hz(text: &str) -> Result<u64> {
    let t = text.trim().to_ascii_lowercase().replace(' ', "");
    let t = t.strip_suffix("hz").unwrap_or(&t);
    let (number, scale) = match t.char_indices().last() {
        Some((i, 'k')) => (&t[..i], 1e3),
        Some((i, 'm')) => (&t[..i], 1e6),
        Some((i, 'g')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    let value: f64 = number.parse().map_err(|_| {
        anyhow::anyhow!(
            "clock '{}': use Hz, e.g. 26000000 or \"26 MHz\"",
            text.trim()
        )
    })?;
    let hz = (value * scale).round();
    if !(hz.is_finite() && hz >= 0.0 && hz <= u32::MAX as f64) {
        bail!("clock '{}': out of range", text.trim());
    }
    if hz == 0.0 {
        bail!(
            "clock 0: refused, 0 Hz stops the bus clock (mmc_clock_opt_set() takes it); give \
             a clock in Hz"
        );
    }
    Ok(hz as u64)
}

impl ClockKnob {
    pub fn new(
        file: PathBuf,
        host: HostCaps,
        read_ios: Box<dyn Fn() -> Result<Ios> + Send>,
    ) -> Self {
        ClockKnob {
            file,
            host,
            read_ios,
            original: None,
            last: None,
            tran_speed_hz: None,
        }
    }

    /// The card's CSD TRAN_SPEED, the most legacy is clocked at.
    pub fn with_tran_speed(mut self, hz: Option<u64>) -> Self {
        self.tran_speed_hz = hz;
        self
    }

    fn ios(&self) -> Result<Ios> {
        self.host.while_active(|| (self.read_ios)())
    }

    /// The clock the mode's init chose for the timing mmcab found (or finds now).
    fn found(&self) -> Result<Found> {
        match &self.original {
            Some(f) => Ok(f.clone()),
            None => self.ios().map(|ios| Found {
                clock_hz: ios.clock_hz,
                timing: ios.timing,
            }),
        }
    }

    fn write(&self, hz: u64) -> Result<()> {
        write_attribute(&self.file, &hz.to_string()).map_err(|err| {
            let einval = err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .and_then(|e| e.raw_os_error())
                    == Some(libc::EINVAL)
            });
            if einval {
                err.context(format!(
                    "the host refused {hz} Hz (EINVAL): it is outside the host's f_min..f_max"
                ))
            } else {
                err
            }
        })
    }
}

impl Knob for ClockKnob {
    fn name(&self) -> &str {
        "clock"
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        parse_hz(value).map(|hz| Value::canonical(hz.to_string()))
    }

    fn check(&self, _value: &Value, _force: bool) -> Result<()> {
        Ok(())
    }

    /// A clock above the one the mode's init sets (the config's speed-mode, or the mode
    /// mmcab found) drives the card past its timing: `--force`.
    fn check_together(&self, value: &Value, config: &Settings, force: bool) -> Result<()> {
        let hz: u64 = value.as_str().parse()?;
        let (limit, what) = match config
            .get("speed-mode")
            .and_then(|m| SpeedMode::parse(m.as_str()))
        {
            Some(mode) => match max_clock_hz(mode, self.tran_speed_hz) {
                Some(limit) => (limit, format!("speed-mode {mode} runs at")),
                // Legacy on a card whose CSD could not be read: no ceiling known.
                None => return Ok(()),
            },
            None => {
                let found = self.found()?;
                (
                    found.clock_hz,
                    format!("the host came up in {} at", found.timing),
                )
            }
        };
        if hz > limit && !force {
            bail!(
                "clock {hz}: refused, {what} {limit} Hz; a faster clock drives the card past \
                 its mode's timing (mmc_set_clock() checks only the host's f_max): pass --force \
                 if you know it can"
            );
        }
        Ok(())
    }

    fn read(&self) -> Result<String> {
        self.ios().map(|ios| ios.clock_hz.to_string())
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.original.is_none() {
            self.original = Some(self.found()?);
        }
        Ok(())
    }

    fn original(&self) -> Option<Value> {
        self.original
            .as_ref()
            .map(|f| Value::canonical(f.clock_hz.to_string()))
    }

    fn saved(&self) -> Option<String> {
        let f = self.original.as_ref()?;
        Some(format!(
            "{} timing={}",
            f.clock_hz,
            f.timing.replace(' ', "_")
        ))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse("clock", saved);
        let clock_hz = saved
            .value
            .parse()
            .with_context(|| format!("knob clock: saved clock '{}'", saved.value))?;
        self.original = Some(Found {
            clock_hz,
            timing: saved.field("timing")?.replace('_', " "),
        });
        Ok(())
    }

    /// A config without a clock runs at the one the card's init chose for its mode: the
    /// clock now, unless mmcab's own write is still in effect, then the one before it.
    /// (The clock found at the start belongs to the mode found then: in another mode it
    /// could overclock the card.)
    fn left_out(&self) -> Result<Option<Value>> {
        let ios = self.ios()?;
        let hz = self.ours_before(&ios).unwrap_or(ios.clock_hz);
        Ok(Some(Value::canonical(hz.to_string())))
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        let hz: u64 = value.as_str().parse()?;
        let ios = self.ios()?;
        let before_hz = self.ours_before(&ios).unwrap_or(ios.clock_hz);
        self.write(hz)
            .with_context(|| format!("clock {hz}: writing {}", self.file.display()))?;
        self.last = Some(Written {
            timing: ios.timing,
            clock_hz: hz,
            before_hz,
        });
        Ok(())
    }

    fn verify(&self, value: &Value) -> Result<()> {
        let ios = self.ios()?;
        if ios.clock_hz.to_string() == value.as_str() {
            return Ok(());
        }
        bail!(
            "clock: ios shows {} Hz in {}, not {value} Hz: the clock did not stay (a \
             re-initialisation of the card sets the mode's clock again)",
            ios.clock_hz,
            ios.timing
        )
    }

    /// Put the clock back only in the timing it was found in: the knobs that
    /// re-initialise the card are restored first and bring the timing back; writing the
    /// old clock in another timing could overclock the card.
    fn restore(&mut self) -> Result<()> {
        let Some(found) = self.original.clone() else {
            return Ok(());
        };
        let ios = self.ios()?;
        if ios.timing != found.timing {
            bail!(
                "clock: not put back to {} Hz: the card is in {} now, not {} as mmcab found it \
                 (writing the old clock there could overclock it)",
                found.clock_hz,
                ios.timing,
                found.timing
            );
        }
        if ios.clock_hz != found.clock_hz {
            self.write(found.clock_hz)?;
        }
        self.last = None;
        self.verify(&Value::canonical(found.clock_hz.to_string()))
    }

    fn restore_commands(&self) -> Vec<String> {
        match &self.original {
            Some(found) => vec![format!(
                "echo {} > {}",
                found.clock_hz,
                shell_quote(&self.file.to_string_lossy())
            )],
            None => Vec::new(),
        }
    }
}

/// The knob on this device, or why not.
pub(super) fn resolve(env: &KnobEnv, _force: bool) -> Result<Box<dyn Knob>> {
    let file = env.paths.host_debugfs.join("clock");
    if !file.exists() {
        return Err(unavailable(
            "clock",
            format!(
                "{} does not exist: mount debugfs (mount -t debugfs none /sys/kernel/debug) and \
                 run as root",
                file.display()
            ),
        ));
    }
    if let Some(why) = crate::device::caps_gate::locked_down(&file) {
        return Err(unavailable("clock", why));
    }
    let paths = env.paths.clone();
    Ok(Box::new(
        ClockKnob::new(
            file,
            HostCaps::new(&env.paths),
            Box::new(move || crate::device::ios::read_ios(&paths)),
        )
        .with_tran_speed(super::speed_mode::tran_speed_hz(env)),
    ))
}

/// The clock in ios, when the knob is unavailable.
pub(super) fn current(env: &KnobEnv) -> Option<String> {
    HostCaps::new(&env.paths)
        .while_active(|| crate::device::ios::read_ios(&env.paths))
        .ok()
        .map(|ios| ios.clock_hz.to_string())
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;
