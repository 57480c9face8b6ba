//! EXT_CSD: the eMMC's 512-byte extended CSD register, read with CMD8 through the ioctl
//! (falling back to the kernel's debugfs copy), and decoded with the table in
//! [`super::ext_csd_table`].

use super::ext_csd_table::{Decoder, Field, FIELDS};
use super::paths::MmcPaths;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A decoded EXT_CSD value. JSON: numbers stay numbers, sizes are `{"bytes": N}`,
/// times `{"ns": N}`, bit sets a list of names, and a field the card's EXT_CSD_REV does
/// not define is `null` (its byte is still in `fields_raw` and `raw`). Read back from
/// that JSON (meta.json) by trying the variants in this order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DecodedValue {
    Number(u64),
    Bool(bool),
    Bytes { bytes: u64 },
    Duration { ns: u64 },
    Text(String),
    Flags(Vec<String>),
    NotDefined,
}

impl fmt::Display for DecodedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodedValue::Number(n) => write!(f, "{n}"),
            DecodedValue::Bool(b) => write!(f, "{}", if *b { "yes" } else { "no" }),
            DecodedValue::Bytes { bytes } => {
                if *bytes < 1024 {
                    write!(f, "{bytes} bytes")
                } else {
                    write!(f, "{} ({bytes} bytes)", crate::units::format_size(*bytes))
                }
            }
            DecodedValue::Duration { ns } => {
                if *ns >= 1_000_000 {
                    write!(f, "{} ms", *ns as f64 / 1e6)
                } else if *ns >= 1_000 {
                    write!(f, "{} us", *ns as f64 / 1e3)
                } else {
                    write!(f, "{ns} ns")
                }
            }
            DecodedValue::Text(t) => f.write_str(t),
            DecodedValue::Flags(v) if v.is_empty() => f.write_str("none"),
            DecodedValue::Flags(v) => f.write_str(&v.join(" ")),
            DecodedValue::NotDefined => f.write_str("not defined at this EXT_CSD_REV"),
        }
    }
}

/// Where the EXT_CSD came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtCsdSource {
    /// CMD8 through `MMC_IOC_CMD`: read from the card just now.
    Ioctl,
    /// The kernel's debugfs `ext_csd` (also read from the card by the kernel when the
    /// file is opened); used when the ioctl failed, with the reason.
    Debugfs { ioctl_error: String },
}

impl ExtCsdSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            ExtCsdSource::Ioctl => "ioctl",
            ExtCsdSource::Debugfs { .. } => "debugfs",
        }
    }
}

/// The raw register, byte 0 first.
#[derive(Clone, PartialEq, Eq)]
pub struct ExtCsd {
    pub raw: [u8; 512],
}

impl fmt::Debug for ExtCsd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExtCsd(rev {}, {})", self.rev(), self.to_hex())
    }
}

impl ExtCsd {
    /// Parses the debugfs `ext_csd` format: 1024 hex digits, byte 0 first (whitespace
    /// ignored).
    pub fn from_hex(text: &str) -> Result<ExtCsd> {
        let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if digits.len() != 1024 {
            bail!(
                "EXT_CSD hex has {} digits, expected 1024 (512 bytes)",
                digits.len()
            );
        }
        let mut raw = [0u8; 512];
        for (i, pair) in digits.chunks(2).enumerate() {
            let s = std::str::from_utf8(pair).unwrap_or("??");
            raw[i] = u8::from_str_radix(s, 16)
                .with_context(|| format!("EXT_CSD hex: byte {i} is {s:?}, not hex"))?;
        }
        Ok(ExtCsd { raw })
    }

    /// Same format as debugfs `ext_csd`: 1024 lowercase hex digits, byte 0 first.
    pub fn to_hex(&self) -> String {
        self.raw.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// EXT_CSD_REV (byte 192).
    pub fn rev(&self) -> u8 {
        self.raw[192]
    }

    fn value(&self, field: &Field) -> u64 {
        self.raw[field.offset..field.offset + field.width]
            .iter()
            .rev()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
    }

    /// Raw (little-endian) value of a field by its JEDEC name, e.g. `SEC_COUNT`.
    pub fn field(&self, name: &str) -> Option<u64> {
        super::ext_csd_table::find(name).map(|f| self.value(f))
    }

    /// Every field of the table, in offset order: (name, raw value).
    pub fn fields_raw(&self) -> Vec<(&'static str, u64)> {
        FIELDS.iter().map(|f| (f.name, self.value(f))).collect()
    }

    /// Every field of the table, decoded, in offset order.
    pub fn decoded(&self) -> Vec<(&'static str, DecodedValue)> {
        FIELDS.iter().map(|f| (f.name, self.decode(f))).collect()
    }

    /// One field decoded (None: not in the table).
    pub fn decoded_field(&self, name: &str) -> Option<DecodedValue> {
        super::ext_csd_table::find(name).map(|f| self.decode(f))
    }

    fn decode(&self, field: &Field) -> DecodedValue {
        if self.rev() < field.since_rev {
            return DecodedValue::NotDefined;
        }
        let v = self.value(field);
        match field.decoder {
            Decoder::Number => DecodedValue::Number(v),
            Decoder::Hex => DecodedValue::Text(format!("0x{v:0width$x}", width = field.width * 2)),
            Decoder::Bytes(unit) => DecodedValue::Bytes {
                bytes: v.saturating_mul(unit),
            },
            Decoder::Ns(unit) => DecodedValue::Duration {
                ns: v.saturating_mul(unit),
            },
            Decoder::Bool => DecodedValue::Bool(v & 1 == 1),
            Decoder::Enum(names) => match names.iter().find(|(k, _)| *k == v) {
                Some((_, name)) => DecodedValue::Text((*name).to_string()),
                None => DecodedValue::Text(format!("reserved ({v:#x})")),
            },
            Decoder::Flags(names) => DecodedValue::Flags(
                names
                    .iter()
                    .filter(|(bit, _)| v & bit != 0)
                    .map(|(_, n)| n.to_string())
                    .collect(),
            ),
            Decoder::Custom(decode) => decode(v, self),
        }
    }

    /// The card's user-area capacity in bytes (SEC_COUNT x 512), when EXT_CSD defines it.
    pub fn capacity_bytes(&self) -> Option<u64> {
        (self.rev() >= 2).then(|| self.field("SEC_COUNT").unwrap_or(0) * 512)
    }
}

/// Erase group in bytes: HC_ERASE_GRP_SIZE x 512 KiB.
fn erase_group_bytes(e: &ExtCsd) -> u64 {
    e.field("HC_ERASE_GRP_SIZE").unwrap_or(0) * 512 * 1024
}

pub(super) fn decode_wp_group_size(v: u64, e: &ExtCsd) -> DecodedValue {
    DecodedValue::Bytes {
        bytes: v * erase_group_bytes(e),
    }
}

/// GP/enhanced partition sizes: MULT x HC_WP_GRP_SIZE x HC_ERASE_GRP_SIZE x 512 KiB.
pub(super) fn decode_partition_size(v: u64, e: &ExtCsd) -> DecodedValue {
    let wp = e.field("HC_WP_GRP_SIZE").unwrap_or(0);
    DecodedValue::Bytes {
        bytes: v * wp * erase_group_bytes(e),
    }
}

pub(super) fn decode_life_time(v: u64, _: &ExtCsd) -> DecodedValue {
    DecodedValue::Text(match v {
        0 => "not defined".to_string(),
        1..=10 => format!("{}-{}% of estimated life used", (v - 1) * 10, v * 10),
        11 => "exceeded its maximum estimated life".to_string(),
        _ => format!("reserved ({v:#x})"),
    })
}

pub(super) fn decode_partition_config(v: u64, _: &ExtCsd) -> DecodedValue {
    let access = match v & 7 {
        0 => "user area".to_string(),
        1 => "boot0".to_string(),
        2 => "boot1".to_string(),
        3 => "RPMB".to_string(),
        n => format!("GP{}", n - 3),
    };
    let boot = match (v >> 3) & 7 {
        0 => "not enabled",
        1 => "boot0",
        2 => "boot1",
        7 => "user area",
        _ => "reserved",
    };
    let ack = if v & 0x40 != 0 {
        "boot ack"
    } else {
        "no boot ack"
    };
    DecodedValue::Text(format!("access {access}, boot from {boot}, {ack}"))
}

pub(super) fn decode_hs_timing(v: u64, _: &ExtCsd) -> DecodedValue {
    let timing = match v & 0xf {
        0 => "backwards compatible".to_string(),
        1 => "high speed".to_string(),
        2 => "HS200".to_string(),
        3 => "HS400".to_string(),
        n => format!("reserved ({n})"),
    };
    DecodedValue::Text(format!("{timing}, driver strength type {}", v >> 4))
}

/// Reads EXT_CSD: CMD8 through the ioctl first; if that fails (no CAP_SYS_RAWIO, a host
/// that refuses), the kernel's debugfs `ext_csd`. Errors name both attempts. A card whose
/// sysfs `type` is not `MMC` is refused before any command: SD cards have no EXT_CSD,
/// and CMD8 means SEND_IF_COND to them.
pub fn read_ext_csd(paths: &MmcPaths) -> Result<(ExtCsd, ExtCsdSource)> {
    if let Ok(card_type) = std::fs::read_to_string(paths.card_sysfs.join("type")) {
        let card_type = card_type.trim();
        if card_type != "MMC" {
            bail!("{card_type} cards have no EXT_CSD (eMMC only)");
        }
    }
    let ioctl_error = match std::fs::File::open(&paths.dev_node) {
        Ok(dev) => match super::ioctl::read_ext_csd(&dev) {
            Ok(raw) => return Ok((ExtCsd { raw }, ExtCsdSource::Ioctl)),
            Err(e) => e.to_string(),
        },
        Err(e) => format!("{}: cannot open: {e}", paths.dev_node.display()),
    };
    let debugfs = paths.card_debugfs.join("ext_csd");
    match std::fs::read_to_string(&debugfs) {
        Ok(text) => {
            let ext_csd =
                ExtCsd::from_hex(&text).with_context(|| format!("{}", debugfs.display()))?;
            Ok((ext_csd, ExtCsdSource::Debugfs { ioctl_error }))
        }
        Err(e) => bail!(
            "cannot read EXT_CSD: ioctl: {ioctl_error}; debugfs {}: {e} (mount debugfs: \
             mount -t debugfs -o ro none /sys/kernel/debug)",
            debugfs.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;

    fn qemu(which: &str) -> ExtCsd {
        let cap = Capture::load(which);
        ExtCsd::from_hex(cap.get("ext_csd").unwrap()).unwrap()
    }

    #[test]
    fn table_has_enough_fields_in_bounds_and_unique() {
        assert!(FIELDS.len() >= 40, "{} fields", FIELDS.len());
        let mut names = std::collections::HashSet::new();
        let mut last_end = 0;
        for f in FIELDS {
            assert!(f.width >= 1 && f.width <= 8, "{}", f.name);
            assert!(f.offset + f.width <= 512, "{}", f.name);
            assert!(
                f.offset >= last_end,
                "{} overlaps or is out of order",
                f.name
            );
            last_end = f.offset + f.width;
            assert!(names.insert(f.name), "duplicate {}", f.name);
        }
    }

    #[test]
    fn qemu_emmc_ext_csd_decodes_as_testbed_md_says() {
        for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
            let e = qemu(which);
            assert_eq!(e.rev(), 3);
            assert_eq!(e.field("EXT_CSD_REV"), Some(3));
            assert_eq!(e.field("SEC_COUNT"), Some(524_288));
            assert_eq!(e.capacity_bytes(), Some(256 << 20));
            assert_eq!(e.field("CARD_TYPE"), Some(0x3));
            assert_eq!(e.field("MAX_PACKED_WRITES"), Some(0));
            assert_eq!(e.field("MAX_PACKED_READS"), Some(0));
            assert_eq!(e.field("CACHE_SIZE"), Some(0));
            assert_eq!(e.field("CMDQ_SUPPORT"), Some(0));
            assert_eq!(e.field("HC_ERASE_GRP_SIZE"), Some(1));
            assert_eq!(
                e.decoded_field("CARD_TYPE"),
                Some(DecodedValue::Flags(vec!["HS_26".into(), "HS_52".into()]))
            );
            assert_eq!(
                e.decoded_field("EXT_CSD_REV"),
                Some(DecodedValue::Text("eMMC 4.3".into()))
            );
            assert_eq!(
                e.decoded_field("SEC_COUNT"),
                Some(DecodedValue::Bytes { bytes: 268_435_456 })
            );
            // eMMC 4.5 fields are not defined on a 4.3 card.
            assert_eq!(
                e.decoded_field("MAX_PACKED_WRITES"),
                Some(DecodedValue::NotDefined)
            );
            assert_eq!(
                e.to_hex(),
                Capture::load(which).get("ext_csd").unwrap().trim()
            );
        }
        // The two boots differ in BUS_WIDTH[183] only: 1 = 4-bit, 2 = 8-bit.
        let (a, b) = (qemu("cap-linux6-bus4.txt"), qemu("cap-linux7-bus8.txt"));
        assert_eq!(
            a.decoded_field("BUS_WIDTH"),
            Some(DecodedValue::Text("4-bit".into()))
        );
        assert_eq!(
            b.decoded_field("BUS_WIDTH"),
            Some(DecodedValue::Text("8-bit".into()))
        );
        let diff: Vec<usize> = (0..512).filter(|&i| a.raw[i] != b.raw[i]).collect();
        assert_eq!(diff, vec![183]);
    }

    #[test]
    fn multi_byte_fields_are_little_endian_and_decoders_use_other_fields() {
        let mut e = ExtCsd { raw: [0; 512] };
        e.raw[192] = 8;
        e.raw[249..253].copy_from_slice(&[0x00, 0x00, 0x01, 0x00]); // 65536 KiB
        e.raw[224] = 16; // 8 MiB erase groups
        e.raw[221] = 2;
        e.raw[143..146].copy_from_slice(&[3, 0, 0]);
        e.raw[308] = 1;
        e.raw[307] = 31;
        e.raw[268] = 2;
        e.raw[248] = 25;
        e.raw[179] = 0x48;
        assert_eq!(e.field("CACHE_SIZE"), Some(65_536));
        assert_eq!(
            e.decoded_field("CACHE_SIZE"),
            Some(DecodedValue::Bytes { bytes: 64 << 20 })
        );
        assert_eq!(
            e.decoded_field("HC_WP_GRP_SIZE"),
            Some(DecodedValue::Bytes { bytes: 16 << 20 })
        );
        assert_eq!(
            e.decoded_field("GP_SIZE_MULT_1"),
            Some(DecodedValue::Bytes { bytes: 48 << 20 })
        );
        assert_eq!(
            e.decoded_field("CMDQ_DEPTH"),
            Some(DecodedValue::Number(32))
        );
        assert_eq!(
            e.decoded_field("GENERIC_CMD6_TIME"),
            Some(DecodedValue::Duration { ns: 250_000_000 })
        );
        assert_eq!(
            e.decoded_field("DEVICE_LIFE_TIME_EST_TYP_A"),
            Some(DecodedValue::Text("10-20% of estimated life used".into()))
        );
        assert_eq!(
            e.decoded_field("PARTITION_CONFIG"),
            Some(DecodedValue::Text(
                "access user area, boot from boot0, boot ack".into()
            ))
        );
    }

    #[test]
    fn from_hex_rejects_short_and_non_hex_input() {
        assert!(ExtCsd::from_hex("00").is_err());
        let mut bad = "0".repeat(1022);
        bad.push_str("zz");
        let err = ExtCsd::from_hex(&bad).unwrap_err();
        assert!(format!("{err:#}").contains("byte 511"), "{err:#}");
    }

    #[test]
    fn json_of_decoded_values_has_units() {
        let v = serde_json::to_value(DecodedValue::Bytes { bytes: 512 }).unwrap();
        assert_eq!(v, serde_json::json!({"bytes": 512}));
        let v = serde_json::to_value(DecodedValue::NotDefined).unwrap();
        assert!(v.is_null());
    }

    /// meta.json keeps the decoded fields as JSON: each variant reads back as itself.
    #[test]
    fn decoded_values_read_back_from_their_json() {
        for v in [
            DecodedValue::Number(70),
            DecodedValue::Bool(true),
            DecodedValue::Bytes { bytes: 524_288 },
            DecodedValue::Duration { ns: 300_000_000 },
            DecodedValue::Text("eMMC 4.3".into()),
            DecodedValue::Flags(vec!["HS_26".into(), "HS_52".into()]),
            DecodedValue::Flags(Vec::new()),
            DecodedValue::NotDefined,
        ] {
            let json = serde_json::to_string(&v).unwrap();
            let back: DecodedValue = serde_json::from_str(&json).unwrap();
            assert_eq!(back, v, "{json}");
        }
    }
}
