//! `mmcab info`: everything about one card as one typed [`DeviceInfo`]: what
//! `mmcab info --json` prints (schema in docs/json.md, "mmcab info --json"), what
//! `meta.json` records as `device` and what `mmcab compare` checks the card's identity
//! with. [`super::info_read`] reads it from the kernel, [`super::render`] makes the human
//! text from it.
//!
//! Every struct here lists its fields in alphabetical order. serde writes the JSON keys
//! in field order and schema 1 has always had its keys sorted, so the JSON stays the same
//! byte for byte (the tests hold it against the output of mmcab 0.1.0).

use super::capabilities::Capabilities;
use super::cid::Csd;
use super::ext_csd::{DecodedValue, ExtCsd, ExtCsdSource};
use super::ext_csd_table::FIELDS;
use super::info_speed::SpeedModes;
use super::ios::Ios;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Version of the JSON layout; bumped when a key changes meaning or goes away.
pub const INFO_SCHEMA: u32 = 1;

/// One card as `mmcab info --json` shows it. A part that could not be read is `None`
/// and its `*_error` sibling says why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub capabilities: Capabilities,
    /// sysfs block `size` x 512.
    pub capacity_bytes: Option<u64>,
    /// The card as the kernel names it, e.g. `mmc0:0001`.
    pub card: String,
    /// The decoded CSD register (from sysfs `csd`).
    pub csd: Option<Csd>,
    /// The whole-disk node, e.g. `/dev/mmcblk0`.
    pub device: PathBuf,
    /// e.g. `mmcblk0`.
    pub disk: String,
    pub ext_csd: Option<ExtCsdInfo>,
    pub ext_csd_error: Option<String>,
    /// e.g. `mmc0`.
    pub host: String,
    pub host_caps: HostCapsText,
    /// The driver of the host, its module and the module's parameters (absent when the
    /// host device has no driver bound, and in meta.json of older mmcab versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_driver: Option<HostDriver>,
    pub identity: Option<Identity>,
    pub identity_error: Option<String>,
    pub ios: Option<IosInfo>,
    pub ios_error: Option<String>,
    /// `uname -r`.
    pub kernel_release: String,
    pub paths: InfoPaths,
    /// [`INFO_SCHEMA`].
    pub schema: u32,
    /// What the card offers and is set to, and the host's speed bits (eMMC only; absent
    /// for other cards and in meta.json of older mmcab versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_modes: Option<SpeedModes>,
    /// [`DeviceInfo::summary_line`], e.g. "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit
    /// 52 MHz mmc high-speed".
    pub summary: String,
    /// Every readable attribute file of the card's sysfs directory, trimmed.
    pub sysfs: BTreeMap<String, String>,
    /// sysfs `type`: `MMC`, `SD`, `SDIO` (`unknown` when missing).
    #[serde(rename = "type")]
    pub card_type: String,
}

/// The CID decoded as the kernel decodes it, with the registers as sysfs shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// sysfs `cid` (32 hex digits).
    pub cid: String,
    /// sysfs `csd`.
    pub csd: Option<String>,
    /// `MM/YYYY`, as sysfs `date`.
    pub date: String,
    /// eMMC CBX: `removable`, `BGA`, `POP` (SD: None).
    pub device_type: Option<String>,
    pub fwrev: u8,
    pub hwrev: u8,
    pub manfid: u32,
    /// Vendor name from mmcab's table, or `unknown (manfid 0x..)`.
    pub manufacturer: String,
    pub month: u8,
    pub name: String,
    pub oemid: u16,
    pub prv: u8,
    pub serial: u32,
    /// The card type, as the top-level `type`.
    #[serde(rename = "type")]
    pub card_type: String,
    pub year: u16,
}

/// debugfs `ios` in `info --json`: [`Ios`] with `bus_width` for `bus_width_bits`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IosInfo {
    pub actual_clock_hz: Option<u64>,
    pub bus_mode: String,
    /// Data lines now: 1, 4 or 8.
    pub bus_width: u8,
    pub clock_hz: u64,
    pub driver_type: Option<String>,
    pub power_mode: String,
    pub signal_voltage: String,
    pub timing: String,
    pub vdd: String,
}

impl From<&Ios> for IosInfo {
    fn from(ios: &Ios) -> Self {
        IosInfo {
            actual_clock_hz: ios.actual_clock_hz,
            bus_mode: ios.bus_mode.clone(),
            bus_width: ios.bus_width_bits,
            clock_hz: ios.clock_hz,
            driver_type: ios.driver_type.clone(),
            power_mode: ios.power_mode.clone(),
            signal_voltage: ios.signal_voltage.clone(),
            timing: ios.timing.clone(),
            vdd: ios.vdd.clone(),
        }
    }
}

/// EXT_CSD: the register, every field of mmcab's table decoded and raw, and its layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtCsdInfo {
    /// JEDEC name -> where the field lies.
    pub field_layout: BTreeMap<String, FieldLayout>,
    /// JEDEC name -> decoded value ([`DecodedValue::NotDefined`] below its `since_rev`).
    pub fields: BTreeMap<String, DecodedValue>,
    /// JEDEC name -> the field's bytes as a little-endian integer.
    pub fields_raw: BTreeMap<String, u64>,
    /// 1024 hex digits, byte 0 first (the format of debugfs `ext_csd`).
    pub raw: String,
    /// EXT_CSD_REV.
    pub rev: u8,
    pub source: ExtCsdVia,
    /// Why the ioctl failed, when the register came from debugfs.
    pub source_note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldLayout {
    pub offset: usize,
    pub since_rev: u8,
    pub width: usize,
}

/// How the EXT_CSD was read: CMD8 through the mmc ioctl, or the kernel's debugfs copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtCsdVia {
    Ioctl,
    Debugfs,
}

impl ExtCsdVia {
    pub fn as_str(self) -> &'static str {
        match self {
            ExtCsdVia::Ioctl => "ioctl",
            ExtCsdVia::Debugfs => "debugfs",
        }
    }
}

impl ExtCsdInfo {
    pub fn new(x: &ExtCsd, source: &ExtCsdSource) -> Self {
        let (source, source_note) = match source {
            ExtCsdSource::Ioctl => (ExtCsdVia::Ioctl, None),
            ExtCsdSource::Debugfs { ioctl_error } => (
                ExtCsdVia::Debugfs,
                Some(format!("ioctl failed: {ioctl_error}")),
            ),
        };
        ExtCsdInfo {
            field_layout: FIELDS
                .iter()
                .map(|f| {
                    let layout = FieldLayout {
                        offset: f.offset,
                        since_rev: f.since_rev,
                        width: f.width,
                    };
                    (f.name.to_string(), layout)
                })
                .collect(),
            fields: by_name(x.decoded()),
            fields_raw: by_name(x.fields_raw()),
            raw: x.to_hex(),
            rev: x.rev(),
            source,
            source_note,
        }
    }
}

fn by_name<V>(fields: Vec<(&'static str, V)>) -> BTreeMap<String, V> {
    fields
        .into_iter()
        .map(|(name, v)| (name.to_string(), v))
        .collect()
}

/// debugfs `caps` and `caps2` of the host, as read (hex text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCapsText {
    pub caps: Option<String>,
    pub caps2: Option<String>,
}

/// The driver of the card's MMC host as sysfs shows it, for any host alike: the host
/// device (`/sys/class/mmc_host/<host>/device`), its `driver` link and that driver's
/// `module` link into `/sys/module`, with the module's parameters and version. What a
/// driver patch or a driver's tunables change, recorded so that reports name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostDriver {
    /// Built into the kernel: no `module` link, or a `/sys/module` entry of a built-in
    /// driver (no `initstate`; it holds the parameters all the same).
    pub builtin: bool,
    /// The host device as sysfs names it, e.g. `1e750100.sdhci`.
    pub device: String,
    /// The driver's name (the `driver` link's basename), e.g. `sdhci-aspeed`.
    pub driver: String,
    /// The module's name (the `driver/module` link's basename), e.g. `sdhci_of_aspeed`;
    /// None when the driver has no module link.
    pub module: Option<String>,
    /// Every readable file of `/sys/module/<module>/parameters`: name -> content,
    /// trimmed (empty without a module).
    pub parameters: BTreeMap<String, String>,
    /// `/sys/module/<module>/srcversion`, if present.
    pub srcversion: Option<String>,
    /// `/sys/module/<module>/version` (MODULE_VERSION), if present.
    pub version: Option<String>,
}

impl HostDriver {
    /// The driver and where it comes from: `emmcsim (module emmcsim 1.0)`,
    /// `sdhci-aspeed (built in)`, `sdhci-aspeed (built in as sdhci_of_aspeed)`.
    pub fn summary(&self) -> String {
        format!("{} ({})", self.driver, self.origin())
    }

    /// [`HostDriver::summary`] with the number of module parameters, as `mmcab info`
    /// shows it: `emmcsim (module emmcsim 1.0, 17 parameters)`.
    pub fn summary_with_parameters(&self) -> String {
        let count = match self.parameters.len() {
            _ if self.module.is_none() => String::new(),
            0 => ", no parameters".to_string(),
            1 => ", 1 parameter".to_string(),
            n => format!(", {n} parameters"),
        };
        format!("{} ({}{count})", self.driver, self.origin())
    }

    /// `module emmcsim 1.0`, `built in`, `built in as sdhci_of_aspeed`.
    pub fn origin(&self) -> String {
        let mut text = match (&self.module, self.builtin) {
            (None, _) => "built in".to_string(),
            (Some(m), true) if *m == self.driver => "built in".to_string(),
            (Some(m), true) => format!("built in as {m}"),
            (Some(m), false) => format!("module {m}"),
        };
        if let Some(v) = &self.version {
            text.push(' ');
            text.push_str(v);
        }
        text
    }
}

/// Where the facts came from (see [`MmcPaths`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoPaths {
    pub block_sysfs: PathBuf,
    pub card_debugfs: PathBuf,
    pub card_sysfs: PathBuf,
    pub host_debugfs: PathBuf,
}

impl DeviceInfo {
    /// What identifies the card, as (name, value) pairs: the CID's manfid, oemid, name
    /// and serial and the capacity (what `mmcab compare` and `--resume` check; bus
    /// width, clock and timing may differ). A part that could not be read is `null`,
    /// as meta.json has it.
    pub fn identity_fields(&self) -> Vec<(&'static str, String)> {
        fn text<T: ToString>(v: Option<T>) -> String {
            v.map_or_else(|| "null".to_string(), |v| v.to_string())
        }
        let id = self.identity.as_ref();
        vec![
            ("manfid", text(id.map(|i| i.manfid))),
            ("oemid", text(id.map(|i| i.oemid))),
            ("name", text(id.map(|i| &i.name))),
            ("serial", text(id.map(|i| i.serial))),
            ("capacity_bytes", text(self.capacity_bytes)),
        ]
    }

    /// One line for humans and meta.json, e.g.
    /// "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed".
    pub fn summary_line(&self) -> String {
        let id = self.identity.as_ref();
        let name = id.map_or("unknown card", |i| i.name.as_str());
        let manfid = id
            .map(|i| format!(" (manfid 0x{:06x})", i.manfid))
            .unwrap_or_default();
        let kind = match self.card_type.as_str() {
            "MMC" => "eMMC",
            other => other,
        };
        let size = self
            .capacity_bytes
            .map(|b| format!("{} ", human_bytes(b)))
            .unwrap_or_default();
        let bus = match &self.ios {
            Some(ios) => format!(
                ", {}-bit {} {}",
                ios.bus_width,
                human_hz(ios.clock_hz),
                ios.timing
            ),
            None => ", bus unknown".to_string(),
        };
        format!("{name}{manfid} {size}{kind}{bus}")
            .trim_end()
            .to_string()
    }
}

/// "256 MiB", "1.8 GiB": binary units with a space, one decimal when not whole.
fn human_bytes(bytes: u64) -> String {
    binary_size(bytes, 1)
}

/// Bytes in binary units (TiB down to KiB) with a space: whole ones without decimals
/// (`4 MiB`), others with `decimals` (`3.64 GiB` with 2), below 1 KiB in bytes.
pub fn binary_size(bytes: u64, decimals: usize) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let one = 1u64 << shift;
        if bytes >= one {
            return if bytes % one == 0 {
                format!("{} {unit}", bytes / one)
            } else {
                format!("{:.*} {unit}", decimals, bytes as f64 / one as f64)
            };
        }
    }
    format!("{bytes} B")
}

pub(super) fn human_hz(hz: u64) -> String {
    if hz >= 1_000_000 {
        let mhz = hz as f64 / 1e6;
        if hz % 1_000_000 == 0 {
            format!("{} MHz", hz / 1_000_000)
        } else {
            format!("{mhz:.2} MHz")
        }
    } else if hz >= 1000 {
        format!("{} kHz", hz / 1000)
    } else {
        format!("{hz} Hz")
    }
}

#[cfg(test)]
#[path = "info_tests.rs"]
mod tests;
