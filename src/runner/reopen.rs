//! The run's target, closed and opened again around knobs that rebind the card's block
//! driver (`cmd23`, `cqe`): the rebind deletes the disk and creates it again, so the old
//! handle would point at a disk that is gone. Opening it again re-checks everything
//! [`Target::open`] checks (mounts, holders, swap; the exclusive handle for writes), and
//! the ioctl engine's facts about the card ([`CardCache`]) are found again.

use crate::workload::target::{TargetKind, Writes};
use crate::workload::{CardCache, Target};
use anyhow::{bail, Context, Result};
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a block device target (a partition node, after its disk) may take to
/// reappear after the rebind.
const COME_BACK: Duration = Duration::from_secs(10);

pub struct TargetSlot {
    target: Option<Target>,
    /// What the ioctl engine found out about the open target's card.
    card: CardCache,
    path: PathBuf,
    writes: Writes,
    kind: TargetKind,
    come_back: Duration,
}

impl TargetSlot {
    /// The open target, with what the checks before the first run found out about its card.
    pub fn new(target: Target, card: CardCache) -> TargetSlot {
        TargetSlot {
            card,
            path: target.path.clone(),
            writes: Writes::from_flags(target.allow_write, target.overwrite_data),
            kind: target.kind,
            come_back: COME_BACK,
            target: Some(target),
        }
    }

    /// The open target (between a close and its reopen there is none: a failed reopen
    /// stops the run before any I/O).
    pub fn get(&self) -> Result<&Target> {
        self.target.as_ref().with_context(|| {
            format!(
                "{} is closed after a failed reopen: stopping",
                self.path.display()
            )
        })
    }

    /// The ioctl engine's facts about the open target's card.
    pub fn card(&self) -> &CardCache {
        &self.card
    }

    /// `--allow-write`, which the target was opened with.
    pub fn allow_write(&self) -> bool {
        self.writes != Writes::No
    }

    /// What shows that the open target's disk is gone ([`Target::vanished`]); None
    /// while it is closed.
    pub fn vanished(&self) -> Option<String> {
        self.target.as_ref().and_then(Target::vanished)
    }

    /// Close the target (before the block driver is rebound).
    pub fn close(&mut self) {
        self.target = None;
        self.card = CardCache::default();
    }

    /// Open it again after the rebind, checking it as at the start. A block device must
    /// come back as one: a missing node would otherwise be taken for a new file target.
    pub fn reopen(&mut self) -> Result<()> {
        if self.target.is_none() && self.kind == TargetKind::BlockDevice {
            let start = Instant::now();
            while !std::fs::metadata(&self.path).is_ok_and(|m| m.file_type().is_block_device()) {
                if start.elapsed() > self.come_back {
                    bail!(
                        "{} did not come back as a block device within {:.1} s after its block \
                         driver was rebound: stopping",
                        self.path.display(),
                        self.come_back.as_secs_f64()
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        if self.target.is_none() {
            let target = Target::open_with(&self.path, self.writes).with_context(|| {
                format!(
                    "opening {} again after its block driver was rebound",
                    self.path.display()
                )
            })?;
            self.target = Some(target);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs root: loop devices and mknod"]
    fn a_block_device_that_does_not_come_back_is_not_taken_for_a_new_file() {
        use std::os::unix::fs::MetadataExt;
        let device = crate::test_loop_device::LoopDevice::new(1 << 20);
        let node = device.dev.clone();
        // A node of our own for the disk, which the "rebind" then takes away.
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let ours = dir.path().join("disk");
        let rdev = std::fs::metadata(&node).unwrap().rdev();
        nix::sys::stat::mknod(
            &ours,
            nix::sys::stat::SFlag::S_IFBLK,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            rdev,
        )
        .unwrap();
        let mut slot = TargetSlot::new(Target::open(&ours, false).unwrap(), CardCache::default());
        slot.come_back = Duration::from_millis(200);
        slot.close();
        std::fs::remove_file(&ours).unwrap();
        let err = slot.reopen().unwrap_err().to_string();
        assert!(err.contains("did not come back as a block device"), "{err}");
        assert!(!ours.exists(), "no file was created in its place");
        assert!(slot.get().is_err());
    }
}
