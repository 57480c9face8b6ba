//! A workload's shared time window (`shared_window = true`): every job keeps going,
//! wrapping around its region as `time_based` does, until the job with the most to do
//! has done its amount of I/O (`size` / `io_size`, or `runtime`) and every writer with
//! `end_fsync` has flushed what it wrote; all jobs are then measured over the same
//! stretch of time, so each job's throughput is what it got while the others ran.
//! Without it, each job stops at its own amount and a job that finishes early leaves
//! the others running alone (fio's default; fio gets a shared window with `time_based`
//! and one `runtime` for every job).
//!
//! The flush belongs to the window: a buffered writer's data mostly reaches the device
//! during its end_fsync, so the other jobs keep going until it returns (a reader
//! stopped before it would be measured while the device is not writing). A writer that
//! flushes stops writing when every clone has its amount, then flushes while the
//! others go on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What the clones of one workload share: who still holds the window open.
#[derive(Debug)]
pub struct Counts {
    /// Clones that have not yet been handed their own amount.
    short: AtomicUsize,
    /// Clones with an end_fsync that have not yet flushed after their last write.
    unflushed: AtomicUsize,
}

/// One clone's part of a shared window: counts the clone as done when it has been
/// handed its own amount of I/O, and as flushed after its end_fsync, or both when it
/// stops for any other reason (its runtime, an error, a signal: on drop); says when the
/// window is over.
#[derive(Debug)]
pub struct Window {
    counts: Arc<Counts>,
    /// This clone's own amount of I/O (u64::MAX: time_based, done at its runtime).
    own_ops: u64,
    /// This clone ends with an fsync that the window waits for.
    flushes: bool,
    /// `min_runtime`: the clone has its amount only once this time has come too.
    until: Option<Instant>,
    /// `until` has come and an I/O was handed out after it.
    past_until: bool,
    handed: u64,
    counted: bool,
    flush_counted: bool,
}

impl Window {
    /// The counts for `clones` clones, `flushing` of them writers with an end_fsync,
    /// to share among their windows.
    pub fn counter(clones: usize, flushing: usize) -> Arc<Counts> {
        Arc::new(Counts {
            short: AtomicUsize::new(clones),
            unflushed: AtomicUsize::new(flushing),
        })
    }

    /// `flushes`: this clone is one of the counter's `flushing` writers; it calls
    /// [`Window::flushed`] after its end_fsync.
    pub fn new(counts: Arc<Counts>, own_ops: u64, flushes: bool) -> Window {
        Window {
            counts,
            own_ops,
            flushes,
            until: None,
            past_until: false,
            handed: 0,
            counted: false,
            flush_counted: !flushes,
        }
    }

    /// The clone has its amount only when it has also run until `until` (its
    /// `min_runtime`), so the window lasts at least that long.
    pub fn at_least_until(mut self, until: Option<Instant>) -> Window {
        self.until = until;
        self
    }

    /// Whether `until` (if any) has come and an I/O was handed out after it, so that
    /// the clone's last I/O ends after it (the first call past it hands that one out).
    fn time_is_up(&mut self) -> bool {
        match self.until {
            None => true,
            Some(_) if self.past_until => true,
            Some(t) => {
                self.past_until = Instant::now() >= t;
                false
            }
        }
    }

    fn count_done(&mut self) {
        if !self.counted {
            self.counted = true;
            self.counts.short.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// The clone's end_fsync has returned (its writes are on the device).
    pub fn flushed(&mut self) {
        if !self.flush_counted {
            self.flush_counted = true;
            self.counts.unflushed.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether this clone may be handed another I/O (false: the window is over for it;
    /// a clone that flushes stops when every clone has its amount, the others when the
    /// flushes are done too).
    #[inline]
    pub fn may_go_on(&mut self) -> bool {
        if self.handed >= self.own_ops && !self.counted && self.time_is_up() {
            self.count_done();
        }
        if self.counted
            && self.counts.short.load(Ordering::Acquire) == 0
            && (self.flushes || self.counts.unflushed.load(Ordering::Acquire) == 0)
        {
            return false;
        }
        self.handed += 1;
        true
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        self.count_done();
        self.flushed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimum_runtime_holds_the_window_open_until_its_time() {
        let short = Window::counter(2, 0);
        let until = Instant::now() + std::time::Duration::from_millis(30);
        let mut a = Window::new(short.clone(), 1, false).at_least_until(Some(until));
        let mut b = Window::new(short.clone(), 1, false);
        // b has its one I/O and waits for a, whose time has not come.
        assert!(b.may_go_on() && b.may_go_on());
        let mut after = 0;
        while a.may_go_on() {
            after += usize::from(Instant::now() >= until);
            assert!(b.may_go_on(), "the window is open while a's time runs");
        }
        assert!(Instant::now() >= until);
        assert!(
            after >= 1,
            "an I/O handed after the time, so the last ends after it"
        );
        assert!(!b.may_go_on());
    }

    #[test]
    fn the_window_ends_when_the_longest_clone_has_its_amount() {
        let short = Window::counter(2, 0);
        let mut a = Window::new(short.clone(), 2, false);
        let mut b = Window::new(short.clone(), 5, false);
        // a has its 2, then keeps going while b is short of its 5.
        let a_ios = (0..4).filter(|_| a.may_go_on()).count();
        assert_eq!(a_ios, 4);
        let b_ios = (0..5).filter(|_| b.may_go_on()).count();
        assert_eq!(b_ios, 5);
        assert!(
            !b.may_go_on(),
            "b has its amount and a is done: the window is over"
        );
        assert!(!a.may_go_on());
    }

    #[test]
    fn a_clone_that_stops_early_does_not_hold_the_others() {
        let short = Window::counter(2, 0);
        let mut a = Window::new(short.clone(), 1, false);
        let b = Window::new(short.clone(), u64::MAX, false);
        assert!(a.may_go_on() && a.may_go_on(), "b still running");
        drop(b); // its runtime ended, or it failed
        assert!(!a.may_go_on());
    }

    #[test]
    fn the_others_go_on_while_the_last_writer_flushes() {
        let counts = Window::counter(2, 1);
        let mut reader = Window::new(counts.clone(), 1, false);
        let mut writer = Window::new(counts.clone(), 3, true);
        assert!(reader.may_go_on() && reader.may_go_on(), "writer short");
        assert_eq!((0..4).filter(|_| writer.may_go_on()).count(), 3);
        // Every clone has its amount: the writer stops and flushes, the reader goes on.
        assert!(!writer.may_go_on());
        assert!(
            reader.may_go_on(),
            "the writer's end_fsync is inside the window"
        );
        writer.flushed();
        assert!(!reader.may_go_on(), "flushed: the window is over");
    }

    #[test]
    fn a_writer_that_has_its_amount_first_keeps_writing_then_flushes() {
        let counts = Window::counter(2, 1);
        let mut writer = Window::new(counts.clone(), 1, true);
        let mut reader = Window::new(counts.clone(), 3, false);
        assert_eq!((0..3).filter(|_| writer.may_go_on()).count(), 3);
        assert_eq!((0..3).filter(|_| reader.may_go_on()).count(), 3);
        assert!(writer.may_go_on(), "the reader has not been counted yet");
        assert!(
            reader.may_go_on(),
            "the reader has its amount, the writer flushes"
        );
        assert!(!writer.may_go_on(), "everyone has the amount: flush now");
        assert!(reader.may_go_on());
        drop(writer); // its fsync failed, or it returned
        assert!(!reader.may_go_on());
    }
}
