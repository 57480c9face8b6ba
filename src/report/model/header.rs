//! The `Key: value` lines after a report's title, as data: every output writes them
//! from here, in one order and with one set of words.

use serde::{Serialize, Serializer};

/// A value for the whole report, or one per side or boot of a comparison (its key
/// then in the plural: `Devices`, `Kernels`, `Hosts`).
#[derive(Debug, Clone, PartialEq)]
pub enum Named {
    One(String),
    Each(String),
}

impl Named {
    fn line(&self, one: &'static str, each: &'static str) -> (&'static str, &str) {
        match self {
            Named::One(v) => (one, v),
            Named::Each(v) => (each, v),
        }
    }
}

/// The header of a report; what a source does not have is None (or empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    /// Published numbers: where they were published, and when.
    pub source: Option<String>,
    pub posted: Option<String>,
    pub device: Option<Named>,
    /// Published numbers: the conditions of each source, one line each.
    pub conditions: Vec<String>,
    /// Published numbers: how many values.
    pub numbers: Option<String>,
    pub kernel: Option<Named>,
    /// The MMC host and its driver, when meta.json recorded them.
    pub host: Option<Named>,
    pub plan: Option<String>,
    pub runs: Option<String>,
    /// A comparison of directories with several configs: what each is compared with.
    pub pairs: Option<String>,
    /// A comparison with several boots in a side: each side's boots.
    pub boots: Option<String>,
    /// The stored calibration a comparison of one-boot sides used.
    pub calibration: Option<String>,
}

impl Header {
    /// (key, value) of every line, in the order the outputs write them.
    pub fn lines(&self) -> Vec<(&'static str, &str)> {
        let mut out: Vec<(&'static str, &str)> = Vec::new();
        let plain = [("Source", &self.source), ("Posted", &self.posted)];
        out.extend(plain.iter().filter_map(|(k, v)| Some((*k, v.as_deref()?))));
        if let Some(d) = &self.device {
            out.push(d.line("Device", "Devices"));
        }
        out.extend(self.conditions.iter().map(|c| ("Conditions", c.as_str())));
        if let Some(n) = &self.numbers {
            out.push(("Numbers", n));
        }
        if let Some(k) = &self.kernel {
            out.push(k.line("Kernel", "Kernels"));
        }
        if let Some(h) = &self.host {
            out.push(h.line("Host", "Hosts"));
        }
        let rest = [
            ("Plan", &self.plan),
            ("Runs", &self.runs),
            ("Pairs", &self.pairs),
            ("Boots", &self.boots),
            ("Calibration", &self.calibration),
        ];
        out.extend(rest.iter().filter_map(|(k, v)| Some((*k, v.as_deref()?))));
        out
    }
}

/// As the list of `[key, value]` pairs report.json has always had.
impl Serialize for Header {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.lines())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_the_order_and_words_of_the_outputs() {
        let h = Header {
            device: Some(Named::Each("a = x; b = y".into())),
            kernel: Some(Named::One("6.12".into())),
            host: Some(Named::Each("a = h".into())),
            plan: Some("p".into()),
            runs: Some("r".into()),
            calibration: Some("c".into()),
            ..Default::default()
        };
        let keys: Vec<&str> = h.lines().iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            ["Devices", "Kernel", "Hosts", "Plan", "Runs", "Calibration"]
        );
        assert_eq!(
            serde_json::to_string(&h).unwrap()[..25],
            *"[[\"Devices\",\"a = x; b = y"
        );
    }
}
