//! `mmcab compare`: results dirs from different boots or kernels, each dir one boot.
//!
//! - `mmcab compare BASE... --vs NEW...`: two sides of one or more boots each
//!   ([`Sides::two`]), named after their common label;
//! - `mmcab compare A B [C ...]`: each dir a side of one boot ([`Sides::each_dir`]),
//!   named after its label (or its directory name).
//!
//! A side stands for a config; a dir with several configs contributes `side/config`
//! for each, compared with the same config of the first side (the baseline). Changes are
//! tested with boots as the unit ([`across`], [`crate::stats::boots`]): sides of one
//! boot each are shown but not tested, unless a calibration of the board gives the
//! boot-to-boot spread.
//!
//! Refused unless every dir measured the same device (CID manfid/oemid/name/serial and
//! capacity, as recorded in meta.json; see [`device_identity`]) with the same plan
//! (sha256); `--force` turns the
//! refusal into warnings printed on stderr and at the end of the report.
//! Output: `<first dir>/report/compare-<side>-vs-<side>.../`.

use super::across;
use super::load::ResultsDir;
use super::model::{Block, Boots, ConfigRow, Report};
use super::results;
use crate::device::DeviceInfo;
use crate::record::ConfigMeta;
use crate::stats::boots::CalibratedSpread;
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

/// The results directories of a comparison, each one boot, grouped into sides; the
/// first side is the baseline (A).
#[derive(Debug, Clone)]
pub struct Sides {
    pub dirs: Vec<ResultsDir>,
    /// Side of each directory.
    pub side_of: Vec<usize>,
    /// Name of each side: the label (or directory name) of its boots.
    pub names: Vec<String>,
}

impl Sides {
    /// `mmcab compare A B [C ...]`: each directory is a side of one boot.
    pub fn each_dir(dirs: Vec<ResultsDir>) -> Sides {
        Sides {
            names: labels(&dirs),
            side_of: (0..dirs.len()).collect(),
            dirs,
        }
    }

    /// `mmcab compare BASE... --vs NEW...`: two sides of one or more boots each, named
    /// by their common label (`base` and `new` when a side has none or both share it).
    pub fn two(base: Vec<ResultsDir>, new: Vec<ResultsDir>) -> Sides {
        let common = |dirs: &[ResultsDir]| -> Option<String> {
            let first = &dirs.first()?.meta.label;
            (!first.is_empty() && dirs.iter().all(|d| &d.meta.label == first))
                .then(|| first.clone())
        };
        let names = match (common(&base), common(&new)) {
            (Some(a), Some(b)) if a != b => vec![a, b],
            _ => vec!["base".to_string(), "new".to_string()],
        };
        let side_of = [vec![0; base.len()], vec![1; new.len()]].concat();
        Sides {
            dirs: [base, new].concat(),
            side_of,
            names,
        }
    }

    /// Directories of side `side`.
    pub fn of(&self, side: usize) -> impl Iterator<Item = &ResultsDir> {
        self.dirs
            .iter()
            .zip(&self.side_of)
            .filter(move |(_, s)| **s == side)
            .map(|(d, _)| d)
    }

    /// Whether some side has more than one boot.
    pub fn several_boots(&self) -> bool {
        (0..self.names.len()).any(|s| self.of(s).count() > 1)
    }
}

/// `<first dir>/report/compare-<side>-vs-<side>...`.
pub fn out_dir(sides: &Sides) -> PathBuf {
    let names: Vec<String> = sides
        .names
        .iter()
        .map(|l| super::chart::file_stem(l))
        .collect();
    sides.dirs[0]
        .dir
        .join(super::REPORT_DIR)
        .join(format!("compare-{}", names.join("-vs-")))
}

/// The directories merged into one, configs renamed after their side.
struct Relabelled {
    dirs: Vec<ResultsDir>,
    /// What each renamed config is compared with: the same config of the first side
    /// (or its first config when it has no such config).
    pairs: BTreeMap<String, String>,
    /// The plan's config behind each renamed config.
    original: BTreeMap<String, String>,
    /// Last run number of each directory after renumbering (runs of directory i are
    /// numbered after those of directory i - 1).
    last_run: Vec<u32>,
}

/// Rename configs to side names (`side/config` when a directory has several) and
/// renumber runs so the dirs can be merged.
fn relabel(sides: &Sides) -> Relabelled {
    let dirs = &sides.dirs;
    let mut offset = 0u32;
    let mut out = Relabelled {
        dirs: Vec::new(),
        pairs: BTreeMap::new(),
        original: BTreeMap::new(),
        last_run: Vec::new(),
    };
    let (first_configs, _) = results::configs_and_workloads(&dirs[0]);
    let renamed = |label: &str, configs: &[String], c: &str| {
        if configs.len() <= 1 {
            label.to_string()
        } else {
            format!("{label}/{c}")
        }
    };
    for (d, &side) in dirs.iter().zip(&sides.side_of) {
        let label = &sides.names[side];
        let (configs, _) = results::configs_and_workloads(d);
        let name = |c: &str| renamed(label, &configs, c);
        for c in &configs {
            out.original.insert(name(c), c.clone());
            if side > 0 {
                let base = if first_configs.contains(c) {
                    c
                } else {
                    &first_configs[0]
                };
                out.pairs
                    .insert(name(c), renamed(&sides.names[0], &first_configs, base));
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
        out.last_run.push(offset);
        out.dirs.push(r);
    }
    out
}

/// The stored boot-to-boot spread for a (plan) config x workload x direction x metric.
pub type CalibrationLookup<'a> = &'a dyn Fn(&str, &str, &str, &str) -> Option<CalibratedSpread>;

/// The comparison of `sides` (refused for unlike devices or plans unless `force`), its
/// runs tested with boots as the unit; `calibration` stands in for the boot-to-boot
/// spread of sides of one boot. Returns the report and the merged, renamed directories
/// (for the charts).
pub fn build(
    sides: &Sides,
    force: bool,
    calibration: Option<CalibrationLookup>,
) -> Result<(Report, Vec<ResultsDir>)> {
    let dirs = &sides.dirs;
    let problems = mismatches(dirs);
    if !problems.is_empty() && !force {
        bail!(
            "refusing to compare unlike with unlike:\n  {}\nmeasure the same device with \
             the same plan, or pass --force to compare anyway (the report will say so)",
            problems.join("\n  ")
        );
    }
    let relabelled = relabel(sides);
    let renamed = &relabelled.dirs;
    let mut merged = renamed[0].clone();
    merged.runs = renamed
        .iter()
        .flat_map(|d| d.runs.iter().cloned())
        .collect();
    merged.meta.configs = Vec::new();
    for c in renamed.iter().flat_map(|d| &d.meta.configs) {
        if !merged.meta.configs.iter().any(|m| m.name == c.name) {
            merged.meta.configs.push(c.clone());
        }
    }
    for d in &renamed[1..] {
        for w in &d.meta.workloads {
            if !merged.meta.workloads.contains(w) {
                merged.meta.workloads.push(w.clone());
            }
        }
    }
    let (first_configs, _) = results::configs_and_workloads(&renamed[0]);
    let several = first_configs.len() > 1;
    // With several configs per dir, A is the first side as a whole.
    let baseline = if several {
        sides.names[0].clone()
    } else {
        first_configs.first().cloned().unwrap_or_default()
    };
    let pairs = &relabelled.pairs;
    let baseline_of = |c: &str| pairs.get(c).cloned();
    let mut report = results::build_with(&merged, &baseline, &baseline_of)?;
    let last_run = &relabelled.last_run;
    let boot_of = |run: u32| last_run.iter().position(|&last| run <= last);
    let original = &relabelled.original;
    let cal_of = |block: &Block, row: &ConfigRow| {
        let lookup = calibration?;
        lookup(
            original.get(&row.config)?,
            &block.workload,
            &block.direction,
            &block.metric.key,
        )
    };
    across::apply(&mut report.blocks, &boot_of, &cal_of);
    if several {
        report.header.push((
            "Pairs".into(),
            format!("each config vs the same config of {baseline}"),
        ));
    }
    describe(&mut report, sides);
    report.notes = problems
        .into_iter()
        .map(|p| format!("COMPARED WITH --force: {p}"))
        .collect();
    Ok((report, relabelled.dirs))
}

/// Title, header and caption of a comparison: the devices, the kernels and the boots
/// of each side.
fn describe(report: &mut Report, sides: &Sides) {
    let dirs = &sides.dirs;
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
    let kernels: Vec<String> = sides
        .names
        .iter()
        .enumerate()
        .map(|(side, name)| {
            let mut releases: Vec<&str> = Vec::new();
            for d in sides.of(side) {
                if !releases.contains(&d.meta.kernel_release.as_str()) {
                    releases.push(&d.meta.kernel_release);
                }
            }
            format!("{name} = {}", releases.join(", "))
        })
        .collect();
    if let Some(k) = report.header.iter_mut().find(|(k, _)| k == "Kernel") {
        *k = ("Kernels".into(), kernels.join("; "));
    }
    let boots: Vec<(String, Vec<String>)> = sides
        .names
        .iter()
        .enumerate()
        .map(|(side, name)| {
            let dirs = sides.of(side).map(|d| {
                d.dir.file_name().map_or_else(
                    || d.dir.display().to_string(),
                    |n| n.to_string_lossy().into(),
                )
            });
            (name.clone(), dirs.collect())
        })
        .collect();
    let mut n_text = report.n_text();
    if sides.several_boots() {
        let counts: Vec<String> = boots.iter().map(|(_, b)| b.len().to_string()).collect();
        let (min, max) = runs_per_boot(report);
        let per_boot = if min == max {
            format!("{min}")
        } else {
            format!("{min}..{max}")
        };
        n_text = format!("{} boots x {per_boot} runs", counts.join("+"));
        if let Some(r) = report.header.iter_mut().find(|(k, _)| k == "Runs") {
            r.1 = format!(
                "{} sides x {} workloads, {n_text} (warm-ups dropped)",
                sides.names.len(),
                dirs[0].meta.workloads.len(),
            );
        }
        let listed: Vec<String> = boots
            .iter()
            .map(|(name, dirs)| format!("{name} = {}", dirs.join(", ")))
            .collect();
        report.header.push(("Boots".into(), listed.join("; ")));
    }
    report.caption = format!(
        "{} | Linux {} | {n_text}",
        device_name(&dirs[0].meta.device_summary),
        kernels.join(", "),
    );
    report.boots = Some(Boots {
        sides: boots,
        calibration: None,
    });
}

/// Fewest and most measured runs in one boot over all rows.
fn runs_per_boot(report: &Report) -> (usize, usize) {
    let spreads = report
        .blocks
        .iter()
        .flat_map(|b| &b.rows)
        .filter_map(|r| r.across.as_ref().map(|a| a.spread));
    let min = spreads.clone().map(|s| s.min_runs).min().unwrap_or(0);
    (min, spreads.map(|s| s.max_runs).max().unwrap_or(0))
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
        let err = format!(
            "{:#}",
            build(&Sides::each_dir(vec![a, b]), false, None).unwrap_err()
        );
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
            out_dir(&Sides::each_dir(vec![a.clone(), b.clone()])),
            PathBuf::from("/r/a/report/compare-v7-vs-v7-2")
        );
        // Two sides of boots with the same label: named base and new.
        let sides = Sides::two(vec![a.clone()], vec![b.clone()]);
        assert_eq!(sides.names, ["base", "new"]);
        let mut c = b.clone();
        c.meta.label = "v8".into();
        let sides = Sides::two(vec![a, b], vec![c]);
        assert_eq!(sides.names, ["v7", "v8"]);
        assert_eq!(sides.side_of, [0, 0, 1]);
        assert_eq!(sides.of(0).count(), 2);
        assert!(sides.several_boots());
    }
}
