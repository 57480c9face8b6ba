//! The steps of one `mmcab probe packed` ([`super::packed`]): save the region, lay the
//! canaries, set PACKED_EVENT_EN when off, send the packed write, read the card's
//! status and the region back, judge, put everything back.

use super::packed_region::{BlockCheck, ENTRY_BYTES};
use crate::aligned::AlignedBuf;
use crate::device::ioctl::{self, SwitchIndex, CMD_SET_NORMAL};
use crate::device::mmc_io::MmcIo;
use crate::device::packed::{
    write_header, Entry, PackedStatus, EXT_CSD_EXP_EVENTS_CTRL, EXT_CSD_PACKED_EVENT,
};
use crate::device::raw_access::RawAccess;
use crate::device::transfer;
use crate::plan::workload::Pattern;
use crate::workload::engine::buffer::{check_block, fill_pattern, stamp_block};
use anyhow::{Context, Result};
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

/// What [`Run::restore`] put back and what it could not.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    pub done: Vec<String>,
    /// Each: what is left changed and how to put it back by hand.
    pub failed: Vec<String>,
}

/// One probe in progress: the region's old contents and what to put back. Dropping it
/// (an early return, a panic) puts them back if [`Run::restore`] has not; what fails
/// then goes to `report`.
pub struct Run<'a> {
    access: &'a RawAccess,
    io: &'a File,
    offset: u64,
    entries: usize,
    saved: AlignedBuf,
    saved_ok: bool,
    events_ctrl: Option<u8>,
    report: &'a dyn Fn(&str),
}

impl<'a> Run<'a> {
    pub fn new(
        access: &'a RawAccess,
        io: &'a File,
        offset: u64,
        entries: usize,
        report: &'a dyn Fn(&str),
    ) -> Run<'a> {
        let len = (2 * entries + 1) * ENTRY_BYTES as usize;
        Run {
            access,
            io,
            offset,
            entries,
            saved: AlignedBuf::new(len, ENTRY_BYTES as usize),
            saved_ok: false,
            events_ctrl: None,
            report,
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

    /// Put the region's old contents and EXP_EVENTS_CTRL back (each at most once); what
    /// was restored and what was not.
    pub fn restore(&mut self) -> Restored {
        let mut done = Vec::new();
        let mut errors = Vec::new();
        if std::mem::take(&mut self.saved_ok) {
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
            let switched = SwitchIndex::try_from(EXT_CSD_EXP_EVENTS_CTRL)
                .map_err(|e| e.to_string())
                .and_then(|index| {
                    ioctl::switch(self.io, index, old, CMD_SET_NORMAL).map_err(|e| e.to_string())
                });
            match switched {
                Ok(()) => done.push(format!("EXP_EVENTS_CTRL = {old:#04x}")),
                Err(e) => errors.push(format!(
                    "EXT_CSD EXP_EVENTS_CTRL [56] is still {:#04x}, was {old:#04x} ({e}): \
                     mmc-utils `mmc extcsd write 56 {old:#04x} {}` puts it back",
                    old | EXT_CSD_PACKED_EVENT,
                    self.access.node.display()
                )),
            }
        }
        Restored {
            done,
            failed: errors,
        }
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        for failed in self.restore().failed {
            (self.report)(&failed);
        }
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
    use crate::device::raw_access::test_access;
    use std::cell::RefCell;

    /// A scratch file of 8 blocks, each block k filled with byte k.
    fn scratch() -> (tempfile::NamedTempFile, Vec<u8>) {
        let file = tempfile::NamedTempFile::new().unwrap();
        let old: Vec<u8> = (0..8u8)
            .flat_map(|k| vec![k; ENTRY_BYTES as usize])
            .collect();
        std::fs::write(file.path(), &old).unwrap();
        (file, old)
    }

    #[test]
    fn dropping_a_run_puts_the_region_back() {
        let (file, old) = scratch();
        let access = test_access(8, 8, false);
        let io = File::options()
            .read(true)
            .write(true)
            .open(file.path())
            .unwrap();
        let heard = RefCell::new(Vec::<String>::new());
        let report = |s: &str| heard.borrow_mut().push(s.to_string());
        {
            // 2 entries at block 1: blocks 1..6 are the region.
            let mut run = Run::new(&access, &io, ENTRY_BYTES, 2, &report);
            run.save_and_lay_canaries().unwrap();
            assert_ne!(std::fs::read(file.path()).unwrap(), old, "canaries laid");
            // An early return or a panic: no explicit restore.
        }
        assert_eq!(std::fs::read(file.path()).unwrap(), old);
        assert!(heard.borrow().is_empty(), "{:?}", heard.borrow());
        // restore() then drop: the region is written back once, nothing to report.
        let mut run = Run::new(&access, &io, ENTRY_BYTES, 2, &report);
        run.save_and_lay_canaries().unwrap();
        let restored = run.restore();
        assert_eq!(restored.done.len(), 1, "{restored:?}");
        assert!(restored.failed.is_empty());
        assert!(run.restore().done.is_empty(), "restored once");
        drop(run);
        assert_eq!(std::fs::read(file.path()).unwrap(), old);
    }

    #[test]
    fn a_region_that_cannot_be_written_back_is_reported_with_where_it_is() {
        let (file, old) = scratch();
        let access = test_access(8, 8, false);
        // Read-only: the region is saved, the canaries and the write-back fail.
        let io = File::open(file.path()).unwrap();
        let heard = RefCell::new(Vec::<String>::new());
        let report = |s: &str| heard.borrow_mut().push(s.to_string());
        let mut run = Run::new(&access, &io, ENTRY_BYTES, 2, &report);
        assert!(run.save_and_lay_canaries().is_err());
        drop(run);
        let heard = heard.into_inner();
        assert_eq!(heard.len(), 1, "{heard:?}");
        assert!(
            heard[0].contains("NOT written back")
                && heard[0].contains("20480 bytes at offset 4096"),
            "{heard:?}"
        );
        assert_eq!(std::fs::read(file.path()).unwrap(), old);
    }

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
