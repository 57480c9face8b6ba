//! The built-in `packing` knob for vendor kernels that kept packed write commands
//! (eMMC 4.5, e.g. the msm kernels): `/sys/block/<disk>/num_wr_reqs_to_start_packing` sets
//! how many potential packed writes in a row start packing, and the card's debugfs
//! `wr_pack_stats` counts packed writes by size, the proof that packing happened.
//!
//! What those kernels do with the attribute (their block.c, "mmc: block: Add write
//! packing control"): a write stores `min(value, EXT_CSD MAX_PACKED_WRITES)`, the default
//! is `min(MAX_PACKED_WRITES, 17)`; packing starts once more writes than the trigger came
//! in a row, a read stops it, and with MMC_CAP2_PACKED_WR_CONTROL the kernel adapts the
//! trigger itself between bursts (up to 3/4 of MAX_PACKED_WRITES). Without that cap the
//! trigger has no effect and every run of writes is packed. So the knob takes a trigger in
//! 1..=MAX_PACKED_WRITES (re-applied before every run). "Packing off" on those kernels is
//! the host's caps2 MMC_CAP2_PACKED_WR bit, set by the platform at boot: no sysfs value
//! turns it off, and a trigger above MAX_PACKED_WRITES cannot be set (it is clamped).
//! `wr_pack_stats` prints only while enabled (`echo 1 >` it); the knob enables it and puts
//! it back as it found it. The runner's evidence ([`crate::evidence::pack_stats`]) reads
//! it before and after every run.
//!
//! Mainline never sent packed commands (no upstream host driver set MMC_CAP2_PACKED_WR;
//! v4.10 removed the code): there the knob is unavailable, and packed writes are A/B'd
//! with the ioctl engine (`engine = "ioctl"`, `packed = N`; see [`super::builtin`]).

use super::attribute::{write_attribute, AttributeKnob};
use super::{Knob, Saved, Value};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// The vendor kernels' default trigger (DEFAULT_NUM_REQS_TO_START_PACK).
pub const DEFAULT_THRESHOLD: u64 = 17;
pub const ATTRIBUTE: &str = "num_wr_reqs_to_start_packing";
pub const STATS: &str = "wr_pack_stats";

pub struct PackingKnob {
    attribute: AttributeKnob,
    stats: PathBuf,
    /// EXT_CSD MAX_PACKED_WRITES: the kernel clamps the trigger to it.
    max_packed_writes: u64,
    /// Whether wr_pack_stats was enabled when mmcab found it (None before snapshot).
    stats_enabled: Option<bool>,
}

impl PackingKnob {
    pub fn new(attribute: PathBuf, stats: PathBuf, max_packed_writes: u64) -> PackingKnob {
        PackingKnob {
            attribute: AttributeKnob::new("packing", attribute, Vec::new()),
            stats,
            max_packed_writes,
            stats_enabled: None,
        }
    }

    fn stats_text(&self) -> Result<String> {
        std::fs::read_to_string(&self.stats).with_context(|| {
            format!(
                "reading {} (packing statistics): is debugfs mounted?",
                self.stats.display()
            )
        })
    }

    /// Remember whether wr_pack_stats was enabled, and enable it if it was off (a
    /// disabled file reads empty): the evidence read before the first run needs it on,
    /// whether or not a config ever applies a new trigger.
    fn enable_stats(&mut self) -> Result<()> {
        if self.stats_enabled.is_none() {
            self.stats_enabled = Some(!self.stats_text()?.trim().is_empty());
        }
        if self.stats_enabled == Some(false) && self.stats_text()?.trim().is_empty() {
            write_attribute(&self.stats, "1")
                .context("enabling the packing statistics (wr_pack_stats)")?;
        }
        Ok(())
    }
}

impl Knob for PackingKnob {
    fn name(&self) -> &str {
        "packing"
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        let max = self.max_packed_writes;
        match value.trim() {
            "on" => Ok(Value::canonical(DEFAULT_THRESHOLD.min(max).to_string())),
            "off" => bail!(
                "packing = off: this kernel's num_wr_reqs_to_start_packing only sets when \
                 packing starts (1..={max}; larger values are clamped to MAX_PACKED_WRITES); \
                 packing is off only when the host lacks caps2 MMC_CAP2_PACKED_WR, set by the \
                 platform at boot. Compare triggers (1 = pack as soon as 2 writes wait, {max} = \
                 the latest start), A/B a boot without that cap with --label, or A/B packed \
                 writes with engine = \"ioctl\" and packed = N"
            ),
            n => match n.parse::<u64>() {
                Ok(v) if (1..=max).contains(&v) => Ok(Value::canonical(v.to_string())),
                _ => bail!(
                    "packing '{n}': use on (the kernel default, {}) or a trigger in 1..={max} \
                     (the kernel clamps it to EXT_CSD MAX_PACKED_WRITES = {max})",
                    DEFAULT_THRESHOLD.min(max)
                ),
            },
        }
    }

    fn read(&self) -> Result<String> {
        self.attribute.read()
    }

    fn snapshot(&mut self) -> Result<()> {
        self.attribute.snapshot()?;
        self.enable_stats()
    }

    fn original(&self) -> Option<Value> {
        self.attribute.original()
    }

    fn saved(&self) -> Option<String> {
        let on = if self.stats_enabled? { "on" } else { "off" };
        Some(format!("{} stats={on}", self.attribute.original()?))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse("packing", saved);
        self.stats_enabled = Some(match saved.field("stats")? {
            "on" => true,
            "off" => false,
            other => bail!("knob packing: saved stats={other}, expected on or off"),
        });
        self.attribute.adopt(saved.value)
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        self.enable_stats()?;
        self.attribute.apply(value)
    }

    fn verify(&self, value: &Value) -> Result<()> {
        self.attribute.verify(value)
    }

    fn restore(&mut self) -> Result<()> {
        let trigger = self.attribute.restore();
        // Statistics mmcab switched on go off again, whatever happened to the trigger.
        let stats = if self.stats_enabled == Some(false) {
            write_attribute(&self.stats, "0")
                .context("disabling the packing statistics (wr_pack_stats) again")
        } else {
            Ok(())
        };
        trigger.and(stats)
    }

    fn restore_commands(&self) -> Vec<String> {
        let mut commands = self.attribute.restore_commands();
        if self.stats_enabled == Some(false) {
            commands.push(format!("echo 0 > {}", self.stats.display()));
        }
        commands
    }
}

/// The trigger as `mmcab knobs` shows it.
pub fn describe(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(v) => format!("{v} (packing starts after {v} writes)"),
        Err(_) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let dir = tempfile::tempdir().unwrap();
        let attr = dir.path().join(ATTRIBUTE);
        std::fs::write(&attr, "5\n").unwrap();
        let knob = PackingKnob::new(attr, dir.path().join(STATS), 8);
        assert!(knob
            .normalize("off")
            .unwrap_err()
            .to_string()
            .contains("caps2"));
        assert_eq!(knob.normalize("on").unwrap(), "8");
        assert_eq!(knob.normalize("3").unwrap(), "3");
        assert!(knob
            .normalize("9")
            .unwrap_err()
            .to_string()
            .contains("MAX_PACKED_WRITES = 8"));
        assert!(knob.normalize("0").is_err());
    }

    #[test]
    fn statistics_found_off_are_enabled_at_snapshot_and_disabled_at_restore() {
        let dir = tempfile::tempdir().unwrap();
        let attr = dir.path().join(ATTRIBUTE);
        let stats = dir.path().join(STATS);
        std::fs::write(&attr, "17\n").unwrap();
        std::fs::write(&stats, "").unwrap(); // disabled: the kernel prints nothing
        let mut knob = PackingKnob::new(attr.clone(), stats.clone(), 63);
        knob.snapshot().unwrap();
        // On before any apply: a baseline config that keeps the trigger still has evidence.
        assert_eq!(std::fs::read_to_string(&stats).unwrap(), "1\n");
        assert_eq!(
            knob.restore_commands(),
            vec![
                format!("echo 17 > {}", attr.display()),
                format!("echo 0 > {}", stats.display())
            ]
        );
        knob.apply(&Value::canonical("4")).unwrap();
        // A run killed here is resumed with the first start's snapshot: the trigger
        // and the statistics go back to what they were then, not to what it left.
        let saved = knob.saved().unwrap();
        assert_eq!(saved, "17 stats=off");
        let mut resumed = PackingKnob::new(attr.clone(), stats.clone(), 63);
        resumed.adopt(&saved).unwrap();
        resumed.snapshot().unwrap();
        resumed.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&attr).unwrap().trim(), "17");
        assert_eq!(std::fs::read_to_string(&stats).unwrap(), "0\n");
        knob.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&attr).unwrap().trim(), "17");
        assert_eq!(std::fs::read_to_string(&stats).unwrap(), "0\n");
    }
}
