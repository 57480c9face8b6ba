//! The evidence hook of the run loop: one [`Collector`] per session, started right
//! before a run's first I/O (after the knobs are verified and the page cache dropped)
//! and finished right after its last, so knob switches and probes are not counted.
//! What cannot be collected is said in meta.json and the run goes on.

use super::events::{Event, Events};
use super::observe::Observer;
use super::RunOptions;
use crate::evidence::Collector;
use std::path::Path;

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
