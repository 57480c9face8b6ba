//! `mmcab run`: the A/B runner. Expands the matrix, and for every run: puts the config's
//! knobs in place (applying only what differs), verifies them and the config's
//! expectations, drops caches when a job reads through the page cache, runs the workload
//! and appends its rows (fsynced). Knobs are restored on every exit path by the guard.

use super::observe::Observer;
use super::session::{unix_now, Session};
use crate::cli::RunArgs;
use crate::knob::guard::{Interrupts, KnobGuard};
use crate::knob::Knob;
use crate::record::writer::{append_rows, read_rows, ResultsWriter, RunKey};
use crate::record::{EvidenceRow, RunRow, GROUP_JOB, KNOB_EVIDENCE_CSV, RESTORE_SH, RUNS_CSV};
use crate::workload::output::EXIT_VERIFY_FAILED;
use crate::workload::result::Direction;
use crate::workload::spec::WorkloadSpec;
use crate::workload::{check_workload, run_workload, Cancelled, EngineOptions, Target};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::process::ExitCode;

/// A plan without `[[config]]` and none of the recording options (`--out`, `--label`,
/// `--resume`, `--repeat`, `--warmup`, `--order`, `--config`) is one pass over the
/// workloads with the table printed, as the engine runs it; everything else is a
/// recorded matrix.
fn one_pass(args: &RunArgs) -> Result<bool> {
    if args.dry_run
        || args.resume.is_some()
        || args.out.is_some()
        || args.label.is_some()
        || args.repeat.is_some()
        || args.warmup.is_some()
        || args.order.is_some()
        || !args.config.is_empty()
    {
        return Ok(false);
    }
    let Some(path) = &args.plan else {
        return Ok(false);
    };
    Ok(super::spec::Plan::load(path)?.config.is_empty())
}

pub fn cmd_run(args: &RunArgs) -> Result<ExitCode> {
    if one_pass(args)? {
        return crate::workload::cmd_run_once(args);
    }
    if args.dry_run {
        let session = Session::from_args(args, false)?;
        print!("{}", session.matrix_text());
        return Ok(ExitCode::SUCCESS);
    }
    if args.scale_down == Some(0) {
        bail!("--scale-down must be at least 1");
    }
    // Signals first: from here on Ctrl-C/SIGTERM stop the run instead of killing it.
    let interrupts = Interrupts::install()?;
    let mut session = Session::from_args(args, true)?;
    for torn in &session.torn {
        eprintln!(
            "mmcab: {}: dropping a torn last line ({} bytes) left by the interrupted run",
            torn.path.display(),
            torn.bytes
        );
    }
    let needs_mmc = session.configs.iter().any(|c| {
        !c.expect.is_empty()
            || c.knobs
                .keys()
                .any(|k| crate::knob::BUILTIN_NAMES.contains(&k.as_str()))
    }) || session
        .plan
        .knob
        .iter()
        .any(|k| k.kind == super::config::KnobKind::ExtCsd);
    let observer = Observer::open(&session.target, needs_mmc)?;

    // Knobs used by any selected config, each checked for every value before any I/O.
    let mut used: Vec<String> = Vec::new();
    for config in &session.configs {
        for name in config.knobs.keys() {
            if !used.contains(name) {
                used.push(name.clone());
            }
        }
    }
    let mut knobs: Vec<Box<dyn Knob>> = Vec::new();
    for name in &used {
        knobs.push(observer.knob(name, &session.plan.knob, args.force)?);
    }
    let mut wanted: Vec<BTreeMap<String, String>> = Vec::new();
    for config in &session.configs {
        let mut values = BTreeMap::new();
        for (name, value) in config.knob_values()? {
            let knob = knobs
                .iter()
                .find(|k| k.name() == name)
                .expect("built above");
            let value = knob
                .normalize(&value)
                .with_context(|| format!("config {}", config.name))?;
            knob.check(&value, args.force)
                .with_context(|| format!("config {}", config.name))?;
            values.insert(name, value);
        }
        wanted.push(values);
        observer.check_expect_possible(config)?;
    }

    let target = Target::open(&session.target, args.allow_write)?;
    let opts = EngineOptions {
        scale_down: session.scale_down.unwrap_or(1),
        seed: session.seed,
        cancel: interrupts.stop.clone(),
        ..EngineOptions::default()
    };
    for &w in &session.workloads {
        check_workload(&session.plan.workload[w], &target, &opts)?;
    }
    let mut guard = KnobGuard::new(knobs);
    guard.snapshot_all()?;

    let (writer, mut meta) = match session.resumed.take() {
        Some((writer, meta)) => (writer, meta),
        None => {
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| session.default_out_dir());
            let mut meta = session.new_meta();
            observer.describe(&mut meta);
            (ResultsWriter::create(&out, &meta)?, meta)
        }
    };
    writer.write_file_atomic(RESTORE_SH, guard.restore_script().as_bytes())?;

    let pending: Vec<_> = session.pending().collect();
    let total = session.matrix.len();
    let progress = Progress::new(pending.len() as u64, args.quiet);
    if !session.finished.is_empty() {
        progress.line(&format!(
            "mmcab: resuming {}: {} of {total} runs done, {} to go",
            writer.dir().display(),
            session.finished.len(),
            pending.len()
        ));
    }
    let mut warned_caches = false;
    let mut bad_blocks = 0;
    for slot in &pending {
        if interrupts.stopped() {
            break;
        }
        let config = &session.configs[slot.config];
        let spec: &WorkloadSpec = &session.plan.workload[session.workloads[slot.workload]];
        let what = format!(
            "run {}/{total} ({}, {}, repetition {})",
            slot.run, config.name, spec.name, slot.repetition
        );
        let verified =
            put_in_place(&mut guard, &wanted[slot.config]).with_context(|| what.clone())?;
        observer
            .check_expect(config)
            .with_context(|| what.clone())?;
        let config_meta = &mut meta.configs[slot.config];
        if config_meta.ios.is_null() && config_meta.ext_csd_hex.is_empty() {
            observer.observe_config(config_meta);
            writer.write_meta(&meta)?;
        }
        if spec.job.iter().any(|j| !j.direct) {
            if let Err(err) = drop_caches() {
                if !warned_caches {
                    progress.line(&format!("mmcab: warning: {err:#}"));
                    warned_caches = true;
                }
            }
        }
        let before: Vec<(String, String)> = evidence(&guard);
        let result = match run_workload(spec, &target, &opts) {
            Ok(result) => result,
            Err(err) if err.downcast_ref::<Cancelled>().is_some() || interrupts.stopped() => break,
            Err(err) => return Err(err.context(what)),
        };
        // A run that completed as the signal came is whole: it is kept.
        let after = evidence(&guard);
        let mut rows = Vec::new();
        for ((name, b), (_, a)) in before.iter().zip(after.iter()) {
            let knob = guard.knob(name).expect("evidence of a known knob");
            rows.push(EvidenceRow {
                run: slot.run,
                config: config.name.clone(),
                workload: spec.name.clone(),
                knob: name.clone(),
                evidence: knob.evidence_delta(b, a),
            });
        }
        if !rows.is_empty() {
            append_rows(&writer.dir().join(KNOB_EVIDENCE_CSV), &rows)?;
        }
        let key = RunKey {
            run: slot.run,
            label: session.label.clone(),
            config: config.name.clone(),
            workload: spec.name.clone(),
            repetition: slot.repetition,
            warmup: slot.warmup,
        };
        writer.append_run(&key, &result)?;
        bad_blocks += result
            .jobs
            .iter()
            .filter_map(|j| j.verify.as_ref())
            .map(|v| v.bad_blocks)
            .sum::<u64>();
        session.finished.insert(slot.run);
        let speeds: Vec<String> = result
            .group
            .iter()
            .map(|d| format!("{:.2} MB/s {}", d.mb_per_s(), d.direction.as_str()))
            .collect();
        progress.advance(&format!(
            "run {}/{total} {} {} rep {}{}{}: {}",
            slot.run,
            config.name,
            spec.name,
            slot.repetition,
            if slot.warmup { " (warm-up)" } else { "" },
            if verified.is_empty() {
                String::new()
            } else {
                format!(" [verified {}]", verified.join(" "))
            },
            speeds.join(", ")
        ));
        for row in &rows {
            progress.line(&format!("  {}: {}", row.knob, row.evidence));
        }
    }
    progress.finish();
    let restored = guard.restore_all();
    if interrupts.stopped() {
        eprintln!(
            "mmcab: cancelled after {} of {total} runs; finished runs are in {}. Finish with: \
             mmcab run --resume {}",
            session.finished.len(),
            writer.dir().join(RUNS_CSV).display(),
            writer.dir().display()
        );
        restored?;
        return Ok(ExitCode::from(interrupts.exit_status()));
    }
    restored?;
    meta.finished_unix_s = Some(unix_now());
    writer.write_meta(&meta)?;
    let rows: Vec<RunRow> = read_rows(&writer.dir().join(RUNS_CSV))?;
    if args.json {
        let json = serde_json::json!({ "results_dir": writer.dir(), "runs": rows });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{}", summary_table(&rows));
        println!("results: {}", writer.dir().display());
        println!("report:  mmcab report {}", writer.dir().display());
    }
    if bad_blocks > 0 {
        eprintln!(
            "mmcab: verify found {bad_blocks} bad block(s) in this run's jobs: see verify_errors \
             in runs.csv"
        );
        return Ok(ExitCode::from(EXIT_VERIFY_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Bring every knob to what this config wants (knobs the config leaves out go back to
/// their snapshot), applying only those that differ, then verify all of them. Returns
/// `name=value` of every knob verified.
fn put_in_place(guard: &mut KnobGuard, wanted: &BTreeMap<String, String>) -> Result<Vec<String>> {
    let mut verified = Vec::new();
    for name in guard.names() {
        let knob = guard.knob(&name).expect("name from the guard");
        let want = match wanted.get(&name) {
            Some(v) => v.clone(),
            None => match knob.original() {
                Some(v) => v,
                None => continue,
            },
        };
        if knob.read()? != want {
            let knob = guard.knob_mut(&name).expect("name from the guard");
            knob.apply(&want)
                .with_context(|| format!("applying {name} = {want}"))?;
        }
        guard
            .knob(&name)
            .expect("name from the guard")
            .verify(&want)
            .with_context(|| {
                format!("verifying {name} = {want} (mislabelled data is worse than none: stopping)")
            })?;
        verified.push(format!("{name}={want}"));
    }
    Ok(verified)
}

fn evidence(guard: &KnobGuard) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in guard.names() {
        let knob = guard.knob(&name).expect("name from the guard");
        if let Some(Ok(text)) = knob.evidence() {
            out.push((name, text));
        }
    }
    out
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`, so buffered reads start cold.
fn drop_caches() -> Result<()> {
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").context(
        "cannot drop the page cache (/proc/sys/vm/drop_caches): buffered reads may come from \
         memory; run as root",
    )
}

/// Mean MB/s of the measured (non-warm-up) group rows per config x workload x direction.
pub fn summary_table(rows: &[RunRow]) -> String {
    // Keyed (and so listed) by workload, direction, config.
    let mut groups: BTreeMap<(String, Direction, String), Vec<f64>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.job == GROUP_JOB && !r.warmup) {
        let key = (row.workload.clone(), row.direction, row.config.clone());
        groups.entry(key).or_default().push(row.mb_per_s);
    }
    let mut out = format!(
        "{:<20} {:<6} {:<16} {:>4} {:>13}\n",
        "workload", "dir", "config", "runs", "mean_mb_per_s"
    );
    for (key, values) in &groups {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        out.push_str(&format!(
            "{:<20} {:<6} {:<16} {:>4} {:>13.2}\n",
            key.0,
            key.1.as_str(),
            key.2,
            values.len(),
            mean
        ));
    }
    out
}

/// Progress on stderr: a bar with run n/N and ETA on a terminal, one line per run
/// otherwise, nothing with --quiet.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Progress {
        let bar = if !quiet && std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:30} run {pos}/{len} ETA {eta} {msg}")
            {
                bar.set_style(style);
            }
            Some(bar)
        } else {
            None
        };
        Progress { bar, quiet }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    fn advance(&self, text: &str) {
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(text.to_string());
            }
            None => self.line(text),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: u32, config: &str, warmup: bool, mb_per_s: f64) -> RunRow {
        RunRow {
            run,
            label: String::new(),
            config: config.into(),
            workload: "seq-read".into(),
            repetition: run,
            warmup,
            started_unix_s: 0.0,
            job: GROUP_JOB.into(),
            direction: Direction::Read,
            bytes: 1,
            ops: 1,
            seconds: 1.0,
            mb_per_s,
            iops: 1.0,
            lat_min_us: 0.0,
            lat_mean_us: 0.0,
            lat_p50_us: 0.0,
            lat_p90_us: 0.0,
            lat_p99_us: 0.0,
            lat_p99_9_us: 0.0,
            lat_max_us: 0.0,
            verify_errors: 0,
        }
    }

    #[test]
    fn summary_means_leave_out_warmups_and_job_rows() {
        let mut job_row = row(2, "bus8", false, 100.0);
        job_row.job = "dd-read".into();
        let rows = vec![
            row(1, "bus8", true, 50.0),
            row(2, "bus8", false, 3.0),
            job_row,
            row(3, "bus4", false, 2.0),
            row(4, "bus8", false, 4.0),
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
