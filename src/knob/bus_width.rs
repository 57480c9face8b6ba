//! The built-in `bus-width` knob: 1, 4 or 8 data lines, switched through the host's
//! debugfs caps and a runtime-PM re-init of the card ([`super::caps`]), verified in
//! `ios`; and how [`super::builtin`] finds it on a device.

use super::attribute::{read_attribute, write_attribute};
use super::caps::{parse_caps, CapsRefused, HostCaps};
use super::env::{unavailable, KnobEnv};
use super::{shell_quote, Knob, Saved, Value};
use crate::device::capabilities::{
    kernel_version, BUS_WIDTH_CAPS_WRITABLE_SINCE, MMC_CAP_4_BIT_DATA, MMC_CAP_8_BIT_DATA,
    MMC_CAP_AGGRESSIVE_PM,
};
use crate::device::caps_gate::{read_only_refusal, ROUTE_BUS_WIDTH};
use crate::device::MmcPaths;
use anyhow::{bail, Context, Result};

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

/// What `ios` says of the bus (read while the card is active).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IosBus {
    pub width: u32,
    pub clock_hz: u64,
}

/// The identification clock's ceiling (JEDEC: at most 400 kHz). A card whose re-init
/// failed stays at it, with 1 data line: the mmc core logs "error -110 doing runtime
/// resume" and still reports the card active (`mmc_runtime_resume()` returns 0).
const IDENTIFICATION_HZ: u64 = 400_000;

/// The built-in `bus-width` knob: 1, 4 or 8 data lines, switched through host caps,
/// verified in `ios`.
pub struct BusWidthKnob {
    host: HostCaps,
    /// Reads the bus from `ios` (card must be active).
    read_ios: Box<dyn Fn() -> Result<IosBus> + Send>,
    /// Caps, width and power/control when mmcab found the device.
    original: Option<(u32, u32, String)>,
}

impl BusWidthKnob {
    pub fn new(host: HostCaps, read_ios: Box<dyn Fn() -> Result<IosBus> + Send>) -> Self {
        BusWidthKnob {
            host,
            read_ios,
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
            err.context(format!(
                "bus-width is not switchable at run time on this kernel; {ROUTE_BUS_WIDTH}"
            ))
        } else {
            err
        }
    }
}

impl Knob for BusWidthKnob {
    fn name(&self) -> &str {
        "bus-width"
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        match value
            .trim()
            .trim_end_matches("-bit")
            .trim_end_matches("bit")
        {
            width @ ("1" | "4" | "8") => Ok(Value::canonical(width)),
            other => bail!("bus-width '{other}': use 1, 4 or 8 (data lines)"),
        }
    }

    fn check(&self, value: &Value, force: bool) -> Result<()> {
        let width: u32 = value.as_str().parse()?;
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
            .while_active(|| (self.read_ios)())
            .map(|bus| bus.width.to_string())
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

    fn original(&self) -> Option<Value> {
        self.original
            .as_ref()
            .map(|(_, width, _)| Value::canonical(width.to_string()))
    }

    fn saved(&self) -> Option<String> {
        let (caps, width, control) = self.original.as_ref()?;
        Some(format!("{width} caps=0x{caps:08x} control={control}"))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        let saved = Saved::parse("bus-width", saved);
        let width: u32 = self.normalize(saved.value)?.as_str().parse()?;
        let caps = parse_caps(saved.field("caps")?)?;
        self.original = Some((caps, width, saved.field("control")?.to_string()));
        Ok(())
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        let width: u32 = value.as_str().parse()?;
        // From the caps as they are now: bits other knobs changed (CMD23) stay.
        let caps = caps_for_width(self.host.read_caps()?, width);
        self.host.write_caps(caps).map_err(Self::refused_message)?;
        self.host
            .reinit()
            .with_context(|| format!("bus-width {width}: re-initialising the card"))
    }

    fn verify(&self, value: &Value) -> Result<()> {
        let bus = self.host.while_active(|| (self.read_ios)())?;
        if *value == *bus.width.to_string() {
            return Ok(());
        }
        if bus.clock_hz <= IDENTIFICATION_HZ {
            bail!(
                "bus-width: the card did not come back from its re-initialisation: ios shows \
                 {} bit(s) at {} Hz, the identification clock, where {value} bits were asked \
                 for; the card stopped answering (dmesg: 'error -110 doing runtime resume') \
                 or failed its init: check the card and dmesg",
                bus.width,
                bus.clock_hz
            );
        }
        bail!(
            "bus-width: ios reports {} bits, not {value}: the switch did not take effect (the \
             host or card may not support {value}-bit mode)",
            bus.width
        );
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
        self.verify(&Value::canonical(width.to_string()))
    }

    fn restore_preconditions(&self) -> Vec<String> {
        match self.original {
            Some(_) => vec![self.host.clear_error_command(), self.host.bind_command()],
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

    fn stage(&self) -> super::Stage {
        super::Stage::BusWidth
    }
}

/// The knob on this device, or why not.
pub(super) fn resolve(env: &KnobEnv, force: bool) -> Result<Box<dyn Knob>> {
    let host = HostCaps::new(&env.paths);
    if !host.caps.exists() {
        return Err(unavailable(
            "bus-width",
            format!(
                "{} does not exist: mount debugfs (mount -t debugfs none /sys/kernel/debug) and \
                 run as root",
                host.caps.display()
            ),
        ));
    }
    if !host.power_control.exists() {
        return Err(unavailable(
            "bus-width",
            format!(
                "{} does not exist: the card has no runtime PM, so it cannot be re-initialised \
                 with a new width; A/B it across boots with --label",
                host.power_control.display()
            ),
        ));
    }
    if let Some(why) = read_only_refusal(&host.caps, &env.kernel_release, ROUTE_BUS_WIDTH) {
        return Err(unavailable("bus-width", why));
    }
    match kernel_version(&env.kernel_release) {
        Some(v) if v >= BUS_WIDTH_CAPS_WRITABLE_SINCE || force => {}
        _ => {
            return Err(unavailable(
                "bus-width",
                format!(
                    "not switchable at run time on this kernel (Linux {}: its debugfs caps \
                     refuses the bus-width bits; they became writable after 6.18); \
                     {ROUTE_BUS_WIDTH} (--force tries anyway)",
                    env.kernel_release
                ),
            ))
        }
    }
    let paths = env.paths.clone();
    Ok(Box::new(BusWidthKnob::new(
        host,
        Box::new(move || {
            let ios = crate::device::ios::read_ios(&paths)?;
            Ok(IosBus {
                width: u32::from(ios.bus_width_bits),
                clock_hz: ios.clock_hz,
            })
        }),
    )))
}

/// How it works here (`mmcab knobs`).
pub(super) fn note(env: &KnobEnv) -> String {
    match HostCaps::new(&env.paths).read_caps() {
        Ok(caps) => format!(
            "switched via debugfs caps + runtime-PM re-init, verified in ios; host came up with \
             {} bits",
            caps_bus_width(caps)
        ),
        Err(_) => String::new(),
    }
}

/// The bus width in ios, when the bus-width knob is unavailable.
pub(super) fn current(env: &KnobEnv) -> Option<String> {
    HostCaps::new(&env.paths)
        .while_active(|| ios_bus_width(&env.paths))
        .ok()
        .map(|w| w.to_string())
}

/// The bus width in bits, from debugfs `ios`.
fn ios_bus_width(paths: &MmcPaths) -> Result<u32> {
    let ios = crate::device::ios::read_ios(paths)?;
    Ok(u32::from(ios.bus_width_bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A knob's ios reader that finds `width` bits at 52 MHz.
    fn bus(width: u32) -> Box<dyn Fn() -> Result<IosBus> + Send> {
        Box::new(move || {
            Ok(IosBus {
                width,
                clock_hz: 52_000_000,
            })
        })
    }

    #[test]
    fn caps_arithmetic_matches_the_testbed() {
        // Booted 8-bit: 0x4000014f -> 4-bit with aggressive PM: 0x4000018f.
        assert_eq!(caps_for_width(0x4000014f, 4), 0x4000018f);
        // Booted 4-bit: 0x4000010f -> 8-bit with aggressive PM: 0x400001cf.
        assert_eq!(caps_for_width(0x4000010f, 8), 0x400001cf);
        assert_eq!(caps_for_width(0x4000014f, 1), 0x4000018e);
        assert_eq!(caps_bus_width(0x4000014f), 8);
        assert_eq!(caps_bus_width(0x4000010f), 4);
    }

    #[test]
    fn a_card_left_at_the_identification_clock_is_named_as_not_back() {
        let (_dir, paths) = fixture("0x4000014f\n");
        let stuck = BusWidthKnob::new(
            HostCaps::new(&paths),
            Box::new(|| {
                Ok(IosBus {
                    width: 1,
                    clock_hz: 400_000,
                })
            }),
        );
        let msg = format!("{:#}", stuck.verify(&Value::canonical("8")).unwrap_err());
        assert!(
            msg.contains("did not come back") && msg.contains("400000 Hz"),
            "{msg}"
        );
        let narrow = BusWidthKnob::new(HostCaps::new(&paths), bus(4));
        let msg = format!("{:#}", narrow.verify(&Value::canonical("8")).unwrap_err());
        assert!(msg.contains("did not take effect"), "{msg}");
        assert!(narrow.verify(&Value::canonical("4")).is_ok());
    }

    fn fixture(caps: &str) -> (tempfile::TempDir, MmcPaths) {
        crate::knob::caps::caps_tree(caps, "0x00020000\n", "on\n")
    }

    #[test]
    fn widening_is_refused_without_force_and_narrowing_allowed() {
        let (_dir, paths) = fixture("0x4000010f\n");
        let knob = BusWidthKnob::new(HostCaps::new(&paths), bus(4));
        let err = knob
            .check(&Value::canonical("8"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("came up with 4 bits") && err.contains("--force"),
            "{err}"
        );
        knob.check(&Value::canonical("8"), true).unwrap();
        knob.check(&Value::canonical("4"), false).unwrap();
        knob.check(&Value::canonical("1"), false).unwrap();
        assert!(knob.normalize("2").is_err());
        assert_eq!(knob.normalize("8-bit").unwrap(), "8");
    }

    /// A resume after a run killed at 4 bits: the saved snapshot of the first start
    /// (8 bits) is what the checks and the restore go by, not the caps found now.
    #[test]
    fn an_adopted_snapshot_wins_over_the_caps_found_now() {
        let (_dir, paths) = fixture("0x4000014f\n");
        let mut first = BusWidthKnob::new(HostCaps::new(&paths), bus(8));
        first.snapshot().unwrap();
        let saved = first.saved().unwrap();
        assert_eq!(saved, "8 caps=0x4000014f control=on");
        let (_now, paths) = fixture("0x4000018f\n");
        let mut resumed = BusWidthKnob::new(HostCaps::new(&paths), bus(4));
        resumed.adopt(&saved).unwrap();
        resumed.snapshot().unwrap();
        assert_eq!(resumed.saved().unwrap(), saved);
        resumed.check(&Value::canonical("8"), false).unwrap();
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
        let mut knob = BusWidthKnob::new(HostCaps::new(&paths), bus(8));
        knob.snapshot().unwrap();
        assert_eq!(knob.original().unwrap(), "8");
        let commands = knob.restore_commands();
        let first = knob.restore_preconditions();
        assert!(
            first[0].ends_with("!= error || echo mmc0:0001 > /sys/bus/mmc/drivers/mmcblk/unbind"),
            "{first:?}"
        );
        assert!(
            first[1].starts_with("test -e ")
                && first[1].ends_with(
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
