//! The knob names a plan may use: the built-ins ([`super::builtin`]) and its own
//! `[[knob]]` declarations, which may not take a built-in's name. The plan checks its
//! names itself (given, unique); only the knobs know which exist.

use super::builtin;
use crate::plan::config::ConfigSpec;
use crate::plan::knob::KnobDecl;
use anyhow::{bail, Result};

/// Check a plan's knob declarations and every knob its configs set against the knobs
/// mmcab has, before anything is touched.
pub fn check_plan_knobs(configs: &[ConfigSpec], custom: &[KnobDecl]) -> Result<()> {
    for knob in custom {
        if builtin::find(knob.name()).is_some() {
            bail!(
                "knob {}: that name is a built-in knob; pick another name",
                knob.name()
            );
        }
    }
    for config in configs {
        for knob in config.knob_values()?.keys() {
            if builtin::find(knob).is_none() && !custom.iter().any(|d| d.name() == knob) {
                let mut known: Vec<&str> = builtin::names().collect();
                known.extend(custom.iter().map(KnobDecl::name));
                bail!(
                    "config {}: unknown knob '{knob}' (known: {}; declare others with [[knob]])",
                    config.name,
                    known.join(", ")
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::spec::Plan;

    fn check(text: &str) -> Result<()> {
        let plan: Plan = format!(
            "name = \"p\"\n{text}\n[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\n\
             rw = \"read\"\n"
        )
        .parse()?;
        check_plan_knobs(&plan.config, &plan.knob)
    }

    #[test]
    fn built_ins_and_declared_knobs_are_known() {
        check(
            "[[config]]\nname = \"a\"\nbus-width = 8\nmarker = true\n\
             [[knob]]\nname = \"marker\"\nkind = \"command\"\nread = \"r\"\napply = \"a\"\n",
        )
        .unwrap();
    }

    #[test]
    fn an_unknown_knob_lists_the_known_ones() {
        let err = check(
            "[[config]]\nname = \"a\"\nbus_width = 8\n\
             [[knob]]\nname = \"marker\"\nkind = \"command\"\nread = \"r\"\napply = \"a\"\n",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "config a: unknown knob 'bus_width' (known: bus-width, packing, cmd23, cqe, cache, \
             speed-mode, clock, marker; declare others with [[knob]])"
        );
    }

    #[test]
    fn a_declared_knob_may_not_take_a_built_in_name() {
        let err = check("[[knob]]\nname = \"cache\"\nkind = \"ext_csd\"\nfield = \"CACHE_CTRL\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "knob cache: that name is a built-in knob; pick another name"
        );
    }
}
