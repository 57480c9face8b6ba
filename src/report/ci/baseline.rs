//! Baselines per device identity (`mmcab compare --baseline STORE`): a CI pipeline keeps
//! one directory, STORE, and every device it measures gets its own baseline there, found
//! again from the new results' device identity, plan and scale:
//!
//! ```text
//! STORE/<device key>/<plan name>/plan-<sha256, 12 hex>_scale-down-<N>/<seq>_<label>/
//! ```
//!
//! The device key joins the fields [`crate::report::across::compare::device_identity`] compares (for a
//! card: CID manfid, oemid, name, serial and the capacity; else the device summary), so a
//! board with another card never meets this card's baseline. The plan's sha256 and
//! `--scale-down` are part of the key because compare refuses unlike plans and sizes
//! change the numbers: an edited plan or another scale starts a new baseline instead of
//! failing against the old one. Each stored boot is a results dir named by a sequence
//! number (the order it was saved in) and its label.
//!
//! `--save-baseline` replaces the stored boots for the key with the given ones (several
//! dirs: several boots); `--save-baseline --keep N` adds them and keeps the last N saved,
//! for pipelines that measure one boot per job (LAVA) and so build a baseline across
//! jobs. A boot already stored (the same meta.json and runs.csv) is not added twice.

use crate::report::across::compare::device_identity;
use crate::report::load::dir::{self, ResultsDir};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The directory name of a device identity: `manfid-0xaa_oemid-0x100_...`, limited to
/// `A-Za-z0-9._-`.
pub fn device_key(dir: &ResultsDir) -> String {
    let parts: Vec<String> = device_identity(dir)
        .into_iter()
        .map(|(name, value)| format!("{name}-{value}"))
        .collect();
    safe(&parts.join("_"))
}

fn safe(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    // Leading dots would hide the directory (or name `..`).
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "unnamed".to_string()
    } else {
        s
    }
}

/// Where the baseline of `dir`'s device, plan and scale lives in `store`.
pub fn slot(store: &Path, dir: &ResultsDir) -> PathBuf {
    let sha: String = dir.meta.plan_sha256.chars().take(12).collect();
    store
        .join(device_key(dir))
        .join(safe(&dir.meta.plan_name))
        .join(safe(&format!(
            "plan-{sha}_scale-down-{}",
            dir.meta.scale_down.unwrap_or(1)
        )))
}

/// The stored boots of a slot (dirs with a runs.csv), oldest saved first: by sequence
/// number, then name (a name without a number sorts first).
fn stored(slot: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(slot) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("runs.csv").is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    dirs.sort_by_key(|p| (sequence(p), p.clone()));
    dirs
}

/// The sequence number a stored boot's name starts with (`0003_label`), 0 without one.
fn sequence(path: &Path) -> u64 {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split_once('_'))
        .and_then(|(seq, _)| seq.parse().ok())
        .unwrap_or(0)
}

/// The stored results dirs for the device, plan and scale of `new` (all of `new` must
/// share them), oldest saved first. An error names the slot and how to fill it, and
/// the baselines stored for another version of the plan or another scale, if any.
pub fn find(store: &Path, new: &[ResultsDir]) -> Result<Vec<PathBuf>> {
    let slot = common_slot(store, new)?;
    let dirs = stored(&slot);
    if dirs.is_empty() {
        let others: Vec<String> = slot
            .parent()
            .and_then(|plan| std::fs::read_dir(plan).ok())
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir() && !stored(p).is_empty())
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let hint = if others.is_empty() {
            String::new()
        } else {
            format!(
                "; this device has baselines of this plan name for another plan file or \
                 --scale-down only ({})",
                others.join(", ")
            )
        };
        bail!(
            "no baseline for this device and plan in {}: expected results dirs under {} \
             (store one with: mmcab compare --baseline {} --save-baseline {}){hint}",
            store.display(),
            slot.display(),
            store.display(),
            new.iter()
                .map(|d| d.dir.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    Ok(dirs)
}

fn common_slot(store: &Path, new: &[ResultsDir]) -> Result<PathBuf> {
    let Some(first) = new.first() else {
        bail!("no results directory given");
    };
    let slot = slot(store, first);
    for d in &new[1..] {
        let other = self::slot(store, d);
        if other != slot {
            bail!(
                "{} and {} measured different devices or plans ({} vs {}): \
                 a baseline is per device and plan",
                first.dir.display(),
                d.dir.display(),
                slot.display(),
                other.display()
            );
        }
    }
    Ok(slot)
}

/// What [`save`] did: the slot and the names of the boots it holds now, added, already
/// there (the same meta.json and runs.csv: not added again) and dropped (beyond `--keep`, or replaced).
#[derive(Debug, Clone, Default)]
pub struct Saved {
    pub slot: PathBuf,
    pub boots: Vec<String>,
    pub added: Vec<String>,
    pub already: Vec<String>,
    pub dropped: Vec<String>,
}

/// Store `new` as the baseline of its device, plan and scale. `keep` None: replace what
/// was there; Some(n): add to it and keep the last `n` boots saved. Each dir is copied
/// without its `report/` directory.
pub fn save(store: &Path, new: &[ResultsDir], keep: Option<usize>) -> Result<Saved> {
    let slot = common_slot(store, new)?;
    if let Some(n) = keep.filter(|&n| n < new.len()) {
        bail!(
            "--keep {n} is fewer than the {} directories given: keep at least as many boots \
             as one save stores",
            new.len()
        );
    }
    let old = stored(&slot);
    let name_of = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let mut saved = Saved {
        slot: slot.clone(),
        ..Default::default()
    };
    // Copy the new boots next to the slot first, so a failed copy leaves it as it was.
    let staging = slot.with_file_name(format!("{}.incoming", name_of(&slot)));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("cannot create {}", staging.display()))?;
    let kept_old: &[PathBuf] = if keep.is_some() { &old } else { &[] };
    let mut next = kept_old.iter().map(|p| sequence(p)).max().unwrap_or(0) + 1;
    for d in new {
        if let Some(same) = kept_old.iter().find(|p| same_boot(&d.dir, p)) {
            saved.already.push(name_of(same));
            continue;
        }
        let name = format!("{next:04}_{}", safe(&d.display_label()));
        next += 1;
        copy_results(&d.dir, &staging.join(&name))?;
        saved.added.push(name);
    }
    let drop: Vec<PathBuf> = match keep {
        None => old,
        Some(n) => {
            // The oldest go first (n >= the new ones: they all stay).
            let excess = (old.len() + saved.added.len()).saturating_sub(n);
            old.into_iter().take(excess).collect()
        }
    };
    for d in &drop {
        std::fs::remove_dir_all(d)
            .with_context(|| format!("cannot remove the old baseline boot {}", d.display()))?;
        saved.dropped.push(name_of(d));
    }
    std::fs::create_dir_all(&slot).with_context(|| format!("cannot create {}", slot.display()))?;
    for name in &saved.added {
        let (from, to) = (staging.join(name), slot.join(name));
        std::fs::rename(&from, &to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
    }
    let _ = std::fs::remove_dir_all(&staging);
    saved.boots = stored(&slot).iter().map(|p| name_of(p)).collect();
    Ok(saved)
}

/// Are `a` and `b` copies of one boot (the same meta.json and runs.csv)?
fn same_boot(a: &Path, b: &Path) -> bool {
    ["meta.json", "runs.csv"].iter().all(|f| {
        match (std::fs::read(a.join(f)), std::fs::read(b.join(f))) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    })
}

/// Copy a results dir's files (and subdirectories other than `report/`).
fn copy_results(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?
    {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != crate::report::files::REPORT_DIR {
                copy_results(&path, &to.join(&name))?;
            }
        } else {
            std::fs::copy(&path, to.join(&name))
                .with_context(|| format!("cannot copy {}", path.display()))?;
        }
    }
    Ok(())
}

/// Load the results dirs of `paths` (for [`find`] and [`save`]).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<ResultsDir>> {
    paths.iter().map(|p| dir::load(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v0.1-emmc-boot1")
    }

    #[test]
    fn key_names_the_card_and_save_then_find_round_trips() {
        let dir = dir::load(&fixture()).unwrap();
        let key = device_key(&dir);
        assert!(key.starts_with("manfid-170_oemid-"), "{key}");
        assert!(
            key.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{key}"
        );
        let store = tempfile::tempdir().unwrap();
        let err = find(store.path(), std::slice::from_ref(&dir))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no baseline") && err.contains("--save-baseline"),
            "{err}"
        );
        let slot = save(store.path(), std::slice::from_ref(&dir), None)
            .unwrap()
            .slot;
        let found = find(store.path(), std::slice::from_ref(&dir)).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with(&slot) && found[0].join("meta.json").is_file());
        // Saving again replaces, never accumulates.
        save(store.path(), std::slice::from_ref(&dir), None).unwrap();
        assert_eq!(
            find(store.path(), std::slice::from_ref(&dir))
                .unwrap()
                .len(),
            1
        );
    }

    /// `dir` as another boot: another start time (so another meta.json).
    fn another_boot(dir: &ResultsDir, tmp: &Path, k: u64) -> ResultsDir {
        let to = tmp.join(format!("boot-{k}"));
        copy_results(&dir.dir, &to).unwrap();
        let meta = to.join("meta.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
        v["started_unix_s"] = (1_700_000_000 + k).into();
        v["label"] = format!("boot-{k}").into();
        std::fs::write(&meta, v.to_string()).unwrap();
        dir::load(&to).unwrap()
    }

    #[test]
    fn keep_adds_boots_and_drops_the_oldest() {
        let dir = dir::load(&fixture()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        let boots: Vec<ResultsDir> = (1..=4).map(|k| another_boot(&dir, tmp.path(), k)).collect();
        let names = |found: Vec<PathBuf>| -> Vec<String> {
            found
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        for b in &boots[..3] {
            save(&store, std::slice::from_ref(b), Some(3)).unwrap();
        }
        let found = find(&store, std::slice::from_ref(&boots[0])).unwrap();
        assert_eq!(names(found), ["0001_boot-1", "0002_boot-2", "0003_boot-3"]);
        // A fourth boot: the first saved goes.
        let saved = save(&store, std::slice::from_ref(&boots[3]), Some(3)).unwrap();
        assert_eq!(saved.added, ["0004_boot-4"]);
        assert_eq!(saved.dropped, ["0001_boot-1"]);
        assert_eq!(saved.boots, ["0002_boot-2", "0003_boot-3", "0004_boot-4"]);
        // The same boot again is not a new boot.
        let saved = save(&store, std::slice::from_ref(&boots[3]), Some(3)).unwrap();
        assert_eq!((saved.added.len(), saved.already.len()), (0, 1));
        assert_eq!(saved.boots.len(), 3);
        // Without --keep the given boots replace the stored ones.
        let saved = save(&store, &boots[..2], None).unwrap();
        assert_eq!(saved.boots, ["0001_boot-1", "0002_boot-2"]);
        assert_eq!(saved.dropped.len(), 3);
        assert!(!store
            .read_dir()
            .unwrap()
            .flatten()
            .any(|e| e.path().to_string_lossy().ends_with(".incoming")));
        let err = save(&store, &boots, Some(2)).unwrap_err().to_string();
        assert!(err.contains("--keep 2 is fewer than the 4"), "{err}");
    }

    #[test]
    fn another_plan_version_or_scale_has_another_slot() {
        let dir = dir::load(&fixture()).unwrap();
        let store = tempfile::tempdir().unwrap();
        save(store.path(), std::slice::from_ref(&dir), None).unwrap();
        let mut edited = dir.clone();
        edited.meta.plan_sha256 = "0123456789abcdef".into();
        let mut scaled = dir.clone();
        scaled.meta.scale_down = Some(dir.meta.scale_down.unwrap_or(1) * 2);
        for other in [&edited, &scaled] {
            assert_ne!(slot(store.path(), &dir), slot(store.path(), other));
            assert_eq!(
                slot(store.path(), &dir).parent(),
                slot(store.path(), other).parent(),
                "same device and plan name"
            );
            let err = find(store.path(), std::slice::from_ref(other))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("no baseline") && err.contains("another plan file or --scale-down"),
                "{err}"
            );
        }
        assert!(slot(store.path(), &scaled)
            .to_string_lossy()
            .ends_with(&format!(
                "_scale-down-{}",
                dir.meta.scale_down.unwrap_or(1) * 2
            )));
        assert!(slot(store.path(), &edited)
            .to_string_lossy()
            .ends_with(&format!(
                "plan-0123456789ab_scale-down-{}",
                dir.meta.scale_down.unwrap_or(1)
            )));
    }

    #[test]
    fn another_card_has_another_slot() {
        let dir = dir::load(&fixture()).unwrap();
        let mut other = dir.clone();
        if let Some(id) = other.meta.device.as_mut().and_then(|d| d.identity.as_mut()) {
            id.serial ^= 1;
        }
        let store = Path::new("/store");
        assert_ne!(slot(store, &dir), slot(store, &other));
        let err = find(store, &[dir, other]).unwrap_err().to_string();
        assert!(err.contains("different devices or plans"), "{err}");
    }
}
