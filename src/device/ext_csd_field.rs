//! One EXT_CSD field as data: where it lies in the 512-byte register, the first
//! EXT_CSD_REV that defines it, and how its bytes become a [`DecodedValue`]. The fields
//! themselves are the rows of [`super::ext_csd_table`]; [`super::ext_csd`] reads the
//! register and decodes it with them. This file knows neither: it is the vocabulary both
//! speak.

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

/// How a field's raw value becomes a [`DecodedValue`].
#[derive(Debug, Clone, Copy)]
pub enum Decoder {
    /// The number as is (a count, a class, an index).
    Number,
    /// Hex text (versions, register images).
    Hex,
    /// raw x unit bytes.
    Bytes(u64),
    /// raw x unit x the raw value of each of the other fields, bytes: a size the card
    /// gives in units that other fields set (a partition in write-protect groups of
    /// erase groups).
    BytesTimes(u64, &'static [Field]),
    /// raw x unit nanoseconds.
    Ns(u64),
    /// raw x unit x the raw value of each of the other fields, nanoseconds.
    NsTimes(u64, &'static [Field]),
    /// Bit 0: on/off.
    Bool,
    /// One name per value.
    Enum(&'static [(u64, &'static str)]),
    /// One name per set bit.
    Flags(&'static [(u64, &'static str)]),
    /// Anything else that needs arithmetic on the value.
    Custom(fn(u64) -> DecodedValue),
}

/// One EXT_CSD field: a row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JEDEC JESD84-B51 name, e.g. `SEC_COUNT`.
    pub name: &'static str,
    /// Its lowest byte's index in the register.
    pub offset: usize,
    /// Its width in bytes (little-endian: the lowest offset is the least significant).
    pub width: usize,
    /// The first EXT_CSD_REV that defines it.
    pub since_rev: u8,
    pub decoder: Decoder,
}

impl Field {
    /// The field's bytes in `register` as a little-endian integer.
    pub fn read(&self, register: &[u8; 512]) -> u64 {
        register[self.offset..self.offset + self.width]
            .iter()
            .rev()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
    }

    /// The field in `register`, decoded as if the card's EXT_CSD_REV defined it (the
    /// register's reader says [`DecodedValue::NotDefined`] below `since_rev`).
    pub fn decode(&self, register: &[u8; 512]) -> DecodedValue {
        let v = self.read(register);
        let times = |unit: u64, others: &[Field]| {
            others.iter().fold(v.saturating_mul(unit), |acc, other| {
                acc.saturating_mul(other.read(register))
            })
        };
        match self.decoder {
            Decoder::Number => DecodedValue::Number(v),
            Decoder::Hex => DecodedValue::Text(format!("0x{v:0width$x}", width = self.width * 2)),
            Decoder::Bytes(unit) => DecodedValue::Bytes {
                bytes: v.saturating_mul(unit),
            },
            Decoder::BytesTimes(unit, others) => DecodedValue::Bytes {
                bytes: times(unit, others),
            },
            Decoder::Ns(unit) => DecodedValue::Duration {
                ns: v.saturating_mul(unit),
            },
            Decoder::NsTimes(unit, others) => DecodedValue::Duration {
                ns: times(unit, others),
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
            Decoder::Custom(decode) => decode(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A product of other fields saturates instead of wrapping: a card's garbage reads
    /// as the largest size, not as a small one.
    #[test]
    fn products_of_fields_saturate() {
        const BIG: Field = Field {
            name: "BIG",
            offset: 0,
            width: 8,
            since_rev: 0,
            decoder: Decoder::Number,
        };
        let field = Field {
            name: "SIZE",
            offset: 8,
            width: 1,
            since_rev: 0,
            decoder: Decoder::BytesTimes(1024, &[BIG]),
        };
        let mut register = [0u8; 512];
        register[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        register[8] = 2;
        assert_eq!(field.read(&register), 2);
        assert_eq!(
            field.decode(&register),
            DecodedValue::Bytes { bytes: u64::MAX }
        );
        register[..8].copy_from_slice(&3u64.to_le_bytes());
        assert_eq!(
            field.decode(&register),
            DecodedValue::Bytes { bytes: 6 * 1024 }
        );
    }
}
