//! Sizes and durations as users write them in plan files and on the command line.
//!
//! Sizes follow fio: `4k`, `4K`, `4KiB` and `4kib` are all 4096 bytes (binary multiples,
//! fio's default `kb_base=1024`); `4KB` is also 4096, as in fio. A bare number is bytes.
//! Throughput is always reported in MB/s (10^6 bytes/s, as dd prints) and named so.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ParseError {}

/// Parse a size such as `4k`, `256MiB`, `1G`, `512` (bytes).
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(ParseError(format!(
            "'{text}' is not a size: expected a number with an optional unit (512, 4k, 4KiB, 1M, 2G)"
        )));
    }
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(ParseError(format!(
                "'{text}': unknown size unit '{other}' (use k/KiB, M/MiB, G/GiB, T/TiB)"
            )))
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| ParseError(format!("'{text}' is not a size: bad number '{num}'")))?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(ParseError(format!(
            "'{text}' is not a whole number of bytes"
        )));
    }
    Ok(bytes as u64)
}

/// Parse a duration such as `30s`, `2m`, `500ms`, `1h`, `10` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        ParseError(format!(
            "'{text}' is not a duration: expected a number with an optional unit (500ms, 30s, 2m, 1h)"
        ))
    })?;
    let seconds = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(ParseError(format!(
                "'{text}': unknown duration unit '{other}' (use ms, s, m, h)"
            )))
        }
    };
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| ParseError(format!("'{text}' is too long a duration")))
}

/// Format bytes in the largest binary unit that divides them exactly (`4KiB`, `1MiB`, `1536B`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, name) in UNITS {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// Serde helpers so plan files can say `bs = "4KiB"` or `bs = 4096`.
pub mod serde_size {
    use serde::{de, Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Int(v) => Ok(v),
            Raw::Text(t) => super::parse_size(&t).map_err(de::Error::custom),
        }
    }

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_size(*v))
    }

    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            #[derive(Deserialize)]
            struct Wrap(#[serde(with = "super")] u64);
            Ok(Option::<Wrap>::deserialize(d)?.map(|Wrap(v)| v))
        }

        pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }
    }
}

/// Serde helpers for `runtime = "30s"` or `runtime = 30` (seconds).
pub mod serde_duration {
    use serde::{de, Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Float(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let raw: Option<Raw> = Option::deserialize(d)?;
        match raw {
            None => Ok(None),
            Some(Raw::Int(s)) => Ok(Some(Duration::from_secs(s))),
            Some(Raw::Float(s)) if s >= 0.0 && s.is_finite() => Duration::try_from_secs_f64(s)
                .map(Some)
                .map_err(|_| de::Error::custom(format!("{s} seconds is too long a duration"))),
            Some(Raw::Float(s)) => Err(de::Error::custom(format!("{s} is not a duration"))),
            Some(Raw::Text(t)) => super::parse_duration(&t)
                .map(Some)
                .map_err(de::Error::custom),
        }
    }

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_str(&format!("{}s", d.as_secs_f64())),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("4KB").unwrap(), 4096);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert!(parse_size("4 parsecs")
            .unwrap_err()
            .0
            .contains("unknown size unit"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn format_round_trips() {
        for s in ["4KiB", "1MiB", "256MiB", "3GiB", "1536B"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
    }
}
