//! The steps of one `mmcab probe packed` ([`super::packed`]): save the region, lay the
//! canaries, set PACKED_EVENT_EN when off, send the packed write, read the card's
//! status and the region back, judge, put everything back.

use super::packed::{BlockCheck, ENTRY_BYTES};
use crate::device::ioctl::{self, SwitchIndex, CMD_SET_NORMAL};
use crate::device::mmc_io::MmcIo;
use crate::device::packed::{
    write_header, Entry, PackedStatus, EXT_CSD_EXP_EVENTS_CTRL, EXT_CSD_PACKED_EVENT,
};
use crate::device::raw_access::RawAccess;
use crate::device::transfer;
use crate::workload::buffer::{check_block, fill_pattern, stamp_block, AlignedBuf};
use crate::workload::spec::Pattern;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Run ids in the stamps: entries carry PROBE_ID, canaries CANARY_ID.
const PROBE_ID: u64 = 0x6d6d_6361_6270_6b31; // "mmcabpk1"
const CANARY_ID: u64 = 0x6d6d_6361_6263_6e79; // "mmcabcny"

/// What the probe sent and saw (the report adds what was known before).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub header_bytes: usize,
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
    pub passed: bool,
    /// One sentence: what the card did.
    pub verdict: String,
}

/// The packed write as sent, and what the card said.
struct Sent {
    header: Vec<u8>,
    commands: Vec<String>,
    write_error: Option<String>,
    card_status: Option<PackedStatus>,
    card_status_text: String,
}

/// One probe in progress: the region's old contents and what to put back.
pub struct Run<'a> {
    access: &'a RawAccess,
    io: &'a File,
    offset: u64,
    entries: usize,
    saved: AlignedBuf,
    saved_ok: bool,
    events_ctrl: Option<u8>,
}

impl<'a> Run<'a> {
    pub fn new(access: &'a RawAccess, io: &'a File, offset: u64, entries: usize) -> Run<'a> {
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
    pub fn probe(&mut self) -> Result<Outcome> {
        self.save_and_lay_canaries()?;
        let (exp_events_ctrl, enabled) = self.enable_packed_event()?;
        let sent = self.send()?;
        let blocks = self.read_back(&sent.header)?;
        let (passed, verdict) = verdict(
            sent.write_error.as_deref(),
            sent.card_status.as_ref(),
            &blocks,
        );
        Ok(Outcome {
            header_bytes: sent.header.len(),
            region_bytes: self.saved.len() as u64,
            commands: sent.commands,
            exp_events_ctrl,
            packed_event_enabled_by_mmcab: enabled,
            write_error: sent.write_error,
            card_status: sent.card_status,
            card_status_text: sent.card_status_text,
            blocks,
            passed,
            verdict,
        })
    }

    fn save_and_lay_canaries(&mut self) -> Result<()> {
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
            })
    }

    /// PACKED_EVENT_EN on, when off: (EXP_EVENTS_CTRL as found, whether mmcab set it).
    fn enable_packed_event(&mut self) -> Result<(u8, bool)> {
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
        Ok((exp_events_ctrl, enable))
    }

    /// The packed command: header, then entry i's stamped block; and the card's
    /// packed status after it.
    fn send(&self) -> Result<Sent> {
        let bs = ENTRY_BYTES as usize;
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
        buf.truncate(header);
        Ok(Sent {
            header: buf,
            commands,
            write_error,
            card_status,
            card_status_text,
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
    pub fn restore(&mut self) -> Result<Vec<String>> {
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
