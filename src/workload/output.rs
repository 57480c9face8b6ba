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

fn row(workload: &str, job: &str, d: &DirectionResult) -> Vec<String> {
    let l = &d.latency;
    let iops = d.iops();
    let mut cells = vec![
        workload.to_string(),
        job.to_string(),
        d.direction.as_str().to_string(),
        format!("{:.2}", d.mb_per_s()),
        format!("{:.0}", d.mb_per_s() * 1e6 / 1024.0),
        if iops < 100.0 {
            format!("{iops:.1}")
        } else {
            format!("{iops:.0}")
        },
    ];
    for us in [
        l.min_us, l.mean_us, l.p50_us, l.p90_us, l.p99_us, l.p99_9_us, l.max_us,
    ] {
        cells.push(format!("{us:.1}"));
    }
    cells
}

fn verify_lines(lines: &mut Vec<String>, j: &JobResult) {
    if let Some(v) = &j.verify {
        lines.push(format!(
            "  verify {}: {} blocks checked, {} bad",
            j.job, v.blocks_checked, v.bad_blocks
        ));
        for (offset, what) in &v.first_bad {
            lines.push(format!(
                "    bad block at offset {offset} ({offset:#x}): {what}"
            ));
        }
    }
}

/// One line per workload, job and direction; `all` is the group of all jobs of a
/// direction (fio's group reporting, "sum of all throughputs"), shown when more than one
/// job has that direction. MB/s is 10^6 B/s, KiB/s is 1024 B/s.
pub fn print_table(out: &mut dyn Write, results: &[WorkloadResult]) -> std::io::Result<()> {
    const HEADER: [&str; 13] = [
        "workload", "job", "dir", "MB/s", "KiB/s", "IOPS", "min_us", "mean_us", "p50_us", "p90_us",
        "p99_us", "p99.9_us", "max_us",
    ];
    let mut rows: Vec<Vec<String>> = vec![HEADER.iter().map(|h| h.to_string()).collect()];
    let mut notes: Vec<(usize, Vec<String>)> = Vec::new();
    for w in results {
        for j in &w.jobs {
            for d in &j.directions {
                rows.push(row(&w.workload, &j.job, d));
            }
        }
        for d in &w.group {
            let jobs_with_it = w
                .jobs
                .iter()
                .filter(|j| j.directions.iter().any(|x| x.direction == d.direction))
                .count();
            if jobs_with_it > 1 {
                rows.push(row(&w.workload, crate::record::GROUP_JOB, d));
            }
        }
        let mut lines = Vec::new();
        for j in &w.jobs {
            verify_lines(&mut lines, j);
        }
        if !lines.is_empty() {
            notes.push((rows.len(), lines));
        }
    }
    let mut widths = [0usize; 13];
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    let mut notes = notes.into_iter().peekable();
    for (i, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, (cell, w)) in r.iter().zip(widths).enumerate() {
            if c > 0 {
                line.push(' ');
            }
            if c < 3 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&format!("{cell:>w$}"));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
        while notes.peek().is_some_and(|(after, _)| *after == i + 1) {
            if let Some((_, lines)) = notes.next() {
                for l in lines {
                    writeln!(out, "{l}")?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{Direction, LatencySummary, VerifyReport};

    fn dir(direction: Direction, bytes: u64) -> DirectionResult {
        DirectionResult {
            direction,
            bytes,
            ops: bytes / 4096,
            seconds: 2.0,
            latency: LatencySummary {
                min_us: 1.0,
                max_us: 1234567.8,
                ..Default::default()
            },
            bytes_per_second: vec![bytes / 2, bytes / 2],
            latency_cdf: vec![],
        }
    }

    #[test]
    fn table_aligns_groups_only_shared_directions_and_lists_bad_blocks() {
        let w = WorkloadResult {
            workload: "short-reads-long-write".into(),
            started_unix_s: 0.0,
            jobs: vec![
                JobResult {
                    job: "r.0".into(),
                    directions: vec![dir(Direction::Read, 4_096_000)],
                    verify: None,
                },
                JobResult {
                    job: "r.1".into(),
                    directions: vec![dir(Direction::Read, 4_096_000)],
                    verify: None,
                },
                JobResult {
                    job: "w".into(),
                    directions: vec![dir(Direction::Write, 8_192_000)],
                    verify: Some(VerifyReport {
                        blocks_checked: 2000,
                        bad_blocks: 1,
                        first_bad: vec![(8192, "checksum mismatch".into())],
                    }),
                },
            ],
            group: vec![
                dir(Direction::Read, 8_192_000),
                dir(Direction::Write, 8_192_000),
            ],
            cpu_seconds: 0.1,
        };
        let mut out = Vec::new();
        print_table(&mut out, &[w]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(
            lines[3].starts_with("short-reads-long-write w   write 4.10"),
            "{text}"
        );
        assert!(
            lines[4].contains(" all ") && lines[4].contains("read"),
            "{text}"
        );
        assert_eq!(
            lines.iter().filter(|l| l.contains(" all ")).count(),
            1,
            "{text}"
        );
        assert!(lines[5].contains("verify w: 2000 blocks checked, 1 bad"));
        assert!(lines[6].contains("bad block at offset 8192 (0x2000): checksum mismatch"));
        // Every table line has its MB/s column ending at the same place.
        let end = lines[0].find("MB/s").unwrap() + 4;
        for l in &lines[1..5] {
            assert!(l[..end].ends_with(|c: char| c.is_ascii_digit()), "{l}");
        }
        let json = to_json(&[]);
        assert_eq!(json["workloads"].as_array().unwrap().len(), 0);
    }
}
