//! What a run is made of before the first I/O: the plan (from the file, or from
//! `meta.json` when resuming), the selected configs and workloads, order, repetitions,
//! the results directory and its metadata.

use super::config::ConfigSpec;
use super::matrix::{Matrix, Order, Slot};
use super::spec::Plan;
use crate::cli::RunArgs;
use crate::record::writer::{ResultsWriter, Resumed, TornLine};
use crate::record::{ConfigMeta, Meta};
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub const DEFAULT_REPETITIONS: u32 = 3;
/// Name of the implicit config of a plan without `[[config]]`: the device as it is.
pub const AS_IS_CONFIG: &str = "as-is";

/// Everything `mmcab run` decided before touching the device.
#[derive(Debug)]
pub struct Session {
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
    pub label: String,
    pub target: PathBuf,
    /// Runs already in runs.csv (resume).
    pub finished: BTreeSet<u32>,
    /// Set when resuming: the results directory and its meta.json.
    pub resumed: Option<(ResultsWriter, Meta)>,
    /// Torn last lines cut off when resuming.
    pub torn: Vec<TornLine>,
}

impl Session {
    /// `require_device`: false for --dry-run, which touches no device.
    pub fn from_args(args: &RunArgs, require_device: bool) -> Result<Session> {
        match &args.resume {
            Some(dir) => Self::resume(args, dir),
            None => Self::fresh(args, require_device),
        }
    }

    fn fresh(args: &RunArgs, require_device: bool) -> Result<Session> {
        let Some(plan_path) = &args.plan else {
            bail!(
                "mmcab run needs a PLAN file (e.g. workloads/bus-width-ab.toml), or --resume DIR"
            );
        };
        let plan_text = std::fs::read_to_string(plan_path)
            .with_context(|| format!("cannot read plan file {}", plan_path.display()))?;
        let plan: Plan = plan_text
            .parse()
            .with_context(|| format!("plan file {}", plan_path.display()))?;
        let configs = select_configs(&plan, &args.config)?;
        let workloads = select_workloads(&plan, &args.workload)?;
        let order = match &args.order {
            Some(text) => text.parse()?,
            None => plan.order.unwrap_or_default(),
        };
        let repetitions = args
            .repeat
            .or(plan.repetitions)
            .unwrap_or(DEFAULT_REPETITIONS);
        if repetitions == 0 {
            bail!("repetitions must be at least 1 (--repeat or the plan's `repetitions`)");
        }
        let warmup = args.warmup.or(plan.warmup).unwrap_or(0);
        let seed = args.seed.or(plan.seed).unwrap_or(1);
        let target = match args.device.clone() {
            Some(target) => target,
            None if !require_device => PathBuf::new(),
            None => bail!(
                "mmcab run needs --device TARGET: a block device (/dev/mmcblk0), a file or a \
                 directory (or --dry-run to only print the matrix)"
            ),
        };
        let matrix = Matrix::new(
            configs.len(),
            workloads.len(),
            repetitions,
            warmup,
            order,
            seed,
        )?;
        Ok(Session {
            plan,
            plan_text,
            configs,
            workloads,
            matrix,
            seed,
            scale_down: args.scale_down.filter(|&n| n != 1),
            label: args.label.clone().unwrap_or_default(),
            target,
            finished: BTreeSet::new(),
            resumed: None,
            torn: Vec::new(),
        })
    }

    /// Rebuild the session of an interrupted run from its meta.json: same plan text,
    /// configs, workloads, order, seed and repetitions, so the matrix is the same.
    fn resume(args: &RunArgs, dir: &Path) -> Result<Session> {
        let Resumed {
            writer,
            meta,
            finished,
            torn,
        } = ResultsWriter::resume(dir)?;
        if meta.finished_unix_s.is_some() {
            bail!("{} is a finished run: nothing to resume", dir.display());
        }
        if let Some(plan_path) = &args.plan {
            let text = std::fs::read(plan_path)
                .with_context(|| format!("cannot read plan file {}", plan_path.display()))?;
            if hex(&Sha256::digest(&text)) != meta.plan_sha256 {
                bail!(
                    "{} is not the plan the interrupted run used (its copy is in {}/meta.json): \
                     leave PLAN out with --resume",
                    plan_path.display(),
                    dir.display()
                );
            }
        }
        let plan: Plan = meta
            .plan_text
            .parse()
            .with_context(|| format!("the plan saved in {}/meta.json", dir.display()))?;
        if let Some(given) = args.label.as_deref().filter(|&l| l != meta.label) {
            bail!(
                "--label {given} differs from the interrupted run's '{}': leave it out with \
                 --resume",
                meta.label
            );
        }
        if let Some(given) = &args.order {
            // Compared as orders, so `--order abab` matches a saved "interleaved".
            if given.parse::<Order>()? != meta.order {
                bail!(
                    "--order {given} differs from the interrupted run's '{}': leave it out \
                     with --resume",
                    meta.order
                );
            }
        }
        if args
            .scale_down
            .is_some_and(|n| Some(n) != meta.scale_down.or(Some(1)))
        {
            bail!(
                "--scale-down {} differs from the interrupted run's ({}): leave it out with \
                 --resume",
                args.scale_down.unwrap_or(1),
                meta.scale_down.unwrap_or(1)
            );
        }
        if args.repeat.is_some_and(|r| r != meta.repetitions)
            || args.warmup.is_some_and(|w| w != meta.warmup)
            || args.seed.is_some_and(|s| s != meta.seed)
            || !args.config.is_empty()
            || !args.workload.is_empty()
        {
            bail!(
                "--resume reuses the matrix of the interrupted run (configs, workloads, \
                 repetitions, warm-up, seed from {}/meta.json): leave those options out",
                dir.display()
            );
        }
        let target = match &args.device {
            Some(d) if d.as_os_str() != meta.target.as_str() => bail!(
                "--device {} differs from the interrupted run's target {}",
                d.display(),
                meta.target
            ),
            _ => PathBuf::from(&meta.target),
        };
        let names: Vec<String> = meta.configs.iter().map(|c| c.name.clone()).collect();
        let configs = select_configs(&plan, &names)?;
        let workloads = select_workloads(&plan, &meta.workloads)?;
        let order = meta.order;
        let matrix = Matrix::new(
            configs.len(),
            workloads.len(),
            meta.repetitions,
            meta.warmup,
            order,
            meta.seed,
        )?;
        Ok(Session {
            plan_text: meta.plan_text.clone(),
            plan,
            configs,
            workloads,
            matrix,
            seed: meta.seed,
            scale_down: meta.scale_down,
            label: meta.label.clone(),
            target,
            finished,
            resumed: Some((writer, meta)),
            torn,
        })
    }

    pub fn workload_name(&self, slot: &Slot) -> &str {
        &self.plan.workload[self.workloads[slot.workload]].name
    }

    /// Runs still to do, in order.
    pub fn pending(&self) -> impl Iterator<Item = Slot> + '_ {
        self.matrix
            .iter()
            .filter(|s| !self.finished.contains(&s.run))
    }

    /// The matrix as `--dry-run` prints it.
    pub fn matrix_text(&self) -> String {
        let mut out = format!(
            "plan {}: {} config(s) x {} workload(s) x {} repetition(s){} = {} runs, order {} (seed {})\n",
            self.plan.name,
            self.configs.len(),
            self.workloads.len(),
            self.matrix.repetitions(),
            if self.matrix.warmup() > 0 { format!(" + {} warm-up", self.matrix.warmup()) } else { String::new() },
            self.matrix.len(),
            self.matrix.order(),
            self.seed
        );
        for config in &self.configs {
            let knobs: Vec<String> = config
                .knob_values()
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            out.push_str(&format!(
                "config {}: {}\n",
                config.name,
                if knobs.is_empty() {
                    "device as found".to_string()
                } else {
                    knobs.join(" ")
                }
            ));
        }
        out.push_str(&format!(
            "{:>5}  {:<16} {:<20} {:>4}  {}\n",
            "run", "config", "workload", "rep", "note"
        ));
        for slot in &self.matrix {
            let mut note = Vec::new();
            if slot.warmup {
                note.push("warm-up");
            }
            if self.finished.contains(&slot.run) {
                note.push("done");
            }
            let line = format!(
                "{:>5}  {:<16} {:<20} {:>4}  {}",
                slot.run,
                self.configs[slot.config].name,
                self.workload_name(&slot),
                slot.repetition,
                note.join(", ")
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// meta.json of a new run (device fields filled in by the caller).
    pub fn new_meta(&self) -> Meta {
        Meta {
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            label: self.label.clone(),
            kernel_release: crate::device::capabilities::kernel_release(),
            kernel_cmdline: read_trimmed("/proc/cmdline"),
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            target: self.target.to_string_lossy().into_owned(),
            device: serde_json::Value::Null,
            device_summary: String::new(),
            plan_name: self.plan.name.clone(),
            plan_sha256: hex(&Sha256::digest(self.plan_text.as_bytes())),
            plan_text: self.plan_text.clone(),
            configs: self
                .configs
                .iter()
                .map(|c| ConfigMeta {
                    name: c.name.clone(),
                    knobs: c.knob_values().unwrap_or_default(),
                    ios: serde_json::Value::Null,
                    ext_csd_hex: String::new(),
                })
                .collect(),
            workloads: self
                .workloads
                .iter()
                .map(|&w| self.plan.workload[w].name.clone())
                .collect(),
            repetitions: self.matrix.repetitions(),
            warmup: self.matrix.warmup(),
            order: self.matrix.order(),
            seed: self.seed,
            scale_down: self.scale_down,
            started_unix_s: unix_now(),
            finished_unix_s: None,
        }
    }

    /// `--out`, or `results/<plan>[-<label>]-<UTC time>`.
    pub fn default_out_dir(&self) -> PathBuf {
        let mut name = sanitize(&self.plan.name);
        if !self.label.is_empty() {
            name.push('-');
            name.push_str(&sanitize(&self.label));
        }
        name.push('-');
        name.push_str(&utc_stamp(unix_now() as i64));
        PathBuf::from("results").join(name)
    }
}

fn select_configs(plan: &Plan, names: &[String]) -> Result<Vec<ConfigSpec>> {
    super::config::validate_configs(&plan.config, &plan.knob)?;
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

fn select_workloads(plan: &Plan, names: &[String]) -> Result<Vec<usize>> {
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

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `20261130T111428Z` for a Unix time (UTC, proleptic Gregorian).
pub fn utc_stamp(unix_s: i64) -> String {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_796_037_268), "20261130T111428Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
    }
}
