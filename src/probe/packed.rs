//! `mmcab probe packed`: a self-test of packed writes on a real card, before anyone
//! trusts packed numbers. One packed command of N entries, each 4 KiB with its own
//! stamp (the verify header: offset, probe id, entry number, CRC), goes through the MMC
//! ioctl to a scratch region where entries and untouched canary blocks alternate:
//!
//! ```text
//! canary | entry 1 | canary | entry 2 | ... | entry N | canary
//! ```
//!
//! Everything is read back through the block layer (O_DIRECT): each entry must hold its
//! own stamp and each canary must be intact. A card that ignored the packed bit stores
//! the header as data at entry 1's address and the entries one after the other, which
//! this layout shows. On a failed write, or a card reporting a packed failure, the
//! card's PACKED_COMMAND_STATUS and PACKED_FAILURE_INDEX (EXT_CSD) say which entry.
//!
//! The region is where the user names it (`--offset`, no default: whatever lies there is
//! overwritten if putting it back fails). Its old contents are read first and written
//! back afterwards, on every exit path (a drop guard covers errors and panics); EXT_CSD
//! EXP_EVENTS_CTRL gets PACKED_EVENT_EN only if it lacks it (so that the card flags a
//! packed failure in its status, as Linux 4.9 had it; cards before EXT_CSD_REV 6 have no
//! such register) and is put back. What could not be put back is in the report
//! (`not_restored`, the CLI's exit status 5) or, when the probe failed too, in a
//! [`ProbeError::NotRestored`] naming both. Refusals, before anything is written: see
//! [`probe_packed`]; the steps: [`super::packed_run`].

pub use super::packed_region::{BlockCheck, ENTRY_BYTES};
use super::packed_run::{Outcome, Run};
use crate::device::packed::EXT_CSD_MAX_PACKED_WRITES;
use crate::device::raw_access::RawAccess;
use crate::evidence::sbc::{self, SbcVerdict};
use crate::exit::{Failure, Kind};
use crate::plan::packed::Packed;
use crate::workload::engine::ioctl::setup::packed_entries;
use crate::workload::target::Writes;
use crate::workload::Target;
use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// What `mmcab probe packed` was asked.
#[derive(Debug, Clone, Default)]
pub struct PackedProbeOptions {
    pub device: PathBuf,
    pub allow_write: bool,
    /// Start of the scratch region (bytes): the user names it.
    pub offset: u64,
    /// Entries of the packed command (default: as many as the card, the header and one
    /// command's data allow).
    pub entries: Option<usize>,
    /// Send it even when EXT_CSD says the card has no packed commands (to see what the
    /// card does with one).
    pub force: bool,
    pub assume_cmd23_passthrough: bool,
}

/// Everything the probe did and saw.
#[derive(Debug, Clone, Serialize)]
pub struct PackedProbeReport {
    pub device: PathBuf,
    pub kernel_release: String,
    pub ext_csd_rev: u8,
    pub max_packed_writes: u8,
    /// Why EXT_CSD says no, when `--force` sent it anyway.
    pub card_refusal: Option<String>,
    pub addressing: String,
    pub sbc: SbcVerdict,
    pub region_offset: u64,
    /// What the probe sent and saw.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// What was put back: the region's old contents, EXP_EVENTS_CTRL.
    pub restored: Vec<String>,
    /// What could not be put back, each with how to finish it by hand (empty when all
    /// was; else the CLI exits with status 5).
    pub not_restored: Vec<String>,
}

/// The probe left the device changed: what, and how to put it back by hand (exit status
/// 5, as a run whose knobs could not be restored: [`Kind::ProbeNotRestored`]).
#[derive(Debug)]
pub struct ProbeNotRestored {
    pub failed: Vec<String>,
}

impl std::fmt::Display for ProbeNotRestored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mmcab probe packed could not put everything back: {}",
            self.failed.join("; ")
        )
    }
}

impl std::error::Error for ProbeNotRestored {}

/// Why the probe gave no report, by the exit status's kind.
#[derive(Debug)]
pub enum ProbeError {
    /// A refusal or a failure that left the device as it was (exit 1).
    Failed(anyhow::Error),
    /// The probe failed and could not put everything back (exit 5).
    NotRestored(ProbeNotRestored),
}

impl From<anyhow::Error> for ProbeError {
    fn from(err: anyhow::Error) -> ProbeError {
        ProbeError::Failed(err)
    }
}

impl From<ProbeError> for Failure {
    fn from(err: ProbeError) -> Failure {
        match err {
            ProbeError::Failed(error) => Failure {
                kind: Kind::Error,
                error,
            },
            ProbeError::NotRestored(failed) => failed.into(),
        }
    }
}

impl From<ProbeNotRestored> for Failure {
    fn from(failed: ProbeNotRestored) -> Failure {
        Failure {
            kind: Kind::ProbeNotRestored,
            error: failed.into(),
        }
    }
}

/// Runs the probe. Refused before any write, each with the reason and what to do: a
/// node that is not a whole eMMC device or hardware partition, no CAP_SYS_RAWIO, a card
/// without packed writes (EXT_CSD_REV < 6 or MAX_PACKED_WRITES = 0; `force` sends it
/// anyway), a mounted or held device, no `--allow-write`, a read-only node, a kernel
/// without the CMD23 pass-through, a region past the end. `report` hears what a drop
/// of the probe (a panic) could not put back.
pub fn probe_packed(
    opts: &PackedProbeOptions,
    report: &dyn Fn(&str),
) -> Result<PackedProbeReport, ProbeError> {
    let access = RawAccess::open(&opts.device).map_err(anyhow::Error::from)?;
    let card_refusal = access.max_packed_writes().err();
    if let (Some(why), false) = (&card_refusal, opts.force) {
        return Err(anyhow!(
            "{}: {why}: there is nothing to probe (--force sends the command anyway, to see \
             what the card does with it)",
            opts.device.display()
        )
        .into());
    }
    // The region is read first and put back after, at the offset the user names, so a
    // device that holds data elsewhere is not refused for it (Writes::OverData).
    let target = Target::open_with(
        &opts.device,
        if opts.allow_write {
            Writes::OverData
        } else {
            Writes::No
        },
    )?;
    target.check_write("mmcab probe packed (one packed write, the region put back after)")?;
    access.check_writable()?;
    let sbc =
        sbc::decide_for(&access, opts.assume_cmd23_passthrough).map_err(anyhow::Error::from)?;
    if let Some(refusal) = sbc.refusal() {
        return Err(anyhow!("{}: {refusal}", opts.device.display()).into());
    }
    let entries = entry_count(opts, &access, card_refusal.is_some())?;
    let region_bytes = (2 * entries as u64 + 1) * ENTRY_BYTES;
    let end = opts.offset.checked_add(region_bytes);
    if opts.offset % ENTRY_BYTES != 0 || end.is_none_or(|end| end > access.size_bytes) {
        return Err(anyhow!(
            "--offset {}: the probe needs {region_bytes} bytes from a multiple of {ENTRY_BYTES} \
             inside {} ({} bytes)",
            opts.offset,
            opts.device.display(),
            access.size_bytes
        )
        .into());
    }
    let io = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&opts.device)
        .with_context(|| format!("cannot open {}", opts.device.display()))?;
    let mut run = Run::new(&access, &io, opts.offset, entries, report);
    let outcome = run.probe();
    let restored = run.restore();
    drop(run);
    let outcome = match (outcome, restored.failed.is_empty()) {
        (Ok(outcome), _) => outcome,
        (Err(e), true) => return Err(e.into()),
        (Err(e), false) => {
            let mut failed = restored.failed;
            failed.push(format!("the probe itself failed first: {e:#}"));
            return Err(ProbeError::NotRestored(ProbeNotRestored { failed }));
        }
    };
    Ok(PackedProbeReport {
        device: access.node.clone(),
        kernel_release: access.kernel_release.clone(),
        ext_csd_rev: access.ext_csd.rev(),
        max_packed_writes: access.ext_csd.raw[EXT_CSD_MAX_PACKED_WRITES],
        card_refusal,
        addressing: format!(
            "{:?} ({})",
            access.format.addressing, access.addressing_source
        ),
        sbc,
        region_offset: opts.offset,
        outcome,
        restored: restored.done,
        not_restored: restored.failed,
    })
}

/// The entries to send: `--entries`, or the most the card allows (8 when `--force`
/// sends to a card without packed commands); at least 2.
fn entry_count(opts: &PackedProbeOptions, access: &RawAccess, forced: bool) -> Result<usize> {
    let wanted = match (opts.entries, forced) {
        (Some(n), _) => Packed::Entries(n.min(usize::from(u8::MAX)) as u32),
        (None, true) => Packed::Entries(8),
        (None, false) => Packed::Max,
    };
    packed_entries(wanted, ENTRY_BYTES, access, forced)
        .map_err(|why| anyhow::anyhow!("--entries: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_that_could_not_put_everything_back_ends_with_its_kind() {
        let failed = vec![
            "EXT_CSD EXP_EVENTS_CTRL [56] is still 0x08".to_string(),
            "the probe itself failed first: CMD25 timed out".to_string(),
        ];
        let failure = Failure::from(ProbeError::NotRestored(ProbeNotRestored {
            failed: failed.clone(),
        }));
        assert_eq!(failure.kind, Kind::ProbeNotRestored);
        assert_eq!(failure.kind.status(), 5);
        assert_eq!(
            failure.error.to_string(),
            "mmcab probe packed could not put everything back: EXT_CSD EXP_EVENTS_CTRL [56] \
             is still 0x08; the probe itself failed first: CMD25 timed out"
        );
        // After a report: the same kind.
        assert_eq!(
            Failure::from(ProbeNotRestored { failed }).kind,
            Kind::ProbeNotRestored
        );
        let refused = Failure::from(ProbeError::from(anyhow!("--offset 1: ...")));
        assert_eq!((refused.kind, refused.kind.status()), (Kind::Error, 1));
    }
}
