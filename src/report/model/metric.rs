//! What a block measures: the quantities a results directory records per run (runs.csv's
//! columns), each with its unit and which way is better; or a quantity as a published
//! source states it (results/reference/*.csv).

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// A measured quantity. Its key is the column name it has on disk (runs.csv, summary.csv,
/// report.json, a calibration), its unit what the outputs print.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// Throughput in MB/s (10^6 bytes per second): `mb_per_s`.
    MbPerS,
    /// Operations per second: `iops`.
    Iops,
    /// Mean completion latency in microseconds: `lat_mean_us`.
    LatMeanUs,
    /// 99th percentile completion latency in microseconds: `lat_p99_us`.
    LatP99Us,
    /// Throughput in KiB/s, as some published sources give it: `kib_per_s`.
    KibPerS,
    /// Any other quantity a published source gives, in its words (flashbench's
    /// `align_pre_us`, a duration in `seconds`).
    Published(Published),
}

/// A published quantity none of the [`Metric`] variants names.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub key: String,
    pub unit: String,
    pub higher_is_better: bool,
}

/// The variants other than [`Metric::Published`], for looking a key up.
const NAMED: [Metric; 5] = [
    Metric::MbPerS,
    Metric::Iops,
    Metric::LatMeanUs,
    Metric::LatP99Us,
    Metric::KibPerS,
];

impl Metric {
    /// The column name: `mb_per_s`, `iops`, `lat_mean_us`, ...
    pub fn key(&self) -> &str {
        match self {
            Metric::MbPerS => "mb_per_s",
            Metric::Iops => "iops",
            Metric::LatMeanUs => "lat_mean_us",
            Metric::LatP99Us => "lat_p99_us",
            Metric::KibPerS => "kib_per_s",
            Metric::Published(p) => &p.key,
        }
    }

    /// The unit as printed: `MB/s`, `IOPS`, `us`, `KiB/s`.
    pub fn unit(&self) -> &str {
        match self {
            Metric::MbPerS => "MB/s",
            Metric::Iops => "IOPS",
            Metric::LatMeanUs | Metric::LatP99Us => "us",
            Metric::KibPerS => "KiB/s",
            Metric::Published(p) => &p.unit,
        }
    }

    pub fn higher_is_better(&self) -> bool {
        match self {
            Metric::MbPerS | Metric::Iops | Metric::KibPerS => true,
            Metric::LatMeanUs | Metric::LatP99Us => false,
            Metric::Published(p) => p.higher_is_better,
        }
    }

    /// A rate its unit names by itself (MB/s, IOPS, KiB/s): titles print the unit alone,
    /// other metrics their key with the unit.
    pub fn named_by_unit(&self) -> bool {
        matches!(self, Metric::MbPerS | Metric::Iops | Metric::KibPerS)
    }

    /// The metric of a published row: a key mmcab knows must come with its unit and
    /// direction (an error says what it expected); any other key is taken as given.
    pub fn published(key: &str, unit: &str, higher_is_better: bool) -> Result<Metric, String> {
        match NAMED.into_iter().find(|m| m.key() == key) {
            Some(m) if m.unit() == unit && m.higher_is_better() == higher_is_better => Ok(m),
            Some(m) => Err(format!(
                "metric {key} is in {}, {} is better (the row says {unit}, {} is better)",
                m.unit(),
                better(m.higher_is_better()),
                better(higher_is_better)
            )),
            None => Ok(Metric::Published(Published {
                key: key.to_string(),
                unit: unit.to_string(),
                higher_is_better,
            })),
        }
    }
}

fn better(higher: bool) -> &'static str {
    if higher {
        "higher"
    } else {
        "lower"
    }
}

/// As report.json has always written it: `{"key", "unit", "higher_is_better"}`.
impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Metric", 3)?;
        m.serialize_field("key", self.key())?;
        m.serialize_field("unit", self.unit())?;
        m.serialize_field("higher_is_better", &self.higher_is_better())?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_keys_mmcab_knows_are_its_metrics() {
        assert_eq!(Metric::published("iops", "IOPS", true), Ok(Metric::Iops));
        assert_eq!(
            Metric::published("kib_per_s", "KiB/s", true),
            Ok(Metric::KibPerS)
        );
        let align = Metric::published("align_pre_us", "us", false).unwrap();
        assert_eq!(
            (align.key(), align.unit(), align.higher_is_better()),
            ("align_pre_us", "us", false)
        );
        assert!(!align.named_by_unit() && Metric::KibPerS.named_by_unit());
        let err = Metric::published("mb_per_s", "MiB/s", true).unwrap_err();
        assert!(err.contains("mb_per_s is in MB/s"), "{err}");
        let err = Metric::published("lat_p99_us", "us", true).unwrap_err();
        assert!(err.contains("lower is better"), "{err}");
    }

    #[test]
    fn json_keeps_key_unit_and_direction() {
        let json = serde_json::to_string(&Metric::LatP99Us).unwrap();
        assert_eq!(
            json,
            r#"{"key":"lat_p99_us","unit":"us","higher_is_better":false}"#
        );
    }
}
