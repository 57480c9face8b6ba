//! EXT_CSD: the eMMC's 512-byte extended CSD register, read with CMD8 through the ioctl
//! (falling back to the kernel's debugfs copy), and decoded with the table in
//! [`super::ext_csd_table`]: one field by its constant (`ext_csd.get(SEC_COUNT)`), or
//! every field of the table.

pub use super::ext_csd_field::DecodedValue;
use super::ext_csd_field::Field;
use super::ext_csd_table::{CACHE_CTRL, CACHE_SIZE, EXT_CSD_REV, FIELDS, SEC_COUNT};
use super::paths::MmcPaths;
use anyhow::{bail, Context, Result};
use std::fmt;

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
        self.raw[EXT_CSD_REV.offset]
    }

    /// A field's raw (little-endian) value, e.g. `ext_csd.get(SEC_COUNT)`.
    pub fn get(&self, field: Field) -> u64 {
        field.read(&self.raw)
    }

    /// A field decoded ([`DecodedValue::NotDefined`] below its `since_rev`).
    pub fn decode(&self, field: Field) -> DecodedValue {
        if self.rev() < field.since_rev {
            return DecodedValue::NotDefined;
        }
        field.decode(&self.raw)
    }

    /// Every field of the table, in offset order: (name, raw value).
    pub fn fields_raw(&self) -> Vec<(&'static str, u64)> {
        FIELDS.iter().map(|f| (f.name, self.get(*f))).collect()
    }

    /// Every field of the table, decoded, in offset order.
    pub fn decoded(&self) -> Vec<(&'static str, DecodedValue)> {
        FIELDS.iter().map(|f| (f.name, self.decode(*f))).collect()
    }

    /// The volatile cache the card states and has on (CACHE_SIZE in KiB, Linux's
    /// `card->ext_csd.cache_size`, with CACHE_CTRL bit 0 set), bytes; 0 when it states
    /// none, has it off, or its EXT_CSD predates the cache (EXT_CSD_REV < 6, eMMC 4.5).
    pub fn cache_in_use_bytes(&self) -> u64 {
        if self.get(CACHE_CTRL) & 1 == 0 {
            return 0;
        }
        self.cache_size_bytes()
    }

    /// The volatile cache the card states (CACHE_SIZE in KiB), on or off, bytes; 0 when
    /// it states none or its EXT_CSD predates the cache (EXT_CSD_REV < 6).
    pub fn cache_size_bytes(&self) -> u64 {
        if self.rev() < CACHE_SIZE.since_rev {
            return 0;
        }
        self.get(CACHE_SIZE) * 1024
    }

    /// The card's user-area capacity in bytes (SEC_COUNT x 512), when EXT_CSD defines it.
    pub fn capacity_bytes(&self) -> Option<u64> {
        (self.rev() >= SEC_COUNT.since_rev).then(|| self.get(SEC_COUNT) * 512)
    }
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
             mount -t debugfs -o nosuid,nodev,noexec none /sys/kernel/debug)",
            debugfs.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;
    use crate::device::ext_csd_table::*;

    fn qemu(which: &str) -> ExtCsd {
        let cap = Capture::load(which);
        ExtCsd::from_hex(cap.get("ext_csd").unwrap()).unwrap()
    }

    #[test]
    fn qemu_emmc_ext_csd_decodes_as_testbed_md_says() {
        for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
            let e = qemu(which);
            assert_eq!(e.rev(), 3);
            assert_eq!(e.get(EXT_CSD_REV), 3);
            assert_eq!(e.get(SEC_COUNT), 524_288);
            assert_eq!(e.capacity_bytes(), Some(256 << 20));
            assert_eq!(e.get(CARD_TYPE), 0x3);
            assert_eq!(e.get(MAX_PACKED_WRITES), 0);
            assert_eq!(e.get(MAX_PACKED_READS), 0);
            assert_eq!(e.get(CACHE_SIZE), 0);
            assert_eq!(e.get(CMDQ_SUPPORT), 0);
            assert_eq!(e.get(HC_ERASE_GRP_SIZE), 1);
            assert_eq!(
                e.decode(CARD_TYPE),
                DecodedValue::Flags(vec!["HS_26".into(), "HS_52".into()])
            );
            assert_eq!(e.decode(EXT_CSD_REV), DecodedValue::Text("eMMC 4.3".into()));
            assert_eq!(
                e.decode(SEC_COUNT),
                DecodedValue::Bytes { bytes: 268_435_456 }
            );
            // eMMC 4.5 fields are not defined on a 4.3 card.
            assert_eq!(e.decode(MAX_PACKED_WRITES), DecodedValue::NotDefined);
            assert_eq!(
                e.to_hex(),
                Capture::load(which).get("ext_csd").unwrap().trim()
            );
        }
        // The two boots differ in BUS_WIDTH[183] only: 1 = 4-bit, 2 = 8-bit.
        let (a, b) = (qemu("cap-linux6-bus4.txt"), qemu("cap-linux7-bus8.txt"));
        assert_eq!(a.decode(BUS_WIDTH), DecodedValue::Text("4-bit".into()));
        assert_eq!(b.decode(BUS_WIDTH), DecodedValue::Text("8-bit".into()));
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
        assert_eq!(e.get(CACHE_SIZE), 65_536);
        assert_eq!(e.cache_in_use_bytes(), 0, "CACHE_CTRL off");
        assert_eq!(e.cache_size_bytes(), 64 << 20);
        e.raw[33] = 1;
        assert_eq!(e.cache_in_use_bytes(), 64 << 20);
        assert_eq!(e.get(CACHE_SIZE), 65_536);
        assert_eq!(
            e.decode(CACHE_SIZE),
            DecodedValue::Bytes { bytes: 64 << 20 }
        );
        assert_eq!(
            e.decode(HC_WP_GRP_SIZE),
            DecodedValue::Bytes { bytes: 16 << 20 }
        );
        assert_eq!(
            e.decode(GP_SIZE_MULT_1),
            DecodedValue::Bytes { bytes: 48 << 20 }
        );
        assert_eq!(e.decode(CMDQ_DEPTH), DecodedValue::Number(32));
        assert_eq!(
            e.decode(GENERIC_CMD6_TIME),
            DecodedValue::Duration { ns: 250_000_000 }
        );
        assert_eq!(
            e.decode(DEVICE_LIFE_TIME_EST_TYP_A),
            DecodedValue::Text("10-20% of estimated life used".into())
        );
        assert_eq!(
            e.decode(PARTITION_CONFIG),
            DecodedValue::Text("access user area, boot from boot0, boot ack".into())
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
}
