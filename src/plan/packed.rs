//! The packing choice of the `ioctl` engine: `packed = N` on an ioctl write job (or on a
//! `[[config]]`, for every ioctl write job of the plan). Which jobs it applies to and the
//! other rules of the ioctl keys that need no device are the job's (`takes_packed` and
//! the job checks, in workload.rs).

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Most entries a packed command can name: MAX_PACKED_WRITES (EXT_CSD [500]) is one byte.
pub const MAX_PACKED_ENTRIES: u32 = 255;

/// How an ioctl write job sends its writes: `packed = 0` / `"off"` (each write its own
/// CMD23 + CMD25), `packed = N` (N writes per packed command, 2..=255) or
/// `packed = "max"` (as many as the card, the header and one command's data allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packed {
    #[default]
    Off,
    Entries(u32),
    Max,
}

impl fmt::Display for Packed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Packed::Off => f.write_str("off"),
            Packed::Entries(n) => write!(f, "{n}"),
            Packed::Max => f.write_str("max"),
        }
    }
}

impl Packed {
    fn from_int(n: i64) -> Result<Packed, String> {
        match n {
            0 => Ok(Packed::Off),
            2..=255 => Ok(Packed::Entries(n as u32)),
            _ => Err(format!(
                "`packed` = {n}: use 0 (unpacked), 2..={MAX_PACKED_ENTRIES} writes per packed \
                 command, or \"max\""
            )),
        }
    }

    pub fn is_on(self) -> bool {
        self != Packed::Off
    }
}

impl<'de> Deserialize<'de> for Packed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Packed, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Packed::from_int(n),
            Raw::Text(t) => match t.trim() {
                "max" => Ok(Packed::Max),
                "off" => Ok(Packed::Off),
                other => other
                    .parse::<i64>()
                    .map_err(|_| {
                        format!(
                            "`packed` = \"{other}\": use an integer (0, or 2..={MAX_PACKED_ENTRIES}), \
                             \"off\" or \"max\""
                        )
                    })
                    .and_then(Packed::from_int),
            },
        }
        .map_err(de::Error::custom)
    }
}

impl Serialize for Packed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Packed::Off => s.serialize_u32(0),
            Packed::Entries(n) => s.serialize_u32(*n),
            Packed::Max => s.serialize_str("max"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Doc {
        packed: Packed,
    }

    fn parse(value: &str) -> Result<Packed, String> {
        toml::from_str::<Doc>(&format!("packed = {value}"))
            .map(|d| d.packed)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn packed_values() {
        assert_eq!(parse("8"), Ok(Packed::Entries(8)));
        assert_eq!(parse("\"max\""), Ok(Packed::Max));
        assert_eq!(parse("0"), Ok(Packed::Off));
        assert_eq!(parse("\"off\""), Ok(Packed::Off));
        assert_eq!(parse("\"16\""), Ok(Packed::Entries(16)));
        for bad in ["1", "256", "\"lots\""] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("`packed`"), "{bad}: {err}");
        }
    }

    #[test]
    fn packed_serializes_as_written() {
        assert_eq!(serde_json::to_string(&Packed::Max).unwrap(), "\"max\"");
        assert_eq!(serde_json::to_string(&Packed::Off).unwrap(), "0");
        assert_eq!(serde_json::to_string(&Packed::Entries(8)).unwrap(), "8");
        assert_eq!(Packed::Entries(8).to_string(), "8");
    }
}
