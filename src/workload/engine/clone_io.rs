//! What a running job clone's engine uses besides its buffers (every engine alike): the
//! stop flags (the errors they stop with, [`Cancelled`] and [`SiblingFailed`], live with
//! the engines' other errors in [`crate::workload::io_error`]), the write side (verify
//! headers, fsync every N writes), the read-side verify check, and the read-back of
//! everything written when the job verifies.

use super::buffer::{check_block, describe_damage, fill_pattern, stamp_block};
use super::job::ClonePlan;
use crate::aligned::AlignedBuf;
use crate::workload::io_error::{Cancelled, IoFailure, IoOp, SiblingFailed};
use crate::workload::result::{Direction, VerifyReport};
use anyhow::Result;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Keep at most this many bad blocks in a verify report.
pub const MAX_BAD_REPORTED: usize = 16;

/// Stop flags checked between I/Os: the user's (Ctrl-C, SIGTERM) and "another clone failed".
pub struct Stop<'a> {
    pub user: &'a AtomicBool,
    pub sibling_failed: &'a AtomicBool,
}

impl Stop<'_> {
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.user.load(Ordering::Relaxed) {
            return Err(Cancelled.into());
        }
        if self.sibling_failed.load(Ordering::Relaxed) {
            return Err(SiblingFailed.into());
        }
        Ok(())
    }
}

/// The outcomes in order, or the error to report: the first real one, else a cancel.
pub fn first_error<T>(outcomes: Vec<Result<T>>) -> Result<Vec<T>> {
    let mut done = Vec::with_capacity(outcomes.len());
    let (mut first_error, mut cancelled) = (None, None);
    for o in outcomes {
        match o {
            Ok(v) => done.push(v),
            Err(e) if e.is::<SiblingFailed>() => {}
            Err(e) if e.is::<Cancelled>() => {
                cancelled.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error.or(cancelled) {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

/// Write-side state: verify headers, the blocks written, fsync every N writes.
pub struct Writer {
    pub verify: bool,
    pub run_id: u64,
    pub sequence: u64,
    region_start: u64,
    bs: u64,
    /// One bit per block of the region, set when verify is on and the block was written.
    pub written: Vec<u64>,
    fsync_every: u32,
    since_fsync: u32,
}

impl Writer {
    pub fn new(plan: &ClonePlan, run_id: u64) -> Writer {
        let verify = plan.job.verify && plan.job.rw.writes();
        Writer {
            verify,
            run_id,
            sequence: 0,
            region_start: plan.region_start,
            bs: plan.job.bs,
            written: if verify {
                vec![0; plan.region_blocks.div_ceil(64) as usize]
            } else {
                Vec::new()
            },
            fsync_every: plan.job.fsync,
            since_fsync: 0,
        }
    }

    /// Stamp a block about to be written at `offset` (verify only).
    #[inline]
    pub fn prepare(&mut self, block: &mut [u8], offset: u64) {
        if self.verify {
            self.sequence += 1;
            stamp_block(block, offset, self.run_id, self.sequence);
            let i = (offset - self.region_start) / self.bs;
            self.written[(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// Count a completed write; true when it is time to fsync.
    #[inline]
    pub fn written_one(&mut self) -> bool {
        if self.fsync_every == 0 {
            return false;
        }
        self.since_fsync += 1;
        if self.since_fsync >= self.fsync_every {
            self.since_fsync = 0;
            true
        } else {
            false
        }
    }
}

/// Checks blocks as read jobs with `verify = true` read them.
#[derive(Default)]
pub struct ReadChecker {
    pub enabled: bool,
    pub report: VerifyReport,
}

impl ReadChecker {
    #[inline]
    pub fn check(&mut self, block: &[u8], offset: u64, run_id: Option<u64>) {
        if !self.enabled {
            return;
        }
        self.report.blocks_checked += 1;
        if let Some(problem) = check_block(block, offset, run_id) {
            self.bad(offset, problem);
        }
    }

    /// Check a block this job wrote (`written`: the pattern it wrote, `run_id`: this
    /// run's); a bad one says which bytes differ from what was written.
    pub fn check_written(&mut self, block: &[u8], offset: u64, run_id: u64, written: &[u8]) {
        self.report.blocks_checked += 1;
        if let Some(problem) = check_block(block, offset, Some(run_id)) {
            let damage = describe_damage(block, written, offset, run_id);
            self.bad(offset, format!("{problem}; {damage}"));
        }
    }

    fn bad(&mut self, offset: u64, problem: String) {
        self.report.bad_blocks += 1;
        if self.report.first_bad.len() < MAX_BAD_REPORTED {
            self.report.first_bad.push((offset, problem));
        }
    }
}

/// Everything a clone's engine needs besides its buffers.
pub struct CloneIo<'a> {
    pub name: &'a str,
    pub file: File,
    pub bs: u64,
    pub path: &'a std::path::Path,
    pub writer: Writer,
    pub checker: ReadChecker,
    pub stop: Stop<'a>,
    pub deadline: Option<Instant>,
    /// Buffered I/O (direct = false): a pass that wraps drops the clean page cache.
    pub buffered: bool,
}

impl CloneIo<'_> {
    pub fn io_error(&self, dir: Direction, offset: u64, e: std::io::Error) -> anyhow::Error {
        IoFailure::new(dir.into(), Some(offset), self.bs, self.path, self.name)
            .errno(&e)
            .into()
    }

    pub fn short_io(&self, dir: Direction, offset: u64, done: u64) -> anyhow::Error {
        IoFailure::new(dir.into(), Some(offset), self.bs, self.path, self.name)
            .short(done)
            .into()
    }

    /// A sequential pass wrapped: a buffered job drops its file's clean page cache, as
    /// it did before starting, so the next pass reads the device again (fio's
    /// invalidate, at every pass).
    pub fn new_pass(&self) {
        if self.buffered {
            let _ = nix::fcntl::posix_fadvise(
                &self.file,
                0,
                0,
                nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
            );
        }
    }

    /// An I/O that finished at `done` ends the run: the job's runtime is over.
    #[inline]
    pub fn past_deadline(&self, done: Instant) -> bool {
        self.deadline.is_some_and(|deadline| done >= deadline)
    }

    pub fn fsync(&self) -> Result<()> {
        self.file.sync_all().map_err(|e| {
            IoFailure::new(IoOp::Fsync, None, 0, self.path, self.name)
                .errno(&e)
                .into()
        })
    }
}

/// Read back every block a write job wrote (verify = true) and check it.
pub fn verify_written(
    plan: &ClonePlan,
    file: &File,
    writer: &Writer,
    stop: &AtomicBool,
) -> Result<VerifyReport> {
    let bs = plan.job.bs;
    let mut buf = AlignedBuf::new(bs as usize, 4096);
    // What the engines wrote in every block besides the header (see buffer.rs).
    let mut written = vec![0u8; bs as usize];
    fill_pattern(&mut written, plan.job.pattern, plan.phases[0].seed);
    let mut checker = ReadChecker {
        enabled: true,
        report: VerifyReport::default(),
    };
    for (word_index, &word) in writer.written.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            if stop.load(Ordering::Relaxed) {
                return Err(Cancelled.into());
            }
            let block = word_index as u64 * 64 + bits.trailing_zeros() as u64;
            bits &= bits - 1;
            let offset = plan.region_start + block * bs;
            let n = file.read_at(buf.as_mut_slice(), offset).map_err(|e| {
                IoFailure::new(IoOp::VerifyRead, Some(offset), bs, &plan.path, &plan.name).errno(&e)
            })?;
            if n as u64 != bs {
                checker.report.blocks_checked += 1;
                checker.bad(offset, format!("short read: {n} of {bs} bytes"));
                continue;
            }
            checker.check_written(buf.as_slice(), offset, writer.run_id, &written);
        }
    }
    Ok(checker.report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::io_error::{Cancelled, IoFailure, IoOp, SiblingFailed};

    /// One clone saw the signal, another one's I/O failed at the same time: the I/O
    /// error is what the run reports; a cancel only when nothing else failed.
    #[test]
    fn a_real_error_wins_over_a_cancel_and_a_sibling_stop() {
        let io = || {
            anyhow::Error::from(
                IoFailure::new(IoOp::Read, Some(0), 512, std::path::Path::new("/d"), "r")
                    .errno(&std::io::Error::from_raw_os_error(libc::EIO)),
            )
        };
        let err = first_error::<()>(vec![
            Err(Cancelled.into()),
            Err(SiblingFailed.into()),
            Err(io()),
        ])
        .unwrap_err();
        assert!(err.is::<IoFailure>(), "{err}");
        let err =
            first_error::<()>(vec![Err(SiblingFailed.into()), Err(Cancelled.into())]).unwrap_err();
        assert!(err.is::<Cancelled>(), "{err}");
        assert_eq!(first_error(vec![Ok(1), Ok(2)]).unwrap(), [1, 2]);
    }
}
