//! `mmcab calibrate DIR...`: the boot-to-boot spread of one board, measured from A/A
//! boots (the same kernel and settings booted several times, one results directory per
//! boot), stored for later comparisons of single boots on that board.
//!
//! A calibration is keyed by the device identity that `mmcab compare` checks (CID
//! manfid, oemid, name, serial and capacity; the device summary for other targets), the
//! plan's sha256 and `--scale-down`: the spread of one workload (or size) says nothing
//! about another. It holds,
//! per plan config x workload x direction x metric, the boots, the runs per boot, the
//! sd of the boot means and the pooled within-boot sd (relative to the mean), from
//! which [`CalibratedSpread`] gives the variance of one boot's mean.
//!
//! Stored as JSON in a directory the command line chooses, one file per device and plan
//! ([`file_name`]); `mmcab compare` looks there when it compares sides of one boot.

use crate::report::across::compare::{device_identity, mismatches, scale_down_mismatch};
use crate::report::across::sides::kernel_releases;
use crate::report::load::dir::ResultsDir;
use crate::report::load::results;
use crate::report::model::against;
use crate::report::model::header::CalibrationUsed;
use crate::stats::boots::{self, CalibratedSpread};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Version of the calibration file format.
pub const SCHEMA: u32 = 1;
/// Fewest A/A boots a calibration is made from (2 df for its t quantile).
pub const MIN_BOOTS: usize = 3;

/// A board's boot-to-boot spread for one plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub schema: u32,
    /// The device identity fields compare checks, name -> value.
    pub device_identity: BTreeMap<String, String>,
    pub device_summary: String,
    pub plan_name: String,
    pub plan_sha256: String,
    /// `--scale-down` of the A/A runs (None: 1): sizes change the spread too.
    pub scale_down: Option<u32>,
    /// Kernel releases of the A/A boots.
    pub kernels: Vec<String>,
    /// The results directories (boots) it was made from.
    pub boots: Vec<String>,
    pub entries: Vec<Entry>,
}

/// The spread of one plan config x workload x direction x metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub config: String,
    pub workload: String,
    pub direction: String,
    pub metric: String,
    pub unit: String,
    /// Shown in the mail text (the workload's headline metric).
    pub headline: bool,
    /// Mean of the boot means.
    pub mean: f64,
    #[serde(flatten)]
    pub spread: CalibratedSpread,
}

impl Calibration {
    /// The spread of `config` x `workload` x `direction` x `metric`, if calibrated.
    pub fn lookup(
        &self,
        config: &str,
        workload: &str,
        direction: &str,
        metric: &str,
    ) -> Option<CalibratedSpread> {
        self.entries
            .iter()
            .find(|e| {
                e.config == config
                    && e.workload == workload
                    && e.direction == direction
                    && e.metric == metric
            })
            .map(|e| e.spread)
    }

    /// Refuse a results directory of another device or plan, naming what differs.
    pub fn check_matches(&self, dir: &ResultsDir, path: &Path) -> Result<()> {
        for (field, value) in identity(dir) {
            let stored = self.device_identity.get(&field).map(String::as_str);
            if stored != Some(value.as_str()) {
                bail!(
                    "calibration {} is for another device: {field} is '{}' there, '{value}' \
                     in {}; calibrate this board with mmcab calibrate",
                    path.display(),
                    stored.unwrap_or("(not recorded)"),
                    dir.dir.display()
                );
            }
        }
        if let Some(problem) = scale_down_mismatch(
            &format!("calibration {}", path.display()),
            self.scale_down,
            &dir.dir.display().to_string(),
            dir.meta.scale_down,
        ) {
            bail!("{problem}: calibrate with the same sizes");
        }
        if self.plan_sha256 != dir.meta.plan_sha256 {
            bail!(
                "calibration {} is for plan {} (sha256 {:.12}), {} ran {} (sha256 {:.12}): \
                 calibrate with the same plan",
                path.display(),
                self.plan_name,
                self.plan_sha256,
                dir.dir.display(),
                dir.meta.plan_name,
                dir.meta.plan_sha256
            );
        }
        Ok(())
    }

    /// For a report header: where it is, and what it was made of.
    pub fn describe(&self, path: &Path) -> CalibrationUsed {
        CalibrationUsed {
            path: path.to_path_buf(),
            boots: self.boots.len(),
            kernels: self.kernels.clone(),
        }
    }
}

fn identity(dir: &ResultsDir) -> Vec<(String, String)> {
    device_identity(dir)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// `<16 hex of the device identity's sha256>-<12 hex of the plan's sha256>[-sN].json`
/// (`-sN` for `--scale-down N`).
pub fn file_name(dir: &ResultsDir) -> String {
    let key: Vec<String> = identity(dir)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let digest = Sha256::digest(key.join("\n").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let plan = &dir.meta.plan_sha256;
    let scale = match dir.meta.scale_down {
        Some(n) if n != 1 => format!("-s{n}"),
        _ => String::new(),
    };
    format!("{}-{}{scale}.json", &hex[..16], &plan[..plan.len().min(12)])
}

/// Calibration of A/A boots `dirs` (one results directory each): refused for unlike
/// devices, plans or sizes, or fewer than [`MIN_BOOTS`] boots.
pub fn build(dirs: &[ResultsDir]) -> Result<Calibration> {
    check_boots(dirs)?;
    let first = &dirs[0];
    Ok(Calibration {
        schema: SCHEMA,
        device_identity: identity(first).into_iter().collect(),
        device_summary: first.meta.device_summary.clone(),
        plan_name: first.meta.plan_name.clone(),
        plan_sha256: first.meta.plan_sha256.clone(),
        scale_down: first.meta.scale_down.filter(|&n| n != 1),
        kernels: kernel_releases(dirs),
        boots: dirs.iter().map(|d| d.dir.display().to_string()).collect(),
        entries: entries(dirs),
    })
}

/// Enough boots, all of one board, plan and sizes.
fn check_boots(dirs: &[ResultsDir]) -> Result<()> {
    if dirs.len() < MIN_BOOTS {
        bail!(
            "mmcab calibrate needs at least {MIN_BOOTS} results directories of A/A boots \
             (the same kernel and settings, one directory per boot; 5 or more give a \
             steadier estimate), got {}",
            dirs.len()
        );
    }
    let problems = mismatches(dirs);
    if !problems.is_empty() {
        bail!(
            "a calibration is of one board, one plan and one --scale-down:\n  {}",
            problems.join("\n  ")
        );
    }
    Ok(())
}

/// The spread of every plan config x workload x direction x metric measured in at
/// least [`MIN_BOOTS`] of `dirs`, in first-seen order.
fn entries(dirs: &[ResultsDir]) -> Vec<Entry> {
    type Key = (String, String, String, String);
    // Per key: (unit, headline, one group of values per boot).
    let mut groups: BTreeMap<Key, (String, bool, Vec<Vec<f64>>)> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for dir in dirs {
        let (configs, workloads) = results::configs_and_workloads(dir);
        let baseline_of = against(configs.first().map_or("", String::as_str));
        for block in results::blocks(dir, &configs, &workloads, &baseline_of) {
            let direction = block.direction_text();
            for row in block.rows {
                let key = (
                    row.config.clone(),
                    block.workload.clone(),
                    direction.to_string(),
                    block.metric.key().to_string(),
                );
                let entry = groups.entry(key.clone()).or_insert_with(|| {
                    order.push(key);
                    (block.metric.unit().to_string(), block.headline, Vec::new())
                });
                entry.2.push(row.values);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|key| {
            let (unit, headline, values) = groups.remove(&key)?;
            let spread = boots::spread(&values);
            (spread.boots >= MIN_BOOTS).then(|| Entry {
                config: key.0,
                workload: key.1,
                direction: key.2,
                metric: key.3,
                unit,
                headline,
                mean: spread.mean,
                spread: CalibratedSpread::from_spread(&spread),
            })
        })
        .collect()
}

/// Write `calibration` to `path` (directories created).
pub fn save(calibration: &Calibration, path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(calibration)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

/// Read a calibration file.
pub fn load(path: &Path) -> Result<Calibration> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read calibration {}", path.display()))?;
    let cal: Calibration = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a calibration written by mmcab calibrate",
            path.display()
        )
    })?;
    if cal.schema != SCHEMA {
        bail!(
            "{}: calibration schema {} (this mmcab reads {SCHEMA}): calibrate again",
            path.display(),
            cal.schema
        );
    }
    Ok(cal)
}

/// The calibration for `dir`'s device and plan: `explicit` (checked against `dir`), or
/// the file named after them in `store`; None when there is none.
pub fn find(
    dir: &ResultsDir,
    explicit: Option<&Path>,
    store: Option<&Path>,
) -> Result<Option<(PathBuf, Calibration)>> {
    let path = match (explicit, store) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(store)) => store.join(file_name(dir)),
        (None, None) => return Ok(None),
    };
    if explicit.is_none() && !path.is_file() {
        return Ok(None);
    }
    let cal = load(&path)?;
    cal.check_matches(dir, &path)?;
    Ok(Some((path, cal)))
}
