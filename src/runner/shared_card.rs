//! A target on a card that is in use besides: a board that boots from its eMMC, with a
//! filesystem mounted from one partition and another partition (or the whole card)
//! named as `--device`. Checked before anything runs ([`super::run_loop`]'s prepare):
//!
//! - writes to the whole card while one of its partitions is in use are refused by the
//!   target ([`crate::workload::target`]); the line here adds what can still be
//!   measured: the partitions not in use, with the block engines;
//! - knobs that re-initialise the card (`bus-width`, `speed-mode`: [`crate::knob::Stage`])
//!   would do it under the mounted filesystems, and a re-initialisation that fails (a
//!   width or mode the board cannot run) leaves them without their card until a reboot:
//!   refused without `--force`; knobs that rebind its block driver (`cmd23`, `cqe`)
//!   delete and re-create every disk of the card: refused (the switch itself would refuse
//!   them after the first run, knob/mmcblk.rs);
//! - a results directory on the card under test would write to it during the runs (the
//!   requests count in the kernel evidence, which is per host, and in the timings):
//!   refused, `--out` elsewhere.
//!
//! The card's disks are the disks whose sysfs `device` is the target's card (an eMMC's
//! main area and its boot partitions, `mmcblk0boot0`, ...) with their partitions; a
//! block device that is no MMC card (a loop device) is one disk with its partitions.

use super::session::Session;
use super::{Mode, RunOptions};
use crate::device::sysfs::{partition_dirs, read_trimmed};
use crate::knob::Stage;
use crate::workload::target::in_use::{block_device_users, devno};
use anyhow::{bail, Result};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where docs/board.md says what a board that boots from the card can measure.
pub const BOARD_DOC: &str = "docs/board.md, \"Boards that boot from the same eMMC\"";

/// One block device of the card: a disk or a partition.
#[derive(Debug, Clone)]
struct Node {
    /// Kernel name (`mmcblk0p3`), also its node's name under /dev.
    name: String,
    /// `maj:min`.
    devno: String,
    sys: PathBuf,
    partition: bool,
    /// A disk's other partitions, a partition's disk, ... : the disk it belongs to.
    disk: String,
}

/// The card behind a block device target and what uses it.
#[derive(Debug)]
pub struct SharedCard {
    target: PathBuf,
    /// The target's kernel name.
    name: String,
    /// Every disk of the card and every partition of them.
    nodes: Vec<Node>,
}

impl SharedCard {
    /// The card of `target`; None when it is not a block device.
    pub fn of(target: &Path) -> Option<SharedCard> {
        let meta = fs::metadata(target).ok()?;
        if !meta.file_type().is_block_device() {
            return None;
        }
        let sys = fs::canonicalize(format!("/sys/dev/block/{}", devno(meta.rdev()))).ok()?;
        let name = sys.file_name()?.to_string_lossy().into_owned();
        let disk_dir = if sys.join("partition").exists() {
            sys.parent()?.to_path_buf()
        } else {
            sys.clone()
        };
        Some(SharedCard {
            target: target.to_path_buf(),
            name,
            nodes: card_nodes(&disk_dir),
        })
    }

    /// What uses any block device of the card (mounts, swap, holders), one sentence per
    /// disk; the target itself and its own partitions included.
    pub fn users(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| !n.partition)
            .filter_map(|n| {
                block_device_users(&Path::new("/dev").join(&n.name), &n.sys, &n.devno)
                    .ok()
                    .flatten()
            })
            .collect()
    }

    /// Partitions of the card that nothing uses, other than the target (`/dev/...`).
    pub fn spare_partitions(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.partition && n.name != self.name)
            .filter(|n| {
                block_device_users(&Path::new("/dev").join(&n.name), &n.sys, &n.devno)
                    .is_ok_and(|u| u.is_none())
            })
            .map(|n| format!("/dev/{}", n.name))
            .collect()
    }

    /// Whether the target is a whole disk with partitions in use (and not in use
    /// itself): then the card's spare partitions are what can still be written.
    fn whole_disk_with_partitions_in_use(&self) -> Option<String> {
        let me = self.nodes.iter().find(|n| n.name == self.name)?;
        if me.partition {
            return None;
        }
        let used: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| n.partition && n.disk == me.name)
            .filter_map(|n| {
                block_device_users(&Path::new("/dev").join(&n.name), &n.sys, &n.devno)
                    .ok()
                    .flatten()
            })
            .collect();
        (!used.is_empty()).then(|| used.join("; "))
    }

    /// Why writes to the whole card are refused while a partition of it is in use, and
    /// what can still be measured (the target's refusal, with the way around).
    fn writes_refusal(&self, allow_write: bool) -> Option<String> {
        if !allow_write {
            return None;
        }
        let users = self.whole_disk_with_partitions_in_use()?;
        Some(format!(
            "refusing to write to {}: it is in use ({users}); unmount it / stop what holds \
             it, or pick another device (--allow-write does not override this); {}",
            self.target.display(),
            self.what_can_run()
        ))
    }

    /// The way around, for a card with a partition in use.
    fn what_can_run(&self) -> String {
        let spare = self.spare_partitions();
        let measure = match spare.len() {
            0 => "no partition of this card is free to measure".to_string(),
            n => format!(
                "what can run on this card is --device {} ({} nothing uses) with the sync or \
                 io_uring engine and no knob that re-initialises the card",
                spare.join(" or "),
                if n == 1 { "a partition" } else { "partitions" }
            ),
        };
        format!("{measure}; or boot from elsewhere and give the whole card to mmcab ({BOARD_DOC})")
    }

    /// Every refusal of a run on this card, in the order they are checked: writes to
    /// the whole card, the knobs `knobs` (name, [`Stage`]) that would re-initialise the
    /// card or rebind its block driver while something on it is in use (`force` lets a
    /// re-initialisation through, never a rebind), a results directory `results` (the
    /// one the run will write; it need not exist yet) on the card under test.
    pub fn refusals(
        &self,
        knobs: &[(&str, Stage)],
        allow_write: bool,
        force: bool,
        results: Option<&Path>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.writes_refusal(allow_write));
        let users = self.users();
        if !users.is_empty() {
            out.extend(refuse_knobs(&self.target, knobs, &users.join("; "), force).err());
        }
        out.extend(results.and_then(|dir| self.results_refusal(dir)));
        out
    }

    /// [`SharedCard::refusals`]' first, as the error.
    pub fn check(
        &self,
        knobs: &[(&str, Stage)],
        allow_write: bool,
        force: bool,
        results: Option<&Path>,
    ) -> Result<()> {
        match self
            .refusals(knobs, allow_write, force, results)
            .into_iter()
            .next()
        {
            Some(line) => bail!("{line}"),
            None => Ok(()),
        }
    }

    /// Why a results directory `dir` is refused: it is on the card under test.
    fn results_refusal(&self, dir: &Path) -> Option<String> {
        let on = filesystem_device(dir)?;
        let node = self.nodes.iter().find(|n| n.devno == on)?;
        Some(format!(
            "refusing to keep the results in {}: it is on /dev/{}, {} the card under test \
             ({}), so the results would be written to it during the runs and counted with \
             what is measured; give --out a directory elsewhere (a tmpfs such as /dev/shm, or \
             another disk) and copy it off afterwards",
            dir.display(),
            node.name,
            if node.name == self.name {
                "which is"
            } else {
                "on"
            },
            self.target.display()
        ))
    }
}

/// The results directory a recorded run of `session` writes (None for one pass, which
/// writes none): the resumed one, `--out`, or under `results/` in the working directory.
pub fn results_dir(session: &Session, opts: &RunOptions) -> Option<PathBuf> {
    if session.mode != Mode::Recorded {
        return None;
    }
    Some(match (&session.resumed, &opts.resume, &opts.out) {
        (Some((writer, _)), _, _) => writer.dir().to_path_buf(),
        (None, Some(dir), _) => dir.clone(),
        (None, None, Some(out)) => out.clone(),
        (None, None, None) => PathBuf::from("results"),
    })
}

/// What `--dry-run` says of a run that would stop before any I/O, each as a warning
/// line: a built-in knob this kernel or card cannot switch (resolved as `mmcab knobs`
/// does, reading only), then what would be refused on a card in use besides (by the
/// knobs' names).
pub fn dry_run_warnings(session: &Session, opts: &RunOptions) -> Vec<String> {
    let mut lines: Vec<String> = unavailable_knob(session, opts.force).into_iter().collect();
    lines.extend(shared_card_warnings(session, opts));
    lines
        .into_iter()
        .map(|line| format!("the run would stop before any I/O: {line}"))
        .collect()
}

/// The first built-in knob of the configs that is unavailable on the target's card, as
/// the run's own error says it; None for a target that is no MMC block device (the run
/// says that one) and for the knobs a plan declares (their commands are not run).
fn unavailable_knob(session: &Session, force: bool) -> Option<String> {
    // Observer::open tells an MMC block device (by its kernel name) and reads its paths.
    let observer = super::device_state::Observer::open(&session.target, false).ok()?;
    observer.env.as_ref()?;
    let mut names: Vec<&String> = Vec::new();
    for config in &session.configs {
        for name in config.knobs.keys() {
            let declared = session.plan.knob.iter().any(|d| d.name() == name);
            if !declared && crate::knob::builtin::find(name).is_some() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
        .into_iter()
        .find_map(|name| observer.knob(name, &[], force).err())
        .map(|err| format!("{err:#}"))
}

/// [`dry_run_warnings`]' lines of a card in use besides.
fn shared_card_warnings(session: &Session, opts: &RunOptions) -> Vec<String> {
    let Some(card) = SharedCard::of(&session.target) else {
        return Vec::new();
    };
    let mut stages: Vec<(&str, Stage)> = Vec::new();
    for config in &session.configs {
        for name in config.knobs.keys() {
            if !stages.iter().any(|(n, _)| n == name) {
                stages.push((name, stage_by_name(name)));
            }
        }
    }
    stages.sort_by_key(|(_, stage)| *stage);
    card.refusals(
        &stages,
        opts.allow_write,
        opts.force,
        results_dir(session, opts).as_deref(),
    )
}

/// Where a built-in knob is brought in place, by its name, for the checks that have no
/// resolved knob (`--dry-run`): the knobs that re-initialise the card
/// ([`crate::knob::Knob::stage`] of bus_width.rs, speed_mode.rs, cap_bit.rs' cqe).
pub fn stage_by_name(name: &str) -> Stage {
    match name {
        "bus-width" => Stage::BusWidth,
        "speed-mode" | "cqe" => Stage::Reinit,
        _ => Stage::AfterInit,
    }
}

/// The knobs of `names` (name, stage) that cannot be switched while `users` use the card.
fn refuse_knobs(
    target: &Path,
    names: &[(&str, Stage)],
    users: &str,
    force: bool,
) -> std::result::Result<(), String> {
    for (name, stage) in names {
        if matches!(*name, "cmd23" | "cqe") {
            return Err(format!(
                "refusing knob {name} on {}: switching it rebinds the card's block driver, \
                 which deletes and re-creates every disk of the card, and {users}; A/B {name} \
                 across boots (--label in each, then mmcab compare) or boot from elsewhere \
                 ({BOARD_DOC})",
                target.display()
            ));
        }
        if *stage != Stage::AfterInit && !force {
            return Err(format!(
                "refusing knob {name} on {}: switching it re-initialises the card under what \
                 uses it ({users}), and a re-initialisation that fails (a width or mode the \
                 board cannot run) leaves that without its card until a reboot; A/B {name} \
                 across boots (--label in each, then mmcab compare), or boot from elsewhere, \
                 or pass --force to risk it ({BOARD_DOC})",
                target.display()
            ));
        }
    }
    Ok(())
}

/// `maj:min` of the block device holding the filesystem `path` is on (or would be
/// created on: its nearest existing parent), when that is a block device.
fn filesystem_device(path: &Path) -> Option<String> {
    let mut at: PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    loop {
        if let Ok(meta) = fs::metadata(&at) {
            let dev = devno(meta.dev());
            return Path::new("/sys/dev/block")
                .join(&dev)
                .exists()
                .then_some(dev);
        }
        if !at.pop() {
            return None;
        }
    }
}

/// The disks of the card `disk_dir` belongs to, and their partitions.
fn card_nodes(disk_dir: &Path) -> Vec<Node> {
    let card = fs::canonicalize(disk_dir.join("device")).ok();
    let is_mmc = disk_dir
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("mmcblk"));
    let mut disks = vec![disk_dir.to_path_buf()];
    if let (Some(card), true) = (&card, is_mmc) {
        for entry in fs::read_dir("/sys/block").into_iter().flatten().flatten() {
            let dir = fs::canonicalize(entry.path()).unwrap_or(entry.path());
            if dir != disk_dir && fs::canonicalize(dir.join("device")).ok().as_ref() == Some(card) {
                disks.push(dir);
            }
        }
    }
    let mut nodes = Vec::new();
    for disk in disks {
        let disk_name = disk
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut dirs = vec![(disk.clone(), false)];
        dirs.extend(partition_dirs(&disk).into_iter().map(|p| (p, true)));
        for (sys, partition) in dirs {
            if let (Some(name), Ok(devno)) = (sys.file_name(), read_trimmed(sys.join("dev"))) {
                nodes.push(Node {
                    name: name.to_string_lossy().into_owned(),
                    devno,
                    sys: sys.clone(),
                    partition,
                    disk: disk_name.clone(),
                });
            }
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    const USERS: &str = "/dev/mmcblk0p2 is mounted at /";

    #[test]
    fn a_rebind_is_refused_even_with_force() {
        let target = Path::new("/dev/mmcblk0p3");
        for name in ["cmd23", "cqe"] {
            let err = refuse_knobs(target, &[(name, Stage::AfterInit)], USERS, true).unwrap_err();
            assert!(
                err.starts_with(&format!("refusing knob {name} on /dev/mmcblk0p3: "))
                    && err.contains("rebinds the card's block driver")
                    && err.contains(USERS)
                    && err.contains("across boots")
                    && err.contains(BOARD_DOC),
                "{err}"
            );
        }
    }

    #[test]
    fn a_reinitialisation_is_refused_without_force() {
        let target = Path::new("/dev/mmcblk0p3");
        for (name, stage) in [
            ("bus-width", Stage::BusWidth),
            ("speed-mode", Stage::Reinit),
        ] {
            let err = refuse_knobs(target, &[(name, stage)], USERS, false).unwrap_err();
            assert!(
                err.contains("re-initialises the card")
                    && err.contains(USERS)
                    && err.contains("--force"),
                "{err}"
            );
            refuse_knobs(target, &[(name, stage)], USERS, true).unwrap();
        }
        // Knobs set on an initialised card (read-ahead, the scheduler, a custom knob).
        refuse_knobs(target, &[("read-ahead", Stage::AfterInit)], USERS, false).unwrap();
    }

    #[test]
    fn a_regular_file_is_no_card() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert!(SharedCard::of(&file).is_none());
        assert!(SharedCard::of(&dir.path().join("missing")).is_none());
    }
}
