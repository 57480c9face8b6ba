//! How a run failed, by the kind that picks the exit status ([`crate::exit`]): the
//! runner's boundary returns a [`RunError`], whose variant comes from a type: the
//! workload's [`WorkloadError`] (its variant built where the failure is known, but for
//! the engines' clone threads and verify, whose `anyhow` errors are sorted once, where
//! `workload::run_workload` takes them back, by the types they carry: [`IoFailure`],
//! `Cancelled`), the knob guard's [`KnobsNotRestored`], and every other error of the
//! runner as [`RunError::Failed`]. From there on the kind is a type: nothing reads an
//! error's causes to choose a status.

use crate::exit::{Failure, Kind};
use crate::knob::guard::KnobsNotRestored;
use crate::workload::{IoFailure, WorkloadError};

/// Why `mmcab run` ended without its results; the error is the message (its chain of
/// causes on one line).
#[derive(Debug)]
pub enum RunError {
    /// Bad input, a refusal, a knob that could not be applied or verified, a results
    /// directory that could not be written (exit 1).
    Failed(anyhow::Error),
    /// An I/O on the target failed (exit 4): it holds the [`IoFailure`]; the finished
    /// runs are recorded and the knobs restored.
    Io(anyhow::Error),
    /// Knobs could not be put back (exit 5, whatever failed before: the device was left
    /// changed): [`KnobsNotRestored`] first, then what failed before, if anything.
    NotRestored(anyhow::Error),
}

impl RunError {
    pub fn kind(&self) -> Kind {
        match self {
            RunError::Failed(_) => Kind::Error,
            RunError::Io(_) => Kind::IoFailed,
            RunError::NotRestored(_) => Kind::KnobsNotRestored,
        }
    }

    pub fn error(&self) -> &anyhow::Error {
        match self {
            RunError::Failed(err) | RunError::Io(err) | RunError::NotRestored(err) => err,
        }
    }

    pub fn into_error(self) -> anyhow::Error {
        match self {
            RunError::Failed(err) | RunError::Io(err) | RunError::NotRestored(err) => err,
        }
    }

    /// The failed I/O of [`RunError::Io`].
    pub fn io_failure(&self) -> Option<&IoFailure> {
        match self {
            RunError::Io(err) => err.downcast_ref::<IoFailure>(),
            _ => None,
        }
    }

    /// `context` in front of the message, the kind kept.
    pub fn context<C>(self, context: C) -> RunError
    where
        C: std::fmt::Display + Send + Sync + 'static,
    {
        match self {
            RunError::Failed(err) => RunError::Failed(err.context(context)),
            RunError::Io(err) => RunError::Io(err.context(context)),
            RunError::NotRestored(err) => RunError::NotRestored(err.context(context)),
        }
    }

    /// Knobs could not be put back after this error: they are named first, and the
    /// kind is theirs.
    pub fn not_restored(self, knobs: KnobsNotRestored) -> RunError {
        RunError::NotRestored(self.into_error().context(knobs))
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.error(), f)
    }
}

/// An error of no kind of its own is [`RunError::Failed`].
impl From<anyhow::Error> for RunError {
    fn from(err: anyhow::Error) -> RunError {
        RunError::Failed(err)
    }
}

impl From<WorkloadError> for RunError {
    fn from(err: WorkloadError) -> RunError {
        match err {
            WorkloadError::Io(err) => RunError::Io(err),
            other => RunError::Failed(other.into_error()),
        }
    }
}

impl From<KnobsNotRestored> for RunError {
    fn from(knobs: KnobsNotRestored) -> RunError {
        RunError::NotRestored(knobs.into())
    }
}

impl From<RunError> for Failure {
    fn from(err: RunError) -> Failure {
        Failure {
            kind: err.kind(),
            error: err.into_error(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Cancelled, IoOp};

    fn io() -> anyhow::Error {
        anyhow::Error::from(
            IoFailure::new(IoOp::Write, Some(0), 512, std::path::Path::new("/d"), "j")
                .errno(&std::io::Error::from_raw_os_error(libc::EIO)),
        )
        .context("CMD25: card status 0x80")
    }

    #[test]
    fn the_kind_is_the_variant_the_failure_was_sorted_into() {
        // The engines' boundary sorts their errors once, under any words in front.
        let failed = RunError::from(WorkloadError::from_engine(io()))
            .context("run 2/4 (A, w, repetition 1)");
        assert_eq!(failed.kind(), Kind::IoFailed);
        assert!(failed.io_failure().is_some());
        assert!(matches!(
            WorkloadError::from_engine(anyhow::Error::from(Cancelled).context("job 'j'")),
            WorkloadError::Cancelled
        ));
        let other = RunError::from(WorkloadError::from_engine(anyhow::anyhow!("bad plan")));
        assert_eq!((other.kind(), other.kind().status()), (Kind::Error, 1));
        // Knobs left changed win, and are named first.
        let both = failed.not_restored(KnobsNotRestored {
            knobs: vec!["bus-width".into()],
        });
        assert_eq!(both.kind(), Kind::KnobsNotRestored);
        assert_eq!(
            format!("{both:#}"),
            "could not restore knob(s) bus-width: run the commands printed above: run 2/4 \
             (A, w, repetition 1): CMD25: card status 0x80: write of 512 bytes at offset 0 \
             (sector 0) on /d failed: EIO (I/O error) [job 'j']"
        );
        let failure = Failure::from(both.context("finishing meta.json"));
        assert_eq!(
            (failure.kind, failure.kind.status()),
            (Kind::KnobsNotRestored, 5)
        );
    }
}
