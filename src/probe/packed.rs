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
//! such register) and is put back. Refusals, before
//! anything is written: see [`probe_packed`].

use crate::device::ioctl::{self, SwitchIndex, CMD_SET_NORMAL};
use crate::device::mmc_io::MmcIo;
use crate::device::packed::{
    write_header, Entry, PackedStatus, EXT_CSD_EXP_EVENTS_CTRL, EXT_CSD_PACKED_EVENT,
};
use crate::device::raw_access::RawAccess;
use crate::device::sbc::{self, SbcVerdict};
use crate::device::transfer;
use crate::workload::buffer::{check_block, fill_pattern, stamp_block, AlignedBuf};
use crate::workload::ioctl::setup::packed_entries;
use crate::workload::ioctl::Packed;
use crate::workload::spec::Pattern;
use crate::workload::Target;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;

/// Bytes of each entry (and of each canary block).
pub const ENTRY_BYTES: u64 = 4096;
/// Run ids in the stamps: entries carry PROBE_ID, canaries CANARY_ID.
const PROBE_ID: u64 = 0x6d6d_6361_6270_6b31; // "mmcabpk1"
const CANARY_ID: u64 = 0x6d6d_6361_6263_6e79; // "mmcabcny"

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
    pub header_bytes: usize,
    pub sbc: SbcVerdict,
    pub region_offset: u64,
    pub region_bytes: u64,
    /// The commands sent, as the fixture writes them.
    pub commands: Vec<String>,
    /// EXP_EVENTS_CTRL as found; whether mmcab set PACKED_EVENT_EN for the probe.
    pub exp_events_ctrl: u8,
    pub packed_event_enabled_by_mmcab: bool,
    /// The packed write's outcome: None when the card accepted it, else the error.
    pub write_error: Option<String>,
    /// The card's packed status registers after the write.
    pub card_status: Option<PackedStatus>,
    pub card_status_text: String,
    pub blocks: Vec<BlockCheck>,
    /// Whether the region's old contents and EXP_EVENTS_CTRL were put back.
    pub restored: Vec<String>,
    pub passed: bool,
    /// One sentence: what the card did.
    pub verdict: String,
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
    let dev = File::open(&opts.device)?;
    let sbc = sbc::decide(
        &dev,
        &access.paths,
        access.format,
        &access.kernel_release,
        opts.assume_cmd23_passthrough,
    );
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
    let outcome = run.probe(sbc, card_refusal);
    let restored = run.restore();
    let mut report = outcome?;
    report.restored = restored?;
    Ok(report)
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

/// One probe in progress: the region's old contents and what to put back.
struct Run<'a> {
    access: &'a RawAccess,
    io: &'a File,
    offset: u64,
    entries: usize,
    saved: AlignedBuf,
    saved_ok: bool,
    events_ctrl: Option<u8>,
}

impl<'a> Run<'a> {
    fn new(access: &'a RawAccess, io: &'a File, offset: u64, entries: usize) -> Run<'a> {
        let len = (2 * entries + 1) * ENTRY_BYTES as usize;
        Run {
            access,
            io,
            offset,
            entries,
            saved: AlignedBuf::new(len, ENTRY_BYTES as usize),
            saved_ok: false,
            events_ctrl: None,
        }
    }

    fn block_offset(&self, k: usize) -> u64 {
        self.offset + k as u64 * ENTRY_BYTES
    }

    /// Save the region, lay the canaries, set PACKED_EVENT_EN, send the packed write,
    /// read the card's packed status and the region back.
    fn probe(
        &mut self,
        sbc: SbcVerdict,
        card_refusal: Option<String>,
    ) -> Result<PackedProbeReport> {
        let dev = &self.access.node;
        self.io
            .read_exact_at(self.saved.as_mut_slice(), self.offset)
            .with_context(|| {
                format!("saving the region at {} of {}", self.offset, dev.display())
            })?;
        self.saved_ok = true;
        let mut region = AlignedBuf::new(self.saved.len(), ENTRY_BYTES as usize);
        let bs = ENTRY_BYTES as usize;
        fill_pattern(region.as_mut_slice(), Pattern::Random, 0x5eed);
        for k in (0..=2 * self.entries).step_by(2) {
            let at = self.block_offset(k);
            stamp_block(
                &mut region.as_mut_slice()[k * bs..(k + 1) * bs],
                at,
                CANARY_ID,
                0,
            );
        }
        self.io
            .write_all_at(region.as_slice(), self.offset)
            .and_then(|_| self.io.sync_all())
            .with_context(|| {
                format!(
                    "laying the canaries at {} of {}",
                    self.offset,
                    dev.display()
                )
            })?;
        let ext_csd = ioctl::read_ext_csd(self.io)?;
        let exp_events_ctrl = ext_csd[EXT_CSD_EXP_EVENTS_CTRL];
        // EXP_EVENTS_CTRL is defined from EXT_CSD_REV 6 (a --force'd older card has none).
        let enable = exp_events_ctrl & EXT_CSD_PACKED_EVENT == 0 && ext_csd[192] >= 6;
        if enable {
            let index = SwitchIndex::try_from(EXT_CSD_EXP_EVENTS_CTRL)?;
            ioctl::switch(
                self.io,
                index,
                exp_events_ctrl | EXT_CSD_PACKED_EVENT,
                CMD_SET_NORMAL,
            )
            .context("setting PACKED_EVENT_EN in EXT_CSD EXP_EVENTS_CTRL")?;
            self.events_ctrl = Some(exp_events_ctrl);
        }
        // The packed command: header, then entry i's stamped block.
        let header = self.access.format.header_bytes();
        let mut buf = vec![0u8; header + self.entries * bs];
        let mut entries = Vec::with_capacity(self.entries);
        for i in 0..self.entries {
            let at = self.block_offset(2 * i + 1);
            let slot = &mut buf[header + i * bs..header + (i + 1) * bs];
            fill_pattern(slot, Pattern::Random, at);
            stamp_block(slot, at, PROBE_ID, i as u64 + 1);
            entries.push(Entry {
                sector: at / 512,
                sectors: (bs / 512) as u32,
            });
        }
        let args = write_header(self.access.format, &entries, &mut buf[..header])?;
        let commands = transfer::packed_write(&args, self.access.rca)
            .iter()
            .map(|c| c.to_string())
            .collect();
        let mmc = MmcIo {
            dev: self.io,
            rca: self.access.rca,
        };
        let write_error = mmc
            .packed_write(&args, &buf)
            .err()
            .map(|e| format!("{e:#}"));
        let (card_status, card_status_text) = match ioctl::read_ext_csd(self.io) {
            Ok(raw) => {
                let status = PackedStatus::from_ext_csd(&raw);
                (Some(status), status.describe())
            }
            Err(e) => (None, format!("EXT_CSD unreadable after the write: {e}")),
        };
        let blocks = self.read_back(&buf[..header])?;
        let (passed, verdict) = verdict(write_error.as_deref(), card_status.as_ref(), &blocks);
        Ok(PackedProbeReport {
            device: dev.clone(),
            kernel_release: self.access.kernel_release.clone(),
            ext_csd_rev: self.access.ext_csd.rev(),
            max_packed_writes: self.access.ext_csd.raw
                [crate::device::packed::EXT_CSD_MAX_PACKED_WRITES],
            card_refusal,
            addressing: format!(
                "{:?} ({})",
                self.access.format.addressing, self.access.addressing_source
            ),
            header_bytes: header,
            sbc,
            region_offset: self.offset,
            region_bytes: self.saved.len() as u64,
            commands,
            exp_events_ctrl,
            packed_event_enabled_by_mmcab: enable,
            write_error,
            card_status,
            card_status_text,
            blocks,
            restored: Vec::new(),
            passed,
            verdict,
        })
    }

    /// Every block of the region through the block layer, checked.
    fn read_back(&self, header: &[u8]) -> Result<Vec<BlockCheck>> {
        let _ = nix::fcntl::posix_fadvise(
            self.io,
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        );
        let mut back = AlignedBuf::new(self.saved.len(), ENTRY_BYTES as usize);
        self.io
            .read_exact_at(back.as_mut_slice(), self.offset)
            .context("reading the region back")?;
        let bs = ENTRY_BYTES as usize;
        let mut checks = Vec::new();
        for k in 0..=2 * self.entries {
            let block = &back.as_slice()[k * bs..(k + 1) * bs];
            let at = self.block_offset(k);
            let (what, id) = match k % 2 {
                1 => (format!("entry {}", k / 2 + 1), PROBE_ID),
                _ => ("canary".to_string(), CANARY_ID),
            };
            let problem = if block.starts_with(header) {
                Some("holds the packed header: the card stored the command as plain data".into())
            } else {
                check_block(block, at, Some(id))
            };
            checks.push(BlockCheck {
                what,
                offset: at,
                problem,
            });
        }
        Ok(checks)
    }

    /// Put the region's old contents and EXP_EVENTS_CTRL back; what was restored.
    fn restore(&mut self) -> Result<Vec<String>> {
        let mut done = Vec::new();
        let mut errors = Vec::new();
        if self.saved_ok {
            match self
                .io
                .write_all_at(self.saved.as_slice(), self.offset)
                .and_then(|_| self.io.sync_all())
            {
                Ok(()) => done.push(format!(
                    "the region's {} bytes at {}",
                    self.saved.len(),
                    self.offset
                )),
                Err(e) => errors.push(format!(
                    "the region's old contents were NOT written back ({e}): {} bytes at offset {} \
                     of {} are the probe's",
                    self.saved.len(),
                    self.offset,
                    self.access.node.display()
                )),
            }
        }
        if let Some(old) = self.events_ctrl.take() {
            let index = SwitchIndex::try_from(EXT_CSD_EXP_EVENTS_CTRL)?;
            match ioctl::switch(self.io, index, old, CMD_SET_NORMAL) {
                Ok(()) => done.push(format!("EXP_EVENTS_CTRL = {old:#04x}")),
                Err(e) => errors.push(format!(
                    "EXT_CSD EXP_EVENTS_CTRL [56] is still {:#04x}, was {old:#04x} ({e}): \
                     mmc-utils `mmc extcsd write 56 {old:#04x} {}` puts it back",
                    old | EXT_CSD_PACKED_EVENT,
                    self.access.node.display()
                )),
            }
        }
        if !errors.is_empty() {
            bail!("{}", errors.join("; "));
        }
        Ok(done)
    }
}

/// Pass or fail, and what the card did, in one sentence.
fn verdict(
    write_error: Option<&str>,
    status: Option<&PackedStatus>,
    blocks: &[BlockCheck],
) -> (bool, String) {
    let bad: Vec<&BlockCheck> = blocks.iter().filter(|b| b.problem.is_some()).collect();
    if let Some(e) = write_error {
        let which = status
            .filter(|s| s.failed())
            .map(|s| s.describe())
            .unwrap_or_else(|| "the card names no failed entry".into());
        return (false, format!("the packed write failed ({e}); {which}"));
    }
    if let Some(s) = status.filter(|s| s.failed()) {
        return (
            false,
            format!("the card accepted the command but {}", s.describe()),
        );
    }
    match bad.first() {
        None => (
            true,
            format!(
                "every entry landed where its header entry said and no canary was touched: the \
                 card executes packed writes ({} entries)",
                blocks.len() / 2
            ),
        ),
        Some(first) => (
            false,
            format!(
                "{} of {} blocks read back wrong, first {} at offset {}: {}",
                bad.len(),
                blocks.len(),
                first.what,
                first.offset,
                first.problem.as_deref().unwrap_or("")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(problems: &[Option<&str>]) -> Vec<BlockCheck> {
        problems
            .iter()
            .enumerate()
            .map(|(k, p)| BlockCheck {
                what: if k % 2 == 1 {
                    format!("entry {}", k / 2 + 1)
                } else {
                    "canary".into()
                },
                offset: k as u64 * ENTRY_BYTES,
                problem: p.map(str::to_string),
            })
            .collect()
    }

    #[test]
    fn verdicts() {
        let good = checks(&[None, None, None, None, None]);
        let (passed, text) = verdict(None, Some(&PackedStatus::default()), &good);
        assert!(passed, "{text}");
        assert!(text.contains("2 entries"), "{text}");
        let ignored = checks(&[None, Some("holds the packed header"), Some("x"), None, None]);
        let (passed, text) = verdict(None, None, &ignored);
        assert!(!passed);
        assert!(
            text.starts_with("2 of 5 blocks read back wrong, first entry 1 at offset 4096"),
            "{text}"
        );
        let failed = PackedStatus {
            failure_event: true,
            command_status: 0x3,
            failure_index: 2,
        };
        let (passed, text) = verdict(Some("EIO"), Some(&failed), &good);
        assert!(!passed);
        assert!(text.contains("the card failed entry 2"), "{text}");
    }

    #[test]
    fn stamps_tell_entries_canaries_and_strays_apart() {
        let mut block = vec![0u8; ENTRY_BYTES as usize];
        stamp_block(&mut block, 8192, CANARY_ID, 0);
        assert_eq!(check_block(&block, 8192, Some(CANARY_ID)), None);
        assert!(check_block(&block, 8192, Some(PROBE_ID)).is_some());
        // An entry written one block too far: the offset in its stamp says so.
        stamp_block(&mut block, 4096, PROBE_ID, 1);
        let problem = check_block(&block, 8192, Some(PROBE_ID)).unwrap();
        assert!(problem.contains("offset 4096"), "{problem}");
    }
}
