//! Baselines per device identity (`mmcab compare --baseline STORE`): a CI pipeline keeps
//! one directory, STORE, and every device it measures gets its own baseline there, found
//! again from the new results' device identity and plan:
//!
//! ```text
//! STORE/<device key>/<plan name>/<label>/    a results dir (runs.csv, meta.json, ...)
//! ```
//!
//! The device key joins the fields [`super::compare::device_identity`] compares (for a
//! card: CID manfid, oemid, name, serial and the capacity; else the device summary), so a
//! board with another card never meets this card's baseline. `--save-baseline` replaces
//! the stored results for that device and plan with the given ones (several dirs: several
//! boots).

use super::compare::device_identity;
use super::load::{self, ResultsDir};
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

/// Where the baseline of `dir`'s device and plan lives in `store`.
pub fn slot(store: &Path, dir: &ResultsDir) -> PathBuf {
    store.join(device_key(dir)).join(safe(&dir.meta.plan_name))
}

/// The stored results dirs for the device and plan of `new` (all of `new` must share
/// them), in name order. An error names the slot and how to fill it.
pub fn find(store: &Path, new: &[ResultsDir]) -> Result<Vec<PathBuf>> {
    let slot = common_slot(store, new)?;
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(&slot) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("runs.csv").is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    dirs.sort();
    if dirs.is_empty() {
        bail!(
            "no baseline for this device and plan in {}: expected results dirs under {} \
             (store one with: mmcab compare --baseline {} --save-baseline {})",
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

/// Store `new` as the baseline of its device and plan, replacing what was there; returns
/// the slot. Each dir is copied without its `report/` directory, named after its label
/// (or directory name).
pub fn save(store: &Path, new: &[ResultsDir]) -> Result<PathBuf> {
    let slot = common_slot(store, new)?;
    let staging = slot.with_extension("new");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("cannot create {}", staging.display()))?;
    let mut names: Vec<String> = Vec::new();
    for d in new {
        let mut name = safe(&d.display_label());
        if names.contains(&name) {
            name = format!("{name}-{}", names.len() + 1);
        }
        copy_results(&d.dir, &staging.join(&name))?;
        names.push(name);
    }
    if slot.exists() {
        std::fs::remove_dir_all(&slot)
            .with_context(|| format!("cannot replace the old baseline {}", slot.display()))?;
    }
    std::fs::rename(&staging, &slot)
        .with_context(|| format!("cannot move {} to {}", staging.display(), slot.display()))?;
    Ok(slot)
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
            if name != super::REPORT_DIR {
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
    paths.iter().map(|p| load::load(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v0.1-emmc-boot1")
    }

    #[test]
    fn key_names_the_card_and_save_then_find_round_trips() {
        let dir = load::load(&fixture()).unwrap();
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
        let slot = save(store.path(), std::slice::from_ref(&dir)).unwrap();
        let found = find(store.path(), std::slice::from_ref(&dir)).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with(&slot) && found[0].join("meta.json").is_file());
        // Saving again replaces, never accumulates.
        save(store.path(), std::slice::from_ref(&dir)).unwrap();
        assert_eq!(
            find(store.path(), std::slice::from_ref(&dir))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn another_card_has_another_slot() {
        let dir = load::load(&fixture()).unwrap();
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
