//! `mmcab probe WHAT DEVICE ...`: the probes of [`crate::probe`], one subcommand each
//! (each in its own file).

use super::output::Output;
use super::probe_flash::{self, AlignArgs, OpenAuArgs};
use super::probe_packed::{self, PackedArgs};
use crate::exit::{Failure, Kind};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ProbeArgs {
    #[command(subcommand)]
    pub what: ProbeCommand,
}

#[derive(Debug, Subcommand)]
pub enum ProbeCommand {
    /// Send one packed write to a scratch region and read it back: does the card execute
    /// packed commands (eMMC 4.5)? Needs --allow-write; the region is put back after
    Packed(PackedArgs),
    /// Erase block and page-like sizes from read timing across power-of-two boundaries
    /// (flashbench -a; read-only)
    Align(AlignArgs),
    /// How many allocation units the controller keeps open (flashbench --open-au;
    /// WRITES to the device: needs --allow-write)
    OpenAu(OpenAuArgs),
}

impl ProbeArgs {
    pub fn json(&self) -> bool {
        match &self.what {
            ProbeCommand::Packed(a) => a.json,
            ProbeCommand::Align(a) => a.common.json,
            ProbeCommand::OpenAu(a) => a.common.json,
        }
    }

    pub fn quiet(&self) -> bool {
        match &self.what {
            ProbeCommand::Packed(_) => false,
            ProbeCommand::Align(a) => a.common.quiet,
            ProbeCommand::OpenAu(a) => a.common.quiet,
        }
    }
}

pub fn execute(args: &ProbeArgs, out: &Arc<Output>) -> Result<Kind, Failure> {
    match &args.what {
        ProbeCommand::Packed(a) => probe_packed::execute(a, out),
        ProbeCommand::Align(a) => Ok(probe_flash::align(a, out)?),
        ProbeCommand::OpenAu(a) => Ok(probe_flash::open_au(a, out)?),
    }
}
