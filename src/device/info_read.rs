//! Reading a card's [`DeviceInfo`] from the kernel: sysfs attributes, EXT_CSD (ioctl,
//! else debugfs), debugfs `ios` and `caps`, and the capability verdicts made from them.

use super::capabilities::{capabilities, kernel_release, Evidence};
use super::cid::{decode_csd, decode_mmc, decode_sd, Csd};
use super::ext_csd::{read_ext_csd, ExtCsd, ExtCsdSource};
use super::host_driver::read_host_driver;
use super::info::{
    DeviceInfo, ExtCsdInfo, HostCapsText, Identity, InfoPaths, IosInfo, INFO_SCHEMA,
};
use super::info_speed::SpeedModes;
use super::ios::read_ios;
use super::paths::MmcPaths;
use super::sysfs::{read_attrs, read_trimmed};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// A part read or the reason it could not be: (value, error) as the JSON has them.
fn split<T>(part: std::result::Result<T, String>) -> (Option<T>, Option<String>) {
    match part {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    }
}

fn parse_hex_u32(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// Whether this process may write debugfs `caps` (None: no such file).
pub(super) fn caps_writable(path: &Path) -> Option<Result<(), String>> {
    if !path.exists() {
        return None;
    }
    Some(
        nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).map_err(|e| match e {
            nix::errno::Errno::EROFS => format!(
                "debugfs is mounted read-only (mount -o remount,rw {})",
                path.parent()
                    .and_then(Path::parent)
                    .unwrap_or(path)
                    .display()
            ),
            nix::errno::Errno::EACCES | nix::errno::Errno::EPERM => {
                format!("{}: permission denied (run as root)", path.display())
            }
            other => format!("{}: {other}", path.display()),
        }),
    )
}

/// Opening the node without permission ends `mmcab info` with what to do; other open
/// errors show up in the parts that need the node.
fn check_permission(paths: &MmcPaths) -> Result<()> {
    if let Err(e) = std::fs::File::open(&paths.dev_node) {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            bail!(
                "{}: permission denied: run as root (mmcab info reads EXT_CSD with CMD8 and debugfs)",
                paths.dev_node.display()
            );
        }
    }
    Ok(())
}

fn read_ext_csd_part(
    paths: &MmcPaths,
    card_type: &str,
) -> std::result::Result<(ExtCsd, ExtCsdSource), String> {
    if card_type != "MMC" {
        return Err(format!("{card_type} cards have no EXT_CSD (eMMC only)"));
    }
    read_ext_csd(paths).map_err(|e| format!("{e:#}"))
}

/// The CID from sysfs, decoded for the card's type (eMMC: with the CSD's SPEC_VERS and
/// EXT_CSD_REV, which change its layout).
fn read_identity(
    paths: &MmcPaths,
    sysfs: &BTreeMap<String, String>,
    card_type: &str,
    csd: Option<&Csd>,
    ext_csd_rev: Option<u8>,
) -> std::result::Result<Identity, String> {
    let Some(cid_hex) = sysfs.get("cid") else {
        return Err(format!("{}: no cid attribute", paths.card_sysfs.display()));
    };
    let cid = if card_type == "MMC" {
        decode_mmc(cid_hex, csd.map(|c| c.spec_vers).unwrap_or(4), ext_csd_rev)
    } else {
        decode_sd(cid_hex)
    };
    let c = cid.map_err(|e| format!("cid {cid_hex}: {e:#}"))?;
    Ok(Identity {
        cid: cid_hex.clone(),
        csd: sysfs.get("csd").cloned(),
        date: c.date(),
        device_type: c.device_type.map(str::to_string),
        fwrev: c.fwrev,
        hwrev: c.hwrev,
        manfid: c.manfid,
        manufacturer: c.manufacturer,
        month: c.month,
        name: c.name,
        oemid: c.oemid,
        prv: c.prv,
        serial: c.serial,
        card_type: card_type.to_string(),
        year: c.year,
    })
}

/// The host's class directory (what `/sys/class/mmc_host/<host>` links to): the parent
/// of the card's sysfs directory, resolved.
fn host_class_dir(paths: &MmcPaths) -> Option<std::path::PathBuf> {
    let card = std::fs::canonicalize(&paths.card_sysfs).ok()?;
    card.parent().map(Path::to_path_buf)
}

impl DeviceInfo {
    /// Reads everything `mmcab info` shows about the card at `paths`. Parts that cannot
    /// be read are `None` with the reason; only a node the user may not open fails.
    pub fn read(paths: &MmcPaths) -> Result<DeviceInfo> {
        DeviceInfo::read_with_kernel(paths, kernel_release())
    }

    /// [`DeviceInfo::read`] with the kernel release given instead of read from /proc
    /// (it decides whether the bus width can switch at run time).
    pub fn read_with_kernel(paths: &MmcPaths, kernel_release: String) -> Result<DeviceInfo> {
        check_permission(paths)?;
        let sysfs = read_attrs(&paths.card_sysfs);
        let card_type = sysfs
            .get("type")
            .cloned()
            .unwrap_or_else(|| "unknown".into());
        let (ext_csd, ext_csd_error) = split(read_ext_csd_part(paths, &card_type));
        let csd = sysfs.get("csd").and_then(|c| decode_csd(c).ok());
        let rev = ext_csd.as_ref().map(|(x, _)| x.rev());
        let (identity, identity_error) =
            split(read_identity(paths, &sysfs, &card_type, csd.as_ref(), rev));
        let (ios, ios_error) = split(read_ios(paths).map_err(|e| format!("{e:#}")));
        let caps_file = paths.host_debugfs.join("caps");
        let host_caps = HostCapsText {
            caps: read_trimmed(&caps_file).ok(),
            caps2: read_trimmed(paths.host_debugfs.join("caps2")).ok(),
        };
        let caps = host_caps.caps.as_deref().and_then(parse_hex_u32);
        let caps2 = host_caps.caps2.as_deref().and_then(parse_hex_u32);
        let x = ext_csd.as_ref().map(|(x, _)| x);
        let speed_modes = SpeedModes::new(&card_type, x, caps, caps2);
        let capabilities = capabilities(&Evidence {
            card_type: &card_type,
            ext_csd: x,
            ios: ios.as_ref(),
            host_caps: caps,
            host_caps2: caps2,
            caps_writable: caps_writable(&caps_file),
            kernel_release: &kernel_release,
            cmdq_en: sysfs.get("cmdq_en").map(|v| v == "1"),
        });
        let capacity_bytes = read_trimmed(paths.block_sysfs.join("size"))
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .map(|sectors| sectors * 512);
        let mut info = DeviceInfo {
            capabilities,
            capacity_bytes,
            card: paths.card.clone(),
            csd,
            device: paths.dev_node.clone(),
            disk: paths.disk.clone(),
            ext_csd: ext_csd.as_ref().map(|(x, s)| ExtCsdInfo::new(x, s)),
            ext_csd_error,
            host: paths.host.clone(),
            host_caps,
            host_driver: host_class_dir(paths).and_then(|dir| read_host_driver(&dir)),
            identity,
            identity_error,
            ios: ios.as_ref().map(IosInfo::from),
            ios_error,
            kernel_release,
            paths: InfoPaths {
                block_sysfs: paths.block_sysfs.clone(),
                card_debugfs: paths.card_debugfs.clone(),
                card_sysfs: paths.card_sysfs.clone(),
                host_debugfs: paths.host_debugfs.clone(),
            },
            schema: INFO_SCHEMA,
            speed_modes,
            summary: String::new(),
            sysfs,
            card_type,
        };
        info.summary = info.summary_line();
        Ok(info)
    }
}
