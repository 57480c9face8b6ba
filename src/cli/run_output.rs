//! The tables and JSON of `mmcab run`: the one-pass table (one line per workload, job and
//! direction) and its JSON, and the summary of a recorded run (the `--dry-run` matrix:
//! dry_run.rs).

use crate::record::{RunRow, GROUP_JOB};
use crate::workload::result::{Direction, DirectionResult, JobResult, WorkloadResult};
use std::collections::BTreeMap;
use std::io::Write;

fn direction_json(d: &DirectionResult) -> serde_json::Value {
    let mut v = serde_json::to_value(d).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert("mb_per_s".into(), d.mb_per_s().into());
        map.insert("kib_per_s".into(), (d.mb_per_s() * 1e6 / 1024.0).into());
        map.insert("iops".into(), d.iops().into());
    }
    v
}

/// Version of `mmcab run --json` (both forms: one pass and recorded).
pub const RUN_JSON_SCHEMA: u32 = 1;

/// Results as JSON: the result types plus mb_per_s, kib_per_s and iops per direction.
pub fn to_json(results: &[WorkloadResult]) -> serde_json::Value {
    let workloads: Vec<serde_json::Value> = results
        .iter()
        .map(|w| {
            let mut v = serde_json::json!({
                "workload": w.workload,
                "started_unix_s": w.started_unix_s,
                "cpu_seconds": w.cpu_seconds,
                "jobs": w.jobs.iter().map(|j| serde_json::json!({
                    "job": j.job,
                    "directions": j.directions.iter().map(direction_json).collect::<Vec<_>>(),
                    "verify": j.verify,
                })).collect::<Vec<_>>(),
                "group": w.group.iter().map(direction_json).collect::<Vec<_>>(),
            });
            if !w.engine_fallbacks.is_empty() {
                v["engine_fallbacks"] = w.engine_fallbacks.clone().into();
            }
            v
        })
        .collect();
    serde_json::json!({ "schema": RUN_JSON_SCHEMA, "workloads": workloads })
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
                .filter(|j| j.in_group && j.directions.iter().any(|x| x.direction == d.direction))
                .count();
            if jobs_with_it > 1 {
                rows.push(row(&w.workload, GROUP_JOB, d));
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

/// Mean MB/s of the measured (non-warm-up) group rows per workload x direction x config.
pub fn summary_table(rows: &[RunRow]) -> String {
    // Keyed (and so listed) by workload, direction, config.
    let mut groups: BTreeMap<(&str, Direction, &str), Vec<f64>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.job == GROUP_JOB && !r.warmup) {
        let key = (row.workload.as_str(), row.direction, row.config.as_str());
        groups.entry(key).or_default().push(row.mb_per_s);
    }
    let mut out = format!(
        "{:<20} {:<6} {:<16} {:>4} {:>13}\n",
        "workload", "dir", "config", "runs", "mean_mb_per_s"
    );
    for ((workload, direction, config), values) in &groups {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        out.push_str(&format!(
            "{:<20} {:<6} {:<16} {:>4} {:>13.2}\n",
            workload,
            direction.as_str(),
            config,
            values.len(),
            mean
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{LatencySummary, VerifyReport};

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
            bytes_per_bin: Vec::new(),
            start_s: 0.0,
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
                    in_group: true,
                },
                JobResult {
                    job: "r.1".into(),
                    directions: vec![dir(Direction::Read, 4_096_000)],
                    verify: None,
                    in_group: true,
                },
                JobResult {
                    job: "w".into(),
                    directions: vec![dir(Direction::Write, 8_192_000)],
                    verify: Some(VerifyReport {
                        blocks_checked: 2000,
                        bad_blocks: 1,
                        first_bad: vec![(8192, "checksum mismatch".into())],
                    }),
                    in_group: true,
                },
            ],
            group: vec![
                dir(Direction::Read, 8_192_000),
                dir(Direction::Write, 8_192_000),
            ],
            cpu_seconds: 0.1,
            engine_fallbacks: Vec::new(),
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

    fn run_row(run: u32, config: &str, warmup: bool, mb_per_s: f64) -> RunRow {
        RunRow {
            warmup,
            mb_per_s,
            iops: 1.0,
            ..RunRow::for_tests(run, config, "seq-read", Direction::Read)
        }
    }

    #[test]
    fn summary_means_leave_out_warmups_and_job_rows() {
        let mut job_row = run_row(2, "bus8", false, 100.0);
        job_row.job = "dd-read".into();
        let rows = vec![
            run_row(1, "bus8", true, 50.0),
            run_row(2, "bus8", false, 3.0),
            job_row,
            run_row(3, "bus4", false, 2.0),
            run_row(4, "bus8", false, 4.0),
        ];
        let text = summary_table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[1].contains("bus4") && lines[1].ends_with("2.00"),
            "{text}"
        );
        assert!(
            lines[2].contains("bus8") && lines[2].contains(" 2 ") && lines[2].ends_with("3.50"),
            "{text}"
        );
    }
}
