//! `[[knob]]` tables of a plan file: custom knobs, usable in configs like a built-in one.
//!
//! ```toml
//! [[knob]]
//! name = "scheduler"
//! kind = "attribute"       # attribute | command | ext_csd
//! path = "/sys/block/{disk}/queue/scheduler"
//! values = ["none", "mq-deadline"]
//! ```
//!
//! [`KnobDecl`] is a tagged enum on `kind`: each kind has exactly its own keys, so a
//! missing or foreign key fails when the plan is parsed, with the knob, its kind and the
//! key named, e.g. "knob sched (attribute): unknown field \`read\`, expected one of
//! \`name\`, \`path\`, \`values\`". An empty name or an empty `values` list fails
//! there too. That a name is not a built-in knob's is checked by the knobs
//! (knob/names.rs): the plan does not know them.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What a custom knob drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnobKind {
    /// A sysfs or debugfs file.
    Attribute,
    /// Shell hooks.
    Command,
    /// One EXT_CSD byte, switched with CMD6.
    ExtCsd,
}

impl KnobKind {
    pub const ALL: [KnobKind; 3] = [KnobKind::Attribute, KnobKind::Command, KnobKind::ExtCsd];

    /// What a knob of this kind drives.
    pub fn help(self) -> &'static str {
        match self {
            KnobKind::Attribute => "a sysfs or debugfs file",
            KnobKind::Command => "shell hooks",
            KnobKind::ExtCsd => "one EXT_CSD byte, switched with CMD6",
        }
    }

    /// The word a plan uses (`kind = "ext_csd"`).
    pub fn as_str(self) -> &'static str {
        match self {
            KnobKind::Attribute => "attribute",
            KnobKind::Command => "command",
            KnobKind::ExtCsd => "ext_csd",
        }
    }
}

impl fmt::Display for KnobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `kind = "attribute"`: a file that takes a value when written and reports it when read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributeDecl {
    pub name: String,
    /// The file; `{disk}`, `{host}`, `{card}`, `{block_sysfs}`, `{card_sysfs}`,
    /// `{host_debugfs}` and `{card_debugfs}` are filled in from the target.
    pub path: String,
    /// Allowed values (any when empty: `values` left out; `values = []` is refused).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "some_values"
    )]
    pub values: Vec<String>,
}

/// `values` as written, when it names at least one.
fn some_values<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let values = Vec::<String>::deserialize(d)?;
    if values.is_empty() {
        return Err(D::Error::custom(
            "`values` = [] allows no value: list the values it takes, or leave `values` out \
             to allow any",
        ));
    }
    Ok(values)
}

/// `kind = "command"`: shell hooks; `{value}` is replaced, shell-quoted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandDecl {
    pub name: String,
    /// Prints the current value.
    pub read: String,
    /// Sets `{value}`.
    pub apply: String,
    /// Exits 0 when `{value}` is in effect (default: read == value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
    /// Puts back `{value}` (default: apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

/// `kind = "ext_csd"`: one EXT_CSD byte set with CMD6 SWITCH.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtCsdDecl {
    pub name: String,
    /// The field name (e.g. CACHE_CTRL), or its byte offset.
    pub field: String,
}

/// A custom knob declared in the plan (`[[knob]]`), tagged by `kind`.
///
/// `remote = "Self"` makes the derives inherent functions, so the trait impls below can
/// wrap them: errors get the knob's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", remote = "Self")]
pub enum KnobDecl {
    Attribute(AttributeDecl),
    Command(CommandDecl),
    ExtCsd(ExtCsdDecl),
}

impl KnobDecl {
    /// The name configs use for this knob.
    pub fn name(&self) -> &str {
        match self {
            KnobDecl::Attribute(d) => &d.name,
            KnobDecl::Command(d) => &d.name,
            KnobDecl::ExtCsd(d) => &d.name,
        }
    }

    pub fn kind(&self) -> KnobKind {
        match self {
            KnobDecl::Attribute(_) => KnobKind::Attribute,
            KnobDecl::Command(_) => KnobKind::Command,
            KnobDecl::ExtCsd(_) => KnobKind::ExtCsd,
        }
    }
}

impl Serialize for KnobDecl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        KnobDecl::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for KnobDecl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KnobDecl, D::Error> {
        let table = toml::Table::deserialize(deserializer)?;
        let name = match table.get("name") {
            Some(toml::Value::String(name)) if name.trim().is_empty() => {
                return Err(D::Error::custom(
                    "a [[knob]] has an empty `name`: add `name = \"...\"`, the name configs use",
                ))
            }
            Some(toml::Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "a [[knob]] has name = {other}: a knob's name is a string"
                )))
            }
            None => {
                return Err(D::Error::custom(
                    "a [[knob]] has no `name`: add `name = \"...\"`, the name configs use",
                ))
            }
        };
        let context = match table.get("kind").and_then(toml::Value::as_str) {
            Some(kind) => format!("knob {name} ({kind})"),
            None => format!("knob {name}"),
        };
        KnobDecl::deserialize(toml::Value::Table(table))
            .map_err(|err| D::Error::custom(format!("{context}: {}", err.message())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Doc {
        knob: Vec<KnobDecl>,
    }

    fn parse(text: &str) -> Result<Vec<KnobDecl>, String> {
        toml::from_str::<Doc>(text)
            .map(|d| d.knob)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn each_kind_takes_its_keys() {
        let knobs = parse(
            r#"
            [[knob]]
            name = "sched"
            kind = "attribute"
            path = "/sys/block/{disk}/queue/scheduler"
            values = ["none", "mq-deadline"]

            [[knob]]
            name = "marker"
            kind = "command"
            read = "cat /tmp/m"
            apply = "echo {value} > /tmp/m"

            [[knob]]
            name = "cache-ctrl"
            kind = "ext_csd"
            field = "CACHE_CTRL"
            "#,
        )
        .unwrap();
        assert_eq!(
            knobs[0],
            KnobDecl::Attribute(AttributeDecl {
                name: "sched".into(),
                path: "/sys/block/{disk}/queue/scheduler".into(),
                values: vec!["none".into(), "mq-deadline".into()],
            })
        );
        assert_eq!(knobs[1].kind(), KnobKind::Command);
        assert_eq!(knobs[1].name(), "marker");
        assert_eq!(
            knobs[2],
            KnobDecl::ExtCsd(ExtCsdDecl {
                name: "cache-ctrl".into(),
                field: "CACHE_CTRL".into()
            })
        );
    }

    #[test]
    fn mistakes_name_the_knob_and_the_key() {
        let err =
            parse("[[knob]]\nname = \"k\"\nkind = \"attribute\"\nread = \"x\"\n").unwrap_err();
        assert!(
            err.contains("knob k (attribute): unknown field `read`") && err.contains("`path`"),
            "{err}"
        );
        let err = parse("[[knob]]\nname = \"k\"\nkind = \"attribute\"\n").unwrap_err();
        assert!(
            err.contains("knob k (attribute): missing field `path`"),
            "{err}"
        );
        let err = parse("[[knob]]\nname = \"k\"\nkind = \"command\"\nread = \"x\"\n").unwrap_err();
        assert!(
            err.contains("knob k (command): missing field `apply`"),
            "{err}"
        );
        let err =
            parse("[[knob]]\nname = \"k\"\nkind = \"ext_csd\"\nfield = \"X\"\npath = \"p\"\n")
                .unwrap_err();
        assert!(
            err.contains("knob k (ext_csd): unknown field `path`"),
            "{err}"
        );
        let err = parse("[[knob]]\nname = \"k\"\nkind = \"sysfs\"\n").unwrap_err();
        assert!(
            err.contains("knob k (sysfs): unknown variant `sysfs`")
                && err.contains("`attribute`, `command`, `ext_csd`"),
            "{err}"
        );
        let err = parse("[[knob]]\nname = \"k\"\npath = \"p\"\n").unwrap_err();
        assert!(err.contains("knob k: missing field `kind`"), "{err}");
        let err = parse("[[knob]]\nkind = \"attribute\"\npath = \"p\"\n").unwrap_err();
        assert!(
            err.contains("a [[knob]] has no `name`: add `name = \"...\"`, the name configs use"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_name_or_values_list_is_refused() {
        let err = parse("[[knob]]\nname = \"\"\nkind = \"attribute\"\npath = \"p\"\n").unwrap_err();
        assert!(
            err.contains(
                "a [[knob]] has an empty `name`: add `name = \"...\"`, the name configs use"
            ),
            "{err}"
        );
        let err =
            parse("[[knob]]\nname = \" \"\nkind = \"command\"\nread = \"r\"\napply = \"a\"\n")
                .unwrap_err();
        assert!(err.contains("a [[knob]] has an empty `name`"), "{err}");
        let err =
            parse("[[knob]]\nname = \"sched\"\nkind = \"attribute\"\npath = \"p\"\nvalues = []\n")
                .unwrap_err();
        assert!(
            err.contains(
                "knob sched (attribute): `values` = [] allows no value: list the values it \
                 takes, or leave `values` out to allow any"
            ),
            "{err}"
        );
        let knobs =
            parse("[[knob]]\nname = \"sched\"\nkind = \"attribute\"\npath = \"p\"\n").unwrap();
        assert_eq!(
            knobs[0],
            KnobDecl::Attribute(AttributeDecl {
                name: "sched".into(),
                path: "p".into(),
                values: Vec::new(),
            })
        );
    }

    #[test]
    fn the_error_names_the_knob_among_several() {
        let err = parse(
            "[[knob]]\nname = \"a\"\nkind = \"command\"\nread = \"r\"\napply = \"a\"\n\n\
             [[knob]]\nname = \"b\"\nkind = \"attribute\"\n",
        )
        .unwrap_err();
        assert!(
            err.contains("knob b (attribute): missing field `path`"),
            "{err}"
        );
    }

    #[test]
    fn declarations_serialize_with_their_kind() {
        let decl = KnobDecl::Command(CommandDecl {
            name: "m".into(),
            read: "r".into(),
            apply: "a".into(),
            verify: None,
            restore: Some("s".into()),
        });
        let text = toml::to_string(&decl).unwrap();
        assert!(text.contains("kind = \"command\""), "{text}");
        assert!(!text.contains("verify"), "{text}");
        let back: Doc = toml::from_str(&format!("[[knob]]\n{text}")).unwrap();
        assert_eq!(back.knob, vec![decl]);
    }

    #[test]
    fn kinds_have_one_spelling_in_plans() {
        for kind in KnobKind::ALL {
            let word = kind.as_str();
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<KnobKind>(&json).unwrap(), kind);
        }
    }
}
