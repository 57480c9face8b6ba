//! `mmcab info DEVICE [--json | --raw]`; without DEVICE the MMC/SD block devices
//! (`info_list.rs`).

use super::output::Output;
use crate::device::{self, render};
use crate::exit::Kind;
use anyhow::{bail, Result};
use clap::Args;

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// /dev/mmcblkN, /dev/mmcblkNpM (resolved to its disk) or mmcblkN; without it, the
    /// MMC/SD block devices of this machine (which is the eMMC, what is mounted)
    pub device: Option<String>,
    /// Machine-readable output (schema: man mmcab-info)
    #[arg(long, conflicts_with = "raw")]
    pub json: bool,
    /// Print the raw EXT_CSD as hex, 16 bytes per line
    #[arg(long)]
    pub raw: bool,
}

pub fn execute(args: &InfoArgs, out: &Output) -> Result<Kind> {
    let Some(device) = &args.device else {
        if args.raw {
            bail!("--raw needs a DEVICE (mmcab info /dev/mmcblkN --raw)");
        }
        super::info_list::execute(args.json, out)?;
        return Ok(Kind::Success);
    };
    // Discovery first: a wrong name fails with one line before anything is mounted.
    let paths = device::discover(device)?;
    if let Err(e) = device::ensure_debugfs() {
        out.warn(&format!("{e:#}"));
    }
    // Re-discover so the debugfs paths follow a mount made just now.
    let paths = device::discover(device).unwrap_or(paths);
    let info = device::DeviceInfo::read(&paths)?;
    let kernel = device::kconfig_read::check(&paths);
    if args.json {
        // The device's keys, with `kernel_features` in its sorted place.
        let mut doc = serde_json::to_value(&info)?;
        if let Some(keys) = doc.as_object_mut() {
            keys.insert(
                "kernel_features".to_string(),
                serde_json::to_value(&kernel)?,
            );
        }
        out.json(&doc)?;
    } else if args.raw {
        match &info.ext_csd {
            Some(ext_csd) => out.print(&render::raw(&ext_csd.raw))?,
            None => bail!(
                "{}: no EXT_CSD: {}",
                paths.dev_node.display(),
                info.ext_csd_error.as_deref().unwrap_or("unknown reason")
            ),
        }
    } else {
        out.print(&(render::human(&info) + &super::kernel_features::text(&kernel)))?;
    }
    Ok(Kind::Success)
}
