//! `--resume` goes on only on the device and kernel the interrupted run measured: runs
//! of another card (CID, capacity), another block device (size, model, loop backing
//! file) or another kernel release would be mixed into one results directory without a
//! trace. `mmcab compare` checks the same card fields across directories.

use super::device_state::Observer;
use crate::device::capabilities::kernel_release;
use crate::record::Meta;
use anyhow::{bail, Result};
use std::path::Path;

/// Refuse to resume `dir` (whose meta.json is `meta`) when the target or the kernel
/// is not the one it recorded, in one line naming each difference and the fix;
/// `force` resumes anyway.
pub fn check_same_device(meta: &Meta, observer: &Observer, dir: &Path, force: bool) -> Result<()> {
    let differences = differences(meta, observer, &kernel_release());
    if differences.is_empty() || force {
        return Ok(());
    }
    bail!(
        "--resume {}: {}: resume on the device and kernel the run started on, start a new \
         results directory (--out), or pass --force to mix them anyway",
        dir.display(),
        differences.join("; ")
    )
}

/// Each difference between what meta.json recorded and what is there now, worded for
/// the user ("device serial: 0x1234 recorded, 0x5678 now").
fn differences(meta: &Meta, observer: &Observer, kernel_now: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut differs = |what: &str, recorded: &str, now: &str| {
        if recorded != now {
            out.push(format!("{what}: {recorded} recorded, {now} now"));
        }
    };
    if !meta.kernel_release.is_empty() {
        differs("kernel release", &meta.kernel_release, kernel_now);
    }
    if let Some(device) = &meta.device {
        match observer.card_identity() {
            None => differs("target", &meta.device_summary, "not an MMC card"),
            Some(Err(err)) => differs(
                "device identity",
                "a card",
                &format!("unreadable ({err:#})"),
            ),
            Some(Ok(now)) => {
                for (field, recorded) in device.identity_fields() {
                    let current = now
                        .iter()
                        .find(|(f, _)| *f == field)
                        .map(|(_, v)| v.as_str());
                    if recorded != "null" {
                        differs(
                            &format!("device {field}"),
                            &recorded,
                            current.unwrap_or("null"),
                        );
                    }
                }
            }
        }
    }
    if let Some(recorded) = &meta.block_device {
        let now = observer.block_device();
        let text = |v: Option<&String>| v.map_or("none".to_string(), |s| s.clone());
        match now {
            None => differs("target", "a block device", "not a block device"),
            Some(now) => {
                differs(
                    "device size",
                    &format!("{} bytes", recorded.size_bytes),
                    &format!("{} bytes", now.size_bytes),
                );
                differs(
                    "device model",
                    &text(recorded.model.as_ref()),
                    &text(now.model.as_ref()),
                );
                differs(
                    "loop backing file",
                    &text(recorded.backing_file.as_ref()),
                    &text(now.backing_file.as_ref()),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::BlockDeviceId;

    /// A results directory recorded on a loop device of another kernel, resumed with a
    /// file as the target: each difference is named.
    #[test]
    fn every_difference_is_named_and_force_resumes_anyway() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("target.img");
        std::fs::write(&file, b"").unwrap();
        let observer = Observer::open(&file, false).unwrap();
        let meta = Meta {
            kernel_release: "6.1.0-other".into(),
            block_device: Some(BlockDeviceId {
                size_bytes: 1 << 20,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            differences(&meta, &observer, "7.2.0"),
            [
                "kernel release: 6.1.0-other recorded, 7.2.0 now",
                "target: a block device recorded, not a block device now"
            ]
        );
        let err = check_same_device(&meta, &observer, Path::new("res"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--resume res: kernel release: 6.1.0-other recorded, ")
                && err.ends_with("or pass --force to mix them anyway")
                && !err.contains('\n'),
            "{err}"
        );
        check_same_device(&meta, &observer, Path::new("res"), true).unwrap();
        let same = Meta {
            kernel_release: "7.2.0".into(),
            ..Default::default()
        };
        assert!(differences(&same, &observer, "7.2.0").is_empty());
    }
}
