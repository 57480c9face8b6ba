//! The run's target, closed and opened again around knobs that rebind the card's block
//! driver (`cmd23`, `cqe`): the rebind deletes the disk and creates it again, so the old
//! handle would point at a disk that is gone. Opening it again re-checks everything
//! [`Target::open`] checks (mounts, holders, swap; the exclusive handle for writes).

use crate::workload::Target;
use anyhow::{Context, Result};
use std::path::PathBuf;

pub struct TargetSlot {
    target: Option<Target>,
    path: PathBuf,
    allow_write: bool,
}

impl TargetSlot {
    pub fn new(target: Target) -> TargetSlot {
        TargetSlot {
            path: target.path.clone(),
            allow_write: target.allow_write,
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

    /// `--allow-write`, which the target was opened with.
    pub fn allow_write(&self) -> bool {
        self.allow_write
    }

    /// What shows that the open target's disk is gone ([`Target::vanished`]); None
    /// while it is closed.
    pub fn vanished(&self) -> Option<String> {
        self.target.as_ref().and_then(Target::vanished)
    }

    /// Close the target (before the block driver is rebound).
    pub fn close(&mut self) {
        self.target = None;
    }

    /// Open it again after the rebind, checking it as at the start.
    pub fn reopen(&mut self) -> Result<()> {
        if self.target.is_none() {
            let target = Target::open(&self.path, self.allow_write).with_context(|| {
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
