//! The host's current bus settings: debugfs `mmcN/ios` (clock, bus width, timing,
//! signal voltage, ...), as `mmc_ios_show()` in drivers/mmc/core/debugfs.c prints it.
//!
//! While the card is runtime-suspended the host shows its idle settings (`bus width:
//! 0 (1 bits)`, see docs/kernel-facts.md), so [`read_ios`] wakes the card with a one-block direct
//! read first when sysfs says it is suspended.

use super::paths::MmcPaths;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The parsed `ios`. meta.json records it per config (`configs[].ios`); fields in
/// alphabetical order, the order its JSON has always had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ios {
    /// `actual clock:` (only some kernels/hosts print it).
    pub actual_clock_hz: Option<u64>,
    /// `bus mode:` "open drain" / "push-pull".
    pub bus_mode: String,
    /// `bus width:` in data lines: 1, 4 or 8.
    pub bus_width_bits: u8,
    /// `clock:` requested bus clock.
    pub clock_hz: u64,
    /// `driver type:` e.g. "driver type B" (newer kernels only).
    pub driver_type: Option<String>,
    /// `power mode:` "off", "up", "on".
    pub power_mode: String,
    /// `signal voltage:` e.g. "3.30 V", "1.80 V".
    pub signal_voltage: String,
    /// `timing spec:` name, e.g. "mmc high-speed", "mmc HS200", "sd uhs SDR104".
    pub timing: String,
    /// `vdd:` e.g. "3.3 ~ 3.4 V" (the text in parentheses), or the raw bit number.
    pub vdd: String,
}

/// Splits "3 (8 bits)" into (3, "8 bits"); "52000000 Hz" into (52000000, "").
fn number_and_label(value: &str) -> (Option<u64>, String) {
    let value = value.trim();
    let (num, rest) = value.split_once(' ').unwrap_or((value, ""));
    let label = rest.trim();
    let label = label
        .strip_prefix('(')
        .and_then(|l| l.strip_suffix(')'))
        .unwrap_or(label);
    (num.parse().ok(), label.to_string())
}

impl Ios {
    /// Parses the text of debugfs `ios`.
    pub fn parse(text: &str) -> Result<Ios> {
        let mut map = std::collections::HashMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':') {
                map.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
        let get = |k: &str| {
            map.get(k)
                .map(|v| number_and_label(v))
                .with_context(|| format!("ios has no \"{k}:\" line"))
        };
        let (clock, _) = get("clock")?;
        let clock_hz = clock.context("ios: clock is not a number")?;
        let actual_clock_hz = map.get("actual clock").and_then(|v| number_and_label(v).0);
        let (_, width) = get("bus width")?;
        let bus_width_bits = match width.as_str() {
            "1 bits" => 1,
            "4 bits" => 4,
            "8 bits" => 8,
            other => bail!("ios: bus width \"{other}\" is not 1, 4 or 8 bits"),
        };
        let label = |k: &str| {
            get(k).map(|(n, l)| {
                if l.is_empty() {
                    n.map(|n| n.to_string()).unwrap_or_default()
                } else {
                    l
                }
            })
        };
        Ok(Ios {
            clock_hz,
            actual_clock_hz,
            bus_width_bits,
            timing: label("timing spec")?,
            signal_voltage: label("signal voltage")?,
            vdd: label("vdd")?,
            power_mode: label("power mode")?,
            bus_mode: label("bus mode")?,
            driver_type: map.get("driver type").map(|v| number_and_label(v).1),
        })
    }
}

/// The card's runtime PM status from sysfs (`active`, `suspended`, ...), if exposed.
pub fn runtime_status(paths: &MmcPaths) -> Option<String> {
    super::sysfs::read_trimmed(paths.card_sysfs.join("power/runtime_status")).ok()
}

/// Wakes a runtime-suspended card: one 4 KiB O_DIRECT read of the disk's first block.
fn wake_card(dev_node: &Path) -> Result<()> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev_node)
        .with_context(|| format!("{}: open to wake the card", dev_node.display()))?;
    // O_DIRECT needs an aligned buffer: take a 4 KiB-aligned window of a larger one.
    let mut buf = vec![0u8; 8192];
    let off = buf.as_ptr().align_offset(4096);
    f.read(&mut buf[off..off + 4096])
        .with_context(|| format!("{}: read to wake the card", dev_node.display()))?;
    Ok(())
}

/// Reads and parses `host_debugfs/ios`, with the card active (see the module docs).
pub fn read_ios(paths: &MmcPaths) -> Result<Ios> {
    let file = paths.host_debugfs.join("ios");
    if runtime_status(paths).as_deref() == Some("suspended") {
        wake_card(&paths.dev_node)?;
    }
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "{}: cannot read (debugfs mounted? run as root; mount -t debugfs -o nosuid,nodev,noexec none /sys/kernel/debug)",
            file.display()
        )
    })?;
    if runtime_status(paths).as_deref() == Some("suspended") {
        bail!(
            "{}: card {} is runtime-suspended, ios shows the idle bus (1 bit); \
             read it again while the card is busy or after `echo on > {}`",
            file.display(),
            paths.card,
            paths.card_sysfs.join("power/control").display()
        );
    }
    Ios::parse(&text).with_context(|| format!("{}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;

    #[test]
    fn qemu_captures_parse_4_and_8_bits() {
        let four = Ios::parse(Capture::load("cap-linux6-bus4.txt").get("ios").unwrap()).unwrap();
        let eight = Ios::parse(Capture::load("cap-linux7-bus8.txt").get("ios").unwrap()).unwrap();
        assert_eq!(four.bus_width_bits, 4);
        assert_eq!(eight.bus_width_bits, 8);
        for ios in [&four, &eight] {
            assert_eq!(ios.clock_hz, 52_000_000);
            assert_eq!(ios.timing, "mmc high-speed");
            assert_eq!(ios.signal_voltage, "3.30 V");
            assert_eq!(ios.vdd, "3.3 ~ 3.4 V");
            assert_eq!(ios.power_mode, "on");
            assert_eq!(ios.bus_mode, "push-pull");
            assert_eq!(ios.driver_type.as_deref(), Some("driver type B"));
            assert_eq!(ios.actual_clock_hz, None);
        }
    }

    #[test]
    fn beaglebone_ios_from_the_2013_post_parses() {
        // BeagleBone, 2013 (results/reference/beaglebone-2013-bus-width.csv): no driver type line.
        let text = "clock:\t\t52000000 Hz\nvdd:\t\t7 (1.65 - 1.95 V)\nbus mode:\t2 (push-pull)\n\
                    chip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t3 (8 bits)\n\
                    timing spec:\t1 (mmc high-speed)\nsignal voltage:\t0 (3.30 V)\n";
        let ios = Ios::parse(text).unwrap();
        assert_eq!((ios.bus_width_bits, ios.clock_hz), (8, 52_000_000));
        assert_eq!(ios.vdd, "1.65 - 1.95 V");
        assert_eq!(ios.driver_type, None);
    }

    #[test]
    fn suspended_one_bit_and_garbage_are_reported() {
        let text = "clock:\t\t0 Hz\nbus width:\t0 (1 bits)\ntiming spec:\t0 (legacy)\n\
                    signal voltage:\t0 (3.30 V)\nvdd:\t\t0 (invalid)\npower mode:\t0 (off)\nbus mode:\t2 (push-pull)\n";
        assert_eq!(Ios::parse(text).unwrap().bus_width_bits, 1);
        let err = Ios::parse("clock: fast\n").unwrap_err();
        assert!(err.to_string().contains("clock"), "{err}");
        assert!(Ios::parse("bus width:\t9 (16 bits)\nclock: 1 Hz\n").is_err());
    }
}
