//! Knob names, values and settings as types rather than strings.
//!
//! A [`Value`] is a knob's value in its canonical form. Outside this module tree only
//! [`super::Knob::normalize`] makes one, so a value the plan wrote but no knob checked
//! cannot reach [`super::Knob::apply`]: that is a compile-time fact. A config's
//! [`Settings`] are what it wants of each knob it sets; [`Verified`] is what was read
//! back before a run, in the order the knobs were brought in place. Both print as
//! `name=value` words, the form of the progress lines.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;

/// A knob's name as users type it in a plan (`bus-width`, or a `[[knob]]`'s name). In
/// meta.json it is the key of a map, as plain text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KnobName(String);

impl KnobName {
    pub fn new(name: impl Into<String>) -> KnobName {
        KnobName(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Maps keyed by name are looked up with a `&str` (`map["bus-width"]`); the order is
/// that of the text, as it was for the `String` keys.
impl Borrow<str> for KnobName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for KnobName {
    fn from(name: &str) -> KnobName {
        KnobName::new(name)
    }
}

impl From<String> for KnobName {
    fn from(name: String) -> KnobName {
        KnobName(name)
    }
}

impl fmt::Display for KnobName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A knob value in the knob's canonical form ("8", "on", "16"): what
/// [`super::Knob::normalize`] returns and what apply, check and verify take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value(String);

impl Value {
    /// A value known to be canonical: a knob's `normalize` result, or what a knob read
    /// back or saved (the device's report is the canonical form by definition: verify
    /// compares with it). Only the knob kinds make values.
    pub(in crate::knob) fn canonical(text: impl Into<String>) -> Value {
        Value(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// One knob at one value; prints as `name=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub knob: KnobName,
    pub value: Value,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.knob, self.value)
    }
}

/// What a config wants of the knobs it sets: one value per knob, ordered by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings(Vec<Setting>);

impl Settings {
    /// Settings from (knob, canonical value) pairs, for tests.
    #[cfg(test)]
    pub fn of(pairs: &[(&str, &str)]) -> Settings {
        let mut s = Settings::default();
        for (knob, v) in pairs {
            s.set(Setting {
                knob: (*knob).into(),
                value: Value::canonical(*v),
            });
        }
        s
    }

    /// Set `setting.knob` to `setting.value`, replacing what it was set to before.
    pub fn set(&mut self, setting: Setting) {
        match self.0.binary_search_by(|s| s.knob.cmp(&setting.knob)) {
            Ok(i) => self.0[i] = setting,
            Err(i) => self.0.insert(i, setting),
        }
    }

    /// The value this config wants of `knob`, if it sets it.
    pub fn get(&self, knob: &str) -> Option<&Value> {
        self.0
            .binary_search_by(|s| s.knob.as_str().cmp(knob))
            .ok()
            .map(|i| &self.0[i].value)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Setting> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The knobs read back before a run, in the order they were brought in place; prints
/// as `name=value` words separated by spaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified(Vec<Setting>);

impl Verified {
    pub fn push(&mut self, setting: Setting) {
        self.0.push(setting);
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Setting> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Verified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, setting) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{setting}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn setting(knob: &str, value: &str) -> Setting {
        Setting {
            knob: knob.into(),
            value: Value::canonical(value),
        }
    }

    #[test]
    fn settings_keep_one_value_per_knob_in_name_order() {
        let mut settings = Settings::default();
        assert!(settings.is_empty());
        settings.set(setting("read-ahead", "512"));
        settings.set(setting("bus-width", "4"));
        settings.set(setting("cqe", "on"));
        settings.set(setting("bus-width", "8"));
        let names: Vec<&str> = settings.iter().map(|s| s.knob.as_str()).collect();
        assert_eq!(names, ["bus-width", "cqe", "read-ahead"]);
        assert_eq!(settings.get("bus-width").unwrap(), "8");
        assert_eq!(settings.get("read-ahead").unwrap(), "512");
        assert_eq!(settings.get("packing"), None);
        assert_eq!(settings.get("bus"), None);
    }

    #[test]
    fn verified_prints_as_the_progress_line_words() {
        let mut verified = Verified::default();
        assert!(verified.is_empty());
        assert_eq!(verified.to_string(), "");
        verified.push(setting("cqe", "off"));
        assert_eq!(verified.to_string(), "cqe=off");
        verified.push(setting("bus-width", "8"));
        assert_eq!(verified.to_string(), "cqe=off bus-width=8");
        assert_eq!(verified.iter().count(), 2);
    }

    /// Outside the knob kinds a value comes only from `normalize`: the plan's words in,
    /// the canonical form out, and nothing for a value the knob does not take.
    #[test]
    fn normalize_makes_the_canonical_value_or_none() {
        use crate::knob::attribute::AttributeKnob;
        use crate::knob::Knob;
        let values = vec!["mq-deadline".to_string(), "none".to_string()];
        let knob = AttributeKnob::new("scheduler", "/nonexistent", values)
            .with_aliases(&[("deadline", "mq-deadline")]);
        assert_eq!(knob.normalize(" none\n").unwrap(), Value::canonical("none"));
        assert_eq!(knob.normalize("deadline").unwrap(), "mq-deadline");
        assert!(knob.normalize("kyber").is_err());
        // The default form: the plan's text, trimmed.
        let free = AttributeKnob::new("read-ahead", "/nonexistent", Vec::new());
        assert_eq!(free.normalize(" 512 ").unwrap(), "512");
    }

    #[test]
    fn a_value_compares_with_its_text() {
        let value = Value::canonical("on");
        assert_eq!(value, "on");
        assert_ne!(value, "off");
        assert_eq!(value.as_str(), "on");
        assert_eq!(format!("[{value}]"), "[on]");
        assert_eq!(setting("x", "a b").to_string(), "x=a b");
    }

    #[test]
    fn names_are_keys_of_the_same_text_as_before() {
        // meta.json's {"knob": "..."} maps: read as typed keys, written back unchanged,
        // looked up by &str, in the order of the text.
        let json = r#"{"bus-width":"8","cqe":"on","read-ahead":"512"}"#;
        let map: BTreeMap<KnobName, String> = serde_json::from_str(json).unwrap();
        assert_eq!(map["cqe"], "on");
        assert!(map.contains_key("read-ahead"));
        assert_eq!(serde_json::to_string(&map).unwrap(), json);
        let name = KnobName::new("bus-width");
        assert_eq!(name.to_string(), "bus-width");
        assert_eq!(KnobName::from("bus-width".to_string()), name);
        assert_eq!(serde_json::to_string(&name).unwrap(), r#""bus-width""#);
    }
}
