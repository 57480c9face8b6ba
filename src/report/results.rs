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

use super::load::ResultsDir;
use super::model::{against, rows_for, BaselineOf, Block, Metric, Report, SweepPoint};
use crate::plan::spec::Plan;
use crate::plan::sweep::SweepOver;
use crate::record::{RunRow, GROUP_JOB};
use crate::workload::result::Direction;
use anyhow::{bail, Result};
use std::collections::{BTreeMap, HashMap};

/// Reads one metric from a runs.csv row.
type Getter = fn(&RunRow) -> f64;

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

/// Measured rows (no warm-ups) that stand for a whole run x direction: the group row
/// (job "all"), or the only job's row when a run has no group row for that direction.
pub fn measured(dir: &ResultsDir) -> Vec<&RunRow> {
    let rows: Vec<&RunRow> = dir.runs.iter().filter(|r| !r.warmup).collect();
    // Per run x direction: (group rows, all rows).
    let mut counts: HashMap<(u32, &str), (usize, usize)> = HashMap::new();
    for r in &rows {
        let c = counts.entry((r.run, r.direction.as_str())).or_default();
        c.0 += usize::from(r.job == GROUP_JOB);
        c.1 += 1;
    }
    rows.into_iter()
        .filter(|r| r.job == GROUP_JOB || counts[&(r.run, r.direction.as_str())] == (0, 1))
        .collect()
}

/// Configs and workloads of a results dir, plan order first.
pub fn configs_and_workloads(dir: &ResultsDir) -> (Vec<String>, Vec<String>) {
    let plan_configs: Vec<String> = dir.meta.configs.iter().map(|c| c.name.clone()).collect();
    let rows = measured(dir);
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
    let rows = measured(dir);
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
            let sweep = match &declared {
                Some(_) => None,
                None => sweep_point(workload)
                    .filter(|(stem, _)| sweep_sizes.get(stem).copied().unwrap_or(0) >= 2),
            };
            let points: Vec<SweepPoint> = match &declared {
                Some(points) => points
                    .iter()
                    .filter(|(w, _)| w == workload)
                    .map(|(_, p)| p.clone())
                    .collect(),
                None => sweep
                    .iter()
                    .map(|(stem, bs)| SweepPoint {
                        sweep: stem.clone(),
                        over: SweepOver::Bs,
                        x: *bs as f64,
                    })
                    .collect(),
            };
            let metrics: [(Metric, bool, Getter); 4] = [
                (Metric::new("mb_per_s", "MB/s", true), !small, |r| {
                    r.mb_per_s
                }),
                (Metric::new("iops", "IOPS", true), small, |r| r.iops),
                (Metric::new("lat_mean_us", "us", false), false, |r| {
                    r.lat_mean_us
                }),
                (Metric::new("lat_p99_us", "us", false), false, |r| {
                    r.lat_p99_us
                }),
            ];
            for (metric, headline, get) in metrics {
                let samples: Vec<(String, f64, f64)> = wl
                    .iter()
                    .map(|r| (r.config.clone(), r.run as f64, get(r)))
                    .collect();
                out.push(Block {
                    workload: workload.clone(),
                    direction: direction.as_str().to_string(),
                    headline,
                    block_size_bytes: sweep.as_ref().map(|(_, bs)| *bs).or(
                        if io_size.is_finite() {
                            Some(io_size.round() as u64)
                        } else {
                            None
                        },
                    ),
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

/// (workload, point) of every sweep of a results directory; None when sweeps are to be
/// read from the workload names (format 0.1 without `[[sweep]]`).
///
/// Format 0.2.0 on (`format_version` in meta.json): the sweeps recorded in meta.json,
/// and nothing else (a plan without sweeps has none). Format 0.1: the `[[sweep]]`
/// tables of the plan text, or None when it has none.
fn declared_sweeps(dir: &ResultsDir) -> Option<Vec<(String, SweepPoint)>> {
    let point = |name: &str, over: SweepOver, workload: &str, x: u64| {
        (
            workload.to_string(),
            SweepPoint {
                sweep: name.to_string(),
                over,
                x: x as f64,
            },
        )
    };
    if dir.meta.format_version.is_some() {
        return Some(
            dir.meta
                .sweeps
                .iter()
                .flat_map(|s| {
                    s.points
                        .iter()
                        .map(|p| point(&s.name, s.over, &p.workload, p.x))
                })
                .collect(),
        );
    }
    let plan: Plan = toml::from_str(&dir.meta.plan_text).ok()?;
    let sweeps = crate::record::SweepMeta::of_plan(&plan);
    if sweeps.is_empty() {
        return None;
    }
    Some(
        sweeps
            .iter()
            .flat_map(|s| {
                s.points
                    .iter()
                    .map(|p| point(&s.name, s.over, &p.workload, p.x))
            })
            .collect(),
    )
}

fn short_sha(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
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
    let mut kernel = meta.kernel_release.clone();
    if !meta.label.is_empty() {
        kernel = format!("{kernel} (label {})", meta.label);
    }
    let mut report = Report {
        title: format!("mmcab report: {}", meta.plan_name),
        header: vec![
            ("Device".into(), device.clone()),
            ("Kernel".into(), kernel.clone()),
            (
                "Plan".into(),
                format!(
                    "{}, sha256 {}",
                    meta.plan_name,
                    short_sha(&meta.plan_sha256)
                ),
            ),
        ],
        setup: vec![
            super::setup::config_section(meta, &configs),
            super::setup::workload_section(meta, &workloads),
        ],
        caption: String::new(),
        blocks: blocks(dir, &configs, &workloads, baseline_of),
        evidence: super::evidence::build(dir, &configs, &workloads),
        configs,
        baseline,
        published: false,
        notes: Vec::new(),
        correction: None,
        tests: 0,
        boots: None,
    };
    report.header.push((
        "Runs".into(),
        format!(
            "{} configs x {} workloads, {} per config ({} warm-up dropped), order {}",
            report.configs.len(),
            workloads.len(),
            report.n_text(),
            meta.warmup,
            meta.order
        ),
    ));
    report.caption = format!("{device} | Linux {kernel} | {}", report.n_text());
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_job_without_group_row_stands_for_its_run() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let mut d = super::super::load::load(&dir).expect("fixture");
        let with_group = measured(&d).len();
        d.runs.retain(|r| r.job != GROUP_JOB);
        assert_eq!(measured(&d).len(), with_group);
        assert!(measured(&d).iter().all(|r| r.job != GROUP_JOB));
    }

    #[test]
    fn sweeps_are_named_stem_dash_size() {
        assert_eq!(sweep_point("randread-4k"), Some(("randread".into(), 4096)));
        assert_eq!(
            sweep_point("qd-sweep-64KiB"),
            Some(("qd-sweep".into(), 65536))
        );
        assert_eq!(sweep_point("seq-write"), None);
        assert_eq!(sweep_point("-4k"), None);
        assert_eq!(sweep_point("randread-4x"), None);
    }

    #[test]
    fn headline_is_iops_for_small_io_and_mb_per_s_otherwise() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let r = build(&super::super::load::load(&dir).expect("fixture"), None).expect("build");
        let headline = |w: &str| -> Vec<String> {
            r.blocks
                .iter()
                .filter(|b| b.workload == w && b.headline)
                .map(|b| b.metric.key.clone())
                .collect()
        };
        assert_eq!(headline("seq-write"), vec!["mb_per_s"]);
        assert_eq!(headline("randread-64k"), vec!["iops"]);
        let sweep: Vec<_> = r.blocks.iter().filter_map(|b| b.sweep.clone()).collect();
        assert!(sweep.iter().all(|s| s == "randread") && sweep.len() == 12);
        assert_eq!(r.baseline, "max-sectors-512k");
        assert_eq!(r.n_range(), (5, 5), "warm-ups are dropped");
    }

    /// A plan's [[sweep]] tables decide the sweeps, with x from the plan's jobs; the
    /// workload names are not parsed (no `randread` sweep from `randread-4k` then).
    #[test]
    fn declared_sweeps_replace_the_name_rule() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let mut d = super::super::load::load(&dir).expect("fixture");
        let mut plan = String::from("name = \"p\"\n");
        for (w, bs, qd) in [
            ("seq-write", "1M", 1),
            ("seq-read", "1M", 1),
            ("randread-4k", "4k", 1),
            ("randread-16k", "4k", 4),
            ("randread-64k", "4k", 16),
        ] {
            plan.push_str(&format!(
                "[[workload]]\nname = \"{w}\"\n[[workload.job]]\nname = \"j\"\nrw = \"randread\"\n\
                 bs = \"{bs}\"\nengine = \"io_uring\"\niodepth = {qd}\n"
            ));
        }
        plan.push_str(
            "[[sweep]]\nname = \"by-depth\"\nover = \"iodepth\"\n\
             workloads = [\"randread-4k\", \"randread-16k\", \"randread-64k\"]\n",
        );
        d.meta.plan_text = plan;
        let r = build(&d, None).expect("build");
        let points: Vec<(String, f64)> = r
            .blocks
            .iter()
            .filter(|b| b.metric.key == "iops")
            .flat_map(|b| b.sweeps.iter().map(|p| (b.workload.clone(), p.x)))
            .collect();
        assert_eq!(
            points,
            [
                ("randread-4k".to_string(), 1.0),
                ("randread-16k".to_string(), 4.0),
                ("randread-64k".to_string(), 16.0)
            ]
        );
        assert!(r
            .blocks
            .iter()
            .flat_map(|b| &b.sweeps)
            .all(|p| p.sweep == "by-depth" && p.over == SweepOver::Iodepth));
    }

    /// Results format 0.2.0: the sweeps meta.json records are the only ones; names
    /// that look like `<stem>-<size>` make no sweep, and neither does the plan text.
    #[test]
    fn format_0_2_draws_the_recorded_sweeps_only() {
        use crate::record::{SweepMeta, SweepMetaPoint, RESULTS_FORMAT};
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-loop");
        let mut d = super::super::load::load(&dir).expect("fixture");
        assert!(
            d.meta.format_version.is_none(),
            "the fixture is of format 0.1"
        );
        d.meta.format_version = Some(RESULTS_FORMAT.into());
        let r = build(&d, None).expect("build");
        assert!(
            r.blocks
                .iter()
                .all(|b| b.sweeps.is_empty() && b.sweep.is_none()),
            "randread-4k/16k/64k are names, not a sweep, in format 0.2.0"
        );
        d.meta.sweeps = vec![SweepMeta {
            name: "by-size".into(),
            over: SweepOver::Bs,
            points: [("randread-4k", 4096), ("randread-64k", 65536)]
                .map(|(w, x)| SweepMetaPoint {
                    workload: w.into(),
                    x,
                })
                .to_vec(),
        }];
        let r = build(&d, None).expect("build");
        let points: Vec<(&str, &str, f64)> = r
            .blocks
            .iter()
            .filter(|b| b.metric.key == "iops")
            .flat_map(|b| {
                b.sweeps
                    .iter()
                    .map(|p| (b.workload.as_str(), p.sweep.as_str(), p.x))
            })
            .collect();
        assert_eq!(
            points,
            [
                ("randread-4k", "by-size", 4096.0),
                ("randread-64k", "by-size", 65536.0)
            ]
        );
    }
}
