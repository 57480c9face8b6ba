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
use crate::device::DeviceInfo;
use crate::record::ConfigMeta;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Fields that identify the measured device, as (name, value) pairs: for an MMC/SD
/// card (meta.json `device`) the CID's manfid, oemid, name and serial and the
/// capacity; bus width, clock and timing may differ between boots (that is often the
/// point of comparing). For other targets (`device` null): the one-line device summary.
pub fn device_identity(dir: &ResultsDir) -> Vec<(&'static str, String)> {
    let meta = &dir.meta;
    let Some(device) = &meta.device else {
        return vec![("summary", meta.device_summary.clone())];
    };
    card_identity(device)
}

/// The fields of [`device_identity`] for a card. A part the recording mmcab could not
/// read is `null`, as meta.json has it.
fn card_identity(device: &DeviceInfo) -> Vec<(&'static str, String)> {
    fn text<T: ToString>(v: Option<T>) -> String {
        v.map_or_else(|| "null".to_string(), |v| v.to_string())
    }
    let id = device.identity.as_ref();
    vec![
        ("manfid", text(id.map(|i| i.manfid))),
        ("oemid", text(id.map(|i| i.oemid))),
        ("name", text(id.map(|i| &i.name))),
        ("serial", text(id.map(|i| i.serial))),
        ("capacity_bytes", text(device.capacity_bytes)),
    ]
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
        for row in &mut r.evidence {
            row.config = name(&row.config);
            row.run += offset;
        }
        for row in &mut r.request_sizes {
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
    merged.evidence = renamed.iter().flat_map(|d| d.evidence.clone()).collect();
    merged.request_sizes = renamed
        .iter()
        .flat_map(|d| d.request_sizes.clone())
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

    fn dir(name: &str, device: Option<DeviceInfo>, summary: &str) -> ResultsDir {
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
            evidence: Vec::new(),
            request_sizes: Vec::new(),
        }
    }

    /// The card as mmcab 0.1.0 recorded it in the guest (Linux 6.12, 4-bit bus).
    fn card() -> DeviceInfo {
        let json = crate::device::capture::fixture("info-v0.1-linux6-bus4.json");
        serde_json::from_str(&json).expect("fixture reads")
    }

    #[test]
    fn bus_width_may_differ_but_the_card_may_not() {
        let a = dir(
            "a",
            Some(card()),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 4-bit 52 MHz",
        );
        let mut eight = card();
        eight.ios.as_mut().unwrap().bus_width = 8;
        let b = dir(
            "b",
            Some(eight),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz",
        );
        assert!(mismatches(&[a.clone(), b]).is_empty());
        let mut other = card();
        other.identity.as_mut().unwrap().serial = 2;
        let c = dir(
            "c",
            Some(other),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 4-bit 52 MHz",
        );
        let m = mismatches(&[a, c]);
        assert_eq!(
            m,
            ["device serial differs: a has '3735928559', c has '2'"],
            "{m:?}"
        );
        assert_eq!(
            device_name("QEMU!! 256 MiB eMMC, 8-bit 52 MHz"),
            "QEMU!! 256 MiB eMMC"
        );
    }

    /// Every identity field takes part: each change alone is a refusal naming it.
    #[test]
    fn each_identity_field_is_checked() {
        type Edit = fn(&mut DeviceInfo);
        let edits: [(&str, Edit); 5] = [
            ("manfid", |d| d.identity.as_mut().unwrap().manfid = 0x15),
            ("oemid", |d| d.identity.as_mut().unwrap().oemid = 0x100),
            ("name", |d| {
                d.identity.as_mut().unwrap().name = "8GTF4R".into()
            }),
            ("serial", |d| d.identity.as_mut().unwrap().serial = 7),
            ("capacity_bytes", |d| d.capacity_bytes = Some(1 << 33)),
        ];
        let a = dir("a", Some(card()), "x");
        for (field, edit) in edits {
            let mut other = card();
            edit(&mut other);
            let m = mismatches(&[a.clone(), dir("b", Some(other), "x")]);
            assert_eq!(m.len(), 1, "{field}: {m:?}");
            assert!(
                m[0].starts_with(&format!("device {field} differs")),
                "{m:?}"
            );
        }
        // A card against a file or loop device: nothing of the card was recorded there.
        let m = mismatches(&[a, dir("b", None, "x")]);
        assert_eq!(m.len(), 5, "{m:?}");
        assert!(m[0].contains("'(not recorded)'"), "{m:?}");
    }

    #[test]
    fn build_refuses_another_card_unless_forced() {
        let a = dir("a", Some(card()), "x");
        let mut other = card();
        other.identity.as_mut().unwrap().serial = 2;
        let b = dir("b", Some(other), "x");
        let err = format!("{:#}", build(&[a, b], false).unwrap_err());
        assert!(
            err.contains("refusing to compare unlike with unlike")
                && err.contains("device serial differs")
                && err.contains("--force"),
            "{err}"
        );
    }

    #[test]
    fn labels_are_unique_and_name_the_output_dir() {
        let mut a = dir("/r/a", None, "x");
        a.meta.label = "v7".into();
        let mut b = dir("/r/b", None, "x");
        b.meta.label = "v7".into();
        assert_eq!(labels(&[a.clone(), b.clone()]), vec!["v7", "v7#2"]);
        assert_eq!(
            out_dir(&[a, b]),
            PathBuf::from("/r/a/report/compare-v7-vs-v7-2")
        );
    }
}
