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
//! The region's old contents are read first and written back afterwards; EXT_CSD
//! EXP_EVENTS_CTRL gets PACKED_EVENT_EN only if it lacks it (so that the card flags a
//! packed failure in its status, as Linux 4.9 had it; cards before EXT_CSD_REV 6 have no
//! such register) and is put back. Refusals, before anything is written: see
//! [`probe_packed`]; the steps: [`super::packed_run`].

use super::packed_run::{Outcome, Run};
use crate::device::packed::EXT_CSD_MAX_PACKED_WRITES;
use crate::device::raw_access::RawAccess;
use crate::device::sbc::{self, SbcVerdict};
use crate::workload::ioctl::setup::packed_entries;
use crate::workload::ioctl::Packed;
use crate::workload::Target;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// Bytes of each entry (and of each canary block).
pub const ENTRY_BYTES: u64 = 4096;

/// What `mmcab probe packed` was asked.
#[derive(Debug, Clone, Default)]
pub struct PackedProbeOptions {
    pub device: PathBuf,
    pub allow_write: bool,
    /// Start of the scratch region (bytes; default 0).
    pub offset: u64,
    /// Entries of the packed command (default: as many as the card, the header and one
    /// command's data allow).
    pub entries: Option<usize>,
    /// Send it even when EXT_CSD says the card has no packed commands (to see what the
    /// card does with one).
    pub force: bool,
    pub assume_cmd23_passthrough: bool,
}

/// How one block of the region read back.
#[derive(Debug, Clone, Serialize)]
pub struct BlockCheck {
    /// `entry N` or `canary`.
    pub what: String,
    pub offset: u64,
    /// None: as it should be; else what is wrong.
    pub problem: Option<String>,
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
    /// Whether the region's old contents and EXP_EVENTS_CTRL were put back.
    pub restored: Vec<String>,
}

/// Runs the probe. Refused before any write, each with the reason and what to do: a
/// node that is not a whole eMMC device or hardware partition, no CAP_SYS_RAWIO, a card
/// without packed writes (EXT_CSD_REV < 6 or MAX_PACKED_WRITES = 0; `force` sends it
/// anyway), a mounted or held device, no `--allow-write`, a read-only node, a kernel
/// without the CMD23 pass-through, a region past the end.
pub fn probe_packed(opts: &PackedProbeOptions) -> Result<PackedProbeReport> {
    let access = RawAccess::open(&opts.device)?;
    let card_refusal = access.max_packed_writes().err();
    if let (Some(why), false) = (&card_refusal, opts.force) {
        bail!(
            "{}: {why}: there is nothing to probe (--force sends the command anyway, to see \
             what the card does with it)",
            opts.device.display()
        );
    }
    let target = Target::open(&opts.device, opts.allow_write)?;
    target.check_write("mmcab probe packed (one packed write, the region put back after)")?;
    access.check_writable()?;
    let sbc = sbc::decide_for(&access, opts.assume_cmd23_passthrough)?;
    if let Some(refusal) = sbc.refusal() {
        bail!("{}: {refusal}", opts.device.display());
    }
    let entries = entry_count(opts, &access, card_refusal.is_some())?;
    let region_bytes = (2 * entries as u64 + 1) * ENTRY_BYTES;
    if opts.offset % ENTRY_BYTES != 0 || opts.offset + region_bytes > access.size_bytes {
        bail!(
            "--offset {}: the probe needs {region_bytes} bytes from a multiple of {ENTRY_BYTES} \
             inside {} ({} bytes)",
            opts.offset,
            opts.device.display(),
            access.size_bytes
        );
    }
    let io = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&opts.device)
        .with_context(|| format!("cannot open {}", opts.device.display()))?;
    let mut run = Run::new(&access, &io, opts.offset, entries);
    let outcome = run.probe();
    let restored = run.restore();
    let outcome = outcome?;
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
        restored: restored?,
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
