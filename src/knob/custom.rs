//! Custom knobs: what a plan's `[[knob]]` declaration ([`KnobDecl`]) becomes on a target,
//! with the target's paths filled into its path or commands.

use super::attribute::AttributeKnob;
use super::builtin::CardExtCsd;
use super::command::CommandKnob;
use super::ext_csd::ExtCsdKnob;
use super::Knob;
use crate::device::MmcPaths;
use crate::plan::knob::KnobDecl;
use anyhow::{bail, Result};

/// Placeholders a custom knob's path may use.
pub fn fill_placeholders(text: &str, paths: Option<&MmcPaths>, disk: &str) -> String {
    let mut out = text.replace("{disk}", disk);
    if let Some(p) = paths {
        for (key, value) in [
            ("{host}", p.host.clone()),
            ("{card}", p.card.clone()),
            (
                "{block_sysfs}",
                p.block_sysfs.to_string_lossy().into_owned(),
            ),
            ("{card_sysfs}", p.card_sysfs.to_string_lossy().into_owned()),
            (
                "{host_debugfs}",
                p.host_debugfs.to_string_lossy().into_owned(),
            ),
            (
                "{card_debugfs}",
                p.card_debugfs.to_string_lossy().into_owned(),
            ),
        ] {
            out = out.replace(key, &value);
        }
    }
    out
}

/// The knob a `[[knob]]` declaration makes on this target (`paths`: None when the
/// target is not an MMC device). Touches nothing: the knob reads and writes only when used.
pub fn resolve(
    decl: &KnobDecl,
    paths: Option<&MmcPaths>,
    disk: &str,
    force: bool,
) -> Result<Box<dyn Knob>> {
    let fill = |s: &str| fill_placeholders(s, paths, disk);
    Ok(match decl {
        KnobDecl::Attribute(d) => {
            let path = fill(&d.path);
            if path.contains('{') {
                bail!(
                    "knob {}: path {path} has a placeholder this target cannot fill (is it an \
                     MMC device?)",
                    d.name
                );
            }
            Box::new(AttributeKnob::new(&d.name, path, d.values.clone()))
        }
        KnobDecl::Command(d) => Box::new(CommandKnob::new(
            &d.name,
            &fill(&d.read),
            &fill(&d.apply),
            d.verify.as_deref().map(fill).as_deref(),
            d.restore.as_deref().map(fill).as_deref(),
        )),
        KnobDecl::ExtCsd(d) => {
            let Some(paths) = paths else {
                bail!(
                    "knob {}: an ext_csd knob needs an MMC device as --device",
                    d.name
                );
            };
            Box::new(ExtCsdKnob::new(
                &d.name,
                &d.field,
                ext_csd_index(&d.field),
                force,
                Box::new(CardExtCsd {
                    paths: paths.clone(),
                }),
            )?)
        }
    })
}

/// Offset of a one-byte EXT_CSD field by name (or a number given as the field).
fn ext_csd_index(field: &str) -> Option<usize> {
    field.parse().ok().or_else(|| {
        crate::device::ext_csd_table::find(&field.to_ascii_uppercase())
            .filter(|f| f.width == 1)
            .map(|f| f.offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::knob::{AttributeDecl, ExtCsdDecl};

    fn paths() -> MmcPaths {
        MmcPaths {
            dev_node: "/dev/mmcblk0".into(),
            disk: "mmcblk0".into(),
            block_sysfs: "/sys/block/mmcblk0".into(),
            card_sysfs: "/sys/bus/mmc/devices/mmc0:0001".into(),
            card: "mmc0:0001".into(),
            host: "mmc0".into(),
            host_debugfs: "/sys/kernel/debug/mmc0".into(),
            card_debugfs: "/sys/kernel/debug/mmc0/mmc0:0001".into(),
        }
    }

    fn ext_csd(field: &str) -> KnobDecl {
        KnobDecl::ExtCsd(ExtCsdDecl {
            name: "k".into(),
            field: field.into(),
        })
    }

    #[test]
    fn placeholders_are_filled_from_the_target() {
        let text = "{block_sysfs}/queue/x {card} {host_debugfs} {disk}";
        assert_eq!(
            fill_placeholders(text, Some(&paths()), "mmcblk0"),
            "/sys/block/mmcblk0/queue/x mmc0:0001 /sys/kernel/debug/mmc0 mmcblk0"
        );
        let attribute = KnobDecl::Attribute(AttributeDecl {
            name: "a".into(),
            path: "{card_sysfs}/x".into(),
            values: vec![],
        });
        let err = resolve(&attribute, None, "loop0", false).err().unwrap();
        assert!(err.to_string().contains("placeholder"), "{err}");
    }

    #[test]
    fn ext_csd_fields_resolve_by_name_or_offset() {
        assert_eq!(ext_csd_index("CACHE_CTRL"), Some(33));
        assert_eq!(ext_csd_index("cmdq_support"), Some(308));
        assert_eq!(ext_csd_index("191"), Some(191));
        assert_eq!(ext_csd_index("NO_SUCH_FIELD"), None);
    }

    #[test]
    fn forced_ext_csd_knobs_cmd6_cannot_write_are_refused_with_the_reason() {
        // CMDQ_SUPPORT is EXT_CSD[308]: cast into CMD6's index byte it was byte 52.
        let err = format!(
            "{:#}",
            resolve(&ext_csd("CMDQ_SUPPORT"), Some(&paths()), "mmcblk0", true)
                .err()
                .unwrap()
        );
        assert!(
            err.contains("EXT_CSD[308] cannot be switched") && err.contains("one byte"),
            "{err}"
        );
        let err = format!(
            "{:#}",
            resolve(&ext_csd("EXT_CSD_REV"), Some(&paths()), "mmcblk0", true)
                .err()
                .unwrap()
        );
        assert!(
            err.contains("EXT_CSD[192]") && err.contains("properties segment"),
            "{err}"
        );
        assert!(resolve(&ext_csd("191"), Some(&paths()), "mmcblk0", true).is_ok());
        assert!(resolve(&ext_csd("CACHE_CTRL"), Some(&paths()), "mmcblk0", false).is_ok());
        // Without --force only the allow-list, whatever the index.
        let err = format!(
            "{:#}",
            resolve(&ext_csd("191"), Some(&paths()), "mmcblk0", false)
                .err()
                .unwrap()
        );
        assert!(err.contains("allow-list"), "{err}");
    }
}
