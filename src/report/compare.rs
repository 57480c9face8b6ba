//! `mmcab compare DIR_A DIR_B ...`: results dirs from different boots or kernels, each
//! dir's label (or its directory name) standing for a config. A dir with several configs
//! contributes `label/config` for each. The first dir is the baseline.
//!
//! Refused unless every dir measured the same device (CID manfid/oemid/name/serial and
//! capacity, as recorded in meta.json) with the same plan (sha256); `--force` turns the
//! refusal into warnings printed on stderr and at the end of the report.
//! Output: `<first dir>/report/compare-<label>-vs-<label>.../`.

use super::load::ResultsDir;
use super::model::Report;
use super::results;
use crate::record::ConfigMeta;
use anyhow::{bail, Result};
use serde_json::Value;
use std::path::PathBuf;

/// Fields that identify the measured device, as (name, value) pairs.
pub fn device_identity(dir: &ResultsDir) -> Vec<(String, String)> {
    let meta = &dir.meta;
    let mut out = Vec::new();
    let mut push = |name: &str, v: &Value| {
        if !v.is_null() {
            let text = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            out.push((name.to_string(), text));
        }
    };
    let identity = &meta.device["identity"];
    for key in ["manfid", "oemid", "name", "serial"] {
        push(key, &identity[key]);
    }
    // Capacity: wherever `mmcab info` puts it (top level or under identity).
    for obj in [&meta.device, identity] {
        if let Some(map) = obj.as_object() {
            for (k, v) in map {
                if k.contains("capacity") || k == "sectors" || k == "size_bytes" {
                    push(k, v);
                }
            }
        }
    }
    if meta.device.is_null() {
        out.push(("target".into(), meta.target.clone()));
    }
    out.push(("device_summary".into(), meta.device_summary.clone()));
    out
}

/// Differences between the first dir and the others, worded for the user.
pub fn mismatches(dirs: &[ResultsDir]) -> Vec<String> {
    let mut out = Vec::new();
    let first = &dirs[0];
    let id0 = device_identity(first);
    for d in &dirs[1..] {
        let id = device_identity(d);
        for (name, v0) in &id0 {
            let other = id.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
            if other != Some(v0.as_str()) {
                out.push(format!(
                    "device {name} differs: {} has '{v0}', {} has '{}'",
                    first.dir.display(),
                    d.dir.display(),
                    other.unwrap_or("(not recorded)")
                ));
            }
        }
        if d.meta.plan_sha256 != first.meta.plan_sha256 {
            out.push(format!(
                "plan differs: {} ran {} (sha256 {:.12}), {} ran {} (sha256 {:.12})",
                first.dir.display(),
                first.meta.plan_name,
                first.meta.plan_sha256,
                d.dir.display(),
                d.meta.plan_name,
                d.meta.plan_sha256
            ));
        }
    }
    out
}

/// Unique labels, in argument order.
pub fn labels(dirs: &[ResultsDir]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        let mut l = d.display_label();
        if out.contains(&l) {
            l = format!("{l}#{}", i + 1);
        }
        out.push(l);
    }
    out
}

/// `<first dir>/report/compare-<labels>`.
pub fn out_dir(dirs: &[ResultsDir]) -> PathBuf {
    let names: Vec<String> = labels(dirs)
        .iter()
        .map(|l| super::chart::file_stem(l))
        .collect();
    dirs[0]
        .dir
        .join(super::REPORT_DIR)
        .join(format!("compare-{}", names.join("-vs-")))
}

/// Rename configs to labels and renumber runs so the dirs can be merged.
fn relabel(dirs: &[ResultsDir]) -> Vec<ResultsDir> {
    let labels = labels(dirs);
    let mut offset = 0u32;
    let mut out = Vec::new();
    for (d, label) in dirs.iter().zip(&labels) {
        let (configs, _) = results::configs_and_workloads(d);
        let name = |c: &str| {
            if configs.len() <= 1 {
                label.clone()
            } else {
                format!("{label}/{c}")
            }
        };
        let mut r = d.clone();
        for row in &mut r.runs {
            row.config = name(&row.config);
            row.run += offset;
        }
        for row in &mut r.series {
            row.config = name(&row.config);
            row.run += offset;
        }
        for row in &mut r.latency {
            row.config = name(&row.config);
            row.run += offset;
        }
        r.meta.configs = configs
            .iter()
            .map(|c| ConfigMeta {
                name: name(c),
                ..Default::default()
            })
            .collect();
        offset = r.runs.iter().map(|x| x.run).max().unwrap_or(offset);
        out.push(r);
    }
    out
}

pub fn build(dirs: &[ResultsDir], force: bool) -> Result<(Report, Vec<ResultsDir>)> {
    let problems = mismatches(dirs);
    if !problems.is_empty() && !force {
        bail!(
            "refusing to compare unlike with unlike:\n  {}\nmeasure the same device with \
             the same plan, or pass --force to compare anyway (the report will say so)",
            problems.join("\n  ")
        );
    }
    let renamed = relabel(dirs);
    let mut merged = renamed[0].clone();
    merged.runs = renamed
        .iter()
        .flat_map(|d| d.runs.iter().cloned())
        .collect();
    merged.meta.configs = renamed
        .iter()
        .flat_map(|d| d.meta.configs.clone())
        .collect();
    for d in &renamed[1..] {
        for w in &d.meta.workloads {
            if !merged.meta.workloads.contains(w) {
                merged.meta.workloads.push(w.clone());
            }
        }
    }
    let mut report = results::build(&merged, None)?;
    report.title = format!("mmcab compare: {}", dirs[0].meta.plan_name);
    let kernels: Vec<String> = dirs
        .iter()
        .zip(labels(dirs))
        .map(|(d, l)| format!("{l} = {}", d.meta.kernel_release))
        .collect();
    if let Some(k) = report.header.iter_mut().find(|(k, _)| k == "Kernel") {
        *k = ("Kernels".into(), kernels.join("; "));
    }
    report.caption = format!(
        "{} | Linux {} | {}",
        dirs[0].meta.device_summary,
        kernels.join(", "),
        report.n_text()
    );
    report.notes = problems
        .into_iter()
        .map(|p| format!("COMPARED WITH --force: {p}"))
        .collect();
    Ok((report, renamed))
}
