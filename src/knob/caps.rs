//! Host capability knobs: bits in debugfs `caps`/`caps2` of an MMC host, made effective by
//! a runtime-PM cycle of the card (power off, re-initialise with the new caps).
//!
//! The sequence (verified on Linux 7.2, see docs/kernel-facts.md): write caps
//! with MMC_CAP_AGGRESSIVE_PM (0x80) set, `auto` to the card's `power/control`, wait past
//! `autosuspend_delay_ms` until `runtime_status` is `suspended`, then `on` and wait for
//! `active`. The card re-initialises with the new caps. The result is verified where the
//! kernel reports it (`ios`), read only while the card is active: a suspended card shows
//! `0 (1 bits)`.

use super::attribute::{read_attribute, write_attribute};
use super::{shell_quote, Knob, Saved};
use crate::device::MmcPaths;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::device::capabilities::{MMC_CAP_4_BIT_DATA, MMC_CAP_8_BIT_DATA, MMC_CAP_AGGRESSIVE_PM};

/// The debugfs caps files of a host and the runtime-PM files of its card.
#[derive(Debug, Clone)]
pub struct HostCaps {
    /// The card's name on the mmc bus (`mmc0:0001`).
    pub card: String,
    pub caps: PathBuf,
    pub caps2: PathBuf,
    pub power_control: PathBuf,
    pub runtime_status: PathBuf,
    pub autosuspend_delay_ms: PathBuf,
}

impl HostCaps {
    pub fn new(paths: &MmcPaths) -> HostCaps {
        let power = paths.card_sysfs.join("power");
        HostCaps {
            card: paths.card.clone(),
            caps: paths.host_debugfs.join("caps"),
            caps2: paths.host_debugfs.join("caps2"),
            power_control: power.join("control"),
            runtime_status: power.join("runtime_status"),
            autosuspend_delay_ms: power.join("autosuspend_delay_ms"),
        }
    }

    pub fn read_caps(&self) -> Result<u32> {
        read_word(&self.caps)
    }

    pub fn read_caps2(&self) -> Result<u32> {
        read_word(&self.caps2)
    }

    /// Write caps; EINVAL (this kernel refuses the change) comes back as [`CapsRefused`].
    pub fn write_caps(&self, caps: u32) -> Result<()> {
        write_word(&self.caps, caps)
    }

    /// Write caps2, like [`HostCaps::write_caps`].
    pub fn write_caps2(&self, caps2: u32) -> Result<()> {
        write_word(&self.caps2, caps2)
    }

    fn autosuspend_delay(&self) -> Duration {
        read_attribute(&self.autosuspend_delay_ms)
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(3))
    }

    fn wait_status(&self, want: &str, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let status = read_attribute(&self.runtime_status)?;
            if status == want {
                return Ok(());
            }
            if status == "unsupported" {
                // Runtime PM is disabled for the card: what mmc_blk_remove leaves when the
                // block driver is unbound (seen on Linux 7.2). No re-init can come.
                bail!(
                    "{} is 'unsupported': runtime PM is off for the card, so it cannot be \
                     re-initialised (is its driver unbound? {})",
                    self.runtime_status.display(),
                    self.bind_command()
                );
            }
            if start.elapsed() > timeout {
                bail!(
                    "{} stayed '{status}' for {:.1} s instead of becoming '{want}': the card \
                     did not re-initialise (is runtime PM enabled for it?)",
                    self.runtime_status.display(),
                    timeout.as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Power the card off and on through runtime PM so it renegotiates with the current
    /// caps; leaves `power/control` at `on` (card active).
    pub fn reinit(&self) -> Result<()> {
        write_attribute(&self.power_control, "auto")?;
        let delay = self.autosuspend_delay();
        std::thread::sleep(delay + Duration::from_millis(200));
        self.wait_status("suspended", delay + Duration::from_secs(10))?;
        write_attribute(&self.power_control, "on")?;
        self.wait_status("active", Duration::from_secs(10))
    }

    /// Run `read` with the card runtime-active (ios of a suspended card is not the truth),
    /// putting `power/control` back as it was.
    pub fn while_active<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let status = read_attribute(&self.runtime_status).unwrap_or_else(|_| "active".into());
        if status == "active" {
            return read();
        }
        let control = read_attribute(&self.power_control)?;
        write_attribute(&self.power_control, "on")?;
        let result = self
            .wait_status("active", Duration::from_secs(10))
            .and_then(|_| read());
        write_attribute(&self.power_control, &control)?;
        result
    }

    /// Binds the card's block driver again unless it is bound: runtime PM, and so the
    /// re-init, needs it (a card whose driver was unbound stays as it was).
    pub fn bind_command(&self) -> String {
        let card = shell_quote(&self.card);
        let driver = self
            .power_control
            .parent()
            .and_then(Path::parent)
            .map(|card_dir| shell_quote(&card_dir.join("driver").to_string_lossy()));
        format!(
            "test -e {} || echo {card} > /sys/bus/mmc/drivers/mmcblk/bind",
            driver.unwrap_or_else(|| format!("/sys/bus/mmc/devices/{card}/driver"))
        )
    }

    /// Shell commands for a write of `caps` followed by the re-init.
    pub fn reinit_commands(&self, caps: u32) -> Vec<String> {
        let control = shell_quote(&self.power_control.to_string_lossy());
        let delay_s = self.autosuspend_delay().as_secs() + 1;
        vec![
            format!(
                "echo 0x{caps:08x} > {}",
                shell_quote(&self.caps.to_string_lossy())
            ),
            format!("echo auto > {control}"),
            format!("sleep {delay_s}"),
            format!("echo on > {control}"),
        ]
    }
}

fn read_word(path: &std::path::Path) -> Result<u32> {
    parse_caps(&read_attribute(path)?).with_context(|| format!("parsing {}", path.display()))
}

/// Write a caps word as the kernel prints it; EINVAL becomes [`CapsRefused`].
fn write_word(path: &std::path::Path, caps: u32) -> Result<()> {
    match write_attribute(path, &format!("0x{caps:08x}")) {
        Ok(()) => Ok(()),
        Err(err) => {
            let einval = err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .and_then(|e| e.raw_os_error())
                    == Some(libc::EINVAL)
            });
            if einval {
                Err(CapsRefused {
                    path: path.to_path_buf(),
                    caps,
                }
                .into())
            } else {
                Err(err)
            }
        }
    }
}

/// The kernel refused a caps write with EINVAL.
#[derive(Debug)]
pub struct CapsRefused {
    pub path: PathBuf,
    pub caps: u32,
}

impl std::fmt::Display for CapsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this kernel refused 0x{:08x} in {} (EINVAL): it does not allow these caps bits \
             to change at run time",
            self.caps,
            self.path.display()
        )
    }
}

impl std::error::Error for CapsRefused {}

pub fn parse_caps(text: &str) -> Result<u32> {
    let t = text.trim();
    let value = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse::<u32>(),
    };
    value.map_err(|_| anyhow::anyhow!("'{t}' is not a caps value (expected hex like 0x4000014f)"))
}

/// The widest data bus the caps allow: what the host came up with (from the device tree).
pub fn caps_bus_width(caps: u32) -> u32 {
    if caps & MMC_CAP_8_BIT_DATA != 0 {
        8
    } else if caps & MMC_CAP_4_BIT_DATA != 0 {
        4
    } else {
        1
    }
}

/// `caps` changed to allow exactly `width` bits, with aggressive PM for the re-init.
pub fn caps_for_width(caps: u32, width: u32) -> u32 {
    let bits = match width {
        8 => MMC_CAP_8_BIT_DATA | MMC_CAP_4_BIT_DATA,
        4 => MMC_CAP_4_BIT_DATA,
        _ => 0,
    };
    (caps & !(MMC_CAP_8_BIT_DATA | MMC_CAP_4_BIT_DATA)) | bits | MMC_CAP_AGGRESSIVE_PM
}

/// The built-in `bus-width` knob: 1, 4 or 8 data lines, switched through host caps,
/// verified in `ios`.
pub struct BusWidthKnob {
    host: HostCaps,
    /// Reads the bus width in bits from `ios` (card must be active).
    read_ios_width: Box<dyn Fn() -> Result<u32> + Send>,
    /// Caps, width and power/control when mmcab found the device.
    original: Option<(u32, u32, String)>,
}

impl BusWidthKnob {
    pub fn new(host: HostCaps, read_ios_width: Box<dyn Fn() -> Result<u32> + Send>) -> Self {
        BusWidthKnob {
            host,
            read_ios_width,
            original: None,
        }
    }

    fn original_caps(&self) -> Result<u32> {
        match &self.original {
            Some((caps, _, _)) => Ok(*caps),
            None => self.host.read_caps(),
        }
    }

    fn refused_message(err: anyhow::Error) -> anyhow::Error {
        if err.downcast_ref::<CapsRefused>().is_some() {
            err.context(
                "bus-width is not switchable at run time on this kernel; A/B it across boots \
                 with --label (one boot per device-tree bus-width)",
            )
        } else {
            err
        }
    }
}

impl Knob for BusWidthKnob {
    fn name(&self) -> &str {
        "bus-width"
    }

    fn normalize(&self, value: &str) -> Result<String> {
        match value
            .trim()
            .trim_end_matches("-bit")
            .trim_end_matches("bit")
        {
            "1" => Ok("1".into()),
            "4" => Ok("4".into()),
            "8" => Ok("8".into()),
            other => bail!("bus-width '{other}': use 1, 4 or 8 (data lines)"),
        }
    }

    fn check(&self, value: &str, force: bool) -> Result<()> {
        let width: u32 = self.normalize(value)?.parse()?;
        let caps = self.original_caps()?;
        let host_width = caps_bus_width(caps);
        if width > host_width && !force {
            bail!(
                "bus-width {width}: refused, the host came up with {host_width} bits (caps \
                 0x{caps:08x}, usually the device tree's bus-width). Widening past it may use \
                 data lines that are not wired on this board; pass --force if you know they are"
            );
        }
        Ok(())
    }

    fn read(&self) -> Result<String> {
        self.host
            .while_active(|| (self.read_ios_width)())
            .map(|w| w.to_string())
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.original.is_none() {
            let caps = self.host.read_caps()?;
            let width: u32 = self.read()?.parse()?;
            let control = read_attribute(&self.host.power_control)?;
            self.original = Some((caps, width, control));
        }
        Ok(())
    }

    fn original(&self) -> Option<String> {
        self.original
            .as_ref()
            .map(|(_, width, _)| width.to_string())
    }

    fn saved(&self) -> Option<String> {
        let (caps, width, control) = self.original.as_ref()?;
        Some(format!("{width} caps=0x{caps:08x} control={control}"))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse("bus-width", saved);
        let width: u32 = self.normalize(saved.value)?.parse()?;
        let caps = parse_caps(saved.field("caps")?)?;
        self.original = Some((caps, width, saved.field("control")?.to_string()));
        Ok(())
    }

    fn apply(&mut self, value: &str) -> Result<()> {
        let width: u32 = self.normalize(value)?.parse()?;
        // From the caps as they are now: bits other knobs changed (CMD23) stay.
        let caps = caps_for_width(self.host.read_caps()?, width);
        self.host.write_caps(caps).map_err(Self::refused_message)?;
        self.host
            .reinit()
            .with_context(|| format!("bus-width {width}: re-initialising the card"))
    }

    fn verify(&self, value: &str) -> Result<()> {
        let found = self.read()?;
        if found != value {
            bail!(
                "bus-width: ios reports {found} bits, not {value}: the switch did not take \
                 effect (the host or card may not support {value}-bit mode)"
            );
        }
        Ok(())
    }

    fn restore(&mut self) -> Result<()> {
        let Some((caps, width, control)) = self.original.clone() else {
            return Ok(());
        };
        let now_caps = self.host.read_caps()?;
        if now_caps != caps || self.read()? != width.to_string() {
            self.host.write_caps(caps | MMC_CAP_AGGRESSIVE_PM)?;
            self.host.reinit()?;
            self.host.write_caps(caps)?;
        }
        write_attribute(&self.host.power_control, &control)?;
        self.verify(&width.to_string())
    }

    fn restore_preconditions(&self) -> Vec<String> {
        match self.original {
            Some(_) => vec![self.host.bind_command()],
            None => Vec::new(),
        }
    }

    fn restore_commands(&self) -> Vec<String> {
        let Some((caps, _, control)) = &self.original else {
            return Vec::new();
        };
        let mut commands = self.host.reinit_commands(caps | MMC_CAP_AGGRESSIVE_PM);
        commands.push(format!(
            "echo 0x{caps:08x} > {}",
            shell_quote(&self.host.caps.to_string_lossy())
        ));
        commands.push(format!(
            "echo {} > {}",
            shell_quote(control),
            shell_quote(&self.host.power_control.to_string_lossy())
        ));
        commands
    }
}

/// A card's tree under a temporary directory as the caps knobs see it: the host's
/// `caps` and `caps2`, the card's `power/control` and an active `runtime_status`.
#[cfg(test)]
pub(crate) fn caps_tree(caps: &str, caps2: &str, control: &str) -> (tempfile::TempDir, MmcPaths) {
    let dir = tempfile::tempdir().unwrap();
    let paths = MmcPaths::under(dir.path());
    std::fs::create_dir_all(paths.card_sysfs.join("power")).unwrap();
    std::fs::create_dir_all(&paths.host_debugfs).unwrap();
    std::fs::write(paths.host_debugfs.join("caps"), caps).unwrap();
    std::fs::write(paths.host_debugfs.join("caps2"), caps2).unwrap();
    std::fs::write(paths.card_sysfs.join("power/control"), control).unwrap();
    std::fs::write(paths.card_sysfs.join("power/runtime_status"), "active\n").unwrap();
    (dir, paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_arithmetic_matches_the_testbed() {
        // Booted 8-bit: 0x4000014f -> 4-bit with aggressive PM: 0x4000018f.
        assert_eq!(caps_for_width(0x4000014f, 4), 0x4000018f);
        // Booted 4-bit: 0x4000010f -> 8-bit with aggressive PM: 0x400001cf.
        assert_eq!(caps_for_width(0x4000010f, 8), 0x400001cf);
        assert_eq!(caps_for_width(0x4000014f, 1), 0x4000018e);
        assert_eq!(caps_bus_width(0x4000014f), 8);
        assert_eq!(caps_bus_width(0x4000010f), 4);
        assert_eq!(parse_caps("0x4000014f\n").unwrap(), 0x4000014f);
        assert!(parse_caps("caps").is_err());
    }

    fn fixture(caps: &str) -> (tempfile::TempDir, MmcPaths) {
        caps_tree(caps, "0x00020000\n", "on\n")
    }

    #[test]
    fn widening_is_refused_without_force_and_narrowing_allowed() {
        let (_dir, paths) = fixture("0x4000010f\n");
        let knob = BusWidthKnob::new(HostCaps::new(&paths), Box::new(|| Ok(4)));
        let err = knob.check("8", false).unwrap_err().to_string();
        assert!(
            err.contains("came up with 4 bits") && err.contains("--force"),
            "{err}"
        );
        knob.check("8", true).unwrap();
        knob.check("4", false).unwrap();
        knob.check("1", false).unwrap();
        assert!(knob.normalize("2").is_err());
        assert_eq!(knob.normalize("8-bit").unwrap(), "8");
    }

    /// A resume after a run killed at 4 bits: the saved snapshot of the first start
    /// (8 bits) is what the checks and the restore go by, not the caps found now.
    #[test]
    fn an_adopted_snapshot_wins_over_the_caps_found_now() {
        let (_dir, paths) = fixture("0x4000014f\n");
        let mut first = BusWidthKnob::new(HostCaps::new(&paths), Box::new(|| Ok(8)));
        first.snapshot().unwrap();
        let saved = first.saved().unwrap();
        assert_eq!(saved, "8 caps=0x4000014f control=on");
        let (_now, paths) = fixture("0x4000018f\n");
        let mut resumed = BusWidthKnob::new(HostCaps::new(&paths), Box::new(|| Ok(4)));
        resumed.adopt(&saved).unwrap();
        resumed.snapshot().unwrap();
        assert_eq!(resumed.saved().unwrap(), saved);
        resumed.check("8", false).unwrap();
        assert!(resumed
            .restore_commands()
            .iter()
            .any(|c| c.starts_with("echo 0x4000014f > ")));
        let err = resumed.adopt("8 control=on").unwrap_err().to_string();
        assert!(err.contains("no caps="), "{err}");
    }

    #[test]
    fn restore_commands_follow_the_testbed_sequence() {
        let (_dir, paths) = fixture("0x4000014f\n");
        let mut knob = BusWidthKnob::new(HostCaps::new(&paths), Box::new(|| Ok(8)));
        knob.snapshot().unwrap();
        assert_eq!(knob.original().as_deref(), Some("8"));
        let commands = knob.restore_commands();
        let first = knob.restore_preconditions();
        assert!(
            first[0].starts_with("test -e ")
                && first[0].ends_with(
                    "/sys/bus/mmc/devices/mmc0:0001/driver || echo mmc0:0001 > \
                     /sys/bus/mmc/drivers/mmcblk/bind"
                ),
            "{first:?}"
        );
        assert!(
            commands[0].starts_with("echo 0x400001cf > "),
            "{commands:?}"
        );
        assert!(commands[1].starts_with("echo auto > "));
        assert!(commands[2].starts_with("sleep "));
        assert!(commands[3].starts_with("echo on > "));
        assert!(commands[4].starts_with("echo 0x4000014f > "));
        // Nothing changed: restore writes power/control back and verifies, no re-init.
        knob.restore().unwrap();
    }
}
