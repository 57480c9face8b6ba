//! `mmcab probe WHAT DEVICE ...`: the probes of [`crate::probe`], one subcommand each
//! (each in its own file).

use super::output::Output;
use super::probe_packed::{self, PackedArgs};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::process::ExitCode;
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
}

impl ProbeArgs {
    pub fn json(&self) -> bool {
        match &self.what {
            ProbeCommand::Packed(a) => a.json,
        }
    }
}

pub fn execute(args: &ProbeArgs, out: &Arc<Output>) -> Result<ExitCode> {
    match &args.what {
        ProbeCommand::Packed(a) => probe_packed::execute(a, out),
    }
}
