//! The evidence hook of the run loop: one [`Collector`] per session, started when a
//! run's measured I/O begins and finished when it ends ([`EvidenceWindow`]: after the
//! files are laid out and the ramp is over, before verify reads back), so knob switches,
//! probes, layout, ramp and verify are not counted. What cannot be collected is said in
//! meta.json and the run goes on.

use super::device_state::Observer;
use super::events::{Event, Events};
use super::RunOptions;
use crate::evidence::{Collector, RunEvidence, Started};
use crate::workload::MeasuredWindow;
use std::path::Path;
use std::sync::Mutex;

/// One run's evidence, collected over the workload's measured window.
pub struct EvidenceWindow<'a> {
    collector: &'a Collector,
    started: Mutex<Option<Started>>,
    finished: Mutex<Option<RunEvidence>>,
}

impl<'a> EvidenceWindow<'a> {
    pub fn new(collector: &'a Collector) -> EvidenceWindow<'a> {
        EvidenceWindow {
            collector,
            started: Mutex::new(None),
            finished: Mutex::new(None),
        }
    }

    /// The run's evidence (None when evidence is off or the window never began).
    pub fn take(self) -> Option<RunEvidence> {
        let started = self.started.into_inner().unwrap_or_else(|e| e.into_inner());
        let finished = self
            .finished
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        finished.or_else(|| started.and_then(|s| self.collector.finish(s)))
    }
}

impl MeasuredWindow for EvidenceWindow<'_> {
    fn begin(&self) {
        let started = self.collector.start();
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(started);
    }

    fn end(&self) {
        let started = self
            .started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(started) = started {
            let evidence = self.collector.finish(started);
            *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = evidence;
        }
    }
}

/// The session's collector (`--no-evidence`: one that collects nothing). A card whose
/// requests cannot be traced is worth a warning: the runs go on with block statistics.
pub fn collector(
    opts: &RunOptions,
    target: &Path,
    observer: &Observer,
    events: &dyn Events,
) -> Collector {
    if opts.no_evidence {
        return Collector::off();
    }
    let collector = Collector::open(target, observer.env.as_ref().map(|env| &env.paths));
    let trace = &collector.meta().trace;
    if let Some(why) = trace.strip_prefix("unavailable: ") {
        events.event(Event::Warning(format!(
            "no mmc trace for these runs (block statistics only; meta.json says so): {why}"
        )));
    }
    collector
}
