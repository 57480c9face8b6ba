//! The plan file: its top-level keys, `[[config]]` tables ([`super::config`]), `[[knob]]`
//! declarations ([`super::knob`]), `[[workload]]` entries ([`super::workload`]) and
//! `[[sweep]]` tables ([`super::sweep`]), read and checked as a whole.

use super::config::ConfigSpec;
use super::knob::KnobDecl;
use super::order::Order;
use super::sweep::SweepSpec;
use super::workload::{takes_packed, WorkloadSpec};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub repetitions: Option<u32>,
    #[serde(default)]
    pub warmup: Option<u32>,
    #[serde(default)]
    pub order: Option<Order>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Every job that can wrap around its region runs at least this long, unless it
    /// says otherwise (its own `min_runtime`): run length by time, on any card.
    #[serde(
        default,
        with = "crate::units::serde_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_runtime: Option<std::time::Duration>,
    /// Every write job that takes it writes past the card's stated cache, unless it
    /// says otherwise (its own `past_cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_cache: Option<bool>,
    /// Configurations to compare (`[[config]]`: name, knob settings, expectations).
    #[serde(default)]
    pub config: Vec<ConfigSpec>,
    /// Custom knobs the configs may use (`[[knob]]`).
    #[serde(default)]
    pub knob: Vec<KnobDecl>,
    pub workload: Vec<WorkloadSpec>,
    /// Workloads charted against one job key (`[[sweep]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<SweepSpec>,
}

impl Plan {
    /// Read, parse and validate a plan file; errors name the file.
    pub fn load(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read plan file {}", path.display()))?;
        text.parse::<Plan>()
            .with_context(|| format!("plan file {}", path.display()))
    }

    /// Check the names (the plan's, its configs' and knobs', each given and unique), the
    /// workloads (names unique, every job possible) and bound every number
    /// ([`super::limits`]). Whether the configs' knobs exist is the knobs' check
    /// (knob/names.rs).
    pub fn validate(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            bail!(
                "the plan has an empty `name`: add `name = \"...\"` (its results directories \
                 are named after it)"
            );
        }
        super::config::check_names(&self.config, &self.knob)?;
        if self.workload.is_empty() {
            bail!("plan '{}' has no [[workload]]: add at least one", self.name);
        }
        for (i, w) in self.workload.iter().enumerate() {
            if self.workload[..i].iter().any(|o| o.name == w.name) {
                bail!(
                    "two workloads are named '{}': workload names must be unique",
                    w.name
                );
            }
            w.validate()?;
        }
        super::sweep::validate_all(&self.sweep, &self.workload)?;
        let packs = |w: &WorkloadSpec| w.job.iter().any(takes_packed);
        if let Some(c) = self.config.iter().find(|c| c.packed.is_some()) {
            if !self.workload.iter().any(packs) {
                bail!(
                    "config {}: `packed` applies to jobs with engine = \"ioctl\" and rw = \
                     \"write\" or \"randwrite\", and plan '{}' has none",
                    c.name,
                    self.name
                );
            }
        }
        super::limits::check_plan(self.repetitions, self.warmup, &self.workload)
    }

    /// Parse a plan's TOML text and give the plan's `min_runtime` and `past_cache` to
    /// the jobs without their own, unchecked (a recorded plan, read back by the report).
    pub fn parse(text: &str) -> Result<Plan> {
        let mut plan: Plan = toml::from_str(text)?;
        if let Some(min) = plan.min_runtime {
            if min.is_zero() {
                bail!("`min_runtime` must be greater than 0");
            }
            for w in &mut plan.workload {
                w.with_min_runtime(min);
            }
        }
        if let Some(on) = plan.past_cache {
            for w in &mut plan.workload {
                w.with_past_cache(on);
            }
        }
        Ok(plan)
    }

    pub fn workload(&self, name: &str) -> Option<&WorkloadSpec> {
        self.workload.iter().find(|w| w.name == name)
    }
}

impl FromStr for Plan {
    type Err = anyhow::Error;

    /// Parse and validate a plan from TOML text.
    fn from_str(text: &str) -> Result<Plan> {
        let plan = Plan::parse(text)?;
        plan.validate()?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"
name = "p"
seed = 7
[[config]]
name = "a"
[[workload]]
name = "w1"
[[workload.job]]
name = "r"
rw = "read"
size = "1M"
"#;

    #[test]
    fn parses_with_raw_configs() {
        let plan: Plan = PLAN.parse().unwrap();
        assert_eq!(plan.seed, Some(7));
        assert_eq!(plan.config.len(), 1);
        assert_eq!(plan.workload("w1").unwrap().job[0].size, Some(1 << 20));
    }

    #[test]
    fn errors_name_the_key_and_the_workload() {
        let err = format!(
            "{:#}",
            format!("repetition = 3\n{PLAN}")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert!(err.contains("repetition"), "{err}");
        let bad = PLAN.replace("size = \"1M\"", "iodepth = 0");
        let err = format!("{:#}", bad.parse::<Plan>().unwrap_err());
        assert!(
            err.contains("workload 'w1', job 'r'") && err.contains("iodepth"),
            "{err}"
        );
        let twice = format!(
            "{PLAN}[[workload]]\nname = \"w1\"\n[[workload.job]]\nname = \"x\"\nrw = \"read\"\n"
        );
        assert!(twice
            .parse::<Plan>()
            .unwrap_err()
            .to_string()
            .contains("'w1'"));
    }

    #[test]
    fn empty_names_are_refused_when_the_plan_is_read() {
        let err = format!(
            "{:#}",
            PLAN.replace("name = \"p\"", "name = \"\"")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert_eq!(
            err,
            "the plan has an empty `name`: add `name = \"...\"` (its results directories are \
             named after it)"
        );
        let err = format!(
            "{:#}",
            PLAN.replace("name = \"a\"", "name = \"\"")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert_eq!(
            err,
            "a [[config]] has an empty `name`: add `name = \"...\"`, unique in the plan"
        );
        let err = format!(
            "{:#}",
            PLAN.replace("name = \"w1\"", "name = \" \"")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert_eq!(
            err,
            "a [[workload]] has an empty `name`: add `name = \"...\"`, unique in the plan"
        );
        let err = format!(
            "{:#}",
            PLAN.replace("name = \"r\"", "name = \"\"")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert_eq!(
            err,
            "workload 'w1': a [[workload.job]] has an empty `name`: add `name = \"...\"`, \
             unique in the workload"
        );
        let knob = "[[knob]]\nname = \"\"\nkind = \"attribute\"\npath = \"p\"\n";
        let err = format!("{:#}", format!("{PLAN}{knob}").parse::<Plan>().unwrap_err());
        assert!(
            err.contains(
                "a [[knob]] has an empty `name`: add `name = \"...\"`, the name configs use"
            ),
            "{err}"
        );
        let sweep = |name: &str, workloads: &str| {
            let plan = format!(
                "{PLAN}[[workload]]\nname = \"w2\"\n[[workload.job]]\nname = \"r\"\nrw = \"read\"\n\
                 size = \"1M\"\nbs = \"8k\"\n[[sweep]]\nname = \"{name}\"\nover = \"bs\"\n\
                 workloads = {workloads}\n"
            );
            plan.parse::<Plan>()
                .map(|_| ())
                .map_err(|e| format!("{e:#}"))
        };
        assert_eq!(sweep("s", "[\"w1\", \"w2\"]"), Ok(()));
        assert_eq!(
            sweep("", "[\"w1\", \"w2\"]"),
            Err(
                "a [[sweep]] has an empty `name`: add `name = \"...\"` (it names the chart)".into()
            )
        );
        // An empty list where the plan needs a choice: what it holds and what to list.
        assert_eq!(
            sweep("s", "[]"),
            Err(
                "[[sweep]] 's': `workloads` names 0 workloads: list 2 to 256 of the plan's \
                 workloads, one per point of the sweep"
                    .into()
            )
        );
    }

    #[test]
    fn the_plans_min_runtime_goes_to_every_job_that_can_wrap() {
        let plan = format!(
            "min_runtime = \"2s\"\n{PLAN}[[workload]]\nname = \"w2\"\n[[workload.job]]\n\
             name = \"own\"\nrw = \"read\"\nmin_runtime = \"500ms\"\n[[workload.job]]\n\
             name = \"io\"\nrw = \"iozone\"\nsize = \"1M\"\n[[workload.job]]\nname = \"v\"\n\
             rw = \"write\"\nverify = true\n"
        );
        let plan: Plan = plan.parse().unwrap();
        let min = |w: usize, j: usize| plan.workload[w].job[j].min_runtime;
        let ms = std::time::Duration::from_millis;
        assert_eq!(min(0, 0), Some(ms(2000)));
        assert_eq!(min(1, 0), Some(ms(500)), "a job's own wins");
        assert_eq!(
            (min(1, 1), min(1, 2)),
            (None, None),
            "iozone and verify do not wrap"
        );
        let err = format!(
            "{:#}",
            format!("min_runtime = 0\n{PLAN}")
                .parse::<Plan>()
                .unwrap_err()
        );
        assert_eq!(err, "`min_runtime` must be greater than 0");
    }

    #[test]
    fn a_configs_packed_needs_an_ioctl_write_job() {
        let plan = PLAN.replace("name = \"a\"", "name = \"a\"\npacked = 8");
        let err = format!("{:#}", plan.parse::<Plan>().unwrap_err());
        assert!(
            err.contains("config a: `packed` applies to jobs with engine = \"ioctl\""),
            "{err}"
        );
        let ioctl = plan.replace("rw = \"read\"", "rw = \"write\"\nengine = \"ioctl\"");
        let plan: Plan = ioctl.parse().unwrap();
        let spec = plan.config[0].workload(&plan.workload[0]);
        assert_eq!(
            spec.job[0].packed,
            Some(crate::plan::packed::Packed::Entries(8))
        );
    }

    #[test]
    fn every_workload_file_parses_and_validates() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                Plan::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                seen += 1;
            }
        }
        assert!(seen >= 3, "only {seen} plan files in {}", dir.display());
    }
}
