//! `mmcab run PLAN --device TARGET` without configs: run each workload once as the
//! device is now, and print a table (or JSON) per workload, job and direction.

use super::result::{DirectionResult, JobResult, WorkloadResult};
use super::{run_workload, EngineOptions, Target};
use crate::plan::spec::Plan;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Exit status when verify found bad blocks (the numbers were still printed).
pub const EXIT_VERIFY_FAILED: u8 = 3;

/// Register SIGINT/SIGTERM to set a cancel flag (a second Ctrl-C kills at once).
pub fn cancel_on_signals() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("cannot install signal handler")?;
    }
    Ok(flag)
}

pub fn cmd_run_once(args: &crate::cli::RunArgs) -> Result<ExitCode> {
    let plan_path = args.plan.clone().context("mmcab run needs a PLAN file")?;
    let plan = Plan::load(&plan_path)?;
    let Some(device) = &args.device else {
        bail!(
            "mmcab run needs --device TARGET: a block device (/dev/mmcblk0), a file or a directory"
        );
    };
    let workloads: Vec<_> = if args.workload.is_empty() {
        plan.workload.iter().collect()
    } else {
        let mut picked = Vec::new();
        for name in &args.workload {
            match plan.workload(name) {
                Some(w) => picked.push(w),
                None => bail!(
                    "plan {} has no workload '{name}'; it has: {}",
                    plan_path.display(),
                    plan.workload
                        .iter()
                        .map(|w| w.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        picked
    };
    let scale_down = args.scale_down.unwrap_or(1);
    if scale_down == 0 {
        bail!("--scale-down must be at least 1");
    }
    let target = Target::open(device, args.allow_write)?;
    let opts = EngineOptions {
        scale_down,
        seed: args.seed.or(plan.seed).unwrap_or(1),
        cancel: cancel_on_signals()?,
        ..EngineOptions::default()
    };
    if !plan.config.is_empty() && !args.quiet {
        eprintln!(
            "mmcab: note: this runs each workload once as the device is now; the plan's \
             [[config]] entries are not applied"
        );
    }
    for w in &workloads {
        super::check_workload(w, &target, &opts)?;
    }
    let mut results = Vec::new();
    for w in workloads {
        if !args.quiet && !args.json {
            eprintln!(
                "mmcab: running workload '{}' on {} ...",
                w.name,
                device.display()
            );
        }
        results.push(run_workload(w, &target, &opts)?);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &to_json(&results))?;
        writeln!(out)?;
    } else {
        print_table(&mut out, &results)?;
    }
    let bad: u64 = results
        .iter()
        .flat_map(|w| &w.jobs)
        .filter_map(|j| j.verify.as_ref())
        .map(|v| v.bad_blocks)
        .sum();
    if bad > 0 {
        eprintln!("mmcab: verify found {bad} bad block(s): see the table");
        return Ok(ExitCode::from(EXIT_VERIFY_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

fn direction_json(d: &DirectionResult) -> serde_json::Value {
    let mut v = serde_json::to_value(d).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert("mb_per_s".into(), d.mb_per_s().into());
        map.insert("kib_per_s".into(), (d.mb_per_s() * 1e6 / 1024.0).into());
        map.insert("iops".into(), d.iops().into());
    }
    v
}

/// Results as JSON: the result types plus mb_per_s, kib_per_s and iops per direction.
pub fn to_json(results: &[WorkloadResult]) -> serde_json::Value {
    let workloads: Vec<serde_json::Value> = results
        .iter()
        .map(|w| {
            serde_json::json!({
                "workload": w.workload,
                "started_unix_s": w.started_unix_s,
                "cpu_seconds": w.cpu_seconds,
                "jobs": w.jobs.iter().map(|j| serde_json::json!({
                    "job": j.job,
                    "directions": j.directions.iter().map(direction_json).collect::<Vec<_>>(),
                    "verify": j.verify,
                })).collect::<Vec<_>>(),
                "group": w.group.iter().map(direction_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "workloads": workloads })
}

fn row(out: &mut dyn Write, workload: &str, job: &str, d: &DirectionResult) -> std::io::Result<()> {
    let l = &d.latency;
    writeln!(
        out,
        "{workload:<16} {job:<14} {:<5} {:>9.2} {:>10.0} {:>9.0} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1}",
        d.direction.as_str(),
        d.mb_per_s(),
        d.mb_per_s() * 1e6 / 1024.0,
        d.iops(),
        l.min_us,
        l.mean_us,
        l.p50_us,
        l.p90_us,
        l.p99_us,
        l.p99_9_us,
        l.max_us
    )
}

fn verify_lines(out: &mut dyn Write, j: &JobResult) -> std::io::Result<()> {
    if let Some(v) = &j.verify {
        writeln!(
            out,
            "  verify {}: {} blocks checked, {} bad",
            j.job, v.blocks_checked, v.bad_blocks
        )?;
        for (offset, what) in &v.first_bad {
            writeln!(
                out,
                "    bad block at offset {offset} ({offset:#x}): {what}"
            )?;
        }
    }
    Ok(())
}

/// One line per workload, job and direction; `all` is the group of all jobs (fio's
/// group reporting, "sum of all throughputs"). MB/s is 10^6 B/s, KiB/s is 1024 B/s.
pub fn print_table(out: &mut dyn Write, results: &[WorkloadResult]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<16} {:<14} {:<5} {:>9} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "workload",
        "job",
        "dir",
        "MB/s",
        "KiB/s",
        "IOPS",
        "min_us",
        "mean_us",
        "p50_us",
        "p90_us",
        "p99_us",
        "p99.9_us",
        "max_us"
    )?;
    for w in results {
        for j in &w.jobs {
            for d in &j.directions {
                row(out, &w.workload, &j.job, d)?;
            }
        }
        if w.jobs.len() > 1 {
            for d in &w.group {
                row(out, &w.workload, crate::record::GROUP_JOB, d)?;
            }
        }
        for j in &w.jobs {
            verify_lines(out, j)?;
        }
    }
    Ok(())
}
