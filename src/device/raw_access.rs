//! What mmcab must know about a card before it sends data commands to it through the
//! MMC ioctl (the `ioctl` engine, `mmcab probe packed`), and the refusals when it
//! cannot know or must not: a node that is not an eMMC, a partition node, no
//! CAP_SYS_RAWIO, addressing it cannot tell.
//!
//! - The node: a whole eMMC device (`/dev/mmcblkN`) or one of its hardware partitions
//!   (`mmcblkNbootM`, `mmcblkNgpM`): the kernel switches the card to the node's hardware
//!   partition before every ioctl command (`mmc_blk_part_switch()` in
//!   `__mmc_blk_ioctl_cmd()`), so addresses are relative to that partition. A partition
//!   table entry (`mmcblkNpM`) is refused: the kernel refuses it too (EPERM from
//!   `mmc_blk_check_blkdev()`), and the card knows nothing of its offset.
//! - EXT_CSD is read with CMD8 through the ioctl, which also proves CAP_SYS_RAWIO.
//! - Addressing ([`decide_addressing`]): the kernel's own decision when debugfs shows it,
//!   else the card's capacity.
//! - The data of one command: at most `MMC_IOC_MAX_BYTES` (the ioctl) and the host's
//!   `max_req_size` / `max_blk_count` (`mmc_mrq_prep()` refuses more with EINVAL), which
//!   the block queue shows as `queue/max_hw_sectors_kb`.

use super::capabilities::kernel_release;
use super::ext_csd::ExtCsd;
use super::ext_csd_table::{DATA_SECTOR_SIZE, MAX_PACKED_WRITES, SEC_COUNT};
use super::packed::{packed_writes, Addressing, CardFormat};
use super::paths::MmcPaths;
use super::sysfs::read_trimmed;
use super::{discover, ioctl};
use anyhow::{bail, Context, Result};
use linux_uapi::mmc::MAX_BYTES;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `MMC_STATE_BLOCKADDR` (`drivers/mmc/core/card.h`, bit 2 of the card's `state`, which
/// debugfs shows as `mmcN/mmcN:RCA/state`).
pub const MMC_STATE_BLOCKADDR: u32 = 1 << 2;
/// Cards with more sectors than this are sector addressed (`mmc_decode_ext_csd()`:
/// "Cards with density > 2GiB are sector addressed").
pub const BYTE_ADDRESSED_MAX_SECTORS: u64 = 2 * 1024 * 1024 * 1024 / 512;

/// A card ready for data commands through the ioctl.
#[derive(Debug, Clone)]
pub struct RawAccess {
    /// The node as given: `/dev/mmcblk0` or a hardware partition's node.
    pub node: PathBuf,
    pub paths: MmcPaths,
    pub ext_csd: ExtCsd,
    pub format: CardFormat,
    /// How the addressing was decided, for messages and the docs.
    pub addressing_source: String,
    /// Most data bytes of one command, and why.
    pub max_cmd_bytes: usize,
    pub max_cmd_bytes_source: String,
    /// Size of the node's hardware partition in bytes.
    pub size_bytes: u64,
    /// Why writes through the ioctl are refused (the kernel keeps the node read-only).
    pub read_only: Option<String>,
    pub kernel_release: String,
    /// The card's relative address for CMD13: Linux gives every eMMC RCA 1.
    pub rca: u16,
}

/// The sysfs directory of a block device node (`/sys/dev/block/MAJ:MIN`, resolved).
fn block_sysfs(node: &Path) -> Result<PathBuf> {
    let meta =
        std::fs::metadata(node).with_context(|| format!("{}: cannot stat", node.display()))?;
    if !meta.file_type().is_block_device() {
        // discover() names what it is instead.
        discover(&node.to_string_lossy())?;
        bail!("{}: not a block device", node.display());
    }
    let rdev = meta.rdev();
    let sys = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
    std::fs::canonicalize(&sys).with_context(|| format!("{}: no {sys}", node.display()))
}

/// The card's node could not be opened (after it was found to be an eMMC's): a failed
/// I/O on the target for the ioctl engine, not a refusal.
#[derive(Debug)]
pub struct NodeOpenFailed {
    pub node: PathBuf,
    pub source: std::io::Error,
}

impl NodeOpenFailed {
    fn new(node: &Path, source: std::io::Error) -> NodeOpenFailed {
        NodeOpenFailed {
            node: node.to_path_buf(),
            source,
        }
    }
}

impl std::fmt::Display for NodeOpenFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: cannot open", self.node.display())
    }
}

impl std::error::Error for NodeOpenFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Why [`RawAccess::open`] has no card: a refusal, or a node that would not open.
#[derive(Debug)]
pub enum OpenError {
    /// Not a card mmcab may send data commands to (not an eMMC, a partition node, no
    /// CAP_SYS_RAWIO, addressing it cannot tell): the one-line reason.
    Refused(anyhow::Error),
    /// The card's node could not be opened.
    Node(NodeOpenFailed),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Refused(err) => write!(f, "{err:#}"),
            OpenError::Node(open) => write!(f, "{open}: {}", open.source),
        }
    }
}

/// The error with its causes, for callers to whom both are just a failure (`probe packed`).
impl From<OpenError> for anyhow::Error {
    fn from(err: OpenError) -> anyhow::Error {
        match err {
            OpenError::Refused(err) => err,
            OpenError::Node(open) => open.into(),
        }
    }
}

impl RawAccess {
    /// Everything about `node`, or why mmcab cannot send it data commands: the one-line
    /// reason of a refusal, or the node's failed open.
    pub fn open(node: &Path) -> Result<RawAccess, OpenError> {
        let (sys, paths) = Self::check_node(node).map_err(OpenError::Refused)?;
        let dev = File::open(node).map_err(|e| OpenError::Node(NodeOpenFailed::new(node, e)))?;
        Self::read_card(node, sys, paths, &dev).map_err(OpenError::Refused)
    }

    /// The node's sysfs directory and paths, once it is known to be a whole eMMC device
    /// or one of its hardware partitions.
    fn check_node(node: &Path) -> Result<(PathBuf, MmcPaths)> {
        let sys = block_sysfs(node)?;
        if sys.join("partition").exists() {
            let whole = sys
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| Path::new("/dev").join(n))
                .unwrap_or_else(|| PathBuf::from("/dev/mmcblkN"));
            bail!(
                "{}: is a partition of {}; MMC commands address the whole hardware partition \
                 (the kernel refuses the MMC ioctl on partition nodes): use {} with `offset`",
                node.display(),
                whole.display(),
                whole.display()
            );
        }
        let paths = discover(&node.to_string_lossy())?;
        let card_type = read_trimmed(paths.card_sysfs.join("type")).unwrap_or_default();
        if card_type != "MMC" {
            bail!(
                "{}: is an {} card: MMC data commands through the ioctl are for eMMC only \
                 (EXT_CSD, CMD23); use engine = \"sync\" or \"io_uring\"",
                node.display(),
                if card_type.is_empty() {
                    "unknown"
                } else {
                    &card_type
                }
            );
        }
        Ok((sys, paths))
    }

    /// The card behind the opened node: EXT_CSD (CMD8, which proves CAP_SYS_RAWIO), its
    /// addressing, the command size limit.
    fn read_card(node: &Path, sys: PathBuf, paths: MmcPaths, dev: &File) -> Result<RawAccess> {
        let ext_csd = ExtCsd {
            raw: ioctl::read_ext_csd(dev)?,
        };
        let _ = super::ensure_debugfs();
        let state = read_trimmed(paths.card_debugfs.join("state"))
            .ok()
            .and_then(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok());
        let (addressing, addressing_source) = decide_addressing(state, &ext_csd)
            .map_err(|why| anyhow::anyhow!("{}: {why}", node.display()))?;
        let large_sector = ext_csd.rev() >= 6 && ext_csd.get(DATA_SECTOR_SIZE) == 1;
        let (max_cmd_bytes, max_cmd_bytes_source) = command_limit(&sys);
        let sectors: u64 = read_trimmed(sys.join("size"))?
            .parse()
            .with_context(|| format!("{}: size", sys.display()))?;
        Ok(RawAccess {
            node: node.to_path_buf(),
            read_only: read_only(&sys),
            paths,
            format: CardFormat {
                addressing,
                large_sector,
            },
            addressing_source,
            max_cmd_bytes,
            max_cmd_bytes_source,
            size_bytes: sectors * 512,
            ext_csd,
            kernel_release: kernel_release(),
            rca: ioctl::EMMC_RCA,
        })
    }

    /// EXT_CSD MAX_PACKED_WRITES when the card takes packed writes, else the reason
    /// (EXT_CSD_REV < 6, eMMC 4.5, or MAX_PACKED_WRITES = 0).
    pub fn max_packed_writes(&self) -> Result<usize, String> {
        packed_writes(
            u64::from(self.ext_csd.rev()),
            self.ext_csd.get(MAX_PACKED_WRITES),
        )
        .map(|max| max as usize)
        .map_err(|no| no.to_string())
    }

    /// Refuses writes to a node the kernel keeps read-only.
    pub fn check_writable(&self) -> Result<()> {
        match &self.read_only {
            Some(why) => bail!("{}: {why}", self.node.display()),
            None => Ok(()),
        }
    }

    /// The card address of a byte offset on the node (a multiple of 512).
    pub fn address(&self, offset: u64) -> Result<u32> {
        self.format.address(offset / 512).with_context(|| {
            format!(
                "{}: offset {offset} has no {:?} address below 2^32",
                self.node.display(),
                self.format.addressing
            )
        })
    }
}

/// Sector or byte addressing, and how that was decided: the kernel's `state` from
/// debugfs (bit 2, `MMC_STATE_BLOCKADDR`) when readable, else SEC_COUNT above 2 GiB
/// (EXT_CSD_REV >= 2). A card of 2 GiB or less without debugfs is refused: it may be
/// sector addressed through OCR bit 30, which only the kernel saw.
pub fn decide_addressing(
    debugfs_state: Option<u32>,
    ext_csd: &ExtCsd,
) -> std::result::Result<(Addressing, String), String> {
    if let Some(state) = debugfs_state {
        let addressing = if state & MMC_STATE_BLOCKADDR != 0 {
            Addressing::Sector
        } else {
            Addressing::Byte
        };
        return Ok((
            addressing,
            format!("the kernel's card state {state:#x} in debugfs (MMC_STATE_BLOCKADDR bit 2)"),
        ));
    }
    let sectors = ext_csd.get(SEC_COUNT);
    if ext_csd.rev() >= 2 && sectors > BYTE_ADDRESSED_MAX_SECTORS {
        return Ok((
            Addressing::Sector,
            format!("EXT_CSD SEC_COUNT {sectors} > 2 GiB"),
        ));
    }
    Err(format!(
        "cannot tell sector from byte addressing: the card has {sectors} sectors (2 GiB or \
         less: byte addressed unless its OCR bit 30 says otherwise, which only the kernel's \
         debugfs card state shows); mount debugfs (mount -t debugfs none /sys/kernel/debug)"
    ))
}

/// Most data bytes of one ioctl command: `MMC_IOC_MAX_BYTES`, and the host's limit.
fn command_limit(sys: &Path) -> (usize, String) {
    let host_kib: Option<usize> = read_trimmed(sys.join("queue/max_hw_sectors_kb"))
        .ok()
        .and_then(|s| s.parse().ok());
    match host_kib {
        Some(kib) if kib * 1024 < MAX_BYTES => (
            kib * 1024,
            format!("the host takes {kib} KiB per request (queue/max_hw_sectors_kb)"),
        ),
        _ => (
            MAX_BYTES,
            format!("MMC_IOC_MAX_BYTES ({} KiB per command)", MAX_BYTES / 1024),
        ),
    }
}

/// Why the kernel keeps this node read-only, if it does (`ro`, and `force_ro` of boot
/// partitions): the ioctl would write past that, so mmcab refuses.
fn read_only(sys: &Path) -> Option<String> {
    for attr in ["force_ro", "ro"] {
        if read_trimmed(sys.join(attr)).ok().as_deref() == Some("1") {
            return Some(format!(
                "the kernel keeps it read-only ({}/{attr} = 1) and MMC ioctl writes would go \
                 past that: write 0 there first if you mean to write it",
                sys.display()
            ));
        }
    }
    None
}

/// A card as the unit tests of its users see it: sector-addressed, 16 GiB, 512 KiB per
/// command, no device behind it (`node` /dev/mmcblk0).
#[cfg(test)]
pub(crate) fn test_access(rev: u8, max_packed: u8, large_sector: bool) -> RawAccess {
    let mut raw = [0u8; 512];
    raw[192] = rev;
    raw[MAX_PACKED_WRITES.offset] = max_packed;
    RawAccess {
        node: "/dev/mmcblk0".into(),
        paths: MmcPaths {
            dev_node: "/dev/mmcblk0".into(),
            disk: "mmcblk0".into(),
            block_sysfs: "/sys/block/mmcblk0".into(),
            card_sysfs: "/c".into(),
            card: "mmc0:0001".into(),
            host: "mmc0".into(),
            host_debugfs: "/d".into(),
            card_debugfs: "/d/c".into(),
        },
        ext_csd: ExtCsd { raw },
        format: CardFormat {
            addressing: Addressing::Sector,
            large_sector,
        },
        addressing_source: String::new(),
        max_cmd_bytes: 512 * 1024,
        max_cmd_bytes_source: "MMC_IOC_MAX_BYTES (512 KiB per command)".into(),
        size_bytes: 1 << 34,
        read_only: None,
        kernel_release: "7.2.13".into(),
        rca: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext_csd(rev: u8, sectors: u32) -> ExtCsd {
        let mut raw = [0u8; 512];
        raw[192] = rev;
        raw[212..216].copy_from_slice(&sectors.to_le_bytes());
        ExtCsd { raw }
    }

    #[test]
    fn the_kernels_state_decides_first() {
        // The emulated 256 MiB card: state without bit 2.
        let small = ext_csd(3, 524_288);
        let (a, why) = decide_addressing(Some(0x0), &small).unwrap();
        assert_eq!(a, Addressing::Byte);
        assert!(why.contains("debugfs"), "{why}");
        assert_eq!(
            decide_addressing(Some(0x4), &small).unwrap().0,
            Addressing::Sector
        );
    }

    #[test]
    fn capacity_decides_without_debugfs_and_small_cards_are_refused() {
        let big = ext_csd(8, 30_535_680); // a 16 GB card
        assert_eq!(decide_addressing(None, &big).unwrap().0, Addressing::Sector);
        let edge = ext_csd(8, BYTE_ADDRESSED_MAX_SECTORS as u32);
        let err = decide_addressing(None, &edge).unwrap_err();
        assert!(err.contains("mount debugfs"), "{err}");
    }

    #[test]
    fn packed_support_comes_from_ext_csd() {
        let paths = crate::device::MmcPaths {
            dev_node: "/dev/mmcblk0".into(),
            disk: "mmcblk0".into(),
            block_sysfs: "/sys/block/mmcblk0".into(),
            card_sysfs: "/x".into(),
            card: "mmc0:0001".into(),
            host: "mmc0".into(),
            host_debugfs: "/d".into(),
            card_debugfs: "/d/c".into(),
        };
        let mut access = RawAccess {
            node: "/dev/mmcblk0".into(),
            paths,
            ext_csd: ext_csd(3, 524_288),
            format: CardFormat {
                addressing: Addressing::Byte,
                large_sector: false,
            },
            addressing_source: String::new(),
            max_cmd_bytes: MAX_BYTES,
            max_cmd_bytes_source: String::new(),
            size_bytes: 256 << 20,
            read_only: None,
            kernel_release: "7.2.13".into(),
            rca: 1,
        };
        let why = access.max_packed_writes().unwrap_err();
        assert!(why.contains("EXT_CSD_REV 3"), "{why}");
        access.ext_csd.raw[192] = 8;
        assert!(access
            .max_packed_writes()
            .unwrap_err()
            .contains("MAX_PACKED_WRITES 0"));
        access.ext_csd.raw[MAX_PACKED_WRITES.offset] = 60;
        assert_eq!(access.max_packed_writes(), Ok(60));
        assert_eq!(access.address(4096).unwrap(), 4096);
        access.format.addressing = Addressing::Sector;
        assert_eq!(access.address(4096).unwrap(), 8);
    }
}
