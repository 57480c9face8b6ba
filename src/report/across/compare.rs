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
//! (sha256) and `--scale-down`; `--force` turns the
//! refusal into warnings printed on stderr and at the end of the report.
//! Output: `<first dir>/report/compare-<side>-vs-<side>.../`.

use super::boots;
use crate::report::across::sides::relabel;
pub use crate::report::across::sides::{labels, out_dir, Sides};
use crate::report::load::dir::ResultsDir;
use crate::report::load::results;
use crate::report::model::header::{Caption, Count, Kernel, MadeBy, Named, Runs, Title};
use crate::report::model::{Block, Boots, ConfigRow, Note, Report};
use crate::stats::boots::CalibratedSpread;
use anyhow::{bail, Result};

/// Fields that identify the measured device, as (name, value) pairs: for an MMC/SD
/// card (meta.json `device`) the CID's manfid, oemid, name and serial and the
/// capacity; bus width, clock and timing may differ between boots (that is often the
/// point of comparing). For other targets (`device` null): the one-line device summary.
pub fn device_identity(dir: &ResultsDir) -> Vec<(&'static str, String)> {
    let meta = &dir.meta;
    let Some(device) = &meta.device else {
        return vec![("summary", meta.device_summary.clone())];
    };
    device.identity_fields()
}

/// The device summary without the bus part (", 8-bit 52 MHz ..."), which may differ.
fn device_name(summary: &str) -> &str {
    summary.split(", ").next().unwrap_or(summary)
}

/// Differences between the first dir and the others (device identity, plan,
/// `--scale-down`), worded for the user.
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
        out.extend(scale_down_mismatch(
            &first.dir.display().to_string(),
            first.meta.scale_down,
            &d.dir.display().to_string(),
            d.meta.scale_down,
        ));
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

/// `--scale-down differs: ...` when `a` and `b` (what ran, as named to the user) ran
/// with different `--scale-down` (None: 1): other sizes are another measurement, like
/// another plan.
pub fn scale_down_mismatch(
    a: &str,
    a_scale: Option<u32>,
    b: &str,
    b_scale: Option<u32>,
) -> Option<String> {
    let (x, y) = (a_scale.unwrap_or(1), b_scale.unwrap_or(1));
    (x != y).then(|| format!("--scale-down differs: {a} ran {x}, {b} ran {y}"))
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
             the same plan and sizes, or pass --force to compare anyway (the report will say \
             so)",
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
    // With several configs per dir, A is the first side as a whole.
    let baseline = if several {
        sides.names[0].clone()
    } else {
        first_configs.first().cloned().unwrap_or_default()
    };
    let pairs = &relabelled.pairs;
    let baseline_of = |c: &str| pairs.get(c).cloned();
    let mut report = results::build_with(&merged, &baseline, &baseline_of)?;
    let boot_of_run = &relabelled.boot_of_run;
    let boot_of = |run: u32| boot_of_run.get(&run).copied();
    let original = &relabelled.original;
    let cal_of = |block: &Block, row: &ConfigRow| {
        let lookup = calibration?;
        lookup(
            original.get(&row.config)?,
            &block.workload,
            block.direction_text(),
            block.metric.key(),
        )
    };
    boots::apply(&mut report.blocks, &boot_of, &cal_of)?;
    if several {
        report.header.pairs = Some(baseline.clone());
    }
    describe(&mut report, sides);
    super::host::describe_sides(&mut report, sides);
    report.notes = problems.into_iter().map(Note::Forced).collect();
    Ok((report, relabelled.dirs))
}

/// Title, header and caption of a comparison: the devices, the kernels and the boots
/// of each side.
fn describe(report: &mut Report, sides: &Sides) {
    let dirs = &sides.dirs;
    report.title = Title::Compare {
        plan: dirs[0].meta.plan_name.clone(),
    };
    let summaries: Vec<&str> = dirs
        .iter()
        .map(|d| d.meta.device_summary.as_str())
        .collect();
    if summaries.iter().any(|s| *s != summaries[0]) {
        let per_label: Vec<(String, String)> = labels(dirs)
            .into_iter()
            .zip(summaries.iter().map(|s| s.to_string()))
            .collect();
        if report.header.device.is_some() {
            report.header.device = Some(Named::Each(per_label));
        }
    }
    // Results made by different mmcabs or command lines: each directory's.
    let made_by: Vec<MadeBy> = dirs.iter().map(|d| MadeBy::of(&d.meta)).collect();
    if made_by.iter().any(|m| *m != made_by[0]) && report.header.made_by.is_some() {
        report.header.made_by = Some(Named::Each(labels(dirs).into_iter().zip(made_by).collect()));
    }
    let kernels: Vec<(String, Kernel)> = sides
        .kernels()
        .into_iter()
        .map(|(name, releases)| {
            let label = String::new();
            (name, Kernel { releases, label })
        })
        .collect();
    if report.header.kernel.is_some() {
        report.header.kernel = Some(Named::Each(kernels.clone()));
    }
    let boots = sides.boot_names();
    let mut n = report.runs_count();
    if sides.several_boots() {
        let (min_runs, max_runs) = runs_per_boot(report);
        n = Count::Boots {
            per_side: boots.iter().map(|(_, b)| b.len()).collect(),
            min_runs,
            max_runs,
        };
        if report.header.runs.is_some() {
            report.header.runs = Some(Runs::Sides {
                sides: sides.names.len(),
                workloads: dirs[0].meta.workloads.len(),
                n: n.clone(),
            });
        }
        report.header.boots = Some(boots.clone());
    }
    report.caption = Some(Caption::Measured {
        device: device_name(&dirs[0].meta.device_summary).to_string(),
        kernel: Named::Each(kernels),
        n,
    });
    report.boots = Some(Boots {
        sides: boots,
        calibration: None,
    });
}

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
#[path = "compare_boots_tests.rs"]
mod boots_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceInfo;
    use crate::record::Meta;

    fn dir(name: &str, device: Option<DeviceInfo>, summary: &str) -> ResultsDir {
        let meta = Meta {
            device,
            device_summary: summary.into(),
            plan_sha256: "abc".into(),
            ..Default::default()
        };
        ResultsDir::for_tests(name, meta, Vec::new())
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

    /// Other sizes are another measurement: refused like another plan, with the same
    /// words calibrate uses.
    #[test]
    fn another_scale_down_is_a_mismatch() {
        let a = dir("a", Some(card()), "x");
        let mut b = dir("b", Some(card()), "x");
        b.meta.scale_down = Some(4);
        assert_eq!(
            mismatches(&[a.clone(), b.clone()]),
            ["--scale-down differs: a ran 1, b ran 4"]
        );
        // --scale-down 1 is what no --scale-down means.
        let mut one = a.clone();
        one.meta.scale_down = Some(1);
        assert!(mismatches(&[a.clone(), one]).is_empty());
        let err = format!(
            "{:#}",
            build(&Sides::each_dir(vec![a, b]), false, None).unwrap_err()
        );
        assert!(
            err.contains("--scale-down differs") && err.contains("--force"),
            "{err}"
        );
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
}
