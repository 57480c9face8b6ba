//! Before the first I/O: may the ioctl engine run these jobs on this target, and how.
//! Every refusal is one line naming the workload, the job, the reason and what to do.
//!
//! Facts about the card ([`RawAccess`]) and the kernel's CMD23 pass-through
//! ([`SbcVerdict`]) are found once per open target and kept in a [`CardCache`], which the
//! caller holds beside the target and hands to every check and run. A card whose node
//! cannot be opened is a failed I/O ([`IoFailure`], exit status 4) like the other
//! engines' open, not a refusal.

use crate::device::raw_access::{OpenError, RawAccess};
use crate::evidence::sbc::{self, SbcVerdict};
use crate::plan::packed::Packed;
use crate::plan::workload::{takes_packed, Engine};
use crate::workload::engine::job::ClonePlan;
use crate::workload::io_error::{errno_text, IoFailure, IoOp, WorkloadError};
use crate::workload::options::EngineOptions;
use crate::workload::target::{Target, TargetKind};
use anyhow::{anyhow, Result};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// What the ioctl engine found out about a target, once: the runner keeps one per open
/// target (a target opened again, after a rebind, gets a new one).
#[derive(Debug, Default)]
pub struct CardCache {
    access: OnceLock<Result<Arc<RawAccess>, AccessError>>,
    sbc: OnceLock<SbcVerdict>,
}

/// Why the ioctl engine has no card behind a target (kept, so each job hears the same).
#[derive(Debug, Clone)]
pub enum AccessError {
    /// Not a card the engine may send commands to: the one-line reason.
    Refused(String),
    /// The card's node could not be opened: the node and the errno.
    Open { node: PathBuf, errno: i32 },
}

impl AccessError {
    /// As the error of `job` of `workload`: a refusal names both; a failed open is the
    /// job's [`IoFailure`], as the other engines' open of the target is.
    pub fn for_job(&self, workload: &str, job: &str) -> WorkloadError {
        match self {
            AccessError::Refused(why) => {
                WorkloadError::Other(anyhow!("workload '{workload}', job '{job}': {why}"))
            }
            AccessError::Open { node, errno } => WorkloadError::Io(
                anyhow::Error::from(
                    IoFailure::new(IoOp::Open, None, 0, node, job)
                        .errno(&std::io::Error::from_raw_os_error(*errno)),
                )
                .context(format!("workload '{workload}'")),
            ),
        }
    }
}

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccessError::Refused(why) => f.write_str(why),
            AccessError::Open { node, errno } => write!(
                f,
                "engine = \"ioctl\": {}: cannot open: {}",
                node.display(),
                errno_text(*errno)
            ),
        }
    }
}

impl std::error::Error for AccessError {}

impl CardCache {
    /// The card behind the target (opened and checked the first time).
    pub fn access(&self, target: &Target) -> Result<Arc<RawAccess>, AccessError> {
        self.access
            .get_or_init(|| {
                if target.kind != TargetKind::BlockDevice {
                    return Err(AccessError::Refused(format!(
                        "{}: engine = \"ioctl\" sends MMC commands to an eMMC, and this is a {}: \
                         use engine = \"sync\" or \"io_uring\", or pass /dev/mmcblkN",
                        target.path.display(),
                        match target.kind {
                            TargetKind::File => "regular file",
                            _ => "directory",
                        }
                    )));
                }
                RawAccess::open(&target.path)
                    .map(Arc::new)
                    .map_err(|e| match e {
                        OpenError::Node(open) => AccessError::Open {
                            node: open.node,
                            errno: open.source.raw_os_error().unwrap_or(libc::EIO),
                        },
                        OpenError::Refused(e) => {
                            AccessError::Refused(format!("engine = \"ioctl\": {e:#}"))
                        }
                    })
            })
            .clone()
    }

    /// Whether this kernel passes CMD23 on as `mrq.sbc` (looked at the first time).
    fn sbc(&self, access: &RawAccess, assume: bool) -> Result<&SbcVerdict> {
        if let Some(verdict) = self.sbc.get() {
            return Ok(verdict);
        }
        let verdict = sbc::decide_for(access, assume)?;
        Ok(self.sbc.get_or_init(|| verdict))
    }
}

/// Writes per packed command for a job: 0 (unpacked) or 2 and more, within the card's
/// MAX_PACKED_WRITES, the header's room and one command's data. `Err` is the reason.
/// `force` (`--force`) sends packed writes to a card whose EXT_CSD has none, to see what
/// it does with them: only the header and the data limit it then.
pub fn packed_entries(
    packed: Packed,
    bs: u64,
    access: &RawAccess,
    force: bool,
) -> Result<usize, String> {
    let wanted = match packed {
        Packed::Off => return Ok(0),
        Packed::Entries(n) => Some(n as usize),
        Packed::Max => None,
    };
    let card = match access.max_packed_writes() {
        Ok(card) => card,
        Err(_) if force => usize::from(u8::MAX),
        Err(why) => {
            return Err(format!(
                "{why} (--force sends packed writes anyway, to see what the card does)"
            ))
        }
    };
    let header = access.format.max_entries();
    let header_bytes = access.format.header_bytes() as u64;
    let room = (access.max_cmd_bytes as u64).saturating_sub(header_bytes) / bs;
    let limits = [
        (card, format!("the card's MAX_PACKED_WRITES is {card}")),
        (
            header,
            format!("a {header_bytes}-byte packed header names at most {header} writes"),
        ),
        (
            room as usize,
            format!(
                "one command carries at most {} bytes ({}), the header ({header_bytes}) and \
                 {room} writes of {bs}",
                access.max_cmd_bytes, access.max_cmd_bytes_source
            ),
        ),
    ];
    let (max, why) = limits.iter().min_by_key(|(n, _)| *n).expect("three limits");
    let n = wanted.unwrap_or(*max);
    if n < 2 && wanted.is_some() {
        return Err(format!(
            "{n}: a packed command carries at least 2 writes (Linux packed no fewer)"
        ));
    }
    if n > *max || n < 2 {
        return Err(format!(
            "{} writes per packed command do not fit: {why}: use packed = {} or less (or \
             \"max\"), or a smaller bs",
            n, max
        ));
    }
    Ok(n)
}

/// Checks the ioctl jobs of a workload against the target (their clones already checked
/// against its size): the card, the node, the sizes, packed support and the kernel's
/// CMD23 pass-through when a job packs. Touches no data.
pub fn check(
    workload: &str,
    clones: &[ClonePlan],
    target: &Target,
    card: &CardCache,
    opts: &EngineOptions,
) -> Result<(), WorkloadError> {
    for clone in clones.iter().filter(|c| c.job.engine == Engine::Ioctl) {
        let job = &clone.job;
        let at = |e: String| {
            WorkloadError::Other(anyhow!("workload '{workload}', job '{}': {e}", job.name))
        };
        let access = card
            .access(target)
            .map_err(|e| e.for_job(workload, &job.name))?;
        if job.rw.writes() {
            access.check_writable().map_err(|e| at(format!("{e:#}")))?;
        }
        if job.bs as usize > access.max_cmd_bytes {
            return Err(at(format!(
                "`bs` = {} is more than one MMC ioctl command carries ({} bytes: {}): use a \
                 smaller bs",
                job.bs, access.max_cmd_bytes, access.max_cmd_bytes_source
            )));
        }
        for offset in [clone.region_start, clone.region_end() - job.bs] {
            access.address(offset).map_err(|e| at(format!("{e:#}")))?;
        }
        let packed = job.packed.unwrap_or_default();
        if takes_packed(job) && packed.is_on() {
            packed_entries(packed, job.bs, &access, opts.force)
                .map_err(|why| at(format!("packed = {packed}: {why}")))?;
            let verdict = card
                .sbc(&access, opts.assume_cmd23_passthrough)
                .map_err(|e| at(format!("{e:#}")))?;
            if let Some(refusal) = verdict.refusal() {
                return Err(at(format!("packed = {packed}: {refusal}")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(rev: u8, max_packed: u8, large: bool) -> RawAccess {
        crate::device::raw_access::test_access(rev, max_packed, large)
    }

    #[test]
    fn a_node_that_cannot_be_opened_is_the_jobs_failed_open() {
        let open = AccessError::Open {
            node: "/dev/mmcblk0".into(),
            errno: libc::EACCES,
        };
        let mut err = open.for_job("w", "j");
        assert_eq!(err.kind(), Some(crate::exit::Kind::IoFailed));
        assert_eq!(err.io_failure_mut().map(|f| f.op), Some(IoOp::Open));
        assert_eq!(
            format!("{:#}", err.into_error()),
            "workload 'w': open of /dev/mmcblk0 failed: EACCES (Permission denied) [job 'j']"
        );
        let refused = AccessError::Refused("/dev/loop0: not an MMC/SD block device".into());
        let err = refused.for_job("w", "j");
        assert_eq!(err.kind(), Some(crate::exit::Kind::Error));
        assert_eq!(
            err.into_error().to_string(),
            "workload 'w', job 'j': /dev/loop0: not an MMC/SD block device"
        );
    }

    #[test]
    fn entries_follow_the_tightest_limit() {
        let card = access(8, 60, false);
        assert_eq!(packed_entries(Packed::Off, 4096, &card, false), Ok(0));
        assert_eq!(
            packed_entries(Packed::Entries(8), 4096, &card, false),
            Ok(8)
        );
        // 4 KiB writes: the card (60) is tighter than the header (63) and the data (127).
        assert_eq!(packed_entries(Packed::Max, 4096, &card, false), Ok(60));
        // 64 KiB writes: 512 KiB hold the header and 7 of them.
        assert_eq!(packed_entries(Packed::Max, 65536, &card, false), Ok(7));
        let err = packed_entries(Packed::Entries(8), 65536, &card, false).unwrap_err();
        assert!(err.contains("packed = 7 or less"), "{err}");
        // A 4 KiB header leaves room for 127 4 KiB writes; the card allows 200.
        let large = access(8, 200, true);
        assert_eq!(packed_entries(Packed::Max, 4096, &large, false), Ok(127));
        // 512 B writes: the header (63) is the limit.
        let many = access(8, 200, false);
        let err = packed_entries(Packed::Entries(64), 512, &many, false).unwrap_err();
        assert!(err.contains("names at most 63"), "{err}");
    }

    #[test]
    fn force_leaves_the_header_and_the_data_limit() {
        let none = access(3, 0, false);
        assert_eq!(packed_entries(Packed::Entries(4), 4096, &none, true), Ok(4));
        assert_eq!(packed_entries(Packed::Max, 4096, &none, true), Ok(63));
    }

    #[test]
    fn cards_without_packed_commands_say_so() {
        let err =
            packed_entries(Packed::Entries(4), 4096, &access(3, 0, false), false).unwrap_err();
        assert!(err.contains("EXT_CSD_REV 3"), "{err}");
        let err = packed_entries(Packed::Max, 4096, &access(7, 0, false), false).unwrap_err();
        assert!(err.contains("MAX_PACKED_WRITES 0"), "{err}");
    }
}
