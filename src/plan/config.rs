//! `[[config]]` tables of a plan file. Their names and their knob values' types are
//! checked with the plan; whether each knob is one the plan can use (a built-in or one of
//! its `[[knob]]` declarations, [`super::knob`]) is checked by the knobs (knob/names.rs).
//!
//! ```toml
//! [[config]]
//! name = "bus8"
//! bus-width = 8            # knob settings: any key other than name/expect
//! expect.bus_width = 8     # optional: checked against ios/EXT_CSD before every run
//! packed = 8               # optional: writes per packed command of every ioctl write job
//! ```

use super::knob::KnobDecl;
use super::packed::Packed;
use super::workload::WorkloadSpec;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One configuration of the device under test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigSpec {
    pub name: String,
    /// Observations that must hold before every run of this config.
    #[serde(default, skip_serializing_if = "Expect::is_empty")]
    pub expect: Expect,
    /// Not a knob: `packed` of every ioctl write job under this config (0 = unpacked), so
    /// that packed and unpacked writes are configs of one A/B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed: Option<Packed>,
    /// Knob name -> value as written (`bus-width = 8`, `packing = "off"`).
    #[serde(flatten)]
    pub knobs: BTreeMap<String, toml::Value>,
}

impl ConfigSpec {
    /// `spec` as this config runs it: its `packed` set on the ioctl write jobs.
    pub fn workload<'a>(&self, spec: &'a WorkloadSpec) -> Cow<'a, WorkloadSpec> {
        match self.packed {
            Some(packed) => Cow::Owned(spec.with_packed(packed)),
            None => Cow::Borrowed(spec),
        }
    }

    /// Knob settings as strings in the plan's words: integers as written, booleans as
    /// `on`/`off`.
    pub fn knob_values(&self) -> Result<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        for (name, value) in &self.knobs {
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(true) => "on".to_string(),
                toml::Value::Boolean(false) => "off".to_string(),
                other => bail!(
                    "config {}: knob {name} = {other}: a knob value is a string, an integer or \
                     true/false",
                    self.name
                ),
            };
            out.insert(name.clone(), text);
        }
        Ok(out)
    }
}

/// `expect.*` keys of a config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Data bus width in bits as `ios` reports it (1, 4, 8).
    pub bus_width: Option<u32>,
    /// Bus clock in Hz as `ios` reports it.
    pub clock_hz: Option<u64>,
    /// Timing as `ios` names it, e.g. "mmc high-speed".
    pub timing: Option<String>,
    /// EXT_CSD fields by name, e.g. `expect.ext_csd.CACHE_CTRL = 1`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ext_csd: BTreeMap<String, u64>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        self == &Expect::default()
    }
}

/// The names of a plan's configs and knob declarations (each given, and once) and the
/// types of the configs' knob values; called by `Plan::validate`.
pub fn check_names(configs: &[ConfigSpec], custom: &[KnobDecl]) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for knob in custom {
        if !seen.insert(knob.name()) {
            bail!("knob {} is declared twice", knob.name());
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for config in configs {
        if config.name.trim().is_empty() {
            bail!("a [[config]] has an empty `name`: add `name = \"...\"`, unique in the plan");
        }
        if !names.insert(config.name.clone()) {
            bail!(
                "config {} appears twice: config names must be unique",
                config.name
            );
        }
        config.knob_values()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Doc {
        config: Vec<ConfigSpec>,
        #[serde(default)]
        knob: Vec<KnobDecl>,
    }

    #[test]
    fn configs_parse_knobs_and_expectations() {
        let doc: Doc = toml::from_str(
            r#"
            [[config]]
            name = "bus8"
            bus-width = 8
            expect.bus_width = 8
            expect.ext_csd.BUS_WIDTH = 2

            [[config]]
            name = "bus4"
            bus-width = 4
            marker = true

            [[knob]]
            name = "marker"
            kind = "command"
            read = "cat /tmp/m"
            apply = "echo {value} > /tmp/m"
            "#,
        )
        .unwrap();
        assert_eq!(doc.config[0].expect.bus_width, Some(8));
        assert_eq!(doc.config[0].expect.ext_csd["BUS_WIDTH"], 2);
        let values = doc.config[1].knob_values().unwrap();
        assert_eq!(values["bus-width"], "4");
        assert_eq!(values["marker"], "on");
        check_names(&doc.config, &doc.knob).unwrap();
    }

    #[test]
    fn packed_is_an_engine_setting_not_a_knob() {
        let doc: Doc = toml::from_str(
            "[[config]]\nname = \"unpacked\"\npacked = 0\n\
             [[config]]\nname = \"max\"\npacked = \"max\"\nbus-width = 8\n",
        )
        .unwrap();
        assert_eq!(doc.config[0].packed, Some(Packed::Off));
        assert_eq!(doc.config[1].packed, Some(Packed::Max));
        assert!(doc.config[0].knob_values().unwrap().is_empty());
        assert_eq!(doc.config[1].knob_values().unwrap().len(), 1);
        check_names(&doc.config, &doc.knob).unwrap();
        let err = toml::from_str::<Doc>("[[config]]\nname = \"a\"\npacked = 1\n")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("`packed` = 1"), "{err}");
    }

    #[test]
    fn mistakes_are_named() {
        let err = toml::from_str::<Doc>("[[config]]\nname = \"a\"\nexpect.width = 8\n")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("width"), "{err}");
        let err = toml::from_str::<Doc>(
            "[[config]]\nname = \"a\"\n[[knob]]\nname = \"k\"\nkind = \"attribute\"\nread = \"x\"\n",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("knob k (attribute): unknown field `read`"),
            "{err}"
        );
        let doc: Doc = toml::from_str(
            "[[config]]\nname = \"a\"\nk = 1\n[[knob]]\nname = \"k\"\nkind = \"command\"\nread = \"r\"\napply = \"a\"\n[[knob]]\nname = \"k\"\nkind = \"attribute\"\npath = \"p\"\n",
        )
        .unwrap();
        let err = check_names(&doc.config, &doc.knob).unwrap_err().to_string();
        assert_eq!(err, "knob k is declared twice");
        let doc: Doc =
            toml::from_str("[[config]]\nname = \"a\"\n[[config]]\nname = \"a\"\n").unwrap();
        let err = check_names(&doc.config, &[]).unwrap_err().to_string();
        assert_eq!(err, "config a appears twice: config names must be unique");
        let doc: Doc = toml::from_str("[[config]]\nname = \" \"\n").unwrap();
        let err = check_names(&doc.config, &[]).unwrap_err().to_string();
        assert_eq!(
            err,
            "a [[config]] has an empty `name`: add `name = \"...\"`, unique in the plan"
        );
        let doc: Doc = toml::from_str("[[config]]\nname = \"a\"\nk = [1]\n").unwrap();
        let err = check_names(&doc.config, &[]).unwrap_err().to_string();
        assert!(err.contains("config a: knob k = [1]"), "{err}");
    }
}
