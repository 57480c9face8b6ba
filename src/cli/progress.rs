//! What the runner's events look like on stderr (the [`Output`] is the runner's sink).

use super::output::Output;
use crate::knob::guard::GuardEvent;
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
                }
                if let Some(evidence) = evidence {
                    self.progress_line(&format!("  kernel: {}", evidence.summary()));
                }
            }
            Event::Finish => self.finish_progress(),
            Event::Stopped {
                mode,
                done,
                total,
                dir,
            } => self.line(&stopped_line(mode, done, total, dir)),
            Event::Warning(text) => self.warn(&text),
            Event::TornLine { path, bytes } => self.line(&format!(
                "mmcab: {}: dropping a torn last line ({bytes} bytes) left by the interrupted run",
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
            GuardEvent::Panicking => self.line("mmcab: panicked; restoring knobs before exiting"),
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
fn run_line(run: &RunInfo, verified: &[String], result: &WorkloadResult) -> String {
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
            format!(" [verified {}]", verified.join(" "))
        },
        speeds.join(", ")
    )
}

fn stopped_line(mode: Mode, done: u32, total: u32, dir: Option<&Path>) -> String {
    match (mode, dir) {
        (Mode::Recorded, Some(dir)) => format!(
            "mmcab: cancelled after {done} of {total} runs; finished runs are in {}. Finish \
             with: mmcab run --resume {}",
            dir.join(crate::record::RUNS_CSV).display(),
            dir.display()
        ),
        _ => format!(
            "mmcab: cancelled after {done} of {total} workload(s); the results of the finished \
             ones follow (nothing is recorded without a results directory)"
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
