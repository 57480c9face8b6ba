//! Does this kernel hand a user CMD23 to the card as the next transfer's
//! SET_BLOCK_COUNT (`mrq.sbc`, argument unchanged)? Packed writes need it: the packed
//! bit and the header-inclusive block count must reach the card as the CMD25's own
//! CMD23. Commit 4d0c8d0aef63 ("mmc: core: Use mrq.sbc in close-ended ffu") made the
//! ioctl path do so (first in v6.8; stable backports to 6.7, 6.6, 6.1, 5.15, 5.10 and 5.4
//! from late January 2024). Before it, the CMD23 went out as a request of its own and
//! the CMD25 as an open-ended transfer, which some hosts end with an automatic CMD12
//! (the commit's reason).
//!
//! The version alone cannot tell because of the backports, so [`decide`] looks first:
//! one CMD23 + CMD18 read of 3 blocks (nothing is written) while the `mmc_request_start`
//! tracepoint is on in a private tracefs instance; the read's request shows
//! `sbc_opcode=23 sbc_arg=0x3` with the pass-through, or a request of its own for the
//! CMD23 and `sbc_opcode=0` on the read without it. Without tracefs it decides by
//! version, and a user who knows better overrides with `--assume-cmd23-passthrough`.
//!
//! The follow-up fix 0cdfe5b0bf29 ("mmc: core: Initialize mmc_blk_ioc_data") is needed
//! too: without it the new per-command flags are uninitialised and commands can be
//! dropped or taken as an sbc. It went to the stable trees in April 2024; no probe tells
//! it apart, `mmcab probe packed` checks what reached the card.

use super::tracefs;
use crate::device::capabilities::kernel_version;
use crate::device::packed::CardFormat;
use crate::device::raw_access::RawAccess;
use crate::device::transfer;
use crate::device::{ioctl, MmcPaths};
use serde::Serialize;
use std::fs::File;

pub const COMMIT: &str = "4d0c8d0aef63 (\"mmc: core: Use mrq.sbc in close-ended ffu\")";
pub const FIX_COMMIT: &str = "0cdfe5b0bf29 (\"mmc: core: Initialize mmc_blk_ioc_data\")";

/// The probe read: this many blocks at this 512-byte sector, unlikely to be a request
/// of anyone else in the trace (both times 8 on 4 KiB-sector cards: [`probe_read`]).
const PROBE_BLOCKS: u32 = 3;
const PROBE_SECTOR: u64 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Passthrough {
    Yes,
    No,
    Unknown,
}

/// The answer and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SbcVerdict {
    pub passthrough: Passthrough,
    pub evidence: String,
}

impl SbcVerdict {
    /// Why packed writes are refused on this kernel (None when they are not).
    pub fn refusal(&self) -> Option<String> {
        let what = match self.passthrough {
            Passthrough::Yes => return None,
            Passthrough::No => {
                "this kernel does not pass a user CMD23 to the card as the \
                                write's SET_BLOCK_COUNT"
            }
            Passthrough::Unknown => {
                "mmcab cannot tell whether this kernel passes a user CMD23 \
                                     to the card as the write's SET_BLOCK_COUNT"
            }
        };
        Some(format!(
            "{what} ({}): packed writes need commit {COMMIT} (v6.8; 6.7, 6.6, 6.1, 5.15, 5.10, \
             5.4 stable releases from late January 2024) and its fix {FIX_COMMIT}: use such a \
             kernel, or pass --assume-cmd23-passthrough if yours has them",
            self.evidence
        ))
    }
}

/// The decision by kernel release alone.
pub fn by_version(release: &str) -> SbcVerdict {
    let (passthrough, why) = match kernel_version(release) {
        Some(v) if v >= (6, 8) => (Passthrough::Yes, "mainline has it since v6.8"),
        Some((6, 7) | (6, 6) | (6, 1) | (5, 15) | (5, 10) | (5, 4)) => (
            Passthrough::Unknown,
            "this stable series got it as a backport in 2024: the point release decides",
        ),
        Some(_) => (Passthrough::No, "no release of this series has it"),
        None => (Passthrough::Unknown, "the release does not parse"),
    };
    SbcVerdict {
        passthrough,
        evidence: format!("kernel {release}: {why}"),
    }
}

/// What a `mmc_request_start` trace says about the probe read (CMD18 of `blocks` at
/// card address `address` on host `host`): None when the read is not in it.
pub fn read_trace(text: &str, host: &str, address: u32, blocks: u32) -> Option<Passthrough> {
    let prefix = format!("{host}: start struct mmc_request");
    let mut separate_cmd23 = false;
    for line in text.lines() {
        let Some(at) = line.find(&prefix) else {
            continue;
        };
        let field = |key: &str| -> Option<u32> {
            let value = line[at..]
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))?;
            match value.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => value.parse().ok(),
            }
        };
        match (field("cmd_opcode"), field("cmd_arg")) {
            (Some(23), Some(arg)) if arg == blocks => separate_cmd23 = true,
            (Some(18), Some(arg)) if arg == address => {
                return Some(match (field("sbc_opcode"), field("sbc_arg")) {
                    (Some(23), Some(arg)) if arg == blocks => Passthrough::Yes,
                    (Some(0), _) if separate_cmd23 => Passthrough::No,
                    _ => Passthrough::Unknown,
                });
            }
            _ => {}
        }
    }
    None
}

/// The probe read: (512-byte sector, blocks). On a card with native 4 KiB sectors
/// (DATA_SECTOR_SIZE = 1) both are whole 4 KiB sectors, which such a card needs.
pub fn probe_read(format: CardFormat) -> (u64, u32) {
    let scale = if format.large_sector { 8 } else { 1 };
    (PROBE_SECTOR * u64::from(scale), PROBE_BLOCKS * scale)
}

/// Looks: the probe read while the mmc events of the card's host are traced in a private
/// tracefs instance ([`crate::evidence::tracefs::Instance`], removed on every exit path).
pub fn probe_trace(dev: &File, paths: &MmcPaths, format: CardFormat) -> Result<SbcVerdict, String> {
    let root = tracefs::find_root().map_err(|e| format!("{e:#}"))?;
    let instance = tracefs::Instance::create(&root, &paths.host).map_err(|e| format!("{e:#}"))?;
    let (sector, blocks) = probe_read(format);
    let address = format
        .address(sector)
        .expect("a small sector has an address");
    let mut buf = vec![0u8; blocks as usize * transfer::BLOCK as usize];
    let [sbc, data] = transfer::read(address, blocks);
    let mut cmds = [
        transfer::no_data(&sbc),
        transfer::with_read(&data, &mut buf),
    ];
    let (read, text) = instance
        .trace_of(|| ioctl::multi_cmd(dev, &mut cmds))
        .map_err(|e| format!("{e:#}"))?;
    drop(instance);
    read.map_err(|e| format!("the probe read failed: {e}"))?;
    let seen = read_trace(&text, &paths.host, address, blocks);
    let how = format!(
        "seen in tracefs: a CMD23 ({blocks} blocks) + CMD18 read through the ioctl on {}",
        paths.host
    );
    match seen {
        Some(Passthrough::Yes) => Ok(SbcVerdict {
            passthrough: Passthrough::Yes,
            evidence: format!("{how} became one request with sbc_opcode=23 sbc_arg={blocks:#x}"),
        }),
        Some(Passthrough::No) => Ok(SbcVerdict {
            passthrough: Passthrough::No,
            evidence: format!("{how} went out as two requests (the read's sbc_opcode=0)"),
        }),
        _ => Err(format!(
            "the probe read is not in the mmc trace as expected ({} lines read)",
            text.lines().count()
        )),
    }
}

/// The verdict: `assume` (the user's `--assume-cmd23-passthrough`), else the trace, else
/// the kernel version (saying why the trace could not be used).
pub fn decide(
    dev: &File,
    paths: &MmcPaths,
    format: CardFormat,
    release: &str,
    assume: bool,
) -> SbcVerdict {
    if assume {
        return SbcVerdict {
            passthrough: Passthrough::Yes,
            evidence: "assumed (--assume-cmd23-passthrough)".to_string(),
        };
    }
    match probe_trace(dev, paths, format) {
        Ok(verdict) => verdict,
        Err(why) => {
            let by_version = by_version(release);
            SbcVerdict {
                passthrough: by_version.passthrough,
                evidence: format!("{}; not looked at: {why}", by_version.evidence),
            }
        }
    }
}

/// [`decide`] for a card opened with [`RawAccess::open`].
pub fn decide_for(access: &RawAccess, assume: bool) -> std::io::Result<SbcVerdict> {
    let dev = File::open(&access.node)?;
    Ok(decide(
        &dev,
        &access.paths,
        access.format,
        &access.kernel_release,
        assume,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as Linux 7.x prints them (include/trace/events/mmc.h), shortened after sbc_*.
    const WITH: &str = "\
 mmcab-123 [000] ..... 10.1: mmc_request_start: mmc0: start struct mmc_request[a1b2]: cmd_opcode=18 cmd_arg=0xa00 cmd_flags=0xb5 cmd_retries=0 stop_opcode=0 stop_arg=0x0 stop_flags=0x0 stop_retries=0 sbc_opcode=23 sbc_arg=0x3 sbc_flags=0x15 sbc_retires=0 blocks=3 block_size=512
";
    const WITHOUT: &str = "\
 mmcab-123 [000] ..... 10.1: mmc_request_start: mmc0: start struct mmc_request[a1b2]: cmd_opcode=23 cmd_arg=0x3 cmd_flags=0x15 cmd_retries=0 stop_opcode=0 stop_arg=0x0 stop_flags=0x0 stop_retries=0 sbc_opcode=0 sbc_arg=0x0 sbc_flags=0x0 sbc_retires=0 blocks=0 block_size=0
 mmcab-123 [000] ..... 10.2: mmc_request_start: mmc0: start struct mmc_request[a1b3]: cmd_opcode=18 cmd_arg=0xa00 cmd_flags=0xb5 cmd_retries=0 stop_opcode=0 stop_arg=0x0 stop_flags=0x0 stop_retries=0 sbc_opcode=0 sbc_arg=0x0 sbc_flags=0x0 sbc_retires=0 blocks=3 block_size=512
";

    #[test]
    fn the_trace_tells_one_request_from_two() {
        assert_eq!(read_trace(WITH, "mmc0", 0xa00, 3), Some(Passthrough::Yes));
        assert_eq!(read_trace(WITHOUT, "mmc0", 0xa00, 3), Some(Passthrough::No));
        // Another host, or another read, is not the probe.
        assert_eq!(read_trace(WITH, "mmc1", 0xa00, 3), None);
        assert_eq!(read_trace(WITH, "mmc0", 0x5, 3), None);
        // A read with another sbc is not proof either way.
        let other = WITH.replace("sbc_arg=0x3", "sbc_arg=0x8");
        assert_eq!(
            read_trace(&other, "mmc0", 0xa00, 3),
            Some(Passthrough::Unknown)
        );
    }

    #[test]
    fn the_probe_read_is_whole_4k_sectors_on_cards_that_need_them() {
        use crate::device::packed::Addressing;
        let small = CardFormat {
            addressing: Addressing::Sector,
            large_sector: false,
        };
        assert_eq!(probe_read(small), (5, 3));
        let large = CardFormat {
            large_sector: true,
            ..small
        };
        let (sector, blocks) = probe_read(large);
        assert_eq!((sector % 8, blocks % 8), (0, 0));
        // Still a count nobody else's request is likely to have.
        assert_eq!((sector, blocks), (40, 24));
    }

    #[test]
    fn versions() {
        for (release, want) in [
            ("7.2.13+deb14-armmp", Passthrough::Yes),
            ("6.8.0", Passthrough::Yes),
            ("6.12.95+deb12-armmp", Passthrough::Yes),
            ("6.6.20", Passthrough::Unknown),
            ("5.15.100", Passthrough::Unknown),
            ("5.4.268", Passthrough::Unknown),
            ("6.5.7", Passthrough::No),
            ("4.19.1", Passthrough::No),
            ("4.9.45", Passthrough::No),
        ] {
            assert_eq!(by_version(release).passthrough, want, "{release}");
        }
        let refusal = by_version("6.1.20").refusal().unwrap();
        assert!(
            refusal.contains("4d0c8d0aef63") && refusal.contains("--assume-cmd23-passthrough"),
            "{refusal}"
        );
        assert_eq!(by_version("6.8.1").refusal(), None);
    }
}
