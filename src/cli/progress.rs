//! What the runner's events look like on stderr (the [`Output`] is the runner's sink).

use super::output::Output;
use crate::knob::guard::GuardEvent;
use crate::knob::Verified;
use crate::runner::signals::signal_name;
use crate::runner::{Event, Events, Mode, RunInfo};
use crate::workload::WorkloadResult;
use std::path::Path;

impl Events for Output {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Start {
                mode: Mode::Recorded,
                total,
                pending,
                dir,
            } => {
                self.start_progress(pending.into());
                if pending < total {
                    self.progress_line(&format!(
                        "mmcab: resuming {}: {} of {total} runs done, {pending} to go",
                        dir.unwrap_or(Path::new("")).display(),
                        total - pending
                    ));
                }
            }
            Event::Start {
                mode: Mode::OnePass,
                ..
            } => {}
            Event::RunStarting { run } => {
                if run.mode == Mode::OnePass && !self.json_mode() {
                    self.note(&format!(
                        "running workload '{}' on {} ...",
                        run.workload,
                        run.target.display()
                    ));
                }
            }
            Event::RunDone {
                run,
                verified,
                result,
                evidence,
            } => {
                if run.mode == Mode::Recorded {
                    self.advance(&run_line(&run, verified, result));
                    // Shown even with --quiet, like warnings (also in verify_errors.csv).
                    for line in verify_lines(&run, result) {
                        self.line(&line);
                    }
                }
                if let Some(evidence) = evidence {
                    self.progress_line(&format!("  kernel: {}", evidence.summary()));
                }
            }
            Event::Converged { stop } => {
                self.shrink_progress(stop.skipped_runs.into());
                let half = stop
                    .half_width_pct
                    .map_or("unknown".to_string(), |h| format!("+-{h:.2}%"));
                self.progress_line(&format!(
                    "mmcab: {}: 95% CI {half} after the {} repetitions per config its first \
                     stage asked for: its {} remaining runs are skipped (--until-ci)",
                    stop.workload, stop.repetitions, stop.skipped_runs
                ))
            }
            Event::Finish => self.finish_progress(),
            Event::Stopped {
                mode,
                done,
                total,
                dir,
                allow_write,
            } => self.line(&stopped_line(mode, done, total, dir, allow_write)),
            Event::Failed {
                mode,
                done,
                total,
                dir,
                allow_write,
            } => {
                self.finish_progress();
                self.line(&failed_line(mode, done, total, dir, allow_write));
            }
            Event::Warning(text) => self.warn(&text),
            Event::TornLine { path, bytes } => self.line(&format!(
                "mmcab: {}: dropping the torn end ({bytes} bytes, a run not wholly recorded) \
                 left by the interrupted run",
                path.display()
            )),
            Event::Signal { signal, again } => self.line(&signal_line(signal, again)),
            Event::Restore(event) => self.restore(event),
        }
    }
}

impl Output {
    fn restore(&self, event: GuardEvent<'_>) {
        match event {
            GuardEvent::Panicking { restored: true } => {
                self.line("mmcab: panicked; the knobs were restored before exiting")
            }
            GuardEvent::Panicking { restored: false } => self.line(
                "mmcab: panicked; the knobs above could not be restored: run the commands printed",
            ),
            GuardEvent::RestoreFailed { knob, error } => {
                self.line(&format!("mmcab: restoring knob {knob} failed: {error:#}"))
            }
            GuardEvent::ByHand { commands } => {
                self.line("mmcab: restore the device by hand with these commands (as root):");
                for command in commands {
                    self.line(&format!("    {command}"));
                }
            }
        }
    }
}

/// `run 3/12 bus8 dd-write rep 2 [verified bus-width=8]: 2.60 MB/s write`
fn run_line(run: &RunInfo, verified: &Verified, result: &WorkloadResult) -> String {
    let speeds: Vec<String> = result
        .group
        .iter()
        .map(|d| format!("{:.2} MB/s {}", d.mb_per_s(), d.direction.as_str()))
        .collect();
    format!(
        "run {}/{} {} {} rep {}{}{}: {}",
        run.slot.run,
        run.total,
        run.config,
        run.workload,
        run.slot.repetition,
        if run.slot.warmup { " (warm-up)" } else { "" },
        if verified.is_empty() {
            String::new()
        } else {
            format!(" [verified {verified}]")
        },
        speeds.join(", ")
    )
}

/// The bad blocks verify found in a recorded run: a warning per job, then one line per
/// block reported (offset and what was wrong).
fn verify_lines(run: &RunInfo, result: &WorkloadResult) -> Vec<String> {
    let mut lines = Vec::new();
    for job in &result.jobs {
        let Some(v) = job.verify.as_ref().filter(|v| v.bad_blocks > 0) else {
            continue;
        };
        lines.push(format!(
            "mmcab: warning: run {}/{} ({}, {}, repetition {}): job '{}': verify found {} bad \
             block(s) of {} checked{}",
            run.slot.run,
            run.total,
            run.config,
            run.workload,
            run.slot.repetition,
            job.job,
            v.bad_blocks,
            v.blocks_checked,
            if v.bad_blocks > v.first_bad.len() as u64 {
                format!(" (the first {} follow)", v.first_bad.len())
            } else {
                String::new()
            }
        ));
        for (offset, problem) in &v.first_bad {
            lines.push(format!("    offset {offset}: {problem}"));
        }
    }
    lines
}

/// The command that finishes an interrupted run (`--allow-write` again if it had it).
fn resume_command(dir: &Path, allow_write: bool) -> String {
    format!(
        "mmcab run --resume {}{}",
        dir.display(),
        if allow_write { " --allow-write" } else { "" }
    )
}

fn stopped_line(
    mode: Mode,
    done: u32,
    total: u32,
    dir: Option<&Path>,
    allow_write: bool,
) -> String {
    match (mode, dir) {
        (Mode::Recorded, Some(dir)) => format!(
            "mmcab: cancelled after {done} of {total} runs; finished runs are in {}. Finish \
             with: {}",
            dir.join(crate::record::RUNS_CSV).display(),
            resume_command(dir, allow_write)
        ),
        _ => format!(
            "mmcab: cancelled after {done} of {total} workload(s); the results of the finished \
             ones follow (nothing is recorded without a results directory)"
        ),
    }
}

/// Where the runs stand after an error (the error itself is the last line).
fn failed_line(mode: Mode, done: u32, total: u32, dir: Option<&Path>, allow_write: bool) -> String {
    match (mode, dir) {
        (Mode::Recorded, Some(dir)) if done == total => format!(
            "mmcab: all {total} runs finished and are recorded in {} (mmcab report {})",
            dir.display(),
            dir.display()
        ),
        (Mode::Recorded, Some(dir)) if done == 0 => format!(
            "mmcab: stopped before any run finished; {} holds the plan and the knobs' restore \
             (meta.json, restore.sh). Once the device is healthy again, run it with: {}",
            dir.display(),
            resume_command(dir, allow_write)
        ),
        (Mode::Recorded, Some(dir)) => format!(
            "mmcab: stopped after {done} of {total} runs; the finished runs are in {}. Once the \
             device is healthy again, finish with: {}",
            dir.join(crate::record::RUNS_CSV).display(),
            resume_command(dir, allow_write)
        ),
        _ => format!(
            "mmcab: stopped after {done} of {total} workload(s) (nothing is recorded without a \
             results directory)"
        ),
    }
}

fn signal_line(signal: i32, again: bool) -> String {
    if again {
        format!(
            "\nmmcab: got {} again: still stopping; knob restore is not skipped (if you kill -9 \
             now, run restore.sh in the results directory)",
            signal_name(signal)
        )
    } else {
        format!(
            "\nmmcab: got {}: stopping; the current run is discarded, knobs are restored before \
             exit",
            signal_name(signal)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::attribute::AttributeKnob;
    use crate::knob::{Knob, Setting};
    use crate::plan::matrix::Slot;

    #[test]
    fn a_run_line_names_the_knobs_verified_in_their_order() {
        let run = RunInfo {
            mode: Mode::Recorded,
            slot: Slot {
                run: 3,
                config: 0,
                workload: 0,
                repetition: 2,
                warmup: false,
            },
            total: 12,
            config: "bus8",
            workload: "dd-write",
            target: Path::new("/dev/mmcblk0"),
        };
        let result = WorkloadResult {
            workload: "dd-write".into(),
            started_unix_s: 0.0,
            jobs: Vec::new(),
            group: Vec::new(),
            cpu_seconds: 0.0,
            engine_fallbacks: Vec::new(),
        };
        let knob = |name: &str, value: &str| Setting {
            knob: name.into(),
            value: AttributeKnob::new(name, "/nonexistent", Vec::new())
                .normalize(value)
                .unwrap(),
        };
        let mut verified = Verified::default();
        assert_eq!(
            run_line(&run, &verified, &result),
            "run 3/12 bus8 dd-write rep 2: "
        );
        verified.push(knob("read-ahead", " 512"));
        verified.push(knob("bus-width", "8"));
        assert_eq!(
            run_line(&run, &verified, &result),
            "run 3/12 bus8 dd-write rep 2 [verified read-ahead=512 bus-width=8]: "
        );
    }
}
