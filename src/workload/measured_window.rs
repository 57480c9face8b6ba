//! The measured stretch of a workload, for whoever watches it from outside (the runner's
//! kernel evidence). It begins when the first measured I/O can start: after the files
//! are laid out, every clone is set up and the shortest `ramp_time` is over; and it ends
//! when the last clone has done its last I/O, before verify reads the regions back.
//! Block statistics and trace counts taken over it describe the measured I/O, not the
//! layout, the ramp or the verify read-back.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Told when a workload's measured I/O begins and when it ends (each at most once; `end`
/// only after `begin`). Called from the workload's threads.
pub trait MeasuredWindow: Sync {
    fn begin(&self);
    fn end(&self);
}

/// Nobody watches.
pub struct Unwatched;

impl MeasuredWindow for Unwatched {
    fn begin(&self) {}
    fn end(&self) {}
}

/// How often the ramp watcher looks whether every clone is done already.
const POLL: Duration = Duration::from_millis(20);

/// One workload's window over its clones.
pub(super) struct Measured<'a> {
    hook: &'a dyn MeasuredWindow,
    /// The shortest `ramp_time` of the clones: I/O before it is no one's measurement.
    pub ramp: Duration,
    clones: usize,
    clones_done: AtomicUsize,
    begun: AtomicBool,
    ended: AtomicBool,
}

impl<'a> Measured<'a> {
    pub fn new(hook: &'a dyn MeasuredWindow, ramp: Duration, clones: usize) -> Measured<'a> {
        Measured {
            hook,
            ramp,
            clones,
            clones_done: AtomicUsize::new(0),
            begun: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        }
    }

    pub fn begin(&self) {
        if !self.begun.swap(true, Ordering::SeqCst) {
            self.hook.begin();
        }
    }

    /// The end (and the beginning, when every clone was done before the ramp was over:
    /// an empty window, like their measurement).
    pub fn end(&self) {
        self.begin();
        if !self.ended.swap(true, Ordering::SeqCst) {
            self.hook.end();
        }
    }

    pub fn clone_done(&self) {
        self.clones_done.fetch_add(1, Ordering::SeqCst);
    }

    /// On a thread of its own when there is a ramp: begins the window once the ramp after
    /// `origin` (the clones' time zero) is over, or returns when every clone is done.
    pub fn begin_after_ramp(&self, origin: &OnceLock<Instant>) {
        while self.clones_done.load(Ordering::SeqCst) < self.clones {
            let now = Instant::now();
            match origin.get() {
                Some(&o) if now >= o + self.ramp => {
                    self.begin();
                    return;
                }
                Some(&o) => std::thread::sleep((o + self.ramp - now).min(POLL)),
                None => std::thread::sleep(POLL.min(self.ramp)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What a hook heard, with when.
    #[derive(Default)]
    struct Heard(Mutex<Vec<(&'static str, Instant)>>);

    impl MeasuredWindow for Heard {
        fn begin(&self) {
            self.0.lock().unwrap().push(("begin", Instant::now()));
        }
        fn end(&self) {
            self.0.lock().unwrap().push(("end", Instant::now()));
        }
    }

    #[test]
    fn the_window_begins_after_the_ramp_and_once() {
        let heard = Heard::default();
        let measured = Measured::new(&heard, Duration::from_millis(60), 1);
        let origin = OnceLock::new();
        let at = *origin.get_or_init(Instant::now);
        std::thread::scope(|s| {
            s.spawn(|| measured.begin_after_ramp(&origin));
        });
        measured.begin();
        measured.clone_done();
        measured.end();
        measured.end();
        let heard = heard.0.into_inner().unwrap();
        let words: Vec<&str> = heard.iter().map(|(w, _)| *w).collect();
        assert_eq!(words, ["begin", "end"]);
        assert!(
            heard[0].1 >= at + Duration::from_millis(60),
            "began in the ramp"
        );
    }

    #[test]
    fn clones_done_within_the_ramp_leave_an_empty_window() {
        let heard = Heard::default();
        let measured = Measured::new(&heard, Duration::from_secs(3600), 2);
        let origin = OnceLock::new();
        origin.get_or_init(Instant::now);
        std::thread::scope(|s| {
            s.spawn(|| measured.begin_after_ramp(&origin));
            measured.clone_done();
            measured.clone_done();
        });
        measured.end();
        let words: Vec<&str> = heard
            .0
            .into_inner()
            .unwrap()
            .iter()
            .map(|(w, _)| *w)
            .collect();
        assert_eq!(words, ["begin", "end"]);
    }
}
