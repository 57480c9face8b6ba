//! `mmcab export fio PLAN [--device TARGET] [--scale-down N] [--workload a,b] [-o FILE]`.

use super::output::Output;
use crate::exit::Kind;
use crate::export::fio::{self, FioOptions};
use crate::plan::spec::Plan;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// The plan's workloads as a fio job file (one reporting group per workload)
    Fio(FioArgs),
}

#[derive(Debug, Args)]
pub struct FioArgs {
    /// Plan file (TOML)
    pub plan: PathBuf,
    /// Target for fio's filename= (default: filename=${TARGET}, set TARGET when running fio)
    #[arg(long)]
    pub device: Option<String>,
    /// Divide sizes and offsets by this factor, as `mmcab run --scale-down` does
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub scale_down: u32,
    /// Only these workloads (comma-separated names)
    #[arg(long, value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Write the job file here instead of stdout
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn execute(command: &ExportCommand, out: &Output) -> Result<Kind> {
    let ExportCommand::Fio(args) = command;
    let plan = Plan::load(&args.plan)?;
    let opts = FioOptions {
        target: args.device.clone(),
        scale_down: args.scale_down,
        workloads: args.workload.clone(),
    };
    let text = fio::job_file(&plan, &args.plan.display().to_string(), &opts)?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            out.line(&format!(
                "mmcab: fio job file written to {}",
                path.display()
            ));
        }
        None => out.print(&text)?,
    }
    Ok(Kind::Success)
}
