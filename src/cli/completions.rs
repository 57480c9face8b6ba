//! `mmcab completions SHELL` and `mmcab man [--dir DIR]`: generated from the clap
//! definitions at run time (clap_complete, clap_mangen), so they always match the binary
//! and no build script is needed. The man pages add each command's description, exit
//! statuses, files and examples from the table in `man/sections.rs` (see `man`).

use super::output::Output;
use super::Cli;
use crate::exit::Kind;
use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_complete::aot::{generate, Shell};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write mmcab.1 and one page per command (mmcab-run.1, ...) into this directory
    /// instead of printing mmcab.1
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs, out: &Output) -> Result<Kind> {
    let mut cmd = Cli::command();
    // clap_complete panics when its writer fails (`| head`): it writes into memory,
    // stdout gets the script as every other output.
    let mut script = Vec::new();
    generate(args.shell, &mut cmd, "mmcab", &mut script);
    out.stdout(|w| w.write_all(&script))?;
    Ok(Kind::Success)
}

pub fn man(args: &ManArgs, out: &Output) -> Result<Kind> {
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let pages = super::man::write_all(dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            out.line(&format!(
                "mmcab: {} man pages written to {}/ (man mmcab, man mmcab-COMMAND)",
                pages.len(),
                dir.display()
            ));
        }
        None => out.stdout(super::man::render_root)?,
    }
    Ok(Kind::Success)
}
