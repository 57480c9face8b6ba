//! How a command ends, and the exit status each way of ending gets: one [`Kind`] per row
//! of [`TABLE`], the one place statuses are decided. The command line picks a command's
//! status from the kind it ended with ([`Kind::status`]); docs/safety.md's "Exit
//! statuses" table is checked against [`TABLE`] row by row, both ways
//! (`cli/docs_tests.rs`).
//!
//! The kinds come from types: the runner returns a `runner::RunError`, a workload a
//! `workload::io_error::WorkloadError` (the engines' own `anyhow` errors sorted once, at
//! their boundary, by the types they carry), `probe packed` a `probe::packed::ProbeError`,
//! each an enum whose variant is the kind; every other error of a command is
//! [`Kind::Error`] ([`Failure`]'s `From<anyhow::Error>`). This module imports nothing of
//! the crate.

/// Why a command ended, one per row of [`TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Success,
    /// Bad input, a refusal, a failure that left nothing changed.
    Error,
    /// The command line is wrong (clap's usage errors).
    Usage,
    /// `run`: verify found bad blocks.
    VerifyFailed,
    /// `probe packed`: the card did not do what was sent.
    ProbeMismatch,
    /// `run`: an I/O on the target failed (`workload::IoFailure`).
    IoFailed,
    /// `run`: a knob could not be put back (`knob::guard::KnobsNotRestored`).
    KnobsNotRestored,
    /// `probe packed`: its region or EXP_EVENTS_CTRL could not be put back
    /// (`probe::packed::ProbeNotRestored`).
    ProbeNotRestored,
    /// `report`, `compare`: a gate check failed.
    GateFailed,
    /// `report`, `compare`: a gate check had no verdict.
    Inconclusive,
    /// Stopped by this signal (its number), what it changed put back.
    Signal(i32),
}

/// One row of the table: a kind, its status, the commands that end with it, and the
/// first words of what it means (docs/safety.md's row says the rest).
#[derive(Debug)]
pub struct Row {
    /// For [`Kind::Signal`], any number: the row is the signal's, whichever.
    pub kind: Kind,
    /// The status; for [`Kind::Signal`] the base the signal's number is added to.
    pub status: u8,
    /// As docs/safety.md names them: `all`, or command names joined by ", ".
    pub commands: &'static str,
    pub meaning: &'static str,
}

/// Every way a command ends and its exit status, in docs/safety.md's order.
pub static TABLE: [Row; 11] = [
    row(Kind::Success, 0, "all", "success"),
    row(Kind::Error, 1, "all", "an error"),
    row(Kind::Usage, 2, "all", "the command line is wrong (usage)"),
    row(Kind::VerifyFailed, 3, "run", "verify found bad blocks"),
    row(
        Kind::ProbeMismatch,
        3,
        "probe packed",
        "the card did not do what was sent",
    ),
    row(
        Kind::IoFailed,
        4,
        "run",
        "an I/O on the target failed mid-run",
    ),
    row(
        Kind::KnobsNotRestored,
        5,
        "run",
        "a knob could not be put back",
    ),
    row(
        Kind::ProbeNotRestored,
        5,
        "probe packed",
        "the region or EXP_EVENTS_CTRL could not be put back",
    ),
    row(
        Kind::GateFailed,
        6,
        "report, compare",
        "a gate check failed",
    ),
    row(Kind::Inconclusive, 7, "report, compare", "inconclusive"),
    row(
        Kind::Signal(0),
        128,
        "run, probe packed",
        "stopped by signal N",
    ),
];

const fn row(kind: Kind, status: u8, commands: &'static str, meaning: &'static str) -> Row {
    Row {
        kind,
        status,
        commands,
        meaning,
    }
}

impl Kind {
    /// Its row of [`TABLE`].
    pub fn row(self) -> &'static Row {
        let same = |row: &&Row| std::mem::discriminant(&row.kind) == std::mem::discriminant(&self);
        TABLE.iter().find(same).expect("every kind has its row")
    }

    /// The exit status: its row's, plus the signal's number for [`Kind::Signal`]
    /// (128 + N, what a shell shows for a process killed by N).
    pub fn status(self) -> u8 {
        let base = self.row().status;
        match self {
            Kind::Signal(n) => base.saturating_add(u8::try_from(n).unwrap_or(u8::MAX)),
            _ => base,
        }
    }

    /// [`Kind::status`] as the process's exit code.
    pub fn exit_code(self) -> std::process::ExitCode {
        std::process::ExitCode::from(self.status())
    }
}

impl Row {
    /// The status as docs/safety.md writes it: `3`, or `128 + N` for a signal.
    pub fn status_text(&self) -> String {
        match self.kind {
            Kind::Signal(_) => format!("{} + N", self.status),
            _ => self.status.to_string(),
        }
    }
}

/// An error that ends a command: its kind, which picks the exit status, and the error
/// whose chain of causes is the message (one `mmcab: error:` line).
#[derive(Debug)]
pub struct Failure {
    pub kind: Kind,
    pub error: anyhow::Error,
}

/// An error of no kind of its own is [`Kind::Error`] (status 1).
impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure {
            kind: Kind::Error,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_and_its_status() {
        for (i, row) in TABLE.iter().enumerate() {
            assert!(std::ptr::eq(row.kind.row(), row), "row {i} twice");
        }
        assert_eq!(Kind::Success.status(), 0);
        assert_eq!(Kind::IoFailed.status(), 4);
        assert_eq!(
            Kind::KnobsNotRestored.status(),
            Kind::ProbeNotRestored.status()
        );
        assert_eq!(Kind::Signal(libc::SIGINT).status(), 130);
        assert_eq!(Kind::Signal(libc::SIGTERM).status(), 143);
        assert_eq!(Kind::Signal(libc::SIGHUP).status(), 129);
        assert_eq!(Kind::Signal(15).row().status_text(), "128 + N");
        assert_eq!(Kind::Usage.row().status_text(), "2");
    }
}
