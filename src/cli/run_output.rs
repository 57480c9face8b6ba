//! The tables and JSON of `mmcab run`: the one-pass table (one line per workload, job and
//! direction) and its JSON, the summary of a recorded run, and the `--dry-run` matrix.

use crate::record::{RunRow, GROUP_JOB};
use crate::runner::planned_writes::PlannedWrite;
use crate::runner::Session;
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

/// The matrix as `--dry-run --json` prints it: `{schema, dry_run, plan, config_count,
/// configs: [{name, knobs, packed}], workloads, repetitions, warmup, order, seed, writes,
/// runs: [{run, config, workload, repetition, warmup, done}]}`; `writes` is
/// `[{workload, job, configs, start, end}]`, or `{"error": ...}` when the target cannot
/// tell.
pub fn matrix_json(session: &Session, writes: &Writes) -> serde_json::Value {
    let matrix = &session.matrix;
    let configs: Vec<serde_json::Value> = session
        .configs
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "knobs": c.knob_values().unwrap_or_default(),
                "packed": c.packed,
            })
        })
        .collect();
    let workloads: Vec<&str> = session
        .workloads
        .iter()
        .map(|&w| session.plan.workload[w].name.as_str())
        .collect();
    let runs: Vec<serde_json::Value> = matrix
        .into_iter()
        .map(|slot| {
            serde_json::json!({
                "run": slot.run,
                "config": session.configs[slot.config].name,
                "workload": session.workload_name(&slot),
                "repetition": slot.repetition,
                "warmup": slot.warmup,
                "done": session.finished.contains(&slot.run),
            })
        })
        .collect();
    serde_json::json!({
        "schema": RUN_JSON_SCHEMA,
        "dry_run": true,
        "plan": session.plan.name,
        "config_count": configs.len(),
        "configs": configs,
        "workloads": workloads,
        "repetitions": matrix.repetitions(),
        "warmup": matrix.warmup(),
        "order": matrix.order().to_string(),
        "seed": session.seed,
        "writes": match writes {
            Ok(w) => serde_json::to_value(w).unwrap_or_default(),
            Err(e) => serde_json::json!({ "error": e }),
        },
        "runs": runs,
    })
}

/// What `--dry-run` shows of a plan's writes ([`planned_writes`]), or why it cannot.
pub type Writes = Result<Vec<PlannedWrite>, String>;

fn write_lines(out: &mut dyn Write, session: &Session, writes: &Writes) -> std::io::Result<()> {
    let target = session.target.display();
    match writes {
        Err(e) => writeln!(out, "writes: not known ({e})"),
        Ok(w) if w.is_empty() => writeln!(out, "writes: none (every job reads)"),
        Ok(w) => {
            writeln!(out, "writes to {target} (bytes, end included):")?;
            for p in w {
                let configs = if p.configs.len() == session.configs.len() {
                    String::new()
                } else {
                    format!(" (config {})", p.configs.join(", "))
                };
                writeln!(
                    out,
                    "  {}/{}{configs}: bytes {}-{} ({})",
                    p.workload,
                    p.job,
                    p.start,
                    p.end - 1,
                    crate::units::format_size(p.end - p.start)
                )?;
            }
            Ok(())
        }
    }
}

/// The matrix as `--dry-run` prints it, written run by run (it can be long).
pub fn write_matrix(
    out: &mut dyn Write,
    session: &Session,
    writes: &Writes,
) -> std::io::Result<()> {
    let matrix = &session.matrix;
    let warmup = match matrix.warmup() {
        0 => String::new(),
        n => format!(" + {n} warm-up"),
    };
    writeln!(
        out,
        "plan {}: {} config(s) x {} workload(s) x {} repetition(s){warmup} = {} runs, order {} \
         (seed {})",
        session.plan.name,
        session.configs.len(),
        session.workloads.len(),
        matrix.repetitions(),
        matrix.len(),
        matrix.order(),
        session.seed
    )?;
    for config in &session.configs {
        let mut knobs: Vec<String> = config
            .knob_values()
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if let Some(packed) = config.packed {
            knobs.push(format!("packed={packed} (ioctl writes)"));
        }
        let knobs = if knobs.is_empty() {
            "device as found".to_string()
        } else {
            knobs.join(" ")
        };
        writeln!(out, "config {}: {knobs}", config.name)?;
    }
    write_lines(out, session, writes)?;
    writeln!(
        out,
        "{:>5}  {:<16} {:<20} {:>4}  note",
        "run", "config", "workload", "rep"
    )?;
    for slot in matrix {
        let mut note = Vec::new();
        if slot.warmup {
            note.push("warm-up");
        }
        if session.finished.contains(&slot.run) {
            note.push("done");
        }
        let line = format!(
            "{:>5}  {:<16} {:<20} {:>4}  {}",
            slot.run,
            session.configs[slot.config].name,
            session.workload_name(&slot),
            slot.repetition,
            note.join(", ")
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::RunOptions;
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

    #[test]
    fn dry_run_matrix_lists_every_run_with_its_notes() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.toml");
        std::fs::write(
            &plan,
            "name = \"p\"\nrepetitions = 2\nwarmup = 1\n\
             [[config]]\nname = \"A\"\nmarker = 1\n[[config]]\nname = \"B\"\n\
             [[knob]]\nname = \"marker\"\nkind = \"command\"\nread = \"true\"\napply = \"true\"\n\
             [[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"read\"\n",
        )
        .unwrap();
        let opts = RunOptions {
            plan: Some(plan),
            dry_run: true,
            ..Default::default()
        };
        let mut session = Session::open(&opts, false).unwrap();
        session.finished.insert(2);
        // --json: the same matrix as data (the LAVA run step reads config_count).
        // As planned_writes gives them for a device (the test plan's job reads: made up).
        let writes: Writes = Ok(vec![PlannedWrite {
            workload: "w".into(),
            job: "j".into(),
            configs: vec!["A".into()],
            start: 0,
            end: 1 << 20,
        }]);
        let v = matrix_json(&session, &writes);
        assert_eq!(v["writes"][0]["end"], 1 << 20);
        let err: Writes = Err("cannot stat target".into());
        assert_eq!(
            matrix_json(&session, &err)["writes"]["error"],
            "cannot stat target"
        );
        assert_eq!(v["config_count"], 2);
        assert_eq!(v["configs"][0]["knobs"]["marker"], "1");
        assert_eq!(v["workloads"], serde_json::json!(["w"]));
        assert_eq!(
            (v["repetitions"].as_u64(), v["warmup"].as_u64()),
            (Some(2), Some(1))
        );
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 6);
        assert_eq!(runs[1]["config"], "B");
        assert_eq!(
            (runs[1]["warmup"].as_bool(), runs[1]["done"].as_bool()),
            (Some(true), Some(true))
        );
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert!(pretty.contains("\n  \"config_count\": 2,\n"), "{pretty}");
        let mut out = Vec::new();
        write_matrix(&mut out, &session, &writes).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[3],
            format!(
                "writes to {} (bytes, end included):",
                session.target.display()
            )
        );
        assert_eq!(lines[4], "  w/j (config A): bytes 0-1048575 (1MiB)");
        assert_eq!(
            lines[0],
            "plan p: 2 config(s) x 1 workload(s) x 2 repetition(s) + 1 warm-up = 6 runs, \
             order interleaved (seed 1)"
        );
        assert_eq!(lines[1], "config A: marker=1");
        assert_eq!(lines[2], "config B: device as found");
        assert_eq!(
            lines[6],
            "    1  A                w                       1  warm-up"
        );
        assert_eq!(
            lines[7],
            "    2  B                w                       1  warm-up, done"
        );
        assert_eq!(
            lines[11],
            "    6  B                w                       3"
        );
        assert_eq!(lines.len(), 12);
    }
}
