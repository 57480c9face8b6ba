//! `mmcab info` without a DEVICE: the MMC/SD block devices of this machine, which is the
//! eMMC, which the SD card, their partitions and boot partitions and what of them is in
//! use ([`crate::device::list`]).

use super::output::Output;
use crate::device::discover::Roots;
use crate::device::list::{mmc_disks, McDisk};
use crate::workload::target::in_use::block_device_users;
use anyhow::{bail, Result};
use serde::Serialize;

#[derive(Serialize)]
struct Listing {
    schema: u32,
    devices: Vec<McDisk>,
}

/// List the MMC/SD block devices (text, or `{schema, devices}` with `json`).
pub fn execute(json: bool, out: &Output) -> Result<()> {
    let mut devices = mmc_disks(&Roots::default());
    if devices.is_empty() {
        bail!(
            "no MMC/SD block device here: no disk in /sys/block is on the mmc bus (is the \
             host's driver loaded and the card detected? dmesg | grep -i mmc)"
        );
    }
    for disk in &mut devices {
        disk.in_use = block_device_users(&disk.node, &disk.sys, &disk.devno)
            .ok()
            .flatten();
        for p in &mut disk.partitions {
            p.in_use = block_device_users(&p.node, &p.sys, &p.devno).ok().flatten();
        }
    }
    if json {
        return out.json(&Listing { schema: 1, devices });
    }
    out.print(&render(&devices))
}

/// One line per disk and per partition, indented under its disk.
fn render(devices: &[McDisk]) -> String {
    let mut lines = vec![
        "MMC/SD block devices (from /sys/block; `mmcab info DEVICE` says more of one):".to_string(),
    ];
    let width = devices
        .iter()
        .flat_map(|d| {
            std::iter::once(d.node.as_os_str().len())
                .chain(d.partitions.iter().map(|p| p.node.as_os_str().len() + 2))
        })
        .max()
        .unwrap_or(0);
    for d in devices {
        let what = match d.area {
            "boot" => "boot partition".to_string(),
            "rpmb" => "RPMB partition".to_string(),
            _ => format!("{} {}", d.card_type, d.name),
        };
        let mut line = format!(
            "{:width$}  {what}, {}, card {} on host {}",
            d.node.display(),
            size(d.size_bytes),
            d.card,
            d.host
        );
        if d.read_only {
            line.push_str(", read-only");
        }
        if let Some(users) = &d.in_use {
            line.push_str(&format!("; in use: {users}"));
        }
        lines.push(line);
        for p in &d.partitions {
            let node = format!("  {}", p.node.display());
            lines.push(format!(
                "{node:width$}  partition, {} from byte {}; {}",
                size(p.size_bytes),
                p.start_bytes,
                match &p.in_use {
                    Some(users) => format!("in use: {users}"),
                    None => "not in use".to_string(),
                }
            ));
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Bytes in binary units with two decimals (`3.64 GiB`), exact ones without (`4 MiB`).
fn size(bytes: u64) -> String {
    crate::device::info::binary_size(bytes, 2)
}

/// The JSON of a listing of one eMMC with a partition in use, for the docs' tests.
#[cfg(test)]
pub(super) fn example_json() -> serde_json::Value {
    serde_json::to_value(Listing {
        schema: 1,
        devices: vec![tests::emmc()],
    })
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::list::McPartition;
    use std::path::PathBuf;

    /// An eMMC whose second partition is mounted at /.
    pub(super) fn emmc() -> McDisk {
        McDisk {
            node: "/dev/mmcblk0".into(),
            disk: "mmcblk0".into(),
            area: "main",
            card_type: "MMC".into(),
            name: "DG4008".into(),
            card: "mmc0:0001".into(),
            host: "mmc0".into(),
            size_bytes: 3_909_091_328,
            read_only: false,
            partitions: vec![McPartition {
                node: "/dev/mmcblk0p2".into(),
                start_bytes: 1 << 20,
                size_bytes: 256 << 20,
                in_use: Some("/dev/mmcblk0p2 is mounted at /".into()),
                devno: "179:2".into(),
                sys: PathBuf::new(),
            }],
            in_use: Some("/dev/mmcblk0p2 is mounted at /".into()),
            devno: "179:0".into(),
            sys: PathBuf::new(),
        }
    }

    #[test]
    fn a_line_per_disk_and_partition_with_what_uses_it() {
        let disk = emmc();
        let boot = McDisk {
            node: "/dev/mmcblk0boot0".into(),
            disk: "mmcblk0boot0".into(),
            area: "boot",
            size_bytes: 4 << 20,
            read_only: true,
            partitions: Vec::new(),
            in_use: None,
            ..disk.clone()
        };
        let text = render(&[disk, boot]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "/dev/mmcblk0       MMC DG4008, 3.64 GiB, card mmc0:0001 on host mmc0; in use: \
             /dev/mmcblk0p2 is mounted at /"
        );
        assert_eq!(
            lines[2],
            "  /dev/mmcblk0p2   partition, 256 MiB from byte 1048576; in use: /dev/mmcblk0p2 \
             is mounted at /"
        );
        assert_eq!(
            lines[3],
            "/dev/mmcblk0boot0  boot partition, 4 MiB, card mmc0:0001 on host mmc0, read-only"
        );
    }
}
