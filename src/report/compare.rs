//! `mmcab compare DIR_A DIR_B ...`: results dirs from different boots or kernels, each
//! dir's label (or its directory name) standing for a config. A dir with several configs
//! contributes `label/config` for each. The first dir is the baseline.
//!
//! Refused unless every dir measured the same device (CID manfid/oemid/name/serial and
//! capacity, as recorded in meta.json; see [`device_identity`]) with the same plan
//! (sha256); `--force` turns the
//! refusal into warnings printed on stderr and at the end of the report.
//! Output: `<first dir>/report/compare-<label>-vs-<label>.../`.

use super::load::ResultsDir;
use super::model::Report;
use super::results;
use crate::record::ConfigMeta;
use anyhow::{bail, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Fields that identify the measured device, as (name, value) pairs: for an MMC/SD
/// card (meta.json `device` = `mmcab info --json`) the CID fields manfid, oemid, name,
/// serial and `capacity_bytes`; bus width, clock and timing may differ between boots
/// (that is often the point of comparing). For other targets (`device` null): the
/// one-line device summary.
pub fn device_identity(dir: &ResultsDir) -> Vec<(String, String)> {
    let meta = &dir.meta;
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    };
    if meta.device.is_null() {
        return vec![("summary".into(), meta.device_summary.clone())];
    }
    let identity = &meta.device["identity"];
    let mut out: Vec<(String, String)> = ["manfid", "oemid", "name", "serial"]
        .iter()
        .map(|k| (k.to_string(), text(&identity[*k])))
        .collect();
    out.push((
        "capacity_bytes".into(),
        text(&meta.device["capacity_bytes"]),
    ));
    out
}

/// The device summary without the bus part (", 8-bit 52 MHz ..."), which may differ.
fn device_name(summary: &str) -> &str {
    summary.split(", ").next().unwrap_or(summary)
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

/// Rename configs to labels and renumber runs so the dirs can be merged; also returns
/// what each renamed config is compared with: the same config in the first dir (or the
/// first dir's first config when it has no such config).
fn relabel(dirs: &[ResultsDir]) -> (Vec<ResultsDir>, BTreeMap<String, String>) {
    let labels = labels(dirs);
    let mut offset = 0u32;
    let mut out = Vec::new();
    let mut pairs = BTreeMap::new();
    let (first_configs, _) = results::configs_and_workloads(&dirs[0]);
    let renamed = |label: &str, configs: &[String], c: &str| {
        if configs.len() <= 1 {
            label.to_string()
        } else {
            format!("{label}/{c}")
        }
    };
    for (i, (d, label)) in dirs.iter().zip(&labels).enumerate() {
        let (configs, _) = results::configs_and_workloads(d);
        let name = |c: &str| renamed(label, &configs, c);
        if i > 0 {
            for c in &configs {
                let base = if first_configs.contains(c) {
                    c
                } else {
                    &first_configs[0]
                };
                pairs.insert(name(c), renamed(&labels[0], &first_configs, base));
            }
        }
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
    (out, pairs)
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
    let (renamed, pairs) = relabel(dirs);
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
    let (first_configs, _) = results::configs_and_workloads(&renamed[0]);
    let several = first_configs.len() > 1;
    // With several configs per dir, A is the first dir as a whole.
    let baseline = if several {
        labels(dirs)[0].clone()
    } else {
        first_configs.first().cloned().unwrap_or_default()
    };
    let baseline_of = |c: &str| pairs.get(c).cloned();
    let mut report = results::build_with(&merged, &baseline, &baseline_of)?;
    if several {
        report.header.push((
            "Pairs".into(),
            format!("each config vs the same config of {baseline}"),
        ));
    }
    report.title = format!("mmcab compare: {}", dirs[0].meta.plan_name);
    let summaries: Vec<&str> = dirs
        .iter()
        .map(|d| d.meta.device_summary.as_str())
        .collect();
    if summaries.iter().any(|s| *s != summaries[0]) {
        let per_label: Vec<String> = labels(dirs)
            .iter()
            .zip(&summaries)
            .map(|(l, s)| format!("{l} = {s}"))
            .collect();
        if let Some(d) = report.header.iter_mut().find(|(k, _)| k == "Device") {
            *d = ("Devices".into(), per_label.join("; "));
        }
    }
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
        device_name(&dirs[0].meta.device_summary),
        kernels.join(", "),
        report.n_text()
    );
    report.notes = problems
        .into_iter()
        .map(|p| format!("COMPARED WITH --force: {p}"))
        .collect();
    Ok((report, renamed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Meta;
    use serde_json::json;

    fn dir(name: &str, device: Value, summary: &str) -> ResultsDir {
        ResultsDir {
            dir: PathBuf::from(name),
            meta: Meta {
                device,
                device_summary: summary.into(),
                plan_sha256: "abc".into(),
                ..Default::default()
            },
            runs: Vec::new(),
            series: Vec::new(),
            latency: Vec::new(),
        }
    }

    fn card(serial: u64) -> Value {
        json!({"capacity_bytes": 268435456u64,
               "identity": {"manfid": 170, "oemid": 0, "name": "QEMU!!", "serial": serial}})
    }

    #[test]
    fn bus_width_may_differ_but_the_card_may_not() {
        let a = dir(
            "a",
            card(1),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 4-bit 52 MHz",
        );
        let b = dir(
            "b",
            card(1),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz",
        );
        assert!(mismatches(&[a.clone(), b]).is_empty());
        let c = dir(
            "c",
            card(2),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 4-bit 52 MHz",
        );
        let m = mismatches(&[a, c]);
        assert_eq!(m.len(), 1);
        assert!(m[0].contains("serial differs"), "{m:?}");
        assert_eq!(
            device_name("QEMU!! 256 MiB eMMC, 8-bit 52 MHz"),
            "QEMU!! 256 MiB eMMC"
        );
    }

    #[test]
    fn labels_are_unique_and_name_the_output_dir() {
        let mut a = dir("/r/a", Value::Null, "x");
        a.meta.label = "v7".into();
        let mut b = dir("/r/b", Value::Null, "x");
        b.meta.label = "v7".into();
        assert_eq!(labels(&[a.clone(), b.clone()]), vec!["v7", "v7#2"]);
        assert_eq!(
            out_dir(&[a, b]),
            PathBuf::from("/r/a/report/compare-v7-vs-v7-2")
        );
    }
}
