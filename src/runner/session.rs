//! What a run is made of before the first I/O: the plan (from the file, or from
//! `meta.json` when resuming), the form of the run, the selected configs and workloads,
//! and the matrix (order, repetitions, seed).

use super::events::{Event, Events};
use super::{Mode, RunOptions};
use crate::plan::config::ConfigSpec;
use crate::plan::matrix::{Matrix, Order, Slot};
use crate::plan::spec::Plan;
use crate::plan::workload::WorkloadSpec;
use crate::record::resume::TornLine;
use crate::record::writer::ResultsWriter;
use crate::record::Meta;
use anyhow::{bail, Context, Result};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub const DEFAULT_REPETITIONS: u32 = 3;
/// Name of the implicit config of a plan without `[[config]]`: the device as it is.
pub const AS_IS_CONFIG: &str = "as-is";

/// Everything `mmcab run` decided before touching the device.
#[derive(Debug)]
pub struct Session {
    pub mode: Mode,
    pub plan: Plan,
    pub plan_text: String,
    pub configs: Vec<ConfigSpec>,
    /// Indices into `plan.workload`, in plan order.
    pub workloads: Vec<usize>,
    /// Runs in order: configs x workloads x (warm-up + repetitions), walked lazily.
    pub matrix: Matrix,
    pub seed: u64,
    /// `--scale-down` (None: 1).
    pub scale_down: Option<u32>,
    /// `--until-ci` (the matrix then has `--max-repeat` repetitions).
    pub until_ci: Option<f64>,
    pub label: String,
    /// Empty for `--dry-run` without `--device`.
    pub target: PathBuf,
    /// Runs already in runs.csv (resume).
    pub finished: BTreeSet<u32>,
    /// Set when resuming: the results directory (locked) and its meta.json; None for
    /// `--resume --dry-run`, which only reads the directory.
    pub resumed: Option<(ResultsWriter, Meta)>,
    /// Torn last lines cut off when resuming.
    pub torn: Vec<TornLine>,
    /// The command line that started it (meta.json `command_line`; empty: not known).
    pub command_line: Vec<String>,
}

impl Session {
    /// The session of a new run, from its plan file and `opts` (`--resume`'s is
    /// `resume::session`; [`super::open_session`] picks). `require_device`: false for
    /// --dry-run, which touches no device.
    pub fn fresh(opts: &RunOptions, require_device: bool) -> Result<Session> {
        let Some(plan_path) = &opts.plan else {
            bail!(
                "mmcab run needs a PLAN file (e.g. workloads/bus-width-ab.toml), or --resume DIR"
            );
        };
        let plan_text = std::fs::read_to_string(plan_path)
            .with_context(|| format!("cannot read plan file {}", plan_path.display()))?;
        let plan: Plan = plan_text
            .parse()
            .with_context(|| format!("plan file {}", plan_path.display()))?;
        let mode = if opts.asks_to_record() || !plan.config.is_empty() {
            Mode::Recorded
        } else {
            Mode::OnePass
        };
        let configs = select_configs(&plan, &opts.configs)?;
        let workloads = select_workloads(&plan, &opts.workloads)?;
        let seed = opts.seed.or(plan.seed).unwrap_or(1);
        let repetitions = opts.repetitions(plan.repetitions);
        let order = opts.order.or(plan.order).unwrap_or_default();
        if opts.until_ci.is_some() && order == Order::Blocked {
            bail!(
                "--until-ci stops the configs of a workload together at the end of a round: \
                 use --order interleaved or random, not blocked"
            );
        }
        let matrix = match mode {
            // Every workload once, in plan order.
            Mode::OnePass => Matrix::new(1, workloads.len(), 1, 0, Order::Interleaved, seed)?,
            Mode::Recorded => Matrix::new(
                configs.len(),
                workloads.len(),
                repetitions,
                opts.warmup.or(plan.warmup).unwrap_or(0),
                order,
                seed,
            )?,
        };
        let target = match opts.device.clone() {
            Some(target) => target,
            None if !require_device => PathBuf::new(),
            None => bail!(
                "mmcab run needs --device TARGET: a block device (/dev/mmcblk0), a file or a \
                 directory (or --dry-run to only print the matrix)"
            ),
        };
        Ok(Session {
            mode,
            plan,
            plan_text,
            configs,
            workloads,
            matrix,
            seed,
            scale_down: opts.scale_down.filter(|&n| n != 1),
            until_ci: opts.until_ci,
            label: opts.label.clone().unwrap_or_default(),
            target,
            finished: BTreeSet::new(),
            resumed: None,
            torn: Vec::new(),
            command_line: opts.command_line.clone(),
        })
    }

    /// The workload of a run.
    pub fn spec(&self, slot: &Slot) -> &WorkloadSpec {
        &self.plan.workload[self.workloads[slot.workload]]
    }

    /// The workload of a run as its config runs it (a config's `packed` set on its ioctl
    /// write jobs).
    pub fn spec_for(&self, slot: &Slot) -> Cow<'_, WorkloadSpec> {
        self.configs[slot.config].workload(self.spec(slot))
    }

    pub fn workload_name(&self, slot: &Slot) -> &str {
        &self.spec(slot).name
    }

    /// Runs still to do, in order.
    pub fn pending(&self) -> impl Iterator<Item = Slot> + '_ {
        self.matrix
            .iter()
            .filter(|s| !self.finished.contains(&s.run))
    }

    /// How many runs are still to do.
    pub fn pending_len(&self) -> u32 {
        let done = self.finished.range(1..=self.matrix.len()).count() as u32;
        self.matrix.len() - done
    }

    /// How many runs of the matrix are done (by an interrupted run being resumed).
    pub fn done_len(&self) -> u32 {
        self.matrix.len() - self.pending_len()
    }

    pub fn report_torn_lines(&self, events: &dyn Events) {
        for torn in &self.torn {
            events.event(Event::TornLine {
                path: &torn.path,
                bytes: torn.bytes,
            });
        }
    }
}

pub(super) fn select_configs(plan: &Plan, names: &[String]) -> Result<Vec<ConfigSpec>> {
    crate::knob::names::check_plan_knobs(&plan.config, &plan.knob)?;
    let all = if plan.config.is_empty() {
        vec![ConfigSpec {
            name: AS_IS_CONFIG.to_string(),
            ..Default::default()
        }]
    } else {
        plan.config.clone()
    };
    if names.is_empty() {
        return Ok(all);
    }
    let mut picked = Vec::new();
    for name in names {
        match all.iter().find(|c| &c.name == name) {
            Some(c) => picked.push(c.clone()),
            None => bail!(
                "plan {} has no config '{name}'; it has: {}",
                plan.name,
                all.iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(picked)
}

pub(super) fn select_workloads(plan: &Plan, names: &[String]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..plan.workload.len()).collect());
    }
    let mut picked = Vec::new();
    for name in names {
        match plan.workload.iter().position(|w| &w.name == name) {
            Some(i) => picked.push(i),
            None => bail!(
                "plan {} has no workload '{name}'; it has: {}",
                plan.name,
                plan.workload
                    .iter()
                    .map(|w| w.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(picked)
}

/// Lower-case hex of bytes (the plan's SHA-256).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::record::writer::ResultsWriter;
    use std::path::Path;

    const PLAN: &str = "name = \"p\"\nseed = 3\n\
        [[config]]\nname = \"A\"\n[[config]]\nname = \"B\"\n\
        [[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"read\"\nsize = \"1M\"\n";

    fn plan_file(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join("plan.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// An interrupted results directory of PLAN, as a fresh recorded run writes it.
    pub(in crate::runner) fn interrupted(dir: &Path, order: Order) -> PathBuf {
        let opts = RunOptions {
            plan: Some(plan_file(dir, PLAN)),
            order: Some(order),
            device: Some("/dev/null".into()),
            ..Default::default()
        };
        let session = Session::fresh(&opts, true).unwrap();
        let out = dir.join("res");
        ResultsWriter::create(&out, &super::super::results::new_meta(&session)).unwrap();
        out
    }

    #[test]
    fn the_form_of_the_run_follows_the_plan_and_the_options() {
        let dir = tempfile::tempdir().unwrap();
        let no_configs = "name = \"p\"\nrepetitions = 5\n[[workload]]\nname = \"w\"\n\
            [[workload.job]]\nname = \"j\"\nrw = \"read\"\n[[workload]]\nname = \"v\"\n\
            [[workload.job]]\nname = \"j\"\nrw = \"read\"\n";
        let plan = plan_file(dir.path(), no_configs);
        let opts = RunOptions {
            plan: Some(plan.clone()),
            device: Some("/dev/null".into()),
            ..Default::default()
        };
        let one = Session::fresh(&opts, true).unwrap();
        assert_eq!(one.mode, Mode::OnePass);
        assert_eq!(
            one.matrix.len(),
            2,
            "every workload once, the plan's repetitions aside"
        );
        assert_eq!(one.configs[0].name, AS_IS_CONFIG);
        let recorded = Session::fresh(
            &RunOptions {
                warmup: Some(1),
                ..opts.clone()
            },
            true,
        )
        .unwrap();
        assert_eq!(recorded.mode, Mode::Recorded);
        assert_eq!(recorded.matrix.len(), 2 * 6);
        let err = Session::fresh(
            &RunOptions {
                device: None,
                ..opts
            },
            true,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--device TARGET"), "{err}");
    }
}
