//! The order of the runs of a matrix:
//!
//! - `interleaved` (default; alias `abab`): every round runs each workload under each
//!   config in turn (A B A B ...), so slow drift (temperature, wear, background work) hits
//!   all configs alike;
//! - `random`: each round in a seeded random order (same seed, same order);
//! - `blocked` (alias `aabb`): all runs of a config together (A A ... B B ...), only on
//!   request.

use anyhow::{bail, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The order of the runs of a matrix. Written as `interleaved`, `random` or `blocked`
/// (in plan files, meta.json and on the command line); `abab` and `aabb` are accepted
/// for interleaved and blocked, in any case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    Interleaved,
    Random,
    Blocked,
}

impl Order {
    /// Every order, in the order `--help` lists them.
    pub const ALL: [Order; 3] = [Order::Interleaved, Order::Random, Order::Blocked];

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Random => "random",
            Order::Blocked => "blocked",
        }
    }

    /// Other names accepted for this order.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Order::Interleaved => &["abab"],
            Order::Random => &[],
            Order::Blocked => &["aabb"],
        }
    }

    /// What the order is for, in one line (shown by `--help`).
    pub fn help(self) -> &'static str {
        match self {
            Order::Interleaved => "A B A B ... in every round (default)",
            Order::Random => "each round shuffled with the seed",
            Order::Blocked => "A A ... B B ..., all runs of a config together",
        }
    }
}

impl FromStr for Order {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Order> {
        let text = text.trim().to_ascii_lowercase();
        for order in Order::ALL {
            if order.as_str() == text || order.aliases().contains(&text.as_str()) {
                return Ok(order);
            }
        }
        bail!("order '{text}': use interleaved, random or blocked")
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Order {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Order {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Order, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parse_with_aliases_in_any_case() {
        assert_eq!("ABAB".parse::<Order>().unwrap(), Order::Interleaved);
        assert_eq!(" aabb".parse::<Order>().unwrap(), Order::Blocked);
        assert_eq!("random".parse::<Order>().unwrap(), Order::Random);
        assert!("sideways"
            .parse::<Order>()
            .unwrap_err()
            .to_string()
            .contains("blocked"));
        for order in Order::ALL {
            let json = serde_json::to_string(&order).unwrap();
            assert_eq!(json, format!("\"{order}\""));
            assert_eq!(serde_json::from_str::<Order>(&json).unwrap(), order);
        }
        assert_eq!(
            serde_json::from_str::<Order>("\"abab\"").unwrap(),
            Order::Interleaved
        );
    }
}
