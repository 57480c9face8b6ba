//! From a results directory (runs.csv + meta.json) to the report model.
//!
//! Headline rule (the metric shown in the mail text and bar charts), from the group rows
//! (job "all") of the measured runs: IOPS when the workload's mean I/O size (bytes / ops)
//! is 64 KiB or less, MB/s otherwise: small-block I/O is judged by operations, large-block
//! I/O by throughput. Both (the same change for a fixed block size) are always in
//! summary.csv, report.json and report.md, and both are charted for sweeps. Mean and p99 completion latency
//! (lower is better) go to markdown, summary.csv and report.json, not to the mail text.
//!
//! Sweeps: the plan's `[[sweep]]` tables (see [`crate::plan::sweep`]), x values from
//! the plan's jobs, as meta.json records them (results format 0.2.0,
//! [`crate::record::RESULTS_FORMAT`]); workload names are never parsed then. A results
//! directory of format 0.1 (no `format_version`) takes them from its plan text's
//! `[[sweep]]` tables, and without any keeps the rule mmcab 0.1 reported it with:
//! workloads named `<stem>-<size>` (`randread-4k`, `randread-64k`) with at least two
//! sizes form the sweep `<stem>` against block size.

use super::dir::ResultsDir;
use crate::plan::spec::Plan;
use crate::plan::sweep::SweepOver;
use crate::record::RunRow;
use crate::report::model::header::{
    Caption, Count, Header, Kernel, MadeBy, Named, PlanId, Runs, Title,
};
use crate::report::model::{
    against, rows_for, BaselineOf, Block, Metric, Report, Sample, SweepPoint,
};
use crate::workload::result::Direction;
use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// Reads one metric from a runs.csv row.
type Getter = fn(&RunRow) -> f64;

/// The metrics of a results directory's blocks, in block order, with their columns.
const MEASURED: [(Metric, Getter); 4] = [
    (Metric::MbPerS, |r| r.mb_per_s),
    (Metric::Iops, |r| r.iops),
    (Metric::LatMeanUs, |r| r.lat_mean_us),
    (Metric::LatP99Us, |r| r.lat_p99_us),
];

/// Mean I/O size at or below which IOPS is a headline metric.
pub const IOPS_MAX_IO_BYTES: f64 = 65536.0;

/// Names in first-seen order, starting from `preferred` (plan order).
fn ordered(preferred: &[String], seen: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let seen: Vec<String> = seen.collect();
    for name in preferred.iter().chain(seen.iter()) {
        if seen.contains(name) && !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

/// `randread-4k` -> ("randread", 4096).
pub fn sweep_point(workload: &str) -> Option<(String, u64)> {
    let (stem, size) = workload.rsplit_once('-')?;
    if stem.is_empty() || !size.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    crate::units::parse_size(size)
        .ok()
        .map(|b| (stem.to_string(), b))
}

/// Configs and workloads of a results dir, plan order first.
pub fn configs_and_workloads(dir: &ResultsDir) -> (Vec<String>, Vec<String>) {
    let plan_configs: Vec<String> = dir.meta.configs.iter().map(|c| c.name.clone()).collect();
    let rows = dir.measured();
    (
        ordered(&plan_configs, rows.iter().map(|r| r.config.clone())),
        ordered(&dir.meta.workloads, rows.iter().map(|r| r.workload.clone())),
    )
}

/// Pick the baseline: `--baseline`, else the first config.
pub fn pick_baseline(configs: &[String], wanted: Option<&str>) -> Result<String> {
    match wanted {
        Some(b) if configs.iter().any(|c| c == b) => Ok(b.to_string()),
        Some(b) => bail!(
            "--baseline {b}: no such config in this results dir; configs with measured runs: {}",
            configs.join(", ")
        ),
        None => configs
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no measured (non-warm-up) group rows")),
    }
}

/// All blocks of a results dir (configs already named as they should appear).
pub fn blocks(
    dir: &ResultsDir,
    configs: &[String],
    workloads: &[String],
    baseline_of: BaselineOf,
) -> Vec<Block> {
    let rows = dir.measured();
    let declared = declared_sweeps(dir);
    let sweep_sizes: BTreeMap<String, usize> = workloads
        .iter()
        .filter_map(|w| sweep_point(w))
        .fold(BTreeMap::new(), |mut m, (stem, _)| {
            *m.entry(stem).or_insert(0) += 1;
            m
        });
    let mut out = Vec::new();
    for workload in workloads {
        for direction in [Direction::Write, Direction::Read] {
            let wl: Vec<&&RunRow> = rows
                .iter()
                .filter(|r| &r.workload == workload && r.direction == direction)
                .collect();
            if wl.is_empty() {
                continue;
            }
            let bytes: u64 = wl.iter().map(|r| r.bytes).sum();
            let ops: u64 = wl.iter().map(|r| r.ops).sum();
            let io_size = if ops > 0 {
                bytes as f64 / ops as f64
            } else {
                f64::NAN
            };
            let small = io_size <= IOPS_MAX_IO_BYTES;
            let (named_bs, points) = sweep_of(declared.as_deref(), &sweep_sizes, workload);
            for (metric, get) in MEASURED {
                let samples: Vec<Sample> = wl
                    .iter()
                    .map(|r| Sample {
                        config: r.config.clone(),
                        run: r.run,
                        value: get(r),
                    })
                    .collect();
                // A metric the engine does not measure (mmc_test times a size's
                // transfers together: no latency percentiles) has no block.
                if samples.iter().all(|s| !s.value.is_finite()) {
                    continue;
                }
                out.push(Block {
                    workload: workload.clone(),
                    direction: Some(direction),
                    headline: match metric {
                        Metric::MbPerS => !small,
                        Metric::Iops => small,
                        _ => false,
                    },
                    block_size_bytes: named_bs.or(if io_size.is_finite() {
                        Some(io_size.round() as u64)
                    } else {
                        None
                    }),
                    sweep: points.first().map(|p| p.sweep.clone()),
                    sweeps: points.clone(),
                    rows: rows_for(configs, baseline_of, &metric, &samples),
                    metric,
                });
            }
        }
    }
    out
}

/// The sweep points of `workload`: the `declared` ones, or by the name rule of format
/// 0.1 (a stem with at least two sizes in `sweep_sizes`), then also the block size its
/// name gives.
fn sweep_of(
    declared: Option<&[(String, SweepPoint)]>,
    sweep_sizes: &BTreeMap<String, usize>,
    workload: &str,
) -> (Option<u64>, Vec<SweepPoint>) {
    if let Some(points) = declared {
        let mine = points
            .iter()
            .filter(|(w, _)| w == workload)
            .map(|(_, p)| p.clone())
            .collect();
        return (None, mine);
    }
    match sweep_point(workload).filter(|(stem, _)| sweep_sizes.get(stem).copied().unwrap_or(0) >= 2)
    {
        Some((stem, bs)) => (
            Some(bs),
            vec![SweepPoint {
                sweep: stem,
                over: SweepOver::Bs,
                x: bs as f64,
            }],
        ),
        None => (None, Vec::new()),
    }
}

/// (workload, point) of every sweep of a results directory; None when sweeps are to be
/// read from the workload names (format 0.1 without `[[sweep]]`).
///
/// Format 0.2.0 on (`format_version` in meta.json): the sweeps recorded in meta.json,
/// and nothing else (a plan without sweeps has none). Format 0.1: the `[[sweep]]`
/// tables of the plan text, or None when it has none.
fn declared_sweeps(dir: &ResultsDir) -> Option<Vec<(String, SweepPoint)>> {
    if dir.meta.format_version.is_some() {
        return Some(sweep_points(&dir.meta.sweeps));
    }
    let plan: Plan = toml::from_str(&dir.meta.plan_text).ok()?;
    let sweeps = crate::record::SweepMeta::of_plan(&plan);
    if sweeps.is_empty() {
        return None;
    }
    Some(sweep_points(&sweeps))
}

/// Each point of the sweeps as (workload, its place in the sweep).
fn sweep_points(sweeps: &[crate::record::SweepMeta]) -> Vec<(String, SweepPoint)> {
    sweeps
        .iter()
        .flat_map(|s| {
            s.points.iter().map(|p| {
                (
                    p.workload.clone(),
                    SweepPoint {
                        sweep: s.name.clone(),
                        over: s.over,
                        x: p.x as f64,
                    },
                )
            })
        })
        .collect()
}

/// Report for one results dir: every config against `baseline` (default: the first).
pub fn build(dir: &ResultsDir, baseline: Option<&str>) -> Result<Report> {
    let (configs, _) = configs_and_workloads(dir);
    let baseline = pick_baseline(&configs, baseline)?;
    let baseline_of = against(&baseline);
    let report = build_with(dir, &baseline, &baseline_of)?;
    Ok(report)
}

/// Report for one results dir with a baseline per config; `baseline` names A in the
/// header.
pub fn build_with(dir: &ResultsDir, baseline: &str, baseline_of: BaselineOf) -> Result<Report> {
    let (configs, workloads) = configs_and_workloads(dir);
    if configs.is_empty() {
        bail!(
            "{}: runs.csv has no measured rows (warmup = false); \
             run more repetitions than warm-ups",
            dir.dir.display()
        );
    }
    let baseline = baseline.to_string();
    let meta = &dir.meta;
    let device = if meta.device_summary.is_empty() {
        meta.target.clone()
    } else {
        meta.device_summary.clone()
    };
    let kernel = Kernel {
        releases: vec![meta.kernel_release.clone()],
        label: meta.label.clone(),
    };
    let mut report = Report {
        title: Title::Results {
            plan: meta.plan_name.clone(),
        },
        header: Header {
            device: Some(Named::One(device.clone())),
            kernel: Some(Named::One(kernel.clone())),
            plan: Some(PlanId {
                name: meta.plan_name.clone(),
                sha256: meta.plan_sha256.clone(),
            }),
            made_by: Some(Named::One(MadeBy::of(meta))),
            ..Header::default()
        },
        hosts: Vec::new(),
        setup: Some(crate::report::load::what_ran::setup(
            meta,
            &dir.evidence,
            &configs,
            &workloads,
        )),
        caption: None,
        blocks: blocks(dir, &configs, &workloads, baseline_of),
        evidence: super::evidence::build(dir, &configs, &workloads),
        mmc_test: super::mmc_test::build(dir, &configs),
        configs,
        baseline,
        published: false,
        notes: Vec::new(),
        correction: None,
        tests: 0,
        boots: None,
        probe: None,
    };
    let n: Count = report.runs_count();
    report.header.runs = Some(Runs::Configs {
        configs: report.configs.len(),
        workloads: workloads.len(),
        n: n.clone(),
        warmup: meta.warmup,
        order: meta.order.to_string(),
    });
    super::run_length::apply(&mut report, dir);
    super::host::describe_dir(&mut report, dir);
    report.caption = Some(Caption::Measured {
        device,
        kernel: Named::One(kernel),
        n,
    });
    Ok(report)
}

#[cfg(test)]
#[path = "results_tests.rs"]
mod tests;
