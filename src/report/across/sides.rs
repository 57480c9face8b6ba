//! The results directories of a comparison as sides of boots, and their merge into one
//! directory for the report: configs renamed after their side, runs renumbered so that
//! each directory's runs stay recognisable as one boot.

use crate::record::{ConfigMeta, EvidenceRow, LatencyRow, RequestSizeRow, RunRow, SeriesRow};
use crate::report::load::dir::ResultsDir;
use crate::report::load::results;
use std::collections::BTreeMap;
use std::path::PathBuf;

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

    /// Each side's name and the kernel releases of its boots.
    pub fn kernels(&self) -> Vec<(String, Vec<String>)> {
        self.names
            .iter()
            .enumerate()
            .map(|(side, name)| (name.clone(), kernel_releases(self.of(side))))
            .collect()
    }

    /// Each side's name and the names of its boots: the directory names, with as many
    /// parent directories as it takes to tell them apart (`boot1/r`, `boot2/r`).
    pub fn boot_names(&self) -> Vec<(String, Vec<String>)> {
        let names = short_names(&self.dirs);
        self.names
            .iter()
            .enumerate()
            .map(|(side, name)| {
                let dirs = names
                    .iter()
                    .zip(&self.side_of)
                    .filter(|(_, s)| **s == side)
                    .map(|(n, _)| n.clone());
                (name.clone(), dirs.collect())
            })
            .collect()
    }

    /// Whether some side has more than one boot.
    pub fn several_boots(&self) -> bool {
        (0..self.names.len()).any(|s| self.of(s).count() > 1)
    }
}

/// The kernel releases of `dirs`, each once, in order.
pub fn kernel_releases<'a>(dirs: impl IntoIterator<Item = &'a ResultsDir>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in dirs {
        if !out.contains(&d.meta.kernel_release) {
            out.push(d.meta.kernel_release.clone());
        }
    }
    out
}

/// The last path components of each directory, as few as tell them all apart.
fn short_names(dirs: &[ResultsDir]) -> Vec<String> {
    let parts: Vec<Vec<String>> = dirs
        .iter()
        .map(|d| {
            d.dir
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    let longest = parts.iter().map(Vec::len).max().unwrap_or(0);
    let tail = |p: &Vec<String>, k: usize| p[p.len().saturating_sub(k)..].join("/");
    for k in 1..longest {
        let names: Vec<String> = parts.iter().map(|p| tail(p, k)).collect();
        let unique = names
            .iter()
            .enumerate()
            .all(|(i, n)| !names[..i].contains(n));
        if unique {
            return names;
        }
    }
    dirs.iter().map(|d| d.dir.display().to_string()).collect()
}

/// `<first dir>/report/compare-<side>-vs-<side>...`.
pub fn out_dir(sides: &Sides) -> PathBuf {
    let names: Vec<String> = sides
        .names
        .iter()
        .map(|l| crate::report::files::file_stem(l))
        .collect();
    sides.dirs[0]
        .dir
        .join(crate::report::files::REPORT_DIR)
        .join(format!("compare-{}", names.join("-vs-")))
}

/// The directories merged into one, configs renamed after their side.
pub(super) struct Relabelled {
    pub(super) dirs: Vec<ResultsDir>,
    /// What each renamed config is compared with: the same config of the first side
    /// (or its first config when it has no such config).
    pub(super) pairs: BTreeMap<String, String>,
    /// The plan's config behind each renamed config.
    pub(super) original: BTreeMap<String, String>,
    /// The boot (directory index) of every runs.csv run number after renumbering
    /// (the runs of directory i are numbered after every row of directory i - 1).
    pub(super) boot_of_run: BTreeMap<u32, usize>,
}

/// A row of a results directory's files: the config it ran and its run number.
trait RunRowKey {
    fn key(&mut self) -> (&mut String, &mut u32);
}

macro_rules! run_row_key {
    ($($t:ty),*) => {$(
        impl RunRowKey for $t {
            fn key(&mut self) -> (&mut String, &mut u32) {
                (&mut self.config, &mut self.run)
            }
        }
    )*};
}
run_row_key!(RunRow, SeriesRow, LatencyRow, EvidenceRow, RequestSizeRow);

/// Rename the config of each row and add `offset` to its run; returns the largest run
/// number after that (`offset` when there are no rows).
fn renumber<T: RunRowKey>(rows: &mut [T], name: &dyn Fn(&str) -> String, offset: u32) -> u32 {
    let mut last = offset;
    for row in rows {
        let (config, run) = row.key();
        *config = name(config);
        *run += offset;
        last = last.max(*run);
    }
    last
}

/// Rename configs to side names (`side/config` when a directory has several) and
/// renumber runs so the dirs can be merged. Directory i's runs are numbered after the
/// largest run number of directory i - 1 in any of its files (rows of an interrupted
/// run may be in series.csv or evidence.csv without their runs.csv row).
pub(super) fn relabel(sides: &Sides) -> Relabelled {
    let dirs = &sides.dirs;
    let mut offset = 0u32;
    let mut out = Relabelled {
        dirs: Vec::new(),
        pairs: BTreeMap::new(),
        original: BTreeMap::new(),
        boot_of_run: BTreeMap::new(),
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
            // The same config of the first side, else its first one (a directory has
            // measured rows, `load` refuses one without).
            let base = match first_configs.first() {
                Some(first) if side > 0 => Some(if first_configs.contains(c) { c } else { first }),
                _ => None,
            };
            if let Some(base) = base {
                out.pairs
                    .insert(name(c), renamed(&sides.names[0], &first_configs, base));
            }
        }
        let mut r = d.clone();
        let last = [
            renumber(&mut r.runs, &name, offset),
            renumber(&mut r.series, &name, offset),
            renumber(&mut r.latency, &name, offset),
            renumber(&mut r.evidence, &name, offset),
            renumber(&mut r.request_sizes, &name, offset),
        ];
        // Renamed, with what was recorded for each (knobs, ios: the mail text shows them).
        r.meta.configs = configs
            .iter()
            .map(|c| ConfigMeta {
                name: name(c),
                ..d.meta
                    .configs
                    .iter()
                    .find(|m| &m.name == c)
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        // The runs of this boot, by their new numbers; the next boot's start after
        // every row of this one.
        let boot = out.dirs.len();
        out.boot_of_run
            .extend(r.runs.iter().map(|row| (row.run, boot)));
        offset = last.into_iter().max().unwrap_or(offset);
        out.dirs.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Meta;
    use crate::workload::result::Direction;

    fn dir(name: &str, label: &str) -> ResultsDir {
        let meta = Meta {
            label: label.into(),
            ..Default::default()
        };
        ResultsDir::for_tests(name, meta, Vec::new())
    }

    fn series(run: u32, config: &str) -> SeriesRow {
        SeriesRow {
            run,
            config: config.into(),
            workload: "w".into(),
            job: "all".into(),
            direction: Direction::Write,
            second: 0,
            mb_per_s: 1.0,
            start_s: None,
            width_s: None,
        }
    }

    /// An interrupted boot left series.csv rows of run 3 without its runs.csv row: the
    /// next boot's runs are numbered after it, so none of its rows is taken for the
    /// next boot's.
    #[test]
    fn runs_are_renumbered_after_every_row_of_the_previous_boot() {
        let mut a = dir("/r/boot1", "v7");
        a.runs = (1..=2)
            .map(|r| RunRow::for_tests(r, "c", "w", Direction::Write))
            .collect();
        a.series = (1..=3).map(|r| series(r, "c")).collect();
        let mut b = dir("/r/boot2", "v7");
        b.runs = (1..=2)
            .map(|r| RunRow::for_tests(r, "c", "w", Direction::Write))
            .collect();
        b.series = vec![series(1, "c")];
        let merged = relabel(&Sides::two(vec![a], vec![b]));
        let boots: Vec<(u32, usize)> = merged.boot_of_run.clone().into_iter().collect();
        assert_eq!(boots, [(1, 0), (2, 0), (4, 1), (5, 1)]);
        let second = &merged.dirs[1];
        let runs: Vec<u32> = second.runs.iter().map(|r| r.run).collect();
        assert_eq!(runs, [4, 5]);
        assert_eq!(
            (second.series[0].run, second.series[0].config.as_str()),
            (4, "new")
        );
        assert_eq!(merged.pairs.get("new").map(String::as_str), Some("base"));
    }

    #[test]
    fn labels_are_unique_and_name_the_output_dir() {
        let a = dir("/r/a", "v7");
        let b = dir("/r/b", "v7");
        assert_eq!(labels(&[a.clone(), b.clone()]), vec!["v7", "v7#2"]);
        assert_eq!(
            out_dir(&Sides::each_dir(vec![a.clone(), b.clone()])),
            PathBuf::from("/r/a/report/compare-v7-vs-v7-2")
        );
        let names = Sides::two(
            vec![dir("/x/boot1/r", "v7"), dir("/x/boot2/r", "v7")],
            vec![dir("/x/boot3/r", "v8")],
        )
        .boot_names();
        assert_eq!(
            names,
            [
                (
                    "v7".to_string(),
                    vec!["boot1/r".to_string(), "boot2/r".into()]
                ),
                ("v8".to_string(), vec!["boot3/r".to_string()])
            ]
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
