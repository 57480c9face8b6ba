//! The built-in `packing` knob for vendor kernels that kept packed write commands
//! (eMMC 4.5): `/sys/block/<disk>/num_wr_reqs_to_start_packing` sets how many queued
//! writes start packing, and the card's debugfs `wr_pack_stats` counts packed writes by
//! size, read before and after each run to prove packing happened.
//!
//! Mainline Linux removed packed command support in v4.10; there the knob is unavailable
//! and the A/B is between kernels (see [`super::builtin`]).

use super::attribute::{read_attribute, AttributeKnob};
use super::Knob;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Threshold that never triggers packing (the attribute is an int).
pub const OFF_THRESHOLD: u64 = i32::MAX as u64;
/// The vendor kernels' default (DEFAULT_NUM_REQS_TO_START_PACK).
pub const DEFAULT_THRESHOLD: u64 = 17;
pub const ATTRIBUTE: &str = "num_wr_reqs_to_start_packing";
pub const STATS: &str = "wr_pack_stats";

pub struct PackingKnob {
    attribute: AttributeKnob,
    stats: PathBuf,
}

impl PackingKnob {
    pub fn new(attribute: PathBuf, stats: PathBuf) -> PackingKnob {
        PackingKnob {
            attribute: AttributeKnob::new("packing", attribute, Vec::new()),
            stats,
        }
    }

    fn on_threshold(&self) -> u64 {
        let known = self
            .attribute
            .original()
            .or_else(|| self.attribute.read().ok());
        match known.and_then(|v| v.parse::<u64>().ok()) {
            Some(v) if v < OFF_THRESHOLD && v > 0 => v,
            _ => DEFAULT_THRESHOLD,
        }
    }
}

/// `Packed N reqs - M times` lines of wr_pack_stats: N -> M.
pub fn parse_pack_stats(text: &str) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find("Packed ") else {
            continue;
        };
        let words: Vec<&str> = line[at..].split_whitespace().collect();
        // ["Packed", N, "reqs", "-", M, "times"]
        if words.len() >= 6 && words[2] == "reqs" && words[3] == "-" {
            if let (Ok(n), Ok(m)) = (words[1].parse::<u64>(), words[4].parse::<u64>()) {
                out.insert(n, m);
            }
        }
    }
    out
}

impl Knob for PackingKnob {
    fn name(&self) -> &str {
        "packing"
    }

    fn normalize(&self, value: &str) -> Result<String> {
        match value.trim() {
            "off" | "0" => Ok(OFF_THRESHOLD.to_string()),
            "on" => Ok(self.on_threshold().to_string()),
            n => match n.parse::<u64>() {
                Ok(v) if v <= OFF_THRESHOLD => Ok(v.to_string()),
                _ => bail!(
                    "packing '{n}': use on, off, or the number of queued writes that starts \
                     packing (e.g. {DEFAULT_THRESHOLD})"
                ),
            },
        }
    }

    fn read(&self) -> Result<String> {
        self.attribute.read()
    }

    fn snapshot(&mut self) -> Result<()> {
        self.attribute.snapshot()
    }

    fn original(&self) -> Option<String> {
        self.attribute.original()
    }

    fn apply(&mut self, value: &str) -> Result<()> {
        self.attribute.apply(value)
    }

    fn verify(&self, value: &str) -> Result<()> {
        self.attribute.verify(value)
    }

    fn restore(&mut self) -> Result<()> {
        self.attribute.restore()
    }

    fn restore_commands(&self) -> Vec<String> {
        self.attribute.restore_commands()
    }

    fn evidence(&self) -> Option<Result<String>> {
        Some(std::fs::read_to_string(&self.stats).with_context(|| {
            format!(
                "reading {} (packing statistics): is debugfs mounted?",
                self.stats.display()
            )
        }))
    }

    fn evidence_delta(&self, before: &str, after: &str) -> String {
        let before = parse_pack_stats(before);
        let after = parse_pack_stats(after);
        let mut total = 0;
        let mut parts = Vec::new();
        for (n, m) in &after {
            let delta = m.saturating_sub(*before.get(n).unwrap_or(&0));
            if *n >= 2 && delta > 0 {
                total += delta;
                parts.push(format!("{n} reqs: +{delta}"));
            }
        }
        if total == 0 {
            format!(
                "{STATS}: no packed writes during this run (if it never counts, enable it \
                 with `echo 1 > {}`)",
                self.stats.display()
            )
        } else {
            format!("{STATS}: +{total} packed writes ({})", parts.join(", "))
        }
    }
}

/// Current threshold, read for `mmcab knobs`.
pub fn describe(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(v) if v >= OFF_THRESHOLD => "off".to_string(),
        Ok(v) => format!("on (packs from {v} queued writes)"),
        Err(_) => value.to_string(),
    }
}

/// Read the attribute for listing; error text names the path.
pub fn read_threshold(path: &std::path::Path) -> Result<String> {
    read_attribute(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS_TEXT: &str = "\
>>> Write packing statistics:
mmc0: Packed 1 reqs - 40 times
mmc0: Packed 2 reqs - 3 times
mmc0: Packed 8 reqs - 1 times
>>> stopped packing because of:
mmc0: 2 times: empty queue
";

    #[test]
    fn stats_parse_and_delta() {
        let stats = parse_pack_stats(STATS_TEXT);
        assert_eq!(stats[&1], 40);
        assert_eq!(stats[&8], 1);
        let knob = PackingKnob::new("/x".into(), "/y".into());
        let after = STATS_TEXT.replace("8 reqs - 1 times", "8 reqs - 6 times");
        assert_eq!(
            knob.evidence_delta(STATS_TEXT, &after),
            "wr_pack_stats: +5 packed writes (8 reqs: +5)"
        );
        assert!(knob
            .evidence_delta(STATS_TEXT, STATS_TEXT)
            .contains("no packed writes"));
    }

    #[test]
    fn values() {
        let dir = tempfile::tempdir().unwrap();
        let attr = dir.path().join(ATTRIBUTE);
        std::fs::write(&attr, "5\n").unwrap();
        let knob = PackingKnob::new(attr, dir.path().join(STATS));
        assert_eq!(knob.normalize("off").unwrap(), "2147483647");
        assert_eq!(knob.normalize("on").unwrap(), "5");
        assert_eq!(knob.normalize("9").unwrap(), "9");
        assert!(knob.normalize("lots").is_err());
        assert_eq!(describe("2147483647"), "off");
        assert!(knob.evidence().unwrap().is_err());
    }
}
