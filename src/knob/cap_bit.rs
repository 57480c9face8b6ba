//! Built-in knobs that are one bit of the host's debugfs caps words and take effect when
//! the block driver binds the card (docs/kernel-facts.md, "CMD23 and the command queue
//! are decided when mmcblk binds"):
//!
//! - `cmd23`: `MMC_CAP_CMD23` (caps bit 30), then the `mmcblk` rebind;
//! - `cqe`: `MMC_CAP2_CQE` (caps2 bit 23), a runtime-PM re-init of the card (the card's
//!   queue is switched at init), then the rebind.
//!
//! Reading the bit back proves nothing about the driver, so both are verified by a probe
//! read through the trace ([`crate::evidence::traced_read`]): with CMD23 every multi-block
//! request carries `sbc_opcode=23` and without none does; with the command queue the data
//! requests are tasks without a command, and `cmdq_en` of the card follows. Where the
//! trace cannot be had, the bit and the rebind are what is checked.

use super::caps::{parse_caps, CapsRefused, HostCaps};
use super::mmcblk::MmcBlk;
use super::{shell_quote, Knob, Saved, Value};
use crate::device::capabilities::MMC_CAP_AGGRESSIVE_PM;
use crate::device::MmcPaths;
use crate::evidence::traced_read::{self, Probe};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// Which knob: how its bit is written and how its effect is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// `MMC_CAP_CMD23` in caps.
    Cmd23,
    /// `MMC_CAP2_CQE` in caps2, with a card re-init before the rebind.
    Cqe,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Cmd23 => "cmd23",
            Which::Cqe => "cqe",
        }
    }

    fn bit(self) -> u32 {
        match self {
            Which::Cmd23 => crate::device::capabilities::MMC_CAP_CMD23,
            Which::Cqe => crate::device::capabilities::MMC_CAP2_CQE,
        }
    }
}

/// The words as mmcab found them.
#[derive(Debug, Clone)]
struct Found {
    caps: u32,
    caps2: u32,
    control: String,
    on: bool,
}

pub struct CapBitKnob {
    which: Which,
    host: HostCaps,
    blk: MmcBlk,
    /// Host name for the probe's trace (`mmc0`).
    host_name: String,
    /// The card's `cmdq_en` (cqe).
    cmdq_en: PathBuf,
    found: Option<Found>,
    /// What the block driver was bound with, once known.
    bound: Option<bool>,
}

impl CapBitKnob {
    pub fn new(which: Which, paths: &MmcPaths) -> CapBitKnob {
        CapBitKnob {
            which,
            host: HostCaps::new(paths),
            blk: MmcBlk::new(paths),
            host_name: paths.host.clone(),
            cmdq_en: paths.card_sysfs.join("cmdq_en"),
            found: None,
            bound: None,
        }
    }

    fn word(&self) -> Result<u32> {
        match self.which {
            Which::Cmd23 => self.host.read_caps(),
            Which::Cqe => self.host.read_caps2(),
        }
    }

    fn write_word(&self, value: u32) -> Result<()> {
        let written = match self.which {
            Which::Cmd23 => self.host.write_caps(value),
            Which::Cqe => self.host.write_caps2(value),
        };
        written.map_err(|err| {
            if err.downcast_ref::<CapsRefused>().is_some() {
                err.context(format!(
                    "{} is not switchable at run time on this kernel (the bit became writable \
                     after 6.18); {}",
                    self.which.name(),
                    crate::device::caps_gate::ROUTE_KERNELS
                ))
            } else {
                err
            }
        })
    }

    fn bit_is_on(&self) -> Result<bool> {
        Ok(self.word()? & self.which.bit() != 0)
    }

    /// Whether the host came up with the bit.
    fn host_has_it(&self) -> Result<bool> {
        match &self.found {
            Some(f) => Ok(f.on),
            None => self.bit_is_on(),
        }
    }

    /// Set the bit to `on`, re-initialise the card (cqe) and rebind the block driver.
    fn switch(&mut self, on: bool) -> Result<()> {
        self.blk.check_not_held()?;
        let bit = self.which.bit();
        let word = self.word()?;
        let value = if on { word | bit } else { word & !bit };
        if self.which == Which::Cqe {
            // The card switches its queue at init: re-initialise it with the new caps2.
            self.host
                .write_caps(self.host.read_caps()? | MMC_CAP_AGGRESSIVE_PM)?;
            self.write_word(value)?;
            self.host
                .reinit()
                .context("cqe: re-initialising the card with the new caps2")?;
        } else {
            self.write_word(value)?;
        }
        // Whatever happens next, the driver is no longer bound as it was.
        self.bound = None;
        self.blk.rebind()?;
        self.bound = Some(on);
        Ok(())
    }

    /// Check what the driver does with a probe read.
    fn check_effect(&self, on: bool) -> Result<()> {
        let name = self.which.name();
        let want = if on { "on" } else { "off" };
        if self.which == Which::Cqe {
            let cmdq = super::attribute::read_attribute(&self.cmdq_en)?;
            if cmdq != if on { "1" } else { "0" } {
                bail!(
                    "cqe: {} reads {cmdq} after the switch to {want}: the card's command queue \
                     did not follow",
                    self.cmdq_en.display()
                );
            }
        }
        let stats = match traced_read::read_through_trace(&self.blk.dev_node, &self.host_name)? {
            Probe::Traced(stats) => stats,
            // No trace: the bit, the rebind (and cmdq_en) are all there is to check.
            Probe::Untraced(_) => {
                return match (self.bit_is_on()? == on, self.bound == Some(on)) {
                    (true, true) => Ok(()),
                    _ => bail!("{name}: the caps bit or the driver binding is not {want}"),
                };
            }
        };
        let r = &stats.read;
        let ok = match self.which {
            Which::Cmd23 if r.multi_block == 0 => bail!(
                "cmd23: the probe read of {} made no multi-block request ({} requests): cannot \
                 tell whether CMD23 is used",
                self.blk.dev_node.display(),
                r.requests
            ),
            Which::Cmd23 => (on && r.sbc == r.multi_block) || (!on && r.sbc == 0),
            Which::Cqe => (on && r.cqe == r.requests) || (!on && r.cqe == 0),
        };
        if !ok {
            bail!(
                "{name}: wanted {want}, but the probe read's {} requests had CMD23 on {} of {} \
                 multi-block requests and {} command-queue tasks (mmc_request_start events): \
                 the driver did not follow",
                r.requests,
                r.sbc,
                r.multi_block,
                r.cqe
            );
        }
        Ok(())
    }
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}

impl Knob for CapBitKnob {
    fn name(&self) -> &str {
        self.which.name()
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        match value.trim() {
            "on" | "1" | "true" => Ok(Value::canonical("on")),
            "off" | "0" | "false" => Ok(Value::canonical("off")),
            other => bail!("{} '{other}': use on or off", self.which.name()),
        }
    }

    fn check(&self, value: &Value, force: bool) -> Result<()> {
        if *value == "on" && !self.host_has_it()? && !force {
            bail!(
                "{} = on: refused, the host came up without it (its driver or device tree \
                 leaves it out, often for a reason); pass --force to try anyway",
                self.which.name()
            );
        }
        Ok(())
    }

    fn read(&self) -> Result<String> {
        Ok(on_off(match self.bound {
            Some(on) => on,
            None => self.bit_is_on()?,
        }))
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.found.is_none() {
            let found = Found {
                caps: self.host.read_caps()?,
                caps2: self.host.read_caps2()?,
                control: super::attribute::read_attribute(&self.host.power_control)?,
                on: self.bit_is_on()?,
            };
            // The driver bound the card with the caps it had then.
            self.bound = Some(found.on);
            self.found = Some(found);
        }
        Ok(())
    }

    fn original(&self) -> Option<Value> {
        self.found.as_ref().map(|f| Value::canonical(on_off(f.on)))
    }

    fn saved(&self) -> Option<String> {
        let f = self.found.as_ref()?;
        Some(format!(
            "{} caps=0x{:08x} caps2=0x{:08x} control={}",
            on_off(f.on),
            f.caps,
            f.caps2,
            f.control
        ))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse(self.which.name(), saved);
        self.found = Some(Found {
            on: self.normalize(saved.value)? == "on",
            caps: parse_caps(saved.field("caps")?)?,
            caps2: parse_caps(saved.field("caps2")?)?,
            control: saved.field("control")?.to_string(),
        });
        // The driver is bound with the bit as it is now (whatever an interrupted run left).
        self.bound = Some(self.bit_is_on()?);
        Ok(())
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        // The runner names the knob and the value ("applying cmd23 = off: ...").
        self.switch(*value == "on")
    }

    fn verify(&self, value: &Value) -> Result<()> {
        self.check_effect(*value == "on")
    }

    fn restore(&mut self) -> Result<()> {
        let Some(found) = self.found.clone() else {
            return Ok(());
        };
        let switched = self.bound != Some(found.on) || self.bit_is_on()? != found.on;
        if switched {
            self.switch(found.on)?;
        }
        if self.which == Which::Cqe {
            // Aggressive PM was only for the re-init; the rest of caps as other knobs left it.
            let caps = self.host.read_caps()?;
            let aggressive = found.caps & MMC_CAP_AGGRESSIVE_PM;
            self.host
                .write_caps((caps & !MMC_CAP_AGGRESSIVE_PM) | aggressive)?;
            super::attribute::write_attribute(&self.host.power_control, &found.control)?;
        }
        if switched {
            self.check_effect(found.on)?;
        }
        Ok(())
    }

    fn restore_preconditions(&self) -> Vec<String> {
        match self.found {
            // The rebind below unbinds first, which needs the driver bound.
            Some(_) => vec![self.host.clear_error_command(), self.host.bind_command()],
            None => Vec::new(),
        }
    }

    fn restore_commands(&self) -> Vec<String> {
        let Some(found) = &self.found else {
            return Vec::new();
        };
        let caps = shell_quote(&self.host.caps.to_string_lossy());
        let mut commands = match self.which {
            Which::Cmd23 => vec![format!("echo 0x{:08x} > {caps}", found.caps)],
            Which::Cqe => {
                let mut c = vec![format!(
                    "echo 0x{:08x} > {}",
                    found.caps2,
                    shell_quote(&self.host.caps2.to_string_lossy())
                )];
                c.extend(
                    self.host
                        .reinit_commands(found.caps | MMC_CAP_AGGRESSIVE_PM),
                );
                c
            }
        };
        commands.extend(self.blk.commands());
        if self.which == Which::Cqe {
            commands.push(format!("echo 0x{:08x} > {caps}", found.caps));
            commands.push(format!(
                "echo {} > {}",
                shell_quote(&found.control),
                shell_quote(&self.host.power_control.to_string_lossy())
            ));
        }
        commands
    }

    fn rebinds_block_device(&self) -> bool {
        true
    }

    /// cqe re-initialises the card with the new caps2 (the card switches its queue at
    /// init); cmd23 only rebinds.
    fn stage(&self) -> super::Stage {
        match self.which {
            Which::Cqe => super::Stage::Reinit,
            Which::Cmd23 => super::Stage::AfterInit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(caps: &str, caps2: &str) -> (tempfile::TempDir, MmcPaths) {
        crate::knob::caps::caps_tree(caps, caps2, "auto\n")
    }

    #[test]
    fn values_the_snapshot_and_the_restore_script() {
        // The testbed's caps under Linux 7.2, booted 8-bit.
        let (_dir, paths) = fixture("0x4000014f\n", "0x00020000\n");
        let mut knob = CapBitKnob::new(Which::Cmd23, &paths);
        assert_eq!(knob.normalize("true").unwrap(), "on");
        assert!(knob.normalize("maybe").is_err());
        assert_eq!(knob.read().unwrap(), "on");
        knob.snapshot().unwrap();
        assert_eq!(knob.original().unwrap(), "on");
        let commands = knob.restore_commands();
        assert_eq!(
            commands[0],
            format!("echo 0x4000014f > {}", knob.host.caps.display())
        );
        assert!(commands[1].ends_with("/sys/bus/mmc/drivers/mmcblk/unbind"));
        assert!(commands[2].ends_with("/sys/bus/mmc/drivers/mmcblk/bind"));
        assert!(knob.restore_preconditions()[1].contains("|| echo mmc0:0001 > "));
        // Nothing was switched: nothing to restore, no rebind, no probe.
        knob.restore().unwrap();
        assert!(knob.rebinds_block_device());
    }

    /// A resume after a run killed with CMD23 switched off: the saved snapshot of the
    /// first start (on) is what the restore goes back to, and the driver is taken as
    /// bound with the bit as it is now.
    #[test]
    fn an_adopted_snapshot_wins_over_the_bit_found_now() {
        let (_first, paths) = fixture("0x4000014f\n", "0x00020000\n");
        let mut first = CapBitKnob::new(Which::Cmd23, &paths);
        first.snapshot().unwrap();
        let saved = first.saved().unwrap();
        assert_eq!(saved, "on caps=0x4000014f caps2=0x00020000 control=auto");
        let (_now, paths) = fixture("0x0000014f\n", "0x00020000\n");
        let mut resumed = CapBitKnob::new(Which::Cmd23, &paths);
        resumed.adopt(&saved).unwrap();
        resumed.snapshot().unwrap();
        assert_eq!(resumed.original().unwrap(), "on");
        assert_eq!(resumed.bound, Some(false));
        resumed.check(&Value::canonical("on"), false).unwrap();
        assert_eq!(
            resumed.restore_commands()[0],
            format!("echo 0x4000014f > {}", resumed.host.caps.display())
        );
    }

    #[test]
    fn on_is_refused_when_the_host_came_up_without_it() {
        let (_dir, paths) = fixture("0x0000014f\n", "0x00020000\n");
        let mut knob = CapBitKnob::new(Which::Cmd23, &paths);
        knob.snapshot().unwrap();
        let err = knob
            .check(&Value::canonical("on"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("came up without it") && err.contains("--force"),
            "{err}"
        );
        knob.check(&Value::canonical("on"), true).unwrap();
        knob.check(&Value::canonical("off"), false).unwrap();
        let cqe = CapBitKnob::new(Which::Cqe, &paths);
        assert_eq!(cqe.read().unwrap(), "off");
        let commands = {
            let mut k = cqe;
            k.snapshot().unwrap();
            k.restore_commands()
        };
        assert!(
            commands[0].starts_with("echo 0x00020000 > "),
            "{commands:?}"
        );
        assert!(commands.iter().any(|c| c.starts_with("echo auto > ")));
        assert!(commands.last().unwrap().starts_with("echo auto > "));
    }
}
