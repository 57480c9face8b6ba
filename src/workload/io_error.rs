//! A failed I/O on the target as one typed error: the operation, where on the device, how
//! long, the device and the errno, in one line. The engines' boundary hands it to the
//! runner as [`WorkloadError::Io`] (exit status 4), beside a stop by the user's signal and
//! every other error; the runner adds what it knows about the device afterwards (it may
//! have vanished). The stop flags' own errors ([`Cancelled`], [`SiblingFailed`]) are here
//! too, so the engines' errors sit below the engines that raise them.

use crate::exit::Kind;
use std::path::{Path, PathBuf};

/// What was being done when the I/O failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
    /// fsync (a job's `fsync = N` or `end_fsync`).
    Fsync,
    /// Reading back a block a verifying write job wrote.
    VerifyRead,
    /// Opening (or creating) the job's file or device.
    Open,
    /// Writing the file of a file target before the job (the layout, not timed).
    LayOut,
    /// Handing I/Os to the kernel and waiting for one (`io_uring_enter`), with this many
    /// in flight.
    Submit {
        in_flight: usize,
    },
}

impl IoOp {
    pub fn as_str(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Fsync => "fsync",
            IoOp::VerifyRead => "verify read",
            IoOp::Open => "open",
            IoOp::LayOut => "layout write",
            IoOp::Submit { .. } => "io_uring_enter",
        }
    }
}

impl From<super::result::Direction> for IoOp {
    fn from(d: super::result::Direction) -> IoOp {
        match d {
            super::result::Direction::Read => IoOp::Read,
            super::result::Direction::Write => IoOp::Write,
        }
    }
}

/// One I/O of a job failed (an errno) or came back short (no errno).
#[derive(Debug)]
pub struct IoFailure {
    pub op: IoOp,
    /// Byte offset on the target (None for fsync).
    pub offset: Option<u64>,
    /// Bytes asked for (0 for fsync).
    pub len: u64,
    /// The target file or device as the user named it.
    pub path: PathBuf,
    pub job: String,
    /// The errno the kernel returned; None for a short transfer.
    pub errno: Option<i32>,
    /// Bytes transferred by a short I/O.
    pub short: Option<u64>,
    /// What the runner found out afterwards, e.g. that the device is gone.
    pub note: Option<String>,
}

impl IoFailure {
    pub fn new(op: IoOp, offset: Option<u64>, len: u64, path: &Path, job: &str) -> IoFailure {
        IoFailure {
            op,
            offset,
            len,
            path: path.to_path_buf(),
            job: job.to_string(),
            errno: None,
            short: None,
            note: None,
        }
    }

    pub fn errno(mut self, err: &std::io::Error) -> IoFailure {
        // Errors without an errno (none come from read/write/fsync) count as EIO.
        self.errno = Some(err.raw_os_error().unwrap_or(libc::EIO));
        self
    }

    pub fn short(mut self, done: u64) -> IoFailure {
        self.short = Some(done);
        self
    }
}

/// `EIO (I/O error)`: the symbolic name and a short description (nix's table, the
/// same whatever C library the binary is linked with).
pub fn errno_text(errno: i32) -> String {
    let e = nix::errno::Errno::from_raw(errno);
    if e == nix::errno::Errno::UnknownErrno {
        format!("errno {errno}")
    } else {
        format!("{e:?} ({})", e.desc())
    }
}

impl std::fmt::Display for IoFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.op, self.offset) {
            (IoOp::Submit { in_flight }, _) => format!(
                "{} with {in_flight} I/O(s) in flight on {}",
                self.op.as_str(),
                self.path.display()
            ),
            (IoOp::Fsync | IoOp::Open, _) | (_, None) => {
                format!("{} of {}", self.op.as_str(), self.path.display())
            }
            (op, Some(offset)) => format!(
                "{} of {} bytes at offset {offset} (sector {}) on {}",
                op.as_str(),
                self.len,
                offset / 512,
                self.path.display()
            ),
        };
        match (self.errno, self.short) {
            (Some(errno), _) => write!(f, "{what} failed: {}", errno_text(errno))?,
            (None, Some(done)) => write!(
                f,
                "{what} came back short: {done} of {} bytes (end of file or device?)",
                self.len
            )?,
            (None, None) => write!(f, "{what} failed")?,
        }
        write!(f, " [job '{}']", self.job)?;
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for IoFailure {}

/// How checking or running a workload failed, as the runner must tell them apart. The
/// checks before the I/O and the steps around the engines (laying out and opening the
/// files, the ioctl engine's card) build their variant where the failure is known; the
/// engines' clone threads and verify return `anyhow` errors, sorted once where
/// `workload::run` takes them back ([`WorkloadError::from_engine`]).
#[derive(Debug)]
pub enum WorkloadError {
    /// The user's stop flag (a signal) stopped the run: it is discarded.
    Cancelled,
    /// An I/O on the target failed: the error holds an [`IoFailure`] (the engine may have
    /// put its own words in front, e.g. what the card said).
    Io(anyhow::Error),
    /// Anything else: a refusal, an impossible job, a failure outside the target's I/O.
    Other(anyhow::Error),
}

impl WorkloadError {
    /// The exit status's kind (a cancel has none: the runner stops with the signal's).
    pub fn kind(&self) -> Option<Kind> {
        match self {
            WorkloadError::Cancelled => None,
            WorkloadError::Io(_) => Some(Kind::IoFailed),
            WorkloadError::Other(_) => Some(Kind::Error),
        }
    }

    /// The failed I/O, to add what was found out afterwards ([`IoFailure::note`]).
    pub fn io_failure_mut(&mut self) -> Option<&mut IoFailure> {
        match self {
            WorkloadError::Io(err) => err.downcast_mut::<IoFailure>(),
            _ => None,
        }
    }

    /// The error with its message (a cancel says so).
    pub fn into_error(self) -> anyhow::Error {
        match self {
            WorkloadError::Cancelled => Cancelled.into(),
            WorkloadError::Io(err) | WorkloadError::Other(err) => err,
        }
    }

    /// `context` in front of the message, the kind kept.
    pub fn context(self, context: String) -> WorkloadError {
        match self {
            WorkloadError::Cancelled => WorkloadError::Cancelled,
            WorkloadError::Io(err) => WorkloadError::Io(err.context(context)),
            WorkloadError::Other(err) => WorkloadError::Other(err.context(context)),
        }
    }

    /// An engine's error, sorted by the type it carries (its chain of causes): its stop
    /// flag's [`Cancelled`], an [`IoFailure`] under whatever words the engine put in front,
    /// or anything else. Only for what the engines' clone threads and verify return; every
    /// other step builds its variant itself.
    pub fn from_engine(err: anyhow::Error) -> WorkloadError {
        if err.is::<Cancelled>() {
            WorkloadError::Cancelled
        } else if err.is::<IoFailure>() {
            WorkloadError::Io(err)
        } else {
            WorkloadError::Other(err)
        }
    }
}

impl From<IoFailure> for WorkloadError {
    fn from(failure: IoFailure) -> WorkloadError {
        WorkloadError::Io(failure.into())
    }
}

/// The run was stopped by the cancel flag (Ctrl-C / SIGTERM). Downcast to recognise it.
#[derive(Debug)]
pub struct Cancelled;
impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cancelled (interrupted)")
    }
}
impl std::error::Error for Cancelled {}

/// A clone stopped because another one failed; the other one's error is the one reported.
#[derive(Debug)]
pub struct SiblingFailed;
impl std::fmt::Display for SiblingFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped because another job failed")
    }
}
impl std::error::Error for SiblingFailed {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_with_operation_offset_device_and_errno() {
        let err = std::io::Error::from_raw_os_error(libc::EIO);
        let f = IoFailure::new(
            IoOp::Write,
            Some(1 << 20),
            4096,
            Path::new("/dev/dm-0"),
            "w",
        )
        .errno(&err);
        assert_eq!(
            f.to_string(),
            "write of 4096 bytes at offset 1048576 (sector 2048) on /dev/dm-0 failed: \
             EIO (I/O error) [job 'w']"
        );
        let mut f = IoFailure::new(IoOp::Fsync, None, 0, Path::new("/x"), "j")
            .errno(&std::io::Error::from_raw_os_error(libc::ENOSPC));
        f.note = Some("the device is gone".into());
        assert_eq!(
            f.to_string(),
            "fsync of /x failed: ENOSPC (No space left on device) [job 'j']; the device is gone"
        );
        let f = IoFailure::new(IoOp::Read, Some(0), 512, Path::new("/f"), "r").short(100);
        assert!(f.to_string().contains("came back short: 100 of 512 bytes"));
        let f = IoFailure::new(IoOp::LayOut, Some(1 << 20), 4096, Path::new("/f"), "r")
            .errno(&std::io::Error::from_raw_os_error(libc::EFBIG));
        assert_eq!(
            f.to_string(),
            "layout write of 4096 bytes at offset 1048576 (sector 2048) on /f failed: EFBIG \
             (File too large) [job 'r']"
        );
        let f = IoFailure::new(IoOp::Open, None, 0, Path::new("/d/f"), "r")
            .errno(&std::io::Error::from_raw_os_error(libc::EISDIR));
        assert_eq!(
            f.to_string(),
            "open of /d/f failed: EISDIR (Is a directory) [job 'r']"
        );
        let f = IoFailure::new(
            IoOp::Submit { in_flight: 4 },
            None,
            0,
            Path::new("/dev/x"),
            "r",
        )
        .errno(&std::io::Error::from_raw_os_error(libc::ENOMEM));
        assert_eq!(
            f.to_string(),
            "io_uring_enter with 4 I/O(s) in flight on /dev/x failed: ENOMEM (Out of \
             memory) [job 'r']"
        );
        assert_eq!(errno_text(99999), "errno 99999");
    }
}
